"""``evaluate_tracking`` over several recordings, by hand: each recording scored on its own
rows whatever the row order, a recording without predictions, the pooled sums."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify import evaluate_tracking
from trackverify.errors import InputError

# Recordings b, a, c interleaved; one track each, linked by detection.
# a: ids 5, 5, 9 in frames 0-2 -> id 5 aligned, 2 correct, a switch (5 -> 9) in frame 2;
#    IDTP 2, IDFP 1 (id 9), IDFN 1; CLEAR TP 3.
# b: ids 6, 7 -> 1 correct, a switch in frame 1; IDTP 1, IDFP 1, IDFN 1; CLEAR TP 2.
# c: no prediction -> 0 correct, no switch; IDFN 1, CLEAR FN 1.
REF = pd.DataFrame({"recording": ["b", "a", "b", "a", "a", "c"], "frame": [0, 0, 1, 1, 2, 0],
                    "track": [1, 1, 1, 1, 1, 3], "detection": [0, 0, 1, 1, 2, 0],
                    "x_um": 0.0, "y_um": 0.0})
PRED = pd.DataFrame({"recording": ["a", "b", "a", "b", "a"], "frame": [0, 0, 1, 1, 2],
                     "pred_id": [5, 6, 5, 7, 9], "detection": [0, 0, 1, 1, 2]})
KEYS = ("reference_observations", "correct_observations", "identity_switches",
        "extra_predicted_observations", "idtp", "idfp", "idfn", "clr_tp", "clr_fn", "idsw")
EXPECTED = {"a": (3, 2, 1, 0, 2, 1, 1, 3, 0, 1), "b": (2, 1, 1, 0, 1, 1, 1, 2, 0, 1),
            "c": (1, 0, 0, 0, 0, 0, 1, 0, 1, 0)}


def test_several_recordings_scored_apart_and_pooled_by_hand():
    result = evaluate_tracking(REF, PRED)
    assert list(result) == ["a", "b", "c", "pooled"]
    for name, values in EXPECTED.items():
        assert tuple(result[name][k] for k in KEYS) == values, name
    pooled = tuple(result["pooled"][k] for k in KEYS)
    assert pooled == (6, 3, 2, 0, 3, 2, 3, 5, 1, 2)
    assert result["a"]["correct_observation_rate"] == 2 / 3
    assert result["c"]["correct_observation_rate"] == 0.0
    assert result["pooled"]["correct_observation_rate"] == 3 / 6
    assert result["pooled"]["idf1"] == 2 * 3 / (2 * 3 + 2 + 3)


def test_several_recordings_tables_name_each_row_s_recording():
    result = evaluate_tracking(REF, PRED)
    assert result.tracks["recording"].tolist() == ["a", "b", "c"]
    assert result.tracks["track"].tolist() == [1, 1, 3]
    assert result.tracks["first_wrong_frame"].tolist() == [2, 1, 0]
    assert result.events[["recording", "frame", "from_id", "to_id"]].values.tolist() == [
        ["a", 2, 5, 9], ["b", 1, 6, 7]]
    obs = result.observations
    assert obs.index.tolist() == list(range(6)) and result.tracks.index.tolist() == [0, 1, 2]
    assert obs["recording"].tolist() == ["a", "a", "a", "b", "b", "c"]
    assert obs["frame"].tolist() == [0, 1, 2, 0, 1, 0]
    assert obs["correct"].tolist() == [True, True, False, True, False, False]
    assert obs["predicted"].tolist() == [True] * 5 + [False]


def test_tables_built_when_read_survive_pickling_and_read_once():
    # the tables are built on first reading; a result sent to another process unread (a
    # pickle) reads the same hand-computed rows, and a table read twice is the same object
    import pickle

    result = pickle.loads(pickle.dumps(evaluate_tracking(REF, PRED)))
    assert result.tracks["first_wrong_frame"].tolist() == [2, 1, 0]
    assert result.events[["recording", "frame", "from_id", "to_id"]].values.tolist() == [
        ["a", 2, 5, 9], ["b", 1, 6, 7]]
    assert result.observations["correct"].tolist() == [True, True, False, True, False, False]
    assert result.tracks is result.tracks
    one = evaluate_tracking(REF[REF["recording"] == "a"], PRED[PRED["recording"] == "a"])
    assert one.observations["recording"].tolist() == ["a"] * 3  # one recording: no concat
    assert one.observations is one.observations


def test_row_order_changes_no_number():
    a = evaluate_tracking(REF, PRED)
    b = evaluate_tracking(REF.iloc[::-1], PRED.iloc[[4, 2, 0, 3, 1]])
    assert dict(a) == dict(b)


def test_one_recording_named_by_a_number_or_a_text():
    """The tables name a single recording in every row; a number is read as text."""
    for given, name in ((3, "3"), ("rec", "rec")):
        ref = REF[REF["recording"] == "a"].assign(recording=given)
        pred = PRED[PRED["recording"] == "a"].assign(recording=given)
        result = evaluate_tracking(ref, pred)
        assert list(result) == [name, "pooled"]
        assert result.observations["recording"].tolist() == [name] * 3
        assert result.tracks["recording"].tolist() == [name]
        assert result.events["recording"].tolist() == [name]
        assert tuple(result[name][k] for k in KEYS) == EXPECTED["a"]


def test_two_recordings_interleaved_are_split():
    """Recordings x and y alternate over 60 rows (one track each, frames 29 down to 0, the
    right id everywhere): each is scored on its own 30 rows; the observation table lists
    each recording's rows by frame."""
    frames = np.repeat(np.arange(29, -1, -1), 2)
    names = np.tile(["x", "y"], 30)
    ref = pd.DataFrame({"recording": names, "frame": frames, "track": np.tile([1, 2], 30),
                        "detection": 0, "x_um": 0.0, "y_um": 0.0})
    pred = pd.DataFrame({"recording": names, "frame": frames, "pred_id": np.tile([4, 5], 30),
                         "detection": 0})
    result = evaluate_tracking(ref, pred)
    assert list(result) == ["x", "y", "pooled"]
    for name in ("x", "y"):
        assert result[name]["reference_observations"] == 30
        assert result[name]["correct_observations"] == 30
    obs = result.observations
    assert obs["recording"].tolist() == ["x"] * 30 + ["y"] * 30
    assert obs["frame"].tolist() == list(range(30)) * 2
    assert obs["track"].tolist() == [1] * 30 + [2] * 30


