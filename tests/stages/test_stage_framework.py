"""Tolerance ratios, capping, pass rules and verdicts (hand-computed expectations)."""

from __future__ import annotations

import math
import os
import pickle

import numpy as np
import pytest

from trackverify.errors import InputError
from trackverify.io.safe_pickle import load_restricted, loads_restricted
from trackverify.scoring import (
    capped_mean, pass_error_ratio, pass_max_abs, pass_relative, tolerance_ratio, verdict)
from trackverify.stages.common import summarise_ratios


def test_ratio_and_edge_rules():
    assert float(tolerance_ratio(2.0, 0.5)) == 4.0
    assert float(tolerance_ratio(1.0, -0.5)) == 2.0          # |err|
    assert math.isinf(float(tolerance_ratio(1.0, 0.0)))      # err = 0 -> +inf
    assert float(tolerance_ratio(1.0, 0.0, cap=2.0)) == 2.0  # ... which the cap turns into 2
    assert float(tolerance_ratio(0.0, 0.3)) == 0.0           # tau = 0, err > 0
    assert float(tolerance_ratio(0.0, 0.0)) == 2.0           # tau = 0, err = 0
    assert float(tolerance_ratio(1.0, np.nan)) == 0.0        # NaN error
    assert tolerance_ratio([1.0, 3.0], [4.0, 1.0], cap=2.0).tolist() == [0.25, 2.0]


def test_capped_mean_with_validity():
    r = np.array([[3.0, 0.5], [1.0, 4.0]])                   # criteria x experiments
    # min(2, r) = [[2, .5], [1, 2]]; experiment 2 invalid -> [[2, 0], [1, 0]]
    assert capped_mean(r, 2.0, [True, False]) == pytest.approx(3.0 / 4)
    assert capped_mean(r, 2.0) == pytest.approx(5.5 / 4)


def test_pass_rules():
    assert pass_relative(0.95, 1.0, 0.05) and not pass_relative(0.94, 1.0, 0.05)
    assert pass_error_ratio(1.7, 1.0, 1.7) and not pass_error_ratio(1.71, 1.0, 1.7)
    assert pass_max_abs([1.0, 2.0], [1.0005, 2.0], 1e-3)
    assert not pass_max_abs([1.0, np.nan], [1.0, 2.0], 1e-3)
    assert not pass_max_abs([1.0], [1.1], 1e-3)


def test_verdicts():
    assert verdict([True] * 9 + [False], 0.5) == "pass"          # 90 % = "nearly all"
    assert verdict([True] * 8 + [False] * 2, 1.2) == "partial"   # mean score >= 1
    assert verdict([True] * 8 + [False] * 2, 0.99) == "fail"
    assert verdict([True], 2.0, structural_failure=True) == "fail"
    assert verdict([False], 2.0, partial_ok=False) == "fail"


@pytest.mark.parametrize("sub, ok", [(0.75, True), (0.7499, False), (0.7501, True)])
def test_pass_relative_at_its_boundary(sub, ok):
    # (1 - 0.25) * 1.0 = 0.75 exactly (binary fractions): equal passes
    assert bool(pass_relative(sub, 1.0, 0.25)) is ok


@pytest.mark.parametrize("sub, ok", [(1.5, True), (1.5001, False), (1.4999, True)])
def test_pass_error_ratio_at_its_boundary(sub, ok):
    assert bool(pass_error_ratio(sub, 1.0, 1.5)) is ok  # 1.5 * 1.0 = 1.5: equal passes


@pytest.mark.parametrize("ref, ok", [(1.5, True), (1.5001, False), (1.4999, True), (0.5, True)])
def test_pass_max_abs_at_its_boundary(ref, ok):
    assert pass_max_abs([0.0, 1.0], [0.0, ref], 0.5) is ok  # |1 - 1.5| = 0.5 = eps passes
    assert pass_max_abs([], [], 0.0) is True


