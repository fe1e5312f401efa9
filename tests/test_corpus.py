"""Every malformed input in the corpus is refused cleanly (issue: robustness).

Each case asserts the exit code (2, or a documented verdict), a message naming the file
and, where there is one, the column and row, no traceback, inputs untouched, and no output
file left behind, whole or half-written.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.corpus.make_corpus import build_corpus
from trackverify.cli import main


def _cases():
    """Generate the corpus once per test process into a temporary folder removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="trackverify-corpus-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root, build_corpus(root)


ROOT, CASES = _cases()


def _hashes(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case, capsys):
    before = _hashes(ROOT)
    with pytest.raises(SystemExit) as exit_info:
        main(case.args)
    captured = capsys.readouterr()
    message = captured.err
    assert exit_info.value.code == case.code, message
    assert "Traceback" not in message and "Traceback" not in captured.out
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    after = _hashes(ROOT)
    assert {k: v for k, v in after.items() if k in before} == before, "an input was modified"
    if case.out is not None and case.out.exists():
        leftovers = [p.name for p in case.out.iterdir()]
        assert leftovers == [], f"output left behind: {leftovers}"


def test_corpus_is_large_enough():
    assert len(CASES) >= 140
