"""A2 Registration: 15 tolerance ratios against the reference ``registered_trx.pkl``.

Per experiment ``e`` (EVALUATORS.md A2; ``s`` = px/mm, ``c`` = arena centre in px):

* scale consistency ``r = delta_scale * median(s_sub) / (max s_sub - min s_sub)``;
* radius ``r = tau_radius / |R_sub - R_ref|`` with ``R = R_arena * median(s)`` (px);
* centre consistency in x and y ``r = delta_center / range_rel(c)``, where the centre implied
  by every fly-frame is ``c = (x - s x_mm, y - s y_mm)`` and
  ``range_rel(c_x) = (max c_x - min c_x) / |median c_x|`` (OQ-A2.2);
* centre error ``r = tau_center / ||median c_sub - median c_ref||``;
* for each field f in x_mm, y_mm, a_mm, b_mm, theta_mm (OQ-A2.3): ``tau_max,f / max|d_f|`` and
  ``tau_mean,f / mean|d_f|`` over the Hungarian-matched trajectories' common frames (theta
  wrapped).

``score = (1/15) sum_c E_e[v(e) min(2, r_c(e))]``; an experiment passes when every
``r_c(e) >= 1``. Coverage (share of reference fly-frames covered by a matched trajectory,
``r = coverage / 0.99``, OQ-A2.4) is reported apart and not folded into the score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import ConfigError, InputError
from trackverify.scoring import tolerance_ratio
from trackverify.stages.common import (
    TRX_MM, TRX_PER_TARGET, StageResult, align_trajectories, check_complete, config_record, dense, experiments,
    load_trx, summarise_ratios, total_frames, wrapped)

FILE = "registered_trx.pkl"
FIELDS = (*TRX_PER_TARGET, *TRX_MM, "pxpermm")
RESIDUAL_FIELDS = ("x_mm", "y_mm", "a_mm", "b_mm", "theta_mm")
CRITERIA = ["scale_consistency", "radius", "center_consistency_x", "center_consistency_y",
            "center_error"] + [f"{f}_{k}_residual" for f in RESIDUAL_FIELDS
                               for k in ("max", "mean")]


@dataclass(frozen=True)
class RegistrationConfig:
    arena_radius_mm: float = 26.689
    delta_scale: float = 1e-5
    tau_radius_px: float = 2.5
    delta_center: float = 0.01
    tau_center_px: float = 5.0
    range_rel_denominator: str = "median"   # OQ-A2.2: "median" centre coordinate or "radius"
    tau_xy_max_px: float = 5.0              # OQ-A2.3, converted to mm with the reference px/mm
    tau_xy_mean_px: float = 2.5
    tau_ab_max_frac: float = 0.01           # of the reference median a_mm
    tau_ab_mean_frac: float = 0.005
    tau_theta_max_rad: float = 1e-3
    tau_theta_mean_rad: float = 1e-4
    coverage_target: float = 0.99           # OQ-A2.4, reported apart
    min_fly_frames_share: float = 0.9       # below: an incomplete submission, refused
    cap: float = 2.0
    nearly_all: float = 0.9                 # OQ-0.1


def _geometry(trx: dict[str, Any], config: RegistrationConfig) -> dict[str, Any]:
    """px/mm samples ``s``, their median (``scale``), the arena radius in px, the centre implied
    by every fly-frame (``cx``, ``cy``) and its median; no trajectory: NaN scale and centre."""
    if not trx["ntargets"]:
        empty = np.zeros(0)
        return {"s": empty, "scale": np.nan, "radius": np.nan, "cx": empty, "cy": empty,
                "center": np.full(2, np.nan)}
    s = np.concatenate(trx["pxpermm"])
    s_samples = np.repeat(s, trx["nframes"])   # nframes >= 1: every target has a dt
    cx = np.concatenate(trx["x"]) - s_samples * np.concatenate(trx["x_mm"])
    cy = np.concatenate(trx["y"]) - s_samples * np.concatenate(trx["y_mm"])
    scale = float(np.median(s))
    return {"s": s, "scale": scale, "radius": config.arena_radius_mm * scale, "cx": cx, "cy": cy,
            "center": np.array([np.median(cx), np.median(cy)])}


def _range_rel(c: np.ndarray, median: float, radius: float, config: RegistrationConfig) -> float:
    if c.size == 0:
        return np.nan
    denominator = abs(median) if config.range_rel_denominator == "median" else radius
    span = float(c.max() - c.min())
    return span / denominator if denominator > 0 else (0.0 if span == 0 else np.inf)


def score_experiment(sub: dict[str, Any], ref: dict[str, Any], config: RegistrationConfig
                     ) -> tuple[np.ndarray, dict[str, Any]]:
    """The 15 uncapped ratios of one experiment and the quantities behind them."""
    gs, gr = _geometry(sub, config), _geometry(ref, config)
    tau = {}
    err = {}
    tau["scale_consistency"] = config.delta_scale * gs["scale"]
    err["scale_consistency"] = float(np.ptp(gs["s"])) if gs["s"].size else np.nan
    tau["radius"], err["radius"] = config.tau_radius_px, abs(gs["radius"] - gr["radius"])
    for axis, k in (("x", 0), ("y", 1)):
        tau[f"center_consistency_{axis}"] = config.delta_center
        err[f"center_consistency_{axis}"] = _range_rel(gs[f"c{axis}"], gs["center"][k],
                                                        gs["radius"], config)
    tau["center_error"] = config.tau_center_px
    err["center_error"] = float(np.hypot(*(gs["center"] - gr["center"])))

    rows, cols, _ = align_trajectories(sub, ref)
    t = total_frames(sub, ref)
    a_ref = float(np.median(np.concatenate(ref["a_mm"]))) if ref["ntargets"] else np.nan
    taus = {"x_mm": (config.tau_xy_max_px / gr["scale"], config.tau_xy_mean_px / gr["scale"]),
            "a_mm": (config.tau_ab_max_frac * a_ref, config.tau_ab_mean_frac * a_ref),
            "theta_mm": (config.tau_theta_max_rad, config.tau_theta_mean_rad)}
    taus["y_mm"], taus["b_mm"] = taus["x_mm"], taus["a_mm"]
    covered = 0
    for f in RESIDUAL_FIELDS:
        d = dense(sub, f, t)[rows] - dense(ref, f, t)[cols]
        if f == "theta_mm":
            d = wrapped(d)
        d = np.abs(d[np.isfinite(d)])
        covered = d.size
        tau[f"{f}_max_residual"], tau[f"{f}_mean_residual"] = taus[f]
        err[f"{f}_max_residual"] = float(d.max()) if d.size else np.nan
        err[f"{f}_mean_residual"] = float(d.mean()) if d.size else np.nan
    pixel = {}
    for f in ("x", "y"):   # reported only: pixel fields may change only through NaN handling
        d = np.abs(dense(sub, f, t)[rows] - dense(ref, f, t)[cols])
        d = d[np.isfinite(d)]
        pixel[f] = float(d.max()) if d.size else None
    ratios = np.array([float(tolerance_ratio(tau[c], err[c])) for c in CRITERIA])
    reference_frames = int(ref["nframes"].sum())
    coverage = covered / reference_frames if reference_frames else np.nan
    detail = {
        "criteria": {c: {"ratio": min(config.cap, ratios[i]), "tolerance": tau[c], "error": err[c]}
                     for i, c in enumerate(CRITERIA)},
        "coverage": {"coverage": coverage, "target": config.coverage_target,
                     "ratio": coverage / config.coverage_target,
                     "matched_trajectories": int(rows.size),
                     "reference_trajectories": ref["ntargets"],
                     "submitted_trajectories": sub["ntargets"]},
        "pixel_fields_max_abs_difference_px": pixel,
        "pxpermm": gs["scale"], "reference_pxpermm": gr["scale"],
        "center_px": gs["center"], "reference_center_px": gr["center"],
    }
    return ratios, detail


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: RegistrationConfig) -> StageResult:
    if config.range_rel_denominator not in ("median", "radius"):
        raise ConfigError("range_rel_denominator must be 'median' or 'radius', not "
                          f"{config.range_rel_denominator!r}")
    names = experiments(reference, "reference")
    ratios: dict[str, np.ndarray | None] = {}
    per_exp: dict[str, Any] = {}
    problems = []
    for e in names:
        ref = load_trx(reference / e / FILE, fields=FIELDS, allow_nan=False)
        try:
            sub = load_trx(submission / e / FILE, fields=FIELDS, allow_nan=False)
        except InputError as exc:
            problems.append(str(exc))
            ratios[e], per_exp[e] = None, {"valid": False, "reason": str(exc)}
            continue
        check_complete(sub, ref, str(submission / e / FILE), str(reference / e / FILE),
                       config.min_fly_frames_share)
        ratios[e], detail = score_experiment(sub, ref, config)
        per_exp[e] = {"valid": True, **detail}
    score, result, criteria, passed = summarise_ratios(
        CRITERIA, ratios, cap=config.cap, nearly_all=config.nearly_all, partial_rule="criteria",
        structural_failure=bool(problems))
    for e, ok in passed.items():
        per_exp[e]["passed"] = ok
    coverage = [per_exp[e]["coverage"]["coverage"] for e in names if per_exp[e]["valid"]]
    criteria["coverage (reported apart, OQ-A2.4)"] = {
        "mean_coverage": float(np.mean(coverage)) if coverage else None}
    return StageResult("registration", score, result, criteria, per_exp, config_record(config),
                       problems)