@pytest.mark.parametrize("n_pass, expected", [(3, "pass"), (2, "partial")])
def test_nearly_all_is_at_least_the_share(n_pass, expected):
    # 3 of 4 = 0.75 = nearly_all: pass; 2 of 4 = 0.5 below it: partial (score 1.0 >= 1)
    assert verdict([True] * n_pass + [False] * (4 - n_pass), 1.0, nearly_all=0.75) == expected


@pytest.mark.parametrize("score, expected", [(1.0, "partial"), (0.9999, "fail"),
                                             (1.0001, "partial"), (None, "fail"),
                                             (math.nan, "fail"), (math.inf, "fail")])
def test_partial_needs_a_finite_score_of_at_least_one(score, expected):
    assert verdict([True, False], score) == expected
    assert verdict([], 5.0) == "fail"  # no unit at all
    assert verdict([True, False], 0.1, partial_ok=True) == "partial"


def test_tolerance_ratio_edges_on_arrays_and_cap():
    r = tolerance_ratio([1.0, 0.0, 0.0, np.nan, 2.0], [0.0, 0.0, 1.0, 1.0, np.nan])
    assert r.dtype == np.float64 and r.tolist() == [math.inf, 2.0, 0.0, 0.0, 0.0]
    assert tolerance_ratio(3.0, 2.0, cap=1.5).tolist() == 1.5
    assert tolerance_ratio(3.0, 2.0).tolist() == 1.5 and tolerance_ratio(3.0, 4.0, cap=1.5) == 0.75
    assert tolerance_ratio([1.0, 2.0], 2.0).tolist() == [0.5, 1.0]  # broadcast; r = 1 at tau = err
    assert capped_mean([[1.0, 3.0]], axis=1).tolist() == [2.0]


def test_pass_rules_scale_with_the_reference():
    # (1 - 0.25) * 2 = 1.5: 1.0 fails, 1.5 passes; 1.5 * 2 = 3: 3 passes, 3.5 fails
    assert not pass_relative(1.0, 2.0, 0.25) and pass_relative(1.5, 2.0, 0.25)
    assert pass_error_ratio(3.0, 2.0, 1.5) and not pass_error_ratio(3.5, 2.0, 1.5)
    assert pass_relative([1.0, 2.0], [2.0, 2.0], 0.25).tolist() == [False, True]
    assert float(tolerance_ratio(1.0, 1.0)) == 1.0 and float(tolerance_ratio(3.0, 1.0)) == 3.0


def test_balanced_accuracy_by_hand_and_against_scikit_learn():
    from sklearn.metrics import balanced_accuracy_score

    from trackverify.scoring import balanced_accuracy

    y = np.array([0, 0, 0, 1, 2, 2])
    yhat = np.array([0, 1, 0, 1, 0, 2])
    # recalls: class 0 2/3, class 1 1/1, class 2 1/2 -> (2/3 + 1 + 1/2) / 3
    assert balanced_accuracy(y, yhat) == pytest.approx((2 / 3 + 1 + 0.5) / 3, abs=1e-15)
    assert balanced_accuracy(y, yhat) == pytest.approx(balanced_accuracy_score(y, yhat))
    assert balanced_accuracy(np.array(["a", "b", "b"]), np.array(["b", "b", "b"])) == 0.5
    assert balanced_accuracy(np.array([[1, 1], [0, 0]]), np.array([[1, 0], [0, 0]])) == 0.75
    assert balanced_accuracy(np.array([3]), np.array([3])) == 1.0
    assert balanced_accuracy(np.array([]), np.array([])) is None
    with pytest.raises(ValueError, match=r"differ in length: \(3,\) vs \(2,\)"):
        balanced_accuracy(np.zeros(3), np.zeros(2))


