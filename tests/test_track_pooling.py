"""Track pooling (verifiers/pooling.py): max(raw, median of +-h rows of the predicted track),
every expected value computed by hand next to its case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import ConfigError
from trackverify.verifiers import load_verifier
from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks, track_positions
from trackverify.verifiers.registered_distance import RegisteredDistance

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


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_a_bad_window_is_refused(bad):
    with pytest.raises(ConfigError, match="track_window"):
        RegisteredDistance(track_window=bad)


def test_the_window_reaches_the_verifier_as_an_option():
    assert load_verifier("registered_distance", {"track_window": 4}).track_window == 4


def test_a_median_of_three_and_of_five_by_hand():
    # h=1: row 2's window [8, 1, 8] -> sorted [1, 8, 8] -> 8, lifted from 1; rows 0 and 4
    # see [8, 8]; rows 1 and 3 [8, 8, 1] -> 8
    np.testing.assert_array_equal(pooled(track([8, 8, 1, 8, 8]), 1), [8, 8, 8, 8, 8])
    # h=2, row 2 (score 0): window [3, 4, 0, 1, 2] -> sorted [0, 1, 2, 3, 4] -> 2 = max(0, 2);
    # row 0: [3, 4, 0] -> 3 = max(3, 3); row 1: [3, 4, 0, 1] -> (1 + 3) / 2 = 2 -> 4;
    # row 3: [4, 0, 1, 2] -> (1 + 2) / 2 = 1.5 -> max(1, 1.5); row 4: [0, 1, 2] -> 1 -> 2
    np.testing.assert_array_equal(pooled(track([3, 4, 0, 1, 2]), 2), [3, 4, 2, 1.5, 2])


def test_integer_scores_pool_as_floats_and_a_track_may_hold_one_row():
    # [2, 6, 1] as integers, h=1: [4, 6, 3.5] as above (not truncated to 3)
    out = pool_along_tracks(np.array([2, 6, 1]), np.array([0, 0, 0]), [np.array([0, 1, 2])], 1)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [4, 6, 3.5])
    assert pool_along_tracks(np.array([3]), np.array([0]), [np.array([0])], 0).dtype == np.float64
    # one row alone: its window is itself
    np.testing.assert_array_equal(
        pool_along_tracks(np.array([5.0]), np.array([0]), [np.array([7])], 2), [5])
    # no row in any track
    np.testing.assert_array_equal(
        pool_along_tracks(np.array([5.0, 1]), np.array([-1, -1]), [np.array([0, 1])], 2), [5, 1])


def test_the_tracks_of_a_table_without_a_recording_column():
    # ids 1 and 2 at frames 0..2 (no recording column): A = [0, 0, 1], B = [8, 8, 8]; h=2
    table = pd.DataFrame({"frame": [0, 1, 2, 0, 1, 2], "pred_id": [1, 1, 1, 2, 2, 2],
                          "pred_valid": True, "s": [0.0, 0, 1, 8, 8, 8]})
    codes, order = claimed_tracks(table)
    assert codes.dtype == np.int64 and codes.tolist() == [0, 0, 0, 1, 1, 1]
    assert len(order) == 1 and order[0].tolist() == [0, 1, 2, 0, 1, 2]
    np.testing.assert_array_equal(pooled(table, 2), [0, 0, 1, 8, 8, 8])


@pytest.mark.parametrize("axis", ["x_um", "y_um", "z_um"])
def test_rows_of_one_frame_without_detection_ids_are_ordered_by_coordinates(axis):
    # id 1 at frames 0, 1, 1, 2 with scores 0, 8, 0, 8; the two frame-1 rows differ along
    # ``axis`` only (the earlier axes equal), the score-8 row listed first but at the larger
    # coordinate: track order 0, 0, 8, 8 and h=1 keeps every score (as with detection ids)
    table = pd.DataFrame({"recording": "r", "frame": [0, 1, 1, 2], "pred_id": 1,
                          "pred_valid": True, "x_um": 0.0, "y_um": 0.0, "z_um": 0.0,
                          "s": [0.0, 8, 0, 8]})
    table.loc[1, axis] = 2.0
    table.loc[2, axis] = 1.0
    np.testing.assert_array_equal(pooled(table, 1), [0, 8, 0, 8])


def test_a_nullable_boolean_pred_valid_column_is_read_as_booleans():
    # pred_valid as pandas' nullable boolean (as a parquet file may give it): frame 1 false
    table = track([9, NAN, 1])
    table["pred_valid"] = pd.array([True, False, True], dtype="boolean")
    codes, _ = claimed_tracks(table)
    assert codes.tolist() == [0, -1, 0]


def test_track_codes_of_ids_in_two_recordings_and_of_a_missing_id():
    # ids [1, 2, NaN] in recordings a and b: id codes 0, 1, -1 (2 ids), recording codes 0, 1:
    # code = recording x 2 + id -> 0, 1, 2, 3; a missing id is in no track (-1)
    table = pd.DataFrame({"recording": ["a", "a", "a", "b", "b", "b"], "frame": 0,
                          "pred_id": [1, 2, NAN, 1, 2, NAN], "pred_valid": True})
    codes, _ = claimed_tracks(table)
    assert codes.tolist() == [0, 1, -1, 2, 3, -1]


def test_a_window_beyond_the_longest_track_pools_the_whole_track():
    # every row's window holds the whole track [1, 5, 3] -> median 3: max(1, 3), max(5, 3),
    # max(3, 3); a window of 10**12 asked for a 2 * 10**12 + 1 column matrix before
    # (MemoryError), now it is the window of the track's length
    np.testing.assert_array_equal(pooled(track([1, 5, 3]), 10**12), [3, 5, 3])
    np.testing.assert_array_equal(pooled(track([1, 5, 3]), 2), [3, 5, 3])
