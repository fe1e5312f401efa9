"""A1 Body tracking: MOTA per experiment from the head / abdomen tip error, against the
reference (baseline) tracker scored on the same ground truth.

Tips ``head = (x, y) + 2a (cos theta, sin theta)``, ``abd = (x, y) - 2a (cos theta, sin theta)``;
the error of a (GT fly g, predicted track p) pair is
``err = (||head_g - head_p|| + ||abd_g - abd_p||) / a_g / 2`` with ``a_g`` the GT fly's
quarter length (OQ-A1.1). Only frames with ground truth are scored (OQ-A1.4); pairs with
``err > tau_match`` (1.0, OQ-A1.2) are never matched. The matching and the counts are
trackverify's canonical CLEAR (:func:`trackverify.metrics.mot.clear_metrics`, TrackEval
conventions) on the similarity ``s = 1 - err / (2 tau_match)``: per frame the matching
maximises ``sum(1000 * continues + s)``, i.e. a GT fly keeps the track it was matched to in
the previous frame whenever that pair is within the gate, and otherwise the total
similarity is maximised (the total error minimised for a given number of matches; unlike a
plain Hungarian, the number of matches is not maximised first: docs/reference/stages.md). Unmatched
GT flies are FN, unmatched predictions FP, and a GT fly whose matched track differs from the
one at its most recent previous matched frame is an IDSW (OQ-A1.3; variant
``consecutive``: only when that frame is the previous scored frame).
``MOTA = (TP - FP - IDSW) / (TP + FN) = 1 - sum_t (FN_t + FP_t + IDSW_t) / sum_t GT_t``.
Per experiment ``r = (1 - MOTA_ref) / (1 - MOTA_sub)``; pass iff ``MOTA_sub >= MOTA_ref``
(r >= 1). NaN poses count as "not present".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import ConfigError, InputError
from trackverify.metrics.mot import IDSW_RULES, clear_metrics
from trackverify.scoring import pass_relative, tolerance_ratio
from trackverify.stages.common import (
    StageResult, check_complete, config_record, dense, experiments, load_trx, summarise_ratios, total_frames)

FILE = "trx.pkl"
FRAME_BLOCK = 4096


@dataclass(frozen=True)
class BodyTrackingConfig:
    tau_match: float = 1.0                  # OQ-A1.2
    idsw: str = "last_matched"              # OQ-A1.3: "last_matched" or "consecutive"
    cap: float = 10.0                       # reporting cap of the uncapped ratio
    nearly_all: float = 0.9                 # OQ-0.1
    min_fly_frames_share: float = 0.9       # of the reference's; below: refused

    def __post_init__(self) -> None:
        if self.idsw not in IDSW_RULES:
            raise ConfigError(f"idsw must be one of {IDSW_RULES}, not {self.idsw!r}")
        if not 0.0 < self.tau_match < np.inf:
            raise ConfigError(f"tau_match must be positive and finite, not {self.tau_match!r}")


def tips(trx: dict[str, Any], n_total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(head, abd, a)`` by global frame: ``(n_total, ntargets, 2)`` twice and
    ``(n_total, ntargets)``; NaN where the target is absent or its pose is NaN."""
    x, y, th, a = (dense(trx, k, n_total).T for k in ("x", "y", "theta", "a"))
    u = np.stack([np.cos(th), np.sin(th)], axis=-1) * (2 * a)[..., None]
    centre = np.stack([x, y], axis=-1)
    return centre + u, centre - u, a


def tip_error(gt: tuple[np.ndarray, ...], pred: tuple[np.ndarray, ...]) -> np.ndarray:
    """``(T, G, P)`` normalised tip error; NaN where either side is absent."""
    hg, ag, a = gt
    hp, ap, _ = pred
    dh = np.linalg.norm(hg[:, :, None] - hp[:, None], axis=-1)
    da = np.linalg.norm(ag[:, :, None] - ap[:, None], axis=-1)
    return (dh + da) / a[:, :, None] / 2


