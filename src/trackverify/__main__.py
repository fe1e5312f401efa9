"""``python -m trackverify`` runs the command line."""

import signal
import sys

from trackverify import stop  # light: the package imports its API lazily


def _terminated_while_starting(signum, frame):  # pragma: no cover - a subprocess race
    stop.record()  # should an import swallow the SystemExit, ``main`` still exits 143
    sys.exit(143)  # nothing has been written yet: exit as the CLI does on SIGTERM


# First of all, before the imports (which take a while): a SIGTERM during start-up ends
# with 143 like one during the run, never with the default -15. ``main`` replaces it.
signal.signal(signal.SIGTERM, _terminated_while_starting)

from trackverify.cli import main  # noqa: E402

main()
