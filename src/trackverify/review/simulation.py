"""Seeded coverage simulation of the review design (benchmarks/error_rate_coverage.py, tests).

A population of strata with sizes ``N_h`` and true wrong counts ``K_h`` is sampled by the
design's allocation ``n_h`` without replacement: the errors found are hypergeometric
``x_h ~ H(N_h, K_h, n_h)``, drawn for every draw at once by ``Generator(PCG64(seed))``.
"""

from __future__ import annotations

import numpy as np

from trackverify.review.estimate import stratified_interval
from trackverify.review.sequence import (occurrence_rank, ever_excludes, sequence_bounds,
                                               stratum_sequence)


def simulate(N, K, n, draws: int, seed: int) -> dict:
    """Coverage of the two-sided interval, share of draws whose one-sided bound holds, mean
    half-width and mean one-sided bound, for the true rate ``sum K / sum N``."""
    N, K, n = (np.asarray(a, dtype=np.int64) for a in (N, K, n))
    rng = np.random.Generator(np.random.PCG64(seed))
    x = rng.hypergeometric(K, N - K, n, size=(draws, len(N)))
    out = stratified_interval(np.broadcast_to(N, x.shape), np.broadcast_to(n, x.shape), x)
    truth = K.sum() / N.sum()
    return {"true_rate": float(truth),
            "coverage": float(np.mean((out["low"] <= truth) & (truth <= out["high"]))),
            "upper_coverage": float(np.mean(truth <= out["upper"])),
            "mean_half_width": float(np.mean((out["high"] - out["low"]) / 2)),
            "mean_upper": float(np.mean(out["upper"]))}


def draw_reviews(N, K, share, rows: int, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` reviews of ``rows`` rows in the order of ``trackverify audit sample``
    (:func:`~trackverify.review.sequence.stratum_sequence`, then each stratum's rows
    without replacement) from strata of sizes ``N`` holding ``K`` wrong observations each:
    the rows' strata and values (1 wrong), each (draws, rows)."""
    N, K = np.asarray(N, dtype=np.int64), np.asarray(K, dtype=np.int64)
    rng = np.random.Generator(np.random.PCG64(seed))
    codes = np.stack([stratum_sequence(N, share, rows, rng) for _ in range(draws)])
    rank = occurrence_rank(codes, len(N))
    values = np.zeros(codes.shape, dtype=np.int8)
    for h in range(len(N)):
        need = int((codes == h).sum(1).max())
        # each draw's first `need` observations of stratum h in a uniform order: wrong if < K_h
        found = np.stack([rng.choice(N[h], need, replace=False) < K[h] for _ in range(draws)])
        here = codes == h
        values[here] = found[np.nonzero(here)[0], rank[here]]
    return codes, values


def simulate_sequence(N, K, share, rates, member, rows: int, draws: int, seed: int,
                      at=(), horizon: float | None = None) -> dict:
    """Seeded reviews of the design (:func:`draw_reviews`, ``rows`` rows each, the sequence
    tuned to ``horizon`` rows, default ``rows``) for population ``member``: the share of
    reviews whose confidence sequence ever excludes the true rate, and the mean half-width
    and bounds after each number of rows in ``at``."""
    N, K = np.asarray(N, dtype=np.int64), np.asarray(K, dtype=np.int64)
    member = np.asarray(member, dtype=bool)
    horizon = rows if horizon is None else horizon
    codes, values = draw_reviews(N, K, share, rows, draws, seed)
    truth = K[member].sum() / N[member].sum()
    args = (N, share, rates, member, horizon)
    missed = ever_excludes(codes, values, *args, np.full(draws, truth))
    out = {"true_rate": float(truth), "ever_excludes": float(missed.mean()), "at": {}}
    for t in at:
        b = sequence_bounds(codes, values, np.zeros_like(values), *args,
                            until=np.full(draws, t - 1))
        out["at"][int(t)] = {"half_width": float(np.mean((b["high"] - b["low"]) / 2)),
                             "covers": float(np.mean((b["low"] <= truth) & (truth <= b["high"])))}
    return out
