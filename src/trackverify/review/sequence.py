"""The review order and an anytime-valid confidence sequence for the error rate.

**The order** (:func:`stratum_sequence`, written by ``trackverify audit sample``). Row ``t``
of ``review.csv`` belongs to stratum ``h_t``, drawn from the design's shares ``s_h`` (the
allocation's ``n_h / n``) among the strata that still have an unsampled observation:
``P(h_t = h | rows before t) = pi_{h,t} = s_h 1[R_{h,t} > 0] / sum_g s_g 1[R_{g,t} > 0]``,
``R_{h,t}`` the observations of ``h`` not yet in rows ``1..t-1``. Within a stratum the rows
come in a uniformly random order without replacement. The whole order is drawn from the seed
before any decision, so every prefix of ``review.csv`` is itself a sample of this design, and
a row's position says nothing of its stratum.

**The sequence** (:func:`sequence_bounds`). For a population ``P`` (a set of strata of sizes
``N_h``, ``N_P = sum N_h``; ``all``, ``certified`` or one recording), its error rate ``mu``
and a row ``t`` of a stratum of ``P`` (rows of other strata leave it unchanged; among ``P``'s
rows, ``pi_{h,t}`` is renormalised over ``P``'s strata), with ``x_t`` in {0, 1} (1 = wrong)::

    w_h   = R_{h,t} / N_P                       share of P left unsampled in stratum h
    c_h   = (S_{h,t} + a r_h) / (n_{h,t} + a)   rate of h so far (S errors of n rows before t;
                                                prior weight a = 1 at the planning rate r_h)
    Y_t   = sum_h w_h c_h + w_{h_t} (x_t - c_{h_t}) / pi_{h_t,t}
    m_t   = mu - S_t / N_P                      S_t: errors of P in rows before t

``E[Y_t | rows before t] = sum_h w_h (K_h - S_{h,t}) / R_{h,t} = m_t`` exactly (inverse
probability weighting over the stratum draw, with ``c_h`` as control variates, and the
without-replacement mean of what is left: Waudby-Smith & Ramdas 2020, "Confidence sequences
for sampling without replacement"; Waudby-Smith et al. 2023 for the weighting), so for any
predictable ``lambda_t >= 0`` the capitals::

    K+_t(mu) = prod_{i<=t} (1 + lambda+_i (Y_i - m_i)),   K-_t(mu) = prod (1 - lambda-_i (Y_i - m_i))

are nonnegative martingales at the true rate, and by Ville's inequality
``P(exists t: K+_t >= 2/alpha or K-_t >= 2/alpha) <= alpha``. The bets (Waudby-Smith & Ramdas,
JRSS-B 2023, hedged capital, predictable plug-in): ``lambda = sqrt(2 log(2/alpha) /
(v_t n_P))``, ``v_t = sum_h w_h^2 c_h (1 - c_h) / pi_{h,t}`` (the variance of ``Y_t`` the
rates so far predict), ``n_P`` the design's rows in P (the sequence is narrowest there),
truncated to ``lambda+ <= 3/4 / (m_t - L_t)`` and ``lambda- <= 3/4 / (U_t - m_t)`` with
``L_t``, ``U_t`` the smallest and largest value ``Y_t`` can take: every factor stays
``>= 1/4``, ``K+`` falls and ``K-`` rises with ``mu``, so each set below is an interval.

The confidence sequence at row ``t`` (running intersection)::

    low_t  = max(sup {mu: max_{s<=t} K+_s(mu) >= 2/alpha},  wrong_t / N_P)
    high_t = min(inf {mu: max_{s<=t} K-_s(mu) >= 2/alpha},  1 - correct_t / N_P)

the second terms being what the rows reviewed already settle (each end is kept within
``[wrong_t / N_P, 1 - correct_t / N_P]``, so a census gives the exact rate). The one-sided upper bound is ``high_t`` at ``1/alpha``. ``unsure`` (and a row left
undecided before the last decided one) is counted correct for ``low`` and wrong for
``high``: each end is then the sequence of a population in which those rows are correct
(resp. wrong), whose rate is below (resp. above) the true one.
"""

from __future__ import annotations

import numpy as np

ALPHA = 0.05
#: Largest share of the capital one row may risk (truncation of the bets).
TRUNCATION = 0.75
#: Weight of the planning rate in each stratum's running rate ``c_h``.
PRIOR_WEIGHT = 1.0
_STEPS = 52  # bisection steps over [0, 1]: 2^-52, the float spacing near 1