def clear_counts(gt_present: np.ndarray, pred_present: np.ndarray, err: np.ndarray,
                 gate: float, idsw: str = "last_matched") -> dict[str, Any]:
    """CLEAR-MOT counts and MOTA (EVALUATORS.md A1) from per-frame presence and the tip error.

    ``gt_present (T, G)`` / ``pred_present (T, P)``: which GT ids / predicted track ids are
    present at each frame (ids are the column indices); ``err (T, G, P)``: the tip error
    (non-finite = impossible). Only frames with at least one GT fly are scored, renumbered
    ``0..frames-1`` (so the ``consecutive`` IDSW variant means consecutive scored frames).
    Every present pair with ``err <= gate`` becomes a candidate pair of
    :func:`trackverify.metrics.mot.clear_metrics` with similarity ``s = 1 - err / (2 gate)``, in
    ``[0.5, 1]``. No other pair is passed, so "matchable" is exactly ``err <= gate``:
    rounding is monotone, so ``err <= gate`` gives ``s >= 0.5`` in floating point, and the
    ``s >= 0.5 - eps`` slack of TrackEval's threshold never admits an ``err`` above the gate.
    ``MOTA = (TP - FP - IDSW) / (TP + FN)``.
    """
    scored = gt_present.any(axis=1)
    pred_present = pred_present & scored[:, None]       # predictions elsewhere are ignored
    allowed = gt_present[:, :, None] & pred_present[:, None, :] & np.isfinite(err)
    with np.errstate(invalid="ignore"):
        allowed &= err <= gate
    rank = np.cumsum(scored) - 1                        # scored frames renumbered 0..
    gt_frame, gt_id = np.nonzero(gt_present)
    pred_frame, pred_id = np.nonzero(pred_present)
    # Detection index of each present (frame, id) cell: its rank in row-major order.
    gt_index = np.cumsum(gt_present.ravel()).reshape(gt_present.shape) - 1
    pred_index = np.cumsum(pred_present.ravel()).reshape(pred_present.shape) - 1
    cell = np.flatnonzero(allowed)                      # (frame, GT, track) cells in order
    t, gp = np.divmod(cell, allowed.shape[1] * allowed.shape[2])
    g, p = np.divmod(gp, allowed.shape[2])
    similarity = 1.0 - err.ravel()[cell] / (2.0 * gate)
    out = clear_metrics(rank[gt_frame], gt_id, rank[pred_frame], pred_id, gt_index[t, g],
                        pred_index[t, p], similarity, threshold=0.5, idsw=idsw)
    return {"mota": out["mota"], "tp": out["clr_tp"], "fn": out["clr_fn"],
            "fp": out["clr_fp"], "idsw": out["idsw"], "gt": len(gt_frame),
            "frames": int(scored.sum())}


def mota(gt: dict[str, Any], pred: dict[str, Any], config: BodyTrackingConfig) -> dict[str, Any]:
    """MOTA of ``pred`` against ``gt`` (both checked trx dicts), in frame blocks."""
    n_total = total_frames(gt, pred)
    g_tips, p_tips = tips(gt, n_total), tips(pred, n_total)
    g_present = np.isfinite(g_tips[0]).all(-1) & np.isfinite(g_tips[1]).all(-1)
    p_present = np.isfinite(p_tips[0]).all(-1) & np.isfinite(p_tips[1]).all(-1)
    err = np.concatenate([tip_error(tuple(x[s:s + FRAME_BLOCK] for x in g_tips),
                                    tuple(x[s:s + FRAME_BLOCK] for x in p_tips))
                          for s in range(0, n_total, FRAME_BLOCK)]) if n_total else \
        np.zeros((0, gt["ntargets"], pred["ntargets"]))
    # Blocks keep the temporaries small; the IDSW chain spans blocks, so counts are global.
    return clear_counts(g_present, p_present, err, config.tau_match, config.idsw)


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: BodyTrackingConfig) -> StageResult:
    if ground_truth is None:
        raise InputError("the body-tracking stage needs --ground-truth (exp_*/trx.pkl)")
    names = experiments(ground_truth, "ground-truth")
    ratios, per_exp, problems, rule = {}, {}, [], {}
    for e in names:
        gt = load_trx(ground_truth / e / FILE)
        ref = load_trx(reference / e / FILE)
        base = mota(gt, ref, config)
        try:
            sub = load_trx(submission / e / FILE)
        except InputError as exc:
            problems.append(str(exc))
            ratios[e], per_exp[e] = None, {"valid": False, "reason": str(exc), "reference": base}
            continue
        # Against the baseline tracker's output of the same video (the ground truth may
        # annotate only part of it).
        check_complete(sub, ref, str(submission / e / FILE), str(reference / e / FILE),
                       config.min_fly_frames_share)
        counts = mota(gt, sub, config)
        if counts["mota"] is None or base["mota"] is None:
            raise InputError("the ground truth has no fly in any frame",
                             source=str(ground_truth / e))
        r = float(tolerance_ratio(1.0 - base["mota"], 1.0 - counts["mota"]))
        ratios[e] = np.array([r])
        rule[e] = bool(pass_relative(counts["mota"], base["mota"], 0.0))   # epsilon = 0
        per_exp[e] = {"valid": True, "submission": counts, "reference": base,
                    "ratio": min(config.cap, r)}
    score, result, criteria, passed = summarise_ratios(
        ["mota"], ratios, cap=config.cap, nearly_all=config.nearly_all,
        structural_failure=bool(problems), unit_pass=rule)
    for e, ok in passed.items():
        per_exp[e]["passed"] = ok
    return StageResult("body-tracking", score, result, criteria, per_exp, config_record(config),
                       problems)
