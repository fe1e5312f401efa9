"""docs/examples/run.toml parses, and every key docs/reference/configuration.md lists exists."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path

from trackverify.benchmark.config import CONDITIONS, RunConfig, build_config

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_example_config_parses_with_its_values():
    path = DOCS / "examples" / "run.toml"
    config = build_config(config_file=path)
    written = tomllib.loads(path.read_text(encoding="utf-8"))
    assert config.start == written["run"]["start"] == 16
    assert config.recovery_end == written["run"]["recovery_end"] == 33
    assert list(config.conditions) == written["run"]["conditions"]
    assert config.specimen.frames == written["specimen"]["frames"]


def test_documented_run_keys_and_conditions_exist():
    text = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## `[run]`")[1].split("## ")[0]
    keys = re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)
    # consistency_threshold_um is internal: not settable from a file or flag (config.py).
    assert set(keys) == {f.name for f in fields(RunConfig)} - {"specimen", "consistency_threshold_um"}
    for condition in CONDITIONS:
        assert f"`{condition}`" in text
