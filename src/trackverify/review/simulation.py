"""Seeded coverage simulation of the review design (benchmarks/error_rate_coverage.py, tests).

A population of strata with sizes ``N_h`` and true wrong counts ``K_h`` is sampled by the
design's allocation ``n_h`` without replacement: the errors found are hypergeometric
``x_h ~ H(N_h, K_h, n_h)``, drawn for every draw at once by ``Generator(PCG64(seed))``.
"""

from __future__ import annotations

import numpy as np

from trackverify.review.estimate import stratified_interval


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
