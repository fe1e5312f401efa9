"""The single-trajectory task's rules by hand: line lengths, the (group, traj_idx) match,
every threshold and validity bound of ``error_SingleTraj_dataset`` and its printed
summary. Official numbers were also checked against andi-datasets 2.1.13
(``andi_datasets.utils_challenge.error_SingleTraj_dataset``, run in .venv-andi)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import trackverify.andi as A
from trackverify.andi.single import first_match


def test_check_prediction_length_by_hand():
    lengths = range(10)
    # official: 1 + 4k, and 4k (the last changepoint is then the length)
    assert [A.check_prediction_length([0] * n) for n in lengths] == \
        [True, True, False, False, True, True, False, False, True, True]
    assert [A.check_prediction_length([0] * n, corrected=True) for n in lengths] == \
        [False, True, False, False, False, True, False, False, False, True]


def test_first_match_by_hand():
    # reference rows: (0, 5) twice (the first, row 0, is used), (0, 7), (1, 5), (0, NaN)
    r_group, r_idx = [0, 0, 0, 1, 0], [5.0, 5.0, 7.0, 5.0, np.nan]
    got = first_match([0, 1, 0, 1, 0, 2], [5.0, 5.0, 7.0, 7.0, np.nan, 5.0], r_group, r_idx)
    assert got.tolist() == [0, 3, 2, -1, -1, -1]  # NaN never matches, not even NaN
    # keys group * m + code must not collide across groups: (2, 5) is not (0, 7), and
    # (0, 7) is not (2, 5) (m = 2 distinct ids)
    assert first_match([2], [5.0], [0], [7.0]).tolist() == [-1]
    assert first_match([0], [7.0], [2], [5.0]).tolist() == [-1]
    # a NaN query does not take the code of another id
    assert first_match([0, 0], [np.nan, 7.0], [0, 0], [5.0, 7.0]).tolist() == [-1, 1]
    assert first_match([0], [5.0], [], []).tolist() == [-1]
    # ... nor, in group 1, the key of group 0's largest id: with m = 1 distinct id a NaN
    # query's key 1 x 1 - 1 = 0 is the key of (0, 5)
    assert first_match([1], [np.nan], [0], [5.0]).tolist() == [-1]


def test_first_match_takes_the_first_of_many_repeated_rows():
    """300 reference rows in one group, ids 0..4 each repeated 60 times in a shuffled order:
    each query gets the first row carrying its id (the smallest row index), whatever order a
    sort of the repeated keys leaves them in."""
    rng = np.random.default_rng(7)
    r_idx = rng.permutation(np.repeat(np.arange(5.0), 60))
    got = first_match(np.zeros(6, int), [0.0, 1, 2, 3, 4, 5], np.zeros(300, int), r_idx)
    first = [int(np.flatnonzero(r_idx == k)[0]) for k in range(5)]
    assert got.tolist() == first + [-1]


def _frame(rows):
    return pd.DataFrame(rows, columns=["traj_idx", "Ds", "alphas", "states", "changepoints"])


TRUE = _frame([[0.0, [1.0], [1.0], [2.0], [100.0]], [1.0, [2.0], [0.5], [1.0], [100.0]]])
# trajectory 0: alpha 2.5 (> 2, invalid) and state 5 (> 4, invalid); trajectory 1 missing
PRED = _frame([[0.0, [1.0], [2.5], [5.0], [100.0]]])


def test_thresholds_of_invalid_and_missing_predictions():
    """Trajectory 0: alpha 1.0 vs invalid -> 1.0 + thr_a, state invalid -> thr_s. The
    missing trajectory 1: changepoints [10] vs [10 + thr_cp] (FP + FN), alpha thr_a vs 0,
    D 1 + thr_D vs 1, state 10 vs 0. Trajectory 0 has no changepoint on either side (one
    TP): JI = 1/3, RMSE 0."""
    out = A.error_SingleTraj_dataset(PRED, TRUE, prints=False)
    # defaults thr_a 2 (MAE 2, capped at 1.999), thr_D 1e5, thr_s 0
    assert out == pytest.approx((0, 1 / 3, 1.999, (math.log(2 + 1e5) - math.log(2)) ** 2 / 2,
                                 0.0), rel=1e-12)
    out = A.error_SingleTraj_dataset(PRED, TRUE, threshold_error_alpha=1.5,
                                     threshold_error_D=10, threshold_error_s=2, prints=False)
    assert out == pytest.approx((0, 1 / 3, 1.5, math.log(6) ** 2 / 2, 0.5), rel=1e-12)


def test_changepoint_threshold_argument():
    # trajectory 0: changepoints [40] vs [50] (|diff| 10) and matching segments; 1 missing
    true = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [40.0, 100.0]],
                   [1.0, [2.0], [0.5], [1.0], [100.0]]])
    pred = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [50.0, 100.0]]])
    # threshold 12: a TP at distance 10 (RMSE 10); the missing row is FP + FN: JI 1/3
    rmse, ji, alpha, _, state = A.error_SingleTraj_dataset(pred, true, threshold_cp=12,
                                                           prints=False)
    assert (rmse, ji) == (10.0, pytest.approx(1 / 3))
    assert alpha == pytest.approx(2 / 3) and state == pytest.approx(2 / 3)
    # default 10: |diff| 10 is not < 10: no TP at all
    assert A.error_SingleTraj_dataset(pred, true, prints=False)[:2] == (0, 0.0)


def test_official_absolute_d_and_corrected_bounds():
    exact = _frame([[0.0, [1.0], [1.0], [2.0], [100.0]], [1.0, [2.0], [0.5], [1.0], [100.0]]])

    def with_pred(D=1.0, alpha=1.0):
        return _frame([[0.0, [D], [alpha], [2.0], [100.0]], [1.0, [2.0], [0.5], [1.0], [100.0]]])

    # official (the default): a negative D is taken in absolute value, a valid prediction
    assert A.error_SingleTraj_dataset(with_pred(D=-1.0), exact, prints=False) == \
        (0, 1, 0.0, 0.0, 1.0)
    invalid_d = (math.log(2 + 1e5) - math.log(2)) ** 2 / 2  # D -> 1 + 1e5
    # corrected: D outside [1e-6, 1e6] is invalid; 1e6 + 0.5 is just above
    out = A.error_SingleTraj_dataset(with_pred(D=-1.0), exact, prints=False, corrected=True)
    assert out[3] == pytest.approx(invalid_d, rel=1e-12)
    out = A.error_SingleTraj_dataset(with_pred(D=1e6 + 0.5), exact, prints=False,
                                     corrected=True)
    assert out[3] == pytest.approx(invalid_d, rel=1e-12)
    out = A.error_SingleTraj_dataset(with_pred(D=1e6), exact, prints=False, corrected=True)
    assert out[3] == pytest.approx((math.log1p(1e6) - math.log(2)) ** 2 / 2, rel=1e-12)
    # the bounds are arguments: D 0.4 below min_val_D 0.5, 3.5 above max_val_D 3 (the other
    # trajectory's D 2 stays valid)
    for D, kw in ((0.4, {"min_val_D": 0.5}), (3.5, {"max_val_D": 3.0})):
        out = A.error_SingleTraj_dataset(with_pred(D=D), exact, prints=False, corrected=True,
                                         **kw)
        assert out[3] == pytest.approx(invalid_d, rel=1e-12), kw
    # alpha 1.8 above max_val_alpha 1.5, 0.1 below min_val_alpha 0.2: truth + 2
    for alpha, kw in ((1.8, {"max_val_alpha": 1.5}), (0.1, {"min_val_alpha": 0.2})):
        out = A.error_SingleTraj_dataset(with_pred(alpha=alpha), exact, prints=False,
                                         corrected=True, **kw)
        assert out[2] == pytest.approx(2 / 2, rel=1e-12), kw
        out = A.error_SingleTraj_dataset(with_pred(alpha=alpha), exact, prints=False,
                                         corrected=True)
        assert out[2] == pytest.approx(abs(1 - alpha) / 2, rel=1e-12)  # valid by default


def test_printed_summary_equals_the_reference(capsys):
    out = A.error_SingleTraj_dataset(PRED, TRUE)
    # andi-datasets 2.1.13 prints exactly this (its tqdm bar goes to stderr)
    assert capsys.readouterr().out == (
        "Summary of metrics assesments:\n\n1 missing trajectory/ies. \n\nChangepoint Metrics "
        "\nRMSE: 0 \nJaccard Index: 0.333 \n\nDiffusion property metrics \nMetric anomalous "
        f"exponent: 1.999 \nMetric diffusion coefficient: {out[3]} \nMetric diffusive state: "
        "0.0\n")
    assert out[3] == pytest.approx(58.53401745549993, rel=1e-12)
    A.error_SingleTraj_dataset(PRED.iloc[:0].copy(), PRED)
    assert "missing" in capsys.readouterr().out
    A.error_SingleTraj_dataset(TRUE, TRUE)
    text = capsys.readouterr().out
    assert "missing" not in text and "RMSE: 0 \nJaccard Index: 1 \n" in text


def test_negative_changepoints_take_the_reference_path():
    """Negative changepoints on both sides: segments follow python slicing (andi-datasets),
    GT [0, 95] and [96, 99], prediction [0, 40] and [41, 99]; Jaccard 41/96, 55/100, 0,
    4/59 pairs GT 0 with prediction 1 and GT 1 with prediction 0 (the interval engine
    would see {0} and everything on both sides and pair them in order)."""
    true = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [-5.0, 100.0]]])
    pred = _frame([[0.0, [1.0, 2.0], [0.3, 0.9], [2.0, 1.0], [-60.0, 100.0]]])
    rmse, ji, alpha, d, state = A.error_SingleTraj_dataset(pred, true, prints=False)
    assert (rmse, ji, state) == (0, 0.0, 0.0)  # |-5 - -60| = 55: FP + FN
    assert alpha == pytest.approx((0.1 + 0.2) / 2, rel=1e-12)
    assert d == pytest.approx(((math.log(2) - math.log(3)) ** 2
                               + (math.log(3) - math.log(2)) ** 2) / 2, rel=1e-12)


def test_printed_changepoint_scores_are_rounded_to_3_digits(capsys):
    # changepoint distances 1 and 2: RMSE sqrt(2.5) = 1.5811..., printed 1.581
    true = _frame([[0.0, [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [40.0, 100.0]],
                   [1.0, [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [60.0, 100.0]]])
    pred = _frame([[0.0, [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [41.0, 100.0]],
                   [1.0, [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [62.0, 100.0]]])
    rmse, ji, *_ = A.error_SingleTraj_dataset(pred, true)
    assert rmse == pytest.approx(math.sqrt(2.5), rel=1e-12) and ji == 1.0
    assert "\nRMSE: 1.581 \nJaccard Index: 1.0 \n" in capsys.readouterr().out


def test_predicted_changepoints_are_truncated_to_integers():
    # 40.7 is read as 40 (as andi-datasets): distance 0, RMSE 0
    true = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [40.0, 100.0]]])
    pred = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [40.7, 100.0]]])
    assert A.error_SingleTraj_dataset(pred, true, prints=False) == (0.0, 1.0, 0.0, 0.0, 1.0)


def test_missing_substitute_keeps_a_fractional_threshold():
    # the missing trajectory's changepoints are 10 vs 10 + 2.5 (not truncated to 12):
    # distance 2.5 is not < 2.5, an FP + FN; trajectory 0 is a TP. (andi-datasets raises
    # on a fractional threshold.)
    true = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [40.0, 100.0]],
                   [1.0, [2.0], [0.5], [1.0], [100.0]]])
    pred = _frame([[0.0, [1.0, 2.0], [1.0, 0.5], [2.0, 1.0], [40.0, 100.0]]])
    assert A.error_SingleTraj_dataset(pred, true, threshold_cp=2.5, prints=False)[:2] == \
        (0.0, 1 / 3)


def test_invalid_state_of_a_state_0_truth():
    # state 7 > 4 is invalid and replaced by threshold_error_s (default 0): correct
    true = _frame([[0.0, [1.0], [1.0], [0.0], [100.0]]])
    pred = _frame([[0.0, [1.0], [1.0], [7.0], [100.0]]])
    assert A.error_SingleTraj_dataset(pred, true, prints=False)[4] == 1.0
    assert A.error_SingleTraj_dataset(pred, true, threshold_error_s=3, prints=False)[4] == 0.0


def test_a_prediction_without_changepoints_is_missing():
    true = _frame([[0.0, [1.0], [1.0], [2.0], [100.0]], [1.0, [2.0], [0.5], [1.0], [100.0]]])
    empty = _frame([[0.0, [1.0], [1.0], [2.0], [100.0]], [1.0, [], [], [], []]])
    got = A.error_SingleTraj_dataset(empty, true, prints=False)
    assert got == A.error_SingleTraj_dataset(empty.iloc[:1], true, prints=False)
    assert got[1] == pytest.approx(1 / 3)


def test_score_tables_defaults_and_groups():
    from trackverify.andi.single import Table, score_tables

    true = Table.from_df(_frame([[0.0, [1.0], [1.0], [2.0], [100.0]],
                                 [0.0, [1.0], [1.0], [2.0], [100.0]]]))

    def pred(D, alpha):
        return Table.from_df(_frame([[0.0, [1.0], [1.0], [2.0], [100.0]],
                                     [0.0, [D], [alpha], [2.0], [100.0]]]))

    # the same traj_idx in groups 0 and 1: each truth takes its own group's prediction
    # (alpha 1.4 in group 1): MAE 0.2 over the two
    got = score_tables(true, pred(1.0, 1.4), true_group=[0, 1], pred_group=[0, 1])
    assert got.alpha == pytest.approx(0.2, rel=1e-12) and got.missing.tolist() == []
    # official by default: a negative D counts as |D|
    assert score_tables(true, pred(-1.0, 1.0), true_group=[0, 1], pred_group=[0, 1]).D == 0.0
    # corrected, default bounds alpha <= 2 and D <= 1e6: 2.5 and 1e6 + 0.5 are invalid
    got = score_tables(true, pred(1e6 + 0.5, 2.5), true_group=[0, 1], pred_group=[0, 1],
                       corrected=True)
    assert got.alpha == pytest.approx(2 / 2, rel=1e-12)  # replaced by truth + 2
    assert got.D == pytest.approx((math.log(2 + 1e5) - math.log(2)) ** 2 / 2, rel=1e-12)


@pytest.mark.parametrize("corrected", [False, True])
def test_validity_bounds_are_inclusive(corrected):
    """alpha exactly 0 or 2, D exactly 1e-6 (corrected bound) and states exactly 0 or 4 are
    valid predictions, scored as they are: truth alpha 1, D 1, state 3."""
    true = _frame([[0.0, [1.0], [1.0], [3.0], [100.0]], [1.0, [1.0], [1.0], [3.0], [100.0]]])
    pred = _frame([[0.0, [1e-6], [0.0], [0.0], [100.0]], [1.0, [1.0], [2.0], [4.0], [100.0]]])
    _, _, alpha, d, state = A.error_SingleTraj_dataset(pred, true, threshold_error_s=3,
                                                       prints=False, corrected=corrected)
    assert alpha == 1.0
    assert d == pytest.approx((math.log(2) - math.log1p(1e-6)) ** 2 / 2, rel=1e-12)
    assert state == 0.0  # 0 and 4 vs 3: both valid, both wrong (the substitute 3 is not)


def test_fast_path_segment_pairing_official_and_corrected():
    # GT (0..50], (50..120], (120..200); no predicted changepoint. Official: the GT
    # segment at the position of the pair in the assignment (1, alpha 0.2); corrected:
    # the matched GT segment (2, alpha 0.3)
    true = _frame([[0.0, [1.0, 1.0, 1.0], [0.1, 0.2, 0.3], [1.0, 1.0, 1.0],
                    [50.0, 120.0, 200.0]]])
    pred = _frame([[0.0, [1.0], [0.9], [1.0], [200.0]]])
    assert A.error_SingleTraj_dataset(pred, true, prints=False)[2] == pytest.approx(0.7)
    assert A.error_SingleTraj_dataset(pred, true, prints=False, corrected=True)[2] == \
        pytest.approx(0.6)
    # corrected segments T = 12: GT [0, 1), [1, 12) against [0, 1), [1, 6), [6, 12):
    # GT 1 takes prediction 2 (6/11 > 5/11)
    true = _frame([[0.0, [1.0, 1.0], [0.1, 0.2], [1.0, 1.0], [1.0, 12.0]]])
    pred = _frame([[0.0, [1.0, 1.0, 1.0], [0.3, 0.5, 0.9], [1.0, 1.0, 1.0], [1.0, 6.0, 12.0]]])
    assert A.error_SingleTraj_dataset(pred, true, prints=False, corrected=True)[2] == \
        pytest.approx((0.2 + 0.7) / 2)


def test_negative_changepoints_corrected_take_the_corrected_slicing():
    """Corrected segments with python slicing, T = 10: GT [0:-4] = 0..5 and [-4:] = 6..9,
    prediction [0:-1] = 0..8 and [-1:] = {9}; Jaccard 6/9, 0, 3/10, 1/4 pairs GT 0 with
    prediction 0 and GT 1 with prediction 1 (the official segments pair them crosswise)."""
    true = _frame([[0.0, [1.0, 1.0], [0.1, 1.0], [1.0, 1.0], [-4.0, 10.0]]])
    pred = _frame([[0.0, [1.0, 1.0], [0.3, 1.5], [1.0, 1.0], [-1.0, 10.0]]])
    out = A.error_SingleTraj_dataset(pred, true, prints=False, corrected=True)
    assert out[2] == pytest.approx((0.2 + 0.5) / 2, rel=1e-12)
