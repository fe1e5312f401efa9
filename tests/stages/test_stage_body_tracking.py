"""A1 body tracking: CLEAR-MOT counts and MOTA from the tip error (hand-computed).

The matching is trackverify's canonical CLEAR (``trackverify.metrics.mot``, TrackEval conventions).
Every hand-computed case below has the same counts under the EVALUATORS.md default (plain
per-frame Hungarian on the error) except ``test_continuing_match_is_preferred`` and
``test_matching_maximises_similarity_not_the_number_of_matches``, which show the two
documented differences (docs/reference/stages.md, A1).
"""

from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

from trackverify.stages import synthetic as S
from trackverify.errors import ConfigError
from trackverify.stages.body_tracking import BodyTrackingConfig, clear_counts

T, A = 10, 10.0


def _trx(tracks):
    """tracks: list of (firstframe, x array, y array, theta array)."""
    n = len(tracks)
    out = {"x": [], "y": [], "theta": [], "a": [], "b": [], "dt": [], "off": []}
    for ff, x, y, th in tracks:
        m = len(x)
        out["x"].append(np.asarray(x, float))
        out["y"].append(np.asarray(y, float))
        out["theta"].append(np.asarray(th, float))
        out["a"].append(np.full(m, A))
        out["b"].append(np.full(m, 4.0))
        out["dt"].append(np.full(m - 1, 1 / 150))
        out["off"].append(np.array([-ff]))
    ff = np.array([t[0] for t in tracks])
    nf = np.array([len(t[1]) for t in tracks])
    out.update(firstframe=ff, endframe=ff + nf - 1, nframes=nf, ntargets=n,
               timestamps=np.arange(T) / 150)
    return out


def _still(ff, m, x, y=100.0, theta=0.0):
    return (ff, np.full(m, x), np.full(m, y), np.full(m, theta))


GT = _trx([_still(0, T, 100.0), _still(0, T, 300.0)])


def _write(root, who, trx):
    S.write_pickle(root / who / "exp_1" / "trx.pkl", trx)


@pytest.fixture
def world(tmp_path):
    _write(tmp_path, "gt", GT)
    base = copy.deepcopy(GT)
    base["x"][1] = base["x"][1].copy()
    base["x"][1][:2] = np.nan                       # 2 misses: MOTA_ref = 1 - 2/20 = 0.9
    _write(tmp_path, "ref", base)
    return tmp_path


def test_identity_switch_hand_computed(world, run_stage):
    # fly 0 followed by track 0 on frames 0-4, then by a new track 2 on frames 5-9
    sub = _trx([_still(0, 5, 100.0), _still(0, T, 300.0), _still(5, 5, 100.0)])
    _write(world, "sub", sub)
    res = run_stage("body-tracking", world, ground_truth=True)
    counts = res.per_experiment["exp_1"]["submission"]
    assert (counts["idsw"], counts["fn"], counts["fp"], counts["gt"]) == (1, 0, 0, 20)
    assert counts["mota"] == pytest.approx(0.95)
    assert res.per_experiment["exp_1"]["reference"]["mota"] == pytest.approx(0.9)
    assert res.score == pytest.approx(0.1 / 0.05) and res.verdict == "pass"


def test_head_abdomen_flip_is_a_miss_and_a_false_positive(world, run_stage):
    sub = copy.deepcopy(GT)
    sub["theta"][1] = sub["theta"][1].copy()
    sub["theta"][1][3] = np.pi                      # err = 4 > 1
    _write(world, "sub", sub)
    counts = run_stage("body-tracking", world, ground_truth=True).per_experiment["exp_1"]
    assert (counts["submission"]["fn"], counts["submission"]["fp"]) == (1, 1)
    assert counts["ratio"] == pytest.approx(1.0) and counts["passed"] is True  # 0.9 vs 0.9


