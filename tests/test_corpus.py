"""Every malformed input in the corpus is refused cleanly (issue: robustness).

Each case asserts the exit code (2, or a documented verdict), a message naming the file
and, where there is one, the column and row (a refusal: one line), no traceback, inputs untouched (no file
changed, added or removed among the files and folders the command line names), and no
output file left behind, whole or half-written. A documented verdict's report must be
complete (JSON that parses) and name the problem; nothing else may be left beside it but
complete outputs (no temporary file).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.corpus.make_corpus import build_corpus
from trackverify.cli.app import main


def _cases():
    """Generate the corpus once per test process into a temporary folder removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="trackverify-corpus-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root, build_corpus(root)


ROOT, CASES = _cases()


def _hashes(case) -> dict[str, str]:
    """SHA-256 of every file the command line names (files, and files under folders)."""
    out = {}
    for arg in case.args:
        path = Path(arg)
        if not path.is_absolute() or not path.exists() or path == case.out:
            continue
        for p in [path] if path.is_file() else path.rglob("*"):
            if p.is_file() and (case.out is None or case.out not in p.parents):
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.known_bug)) if c.known_bug
    else c for c in CASES], ids=[c.name for c in CASES])
def test_corpus_case(case, capsys):
    before = _hashes(case)
    with pytest.raises(SystemExit) as exit_info:
        main(case.args)
    captured = capsys.readouterr()
    message = captured.err
    assert exit_info.value.code == case.code, message
    assert "Traceback" not in message and "Traceback" not in captured.out
    errors = [line for line in message.splitlines() if not line.startswith("trackverify: warning:")]
    if case.code == 2:  # the refusal is one line, whatever library message it quotes
        assert len(errors) == 1 and errors[0].startswith("trackverify: error: "), message
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert _hashes(case) == before, "an input was modified, added or removed"
    if case.report is not None:
        text = case.report.read_text(encoding="utf-8")
        if case.report.suffix == ".json":
            json.loads(text)
        for fragment in case.report_fragments:
            assert fragment in text, f"{fragment!r} not in {case.report}"
    if case.out is not None and case.out.exists():
        files = [p for p in case.out.rglob("*") if p.is_file()]
        leftovers = [p.name for p in files if case.report is None or p.name.endswith(".tmp")]
        assert leftovers == [], f"output left behind: {leftovers}"


def test_corpus_is_large_enough():
    assert len(CASES) >= 200
