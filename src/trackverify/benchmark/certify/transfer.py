"""Transfer: thresholds calibrated on synthetic animals, applied to a real recording.

The guarantee needs the new animal to be exchangeable with the calibration animals. A
synthetic cohort and a real recording are not: this measures how far the guarantee's
quantity lands from the target when that assumption is broken by distribution shift.

For each method and number of calibration animals, ``cohorts`` calibration sets are drawn
from a synthetic pool (:func:`trackverify.benchmark.certify.simulation.specimen_pool`, by default the
``free`` motion level, whose displacement from frame 0 was set to match the real
freely moving recording), each fits ``t_hat``, and ``t_hat`` is applied to the real animal:

- ``injected``: the real recording's curated identities through the corruption suite,
  scored by fixed_distance; its loss ``L_real(t_hat)`` = certified injected errors / errors;
- ``tracker``: the real tracker's own mistakes (``tracker_cpd.parquet`` joined on
  ``recording, frame, detection``; the control condition), labelled against the anchor
  identity as in SPEC section 4; ``L_real`` the same ratio.

Reported: the mean over cohorts of ``L_real(t_hat)``, the share of cohorts with
``L_real(t_hat) > A``, and the synthetic population risk ``R(t_hat)`` for comparison.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from trackverify.benchmark.certify.guarantees import animal_losses
from trackverify.benchmark.certify.simulation import fit_method, specimen_pool


def real_error_scores(folder: Path) -> dict[str, np.ndarray]:
    """fixed_distance scores of the real recording's error rows: injected and the tracker's."""
    from trackverify.benchmark.config import build_config
    from trackverify.benchmark.dataset import load_dataset, tracker_predictions
    from trackverify.io.tabular import read_table
    from trackverify.benchmark.protocols.anatomical_verification import error_array, score_conditions
    from trackverify.verifiers.fixed_distance import FixedDistance

    dataset = load_dataset(folder)
    config = build_config({})
    out = {}
    ((name, source),) = list(dataset.sources(list(dataset.recordings["recording"])))
    table = source.load()
    scored, _, _ = score_conditions(table, config, FixedDistance(), name)
    error = error_array(scored)
    corrupted = ~scored["is_control"].to_numpy()
    out["injected"] = scored["score"].to_numpy()[corrupted & (error == 1)]
    tracker_path = Path(folder) / "tracker_cpd.parquet"
    if tracker_path.exists():  # user input beside the dataset: a FIFO is refused by name
        joined = tracker_predictions(table, read_table(tracker_path), source.first_frame,
                                     str(tracker_path))
        control = dataclasses.replace(config, conditions=("control",))
        scored, _, _ = score_conditions(joined, control, FixedDistance(), name)
        error = error_array(scored)
        out["tracker"] = scored["score"].to_numpy()[error == 1]
    return out


def _loss(errors: np.ndarray, threshold: float) -> float:
    return float(np.count_nonzero(errors <= threshold) / len(errors))


def transfer(folder: Path, level: str = "free", sizes=(10, 20, 40), cohorts: int = 50,
             target: float = 0.25, delta: float = 0.1, pool_size: int = 60, frames: int = 300,
             neurons: int = 30, seed: int = 20261007) -> list[dict]:
    """One row per (method, n_cal, real error population); see the module docstring."""
    real = real_error_scores(folder)
    pool = specimen_pool(level, pool_size, frames, neurons, seed)
    has_errors = np.array([len(e) > 0 for e in pool.error_scores])
    rng = np.random.Generator(np.random.PCG64(seed))
    rows = []
    for n_cal in sizes:
        thresholds = {m: [] for m in ("crc", "ltt")}
        for _ in range(cohorts):
            cal = rng.integers(len(pool), size=n_cal)
            animal = np.concatenate([np.full(len(pool.error_scores[i]), j) for j, i in enumerate(cal)])
            curve = animal_losses(animal, np.concatenate([pool.error_scores[i] for i in cal]),
                                  np.ones(len(animal)))
            for method in thresholds:
                thresholds[method].append(fit_method(method, curve, target, delta))
        for method, ts in thresholds.items():
            synthetic = [float(np.nanmean(pool.fcr(t)[has_errors])) for t in ts]
            for population, errors in real.items():
                losses = np.array([_loss(errors, t) for t in ts])
                finite = [t for t in ts if math.isfinite(t)]
                rows.append({"level": level, "n_cal": n_cal, "method": method, "real": population,
                             "real_errors": int(len(errors)), "target": target,
                             "delta": delta if method == "ltt" else None,
                             "median_threshold_um": float(np.median(finite)) if finite else None,
                             "synthetic_risk": float(np.mean(synthetic)),
                             "real_fcr": float(losses.mean()),
                             "real_above_target": float(np.mean(losses > target))})
    return rows
