"""``trackverify stage``: stage.json, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

import pytest

from trackverify.cli.app import main
from trackverify.stages import synthetic as S


def _exit_code(argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


def _stats_world(root, p_sub):
    S.write_stats_csv(root / "ref" / "line_1.csv", S.stats_rows(0.2, 0.03))
    S.write_stats_csv(root / "sub" / "line_1.csv", S.stats_rows(p_sub, 0.03))


def test_pass_writes_stage_json_and_exits_0(tmp_path, capsys):
    _stats_world(tmp_path, 0.2)
    out = tmp_path / "out"
    code = _exit_code(["stage", "stats", "--submission", str(tmp_path / "sub"),
                       "--reference", str(tmp_path / "ref"), "--out", str(out)])
    assert code == 0
    doc = json.loads((out / "stage.json").read_text())
    assert {"stage", "score", "verdict", "criteria", "per_experiment", "config"} <= set(doc)
    assert doc["stage"] == "stats" and doc["score"] == 1.0 and doc["verdict"] == "pass"
    assert doc["config"]["delta_p"] == 0.1
    assert "stage stats" in capsys.readouterr().out


def test_fail_exits_1_and_settings_are_recorded(tmp_path):
    _stats_world(tmp_path, 0.04)                  # sig_slow_0.05 flips, ratio 5
    out = tmp_path / "out"
    argv = ["stage", "stats", "--submission", str(tmp_path / "sub"), "--reference",
            str(tmp_path / "ref"), "--out", str(out)]
    assert _exit_code(argv) == 1
    assert _exit_code(argv + ["--set", "delta_p=5"]) == 0
    assert json.loads((out / "stage.json").read_text())["config"]["delta_p"] == 5.0


def test_unreadable_input_exits_2(tmp_path, capsys):
    _stats_world(tmp_path, 0.2)
    (tmp_path / "ref" / "line_1.csv").write_text("metric,value\n")      # broken reference
    code = _exit_code(["stage", "stats", "--submission", str(tmp_path / "sub"),
                       "--reference", str(tmp_path / "ref"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "missing metric" in capsys.readouterr().err
    assert _exit_code(["stage", "stats", "--submission", str(tmp_path / "nope"),
                       "--reference", str(tmp_path / "ref")]) == 2
    assert _exit_code(["stage", "stats", "--submission", str(tmp_path / "sub"),
                       "--reference", str(tmp_path / "ref"), "--set", "bogus=1"]) == 2


def _perfect_world(root, stage):
    """A perfect submission for ``stage`` built from the synthetic generator."""
    import numpy as np

    t = S.fly_experiment(7, n_flies=3, n_frames=120)
    exp = "exp_1"
    for who in ("gt", "ref", "sub"):
        d = root / who / exp
        d.mkdir(parents=True, exist_ok=True)
        S.write_pickle(d / "trx.pkl", S.file_trx(t, mm=False))
        S.write_pickle(d / "registered_trx.pkl", S.file_trx(t))
        for name, arrays in S.perframe_features(t).items():
            S.write_pickle(d / "perframe" / f"{name}.pkl", arrays)
        S.write_pickle(d / "walk_preds.pkl", S.walking_predictions(t))
        np.save(d / "swing_stance.npy", S.swing_stance(t, 0))
        kp = S.keypoint_annotations(0, n=10)
        np.savez(d / "keypoints_gt.npz", keypoints=kp)
        np.savez(d / "keypoint_preds.npz", pred=kp[..., :2] + (0.5 if who == "ref" else 0.0))
        S.write_stats_csv(root / who / "line_1.csv", S.stats_rows(0.02, 0.3))
    S.write_pickle(root / "gt" / "labels.pkl", S.walking_labels([t], [exp], seed=0))


@pytest.mark.parametrize("stage", ["body-tracking", "registration", "keypoints", "features",
                                   "walking", "gait", "stats"])
def test_every_stage_writes_json_and_passes_a_perfect_submission(tmp_path, stage):
    _perfect_world(tmp_path, stage)
    out = tmp_path / "out"
    code = _exit_code(["stage", stage, "--submission", str(tmp_path / "sub"), "--reference",
                       str(tmp_path / "ref"), "--ground-truth", str(tmp_path / "gt"),
                       "--out", str(out)])
    doc = json.loads((out / "stage.json").read_text())
    assert code == 0 and doc["verdict"] == "pass" and doc["stage"] == stage
    assert doc["problems"] == [] and doc["score"] >= 1.0