def test_gate(world, run_stage):
    # 5 px shift: err = (5 + 5) / 10 / 2 = 0.5 <= 1 matched; 25 px: err 2.5 -> FN + FP
    sub = _trx([_still(0, T, 105.0), _still(0, T, 325.0)])
    _write(world, "sub", sub)
    counts = run_stage("body-tracking", world, ground_truth=True).per_experiment["exp_1"]
    assert counts["submission"]["tp"] == 10 and counts["submission"]["fp"] == 10
    assert counts["submission"]["mota"] == pytest.approx(1 - 20 / 20)
    assert counts["ratio"] == pytest.approx(0.1 / 1.0) and counts["passed"] is False


def test_idsw_variants():
    # one GT, tracks 0 then (after a missed frame) 1
    gt = np.ones((3, 1), bool)
    pred = np.array([[True, False], [False, False], [False, True]])
    err = np.array([[[0.0, np.inf]], [[np.inf, np.inf]], [[np.inf, 0.0]]])
    last = clear_counts(gt, pred, err, 1.0, "last_matched")
    cons = clear_counts(gt, pred, err, 1.0, "consecutive")
    assert (last["idsw"], last["fn"]) == (1, 1) and last["mota"] == pytest.approx(1 - 2 / 3)
    assert cons["idsw"] == 0 and cons["mota"] == pytest.approx(1 - 1 / 3)


def test_consecutive_means_consecutive_scored_frames():
    # tracks 0 then 1 on frames 0 and 2; frame 1 has no GT (not scored, OQ-A1.4), so the two
    # matched frames are consecutive scored frames and both variants count the switch
    gt = np.array([[True], [False], [True]])
    pred = np.array([[True, False], [True, True], [False, True]])
    err = np.array([[[0.0, np.inf]], [[0.0, 0.0]], [[np.inf, 0.0]]])
    for rule in ("last_matched", "consecutive"):
        out = clear_counts(gt, pred, err, 1.0, rule)
        assert (out["tp"], out["fn"], out["fp"], out["idsw"], out["gt"], out["frames"]) == \
            (2, 0, 0, 1, 2, 2)
        assert out["mota"] == pytest.approx(1 - 1 / 2)


def test_ambiguous_frames_use_the_assignment():
    # two GT flies and two tracks all within the gate; the optimal pairing is the diagonal
    # (frame 0: error 0 against 0.8; frame 1: 0.3 against 0.65)
    gt = np.ones((2, 2), bool)
    pred = np.ones((2, 2), bool)
    err = np.array([[[0.0, 0.4], [0.4, 0.0]], [[0.1, 0.3], [0.35, 0.2]]])
    out = clear_counts(gt, pred, err, 1.0)
    assert (out["tp"], out["fn"], out["fp"], out["idsw"], out["frames"]) == (4, 0, 0, 0, 2)
    assert out["mota"] == 1.0


def test_continuing_match_is_preferred():
    # The documented difference from a plain per-frame Hungarian on the error (TrackEval's
    # convention). Frame 0: GT fly 0 and track 0 only (err 0), matched. Frame 1: tracks 0
    # (err 0.8) and 1 (err 0.2) both within the gate. Plain Hungarian takes track 1 (the
    # smaller error): TP 2, FP 1, IDSW 1, MOTA = (2 - 1 - 1) / 2 = 0. The canonical CLEAR
    # keeps the continuing match, track 0: TP 2, FP 1, IDSW 0, MOTA = (2 - 1 - 0) / 2 = 0.5.
    gt = np.ones((2, 1), bool)
    pred = np.array([[True, False], [True, True]])
    err = np.array([[[0.0, np.inf]], [[0.8, 0.2]]])
    out = clear_counts(gt, pred, err, 1.0)
    assert (out["tp"], out["fn"], out["fp"], out["idsw"]) == (2, 0, 1, 0)
    assert out["mota"] == pytest.approx(0.5)


