"""Proof by simulation: do the guarantees hold on cohorts of synthetic animals?

**Population.** For each motion level, a pool of ``pool_size`` development-specimen animals
(:func:`trackverify.synth.specimen.animal_observations`, small: ``frames`` frames,
``neurons`` neurons, corruptions at 30 % / 70 % of the frames), each run through the
corruption suite and scored by ``fixed_distance`` -- the real pipeline, not a stand-in score
model. The pool *is* the population: a cohort draws its animals i.i.d. (uniformly, with
replacement) from it, which satisfies the guarantees' assumption exactly, and every
population quantity is computed exactly over the pool:

- ``R(t)`` = mean over pool animals with errors of ``L_i(t)`` (the expected
  false-certification rate of a new animal);
- ``C(t)`` = mean over pool animals of (correct rows certified / rows): the correct
  certified coverage a new animal can expect.

**Cohort.** ``n_train + n_cal + n_test`` draws, split by animal (draw) into train,
calibration and test. ``fixed_distance`` has no parameter, so the train animals are drawn
but not used. Each method fits ``t_hat`` on the calibration animals:
``crc`` and ``ltt`` (:mod:`trackverify.benchmark.certify.guarantees`) and, as a baseline without any
guarantee, ``plug_in`` (the largest ``t`` with ``R_n(t) <= A``). A target below the
smallest reachable one certifies nothing (``t = -inf``, loss 0, coverage 0) and is counted.

**Measured, per (level, n_cal, method)**, over ``cohorts`` cohorts:

- ``mean_risk`` = mean of ``R(t_hat)`` (estimates ``E[R(t_hat)]``, which CRC bounds by ``A``)
  with its Monte Carlo standard error;
- ``violation`` = share of cohorts with ``R(t_hat) > A`` (LTT bounds it by ``delta``), with
  its Monte Carlo error ``sqrt(v (1 - v) / cohorts)``;
- ``test_violation`` = share of cohorts whose finite test set has mean FCR ``> A`` (what a
  user sees on ``n_test`` animals; not what LTT bounds, which is ``R``);
- ``coverage`` = mean ``C(t_hat)``, and ``oracle_coverage`` = ``C(t*)`` with ``t*`` the largest
  threshold with ``R(t*) <= A`` (what knowing the population would allow).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trackverify.benchmark.certify.guarantees import (LossCurve, animal_losses, crc_threshold,
                                            ltt_threshold)
from trackverify.errors import ConfigError

METHODS = ("crc", "ltt", "plug_in")


@dataclass(frozen=True)
class AnimalPool:
    """Per pool animal: its error rows' scores (NaN = abstained) and its sorted finite
    correct-row scores, and its row count."""

    level: str
    error_scores: list[np.ndarray]
    correct_scores: list[np.ndarray]
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def fcr(self, threshold: float) -> np.ndarray:
        """``L_i(threshold)`` per pool animal (NaN for animals without errors)."""
        out = np.full(len(self), np.nan)
        for i, e in enumerate(self.error_scores):
            if len(e):
                out[i] = np.count_nonzero(e <= threshold) / len(e)  # NaN <= t is False
        return out

    def coverage(self, threshold: float) -> float:
        """``C(threshold)``: mean over pool animals of correct certified rows / rows."""
        accepted = np.array([np.searchsorted(c, threshold, side="right") for c in self.correct_scores])
        return float(np.mean(accepted / self.rows))


def pool_config(level: str, frames: int, neurons: int, seed: int):
    """The run settings of a specimen pool: the corruption window is SPEC's scaled to
    ``frames`` by :func:`trackverify.benchmark.corrupt.share_window` (integer arithmetic)."""
    from trackverify.benchmark.config import build_config
    from trackverify.benchmark.corrupt import share_window

    start, recovery_end = share_window(frames)
    return build_config({"specimen.motion": level, "specimen.frames": frames,
                         "specimen.neurons": neurons, "specimen.seed": seed,
                         "start": start, "recovery_end": recovery_end})


def specimen_pool(level: str, pool_size: int, frames: int = 300, neurons: int = 30,
                  seed: int = 20261007) -> AnimalPool:
    """``pool_size`` specimen animals at motion ``level``, corrupted and scored by fixed_distance."""
    from trackverify.benchmark.protocols.anatomical_verification import error_array, score_conditions
    from trackverify.synth.specimen import animal_detections, animal_observations
    from trackverify.verifiers.fixed_distance import FixedDistance

    config = pool_config(level, frames, neurons, seed)
    errors, corrects, rows = [], [], []
    for index in range(pool_size):
        table = animal_observations(config.specimen, index)
        scored, _, _ = score_conditions(table, config, FixedDistance(), f"rec{index:04d}",
                                        animal_detections(config.specimen, index))
        error, score = error_array(scored), scored["score"].to_numpy(dtype=np.float64)
        errors.append(score[error == 1].copy())
        correct = score[(error == 0) & np.isfinite(score)]
        corrects.append(np.sort(correct, kind="stable").astype(np.float32))
        rows.append(len(error))
    return AnimalPool(level, errors, corrects, np.asarray(rows, dtype=np.float64))


def _population_curve(pool: AnimalPool) -> LossCurve:
    animal = np.concatenate([np.full(len(e), i) for i, e in enumerate(pool.error_scores)])
    score = np.concatenate(pool.error_scores)
    return animal_losses(animal, score, np.ones(len(score)))


def _plug_in(curve: LossCurve, level: float) -> float:
    bad = np.flatnonzero(curve.risk > level)
    return float(np.nextafter(curve.jumps[bad[0]], -np.inf)) if bad.size else math.inf


def fit_method(method: str, curve: LossCurve, level: float, delta: float) -> float:
    """``t_hat`` of one method on a calibration curve; ``-inf`` when the target is unreachable."""
    try:
        if method == "crc":
            return crc_threshold(curve, level).threshold
        if method == "ltt":
            return ltt_threshold(curve, level, delta).threshold
    except ConfigError:
        return -math.inf
    return _plug_in(curve, level)


def run_cohorts(pool: AnimalPool, n_cal: int, n_test: int, n_train: int, cohorts: int,
                level: float, delta: float, rng: np.random.Generator) -> dict[str, dict]:
    """Every method over ``cohorts`` cohorts drawn from ``pool`` (module docstring)."""
    population = _population_curve(pool)
    oracle = _plug_in(population, level)
    has_errors = np.array([len(e) > 0 for e in pool.error_scores])
    measured = {m: {"risk": [], "test_fcr": [], "coverage": [], "unreachable": 0} for m in METHODS}
    for _ in range(cohorts):
        draw = rng.integers(len(pool), size=n_train + n_cal + n_test)
        cal, test = draw[n_train:n_train + n_cal], draw[n_train + n_cal:]
        animal = np.concatenate([np.full(len(pool.error_scores[i]), j) for j, i in enumerate(cal)])
        score = np.concatenate([pool.error_scores[i] for i in cal])
        curve = animal_losses(animal, score, np.ones(len(score)))
        for method in METHODS:
            t = fit_method(method, curve, level, delta) if curve.n else -math.inf
            record = measured[method]
            record["unreachable"] += int(t == -math.inf)
            per_animal = pool.fcr(t)
            record["risk"].append(float(np.nanmean(per_animal[has_errors])))
            tested = per_animal[test][has_errors[test]]
            record["test_fcr"].append(float(tested.mean()) if len(tested) else math.nan)
            record["coverage"].append(pool.coverage(t))
    out = {}
    for method, record in measured.items():
        risk = np.asarray(record["risk"])
        violated = risk > level
        test_fcr = np.asarray(record["test_fcr"])
        v = float(violated.mean())
        out[method] = {
            "cohorts": cohorts,
            "unreachable": record["unreachable"],
            "mean_risk": float(risk.mean()),
            "mean_risk_se": float(risk.std(ddof=1) / math.sqrt(cohorts)) if cohorts > 1 else None,
            "violation": v,
            "violation_se": math.sqrt(v * (1 - v) / cohorts),
            "test_violation": float(np.nanmean(test_fcr > level)),
            "mean_test_fcr": float(np.nanmean(test_fcr)),
            "coverage": float(np.mean(record["coverage"])),
            "oracle_coverage": pool.coverage(oracle),
        }
    return out


def coverage_benchmark(levels=("still", "moderate", "free", "fast", "freely_moving"),
                       sizes=(10, 20, 40),
                       cohorts: int = 50, level: float = 0.25, delta: float = 0.1,
                       pool_size: int = 60, frames: int = 300, neurons: int = 30,
                       n_test: int = 10, n_train: int = 5, seed: int = 20261007) -> list[dict]:
    """One row per (motion level, n_cal, method); ``len(levels) * len(sizes) * cohorts`` cohorts."""
    rng = np.random.Generator(np.random.PCG64(seed))
    rows = []
    for motion in levels:
        pool = specimen_pool(motion, pool_size, frames, neurons, seed)
        for n_cal in sizes:
            result = run_cohorts(pool, n_cal, n_test, n_train, cohorts, level, delta, rng)
            rows.extend({"motion": motion, "n_cal": n_cal, "method": m, "target": level,
                         "delta": delta if m == "ltt" else None, **r} for m, r in result.items())
    return rows
