"""Certification metrics, hand-computed (SPEC section 6)."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.selective import certification_metrics, risk_coverage_curve, summarise_curve

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
