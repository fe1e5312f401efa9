"""Helpers shared by the stage-evaluator tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from trackverify.stages import evaluate_stage


@pytest.fixture
def run_stage():
    def run(stage: str, root: Path, ground_truth: bool = False, **overrides):
        return evaluate_stage(stage, root / "sub", root / "ref",
                              root / "gt" if ground_truth else None, overrides or None)
    return run
