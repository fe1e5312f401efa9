"""Every command and code example of the documentation (the guides, the reference and the
evidence pages: every ``docs/**/*.md``) and of README.md runs, in document order, in a fresh folder where the repository's ``tests/data``, ``examples`` and
``.venv`` are visible under the same names. A console block's ``$ `` lines run as one bash
script (``set -e``); a python block runs as a script."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

GUIDES = sorted((REPO / "docs" / "guide").glob("*.md"))
PAGES = sorted((REPO / "docs").rglob("*.md"))
WITH_EXAMPLES = [REPO / "README.md", *PAGES]
BLOCK = re.compile(r"^```(console|python)\n(.*?)^```", re.S | re.M)
#: A guide is read in about five minutes.
MAX_LINES = 150


def examples(guide: Path) -> list[tuple[str, str]]:
    """Each runnable example of ``guide`` in order: ``("console", script)`` of a console
    block's ``$ `` lines, ``("python", code)`` of a python block."""
    out = []
    for kind, text in BLOCK.findall(guide.read_text(encoding="utf-8")):
        if kind == "console":
            text = "".join(line[2:] + "\n" for line in text.splitlines() if line.startswith("$ "))
        out.append((kind, text))
    return out


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(REPO / "tests" / "data")
    for name in ("examples", ".venv"):
        if (REPO / name).is_dir():
            (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


@pytest.mark.parametrize("guide", [g for g in WITH_EXAMPLES if examples(g)],
                         ids=lambda g: g.name if g.parent.name in ("guide", REPO.name)
                         else str(g.relative_to(REPO / "docs")))
def test_every_example_of_the_guide_runs(guide, tmp_path):
    folder = _folder(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for kind, text in examples(guide):
        command = (["bash", "-c", "set -e\n" + text] if kind == "console"
                   else [sys.executable, "-c", text])
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{guide.name}: {text[:200]}\n{done.stderr[-3000:]}"


def test_guides_are_short_and_listed():
    listed = (REPO / "docs" / "guide" / "README.md").read_text(encoding="utf-8")
    for guide in GUIDES:
        lines = guide.read_text(encoding="utf-8").count("\n")
        assert lines <= MAX_LINES, f"{guide.name}: {lines} lines"
        if guide.name != "README.md":
            assert f"]({guide.name})" in listed, f"{guide.name} is not in docs/guide/README.md"


def test_the_examples_are_found():
    # The parser itself: a console block's "$ " lines and a python block, in order.
    guide = Path(__file__).parent / "data" / "guide_sample.md"
    assert examples(guide) == [("console", "trackverify synth --out a\necho done\n"),
                               ("python", "print(1)\n")]
