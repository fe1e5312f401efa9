"""A3 keypoints: mean over keypoints of the mean percentile error (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest

K = 21


def _gt(n=4):
    gt = np.zeros((n, K, 3))
    gt[..., 0], gt[..., 1], gt[..., 2] = 50.0, 60.0, 2
    return gt


def _save(root, who, arrays):
    (root / who / "exp_1").mkdir(parents=True, exist_ok=True)
    name = "keypoints_gt.npz" if who == "gt" else "keypoint_preds.npz"
    np.savez(root / who / "exp_1" / name, **arrays)


def _pred_with_errors(gt, errors):
    """Predictions displaced along x by ``errors[i]`` for annotation i, every keypoint."""
    pred = gt[..., :2].copy()
    pred[..., 0] += np.asarray(errors, dtype=float)[:, None]
    return pred


@pytest.fixture
def world(tmp_path):
    gt = _gt()
    _save(tmp_path, "gt", {"keypoints": gt})
    _save(tmp_path, "ref", {"pred": _pred_with_errors(gt, [1, 1, 1, 1])})   # eps_ref = 1
    return tmp_path, gt


def test_hand_computed_percentiles(world, run_stage):
    root, gt = world
    # errors 0, 0.5, 1, 1.5 per keypoint: p50 .75, p75 1.125, p90 1.35, p95 1.425,
    # p97.5 1.4625 -> mean 1.2225 px
    _save(root, "sub", {"pred": _pred_with_errors(gt, [0, 0.5, 1, 1.5])})
    res = run_stage("keypoints", root, ground_truth=True)
    c = res.criteria["mean_percentile_error"]
    assert c["submission_px"] == pytest.approx(1.2225)
    assert c["reference_px"] == pytest.approx(1.0) and c["implied_alpha"] == pytest.approx(1.7)
    assert res.score == pytest.approx(1.7 / 1.2225) and res.verdict == "pass"
    extra = res.criteria["extra_targets (reported, not pass criteria)"]
    assert extra["p50"]["pooled_px"] == pytest.approx(0.75)
    assert extra["p50"]["met_per_keypoint"] is False          # 0.75 > 0.5
    _save(root, "sub", {"pred": _pred_with_errors(gt, [0, 1, 2, 3])})   # mean 2.445
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.score == pytest.approx(1.7 / 2.445) and res.verdict == "fail"


def test_invisible_keypoints_are_excluded(world, run_stage):
    root, gt = world
    gt = gt.copy()
    gt[0, 3, 2] = 0                                           # annotation 0, keypoint 3 hidden
    _save(root, "gt", {"keypoints": gt})
    pred = _pred_with_errors(gt, [0.5, 0.5, 0.5, 0.5])
    pred[0, 3] += 100.0                                       # would dominate if counted
    _save(root, "sub", {"pred": pred})
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.criteria["mean_percentile_error"]["submission_px"] == pytest.approx(0.5)


def test_perfect_scores_the_cap(world, run_stage):
    root, gt = world
    _save(root, "sub", {"pred": gt[..., :2]})
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.score == 10.0 and res.verdict == "pass"


@pytest.mark.parametrize("arrays, reason", [
    ({"pred": np.full((4, K, 2), np.nan)}, "non-finite"),
    ({"pred": np.zeros((4, K, 3))}, "expected (N, 21, 2)"),
    ({"pred": np.zeros((3, K, 2))}, "3 predictions for 4 annotations"),
    ({"other": np.zeros((4, K, 2))}, "missing array 'pred'"),
])
def test_broken_predictions_fail(world, run_stage, arrays, reason):
    root, _ = world
    _save(root, "sub", arrays)
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.verdict == "fail" and res.score == 0.0
    assert reason in res.problems[0], res.problems


def test_object_arrays_are_refused(world, run_stage):
    root, _ = world
    _save(root, "sub", {"pred": np.array([{"a": 1}], dtype=object)})
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.verdict == "fail" and "not a readable .npz" in res.problems[0]


def test_coco_json_ground_truth(world, run_stage):
    import json

    root, gt = world
    (root / "gt" / "exp_1" / "keypoints_gt.npz").unlink()
    coco = {"annotations": [{"keypoints": g.reshape(-1).tolist()} for g in gt]}
    (root / "gt" / "exp_1" / "labels.json").write_text(json.dumps(coco))
    _save(root, "sub", {"pred": _pred_with_errors(gt, [0, 0.5, 1, 1.5])})
    res = run_stage("keypoints", root, ground_truth=True)
    assert res.criteria["mean_percentile_error"]["submission_px"] == pytest.approx(1.2225)


def test_errors_count_labelled_but_occluded_keypoints():
    """COCO visibility: v = 0 unlabelled (NaN), v = 1 labelled but occluded and v = 2
    visible both count. Errors 3-4-5 triangles."""
    from trackverify.stages.keypoints import keypoint_errors

    gt = np.array([[[0.0, 0.0, 0], [0.0, 0.0, 1], [0.0, 0.0, 2]]])
    pred = np.array([[[3.0, 4.0], [3.0, 4.0], [6.0, 8.0]]])
    np.testing.assert_array_equal(keypoint_errors(pred, gt), [[np.nan, 5.0, 10.0]])


def test_mean_percentile_error_skips_a_keypoint_never_visible():
    """Errors per keypoint [1, 3], [2, 2], [NaN, NaN]; percentiles 50 and 100: [2, 3],
    [2, 2], NaN -> keypoint means 2.5 and 2 (the third excluded) -> 2.25."""
    from trackverify.stages.keypoints import mean_percentile_error

    err = np.array([[1.0, 2.0, np.nan], [3.0, 2.0, np.nan]])
    eps, table = mean_percentile_error(err, [50, 100])
    assert eps == 2.25
    np.testing.assert_array_equal(table, [[2, 2, np.nan], [3, 2, np.nan]])