def test_matching_maximises_similarity_not_the_number_of_matches():
    # The second documented difference from the plain Hungarian (which first maximises the
    # number of matches). GT A, B, C; tracks p, q, r; errors A-p 0, B-q 0, A-q 0.9, B-r 0.9,
    # C-p 0.9 (s = 1 - err / 2: 1, 1, 0.55, 0.55, 0.55). Three matches A-q, B-r, C-p give
    # sum s = 1.65 (Hungarian: MOTA 1); A-p, B-q give 2, so TP 2, FN 1 (C), FP 1 (r),
    # MOTA = (2 - 1) / 3.
    inf = np.inf
    err = np.array([[[0.0, 0.9, inf], [inf, 0.0, 0.9], [0.9, inf, inf]]])
    out = clear_counts(np.ones((1, 3), bool), np.ones((1, 3), bool), err, 1.0)
    assert (out["tp"], out["fn"], out["fp"], out["idsw"]) == (2, 1, 1, 0)
    assert out["mota"] == pytest.approx(1 / 3)


def test_gate_is_exact_at_the_boundary():
    # err == gate is matched; the next float above is not (TrackEval's s >= 0.5 - eps slack
    # would admit it if the pair were passed on)
    gt = np.ones((2, 1), bool)
    pred = np.ones((2, 1), bool)
    for gate in (1.0, 0.3):
        err = np.array([[[gate]], [[np.nextafter(gate, 2.0)]]])
        out = clear_counts(gt, pred, err, gate)
        assert (out["tp"], out["fn"], out["fp"]) == (1, 1, 1)


def test_frames_without_gt_are_ignored():
    gt = np.array([[True], [False]])
    pred = np.array([[True], [True]])
    err = np.array([[[0.0]], [[np.inf]]])
    out = clear_counts(gt, pred, err, 1.0)
    assert (out["tp"], out["fp"], out["frames"]) == (1, 0, 1)


@pytest.mark.parametrize("setting", [{"idsw": "nearest"}, {"tau_match": 0.0},
                                     {"tau_match": float("inf")}])
def test_bad_settings_are_config_errors(setting):
    with pytest.raises(ConfigError):
        BodyTrackingConfig(**setting)


def test_perfect_scores_the_cap(world, run_stage):
    _write(world, "sub", GT)
    res = run_stage("body-tracking", world, ground_truth=True)
    assert res.score == 10.0 and res.verdict == "pass"


def test_synthetic_flies_perfect_against_perfect_baseline(tmp_path, run_stage):
    t = S.file_trx(S.fly_experiment(4, n_flies=5, n_frames=300), mm=False)
    for who in ("gt", "ref", "sub"):
        _write(tmp_path, who, t)
    res = run_stage("body-tracking", tmp_path, ground_truth=True)
    assert res.score == 2.0 and res.verdict == "pass"       # 0/0 edge rule: r = 2


@pytest.mark.parametrize("breakage, reason", [
    ("theta", "missing key"), ("dt", "len(dt[0])"), ("list", "must be a list"),
])
def test_broken_format_fails_with_reason(world, run_stage, breakage, reason):
    sub = copy.deepcopy(GT)
    if breakage == "theta":
        del sub["theta"]
    elif breakage == "dt":
        sub["dt"][0] = np.zeros(T)
    else:
        sub["x"] = np.zeros(3)
    _write(world, "sub", sub)
    res = run_stage("body-tracking", world, ground_truth=True)
    assert res.verdict == "fail" and res.score == 0.0
    assert any(reason in p for p in res.problems), res.problems


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_trx_is_refused_without_running(world, run_stage):
    marker = world / "pwned"
    (world / "sub" / "exp_1").mkdir(parents=True)
    (world / "sub" / "exp_1" / "trx.pkl").write_bytes(pickle.dumps(_Exploit(marker)))
    res = run_stage("body-tracking", world, ground_truth=True)
    assert res.verdict == "fail" and "refused to load" in res.problems[0]
    assert not marker.exists()


