"""Ensemble task: distributions of alpha and D per experiment and their distance."""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr
from scipy.stats import wasserstein_distance

from trackverify.andi.core import BOUND_ALPHA, BOUND_D, LAB_STATE


def extract_ensemble(state_label, dic):
    """Ensemble matrix (5 x states) of a data set: rows mean alpha, sigma alpha, mean D,
    sigma D, counts of each state, from the generating parameters ``dic`` (``model``,
    ``alphas``, ``Ds``) and the per-point ``state_label``.

    For ``multi_state``, a state never visited keeps count 1 (as upstream).
    """
    state_label = np.asarray(state_label)
    model = dic["model"]
    if model == "single_state":
        return np.vstack((dic["alphas"][0], dic["alphas"][1], dic["Ds"][0], dic["Ds"][1],
                          len(state_label)))
    if model == "multi_state":
        states, counts = np.unique(state_label, return_counts=True)
        if len(states) != dic["alphas"].shape[0]:
            counts_corrected = np.ones(dic["alphas"].shape[0])
            counts_corrected[states.astype(int)] = counts
        else:
            counts_corrected = counts
        return np.vstack((dic["alphas"][:, 0], dic["alphas"][:, 1], dic["Ds"][:, 0],
                          dic["Ds"][:, 1], counts_corrected))
    if model == "immobile_traps":
        counts = [int(np.sum(state_label == LAB_STATE.index("i"))),
                  int(np.sum(state_label == LAB_STATE.index("f")))]
        return np.vstack(([0, dic["alphas"][0]], [0, dic["alphas"][1]], [0, dic["Ds"][0]],
                          [0, dic["Ds"][1]], counts))
    if model == "dimerization":
        counts = [int(np.sum(state_label == 0)), int(np.sum(state_label == 1))]
    elif model == "confinement":
        counts = [int(np.sum(state_label == LAB_STATE.index("f"))),
                  int(np.sum(state_label == LAB_STATE.index("c")))]
    else:
        raise UnboundLocalError(f"unknown model {model!r}")
    return np.vstack((dic["alphas"][:, 0], dic["alphas"][:, 1], dic["Ds"][:, 0],
                      dic["Ds"][:, 1], counts))


_LOG_SQRT_2PI = np.log(np.sqrt(2 * np.pi))


