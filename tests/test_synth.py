"""The development specimen: determinism, spacing, and motion levels as promised."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import ConfigError
from trackverify.synth.anatomy import head_ganglion_neurons, nearest_neighbour_spacing
from trackverify.synth.specimen import SpecimenConfig, animal_observations, recording_table
from trackverify.tables import OBSERVATIONS, validate


def displacement_and_step(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Displacement from each track's frame-0 position; frame-to-frame step of each track."""
    xyz = ["x_um", "y_um", "z_um"]
    anchor = df[df["frame"] == 0].set_index("track")[xyz]
    moved = df[df["frame"] > 0]
    disp = np.linalg.norm(moved[xyz].to_numpy() - anchor.loc[moved["track"]].to_numpy(), axis=1)
    s = df.sort_values(["track", "frame"])
    consecutive = (np.diff(s["track"]) == 0) & (np.diff(s["frame"]) == 1)
    step = np.linalg.norm(np.diff(s[xyz].to_numpy(), axis=0), axis=1)[consecutive]
    return disp, step


@pytest.fixture(scope="module")
def levels():
    return {m: displacement_and_step(animal_observations(SpecimenConfig(motion=m), 0))
            for m in ("still", "moderate", "free", "fast")}


def test_head_ganglia_are_189_neurons():
    head = head_ganglion_neurons()
    assert len(head) == 189 and head["y_um"].max() <= -226


def test_specimen_is_a_valid_observation_table_and_deterministic():
    config = SpecimenConfig(frames=50)
    a = animal_observations(config, 0)
    b = animal_observations(config, 0)
    pd.testing.assert_frame_equal(a, b)
    validate(a, OBSERVATIONS, "specimen")
    assert not animal_observations(SpecimenConfig(frames=50, seed=1), 0).equals(a)
    assert not animal_observations(config, 1)["x_um"].equals(a["x_um"])


def test_anchor_frame_complete_and_spacing_respected():
    df = animal_observations(SpecimenConfig(frames=5), 0)
    frame0 = df[df["frame"] == 0]
    assert len(frame0) == 189
    spacing = nearest_neighbour_spacing(frame0[["x_um", "y_um", "z_um"]].to_numpy())
    assert spacing.min() >= 2.0
    # Model somata are near-coincident (1.16 um at the 5th percentile): jitter + spacing fixed that.
    assert 2.0 < np.median(spacing) < 3.0


def test_detections_are_a_permutation_within_each_frame():
    df = animal_observations(SpecimenConfig(frames=20), 0)
    per_frame = df.groupby("frame")["detection"].agg(["min", "max", "count", "nunique"])
    assert (per_frame["min"] == 0).all()
    assert (per_frame["max"] == per_frame["count"] - 1).all()
    assert (per_frame["nunique"] == per_frame["count"]).all()
    assert not (df[df["frame"] == 1]["detection"].to_numpy() == np.arange(189)).all()


def test_missed_detections_occur_at_the_declared_rate():
    df = animal_observations(SpecimenConfig(frames=1000, miss_rate=0.01), 0)
    missed = 1 - len(df) / (1000 * 189)
    assert 0.008 < missed < 0.012


def test_still(levels):
    disp, step = levels["still"]
    assert np.median(disp) < 2.5 and np.quantile(disp, 0.99) < 5


def test_moderate(levels):
    disp, _ = levels["moderate"]
    assert 5 <= np.median(disp) <= 15


def test_free(levels):
    disp, _ = levels["free"]
    assert 20 <= np.median(disp) <= 50


def test_steps_are_below_spacing_except_fast(levels):
    for level in ("still", "moderate", "free"):
        assert np.median(levels[level][1]) < 1.0  # well under the ~2.5 um neighbour spacing
    fast = np.median(levels["fast"][1])
    assert 1.5 <= fast <= 2.5  # approaches the spacing
    assert 20 <= np.median(levels["fast"][0]) <= 50


def test_recording_table_groups():
    rec = recording_table(SpecimenConfig(animals=5, groups=2))
    assert list(rec["provenance_group"]) == ["synthetic-0", "synthetic-1"] * 2 + ["synthetic-0"]
    assert rec["animal_id"].is_unique


@pytest.mark.parametrize("kwargs", [{"motion": "wild"}, {"frames": 0}, {"groups": 3, "animals": 2},
                                    {"miss_rate": 1.0}, {"min_spacing_um": -1}])
def test_bad_specimen_config(kwargs):
    with pytest.raises(ConfigError):
        SpecimenConfig(**kwargs)
