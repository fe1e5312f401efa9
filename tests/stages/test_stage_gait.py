"""A6 gait: two-sided bout-level balanced accuracy (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.stages import synthetic as S
from trackverify.stages.gait import bout_balanced_accuracy


def _one_leg(values, t=None):
    t = len(values) if t is None else t
    arr = np.full((1, t, 6), -1, dtype=np.int8)
    arr[0, :len(values), 0] = values
    return arr


def test_bout_ba_hand_computed():
    ref = _one_leg([1, 1, 1, 1, 0, 0, 0, 0, -1, -1])
    pred = _one_leg([1, 1, 0, 1, 0, 0, 0, 0, 1, 1])
    # ref bouts 1111 (1/4 wrong), 0000 (0) -> 0.125; pred bouts 11, 0, 1, 0000 -> 1/4
    assert bout_balanced_accuracy(pred, ref) == pytest.approx(1 - (0.5 * 0.125 + 0.5 * 0.25))


def test_gap_policy():
    ref = _one_leg([1, 1, -1, 1, 0, 0])
    pred = _one_leg([1, 1, 0, 1, 0, 1])
    # concatenate: ref 111|00 -> (0 + 1/2)/2; pred 111|0|1 -> (0 + 0 + 1)/3
    assert bout_balanced_accuracy(pred, ref) == pytest.approx(1 - (0.125 + 1 / 6))
    # break: ref 11|1|00 -> 1/6; pred 11|1|0|1 -> 1/4
    assert bout_balanced_accuracy(pred, ref, "break") == pytest.approx(1 - (1 / 12 + 1 / 8))


def test_stage_score_and_verdict(tmp_path, run_stage):
    for who, values in (("ref", [1, 1, 1, 1, 0, 0, 0, 0, -1, -1]),
                        ("sub", [1, 1, 0, 1, 0, 0, 0, 0, 1, 1])):
        (tmp_path / who / "exp_1").mkdir(parents=True)
        np.save(tmp_path / who / "exp_1" / "swing_stance.npy", _one_leg(values))
    res = run_stage("gait", tmp_path)
    assert res.score == pytest.approx(0.1 / 0.1875)   # (1 - 0.9) / (1 - 0.8125)
    assert res.verdict == "fail"


def test_perfect_synthetic_scores_the_cap(tmp_path, run_stage):
    for k in range(2):
        t = S.fly_experiment(k, n_flies=3, n_frames=200)
        ss = S.swing_stance(t, k)
        for who in ("ref", "sub"):
            (tmp_path / who / f"exp_{k + 1}").mkdir(parents=True)
            np.save(tmp_path / who / f"exp_{k + 1}" / "swing_stance.npy", ss)
    res = run_stage("gait", tmp_path)
    assert res.score == 10.0 and res.verdict == "pass"


@pytest.mark.parametrize("bad, reason", [
    (np.zeros((2, 10, 6), dtype=np.int8), "differs from the reference"),
    (np.full((1, 10, 6), 2, dtype=np.int8), "outside {-1, 0, 1}"),
    (np.zeros((1, 10, 6)), "dtype float64"),
])
def test_broken_format_fails(tmp_path, run_stage, bad, reason):
    for who, arr in (("ref", _one_leg([1] * 10)), ("sub", bad)):
        (tmp_path / who / "exp_1").mkdir(parents=True)
        np.save(tmp_path / who / "exp_1" / "swing_stance.npy", arr)
    res = run_stage("gait", tmp_path)
    assert res.verdict == "fail" and any(reason in p for p in res.problems), res.problems


def test_bouts_never_run_across_two_legs():
    """Leg 0: ref 111, pred 101; leg 1: ref 110, pred 110 (one fly, three frames). Leg 1
    starts with the value leg 0 ended on, yet starts a new bout. Ref bouts 111 | 11 | 0 ->
    (1/3 + 0 + 0) / 3 = 1/9; pred bouts 1 | 0 | 1 | 11 | 0 -> 1/5; BA = 1 - (1/18 + 1/10)."""
    ref = np.full((1, 3, 6), -1, dtype=np.int8)
    pred = ref.copy()
    ref[0, :, 0], ref[0, :, 1] = [1, 1, 1], [1, 1, 0]
    pred[0, :, 0], pred[0, :, 1] = [1, 0, 1], [1, 1, 0]
    assert bout_balanced_accuracy(pred, ref) == pytest.approx(38 / 45)


def test_one_labelled_frame_and_none():
    assert bout_balanced_accuracy(_one_leg([1]), _one_leg([1])) == 1.0
    assert bout_balanced_accuracy(_one_leg([0]), _one_leg([1])) == 0.0
    assert bout_balanced_accuracy(_one_leg([1, 1]), _one_leg([-1, -1])) is None
