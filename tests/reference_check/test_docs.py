"""The Python example of docs/guide/reference-check.md runs and its assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "reference-check.md"


def test_guide_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(DOC), "exec"), {})
    assert "crossed" in capsys.readouterr().out