def test_summarise_ratios_hand_grid():
    ratios = {"e1": np.array([3.0, 1.0]), "e2": np.array([0.5, 2.0]), "e3": None}
    score, result, criteria, passed = summarise_ratios(["c1", "c2"], ratios, cap=2.0,
                                                       nearly_all=0.9)
    # capped with v: c1 = (2 + .5 + 0)/3, c2 = (1 + 2 + 0)/3
    assert criteria["c1"]["mean_capped_ratio"] == pytest.approx(2.5 / 3)
    assert score == pytest.approx((2.5 / 3 + 1.0) / 2)
    assert passed == {"e1": True, "e2": False, "e3": False}
    assert result == "fail"                                      # score 0.917 < 1


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_restricted_unpickler_refuses_os_system(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "trx.pkl"
    path.write_bytes(pickle.dumps({"x": [_Exploit(marker)]}))
    with pytest.raises(InputError, match="refused to load"):
        load_restricted(path)
    assert not marker.exists()


def test_restricted_unpickler_admits_numpy_and_containers():
    obj = {"x": [np.arange(3.0)], "n": np.int64(2), "t": (1, "a")}
    back = loads_restricted(pickle.dumps(obj))
    assert back["x"][0].tolist() == [0.0, 1.0, 2.0] and back["n"] == 2 and back["t"] == (1, "a")


def test_summarise_ratios_by_hand():
    """Criteria a, b; e1 = (1.0, 3.0), e2 = (0.5, 12.0), e3 invalid; cap 10. Per criterion
    (invalid counts 0): a (1 + 0.5 + 0) / 3 = 0.5, b (3 + 10 + 0) / 3 = 13/3; score
    (0.5 + 13/3) / 2 = 29/12. e1 passes (a ratio of exactly 1 is within tolerance), e2
    and e3 do not: 1/3 of the experiments."""
    from trackverify.stages.common import summarise_ratios

    ratios = {"e1": np.array([1.0, 3.0]), "e2": np.array([0.5, 12.0]), "e3": None}
    score, result, summary, passed = summarise_ratios(["a", "b"], ratios, cap=10.0,
                                                      nearly_all=0.5)
    assert score == pytest.approx(29 / 12) and result == "partial"  # score >= 1
    assert passed == {"e1": True, "e2": False, "e3": False}
    assert summary["a"] == {"mean_capped_ratio": pytest.approx(0.5),
                            "experiments_within_tolerance": 1, "experiments": 3}
    assert summary["b"]["experiments_within_tolerance"] == 2
    assert summarise_ratios(["a", "b"], ratios, cap=10.0, nearly_all=1 / 3)[1] == "pass"
    assert summarise_ratios(["a", "b"], ratios, cap=10.0, nearly_all=0.5,
                            partial_rule="criteria")[1] == "fail"   # a averages 0.5 < 1
    assert summarise_ratios(["a", "b"], ratios, cap=10.0, nearly_all=0.5,
                            structural_failure=True)[1] == "fail"
    # a stage's own rule for the listed experiments; the others keep "every r >= 1"
    got = summarise_ratios(["a", "b"], ratios, cap=10.0, nearly_all=0.5,
                           unit_pass={"e2": True, "e3": True})[3]
    assert got == {"e1": True, "e2": True, "e3": False}             # e3 is still invalid


def test_summarise_ratios_criteria_rule_at_one_and_without_experiments():
    """partial_rule "criteria": a criterion averaging exactly 1 ((2 + 0) / 2) is enough.
    No experiment at all: no score, a failed verdict, undefined per-criterion means."""
    from trackverify.stages.common import summarise_ratios

    ratios = {"e1": np.array([2.0]), "e2": np.array([0.0])}
    assert summarise_ratios(["a"], ratios, cap=10.0, nearly_all=0.9,
                            partial_rule="criteria")[1] == "partial"
    score, result, summary, passed = summarise_ratios(["a"], {}, cap=10.0, nearly_all=0.9)
    assert score is None and result == "fail" and passed == {}
    assert np.isnan(summary["a"]["mean_capped_ratio"]) and summary["a"]["experiments"] == 0


def test_ratio_entry_fields():
    from trackverify.stages.common import ratio_entry

    assert ratio_entry(np.float32(2.0), 0.5, 0.25, unit="mm") == {
        "ratio": 2.0, "tolerance": 0.5, "error": 0.25, "unit": "mm"}


def test_dense_lays_out_each_target_by_global_frame(make_trx):
    """Target 0 on frames 2-3, target 1 on frames 0-2: values by global frame, NaN where
    absent; a layout shorter than the last frame drops the later frames."""
    from trackverify.stages.common import dense

    trx = make_trx([2, 0], {"x": [[1.0, 2.0], [3.0, 4.0, 5.0]]})
    nan = np.nan
    np.testing.assert_array_equal(dense(trx, "x", 5), [[nan, nan, 1, 2, nan], [3, 4, 5, nan, nan]])
    np.testing.assert_array_equal(dense(trx, "x", 3), [[nan, nan, 1], [3, 4, 5]])
    np.testing.assert_array_equal(dense(trx, "x", 0), np.zeros((2, 0)))
    assert dense(make_trx([], {"x": []}), "x", 4).shape == (0, 4)
    # a target with no frame (nframes 0, endframe = firstframe - 1): a row of NaN
    np.testing.assert_array_equal(dense(make_trx([1], {"x": [[]]}), "x", 2), [[nan, nan]])
    assert trx["x"][0].tolist() == [1.0, 2.0]            # the input is not modified


def test_total_frames_is_one_past_the_last_frame_of_any_input(make_trx):
    from trackverify.stages.common import total_frames

    a = make_trx([2, 0], {"x": [[1.0, 2.0], [3.0, 4.0, 5.0]]})     # last frame 3
    b = make_trx([5], {"x": [[0.0]]})                                # last frame 5
    empty = make_trx([], {"x": []})
    assert total_frames(a) == 4 and total_frames(b, a) == 6 and total_frames(a, b) == 6
    assert total_frames(empty, a) == 4 and total_frames(a, empty) == 4
    assert total_frames(empty) == 0 and total_frames() == 0


def test_align_trajectories_mean_distance_over_common_frames_and_optimal_matching(make_trx):
    """Reference R0 at (0, 0) on frames 0-3, R1 at (2, 0) on frames 1-3. S0 at (2, 0), (0.5, 0),
    (0.5, 0) on frames 0-2: C(S0, R0) = (2 + .5 + .5) / 3 = 1, C(S0, R1) = (1.5 + 1.5) / 2 = 1.5
    (frame 0 is not common). S1 at (0, -1.2) on frame 3 only: C(S1, R0) = 1.2,
    C(S1, R1) = hypot(2, 1.2). S2 on frames 5-6 shares no frame: never matched. Greedy
    (smallest cost first) would pair S0-R0 and S1-R1 (1 + 2.33); the optimum is S0-R1, S1-R0
    (1.5 + 1.2)."""
    from trackverify.stages.common import align_trajectories

    ref = make_trx([0, 1], {"x": [[0, 0, 0, 0], [2, 2, 2]], "y": [[0, 0, 0, 0], [0, 0, 0]]})
    sub = make_trx([0, 3, 5], {"x": [[2, 0.5, 0.5], [0], [0, 0]],
                               "y": [[0, 0, 0], [-1.2], [0, 0]]})
    rows, cols, cost = align_trajectories(sub, ref)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    np.testing.assert_allclose(cost, [1.5, 1.2], rtol=1e-12)
    rows, cols, cost = align_trajectories(ref, sub)       # the same pairs, seen from the other side
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    np.testing.assert_allclose(cost, [1.2, 1.5], rtol=1e-12)
    empty = make_trx([], {"x": [], "y": []})
    for got in (align_trajectories(empty, ref), align_trajectories(sub, empty)):
        assert [a.size for a in got] == [0, 0, 0]
