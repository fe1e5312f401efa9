"""Paths of the real tracker files in ../shared/data (each test skips with a reason if absent),
and the CLI runner the format tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
FORMATS = DATA / "tracker-formats"
ZEPHIR = DATA / "zephir-ift20-demo"


def shared(path: Path) -> Path:
    """``path`` if the shared data are on this machine, else skip the test saying why."""
    if not path.exists():
        pytest.skip(f"shared tracker data not on this machine: {path}")
    return path


def run(args, capsys):
    """``trackverify ARGS``: ``(exit code, stdout, stderr)``."""
    from trackverify.cli.app import main

    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err
