"""Fitting a certified threshold on train/calibration animals, and checking it on the evaluated ones.

The fit sees labels only through :class:`~trackverify.benchmark.partitions.FitData` (train and
calibration recordings; asking for test labels is a LeakageError). Recordings are grouped
into animals by ``animal_id``; each animal's loss pools all its recordings and conditions
(:mod:`trackverify.benchmark.certify.guarantees`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from trackverify.benchmark.certify.guarantees import (animal_losses, check_reachable, crc_threshold,
                                            ltt_threshold, round_up, smallest_target)
from trackverify.benchmark.certify.targets import (ASSUMPTION, FCR_TARGET, SELECTIVE_RISK_TARGET,
                                         CalibrationTarget)
from trackverify.errors import ConfigError
from trackverify.benchmark.partitions import FitData

LOSS = ("per animal: certified labelled errors / labelled errors, over all its recordings and "
        "conditions (abstained errors count, never certified); animals without a labelled error "
        "have no false-certification rate and are left out of the calibration and of the check")


def guarantee_text(target: CalibrationTarget, n: int | None = None) -> str:
    """The guarantee in words (None-safe for the selective-risk target, which has none)."""
    if target.kind == SELECTIVE_RISK_TARGET:
        return ("No guarantee: the threshold reaches selective risk <= "
                f"{target.level:g} on the fit rows only; it says nothing about the share of a new "
                "animal's errors that is certified.")
    animals = f" {n}" if n is not None else ""
    if target.method == "crc":
        return (f"Conformal risk control over{animals} calibration animals: the expected "
                f"false-certification rate of a new animal (one with at least one wrong identity) "
                f"is at most {target.level:g}, the expectation taken over the draw of the "
                "calibration animals and the new animal.")
    return (f"Learn-then-Test (Hoeffding-Bentkus p-values, fixed-sequence testing) over{animals} "
            f"calibration animals: with probability at least {1 - target.delta:g} over the draw of "
            "the calibration animals, the expected false-certification rate of new animals (with "
            f"at least one wrong identity) at this threshold is at most {target.level:g}.")


#: Which partitions fit what, per target: (registered_distance's ambiguity band, the threshold).
#: A guarantee needs calibration animals used for nothing else, so the band is fitted on
#: ``train`` and the threshold on ``calibration``; the selective-risk fit (no guarantee)
#: uses both for both, as before.
ROLES = {FCR_TARGET: (("train",), ("calibration",)),
         SELECTIVE_RISK_TARGET: (("train", "calibration"), ("train", "calibration"))}


def fit_roles(target: CalibrationTarget) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(partitions that fit the ambiguity band, partitions that fit the threshold)."""
    return ROLES[target.kind]


def fit_rows_with_animals(fit: FitData, animal_of: Mapping, columns: Sequence[str]) -> pd.DataFrame:
    """The calibration rows (only those: the guarantee's animals) with their ``animal``."""
    rows = fit.labels_for_fit(ROLES[FCR_TARGET][1])
    out = rows[list(columns)].copy()
    out["animal"] = rows["recording"].map(lambda r: str(animal_of[r]))
    return out


def fit_certified_threshold(fit: FitData, animal_of: Mapping, target: CalibrationTarget,
                            score: str = "score", error: str = "error") -> dict:
    """Fit the threshold of ``target`` (false-certification rate) on the fit animals.

    Returns the calibration record (JSON-ready). ConfigError (exit 2) when ``target.level``
    is below the smallest reachable target for the number of calibration animals.
    """
    rows = fit_rows_with_animals(fit, animal_of, ["recording", score, error])
    s = rows[score].to_numpy(dtype=np.float64)
    e = pd.to_numeric(rows[error], errors="coerce").to_numpy(dtype=np.float64)
    curve = animal_losses(rows["animal"].to_numpy(), s, e)
    fitted = (crc_threshold(curve, target.level) if target.method == "crc"
              else ltt_threshold(curve, target.level, target.delta))
    finite = np.isfinite(s)
    threshold = fitted.threshold
    capped = False
    if math.isinf(threshold):
        threshold, capped = float(s[finite].max()), True
    accepted = finite & (s <= threshold)
    smallest = smallest_target(curve.n, target.method, target.delta)
    coverage = pd.Series(accepted).groupby(rows["animal"].to_numpy()).mean()
    return {
        "target": target.to_json(),
        "kind": FCR_TARGET,
        "method": target.method,
        "threshold": threshold,
        "accept_rule": "certified when the score is finite and <= threshold",
        "threshold_capped_at_largest_calibration_score": capped,
        "first_refused_error_score": fitted.refused_at,
        "guarantee": guarantee_text(target, curve.n),
        "assumption": ASSUMPTION,
        "loss": LOSS,
        "recordings": sorted(rows["recording"].unique().tolist(), key=str),
        "animals": curve.n + curve.n_without_errors,
        "animals_with_errors": curve.n,
        "animals_without_errors": curve.n_without_errors,
        "smallest_reachable_target": round_up(smallest, 2),
        "smallest_reachable_target_exact": smallest,
        "calibration_mean_fcr": fitted.risk,
        "bound" if target.method == "crc" else "p_value": fitted.statistic,
        # labels_for_fit refuses an empty selection: there is at least one row and one animal
        "calibration_certified_coverage": float(accepted.mean()),
        "calibration_correct_certified_coverage": float((accepted & (e == 0)).mean()),
        "calibration_animal_coverage": {"min": float(coverage.min()), "max": float(coverage.max()),
                                        "animals": int(len(coverage))},
    }


