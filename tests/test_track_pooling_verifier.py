"""registered_distance with track pooling (``track_window``): its scores are the pooling of
its own unpooled scores along each predicted track, whatever the row order; two-frame pairs
keep their frame-1 scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks
from trackverify.verifiers.registered_distance import RegisteredDistance

PAIRS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "targettrack-point-pairs"


def grid_table(frames: int = 6) -> pd.DataFrame:
    """18 points 10 um apart, moving 1 um per frame along x, ids 100.."""
    g = np.stack(np.meshgrid(np.arange(3), np.arange(3), np.arange(2), indexing="ij"), -1)
    base = g.reshape(-1, 3) * 10.0
    rows = [{"recording": "r", "frame": t, "detection": i, "x_um": p[0] + t, "y_um": p[1],
             "z_um": p[2], "pred_id": 100 + i, "pred_valid": True}
            for t in range(frames) for i, p in enumerate(base)]
    return pd.DataFrame(rows)


def swapped(table: pd.DataFrame, frames) -> pd.DataFrame:
    """Ids 100 and 101 exchanged at ``frames``."""
    out = table.copy()
    rows = out["frame"].isin(frames) & out["pred_id"].isin([100, 101])
    out.loc[rows, "pred_id"] = 201 - out.loc[rows, "pred_id"]
    return out


def test_the_verifier_pools_its_own_scores_along_each_predicted_track():
    table = swapped(grid_table(), [2, 3, 4, 5])
    raw = RegisteredDistance(track_window=0).score(table)
    verifier = RegisteredDistance(track_window=2)
    scores = verifier.score(table)
    np.testing.assert_array_equal(scores, pool_along_tracks(raw, *claimed_tracks(table), 2))
    # the same scores whatever the row order (to rounding: the fit takes its detections in
    # row order); pooled by row order, correct rows next to swapped ones (~10 um) would rise
    order = np.random.default_rng(0).permutation(len(table))
    np.testing.assert_allclose(verifier.score(table.iloc[order]), scores[order], atol=1e-6)
    assert (scores[table["pred_id"].isin([100, 101]).to_numpy() & (table["frame"] >= 2).to_numpy()]
            > 5).all()
    # abstentions are counted before the pooling and it changes none
    assert np.array_equal(np.isnan(scores), np.isnan(raw))


def test_two_frame_pairs_keep_their_frame_one_scores():
    # a track of an anchor row (score 0: it is its own registered anchor point) and one
    # frame-1 row s: the window is [0, s] -> s / 2 <= s, so the frame-1 row keeps s for any h
    # (the pairs' population is the frame-1 rows); the anchor row rises to max(0, s / 2)
    table = swapped(grid_table(frames=2), [1])
    one = table["frame"].to_numpy() == 1
    raw = RegisteredDistance(track_window=0).score(table)
    assert (raw[~one] == 0).all()
    for h in (1, 8):
        scores = RegisteredDistance(track_window=h).score(table)
        np.testing.assert_array_equal(scores[one], raw[one])
        later = pd.Series(raw[one], index=table.loc[one, "pred_id"].to_numpy())
        np.testing.assert_array_equal(scores[~one],
                                      later[table.loc[~one, "pred_id"]].to_numpy() / 2)


@pytest.mark.skipif(not PAIRS.is_dir(), reason=f"real pairs not found at {PAIRS}")
def test_the_real_targettrack_pairs_keep_their_frame_one_scores():
    from trackverify.benchmark.evidence import load_pair, pair_conditions

    example = sorted(p for p in PAIRS.iterdir() if p.is_dir())[0]
    for name, rows in pair_conditions(*load_pair(example)).items():
        rows = rows.drop(columns="error")
        one = rows["frame"].to_numpy() == 1
        raw = RegisteredDistance(track_window=0).score(rows)
        np.testing.assert_array_equal(RegisteredDistance(track_window=8).score(rows)[one],
                                      raw[one], err_msg=name)


@pytest.mark.parametrize("bad", [True, -1, 1.5, "1", None])
def test_track_window_must_be_an_integer_of_at_least_zero(bad):
    from trackverify.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        RegisteredDistance(track_window=bad)
    assert str(raised.value) == ("registered_distance: track_window must be an integer >= 0, "
                                 f"got {bad!r}")


def test_the_default_window_is_one_and_lifts_a_correct_row_between_swapped_rows():
    # ids 100 / 101 swapped at frames 2, 3 and 5, not 4: with h = 1 the frame-4 row of each
    # sits between two swapped rows of its own track (about 10 um each) and takes their level
    assert RegisteredDistance().track_window == 1
    assert type(RegisteredDistance(track_window=np.int64(2)).track_window) is int
    table = swapped(grid_table(), [2, 3, 5])
    raw = RegisteredDistance(track_window=0).score(table)
    scores = RegisteredDistance().score(table)
    middle = (table["frame"].to_numpy() == 4) & table["pred_id"].isin([100, 101]).to_numpy()
    assert (raw[middle] < 1).all() and (scores[middle] > 5).all()
    untouched = ~table["pred_id"].isin([100, 101]).to_numpy()  # registered to ~1e-9 um
    np.testing.assert_allclose(scores[untouched], raw[untouched], rtol=0, atol=1e-6)


def test_unpooled_relative_scores_are_floats_with_nan_for_no_evidence():
    table = swapped(grid_table(), [2, 3])
    table.loc[table["frame"] == 3, "pred_valid"] = False
    scores = RegisteredDistance(score="relative", track_window=0).score(table)
    assert scores.dtype == np.float64
    assert np.isnan(scores[(table["frame"] == 3).to_numpy()]).all()
