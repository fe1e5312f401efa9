"""A4 Per-frame features: 13 standard ratios, ``absdv_cor`` self-consistency, joint corfrac.

Per experiment ``e`` (EVALUATORS.md A4):

* standard feature f: ``r = delta_z * sigma_f / MAE_f`` with ``MAE_f`` the mean of
  ``|sub - ref|`` and ``sigma_f`` the standard deviation (ddof 0) of the reference, both over
  all flies and frames where the reference is finite (``yaw`` differences wrapped, OQ-A4.3);
  a submitted NaN where the reference is finite gives ``r = 0`` (OQ-A4.4);
* ``absdv_cor``: ``r = 1`` iff the submission's ``|absdv_cor| == |dv_cor|`` element-wise
  (``np.allclose(rtol=1e-9, atol=1e-12)``), else 0 - the submission against itself;
* ``corfrac_maj`` + ``corfrac_min`` jointly: ``r = eps / max_{i,t} max(0, L_sub - L_ref)``, where
  ``L(i, t) = ||P_{t+1}(rho_t) - P_t(rho_t)||^2`` (mm^2) and
  ``P_t(rho) = (x_mm, y_mm)_t + rho_1 2 a_mm,t u_t + rho_2 2 b_mm,t v_t`` with
  ``u = (cos theta, sin theta)``, ``v = (-sin theta, cos theta)`` from the gold
  ``registered_trx.pkl``.

``score = (1/|F|) sum_f E_e[min(2, r_f(e))]`` over 15 units (corfrac once; OQ-A4.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.safe_pickle import load_restricted
from trackverify.scoring import tolerance_ratio
from trackverify.stages.common import (
    StageResult, as_array, config_record, experiments, load_trx, summarise_ratios, wrapped)
from trackverify.errors import ConfigError

STANDARD = ("absdtheta", "dphi", "dtheta", "du_cor", "du_ctr", "dv_cor", "dv_ctr", "flipdv_cor",
            "phisideways", "velmag", "velmag_ctr", "velmag_nose", "yaw")
ALL_FEATURES = tuple(sorted((*STANDARD, "absdv_cor", "corfrac_maj", "corfrac_min")))
TRX_FIELDS = ("x_mm", "y_mm", "theta_mm", "a_mm", "b_mm")


@dataclass(frozen=True)
class FeaturesConfig:
    delta_z: float = 0.01
    eps_corfrac: float = 1e-3               # mm^2
    corfrac_units: int = 1                  # OQ-A4.2: 1 -> 15 scoring units, 2 -> 16
    absdv_rtol: float = 1e-9
    absdv_atol: float = 1e-12
    wrapped_features: str = "yaw"           # OQ-A4.3, comma-separated
    cap: float = 2.0
    nearly_all: float = 0.9                 # OQ-0.1


def units(config: FeaturesConfig) -> list[str]:
    return [*STANDARD, "absdv_cor"] + ["corfrac"] * config.corfrac_units


def load_feature(path: Path, lengths: np.ndarray | None = None) -> list[np.ndarray]:
    """A ``perframe/<feature>.pkl``: a list of 1-D numeric arrays, one per trajectory.

    With ``lengths``, the list must have ``len(lengths)`` arrays of exactly those lengths.
    """
    value = load_restricted(path)
    if not isinstance(value, (list, tuple)):
        raise InputError(f"expected a list of per-fly arrays, found {type(value).__name__}",
                         source=str(path))
    if lengths is not None and len(value) != len(lengths):
        raise InputError(f"{len(value)} arrays, expected ntargets = {len(lengths)}",
                         source=str(path))
    out = []
    for i, item in enumerate(value):
        arr = as_array(item, str(path), f"fly {i}")
        if arr.dtype.kind not in "biuf" or arr.ndim != 1:
            raise InputError(f"fly {i}: expected a 1-D numeric array, found dtype {arr.dtype}, "
                             f"shape {arr.shape}", source=str(path))
        if lengths is not None and arr.size != lengths[i]:
            raise InputError(f"fly {i}: length {arr.size}, expected {lengths[i]} (the "
                             "reference's length, OQ-A4.1)", source=str(path))
        out.append(arr.astype(np.float64))
    return out


def corfrac_loss(trx: dict[str, Any], maj: list[np.ndarray], mnr: list[np.ndarray]
                 ) -> np.ndarray:
    """``L(i, t)`` for every fly and step, concatenated over flies (length sum(n - 1))."""
    parts = []
    for i in range(trx["ntargets"]):
        x, y, th, a, b = (trx[k][i] for k in TRX_FIELDS)
        r1, r2 = maj[i], mnr[i]
        if r1.size != x.size - 1 or r2.size != x.size - 1:
            raise InputError(f"fly {i}: corfrac length {r1.size}/{r2.size}, expected "
                             f"nframes - 1 = {x.size - 1}")

        def point(sl):
            c, s = np.cos(th[sl]), np.sin(th[sl])
            return (x[sl] + r1 * 2 * a[sl] * c - r2 * 2 * b[sl] * s,
                    y[sl] + r1 * 2 * a[sl] * s + r2 * 2 * b[sl] * c)

        p0, p1 = point(slice(0, -1)), point(slice(1, None))
        parts.append((p1[0] - p0[0]) ** 2 + (p1[1] - p0[1]) ** 2)
    return np.concatenate(parts) if parts else np.zeros(0)


def _standard_ratio(sub: np.ndarray, ref: np.ndarray, angle: bool, config: FeaturesConfig
                    ) -> dict[str, Any]:
    mask = np.isfinite(ref)
    if not np.all(np.isfinite(sub[mask])):
        return {"ratio": 0.0, "tolerance": None, "error": None,
                "note": "submitted NaN/inf where the reference is finite"}
    d = sub[mask] - ref[mask]
    mae = float(np.mean(np.abs(wrapped(d) if angle else d))) if d.size else 0.0
    sigma = float(np.std(ref[mask])) if d.size else 0.0
    tau = config.delta_z * sigma
    return {"ratio": float(tolerance_ratio(tau, mae)), "tolerance": tau, "error": mae,
            "sigma": sigma}


def score_experiment(sub_dir: Path, ref_dir: Path, gold_trx: dict[str, Any],
                     config: FeaturesConfig) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Per-unit ratio records of one experiment and its structural problems."""
    ref = {f: load_feature(ref_dir / "perframe" / f"{f}.pkl") for f in ALL_FEATURES}
    sub: dict[str, list[np.ndarray] | None] = {}
    problems = []
    for f in ALL_FEATURES:
        lengths = np.array([a.size for a in ref[f]])
        try:
            sub[f] = load_feature(sub_dir / "perframe" / f"{f}.pkl", lengths)
        except InputError as exc:
            sub[f] = None
            problems.append(str(exc))
    angles = wrapped_features(config)
    out: dict[str, dict[str, Any]] = {}
    missing = {"ratio": 0.0, "tolerance": None, "error": None, "note": "structural failure"}
    for f in STANDARD:
        out[f] = missing if sub[f] is None else _standard_ratio(
            np.concatenate(sub[f]), np.concatenate(ref[f]), f in angles, config)
    if sub["absdv_cor"] is None or sub["dv_cor"] is None:
        out["absdv_cor"] = missing
    else:
        lhs, rhs = np.abs(np.concatenate(sub["absdv_cor"])), np.abs(np.concatenate(sub["dv_cor"]))
        same = bool(np.allclose(lhs, rhs, rtol=config.absdv_rtol, atol=config.absdv_atol,
                                equal_nan=True))
        out["absdv_cor"] = {"ratio": 1.0 if same else 0.0, "tolerance": None, "error": None,
                            "self_consistent": same}
    if sub["corfrac_maj"] is None or sub["corfrac_min"] is None:
        out["corfrac"] = missing
    else:
        l_ref = corfrac_loss(gold_trx, ref["corfrac_maj"], ref["corfrac_min"])
        l_sub = corfrac_loss(gold_trx, sub["corfrac_maj"], sub["corfrac_min"])
        mask = np.isfinite(l_ref)
        if not np.all(np.isfinite(l_sub[mask])):
            out["corfrac"] = {"ratio": 0.0, "tolerance": config.eps_corfrac, "error": None,
                              "note": "submitted NaN where the reference loss is finite"}
        else:
            excess = float(np.max(np.maximum(0.0, l_sub[mask] - l_ref[mask]), initial=0.0))
            out["corfrac"] = {"ratio": float(tolerance_ratio(config.eps_corfrac, excess)),
                              "tolerance": config.eps_corfrac, "error": excess}
    return out, problems