def stratum_sequence(sizes, share, n: int, rng: np.random.Generator) -> np.ndarray:
    """The strata of ``n`` review rows (module docstring): each row's stratum drawn with
    probability ``share`` among the strata not yet exhausted (``sizes``).

    Drawn by rejection: a stream of independent draws from ``share`` in which the draws of a
    stratum beyond its size are skipped (a skipped draw's stratum is exhausted, so the kept
    draws have exactly the conditional law above).

    >>> stratum_sequence([2, 5], [0.5, 0.5], 7, np.random.default_rng(0)).tolist()
    [1, 0, 0, 1, 1, 1, 1]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    share = np.asarray(share, dtype=float)
    if n > sizes.sum():
        raise ValueError(f"{n} rows from {int(sizes.sum())} observations")
    cumulative = np.cumsum(share / share.sum())
    kept, stream = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    while len(kept) < n:
        more = max(n, len(stream))  # the stream doubles until n draws are kept
        draws = np.minimum(np.searchsorted(cumulative, rng.random(more), side="right"),
                           len(sizes) - 1)
        stream = np.concatenate([stream, draws])
        rank = occurrence_rank(stream, len(sizes))
        kept = stream[rank < sizes[stream]]
    return kept[:n]


def occurrence_rank(codes: np.ndarray, H: int) -> np.ndarray:
    """Each element's count of earlier equal elements along the last axis."""
    onehot = codes[..., None] == np.arange(H)
    return np.take_along_axis(np.cumsum(onehot, axis=-2) - onehot, codes[..., None], -1)[..., 0]


def step_terms(codes, values, sizes, share, rates, member, horizon: float,
               alpha: float = ALPHA) -> dict[str, np.ndarray]:
    """The predictable terms of the sequence for population ``member`` (module docstring).

    ``codes`` (..., T): each row's stratum; ``values`` (..., T): 1 wrong, 0 correct (an
    unsure row given the value of the end being computed); ``sizes``, ``share``, ``rates``,
    ``member`` (H,): stratum sizes, design shares, planning rates and membership of the
    population; ``horizon``: the design's rows (``n``). Returns ``Y``, ``L``, ``U``, ``m0``
    (``S_t / N_P``), ``lam`` (0 on rows outside the population) and ``inside``, each (..., T).
    """
    codes = np.asarray(codes, dtype=np.int64)
    x = np.asarray(values, dtype=float)
    sizes, share = np.asarray(sizes, dtype=float), np.asarray(share, dtype=float)
    rates, member = np.asarray(rates, dtype=float), np.asarray(member, dtype=bool)
    H, total = len(sizes), sizes[member].sum()
    onehot = codes[..., None] == np.arange(H)
    inside = member[codes]
    before = np.cumsum(onehot, axis=-2) - onehot
    found = np.cumsum(onehot * x[..., None], axis=-2) - onehot * x[..., None]
    left = sizes - before
    alive = (left > 0) & member
    pi = np.where(alive, share, 0.0)
    pi = pi / np.maximum(pi.sum(-1, keepdims=True), 1e-300)
    c = (found + PRIOR_WEIGHT * rates) / (before + PRIOR_WEIGHT)
    w = np.where(member, left / total, 0.0)
    base = (w * c).sum(-1)
    safe_pi = np.where(alive, pi, 1.0)

    def at_row(a):
        return np.take_along_axis(a, codes[..., None], -1)[..., 0]

    Y = np.where(inside, base + at_row(w) * (x - at_row(c)) / at_row(safe_pi), 0.0)
    L = np.where(alive, base[..., None] - w * c / safe_pi, np.inf).min(-1)
    U = np.where(alive, base[..., None] + w * (1 - c) / safe_pi, -np.inf).max(-1)
    v = np.where(alive, w**2 * c * (1 - c) / safe_pi, 0.0).sum(-1)
    wrong = np.cumsum(x * inside, axis=-1) - x * inside
    rows_in = horizon * share[member].sum() / share.sum()
    lam = np.where(inside, np.sqrt(2 * np.log(2 / alpha) / np.maximum(v * rows_in, 1e-300)), 0.0)
    return {"Y": Y, "L": np.where(inside, L, 0.0), "U": np.where(inside, U, 0.0),
            "m0": wrong / total, "lam": lam, "inside": inside}


