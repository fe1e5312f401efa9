"""Intervals by experimental unit: a seeded cluster bootstrap over animals (SPEC section 6).

A rate pooled over a cohort is ``R = sum_a n_a / sum_a d_a`` (numerator ``n_a`` and
denominator ``d_a`` summed over each animal ``a``'s rows, e.g. accepted errors over
accepted rows). Its interval resamples *animals*, never frames or rows:

1. ``K`` animals (``K >= min_animals``, default 5; fewer gives ``ci = None`` and a reason).
2. ``B`` replicates, all drawn at once: ``I = rng.integers(0, K, size=(B, K))`` is a
   ``B x K`` matrix of drawn animals (``K`` animals with replacement per replicate), with
   ``rng = numpy.random.Generator(PCG64(seed))``.
3. Replicate rates ``R_b = sum_j n[I[b, j]] / sum_j d[I[b, j]]``; replicates whose drawn
   animals have a zero denominator are undefined and dropped (their count is reported).
4. The ``level`` percentile interval: the ``(1 - level) / 2`` and ``(1 + level) / 2``
   quantiles of the defined ``R_b`` (``numpy.quantile``, linear interpolation).

The interval describes animal-to-animal variation of the pooled rate; it is not a
guarantee for a new laboratory or preparation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError, InputError

DEFAULT_REPLICATES = 2000
DEFAULT_LEVEL = 0.95
MIN_ANIMALS = 5
DEFAULT_SEED = 20261007
METHOD = "cluster bootstrap over animals (percentile)"


def animal_bootstrap_interval(numerators, denominators, *, seed: int = DEFAULT_SEED,
                              replicates: int = DEFAULT_REPLICATES, level: float = DEFAULT_LEVEL,
                              min_animals: int = MIN_ANIMALS) -> dict[str, Any]:
    """Percentile interval of ``sum(n) / sum(d)`` by resampling animals (module docstring).

    ``numerators[a]`` and ``denominators[a]`` are animal ``a``'s summed counts. Returns
    ``{"estimate", "ci", "level", "method", "animals", "replicates",
    "undefined_replicates", "seed", "reason"}``; ``estimate`` is None when the pooled
    denominator is 0, ``ci`` is None (with ``reason``) with fewer than ``min_animals``
    animals or no defined replicate.
    """
    n = np.asarray(numerators, dtype=np.float64).ravel()
    d = np.asarray(denominators, dtype=np.float64).ravel()
    if n.shape != d.shape:
        raise InputError(f"numerators and denominators differ in length: {n.shape} vs {d.shape}")
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(d))) or np.any(d < 0) or np.any(n < 0):
        raise InputError("numerators and denominators must be finite and >= 0")
    if not 0 < level < 1:
        raise ConfigError(f"interval level {level} must be in (0, 1)")
    if replicates < 1:
        raise ConfigError(f"bootstrap replicates {replicates} must be >= 1")
    k = n.size
    total = d.sum()
    out: dict[str, Any] = {
        "estimate": float(n.sum() / total) if total > 0 else None, "ci": None,
        "level": float(level), "method": METHOD, "animals": int(k), "replicates": int(replicates),
        "undefined_replicates": None, "seed": int(seed), "reason": None,
    }
    if k < min_animals:
        out["reason"] = (f"{k} animal(s) in the evaluated set; intervals by experimental unit "
                         f"need at least {min_animals} animals (frames are never resampled)")
        return out
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.integers(0, k, size=(replicates, k))
    num, den = n[draws].sum(axis=1), d[draws].sum(axis=1)
    defined = den > 0
    out["undefined_replicates"] = int((~defined).sum())
    if not defined.any():
        out["reason"] = "every bootstrap replicate has a zero denominator"
        return out
    rates = num[defined] / den[defined]
    lo, hi = np.quantile(rates, [(1 - level) / 2, (1 + level) / 2])
    out["ci"] = [float(lo), float(hi)]
    return out


def rate_interval_by_animal(rows: pd.DataFrame, numerator: str, denominator: str | None = None,
                            *, animal: str = "animal_id", **kwargs) -> dict[str, Any]:
    """Sum ``numerator`` (and ``denominator``, or count rows) per animal, then bootstrap.

    ``rows`` is any per-row table with an animal column (e.g. observation rows joined to
    the recording table). Rows with a missing numerator are not counted in either sum.
    A counted row whose numerator or denominator is infinite, negative or (denominator)
    missing raises :class:`InputError` naming that column and its first such row (1-based).
    """
    for column in (animal, numerator, denominator):
        if column is not None and column not in rows.columns:
            raise InputError(f"the table has no {column!r} column", column=column)
    values = pd.to_numeric(rows[numerator], errors="coerce").to_numpy(dtype=np.float64)
    counted = ~np.isnan(values)
    weights = (np.ones(len(rows)) if denominator is None
               else pd.to_numeric(rows[denominator], errors="coerce").to_numpy(dtype=np.float64))
    for column, column_values in ((numerator, values), (denominator, weights)):
        bad = counted & ~(np.isfinite(column_values) & (column_values >= 0))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(f"'{rows[column].iloc[first]}' is not a finite count >= 0",
                             column=column, row=first + 1)
    codes, _ = pd.factorize(rows[animal], sort=True)
    if (codes < 0).any():
        raise InputError("missing animal id", column=animal,
                         row=int(np.flatnonzero(codes < 0)[0]) + 1)
    k = int(codes.max()) + 1 if codes.size else 0
    num = np.bincount(codes[counted], weights=values[counted], minlength=k)
    den = np.bincount(codes[counted], weights=weights[counted], minlength=k)
    return animal_bootstrap_interval(num, den, **kwargs)