def test_identity_size_refused_only_beyond_the_limit(monkeypatch):
    """At most MAX_IDENTITY_CELLS (tracks x ids) pairs; the message names the recording
    ("?" for an empty table), both counts, the pairs and the limit."""
    from trackverify.metrics import tracking as tracking_gt
    from trackverify.errors import InputError

    assert tracking_gt.MAX_IDENTITY_CELLS == 5 * 10**7
    rec = REF[REF["recording"] == "a"]
    tracking_gt.check_identity_size(5000, 10**4, rec, "p.csv")  # exactly 5e7: allowed
    with pytest.raises(InputError) as caught:
        tracking_gt.check_identity_size(5001, 10**4, rec, "p.csv")
    assert caught.value.source == "p.csv"
    assert str(caught.value.problem) == (
        "recording 'a' has 5001 reference tracks and 10000 predicted ids: an identity "
        "alignment of 5e+07 pairs, more than the 5e+07 scored (are the tracks linked?)")
    with pytest.raises(InputError, match="^recording '\\?' has 2 reference tracks and 3 "
                                         "predicted ids: an identity alignment of 6 pairs, "
                                         "more than the 5e\\+00 scored") as caught:
        monkeypatch.setattr(tracking_gt, "MAX_IDENTITY_CELLS", 5)
        tracking_gt.check_identity_size(2, 3, rec.iloc[:0], None)
    assert caught.value.source is None
    with pytest.raises(InputError, match="^recording 'a' has 2 reference tracks"):
        tracking_gt.check_identity_size(2, 3, rec.iloc[:1], None)  # a one-row table