def log_capital(terms: dict, mu, side: int, until=None) -> np.ndarray:
    """``max_{s <= until} log K_s(mu)`` for ``side`` +1 (``K+``) or -1 (``K-``); ``mu`` and
    ``until`` (the last row counted, 0-based; default every row) of shape (...)."""
    m = np.asarray(mu, dtype=float)[..., None] - terms["m0"]
    Y, lam, inside = terms["Y"], terms["lam"], terms["inside"]
    if until is not None:
        inside = inside & (np.arange(Y.shape[-1]) <= np.asarray(until)[..., None])
    with np.errstate(divide="ignore", invalid="ignore"):
        if side > 0:
            gap = m - terms["L"]
            bet = np.where(gap > 0, np.minimum(lam, TRUNCATION / gap), lam)
            step = np.log1p(bet * (Y - m))
        else:
            gap = terms["U"] - m
            bet = np.where(gap > 0, np.minimum(lam, TRUNCATION / gap), lam)
            step = np.log1p(-bet * (Y - m))
    running = np.cumsum(np.where(inside, step, 0.0), axis=-1)
    return np.maximum(running.max(-1), 0.0)


def _boundary(terms: dict, side: int, threshold: float, until, shape) -> np.ndarray:
    """``sup {mu: capital+ >= threshold}`` (side +1, 0 when none) or ``inf {mu: capital- >=
    threshold}`` (side -1, 1 when none) by bisection over [0, 1]."""
    low, high = np.zeros(shape), np.ones(shape)
    for _ in range(_STEPS):
        mid = (low + high) / 2
        rejected = log_capital(terms, mid, side, until) >= threshold
        if side > 0:
            low, high = np.where(rejected, mid, low), np.where(rejected, high, mid)
        else:
            low, high = np.where(rejected, low, mid), np.where(rejected, mid, high)
    return low if side > 0 else high


def sequence_bounds(codes, wrong, unsure, sizes, share, rates, member, horizon: float,
                    until=None, alpha: float = ALPHA) -> dict[str, np.ndarray]:
    """The confidence sequence of population ``member`` after row ``until`` (0-based,
    default the last row; module docstring): ``low``, ``high`` (two-sided ``1 - alpha``) and
    ``upper`` (one-sided ``1 - alpha``), each of shape (...).

    ``codes``, ``wrong``, ``unsure`` (..., T): each row's stratum, and whether it was decided
    wrong or unsure (undecided rows before ``until`` are passed as unsure). Other arguments
    as :func:`step_terms`.

    >>> b = sequence_bounds([0, 0, 0], [1, 0, 1], [0, 0, 0], [3], [1.0], [0.5], [True], 3)
    >>> float(b["low"]), float(b["high"])  # a census: the rate itself
    (0.6666666666666666, 0.6666666666666666)
    """
    wrong = np.asarray(wrong, dtype=float)
    unsure = np.asarray(unsure, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    shape = codes.shape[:-1]
    T = codes.shape[-1]
    until = np.full(shape, T - 1) if until is None else np.asarray(until)
    counted = np.asarray(member, dtype=bool)[codes] & (np.arange(T) <= until[..., None])
    total = np.asarray(sizes, dtype=float)[np.asarray(member, dtype=bool)].sum()
    settled_low = (wrong * counted).sum(-1) / total
    settled_high = (total - ((1 - wrong - unsure) * counted).sum(-1)) / total
    as_correct = step_terms(codes, wrong, sizes, share, rates, member, horizon, alpha)
    as_wrong = step_terms(codes, wrong + unsure, sizes, share, rates, member, horizon, alpha)
    two = np.log(2 / alpha)
    low = np.clip(_boundary(as_correct, +1, two, until, shape), settled_low, settled_high)
    high = np.clip(_boundary(as_wrong, -1, two, until, shape), settled_low, settled_high)
    upper = np.clip(_boundary(as_wrong, -1, np.log(1 / alpha), until, shape), settled_low,
                    settled_high)
    return {"low": low, "high": high, "upper": upper}


def ever_excludes(codes, wrong, sizes, share, rates, member, horizon: float, truth,
                  alpha: float = ALPHA) -> np.ndarray:
    """Whether the two-sided sequence excludes ``truth`` at some row (…): its capital at
    the true rate reaches ``2 / alpha`` on either side (the settled bounds never exclude it)."""
    terms = step_terms(codes, wrong, sizes, share, rates, member, horizon, alpha)
    two = np.log(2 / alpha)
    return ((log_capital(terms, truth, +1) >= two) | (log_capital(terms, truth, -1) >= two))
