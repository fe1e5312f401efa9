"""Every command and code example of the guides (``docs/guide/*.md``) runs, in document
order, in a fresh folder where the repository's ``tests/data`` and ``examples`` are visible
under the same names; console lines start with ``$ ``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

GUIDES = sorted((REPO / "docs" / "guide").glob("*.md"))
BLOCK = re.compile(r"^```(console|python)\n(.*?)^```", re.S | re.M)
#: A guide is read in about five minutes.
MAX_LINES = 150


def examples(guide: Path) -> list[tuple[str, str]]:
    """Each runnable example of ``guide`` in order: ``("console", command)`` for each ``$ ``
    line of a console block, ``("python", code)`` for each python block."""
    out = []
    for kind, text in BLOCK.findall(guide.read_text(encoding="utf-8")):
        if kind == "python":
            out.append((kind, text))
        else:
            out.extend((kind, line[2:]) for line in text.splitlines() if line.startswith("$ "))
    return out


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(REPO / "tests" / "data")
    if (REPO / "examples").is_dir():
        (tmp_path / "examples").symlink_to(REPO / "examples")
    return tmp_path


@pytest.mark.parametrize("guide", [g for g in GUIDES if examples(g)], ids=lambda g: g.name)
def test_every_example_of_the_guide_runs(guide, tmp_path):
    folder = _folder(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for kind, text in examples(guide):
        command = ["bash", "-c", text] if kind == "console" else [sys.executable, "-c", text]
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
    assert examples(guide) == [("console", "trackverify synth --out a"), ("console", "echo done"),
                               ("python", "print(1)\n")]