def test_compact_frames_keeps_small_frames_and_ranks_large_ones():
    from trackverify.metrics.tracking import compact_frames

    def compact(gt, pred):
        g, p = compact_frames(np.array(gt, dtype=np.int64), np.array(pred, dtype=np.int64))
        assert g.dtype == np.int64 and p.dtype == np.int64
        return g.tolist(), p.tolist()

    assert compact([0, 2], [2]) == ([0, 2], [2])  # 3 rows, largest 2 < 6: as they are
    assert compact([0, 5], [3]) == ([0, 5], [3])  # largest 5 < 6
    assert compact([0, 6], [6]) == ([0, 1], [1])  # largest 6 = 2 x 3 rows: ranks
    assert compact([7, 2**31 - 1], [7, 100]) == ([0, 2], [0, 1])
    assert compact([], []) == ([], [])


def test_matching_by_distance_by_hand():
    """No detection column: tracks 1 (x 0) and 2 (x 20) in frames 0 and 1; ids 7 and 8 within
    0.5 um of them (similarity 0.9 and 1 at 5 um), an extra id 9 at x 50 in frame 0, an
    invalid id 10 on track 1 in frame 1; the predictions out of frame order. CLEAR matches
    7-1 and 8-2 in both frames: 4 correct, 1 extra (5 valid - 4 matched), no switch;
    IDTP 4, IDFP 1, IDFN 0."""
    ref = pd.DataFrame({"recording": "a", "frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
                        "x_um": [0, 20, 0, 20.0], "y_um": 0.0})
    pred = pd.DataFrame({"recording": "a", "frame": [1, 1, 1, 0, 0, 0],
                         "pred_id": [10, 8, 7, 9, 8, 7], "x_um": [0, 20, 0.5, 50, 20, 0.5],
                         "y_um": 0.0, "pred_valid": [False, True, True, True, True, True]})
    m = evaluate_tracking(ref, pred, zero_distance_um=5.0)["a"]
    assert m["correct_observations"] == 4 and m["extra_predicted_observations"] == 1
    assert (m["clr_tp"], m["clr_fp"], m["clr_fn"], m["idsw"]) == (4, 1, 0, 0)
    assert (m["idtp"], m["idfp"], m["idfn"]) == (4, 1, 0)
    assert m["motp"] == pytest.approx((0.9 + 1.0 + 0.9 + 1.0) / 4)


def test_evaluate_tracking_refuses_a_large_identity_alignment(monkeypatch):
    """Recording a: 1 track x 2 valid ids (5, 9) = 2 pairs, beyond a limit of 1."""
    from trackverify.metrics import tracking as tracking_gt
    from trackverify.errors import InputError

    monkeypatch.setattr(tracking_gt, "MAX_IDENTITY_CELLS", 1)
    with pytest.raises(InputError) as caught:
        evaluate_tracking(REF[REF["recording"] == "a"], PRED[PRED["recording"] == "a"],
                          predictions_source="p.csv")
    assert caught.value.source == "p.csv"
    assert caught.value.problem.startswith("recording 'a' has 1 reference tracks and 2 "
                                           "predicted ids")


def test_recording_codes_by_hand():
    """The reference's recordings sorted, each row's code (int64), -1 for a prediction of
    a recording the reference lacks; one shared recording or no predictions: all zeros."""
    from trackverify.metrics.tracking import recording_codes

    def codes(ref, pred):
        names, r, p = recording_codes(pd.DataFrame({"recording": ref}),
                                      pd.DataFrame({"recording": pd.Series(pred, dtype=object)}))
        assert r.dtype == np.int64 and p.dtype == np.int64
        return list(names), r.tolist(), p.tolist()

    assert codes(["a"], ["a"]) == (["a"], [0], [0])
    assert codes(["a", "a"], ["a", "a"]) == (["a"], [0, 0], [0, 0])
    assert codes(["a", "a"], []) == (["a"], [0, 0], [])
    assert codes(["a", "a"], ["b"]) == (["a"], [0, 0], [-1])
    assert codes(["a"], ["a", "b"]) == (["a"], [0], [0, -1])
    assert codes(["b", "a", "b"], ["a", "c", "b"]) == (["a", "b"], [1, 0, 1], [0, -1, 1])


