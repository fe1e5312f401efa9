"""Track pooling (verifiers/pooling.py): max(raw, median of +-h rows of the predicted track),
every expected value computed by hand next to its case."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import ConfigError
from trackverify.verifiers import load_verifier
from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks, track_positions
from trackverify.verifiers.registered_distance import RegisteredDistance

PAIRS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "targettrack-point-pairs"
NAN = np.nan


def track(scores, pred_id=1, recording="r", frames=None) -> pd.DataFrame:
    """One predicted track: frames 0, 1, ... (or ``frames``), one score column."""
    frames = list(range(len(scores))) if frames is None else frames
    return pd.DataFrame({"recording": recording, "frame": frames, "pred_id": pred_id,
                         "pred_valid": True, "s": np.asarray(scores, dtype=np.float64)})


def pooled(table: pd.DataFrame, h: int) -> np.ndarray:
    return pool_along_tracks(table["s"].to_numpy(), *claimed_tracks(table), h)


def test_an_isolated_spike_stays_and_does_not_spread():
    # h=1: row 2's window [0, 9, 0] -> median 0, max(9, 0) = 9; row 1's [0, 0, 9] -> 0
    # h=2: row 2's window [0, 0, 9, 0, 0] -> 0; row 1's [0, 0, 9, 0] -> 0 (two middles 0, 0)
    for h in (1, 2):
        np.testing.assert_array_equal(pooled(track([0, 0, 9, 0, 0]), h), [0, 0, 9, 0, 0])


def test_a_step_keeps_its_edge_exactly():
    # h=2: row 2's window rows 0..4 = [0, 0, 0, 8, 8] -> median 0 (stays 0);
    # row 3's rows 1..5 = [0, 0, 8, 8, 8] -> 8; ends clipped: row 0 [0, 0, 0], row 6 [8, 8, 8]
    np.testing.assert_array_equal(pooled(track([0, 0, 0, 8, 8, 8, 8]), 2),
                                  [0, 0, 0, 8, 8, 8, 8])


def test_a_low_row_inside_an_error_run_is_lifted_to_the_run():
    # h=2: row 2's window [8, 8, 1, 8, 8] -> median 8, max(1, 8) = 8; row 1's [8, 8, 1, 8]
    # sorted [1, 8, 8, 8] -> (8 + 8) / 2 = 8; row 0's [8, 8, 1] -> 8
    np.testing.assert_array_equal(pooled(track([8, 8, 1, 8, 8]), 2), [8, 8, 8, 8, 8])


def test_an_even_window_takes_the_mean_of_its_two_middle_values():
    # h=1 at the track's end: row 0's window [2, 6] -> 4 = max(2, 4); row 2's [6, 1] -> 3.5
    np.testing.assert_array_equal(pooled(track([2, 6, 1]), 1), [4, 6, 3.5])


def test_nan_rows_stay_abstained_add_nothing_and_keep_their_place():
    # h=1: row 0's window [1, NaN] -> finite [1] -> 1; row 1 stays NaN; row 2's window
    # [NaN, 5, 3] -> (3 + 5) / 2 = 4 -> max(5, 4) = 5; row 3's [5, 3] -> 4 = max(3, 4)
    np.testing.assert_array_equal(pooled(track([1, NAN, 5, 3]), 1), [1, NAN, 5, 4])
    # the NaN row keeps its position: row 2's window is rows 1..2 = [NaN, 1] -> 1, not the
    # [9, 1] -> 5 it would be if the NaN row were dropped from the track
    np.testing.assert_array_equal(pooled(track([9, NAN, 1]), 1), [9, NAN, 1])
    np.testing.assert_array_equal(pooled(track([NAN, NAN]), 3), [NAN, NAN])


def test_no_leakage_between_ids_or_recordings():
    # A = [0, 0, 1] (frames 0..2) then B = [8, 8, 8] (frames 3..5), h=2. Each alone: A's
    # windows [0, 0, 1] everywhere -> 0, so A stays [0, 0, 1]; B stays [8, 8, 8]. By row
    # order A's row 1 would see [0, 0, 1, 8] -> 0.5.
    both = pd.concat([track([0, 0, 1], pred_id=1), track([8, 8, 8], pred_id=2, frames=[3, 4, 5])])
    np.testing.assert_array_equal(pooled(both, 2), [0, 0, 1, 8, 8, 8])
    # the same pred_id in two recordings is two tracks
    both = pd.concat([track([0, 0, 1], recording="a"), track([8, 8, 8], recording="b",
                                                           frames=[3, 4, 5])])
    np.testing.assert_array_equal(pooled(both, 2), [0, 0, 1, 8, 8, 8])
    # rows interleaved frame by frame: A = 0, 0, 0 and B = 8, 8, 8 at the same frames
    mixed = pd.DataFrame({"recording": "r", "frame": [0, 0, 1, 1, 2, 2],
                          "pred_id": [1, 2, 1, 2, 1, 2], "pred_valid": True,
                          "s": [0.0, 8, 0, 8, 0, 8]})
    np.testing.assert_array_equal(pooled(mixed, 1), [0, 8, 0, 8, 0, 8])


def test_rows_out_of_frame_order_are_pooled_by_frame():
    # the error run [8, 8, 1, 8, 8] at frames 10..14, given as frames 13, 10, 12, 14, 11
    table = track([8, 8, 1, 8, 8], frames=[10, 11, 12, 13, 14])
    shuffled = table.iloc[[3, 0, 2, 4, 1]]
    np.testing.assert_array_equal(pooled(shuffled, 2), [8, 8, 8, 8, 8])
    # a step given backwards: frames 6..0 with scores 8, 8, 8, 8, 0, 0, 0
    step = track([0, 0, 0, 8, 8, 8, 8]).iloc[::-1]
    np.testing.assert_array_equal(pooled(step, 2), [8, 8, 8, 8, 0, 0, 0])


def test_rows_of_one_frame_are_ordered_by_detection_not_by_row_order():
    # id 1: frame 0 score 0; frame 1 detection 5 (score 8) listed before detection 3 (score
    # 0); frame 2 score 8. Track order: f0 (0), f1 d3 (0), f1 d5 (8), f2 (8). h=1: d3's
    # window [0, 0, 8] -> 0 (stays 0); d5's [0, 8, 8] -> 8. In row order d3 would sit
    # between 8 and 8 and be lifted to 8.
    table = pd.DataFrame({"recording": "r", "frame": [0, 1, 1, 2], "detection": [0, 5, 3, 1],
                          "pred_id": 1, "pred_valid": True, "s": [0.0, 8, 0, 8]})
    np.testing.assert_array_equal(pooled(table, 1), [0, 8, 0, 8])


def test_rows_without_a_valid_claim_are_in_no_track():
    # pred_valid false at frame 1 (its score NaN, as the verifier gives it): it is returned as
    # it is and takes no place in the track, so the track is [9, 1] (frames 0, 2) and, h=1,
    # frame 2's window [9, 1] -> 5 = max(1, 5); were it a place of the track, frame 2's
    # window would be [NaN, 1] -> 1
    table = track([9, NAN, 1])
    table.loc[1, "pred_valid"] = False
    codes, _ = claimed_tracks(table)
    assert codes.tolist() == [0, -1, 0]
    np.testing.assert_array_equal(pooled(table, 1), [9, NAN, 5])
    # a row in no track keeps even a finite score as it is
    np.testing.assert_array_equal(
        pool_along_tracks(np.array([0.0, 7, 0]), np.array([0, -1, 0]),
                          [np.array([0, 1, 2])], 1), [0, 7, 0])


def test_window_zero_is_the_identity_and_inputs_are_not_modified():
    scores = np.array([8.0, 1, NAN, 8])
    table = track(scores)
    out = pool_along_tracks(scores, *claimed_tracks(table), 0)
    np.testing.assert_array_equal(out, scores)
    assert out is not scores
    pool_along_tracks(scores, *claimed_tracks(table), 2)
    np.testing.assert_array_equal(scores, [8.0, 1, NAN, 8])


def test_track_positions_by_hand():
    # tracks: rows 0, 2 in track 1 (frames 5, 3), rows 1, 3, 4 in track 0 (frames 2, 0, 1),
    # row 5 in none
    rows, rank, length = track_positions(np.array([1, 0, 1, 0, 0, -1]),
                                         [np.array([5, 2, 3, 0, 1, 9])])
    assert rows.tolist() == [3, 4, 1, 2, 0]
    assert rank.tolist() == [0, 1, 2, 0, 1]
    assert length.tolist() == [3, 3, 3, 2, 2]


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
    from trackverify.evidence import load_pair, pair_conditions

    example = sorted(p for p in PAIRS.iterdir() if p.is_dir())[0]
    for name, rows in pair_conditions(*load_pair(example)).items():
        rows = rows.drop(columns="error")
        one = rows["frame"].to_numpy() == 1
        raw = RegisteredDistance(track_window=0).score(rows)
        np.testing.assert_array_equal(RegisteredDistance(track_window=8).score(rows)[one],
                                      raw[one], err_msg=name)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_a_bad_window_is_refused(bad):
    with pytest.raises(ConfigError, match="track_window"):
        RegisteredDistance(track_window=bad)


def test_the_window_reaches_the_verifier_as_an_option():
    assert load_verifier("registered_distance", {"track_window": 4}).track_window == 4
