"""``python -m trackverify`` runs the command line."""

from trackverify.cli import main

main()
