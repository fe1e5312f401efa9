"""Helpers shared by the stage-evaluator tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pytest

from trackverify.stages import evaluate_stage


@pytest.fixture
def run_stage():
    def run(stage: str, root: Path, ground_truth: bool = False, **overrides):
        return evaluate_stage(stage, root / "sub", root / "ref",
                              root / "gt" if ground_truth else None, overrides or None)
    return run


@pytest.fixture
def make_trx():
    """``make_trx(first_frames, fields)``: a checked-trx dict (the normalised layout
    ``check_trx`` returns) from per-target first frames and per-field lists of values
    (``fields["x"]`` gives the number of frames of each target)."""
    def make(first, fields):
        n = np.array([len(v) for v in fields["x"]], dtype=np.int64)
        first = np.array(first, dtype=np.int64)
        out = {"ntargets": len(n), "firstframe": first, "endframe": first + n - 1, "nframes": n}
        for key, values in fields.items():
            out[key] = [np.array(v, dtype=np.float64) for v in values]
        return out
    return make