def _alternate(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Rows of the two tables alternating, ``first``'s row 0 first."""
    return pd.concat([first, second]).sort_index(kind="stable").reset_index(drop=True)


def test_ties_break_in_table_order_within_each_recording():
    """A tie in frame 0 of recording a, its 3rd and 4th rows, interleaved with recording b's
    rows (so splitting by recording must keep each one's rows in table order). Ties go to
    the earlier row (as in one recording).

    Predictions: ids 1 and 2 each 1 um from a's track in frame 0, id 1 first; id 1 on the
    track in frames 1-8 -> id 1 matched in frame 0: no switch, 9 correct, 1 extra (id 2).
    Reference: a's tracks 1 and 2 each 1 um from id 1 in frame 0, track 1 first; track 1
    alone in frames 1-8 -> track 1 matched in frame 0: 9 correct (10 observations)."""
    pa = pd.DataFrame({"recording": "a", "frame": [1, 2, 0, 0, 3, 4, 5, 6, 7, 8],
                       "pred_id": [1, 1, 1, 2, 1, 1, 1, 1, 1, 1],
                       "x_um": [0, 0, 1.0, -1.0, 0, 0, 0, 0, 0, 0], "y_um": 0.0})
    pb = pd.DataFrame({"recording": "b", "frame": range(10), "pred_id": 5, "x_um": 0.0,
                       "y_um": 0.0})
    ra = pd.DataFrame({"recording": "a", "frame": range(9), "track": 1, "x_um": 0.0,
                       "y_um": 0.0})
    rb = pd.DataFrame({"recording": "b", "frame": range(10), "track": 1, "x_um": 0.0,
                       "y_um": 0.0})
    m = evaluate_tracking(pd.concat([ra, rb]), _alternate(pb, pa))["a"]
    assert (m["idsw"], m["correct_observations"], m["extra_predicted_observations"]) == (0, 9, 1)
    ra2 = pd.DataFrame({"recording": "a", "frame": [1, 2, 0, 0, 3, 4, 5, 6, 7, 8],
                        "track": [1, 1, 1, 2, 1, 1, 1, 1, 1, 1],
                        "x_um": [0, 0, 1.0, -1.0, 0, 0, 0, 0, 0, 0], "y_um": 0.0})
    pa2 = pd.DataFrame({"recording": "a", "frame": range(9), "pred_id": 1, "x_um": 0.0,
                        "y_um": 0.0})
    m = evaluate_tracking(_alternate(rb, ra2), pd.concat([pa2, pb]))["a"]
    assert (m["reference_observations"], m["correct_observations"], m["idsw"]) == (10, 9, 0)


def test_frame_65536_kept_in_order():
    """One track in frames 0-65536 (65,537 rows: too few for compact_frames to rank them),
    ids 7 on even frames and 8 on odd ones, the predictions in reverse order: id 7 is
    aligned (32,769 frames), every frame after the first switches (65,536 switches)."""
    frames = np.arange(65537)
    ref = pd.DataFrame({"recording": "a", "frame": frames, "track": 1, "x_um": 0.0,
                        "y_um": 0.0})
    pred = pd.DataFrame({"recording": "a", "frame": frames[::-1], "pred_id": 7 + frames[::-1] % 2,
                         "x_um": 0.0, "y_um": 0.0})
    m = evaluate_tracking(ref, pred)["a"]
    assert (m["correct_observations"], m["identity_switches"], m["idsw"]) == (32769, 65536, 65536)


def test_wrong_tracks_order_by_wrong_observations_ties_in_table_order():
    """TrackingResults.wrong_tracks by hand: wrong = observations - correct; t0 3 - 1 = 2,
    t1 10 - 9 = 1, t2 2 - 2 = 0 (right throughout: left out), t3 4 - 0 = 4; so t3, t0, t1
    (ordering by correct + observations instead would give t1, t3, t0). Then 21 tracks u00..u20
    of 5 observations, u_i wrong on 1 + i % 3 of them: the 3-wrong ones (i = 2, 5, ..) first,
    then the 2-wrong, then the 1-wrong, each in table order (ties kept: a sort that is not
    stable reorders these)."""
    from trackverify.metrics.tracking import TrackingResults

    empty = pd.DataFrame()
    tracks = pd.DataFrame({"track": ["t0", "t1", "t2", "t3"], "observations": [3, 10, 2, 4],
                           "correct": [1, 9, 2, 0]})
    got = TrackingResults({}, tracks, empty, empty).wrong_tracks()
    assert got["track"].tolist() == ["t3", "t0", "t1"]
    names = [f"u{i:02d}" for i in range(21)]
    tracks = pd.DataFrame({"track": names, "observations": [5] * 21,
                           "correct": [5 - (1 + i % 3) for i in range(21)]})
    got = TrackingResults({}, tracks, empty, empty).wrong_tracks()
    assert got["track"].tolist() == [names[i] for r in (2, 1, 0) for i in range(r, 21, 3)]


def test_default_zero_distance_is_5_um_and_default_sources_are_named():
    """Without zero_distance_um (SPEC's default, 5 um) the similarity is 1 - d / 5: a
    prediction 2.4 um from the reference point has 0.52 >= 0.5, CLEAR's threshold (TP 1), one
    2.6 um away 0.48 (TP 0; with 6 um it would be 0.57). A bad table is named
    '<reference>' / '<predictions>' when no source is given."""
    ref = pd.DataFrame({"recording": "r", "frame": [0], "track": [1], "x_um": 0.0, "y_um": 0.0})
    for x, tp in ((2.4, 1), (2.6, 0)):
        pred = pd.DataFrame({"recording": "r", "frame": [0], "pred_id": [1], "x_um": x,
                             "y_um": 0.0})
        assert evaluate_tracking(ref, pred)["r"]["clr_tp"] == tp
    with pytest.raises(InputError, match="^<reference>"):
        evaluate_tracking(ref.drop(columns="track"), pred)
    with pytest.raises(InputError, match="^<predictions>"):
        evaluate_tracking(ref, pred.drop(columns="pred_id"))


def test_zero_distance_below_one_and_past_the_float_range():
    """zero_distance_um = 0.5: a prediction 0.2 um away has similarity 1 - 0.2 / 0.5 = 0.6
    (CLEAR TP 1). 10**400 is a positive integer no float holds: refused as a setting. A
    prediction id twice in one frame is refused naming the predictions."""
    from trackverify.errors import ConfigError

    ref = pd.DataFrame({"recording": "r", "frame": [0], "track": [1], "x_um": 0.0, "y_um": 0.0})
    pred = pd.DataFrame({"recording": "r", "frame": [0], "pred_id": [1], "x_um": 0.2,
                         "y_um": 0.0})
    assert evaluate_tracking(ref, pred, zero_distance_um=0.5)["r"]["clr_tp"] == 1
    with pytest.raises(ConfigError, match="zero_distance_um must be a positive number"):
        evaluate_tracking(ref, pred, zero_distance_um=10**400)
    twice = pd.concat([pred, pred], ignore_index=True)
    with pytest.raises(InputError, match="^<predictions>"):
        evaluate_tracking(ref, twice)


def test_given_sources_name_the_refused_table():
    """A reference recording called 'pooled' is refused naming the reference's source; a
    predictions table without pred_id naming the predictions' source."""
    ref = pd.DataFrame({"recording": "pooled", "frame": [0], "track": [1], "x_um": 0.0,
                        "y_um": 0.0})
    pred = pd.DataFrame({"recording": "pooled", "frame": [0], "pred_id": [1], "x_um": 0.0,
                         "y_um": 0.0})
    sources = {"reference_source": "ref.csv", "predictions_source": "p.csv"}
    with pytest.raises(InputError, match="^ref.csv, column 'recording': a recording may not"):
        evaluate_tracking(ref, pred, **sources)
    with pytest.raises(InputError, match="^p.csv"):
        evaluate_tracking(ref.assign(recording="r"), pred.drop(columns="pred_id"), **sources)
