"""The ``trackverify`` command line, one module per command group.

Each module parses its options, calls the library and prints; nothing else. :mod:`.app` is
the group (commands imported lazily, so ``-h`` stays light), the error net and the
benchmark's own commands (``run``, ``verify``, ``synth``); :mod:`.options` holds the options
several commands share.
"""


def main(argv: list[str] | None = None) -> None:
    """The ``trackverify`` console script (:func:`trackverify.cli.app.main`)."""
    from trackverify.cli.app import main as run

    run(argv)
