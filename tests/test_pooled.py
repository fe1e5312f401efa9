"""Two-pass pooled metrics equal the in-memory definitions (selective.py, scikit-learn)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trackverify.benchmark.pooled import CohortPool, PooledPopulation
from trackverify.benchmark.selective import auroc_abstain_as_error, certification_metrics, risk_coverage_curve

EXACT = ("n_rows", "n_labelled", "n_errors", "n_abstained", "n_labelled_abstained", "n_accepted",
         "n_accepted_errors", "n_accepted_correct")
RATES = ("prevalence", "auroc", "auprc", "certified_coverage", "selective_risk",
         "false_certification_rate", "correct_certified_coverage", "correct_coverage_at_fcr")


def same(got, expected, error=None, score=None):
    if error is not None:
        reference = auroc_abstain_as_error(error, score)
        assert (got["auroc_abstain_as_error"] is None) == (reference is None)
        if reference is not None:
            assert got["auroc_abstain_as_error"] == pytest.approx(reference, rel=1e-12)
    for key in EXACT:
        assert got[key] == expected[key], key
    for key in RATES:
        if expected[key] is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-15), key


def pooled(chunks, threshold, max_fcr=0.01):
    population = PooledPopulation(threshold, max_fcr)
    for error, score in chunks:
        population.add(error, score)
    for error, score in reversed(chunks):  # pass 2 in any order
        population.count(error, score)
    return population.metrics()


def chunk(rng, n, prevalence=0.05, ties=False):
    """Rows 1/0/NaN-labelled; unlabelled rows keep a finite score (as in a run, where a row
    without an anchor is unlabelled but still scored), and 3 % of all rows abstain."""
    error = (rng.random(n) < prevalence).astype(float)
    score = rng.gamma(2.0, 1.0, n) + 2.0 * error
    error[rng.random(n) < 0.05] = np.nan
    if ties:
        score = np.round(score, 1)
    score[rng.random(n) < 0.03] = np.nan
    return error, score


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("max_fcr", [0.01, 0.2, 0.5])
def test_pooled_equals_in_memory(ties, max_fcr):
    rng = np.random.default_rng(3)
    chunks = [chunk(rng, n, ties=ties) for n in (500, 2000, 37, 1200)]
    error = np.concatenate([e for e, _ in chunks])
    score = np.concatenate([s for _, s in chunks])
    unlabelled = np.isnan(error)
    assert (unlabelled & np.isfinite(score) & (score <= 2.5)).sum() > 10  # accepted, no label
    assert (unlabelled & np.isfinite(score) & (score > 2.5)).sum() > 10
    assert (unlabelled & np.isnan(score)).any() and (~unlabelled & np.isnan(score)).any()
    same(pooled(chunks, 2.5, max_fcr), certification_metrics(error, score, 2.5, max_fcr), error, score)


def test_curve_points_are_exact_points_of_the_full_curve():
    rng = np.random.default_rng(5)
    chunks = [chunk(rng, 3000) for _ in range(3)]
    got = pooled(chunks, 2.5)["risk_coverage"]
    error = np.concatenate([e for e, _ in chunks])
    score = np.concatenate([s for _, s in chunks])
    finite = np.isfinite(score)
    for t, coverage, risk, correct in zip(got["threshold"], got["coverage"], got["selective_risk"],
                                          got["correct_coverage"]):
        accepted = finite & (score <= t)
        assert coverage == pytest.approx(accepted.sum() / len(score))
        assert risk == pytest.approx((accepted & (error == 1)).sum() / accepted.sum())
        assert correct == pytest.approx((accepted & (error == 0)).sum() / len(score))
    assert 50 <= len(got["threshold"]) <= 101
    assert len(risk_coverage_curve(error, score)["threshold"]) > 101


def test_undefined_cases():
    no_errors = pooled([(np.zeros(5), np.arange(5.0))], 2.0)
    assert no_errors["auroc"] is None and no_errors["false_certification_rate"] is None
    assert no_errors["correct_coverage_at_fcr"] is None
    nothing = pooled([(np.array([0.0, 1.0]), np.full(2, np.nan))], 2.0)
    assert nothing["selective_risk"] is None and nothing["certified_coverage"] == 0.0
    assert nothing["correct_coverage_at_fcr"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.0, 1.0, np.nan]),
                                   st.one_of(st.integers(0, 6).map(float), st.just(np.nan))),
                         min_size=1, max_size=30), min_size=1, max_size=4),
       st.floats(0, 6), st.sampled_from([0.0, 0.01, 0.3, 1.0]))
def test_pooled_equals_in_memory_on_any_small_population(raw, threshold, max_fcr):
    chunks = [tuple(map(np.array, zip(*rows))) for rows in raw]
    error = np.concatenate([e for e, _ in chunks])
    score = np.concatenate([s for _, s in chunks])
    same(pooled(chunks, threshold, max_fcr), certification_metrics(error, score, threshold, max_fcr),
         error, score)


def test_cohort_pool_spills_and_recovers_every_population(tmp_path):
    rng = np.random.default_rng(11)
    pool = CohortPool(2.5, 0.2, str(tmp_path))
    parts = []
    for n in (800, 1500):
        error, score = chunk(rng, n)
        other = score + rng.normal(size=n)
        codes = rng.integers(0, 3, n).astype(np.int8)
        parts.append((error, score, other, codes))
        pool.add(error, {"a": score, "b": other}, codes, {("a", "c1"): (1,), ("a", "all"): (0, 1, 2),
                                                          ("b", "c12"): (1, 2)})
    populations = pool.finish()
    error = np.concatenate([p[0] for p in parts])
    codes = np.concatenate([p[3] for p in parts])
    for (verifier, name), included in {("a", "c1"): (1,), ("a", "all"): (0, 1, 2), ("b", "c12"): (1, 2)}.items():
        score = np.concatenate([p[1] if verifier == "a" else p[2] for p in parts])
        mask = np.isin(codes, included)
        got = populations[verifier, name].metrics()
        same(got, certification_metrics(error[mask], score[mask], 2.5, 0.2), error[mask], score[mask])
        assert got["threshold"] == 2.5 and got["max_false_certification_rate"] == 0.2
        # every curve point is exact, unlabelled rows included (spilled and read back)
        e, sc = error[mask], score[mask]
        finite = np.isfinite(sc)
        n_errors = int((e == 1).sum())
        curve = got["risk_coverage"]
        for t, coverage, risk, fcr in zip(curve["threshold"], curve["coverage"],
                                          curve["selective_risk"],
                                          curve["false_certification_rate"], strict=True):
            accepted = finite & (sc <= t)
            assert coverage == pytest.approx(accepted.sum() / len(sc))
            assert risk == pytest.approx((accepted & (e == 1)).sum() / accepted.sum())
            assert fcr == pytest.approx((accepted & (e == 1)).sum() / n_errors)


def scored(error, score):
    population = PooledPopulation(1.0, 0.01)
    population.add(np.asarray(error, float), np.asarray(score, float))
    population.count(np.asarray(error, float), np.asarray(score, float))
    population.metrics()
    return population


def test_detection_curves_by_hand():
    """Errors scored 1 and 3, correct rows 0 and 1 (a tie at 1), one unlabelled and one
    abstained row (ignored). At the error scores, descending: 3 -> TP 1, FP 0; 1 -> TP 2,
    FP 1 (the correct row at 1 counts). ROC as a staircase from (0, 0) to (1, 1)."""
    from trackverify.benchmark.pooled import detection_curves

    population = scored([1, 1, 0, 0, np.nan, 0], [1, 3, 0, 1, 0.5, np.nan])
    curves = detection_curves(population)
    assert curves["recall"] == [0.5, 1.0]
    assert curves["precision"] == pytest.approx([1.0, 2 / 3])
    assert curves["fpr"] == [0.0, 0.0, 0.0, 0.5, 0.5, 1.0]
    assert curves["tpr"] == [0.0, 0.0, 0.5, 0.5, 1.0, 1.0]
    assert curves["prevalence"] == 0.5  # 2 errors, 2 correct rows with a finite score
    # the same points as scikit-learn's PR curve at those thresholds
    from sklearn.metrics import precision_recall_curve

    precision, recall, thresholds = precision_recall_curve([1, 1, 0, 0], [1, 3, 0, 1])
    at = {t: (p, r) for p, r, t in zip(precision, recall, thresholds)}
    assert [at[3.0][1], at[1.0][1]] == curves["recall"]
    assert [at[3.0][0], at[1.0][0]] == pytest.approx(curves["precision"])


def test_detection_curves_thin_and_undefined():
    from trackverify.benchmark.pooled import detection_curves

    population = scored([1, 1, 1, 0], [1, 2, 3, 0])  # error scores 3, 2, 1: three points
    assert detection_curves(population, max_points=2)["recall"] == pytest.approx([1 / 3, 1.0])
    assert len(detection_curves(population)["recall"]) == 3
    assert detection_curves(scored([0, 0], [1, 2])) is None       # no errors
    assert detection_curves(scored([1, 1], [1, 2])) is None       # no correct row


def test_pooled_curve_without_errors_and_reported_settings():
    population = PooledPopulation(1.5)
    error, score = np.zeros(3), np.array([1.0, 2.0, 3.0])
    population.add(error, score)
    population.count(error, score)
    m = population.metrics()
    assert m["threshold"] == 1.5 and m["max_false_certification_rate"] == 0.01  # the default
    curve = m["risk_coverage"]
    assert set(curve) == {"threshold", "coverage", "selective_risk", "false_certification_rate",
                          "correct_coverage"}
    assert curve["false_certification_rate"] == [None] * len(curve["threshold"])
    assert curve["coverage"][-1] == 1.0 and curve["correct_coverage"][-1] == 1.0


def test_curve_of_one_chunk_of_101_scores_sits_at_every_score():
    """Scores 0, 1, ..., 100 in one chunk, the row scored 50 an error, the row scored 7
    unlabelled. The sketch holds the 101 quantiles 0..100 (weight 1 each), so the 101
    curve points at coverage k / 100 fall on the scores themselves: threshold k accepts the
    k + 1 rows scored 0..k (np.quantile may land a rounding error above k). At 49 no error is accepted (risk 0, FCR 0); at 50 the error is
    (risk 1 / 51, FCR 1) -- an error exactly at a threshold counts as accepted."""
    score = np.arange(101.0)
    error = (score == 50).astype(float)
    error[7] = np.nan
    population = PooledPopulation(10.0)
    population.add(error, score)
    population.count(error, score)
    curve = population.metrics()["risk_coverage"]
    assert curve["threshold"] == pytest.approx(range(101), abs=1e-9)  # quantiles, rounded
    assert curve["coverage"][49] == 50 / 101 and curve["coverage"][50] == 51 / 101
    assert curve["selective_risk"][49] == 0.0 and curve["selective_risk"][50] == 1 / 51
    assert curve["false_certification_rate"][49] == 0.0
    assert curve["false_certification_rate"][50] == 1.0
    assert curve["correct_coverage"][50] == 49 / 101  # rows 0..50 less the error and row 7


def test_population_without_rows_or_without_finite_scores():
    """No chunk at all: every rate is undefined and the curve is empty. Only abstained
    rows: no curve point either (a threshold needs a finite score to sit at)."""
    empty = PooledPopulation(1.0).metrics()
    assert empty["n_rows"] == 0 and empty["auroc"] is None and empty["auprc"] is None
    assert empty["certified_coverage"] is None and empty["correct_coverage_at_fcr"] is None
    assert empty["risk_coverage"]["threshold"] == []
    abstained = pooled([(np.array([0.0, 1.0, np.nan]), np.full(3, np.nan))], 1.0)
    assert abstained["risk_coverage"]["threshold"] == []
    assert abstained["risk_coverage"]["coverage"] == []


def test_detection_curves_with_tied_error_scores():
    """Errors scored 0.9, 0.9 and 0.5, correct rows 0.1 and 0.6. Descending error scores:
    0.9 -> TP 2, FP 0; 0.5 -> TP 3, FP 1 (the correct row at 0.6)."""
    from trackverify.benchmark.pooled import detection_curves

    curves = detection_curves(scored([1, 1, 1, 0, 0], [0.9, 0.9, 0.5, 0.1, 0.6]))
    assert curves["recall"] == pytest.approx([2 / 3, 1.0])
    assert curves["precision"] == pytest.approx([1.0, 3 / 4])
    assert curves["fpr"] == [0.0, 0.0, 0.0, 0.5, 0.5, 1.0]
    assert curves["tpr"] == pytest.approx([0.0, 0.0, 2 / 3, 2 / 3, 1.0, 1.0])
    assert curves["positives"] == 3 and curves["negatives"] == 2
    assert curves["prevalence"] == 3 / 5


def test_detection_curves_keep_400_points_by_default():
    """401 distinct error scores: the default thinning keeps 400 of them (rounded
    linspace(0, 400, 400) steps by more than 1, so no two points merge)."""
    from trackverify.benchmark.pooled import detection_curves

    error = np.r_[np.ones(401), 0.0]
    score = np.r_[np.arange(1.0, 402.0), 0.0]
    curves = detection_curves(scored(error, score))
    assert len(curves["recall"]) == 400
    assert len(detection_curves(scored(error, score), max_points=401)["recall"]) == 401
