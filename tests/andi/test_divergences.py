"""Each verified defect of andi-datasets 2.1.13: the reference behaviour (run in
.venv-andi), our default, and our fix, with hand-computed expected values.

Always fixed: crashes, mutation of the caller's data, lost data. Fixed only under
``corrected=True``: everything that changes a valid score.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import trackverify.andi as A
from trackverify.andi import synthetic as S

from andi_ref import arr, run_reference

pytestmark = pytest.mark.parity

LOG_MAX_D = (math.log(2.0) - math.log(1 + 1 + 1e5)) ** 2  # msle(1, 1 + 1e5)


def _line_file(path: Path, lines: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(ln + "\n" for ln in lines))
    return str(path)


def _offset_case(root: Path) -> Path:
    """Two FOVs of two single-segment trajectories; FOV 0 lacks its last prediction."""
    alphas = {0: [0.5, 1.0], 1: [1.5, 0.2]}
    for fov, (a0, a1) in alphas.items():
        _line_file(root / "ref" / "track_2" / "exp_0" / f"traj_labs_fov_{fov}.txt",
                   [f"0,1.0,{a0},2,200", f"1,1.0,{a1},2,200"])
        preds = [f"0,1.0,{a0},2,200"] + ([f"1,1.0,{a1},2,200"] if fov == 1 else [])
        _line_file(root / "res" / "track_2" / "exp_0" / f"fov_{fov}.txt", preds)
    return root


def _ensemble_dirs(root: Path) -> Path:
    for side, shift in (("ref", 0.0), ("res", 0.1)):
        for exp in (3, 7):
            folder = root / side / "track_2" / f"exp_{exp}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "ensemble_labels.txt").write_text(
                f"model: single_state; num_state: 1 \n{0.8 + shift};0.05;1.0;0.1;1\n")
    return root


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("andi_div")
    df_true = {"traj_idx": [0.0, 1.0, 2.0], "Ds": [[1.0], [], [1.0]], "alphas": [[1.0], [], [1.0]],
               "states": [[2.0], [], [2.0]], "changepoints": [[200.0], [5.0, 10.0], [200.0]]}
    df_pred = {"traj_idx": [0.0, 1.0, 2.0], "Ds": [[1.0], [1.0, 1.0], [1.0]],
               "alphas": [[0.5], [1.0, 1.0], [0.9]], "states": [[2.0], [2.0, 2.0], [2.0]],
               "changepoints": [[200.0], [5.0, 10.0], [200.0]]}
    neg_true = {"traj_idx": [0.0], "Ds": [[1.0]], "alphas": [[1.0]], "states": [[2.0]],
                "changepoints": [[200.0]]}
    neg_pred = {"traj_idx": [0.0], "Ds": [[-1.0]], "alphas": [[1.8]], "states": [[2.0]],
                "changepoints": [[200.0]]}
    # the whole scoring program, track 1 present in ref but not in res
    ch = S.make_challenge(tmp / "ch", 10, experiments=1, fovs=1, tracks=(1, 2), seed=3)
    import shutil
    shutil.rmtree(ch / "res" / "track_1")
    f8 = _line_file(tmp / "f8" / "fov_0.txt", ["0,1.0,1.0,2,50,2.0,0.5,1"])
    cases = {
        "empty_cp": {"fn": "single_changepoint_error", "args": [arr([], "int64"), arr([], "int64")]},
        "ens_inplace": {"fn": "error_Ensemble_dataset", "return_args": True,
                        "args": [arr([[0.5, 1.2], [0.01, 0.1], [0.1, 1.0], [0.01, 0.2], [30, 70]]),
                                 arr([[0.6, 1.1], [0.02, 0.1], [0.2, 0.8], [0.02, 0.1], [40, 60]]),
                                 1000]},
        "ens_int": {"fn": "error_Ensemble_dataset",
                    "args": [arr([[1, 1], [0, 0], [1, 2], [0, 0], [3, 7]], "int64"),
                             arr([[1, 1], [0, 0], [1, 2], [0, 0], [4, 6]], "int64"), 1000]},
        "bare_except": {"fn": "error_SingleTraj_dataset", "args": [{"__df__": df_pred},
                                                                   {"__df__": df_true}],
                        "kwargs": {"prints": False}},
        "codalab": {"fn": "codalab_scoring", "args": [str(ch), str(tmp / "out_ref")]},
        "offsets": {"fn": "run_single_task",
                    "args": [[0], 2, str(_offset_case(tmp / "off") / "res"),
                             str(tmp / "off" / "ref")]},
        "alpha_beta": {"fn": "changepoint_alpha_beta", "args": [arr([10, 50]), arr([13, 90]), 5]},
        "no_cp": {"fn": "check_no_changepoints",
                  "args": [[10, 20, 100], [0.1, 0.2, 0.3], [1, 2, 3], [0, 1, 2], [100], [0.9], [9],
                           [3]]},
        "nan_rmse": {"fn": "single_changepoint_error", "args": [arr([10]), arr([50])]},
        "sigma": {"fn": "error_Ensemble_dataset",
                  "args": [arr([1.0, 0.05, 1.0, 0.1, 1.0]), arr([1.0, 0.1, 1.0, 0.1, 1.0]), 10000]},
        "support_1k": {"fn": "error_Ensemble_dataset",
                       "args": [arr([1.0, 0.01, 0.01, 0.001, 1.0]),
                                arr([1.0, 0.01, 0.02, 0.001, 1.0]), 1000]},
        "support_100k": {"fn": "error_Ensemble_dataset",
                         "args": [arr([1.0, 0.01, 0.01, 0.001, 1.0]),
                                  arr([1.0, 0.01, 0.02, 0.001, 1.0]), 100000]},
        "neg_D": {"fn": "error_SingleTraj_dataset",
                  "args": [{"__df__": neg_pred}, {"__df__": neg_true}],
                  "kwargs": {"prints": False, "max_val_alpha": 1.5}},
        "len8": {"fn": "load_file_to_df", "args": [f8]},
        "exp_numbers": {"fn": "run_ensemble_task",
                        "args": [[3, 7], 2, str(_ensemble_dirs(tmp / "ens") / "res"),
                                 str(tmp / "ens" / "ref")]},
        "binary": {"fn": "create_binary_segment", "args": [arr([3]), 6]},
    }
    names = list(cases)
    out = run_reference([cases[n] for n in names])
    return tmp, dict(zip(names, out))


# ------------------------------------------------------------------ always fixed

def test_single_changepoint_error_two_empty_lists(ref):
    _, r = ref
    assert r["empty_cp"]["error"] == "ZeroDivisionError"
    rmse, ji = A.single_changepoint_error([], [])
    assert math.isnan(rmse) and ji == 1.0  # nothing to find, nothing wrongly found
    assert A.single_changepoint_error([], [], corrected=True) == (0.0, 1.0)


def test_error_ensemble_leaves_inputs_alone_and_takes_integers(ref):
    _, r = ref
    # upstream normalises the count row of the caller's matrices in place
    assert r["ens_inplace"]["args_after"][0][4] == pytest.approx([0.3, 0.7])
    assert r["ens_int"]["error"] == "UFuncTypeError"
    true = np.array([[0.5, 1.2], [0.01, 0.1], [0.1, 1.0], [0.01, 0.2], [30, 70]])
    pred = np.array([[0.6, 1.1], [0.02, 0.1], [0.2, 0.8], [0.02, 0.1], [40, 60]])
    before = true.copy(), pred.copy()
    mine = A.error_Ensemble_dataset(true, pred, 1000)
    assert np.array_equal(true, before[0]) and np.array_equal(pred, before[1])
    assert mine == pytest.approx(r["ens_inplace"]["ok"], rel=1e-9)
    ti = np.array([[1, 1], [0, 0], [1, 2], [0, 0], [3, 7]])
    pi = np.array([[1, 1], [0, 0], [1, 2], [0, 0], [4, 6]])
    assert A.error_Ensemble_dataset(ti, pi, 1000) == A.error_Ensemble_dataset(
        ti.astype(float), pi.astype(float), 1000)


def test_error_single_keeps_pairs_collected_before_a_bad_row(ref):
    _, r = ref
    # upstream: the empty pair array of row 1 makes vstack fail; the bare except restarts
    # the collection, so only row 2 (|1.0 - 0.9|) is left in the alpha metric.
    assert r["bare_except"]["ok"][2] == pytest.approx(0.1)
    df_true = pd.DataFrame({"traj_idx": [0.0, 1.0, 2.0], "Ds": [[1.0], [], [1.0]],
                            "alphas": [[1.0], [], [1.0]], "states": [[2.0], [], [2.0]],
                            "changepoints": [[200.0], [5.0, 10.0], [200.0]]})
    df_pred = pd.DataFrame({"traj_idx": [0.0, 1.0, 2.0], "Ds": [[1.0], [1.0, 1.0], [1.0]],
                            "alphas": [[0.5], [1.0, 1.0], [0.9]], "states": [[2.0], [2.0, 2.0], [2.0]],
                            "changepoints": [[200.0], [5.0, 10.0], [200.0]]})
    out = A.error_SingleTraj_dataset(df_pred, df_true, prints=False)
    assert out[2] == pytest.approx((0.5 + 0.1) / 2)  # both good rows count


def test_codalab_scoring_missing_track_gets_maximum_errors(ref):
    tmp, r = ref
    ref_lines = (tmp / "out_ref" / "scores.txt").read_text().splitlines()
    assert not any(line.startswith("tr1.") for line in ref_lines)  # upstream: nothing
    A.codalab_scoring(str(tmp / "ch"), str(tmp / "out_ours"))
    ours = dict(line.split(": ") for line in (tmp / "out_ours" / "scores.txt").read_text().splitlines())
    assert {k: float(v) for k, v in ours.items() if k.startswith("tr1.")} == {
        "tr1.ta1.cp": 10, "tr1.ta1.JI": 0, "tr1.ta1.alpha": 2, "tr1.ta1.D": 1e5,
        "tr1.ta1.state": 0, "tr1.ta2.D": 1.999, "tr1.ta2.alpha": 1e6 - 1e-12}
    summary = (tmp / "out_ours" / "summary.md").read_text()
    assert "no submission for this track" in summary


def test_run_single_task_one_missing_trajectory_does_not_shift_later_fovs(ref):
    tmp, r = ref
    # upstream pairs FOV 0's trajectory 1 (alpha 1.0) with FOV 1's trajectory 0 (1.5) and
    # FOV 1's 0 (1.5) with FOV 1's 1 (0.2): mean |error| = (0 + 0.5 + 1.3 + 2) / 4
    assert r["offsets"]["ok"][0][2] == pytest.approx(0.95)
    avg, df = A.run_single_task([0], 2, str(tmp / "off" / "res"), str(tmp / "off" / "ref"))
    assert avg[2] == pytest.approx(2 / 4)  # only the missing trajectory: |2 - 0|


# --------------------------------------------------------------- corrected only

def test_changepoint_alpha_beta_threshold(ref):
    _, r = ref
    # pairs (10, 13) and (50, 90); official threshold 10: d = 3 + 10 = 13 of 20
    assert r["alpha_beta"]["ok"] == pytest.approx([0.35, 0.35])
    assert A.changepoint_alpha_beta(np.array([10, 50]), np.array([13, 90]), 5) == \
        pytest.approx((0.35, 0.35))
    # threshold 5: d = 3 + 5 = 8 of 10
    assert A.changepoint_alpha_beta(np.array([10, 50]), np.array([13, 90]), 5, corrected=True) == \
        pytest.approx((0.2, 0.2))


def test_check_no_changepoints_pairs_the_matched_segment(ref):
    _, r = ref
    # the full predicted segment matches GT segment 2 (t = 21..99, the longest)
    assert r["no_cp"]["ok"][1] == [[0.2, 0.9]]  # official: position 1 in the assignment
    args = ([10, 20, 100], [0.1, 0.2, 0.3], [1, 2, 3], [0, 1, 2], [100], [0.9], [9], [3])
    assert A.check_no_changepoints(*args)[1].tolist() == [[0.2, 0.9]]
    assert A.check_no_changepoints(*args, corrected=True)[1].tolist() == [[0.3, 0.9]]


def test_single_changepoint_error_without_true_positive(ref):
    _, r = ref
    assert r["nan_rmse"]["ok"][0] == "nan" and r["nan_rmse"]["ok"][1] == 0.0
    rmse, ji = A.single_changepoint_error(np.array([10]), np.array([50]))
    assert math.isnan(rmse) and ji == 0.0
    assert A.single_changepoint_error(np.array([10]), np.array([50]), corrected=True) == (0.0, 0.0)


def test_error_ensemble_sigma_is_a_standard_deviation(ref):
    _, r = ref
    t = np.array([1.0, 0.05, 1.0, 0.1, 1.0])
    p = np.array([1.0, 0.1, 1.0, 0.1, 1.0])
    official = A.error_Ensemble_dataset(t, p, 10000)
    assert official == pytest.approx(r["sigma"]["ok"], rel=1e-9)
    # W1(N(1, 0.05), N(1, 0.1)) = 0.05 sqrt(2 / pi); truncation is 20 sd away
    corrected = A.error_Ensemble_dataset(t, p, 10000, corrected=True)
    assert corrected[0] == pytest.approx(0.05 * math.sqrt(2 / math.pi), abs=1e-6)
    assert abs(official[0] - corrected[0]) > 0.02


def test_error_ensemble_D_distance_independent_of_support(ref):
    _, r = ref
    t = np.array([1.0, 0.01, 0.01, 0.001, 1.0])
    p = np.array([1.0, 0.01, 0.02, 0.001, 1.0])
    r1k, r100k = r["support_1k"]["ok"][1], r["support_100k"]["ok"][1]
    assert r1k != r100k and abs(r1k - 0.01) > 0.005  # official: not the shift 0.01
    assert A.error_Ensemble_dataset(t, p, 1000)[1] == pytest.approx(r1k, rel=1e-9)
    for n in (1000, 100000):  # W1 of two equal-shape normals = the shift of the means
        assert A.error_Ensemble_dataset(t, p, n, corrected=True)[1] == pytest.approx(0.01, rel=1e-6)


def test_error_single_value_ranges_and_negative_D(ref):
    _, r = ref
    # official: -1 becomes 1 (exact D), alpha 1.8 is within the hard-coded [0, 2]
    assert r["neg_D"]["ok"][2:4] == pytest.approx([0.8, 0.0])
    neg_true = pd.DataFrame({"traj_idx": [0.0], "Ds": [[1.0]], "alphas": [[1.0]],
                             "states": [[2.0]], "changepoints": [[200.0]]})
    neg_pred = pd.DataFrame({"traj_idx": [0.0], "Ds": [[-1.0]], "alphas": [[1.8]],
                             "states": [[2.0]], "changepoints": [[200.0]]})
    assert A.error_SingleTraj_dataset(neg_pred, neg_true, prints=False, max_val_alpha=1.5)[2:4] == \
        pytest.approx((0.8, 0.0))
    # corrected: alpha 1.8 > 1.5 -> 1.0 + 2 (error 2, capped at 1.999); D -1 -> 1 + 1e5
    out = A.error_SingleTraj_dataset(neg_pred, neg_true, prints=False, max_val_alpha=1.5,
                                     corrected=True)
    assert out[2] == pytest.approx(1.999)
    assert out[3] == pytest.approx((math.log1p(1.0) - math.log1p(1.0 + 1e5)) ** 2)


def test_prediction_line_of_a_multiple_of_four_fields(ref):
    tmp, r = ref
    # 8 fields: official reads one segment ending at T = 50; D2, alpha2, state2 ignored
    df = r["len8"]["ok"]["__df__"]
    assert df["data"][0][4] == [50.0]
    ours = A.load_file_to_df(tmp / "f8" / "fov_0.txt")
    assert ours.changepoints[0] == [50.0] and ours.Ds[0] == [1.0, 2.0]
    assert A.check_prediction_length([0] * 8) is True
    assert A.check_prediction_length([0] * 8, corrected=True) is False
    assert len(A.load_file_to_df(tmp / "f8" / "fov_0.txt", corrected=True)) == 0


def test_run_ensemble_task_experiment_numbers(ref):
    tmp, r = ref
    assert [row[0] for row in r["exp_numbers"]["ok"][1]["__df__"]["data"]] == [0, 1]
    args = ([3, 7], 2, str(tmp / "ens" / "res"), str(tmp / "ens" / "ref"))
    assert A.run_ensemble_task(*args)[1].Exp.tolist() == [0, 1]
    assert A.run_ensemble_task(*args, corrected=True)[1].Exp.tolist() == [3, 7]


def test_codalab_scoring_ensemble_names(ref):
    tmp, r = ref
    ref_lines = dict(line.split(": ") for line in
                     (tmp / "out_ref" / "scores.txt").read_text().splitlines())
    alpha_d = A.run_ensemble_task([0], 2, str(tmp / "ch" / "res"), str(tmp / "ch" / "ref"))[0]
    # official: the alpha distance is written under "D" and the D distance under "alpha"
    assert float(ref_lines["tr2.ta2.D"]) == pytest.approx(alpha_d[0], rel=1e-9)
    assert float(ref_lines["tr2.ta2.alpha"]) == pytest.approx(alpha_d[1], rel=1e-9)
    A.codalab_scoring(str(tmp / "ch"), str(tmp / "out_corr"), corrected=True)
    corr = dict(line.split(": ") for line in
                (tmp / "out_corr" / "scores.txt").read_text().splitlines())
    c_alpha_d = A.run_ensemble_task([0], 2, str(tmp / "ch" / "res"), str(tmp / "ch" / "ref"),
                                    corrected=True)[0]
    assert float(corr["tr2.ta2.alpha"]) == pytest.approx(c_alpha_d[0], rel=1e-9)
    assert float(corr["tr2.ta2.D"]) == pytest.approx(c_alpha_d[1], rel=1e-9)


def test_create_binary_segment_matches_label_continuous_to_list(ref):
    _, r = ref
    assert r["binary"]["ok"] == [[1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]]
    assert A.create_binary_segment(np.array([3]), 6).tolist() == r["binary"]["ok"]
    assert A.create_binary_segment(np.array([3]), 6, corrected=True).tolist() == \
        [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    labs = np.array([[0.5, 1.0]] * 3 + [[1.5, 2.0]] * 3)
    cp, alphas, _ = A.label_continuous_to_list(labs)
    assert cp.tolist() == [3, 6]
    assert A.label_list_to_continuous(cp, alphas, corrected=True).tolist() == labs[:, 0].tolist()
    assert A.label_list_to_continuous(cp, alphas).tolist() == [0.5] * 4 + [1.5] * 2
