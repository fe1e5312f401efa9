"""The real-data benchmarks on a held-out part of the recording (built by
``benchmarks/held_out_parts.py``): a part shorter than SPEC's window gets evidence's window
(30 % / 70 % of its frame numbers), not a traceback; with a fifth of the labels removed the
nearby swap still injects errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO, SHARED
from trackverify.anchors import anchor_identities
from trackverify.benchmark.corrupt import corrupt_recording

REAL = SHARED / "data" / "fdnc-nerve-freely-moving"
needs_real = pytest.mark.skipif(not (REAL / "tracker_cpd.parquet").exists(),
                                reason="../shared/data/fdnc-nerve-freely-moving is not present")


def part(name: str, folder: Path) -> Path:
    """``benchmarks/held_out_parts.py NAME FOLDER`` on the real recording."""
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "held_out_parts.py"),
                             name, folder, "--data", REAL], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return folder


@needs_real
def test_bench_real_verifier_takes_a_held_out_half(tmp_path):
    folder = part("second-half", tmp_path / "half")
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


@needs_real
def test_nearby_swap_injects_errors_with_a_fifth_of_the_labels_removed(tmp_path):
    """Seed 20261202 removes track 50's frame-0 row: 50 has no anchor identity, and 50 / 81
    (the nearest pair at frame 300, as on the whole recording) swapped no labelled row, so
    nearby_swap had no error and its AUROC* was undefined in every draw. The pair is now the
    nearest of the anchored tracks, and every labelled row of it in [300, 700) is an error."""
    folder = part("labels-removed", tmp_path / "labels")
    observations = pd.read_parquet(folder / "observations.parquet")
    whole = pd.read_parquet(REAL / "observations.parquet")
    assert len(whole) - len(observations) == 9534  # the builder's count, 19.9 % of 47,907
    anchored = anchor_identities(observations).index
    assert 50 not in anchored and 81 in anchored
    stacked, choices = corrupt_recording(observations, ("control", "nearby_swap"), 20261007,
                                         300, 700, "r")
    a, b = choices["nearby_swap"]["tracks"]
    assert {a, b} <= set(anchored)
    frames, tracks = observations["frame"].to_numpy(), observations["track"].to_numpy()
    swapped = int(((frames >= 300) & (frames < 700) & np.isin(tracks, [a, b])).sum())
    nearby = stacked[stacked["condition"] == "nearby_swap"]
    assert swapped > 0 and int((nearby["error"] == 1).sum()) == swapped


@needs_real
def test_thirds_dropped_keeps_the_anchor_frame_and_two_of_every_three(tmp_path):
    """686 present frames: positions 2, 5, ..., 683 go (228 of them), 458 stay, the first
    (the anchor) among them; every table keeps the input's frame numbers."""
    folder = part("thirds-dropped", tmp_path / "thirds")
    present = np.unique(pd.read_parquet(REAL / "observations.parquet")["frame"])
    assert len(present) == 686
    for name in ("observations", "detections", "tracker_cpd"):
        kept = np.unique(pd.read_parquet(folder / f"{name}.parquet")["frame"])
        assert len(kept) == 458 and kept[0] == present[0]
        assert present[2] not in kept and present[683] not in kept and present[684] in kept
