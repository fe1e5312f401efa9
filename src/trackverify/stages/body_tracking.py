"""A1 Body tracking: MOTA per experiment from the head / abdomen tip error, against the
reference (baseline) tracker scored on the same ground truth.

Tips ``head = (x, y) + 2a (cos theta, sin theta)``, ``abd = (x, y) - 2a (cos theta, sin theta)``;
the error of a (GT fly g, predicted track p) pair is
``err = (||head_g - head_p|| + ||abd_g - abd_p||) / a_g / 2`` with ``a_g`` the GT fly's
quarter length (OQ-A1.1). Per frame with ground truth (OQ-A1.4), pairs with ``err > tau_match``
(1.0, OQ-A1.2) are forbidden and the rest matched by the Hungarian algorithm; unmatched GT
flies are FN, unmatched predictions FP, and a GT fly whose matched track differs from the
one at its most recent previous matched frame is an IDSW (OQ-A1.3).
``MOTA = 1 - sum_t (FN_t + FP_t + IDSW_t) / sum_t GT_t``. Per experiment
``r = (1 - MOTA_ref) / (1 - MOTA_sub)``; pass iff ``MOTA_sub >= MOTA_ref`` (r >= 1).
NaN poses count as "not present".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.assignment import assign
from trackverify.errors import InputError
from trackverify.scoring import pass_relative, tolerance_ratio
from trackverify.stages.common import (
    StageResult, config_record, dense, experiments, load_trx, summarise_ratios, total_frames)

FILE = "trx.pkl"
FRAME_BLOCK = 4096


@dataclass(frozen=True)
class BodyTrackingConfig:
    tau_match: float = 1.0                  # OQ-A1.2
    idsw: str = "last_matched"              # OQ-A1.3: "last_matched" or "consecutive"
    cap: float = 10.0                       # reporting cap of the uncapped ratio
    nearly_all: float = 0.9                 # OQ-0.1


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


def _clear_mota(gt_present: np.ndarray, pred_present: np.ndarray, err: np.ndarray,
                gate: float, idsw: str = "last_matched") -> dict[str, Any]:
    """CLEAR-MOT counts and MOTA (EVALUATORS.md A1) from per-frame ids and the tip error.

    ``gt_present (T, G)`` / ``pred_present (T, P)``: which GT ids / predicted track ids are
    present at each frame (ids are the column indices); ``err (T, G, P)``: the tip error
    (non-finite = impossible). Only frames with at least one GT fly are scored; pairs with
    ``err > gate`` are never matched. Frames whose gated candidates are already one-to-one
    are resolved without an assignment; the others are solved with :func:`assign`.
    ``MOTA = 1 - (FN + FP + IDSW) / GT``.
    """
    scored = gt_present.any(axis=1)
    gt_present, pred_present, err = gt_present[scored], pred_present[scored], err[scored]
    allowed = gt_present[:, :, None] & pred_present[:, None, :] & np.isfinite(err)
    with np.errstate(invalid="ignore"):
        allowed &= err <= gate
    match = np.full(gt_present.shape, -1, dtype=np.int64)
    rowcount, colcount = allowed.sum(axis=2), allowed.sum(axis=1)
    simple = (rowcount <= 1).all(axis=1) & (colcount <= 1).all(axis=1)
    one = simple[:, None] & (rowcount == 1)
    match[one] = np.argmax(allowed, axis=2)[one]
    for t in np.flatnonzero(~simple):            # an assignment must be solved here
        rows, cols = assign(np.where(allowed[t], err[t], np.inf))
        match[t, rows] = cols
    tp = int(np.sum(match >= 0))
    n_gt = int(gt_present.sum())
    fn, fp = n_gt - tp, int(pred_present.sum()) - tp
    g, t = np.nonzero(match.T >= 0)              # sorted by GT id, then frame
    ids = match.T[g, t]
    switch = (g[1:] == g[:-1]) & (ids[1:] != ids[:-1])
    if idsw == "consecutive":
        switch &= t[1:] == t[:-1] + 1
    elif idsw != "last_matched":
        raise InputError(f"idsw must be 'last_matched' or 'consecutive', not {idsw!r}")
    n_idsw = int(switch.sum())
    mota = 1.0 - (fn + fp + n_idsw) / n_gt if n_gt else None
    return {"mota": mota, "tp": tp, "fn": fn, "fp": fp, "idsw": n_idsw, "gt": n_gt,
            "frames": int(scored.sum()), "frames_assigned": int(np.sum(~simple))}


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
    return _clear_mota(g_present, p_present, err, config.tau_match, config.idsw)


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: BodyTrackingConfig) -> StageResult:
    if ground_truth is None:
        raise InputError("the body-tracking stage needs --ground-truth (exp_*/trx.pkl)")
    names = experiments(ground_truth, "ground-truth")
    ratios, per_exp, problems, rule = {}, {}, [], {}
    for e in names:
        gt = load_trx(ground_truth / e / FILE)
        base = mota(gt, load_trx(reference / e / FILE), config)
        try:
            sub = load_trx(submission / e / FILE)
        except InputError as exc:
            problems.append(str(exc))
            ratios[e], per_exp[e] = None, {"valid": False, "reason": str(exc), "reference": base}
            continue
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