def test_nan_gaps_count_as_missing(tmp_path, run_stage):
    t = S.file_trx(S.fly_experiment(5, n_flies=3, n_frames=200), mm=False)
    gappy = S.with_nan_gaps(t, seed=1)
    missing = sum(int(np.isnan(x).sum()) for x in gappy["x"])
    _write(tmp_path, "gt", t)
    _write(tmp_path, "ref", t)
    _write(tmp_path, "sub", gappy)
    counts = run_stage("body-tracking", tmp_path, ground_truth=True).per_experiment["exp_1"]
    assert missing > 0
    assert counts["submission"]["fn"] == missing and counts["submission"]["fp"] == 0
    assert counts["submission"]["mota"] == pytest.approx(1 - missing / 600)


def test_tips_and_tip_error_by_hand():
    """Head / abdomen tips are centre +- 2a (cos theta, sin theta): a = 10, theta = 0 at
    (100, 100) -> (120, 100) and (80, 100). A prediction 3 right and 4 up has both tips 5
    away: error (5 + 5) / a / 2 = 0.5."""
    from trackverify.stages.body_tracking import tip_error, tips

    head, abd, a = tips(_trx([_still(0, 1, 100.0)]), 1)
    np.testing.assert_array_equal(head, [[[120.0, 100.0]]])
    np.testing.assert_array_equal(abd, [[[80.0, 100.0]]])
    assert a.tolist() == [[10.0]]
    moved = tips(_trx([_still(0, 1, 103.0, 104.0)]), 1)
    assert tip_error((head, abd, a), moved).tolist() == [[[0.5]]]


def test_mota_counts_every_reference_frame_and_target():
    """Reference: fly 0 in frames 0..2, fly 1 in frame 0 only (absent later: NaN pose).
    Prediction: the same poses but only in frame 0. Frames 1 and 2 still count (the
    reference's end decides): TP 2, FN 2, FP 0 -> MOTA 1/2. Identical input -> MOTA 1."""
    from trackverify.stages.body_tracking import mota

    gt = _trx([_still(0, 3, 100.0), _still(0, 1, 300.0)])
    pred = _trx([_still(0, 1, 100.0), _still(0, 1, 300.0)])
    out = mota(gt, pred, BodyTrackingConfig())
    assert (out["tp"], out["fn"], out["fp"], out["gt"], out["frames"]) == (2, 2, 0, 4, 3)
    assert out["mota"] == 0.5
    assert mota(gt, gt, BodyTrackingConfig())["mota"] == 1.0
    empty = _trx([])
    assert mota(empty, empty, BodyTrackingConfig())["mota"] is None
    # the configured IDSW rule is used: track 0 in frame 0, track 1 in frame 2 (frame 1
    # missed) is a switch for last_matched, not for consecutive
    tracks = _trx([_still(0, 1, 100.0), _still(2, 1, 100.0)])
    one = _trx([_still(0, 3, 100.0)])
    assert mota(one, tracks, BodyTrackingConfig())["idsw"] == 1
    assert mota(one, tracks, BodyTrackingConfig(idsw="consecutive"))["idsw"] == 0


def test_clear_counts_need_presence_on_both_sides_and_scale_with_the_gate():
    """A finite error alone does not make a pair: the track must be present. With gate 2 an
    error of 1.5 matches (similarity 1 - 1.5 / 4 = 0.625)."""
    gt = np.ones((1, 1), bool)
    # track 0 absent (error 0 all the same), track 1 present but beyond the gate
    out = clear_counts(gt, np.array([[False, True]]), np.array([[[0.0, np.inf]]]), 1.0)
    assert (out["tp"], out["fn"], out["fp"]) == (0, 1, 1)
    out = clear_counts(gt, np.ones((1, 1), bool), np.full((1, 1, 1), 1.5), 2.0)
    assert (out["tp"], out["fn"], out["fp"]) == (1, 0, 0)
