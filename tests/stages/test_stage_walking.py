"""A5 walking classifier: pooled balanced accuracy against the baseline (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.stages import synthetic as S

# One experiment, fly 1: frames 0-9 walking (label 1), frames 20-29 not walking (label 0).
LABELS = {"sampleDirs": ["exp_1"], "flies": [[1]], "t0s": [[np.array([0, 20])]],
          "t1s": [[np.array([10, 30])]], "labels": [[np.array([1, 0])]]}


def _preds(wrong_walk: int, length: int = 40) -> list[np.ndarray]:
    p = np.zeros(length)
    p[wrong_walk:10] = 1.0       # the first `wrong_walk` walking frames are missed
    return [p]


@pytest.fixture
def world(tmp_path):
    S.write_pickle(tmp_path / "gt" / "labels.pkl", LABELS)
    S.write_pickle(tmp_path / "ref" / "exp_1" / "walk_preds.pkl", _preds(2))  # BA = 0.9
    return tmp_path


def _submit(root, preds):
    S.write_pickle(root / "sub" / "exp_1" / "walk_preds.pkl", preds)


def test_hand_computed_fail_and_pass(world, run_stage):
    _submit(world, _preds(5))                     # BA = (5/10 + 10/10) / 2 = 0.75
    res = run_stage("walking", world, ground_truth=True)
    c = res.criteria["balanced_accuracy"]
    assert c["submission"] == pytest.approx(0.75) and c["reference"] == pytest.approx(0.9)
    # r = (1 - 0.95 * 0.9) / (1 - 0.75) = 0.145 / 0.25
    assert res.score == pytest.approx(0.58) and res.verdict == "fail"
    _submit(world, _preds(1))                     # BA = 0.95 -> r = 0.145 / 0.05 = 2.9
    res = run_stage("walking", world, ground_truth=True)
    assert res.score == pytest.approx(2.9) and res.verdict == "pass"


def test_perfect_scores_the_cap(world, run_stage):
    _submit(world, _preds(0))
    res = run_stage("walking", world, ground_truth=True)
    assert res.score == 10.0 and res.verdict == "pass"


def test_short_and_nan_predictions(world, run_stage):
    p = _preds(0, length=25)                      # frames 25-29 have no prediction: wrong
    _submit(world, p)
    res = run_stage("walking", world, ground_truth=True)
    assert res.criteria["balanced_accuracy"]["submission"] == pytest.approx((1 + 0.5) / 2)
    assert res.per_experiment["exp_1"]["frames_without_prediction"] == 5
    p = _preds(0)
    p[0][:4] = np.nan                             # NaN counts as "not walking"
    _submit(world, p)
    res = run_stage("walking", world, ground_truth=True)
    assert res.criteria["balanced_accuracy"]["submission"] == pytest.approx((0.6 + 1) / 2)


def test_broken_predictions_fail_with_reason(world, run_stage):
    _submit(world, {"not": "a list"})
    res = run_stage("walking", world, ground_truth=True)
    assert res.verdict == "fail" and res.score == 0.0
    assert "expected a list" in res.problems[0]


def test_synthetic_labels_round_trip(tmp_path, run_stage):
    t = S.fly_experiment(3, n_flies=3, n_frames=300)
    S.write_pickle(tmp_path / "gt" / "labels.pkl", S.walking_labels([t], ["exp_1"], seed=0))
    for who in ("ref", "sub"):
        S.write_pickle(tmp_path / who / "exp_1" / "walk_preds.pkl", S.walking_predictions(t))
    res = run_stage("walking", tmp_path, ground_truth=True)
    assert res.criteria["balanced_accuracy"]["submission"] == 1.0 and res.verdict == "pass"


def test_expand_bouts_skips_an_empty_bout():
    from trackverify.stages.walking import expand_bouts

    frames, labels = expand_bouts(np.array([2, 5]), np.array([2, 7]), np.array([1, 0]))
    assert frames.tolist() == [5, 6] and labels.tolist() == [0, 0]


def test_collect_per_experiment_counts_by_hand(tmp_path):
    """One experiment, two labelled flies, the fly with index 1 listed first. Fly 1:
    labels 1, 1 on frames 0 and 5, predictions [1] only, so frame 5 has no prediction and
    counts as wrong. Fly 0: labels 1, 0, 1 on frames 0..2, predictions 1, 1, 0 (the last
    frame inside is read, not clamped). Pooled y = 1 1 1 0 1, yhat = 1 0 1 1 0: recall of
    walking 2/4, of not walking
    0/1 -> balanced accuracy 1/4."""
    from trackverify.errors import InputError
    from trackverify.stages.walking import WalkingConfig, collect

    S.write_pickle(tmp_path / "exp_1" / "walk_preds.pkl", [np.array([1.0, 1.0, 0.0]),
                                                           np.array([1.0])])
    labelled = [("exp_1", 1, np.array([0, 5]), np.array([1, 1])),
                ("exp_1", 0, np.array([0, 1, 2]), np.array([1, 0, 1]))]
    y, yhat, per_exp = collect(tmp_path, labelled, WalkingConfig())
    assert y.tolist() == [1, 1, 1, 0, 1] and yhat.tolist() == [1, 0, 1, 1, 0]
    assert per_exp == {"exp_1": {"frames": 5, "frames_without_prediction": 1,
                                 "balanced_accuracy": pytest.approx(0.25)}}
    S.write_pickle(tmp_path / "exp_1" / "walk_preds.pkl", [np.array([1.0, 1.0, 0.0])])
    with pytest.raises(InputError, match="at least 2 per-fly arrays, found 1"):
        collect(tmp_path, labelled, WalkingConfig())


def test_empty_prediction_counts_every_labelled_frame_as_wrong(world, run_stage):
    """Fly 1's prediction array is empty: its 20 labelled frames (0-9 walking, 20-29 not)
    have no prediction, each counts as wrong (1 - y): recall 0/10 and 0/10 -> 0."""
    _submit(world, [np.zeros(0)])
    res = run_stage("walking", world, ground_truth=True)
    assert res.per_experiment["exp_1"]["frames_without_prediction"] == 20
    assert res.criteria["balanced_accuracy"]["submission"] == 0.0