def wrapped_features(config: FeaturesConfig) -> set[str]:
    """The angle-valued features of the ``wrapped_features`` setting (comma-separated; empty:
    none wrapped, OQ-A4.3's alternative). A name that is not a standard feature (a typo would
    silently compare ``yaw`` unwrapped) is a ConfigError."""
    names = {s.strip() for s in config.wrapped_features.split(",") if s.strip()}
    unknown = sorted(names - set(STANDARD))
    if unknown:
        raise ConfigError(f"setting 'wrapped_features': {unknown[0]!r} is not a standard "
                          f"feature; known: {', '.join(STANDARD)}")
    return names


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: FeaturesConfig) -> StageResult:
    names = experiments(reference, "reference")
    gold_root = ground_truth if ground_truth is not None else reference
    unit_names = units(config)
    ratios: dict[str, np.ndarray | None] = {}
    per_exp: dict[str, Any] = {}
    problems: list[str] = []
    for e in names:
        gold = load_trx(gold_root / e / "registered_trx.pkl", fields=TRX_FIELDS)
        if not (submission / e).is_dir():
            msg = f"{submission / e}: experiment folder missing"
            problems.append(msg)
            ratios[e], per_exp[e] = None, {"valid": False, "reason": msg}
            continue
        records, exp_problems = score_experiment(submission / e, reference / e, gold, config)
        problems += exp_problems
        ratios[e] = np.array([records[u]["ratio"] for u in unit_names])
        records = {u: {**rec, "ratio": min(config.cap, rec["ratio"])} for u, rec in records.items()}
        per_exp[e] = {"valid": not exp_problems, "units": records, "problems": exp_problems}
    score, result, criteria, passed = summarise_ratios(
        unit_names[:15] + (["corfrac (second count)"] if config.corfrac_units == 2 else []),
        ratios, cap=config.cap, nearly_all=config.nearly_all, structural_failure=bool(problems))
    for e, ok in passed.items():
        per_exp[e]["passed"] = ok
    return StageResult("features", score, result, criteria, per_exp, config_record(config),
                       problems)