def _log_mass(a, b):
    """``log(Phi(b) - Phi(a))`` for ``a <= b`` (elementwise), accurate in both tails: with
    ``(lo, hi) = (a, b)``, or ``(-b, -a)`` when ``a > 0``, it is ``log Phi(hi) +
    log1p(-exp(log Phi(lo) - log Phi(hi)))`` when ``hi <= 0``, else ``log1p(-Phi(lo) -
    Phi(-hi))``; ``-inf`` when ``a = b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    flip = a > 0
    lo, hi = np.where(flip, -b, a), np.where(flip, -a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        la, lb = log_ndtr(lo), log_ndtr(hi)
        out = np.where(hi <= 0, lb + np.log1p(-np.exp(la - lb)),
                       np.log1p(-ndtr(lo) - ndtr(-hi)))
    return float(out) if out.ndim == 0 else out


def _truncnorm_pdf(x, lower, upper, mean, sd):
    """Density of N(mean, sd) truncated to [lower, upper] (``scipy.stats.truncnorm.pdf``)."""
    a, b = (lower - mean) / sd, (upper - mean) / sd
    z = (np.asarray(x, dtype=float) - mean) / sd
    out = np.exp(-z * z / 2 - _LOG_SQRT_2PI - _log_mass(a, b)) / sd
    return np.where((z >= a) & (z <= b), out, 0.0)


def _truncnorm_cdf(x, lower, upper, mean, sd):
    """``exp(log_mass(a, z) - log_mass(a, b))`` with ``z`` clipped to [a, b]: in log space,
    so a mean many sd outside the bounds (both masses below the smallest float) still
    gives the distribution piled at the nearer bound (``scipy.stats.truncnorm.cdf``)."""
    a, b = (lower - mean) / sd, (upper - mean) / sd
    z = np.clip((np.asarray(x, dtype=float) - mean) / sd, a, b)
    return np.exp(_log_mass(a, z) - _log_mass(a, b))


def multimode_dist(params, weights, bound, x, normalized=False, min_var=1e-9):
    """Mixture ``sum_k w_k TN(x; mean_k, var_k, bound)`` of truncated normals on ``x``.

    ``params`` rows are (mean, variance); a variance below ``min_var`` is raised to it. A
    scalar weight means a single mode. ``normalized`` divides by the sum over ``x``.
    """
    dist = np.zeros_like(x)
    lower, upper = bound
    if isinstance(weights, (float, int)):
        params = [params]
        weights = [weights]
    for (mean, var), w in zip(params, weights):
        if var < min_var:
            var = min_var
        dist += w * _truncnorm_pdf(x, lower, upper, mean, np.sqrt(var))
    if normalized:
        dist /= np.sum(dist)
    return dist


def distribution_distance(p, q, x=None, metric="wasserstein"):
    """``mae``: mean |p - q|. ``wasserstein``: W1 between the discrete distributions with
    support ``x`` and weights p, q: ``sum_i (x_{i+1} - x_i) |P_i - Q_i|`` with P, Q the
    normalised cumulative sums (``scipy.stats.wasserstein_distance(x, x, p, q)``)."""
    if metric == "mae":
        return np.abs(p - q).mean()
    if metric != "wasserstein":
        return None
    x = np.asarray(x, dtype=float)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    simple = (x.ndim == 1 and x.size > 1 and np.all(np.diff(x) > 0) and (p >= 0).all()
              and (q >= 0).all() and p.sum() > 0 and q.sum() > 0
              and np.isfinite(p).all() and np.isfinite(q).all())
    if not simple:
        return wasserstein_distance(x, x, p, q)
    P = np.cumsum(p)
    Q = np.cumsum(q)
    return float(np.sum(np.abs(P[:-1] / P[-1] - Q[:-1] / Q[-1]) * np.diff(x)))


def _split(data):
    data = np.array(data, dtype=float)  # a copy: the caller's matrix is never changed
    if data.ndim > 1:
        alpha = np.delete(data, [2, 3, -1], 0)
        d = data[2:-1, :]
        weights = data[-1, :]
        if weights.sum() > 1:
            weights = weights / weights.sum()
        return alpha.T, d.T, weights
    return data[:2], data[2:-1], 1


def _mixture_cdf(params, weights, bound, x):
    lower, upper = bound
    if isinstance(weights, (float, int)):
        params, weights = [params], [weights]
    weights = np.asarray(weights, dtype=float)
    total = np.zeros_like(x)
    for (mean, sd), w in zip(params, weights):
        sd = max(sd, np.sqrt(1e-9))
        total += w * _truncnorm_cdf(x, lower, upper, mean, sd)
    return total / weights.sum()


def _exact_w1(true_params, true_w, pred_params, pred_w, bound, base):
    """W1 = integral |F_true - F_pred| dx between truncated-normal mixtures (sd given),
    by the trapezoid rule on ``base`` refined around every mode: 4001 points on
    ``mean + sd [-10, 10]`` (spacing sd / 200; sd at least sqrt(1e-9)).

    Precision: the trapezoid error is at most about ``h^2 / 12 integral |g''|`` for
    ``g = F_true - F_pred`` (``integral |f'| = 0.8 / sd`` per unit-weight mode, ``h <= sd /
    200`` near it), about ``3e-6 x sd``, plus ``h^2 / 4 |g'|`` at each crossing of the two
    CDFs, where ``|g|`` has a kink; the result is accurate to ``1e-5 x`` the largest sd of
    the two mixtures (tests: against ``scipy.integrate.quad``, and by hand). Beyond 10 sd of
    every mode both CDFs are constant to ``exp(-50)``, so the base grid alone suffices there.
    """
    pts = [base]
    for params in (true_params, pred_params):
        arr = np.atleast_2d(params)
        for mean, sd in arr:
            sd = max(sd, np.sqrt(1e-9))
            pts.append(mean + sd * np.linspace(-10, 10, 4001))
    x = np.unique(np.clip(np.concatenate(pts), bound[0], bound[1]))
    diff = np.abs(_mixture_cdf(true_params, true_w, bound, x)
                  - _mixture_cdf(pred_params, pred_w, bound, x))
    return float(np.sum((diff[1:] + diff[:-1]) * np.diff(x)) / 2)


def error_Ensemble_dataset(true_data, pred_data, size_support=int(1e6), metric="wasserstein",
                           return_distributions=False, *, corrected=False):
    """Distance between true and predicted ensembles (alpha, D) of one experiment.

    Inputs are 5 x states matrices (mean alpha, sigma alpha, mean D, sigma D, counts) or
    5-vectors for one state. Each row pair becomes a truncated-normal mixture weighted by
    the normalised counts, on ``size_support`` points (linear in [0, 1.999] for alpha,
    logarithmic in [1e-12, 1e6] for D), and the distance is ``distribution_distance``.

    Official: the sigma rows are used as variances, and the D distance depends on
    ``size_support`` (the log grid weights points by density, not by measure).
    ``corrected=True``: sigma is a standard deviation, and the Wasserstein distances are
    ``integral |F_true - F_pred| dx`` between the continuous mixtures (independent of the
    support size). Inputs are never modified and may be integer.
    """
    x_alpha = np.linspace(BOUND_ALPHA[0], BOUND_ALPHA[1], size_support)
    x_D = np.logspace(np.log10(BOUND_D[0]), np.log10(BOUND_D[1]), size_support)
    parts = [_split(true_data), _split(pred_data)]
    dists = []
    for alpha, d, w in (parts if (return_distributions or not corrected
                                  or metric != "wasserstein") else []):
        for info, bound, x in ((alpha, BOUND_ALPHA, x_alpha), (d, BOUND_D, x_D)):
            params = np.array(info, dtype=float)
            if corrected:
                params[..., 1] = params[..., 1] ** 2
            dists.append(multimode_dist(params if params.ndim > 1 else params.tolist(), w,
                                        bound=bound, x=x))
    if corrected and metric == "wasserstein":
        (ta, td, tw), (pa, pd_, pw) = parts
        distance_alpha = _exact_w1(ta, tw, pa, pw, BOUND_ALPHA, x_alpha)
        distance_D = _exact_w1(td, tw, pd_, pw, BOUND_D, x_D)
    else:
        distance_alpha = distribution_distance(dists[0], dists[2], x=x_alpha, metric=metric)
        distance_D = distribution_distance(dists[1], dists[3], x=x_D, metric=metric)
    if return_distributions:
        return distance_alpha, distance_D, dists
    return distance_alpha, distance_D