def selective_risk_warnings(record: dict, fit: FitData, score: str = "score",
                            error: str = "error") -> list[str]:
    """Words for a selective-risk fit that says little: prevalence at or below the target, or
    more than half of the calibration errors certified."""
    rows = fit.labels_for_fit()
    s = rows[score].to_numpy(dtype=np.float64)
    e = pd.to_numeric(rows[error], errors="coerce").to_numpy(dtype=np.float64)
    labelled = ~np.isnan(e)
    errors = int((e == 1).sum())
    prevalence = errors / int(labelled.sum()) if labelled.any() else None
    warnings = []
    target = record["target_risk"]
    if prevalence is not None and prevalence <= target:
        warnings.append(
            f"The calibration rows' error prevalence ({prevalence:.3g}) is at or below the "
            f"selective-risk target ({target:g}): certifying every row already meets the target, "
            "so it says nothing about errors. Use --calibrate target_false_certification_rate=A.")
    if errors and record.get("threshold") is not None:
        certified = int(((e == 1) & np.isfinite(s) & (s <= record["threshold"])).sum())
        if certified / errors > 0.5:
            warnings.append(
                f"At the fitted threshold {certified / errors:.1%} of the calibration errors are "
                "certified: this threshold certifies most wrong identities.")
    return warnings


def check_on_evaluated(record: dict, blocks: Mapping[str, dict], animal_of: Mapping) -> dict:
    """The guarantee's quantity on the evaluated animals: each animal's false-certification
    rate (``n_accepted_errors / n_errors`` of its ``all_conditions`` blocks summed), their mean,
    and whether it is above the target. ``blocks``: recording -> its all-conditions block.

    A label-free shift check beside it: each evaluated animal's certified coverage
    (``n_accepted / n_rows``) against the range of the calibration animals' certified coverage
    at the same threshold; an animal outside that range is scored unlike every calibration
    animal (distribution shift), and the exchangeability the guarantee needs is in doubt."""
    num: dict[str, float] = {}
    den: dict[str, float] = {}
    accepted: dict[str, float] = {}
    rows: dict[str, float] = {}
    for recording, block in blocks.items():
        animal = str(animal_of[recording])
        num[animal] = num.get(animal, 0) + block["n_accepted_errors"]
        den[animal] = den.get(animal, 0) + block["n_errors"]
        accepted[animal] = accepted.get(animal, 0) + block["n_accepted"]
        rows[animal] = rows.get(animal, 0) + block["n_rows"]
    per_animal = {a: num[a] / den[a] for a in sorted(num) if den[a]}
    coverage = {a: accepted[a] / rows[a] for a in sorted(rows) if rows[a]}
    band = record.get("calibration_animal_coverage")
    shifted = {a: c for a, c in coverage.items()
               if band is not None and not band["min"] <= c <= band["max"]}
    mean = float(np.mean(list(per_animal.values()))) if per_animal else None
    level = record["target"]["level"]
    return {
        "animals_with_errors": len(per_animal),
        "animals_without_errors": len(num) - len(per_animal),
        "per_animal_fcr": per_animal,
        "mean_fcr": mean,
        "target": level,
        "above_target": None if mean is None else bool(mean > level),
        "per_animal_certified_coverage": coverage,
        "calibration_animal_coverage": band,
        "coverage_outside_calibration_range": shifted,
        "note": ("conformal risk control bounds the expectation: one finite set of new animals "
                 "can exceed the target by chance, but a mean far above it means the "
                 "calibration did not transfer" if record.get("method") == "crc" else
                 "Learn-then-Test bounds the expected rate with probability 1 - delta; a finite "
                 "set of new animals can exceed the target by chance"),
    }


def calibrate_threshold(target: CalibrationTarget, fit: FitData, animal_of: Mapping,
                        score: str = "score", error: str = "error") -> dict:
    """Fit the threshold for either target; returns the calibration record with
    ``threshold``, ``target``, ``guarantee``, ``assumption`` and ``warnings`` (words)."""
    if target.kind == FCR_TARGET:
        record = fit_certified_threshold(fit, animal_of, target, score, error)
        record["warnings"] = []
        record["fit_partitions"] = list(fit_roles(target)[1])
        return record
    fitted = fit.fit_threshold(target.level, partitions=fit_roles(target)[1], score=score, error=error)
    if fitted.threshold is None:
        raise ConfigError(f"calibration failed: {fitted.reason}")
    record = {**fitted.to_json(), "target": target.to_json(), "kind": SELECTIVE_RISK_TARGET,
              "method": None, "guarantee": guarantee_text(target), "assumption": None}
    record["warnings"] = selective_risk_warnings(record, fit, score, error)
    record["fit_partitions"] = list(fit_roles(target)[1])
    return record


def precheck_target(target: CalibrationTarget, animals: int) -> None:
    """Before any work: refuse a false-certification target below the smallest reachable with
    ``animals`` calibration animals (the animals with errors can only be fewer, so this never
    refuses a target the fit could reach)."""
    if target.kind == FCR_TARGET and animals > 0:
        check_reachable(animals, target.level, target.method, target.delta, "calibration animal(s)")
