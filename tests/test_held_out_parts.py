"""The real-data benchmarks on a held-out part of the recording: a part shorter than SPEC's
window gets evidence's window (30 % / 70 % of its frame numbers), not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO, SHARED

REAL = SHARED / "data" / "fdnc-nerve-freely-moving"
TABLES = ("observations", "detections", "tracker_cpd")


def second_half(folder: Path) -> Path:
    """The recording's second half of present frames, kept in the input's numbering."""
    frames = np.unique(pd.read_parquet(REAL / "observations.parquet", columns=["frame"])["frame"])
    keep = frames[len(frames) // 2:]
    folder.mkdir()
    for name in TABLES:
        table = pd.read_parquet(REAL / f"{name}.parquet")
        table[table["frame"].isin(keep)].to_parquet(folder / f"{name}.parquet", index=False)
    (folder / "recordings.csv").write_bytes((REAL / "recordings.csv").read_bytes())
    return folder


@pytest.mark.skipif(not (REAL / "tracker_cpd.parquet").exists(),
                    reason="../shared/data/fdnc-nerve-freely-moving is not present")
def test_bench_real_verifier_takes_a_held_out_half(tmp_path):
    folder = second_half(tmp_path / "half")
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_real_verifier.py"), "--data", folder,
         "--zephir", tmp_path / "absent", "--draws", "1", "--only", "fixed_distance"],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    # 686 present frames: the second half is the last 343, input frames 373..755 (SOURCE.md:
    # last frame 755), so T = 755 - 373 + 1 = 383 frame numbers < SPEC's 700;
    # start floor(0.3 * 383) = 114, recovery_end floor(0.7 * 383) = 268
    assert "window 114 / 268 (scaled), frames counted from input frame 373" in result.stdout
    assert "fixed_distance" in result.stdout and "tracker_cpd AUROC*" in result.stdout
    # the tracker file keeps the input's frame numbers: joined on them, its rows are labelled
    assert "(0 errors / 0)" not in result.stdout
