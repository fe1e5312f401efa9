"""Certification metrics, hand-computed (SPEC section 6)."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.benchmark.pooled import PooledPopulation
from trackverify.benchmark.selective import (auroc_abstain_as_error, certification_metrics, risk_coverage_curve,
                                   summarise_curve)

NAN = np.nan
ERROR = np.array([0, 0, 1, 1, NAN, 0])
SCORE = np.array([1, 2, 3, 1, NAN, 6], dtype=float)


def test_hand_computed_metrics():
    m = certification_metrics(ERROR, SCORE, threshold=2.0)
    assert (m["n_rows"], m["n_labelled"], m["n_errors"], m["n_abstained"]) == (6, 5, 2, 1)
    assert m["n_labelled_abstained"] == 0
    assert m["prevalence"] == pytest.approx(2 / 5)
    assert m["certified_coverage"] == pytest.approx(3 / 6)  # rows 0, 1, 3
    assert m["selective_risk"] == pytest.approx(1 / 3)
    assert m["false_certification_rate"] == pytest.approx(1 / 2)
    assert m["correct_certified_coverage"] == pytest.approx(2 / 6)
    # Error scores {3, 1} vs correct {1, 2, 6}: wins (3>1, 3>2) + tie (1=1) over 6 pairs.
    assert m["auroc"] == pytest.approx(2.5 / 6)
    # Thresholds 6, 3, 2, 1: (R, P) = (0, 0), (.5, .5), (.5, 1/3), (1, .4): AP = .25 + .2
    assert m["auprc"] == pytest.approx(0.45)
    assert m["correct_coverage_at_fcr"] == 0.0  # every threshold certifies >= half the errors


def test_risk_coverage_ties_enter_together():
    curve = risk_coverage_curve(ERROR, SCORE)
    assert curve["threshold"].tolist() == [1, 2, 3, 6]
    assert curve["coverage"].tolist() == pytest.approx([2 / 6, 3 / 6, 4 / 6, 5 / 6])
    assert curve["selective_risk"].tolist() == pytest.approx([1 / 2, 1 / 3, 2 / 4, 2 / 5])
    assert curve["false_certification_rate"].tolist() == pytest.approx([.5, .5, 1, 1])
    assert curve["correct_coverage"].tolist() == pytest.approx([1 / 6, 2 / 6, 2 / 6, 3 / 6])
    m = certification_metrics(ERROR, SCORE, threshold=2.0, max_fcr=0.5)
    assert m["correct_coverage_at_fcr"] == pytest.approx(2 / 6)


def test_nothing_accepted_leaves_selective_risk_undefined():
    m = certification_metrics(ERROR, SCORE, threshold=0.5)
    assert m["certified_coverage"] == 0.0
    assert m["selective_risk"] is None
    assert m["false_certification_rate"] == 0.0


def test_no_errors_leaves_fcr_and_auc_undefined():
    m = certification_metrics(np.zeros(4), np.array([1.0, 2, 3, 4]), threshold=2.5)
    assert m["false_certification_rate"] is None and m["auroc"] is None and m["auprc"] is None
    assert m["prevalence"] == 0.0 and m["selective_risk"] == 0.0
    assert m["correct_coverage_at_fcr"] is None


def test_all_abstained_certifies_nothing():
    m = certification_metrics(np.array([0, 1, 0.0]), np.full(3, NAN), threshold=5)
    assert m["certified_coverage"] == 0.0 and m["selective_risk"] is None
    assert m["n_labelled_abstained"] == 3 and m["auroc"] is None


def test_no_labelled_rows():
    m = certification_metrics(np.full(2, NAN), np.array([1.0, 2.0]), threshold=5)
    assert m["prevalence"] is None and m["selective_risk"] == 0.0


def test_summary_keeps_exact_points():
    rng = np.random.default_rng(0)
    error = (rng.random(5000) < 0.1).astype(float)
    score = rng.random(5000)
    curve = risk_coverage_curve(error, score)
    short = summarise_curve(curve, points=50)
    assert len(short["threshold"]) <= 50
    assert short["threshold"][0] == curve["threshold"][0] and short["coverage"][-1] == curve["coverage"][-1]
    index = np.searchsorted(curve["threshold"], short["threshold"])
    assert np.allclose(curve["selective_risk"][index], short["selective_risk"])


# Unlabelled rows with a finite score (rows 2 and 3): they count in the population and, when
# accepted, in the accepted rows, never as errors or correct rows. Row 2 sits exactly at the
# threshold 2; row 4 is labelled and abstained, row 6 unlabelled and abstained.
ERROR_U = np.array([0, 1, NAN, NAN, 0, 1, NAN, 0])
SCORE_U = np.array([1, 2, 2, 5, NAN, 4, NAN, 3], dtype=float)


def unlabelled_expected():
    return {"n_rows": 8, "n_labelled": 5, "n_errors": 2, "n_abstained": 2,
            "n_labelled_abstained": 1, "n_accepted": 3, "n_accepted_errors": 1,
            "n_accepted_correct": 1, "threshold": 2.0, "prevalence": 2 / 5,
            # errors {2, 4} vs correct {1, 3}: 2>1, 4>1, 4>3 win, 2<3 loses: 3 / 4
            "auroc": 3 / 4,
            # descending 4 (error, P 1, R .5), 3 (correct), 2 (error, P 2/3, R 1): .5 + .5 * 2/3
            "auprc": 5 / 6,
            "certified_coverage": 3 / 8, "selective_risk": 1 / 3, "false_certification_rate": 1 / 2,
            "correct_certified_coverage": 1 / 8, "max_false_certification_rate": 0.5,
            "correct_coverage_at_fcr": 2 / 8}


def test_unlabelled_rows_with_finite_scores_by_hand():
    m = certification_metrics(ERROR_U, SCORE_U, threshold=2.0, max_fcr=0.5)
    expected = unlabelled_expected()
    assert set(m) == set(expected)
    for key, value in expected.items():
        assert m[key] == pytest.approx(value, rel=1e-12), key
    curve = risk_coverage_curve(ERROR_U, SCORE_U)
    assert curve["threshold"].tolist() == [1, 2, 3, 4, 5]
    assert curve["coverage"].tolist() == pytest.approx([1 / 8, 3 / 8, 4 / 8, 5 / 8, 6 / 8])
    assert curve["selective_risk"].tolist() == pytest.approx([0, 1 / 3, 1 / 4, 2 / 5, 2 / 6])
    assert curve["false_certification_rate"].tolist() == pytest.approx([0, .5, .5, 1, 1])
    assert curve["correct_coverage"].tolist() == pytest.approx([1 / 8, 1 / 8, 2 / 8, 2 / 8, 2 / 8])
    # labelled rows 0, 1, 4, 5, 7 scored 1, 2, top, 4, 3 with top = 4 + 1 (row 4 abstained,
    # correct): errors {2, 4} vs correct {1, 5, 3} win 3 of 6 pairs
    assert auroc_abstain_as_error(ERROR_U, SCORE_U) == pytest.approx(0.5)


def test_pooled_equals_the_hand_values_with_unlabelled_finite_rows():
    population = PooledPopulation(2.0, 0.5)
    chunks = [(ERROR_U[:3], SCORE_U[:3]), (ERROR_U[3:], SCORE_U[3:])]
    for error, score in chunks:
        population.add(error, score)
    for error, score in chunks:
        population.count(error, score)
    got = population.metrics()
    for key, value in unlabelled_expected().items():
        assert got[key] == pytest.approx(value, rel=1e-12), key
    assert got["auroc_abstain_as_error"] == pytest.approx(0.5)


@pytest.mark.parametrize("threshold, accepted", [(1.999, 1), (2.0, 3), (2.001, 3), (0.999, 0),
                                                 (1.0, 1)])
def test_acceptance_is_score_at_most_threshold(threshold, accepted):
    """Scores 1, 2, 2 (one error, one unlabelled at 2): a score equal to the threshold is
    accepted, one just above is not."""
    m = certification_metrics(ERROR_U, SCORE_U, threshold=threshold)
    assert m["n_accepted"] == accepted
    assert m["n_accepted_errors"] == (1 if accepted == 3 else 0)


@pytest.mark.parametrize("max_fcr, expected", [(0.5, 2 / 8), (0.4999, 1 / 8), (0.5001, 2 / 8),
                                               (0.0, 1 / 8), (1.0, 2 / 8)])
def test_fcr_cut_off_is_at_most_max_fcr(max_fcr, expected):
    """Curve FCRs 0, .5, .5, 1, 1 with correct coverage 1/8, 1/8, 2/8, 2/8, 2/8: an FCR equal
    to max_fcr is allowed, so 0.5 reaches 2/8 and 0.4999 stops at 1/8."""
    assert certification_metrics(ERROR_U, SCORE_U, 2.0, max_fcr)["correct_coverage_at_fcr"] == \
        pytest.approx(expected)
    population = PooledPopulation(2.0, max_fcr)
    population.add(ERROR_U, SCORE_U)
    population.count(ERROR_U, SCORE_U)
    assert population.metrics()["correct_coverage_at_fcr"] == pytest.approx(expected)


def test_risk_coverage_tie_between_an_error_and_a_correct_row():
    """An error and a correct row both at 2 enter together: no curve point certifies the
    correct one without the error (a per-row sweep would give a point at risk 0, coverage 2/3)."""
    curve = risk_coverage_curve(np.array([0, 0, 1.0]), np.array([1, 2, 2.0]))
    assert curve["threshold"].tolist() == [1, 2]
    assert curve["coverage"].tolist() == pytest.approx([1 / 3, 1])
    assert curve["selective_risk"].tolist() == pytest.approx([0, 1 / 3])
    assert curve["correct_coverage"].tolist() == pytest.approx([1 / 3, 2 / 3])
    m = certification_metrics(np.array([0, 0, 1.0]), np.array([1, 2, 2.0]), 2.0, max_fcr=0.0)
    assert m["correct_coverage_at_fcr"] == pytest.approx(1 / 3)


def test_curve_without_errors_has_undefined_fcr():
    curve = risk_coverage_curve(np.array([0, 0.0]), np.array([1, 2.0]))
    assert np.isnan(curve["false_certification_rate"].astype(float)).all()
    assert curve["false_certification_rate"].dtype == np.float64


@pytest.mark.parametrize("n", [5, 6, 7])
def test_summary_at_and_below_the_point_count_keeps_every_point(n):
    """Uneven coverage (a tie of 20 rows at score 1) so that an evenly spaced sample would
    drop points: at n = 6 every point is kept, above it at most 6 (first and last kept)."""
    score = np.r_[0.0, np.ones(20), np.arange(2, n)]
    curve = risk_coverage_curve(np.zeros(len(score)), score)
    assert len(curve["threshold"]) == n
    short = summarise_curve(curve, points=6)
    if n <= 6:
        assert short["threshold"] == curve["threshold"].tolist()
    else:
        assert len(short["threshold"]) <= 6
        assert short["threshold"][0] == 0 and short["threshold"][-1] == n - 1


def test_one_class_leaves_auroc_abstain_as_error_undefined():
    assert auroc_abstain_as_error(np.array([1, 1, NAN]), np.array([1.0, NAN, 2.0])) is None
    assert auroc_abstain_as_error(np.array([0, 0.0]), np.array([1.0, 2.0])) is None
    assert auroc_abstain_as_error(np.full(2, NAN), np.array([1.0, 2.0])) is None
    m = certification_metrics(np.array([1, 1.0]), np.array([1.0, 2.0]), 1.5)
    assert m["auroc"] is None and m["auprc"] is None and m["prevalence"] == 1.0


def test_summary_points_are_evenly_spaced_in_coverage():
    """1000 distinct scores: coverage k / 1000. Targets linspace(0.001, 1, 11) =
    0.001 + 0.0999 i; the first curve point at or above each is index ceil(99.9 i) (i >= 1):
    0, 100, 200, ..., 900, then 999."""
    curve = risk_coverage_curve(np.zeros(1000), np.arange(1000.0))
    short = summarise_curve(curve, points=11)
    assert short["threshold"] == [0.0, *range(100, 1000, 100), 999.0]
