"""The ensemble task's building blocks against hand computation, scipy's truncated normal
and Wasserstein distance, and numbers recorded from andi-datasets 2.1.13
(``andi_datasets.utils_challenge``, run in .venv-andi on the same input)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm, truncnorm, wasserstein_distance

import trackverify.andi as A
from trackverify.andi import ensemble as E

TWO_ALPHA = np.array([[0.1, 0.2], [0.3, 0.4]])
TWO_D = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("model, labels, counts", [
    ("dimerization", [0, 1, 1, 1, 2], [1, 3]),       # states 0 and 1
    ("confinement", [1, 2, 2, 2, 0], [3, 1]),        # "f" (2) then "c" (1)
])
def test_extract_ensemble_two_state_models(model, labels, counts):
    out = A.extract_ensemble(np.array(labels), {"model": model, "alphas": TWO_ALPHA,
                                                "Ds": TWO_D})
    assert out.tolist() == [[0.1, 0.3], [0.2, 0.4], [1, 3], [2, 4], counts]


def test_extract_ensemble_single_multi_and_traps():
    single = A.extract_ensemble(np.array([0, 1, 1, 2, 5, 5, 5]),
                                {"model": "single_state", "alphas": [0.1, 0.2], "Ds": [1, 2]})
    assert single.tolist() == [[0.1], [0.2], [1], [2], [7]]  # count = number of points
    three = {"model": "multi_state", "alphas": np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]),
             "Ds": np.array([[1.0, 2], [3, 4], [5, 6]])}
    # state 1 never visited: it keeps count 1
    assert A.extract_ensemble(np.array([0, 0, 2, 2, 2]), three)[4].tolist() == [2, 1, 3]
    full = A.extract_ensemble(np.array([0, 1, 1, 2]), three)
    assert full.tolist() == [[0.1, 0.3, 0.5], [0.2, 0.4, 0.6], [1, 3, 5], [2, 4, 6], [1, 2, 1]]
    # immobile traps: "i" (0) immobile with alpha = D = 0, then "f" (2)
    traps = A.extract_ensemble(np.array([0, 0, 2, 2, 2, 2, 1]),
                               {"model": "immobile_traps", "alphas": [0.1, 0.2], "Ds": [1, 2]})
    assert traps.tolist() == [[0, 0.1], [0, 0.2], [0, 1], [0, 2], [2, 4]]
    with pytest.raises(UnboundLocalError, match="unknown model 'other'"):
        A.extract_ensemble(np.array([0]), {"model": "other", "alphas": TWO_ALPHA, "Ds": TWO_D})


@pytest.mark.parametrize("lower, upper, mean, sd", [
    (0.0, 1.999, 0.7, 0.3),       # both bounds inside the bulk
    (0.0, 1.999, 1.9, 0.05),      # upper bound near the mode
    (5.0, 9.0, 0.0, 1.0),         # right tail: a > 0
    (-40.0, -38.0, 0.0, 1.0),     # far left tail: Phi(b) - Phi(a) underflows
    (38.0, 40.0, 0.0, 1.0),       # far right tail
    (-1.0, 0.0, 0.0, 1.0),        # b = 0 exactly
    (0.0, 1.0, 0.0, 1.0),         # a = 0 exactly
])
def test_truncated_normal_equals_scipy(lower, upper, mean, sd):
    a, b = (lower - mean) / sd, (upper - mean) / sd
    x = np.linspace(lower, upper, 9)
    x = np.concatenate(([lower - 0.1, upper + 0.1], x))  # outside: density 0
    want = truncnorm.pdf(x, a, b, loc=mean, scale=sd)
    np.testing.assert_allclose(E._truncnorm_pdf(x, lower, upper, mean, sd), want, rtol=1e-9)
    assert E._truncnorm_pdf(x, lower, upper, mean, sd)[:2].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(E._truncnorm_cdf(x, lower, upper, mean, sd),
                               truncnorm.cdf(x, a, b, loc=mean, scale=sd), rtol=1e-9, atol=1e-15)


def test_log_mass_is_log_of_the_normal_mass():
    for a, b in ((-1.0, 2.0), (-3.0, -1.0), (0.5, 4.0), (-2.0, 0.0), (0.0, 2.0)):
        assert E._log_mass(a, b) == pytest.approx(np.log(norm.cdf(b) - norm.cdf(a)), rel=1e-12)
    # far tails: log(Phi(-38) - Phi(-40)) = log Phi(-38) + log(1 - Phi(-40) / Phi(-38))
    assert E._log_mass(-40.0, -38.0) == pytest.approx(norm.logcdf(-38.0), rel=1e-12)
    assert E._log_mass(38.0, 40.0) == pytest.approx(norm.logsf(38.0), rel=1e-12)


def test_multimode_dist_by_hand():
    x = np.linspace(0, 2, 5)
    # mode 1: N(0.5, var 0.01) on [0, 2]; mode 2: variance 1e-12 raised to 1e-9, at x = 1.5
    got = A.multimode_dist([[0.5, 0.01], [1.5, 1e-12]], [0.3, 0.7], (0, 2), x)
    want = (0.3 * truncnorm.pdf(x, -5, 15, loc=0.5, scale=0.1)
            + 0.7 * truncnorm.pdf(x, -1.5 / np.sqrt(1e-9), 0.5 / np.sqrt(1e-9), loc=1.5,
                                  scale=np.sqrt(1e-9)))
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert got[3] == pytest.approx(0.7 / np.sqrt(2 * np.pi * 1e-9), rel=1e-9)
    # a scalar weight is one mode; normalized divides by the sum over x
    one = A.multimode_dist([1.0, 0.25], 1, (0, 2), x, normalized=True)
    dens = truncnorm.pdf(x, -2, 2, loc=1, scale=0.5)
    np.testing.assert_allclose(one, dens / dens.sum(), rtol=1e-9)
    assert one.sum() == pytest.approx(1.0, rel=1e-12)
    raw = A.multimode_dist([1.0, 0.25], 1, (0, 2), x)
    np.testing.assert_allclose(raw, dens, rtol=1e-9)
    # min_var applies to the variance: 0.25 < 1 is raised to 1
    np.testing.assert_allclose(A.multimode_dist([1.0, 0.25], 1, (0, 2), x, min_var=1.0),
                               truncnorm.pdf(x, -1, 1, loc=1, scale=1), rtol=1e-9)


def test_distribution_distance_metrics_by_hand():
    p, q = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    assert A.distribution_distance(p, q, metric="mae") == pytest.approx(2 / 3)
    assert A.distribution_distance(p, q, np.array([0.0, 1.0, 3.0])) == 3.0  # all mass moves 3
    # unnormalised weights are normalised: (1, 1) vs (0, 2) moves half the mass by 2
    assert A.distribution_distance(np.array([1.0, 1.0]), np.array([0.0, 2.0]),
                                   np.array([0.0, 2.0])) == 1.0
    assert A.distribution_distance(p, q, np.array([0.0, 1.0, 3.0]), metric="other") is None
    # outside the fast path (unsorted support, a zero-sum weight vector): scipy's definition
    x = np.array([3.0, 0.0, 1.0])
    assert A.distribution_distance(p, q, x) == pytest.approx(
        wasserstein_distance(x, x, p, q), rel=1e-12)
    assert A.distribution_distance(p, q, x) == 2.0
    xs = np.array([0.0, 1.0, 1.0])  # a repeated point is not strictly increasing
    assert A.distribution_distance(p, q, xs) == pytest.approx(1.0, rel=1e-12)


def test_split_weights_by_hand():
    alpha, d, w = E._split(np.array([[0.5, 0.8], [0.01, 0.02], [1.0, 3.0], [0.1, 0.2], [1, 3]]))
    assert alpha.tolist() == [[0.5, 0.01], [0.8, 0.02]]
    assert d.tolist() == [[1.0, 0.1], [3.0, 0.2]]
    assert w.tolist() == [0.25, 0.75]           # counts summing above 1 are normalised
    _, _, w = E._split(np.array([[0.5, 0.8], [0.01, 0.02], [1.0, 3.0], [0.1, 0.2], [0.25, 0.75]]))
    assert w.tolist() == [0.25, 0.75]           # summing to 1: kept
    _, _, w = E._split(np.array([[0.5, 0.8], [0.01, 0.02], [1.0, 3.0], [0.1, 0.2], [0.2, 0.3]]))
    assert w.tolist() == [0.2, 0.3]             # below 1: kept as given
    alpha, d, w = E._split([0.5, 0.01, 1.0, 0.1, 7])
    assert alpha.tolist() == [0.5, 0.01] and d.tolist() == [1.0, 0.1] and w == 1


TRUE = np.array([[0.5, 0.8], [0.01, 0.02], [1.0, 3.0], [0.1, 0.2], [1, 3]])
PRED = np.array([[0.6, 0.8], [0.01, 0.02], [1.5, 3.0], [0.1, 0.2], [2, 2]])


def test_official_ensemble_distance_equals_the_reference():
    before = TRUE.copy(), PRED.copy()
    # andi-datasets 2.1.13, size_support=2000
    assert A.error_Ensemble_dataset(TRUE, PRED, size_support=2000) == pytest.approx(
        (0.0421467634088644, 0.44729087912653415), rel=1e-9)
    assert A.error_Ensemble_dataset(TRUE, PRED, size_support=2000, metric="mae") == \
        pytest.approx((0.17866816394818635, 0.012227909316326465), rel=1e-9)
    one_t, one_p = np.array([0.5, 0.01, 1.0, 0.1, 1.0]), np.array([0.7, 0.02, 2.0, 0.3, 1.0])
    assert A.error_Ensemble_dataset(one_t, one_p, size_support=2000) == pytest.approx(
        (0.20000012028844438, 1.0051501273242835), rel=1e-9)
    assert np.array_equal(TRUE, before[0]) and np.array_equal(PRED, before[1])


def test_corrected_ensemble_distance_by_hand():
    # sigma is a standard deviation; modes 50 sd and more from the bounds. Same weights
    # (1, 3) -> (0.25, 0.75), alpha means shifted by 0.1, D the same: W1 = 0.1 and 0...
    shifted = TRUE.copy()
    shifted[0] += 0.1
    a, d = A.error_Ensemble_dataset(TRUE, shifted, size_support=2000, corrected=True)
    assert a == pytest.approx(0.1, abs=1e-7) and d == pytest.approx(0.0, abs=1e-12)
    # ... the same modes with weights (0.25, 0.75) vs (0.5, 0.5): F_t - F_p =
    # 0.25 (Phi(z_2) - Phi(z_1)) >= 0, whose integral is 0.25 x (mean 2 - mean 1)
    reweighted = TRUE.copy()
    reweighted[4] = [2, 2]
    a, d = A.error_Ensemble_dataset(TRUE, reweighted, size_support=2000, corrected=True)
    assert a == pytest.approx(0.25 * 0.3, abs=1e-7) and d == pytest.approx(0.25 * 2.0, abs=1e-7)
    # one state, sd 0 (raised to sqrt(1e-9)), integer input: a point mass moved by 0.5 and 3
    a, d = A.error_Ensemble_dataset(np.array([1, 0, 2, 0, 1]), np.array([0.5, 0, 5, 0, 1]),
                                    size_support=2000, corrected=True)
    assert a == pytest.approx(0.5, abs=1e-7) and d == pytest.approx(3.0, abs=1e-7)
    # the distributions on the grids: the same as the official ones with sigma squared
    a, d, dists = A.error_Ensemble_dataset(TRUE, shifted, size_support=50, corrected=True,
                                           return_distributions=True)
    assert a == pytest.approx(0.1, abs=1e-7) and len(dists) == 4
    x_alpha = np.linspace(0, 1.999, 50)
    want = A.multimode_dist([[0.5, 0.01 ** 2], [0.8, 0.02 ** 2]], [0.25, 0.75], (0, 1.999),
                            x_alpha)
    np.testing.assert_allclose(dists[0], want, rtol=1e-12)
    assert dists[1].shape == (50,)
    # the corrected mae compares the distributions on the grids
    a_mae, _ = A.error_Ensemble_dataset(TRUE, shifted, size_support=50, corrected=True,
                                        metric="mae")
    want_p = A.multimode_dist([[0.6, 0.01 ** 2], [0.9, 0.02 ** 2]], [0.25, 0.75],
                              (0, 1.999), x_alpha)
    assert a_mae == pytest.approx(np.abs(want - want_p).mean(), rel=1e-12)


def test_corrected_distance_with_a_mean_far_outside_the_bounds():
    # predicted alpha 3 +- 0.01 lies 100 sd above the upper bound 1.999: its truncated
    # normal is piled at 1.999 (both Phi differences underflow; the log-space CDF keeps
    # it); the truth sits entirely below it, so W1 = mean(pred) - mean(true) (scipy)
    true, pred = np.array([0.5, 0.01, 1.0, 0.1, 1.0]), np.array([3.0, 0.01, 1.0, 0.1, 1.0])
    want = (truncnorm.mean(-300, -100.1, loc=3, scale=0.01)
            - truncnorm.mean(-50, 149.9, loc=0.5, scale=0.01))
    a, d = A.error_Ensemble_dataset(true, pred, size_support=200_000, corrected=True)
    assert a == pytest.approx(want, abs=1e-6) and d == pytest.approx(0.0, abs=1e-12)


def test_corrected_distance_normalises_weights_below_1():
    # counts 0.2 and 0.3 (summing to 0.5) are kept as weights; each mixture CDF is
    # divided by their sum, so a shift of every alpha mean by 0.1 is still W1 = 0.1
    true = TRUE.copy()
    true[4] = [0.2, 0.3]
    shifted = true.copy()
    shifted[0] += 0.1
    a, d = A.error_Ensemble_dataset(true, shifted, size_support=2000, corrected=True)
    assert a == pytest.approx(0.1, abs=1e-7) and d == pytest.approx(0.0, abs=1e-12)


def test_distribution_distance_refuses_zero_weights_as_scipy():
    x, q = np.array([0.0, 1.0, 3.0]), np.array([0.0, 0.0, 1.0])
    for p_, q_ in ((np.zeros(3), q), (q, np.zeros(3))):
        with pytest.raises(ValueError, match="sum must be positive"):
            A.distribution_distance(p_, q_, x)


def test_counts_summing_to_2_are_normalised():
    # counts (1, 1) become weights (0.5, 0.5); the mae compares the unnormalised densities,
    # so the weights show (andi-datasets 2.1.13, size_support=2000)
    true, pred = TRUE.copy(), PRED.copy()
    true[4] = pred[4] = [1, 1]
    assert A.error_Ensemble_dataset(true, pred, size_support=2000, metric="mae") == \
        pytest.approx((0.19146095253474013, 0.016329684517743148), rel=1e-9)


def _quad_w1(true, pred, lower, upper):
    """W1 = integral |F_true - F_pred| dx between two truncated normals (mean, sd), by
    scipy's adaptive quadrature on scipy's truncated-normal CDF (independent of the grid)."""
    def cdf(m, s, x):
        return truncnorm.cdf(x, (lower - m) / s, (upper - m) / s, loc=m, scale=s)

    edges = sorted({lower, upper, *(min(max(m + k * s, lower), upper)
                                    for m, s in (true, pred) for k in (-8, -2, 0, 2, 8))})
    return sum(quad(lambda x: abs(cdf(*true, x) - cdf(*pred, x)), a, b, epsabs=1e-13,
                    epsrel=1e-13, limit=200)[0] for a, b in zip(edges[:-1], edges[1:]))


def test_corrected_distance_equals_quadrature_within_its_precision():
    """One state each, equal means, sd 0.1 vs 0.3 (alpha) and 0.1 vs 0.4 (D): the CDFs cross
    at the mean, so the refinement around the modes carries the whole integral on a
    50-point support. Tolerance: the precision _exact_w1 states, 1e-5 x the largest sd."""
    true, pred = np.array([1.0, 0.1, 1.0, 0.1, 1.0]), np.array([1.0, 0.3, 1.0, 0.4, 1.0])
    a, d = A.error_Ensemble_dataset(true, pred, size_support=50, corrected=True)
    assert a == pytest.approx(_quad_w1((1.0, 0.1), (1.0, 0.3), 0.0, 1.999), abs=1e-5 * 0.3)
    assert d == pytest.approx(_quad_w1((1.0, 0.1), (1.0, 0.4), 1e-12, 1e6), abs=1e-5 * 0.4)
