"""Stage settings and indices read from files that would empty a check or read elsewhere.

Each case was accepted before: ``alphas=,`` left no cell to check (every line "correct"),
``predictions_file=../..`` read a file outside the submission, fly number 0 picked the last
fly, a visible keypoint without coordinates was dropped as if hidden.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from trackverify.errors import ConfigError, InputError
from trackverify.stages import synthetic as S
from trackverify.stages.keypoints import KeypointsConfig
from trackverify.stages.stats import StatsConfig

LABELS = {"sampleDirs": ["exp_1"], "flies": [[1]], "t0s": [[np.array([0, 20])]],
          "t1s": [[np.array([10, 30])]], "labels": [[np.array([1, 0])]]}


def _stats(root, p_sub):
    S.write_stats_csv(root / "ref" / "line_1.csv", S.stats_rows(0.2, 0.03))
    S.write_stats_csv(root / "sub" / "line_1.csv", S.stats_rows(*p_sub))


@pytest.mark.parametrize("alphas", [",", "", " , ", "0.05,x", "0.05,1.5", "nan"])
def test_stats_alphas_must_list_numbers(tmp_path, run_stage, alphas):
    _stats(tmp_path, (0.9, 0.9))  # every cell wrong at the default alphas
    assert run_stage("stats", tmp_path).score == 0.0
    with pytest.raises(ConfigError, match="setting 'alphas'"):
        run_stage("stats", tmp_path, alphas=alphas)


def test_list_setting_keeps_the_items_as_written():
    from trackverify.stages.common import list_setting

    assert list_setting(StatsConfig(alphas="0.05, 0.01,"), "alphas", 0, 1) == ["0.05", "0.01"]
    assert list_setting(KeypointsConfig(), "percentiles", 0, 100) == [
        "50", "75", "90", "95", "97.5"]


@pytest.mark.parametrize("percentiles", [",", "", "50,101", "-1", "inf"])
def test_keypoint_percentiles_must_list_numbers_within_0_100(tmp_path, run_stage, percentiles):
    gt = np.zeros((2, 21, 3))
    gt[..., 2] = 2
    for who, name, arrays in (("gt", "keypoints_gt.npz", {"keypoints": gt}),
                              ("ref", "keypoint_preds.npz", {"pred": gt[..., :2]}),
                              ("sub", "keypoint_preds.npz", {"pred": gt[..., :2]})):
        (tmp_path / who / "exp_1").mkdir(parents=True)
        np.savez(tmp_path / who / "exp_1" / name, **arrays)
    with pytest.raises(ConfigError, match="setting 'percentiles'"):
        run_stage("keypoints", tmp_path, ground_truth=True, percentiles=percentiles)


def test_wrapped_features_must_name_standard_features():
    from trackverify.stages.features import FeaturesConfig, wrapped_features

    assert wrapped_features(FeaturesConfig()) == {"yaw"}
    assert wrapped_features(FeaturesConfig(wrapped_features="")) == set()  # OQ-A4.3's other way
    with pytest.raises(ConfigError, match="setting 'wrapped_features': 'yew' is not a standard"):
        wrapped_features(FeaturesConfig(wrapped_features="yew"))


def _walking(root):
    S.write_pickle(root / "gt" / "labels.pkl", LABELS)
    for who in ("ref", "sub"):
        S.write_pickle(root / who / "exp_1" / "walk_preds.pkl", [np.ones(40)])
    return root


@pytest.mark.parametrize("setting, value", [
    ("predictions_file", "../../ref/exp_1/walk_preds.pkl"),
    ("predictions_file", "/etc/hostname"),
    ("labels_file", "../gt/labels.pkl/../../sub/exp_1/walk_preds.pkl"),
])
def test_file_settings_stay_inside_their_folder(tmp_path, run_stage, setting, value):
    _walking(tmp_path)
    with pytest.raises(ConfigError, match=f"setting '{setting}' names .* which leads outside "
                                          "the folder"):
        run_stage("walking", tmp_path, ground_truth=True, **{setting: value})


def test_a_file_setting_through_a_link_is_refused(tmp_path):
    from trackverify.stages.common import confined

    (tmp_path / "sub" / "exp_1").mkdir(parents=True)
    (tmp_path / "elsewhere.pkl").write_bytes(b"x")
    os.symlink(tmp_path / "elsewhere.pkl", tmp_path / "sub" / "exp_1" / "preds.pkl")
    with pytest.raises(ConfigError, match="leads outside the folder"):
        confined(tmp_path / "sub", "exp_1", "preds.pkl", what="setting 'predictions_file'")
    assert confined(tmp_path / "sub", "exp_1", "walk.pkl", what="x") == (
        tmp_path / "sub" / "exp_1" / "walk.pkl")


@pytest.mark.parametrize("field, value, message", [
    ("flies", [[0]], r"flies\[0\]\[0\] = 0: fly numbers are whole numbers from 1"),
    ("flies", [[-1]], r"flies\[0\]\[0\] = -1: fly numbers"),
    ("flies", [[1.5]], r"flies\[0\]\[0\] = 1.5: fly numbers"),
    ("t0s", [[np.array([0.0, 20.5])]], r"t0s\[0\]\[0\]\[1\] = 20.5 is not a whole number"),
    ("sampleDirs", ["../sub/exp_1"], r"sampleDirs\[0\] = '../sub/exp_1' is not the name of"),
    ("sampleDirs", [".."], r"sampleDirs\[0\] = '..' is not the name of"),
])
def test_walking_label_indices_are_checked(tmp_path, run_stage, field, value, message):
    _walking(tmp_path)
    S.write_pickle(tmp_path / "gt" / "labels.pkl", dict(LABELS, **{field: value}))
    with pytest.raises(InputError, match=r"labels.pkl: " + message):
        run_stage("walking", tmp_path, ground_truth=True)


def test_walking_whole_float_fly_numbers_are_read(tmp_path, run_stage):
    # MATLAB-made labels hold doubles: fly 1.0 is fly 1 (all frames predicted walking: BA (1 + 0) / 2).
    _walking(tmp_path)
    S.write_pickle(tmp_path / "gt" / "labels.pkl", dict(LABELS, flies=[[np.float64(1.0)]]))
    res = run_stage("walking", tmp_path, ground_truth=True)
    assert res.criteria["balanced_accuracy"]["submission"] == pytest.approx(0.5)


@pytest.mark.parametrize("edit, message", [
    (lambda gt: gt.__setitem__((1, 4, 0), np.nan), "row 2: keypoint 4 visible (v = 2.0) "
                                                  "without finite x, y (nan, 60.0)"),
    (lambda gt: gt.__setitem__((0, 0, 1), np.inf), "row 1: keypoint 0 visible"),
    (lambda gt: gt.__setitem__((2, 7, 2), np.nan), "row 3: keypoint 7 visibility nan"),
    (lambda gt: gt.__setitem__((0, 1, 2), 3), "row 1: keypoint 1 visibility 3.0 is not 0, 1"),
])
def test_keypoint_ground_truth_visible_without_coordinates(tmp_path, run_stage, edit, message):
    gt = np.zeros((3, 21, 3))
    gt[..., 0], gt[..., 1], gt[..., 2] = 50.0, 60.0, 2
    for who, name, arrays in (("ref", "keypoint_preds.npz", {"pred": gt[..., :2]}),
                              ("sub", "keypoint_preds.npz", {"pred": gt[..., :2]})):
        (tmp_path / who / "exp_1").mkdir(parents=True)
        np.savez(tmp_path / who / "exp_1" / name, **arrays)
    edit(gt)
    (tmp_path / "gt" / "exp_1").mkdir(parents=True)
    np.savez(tmp_path / "gt" / "exp_1" / "keypoints_gt.npz", keypoints=gt)
    with pytest.raises(InputError, match=r"keypoints_gt.npz, " + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        run_stage("keypoints", tmp_path, ground_truth=True)


@pytest.mark.parametrize("setting", ["delta_p", "partial_threshold"])
def test_a_number_setting_may_not_be_nan(tmp_path, run_stage, setting):
    # delta_p = nan made the p-value tolerance test false for every cell, silently
    _stats(tmp_path, (0.2, 0.03))
    with pytest.raises(ConfigError, match=f"--set {setting}: cannot use nan "
                                          r"\(not a number\)"):
        run_stage("stats", tmp_path, **{setting: "nan"})
