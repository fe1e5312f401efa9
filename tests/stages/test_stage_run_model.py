"""``--run-model``: the submitted model runs in a child process with a timeout."""

from __future__ import annotations

import json
import pickle
import textwrap

import numpy as np
import pytest

from trackverify.cli.app import main
from trackverify.stages import synthetic as S

K = 21


def _run(argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


def _keypoint_world(root, model_source, model_obj):
    gt = np.zeros((3, K, 3))
    gt[..., 0], gt[..., 1], gt[..., 2] = 40.0, 50.0, 2
    (root / "gt" / "exp_1").mkdir(parents=True)
    np.savez(root / "gt" / "exp_1" / "keypoints_gt.npz", keypoints=gt)
    np.save(root / "gt" / "exp_1" / "images.npy", np.zeros((3, 8, 8, 1), dtype=np.uint8))
    (root / "ref" / "exp_1").mkdir(parents=True)
    np.savez(root / "ref" / "exp_1" / "keypoint_preds.npz", pred=gt[..., :2] + [1.0, 0.0])
    (root / "sub").mkdir()
    (root / "sub" / "model.py").write_text(textwrap.dedent(model_source))
    (root / "sub" / "model.pkl").write_bytes(pickle.dumps(model_obj))
    return gt


def _argv(root, stage, *extra):
    return ["stage", stage, "--submission", str(root / "sub"), "--reference", str(root / "ref"),
            "--ground-truth", str(root / "gt"), "--out", str(root / "out"), "--run-model", *extra]


TRACKER = """
    import numpy as np
    class KeypointTracker:
        def __init__(self, num_keypoints=21):
            self.model = None
        def track(self, X):
            assert X.ndim == 4 and X.dtype == np.uint8
            return self.model[:len(X)]
"""


def test_keypoint_model_is_run(tmp_path):
    gt = np.zeros((3, K, 2)) + [40.0, 50.0]
    _keypoint_world(tmp_path, TRACKER, gt + [0.5, 0.0])      # every error 0.5 px
    assert _run(_argv(tmp_path, "keypoints")) == 0
    doc = json.loads((tmp_path / "out" / "stage.json").read_text())
    assert doc["criteria"]["mean_percentile_error"]["submission_px"] == pytest.approx(0.5)
    assert doc["score"] == pytest.approx(1.7 / 0.5)


def test_crashing_and_slow_models_fail(tmp_path):
    _keypoint_world(tmp_path, "raise RuntimeError('broken interface')\n", None)
    assert _run(_argv(tmp_path, "keypoints")) == 1
    doc = json.loads((tmp_path / "out" / "stage.json").read_text())
    assert doc["verdict"] == "fail" and doc["score"] == 0.0
    assert "broken interface" in doc["problems"][0]
    (tmp_path / "sub" / "model.py").write_text("import time\ntime.sleep(60)\n")
    assert _run(_argv(tmp_path, "keypoints", "--timeout", "2")) == 1
    doc = json.loads((tmp_path / "out" / "stage.json").read_text())
    assert "did not finish within 2 s" in doc["problems"][0]


def test_walking_model_is_run(tmp_path):
    speed = [np.array([0.0] * 10 + [5.0] * 10 + [0.0] * 5)]
    S.write_pickle(tmp_path / "gt" / "exp_1" / "perframe" / "velmag_ctr.pkl", speed)
    S.write_pickle(tmp_path / "gt" / "exp_1" / "perframe" / "dtheta.pkl", [np.zeros(30)])
    S.write_pickle(tmp_path / "gt" / "labels.pkl", {
        "sampleDirs": ["exp_1"], "flies": [[1]], "t0s": [[np.array([0, 10, 20])]],
        "t1s": [[np.array([10, 20, 25])]], "labels": [[np.array([0, 1, 0])]]})
    S.write_pickle(tmp_path / "ref" / "exp_1" / "walk_preds.pkl", [np.zeros(25)])  # BA 0.5
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "model.py").write_text(textwrap.dedent("""
        class WalkingClassifier:
            feature_names = ["velmag_ctr", "dtheta"]
            def predict(self, X):
                assert X.shape == (25, 2)        # truncated to the shortest feature
                return (X[:, 0] > self.model["threshold"]).astype(int)
    """))
    (tmp_path / "sub" / "model.pkl").write_bytes(pickle.dumps({"threshold": 1.0}))
    assert _run(_argv(tmp_path, "walking")) == 0
    doc = json.loads((tmp_path / "out" / "stage.json").read_text())
    assert doc["criteria"]["balanced_accuracy"]["submission"] == 1.0
