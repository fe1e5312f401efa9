"""A3 Keypoints: mean over keypoints of the mean of the 50/75/90/95/97.5th percentile errors.

``eps = (1/K) sum_k (1/|P|) sum_{p in P} percentile_p({||xhat_ik - x*_ik||_2 : i, v_ik > 0})``
(linear interpolation, ``numpy.percentile``; OQ-A3.1/2), pooled over the annotations of all
experiments. Pass iff ``eps <= 1.7 px`` (= alpha * eps_baseline); score ``r = 1.7 / eps``
(uncapped in the paper, capped here for reporting). The extra targets (median <= 0.5 px,
95th <= 2 px, 97.5th <= 3.5 px) are reported, per keypoint averaged and pooled (OQ-A3.5),
and are not pass criteria. The reference's (baseline's) error is reported alongside.

Formats (npz, read with ``allow_pickle=False``): ground truth ``exp_*/keypoints_gt.npz`` with
``keypoints`` ``(N, 21, 3)`` = COCO (x, y, v), or a COCO keypoint file ``exp_*/labels.json``
(annotations in file order); predictions ``exp_*/keypoint_preds.npz``
with ``pred`` ``(N, 21, 2)`` (x, y) in crop pixels. Non-finite predictions or a wrong shape
fail the run with score 0 (OQ-A3.4).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import NPY_LOAD_ERRORS, check_npy, parse_nested, read_text
from trackverify.scoring import tolerance_ratio
from trackverify.stages.common import (StageResult, config_record, experiments, list_setting,
                                       summarise_ratios)

GT_FILE, GT_KEY = "keypoints_gt.npz", "keypoints"
PRED_FILE, PRED_KEY = "keypoint_preds.npz", "pred"
COCO_FILE = "labels.json"


@dataclass(frozen=True)
class KeypointsConfig:
    cutoff_px: float = 1.7
    percentiles: str = "50,75,90,95,97.5"
    median_target_px: float = 0.5
    p95_target_px: float = 2.0
    p975_target_px: float = 3.5
    n_keypoints: int = 21
    cap: float = 10.0


def load_npz_array(path: Path, key: str, shape_tail: tuple[int, ...]) -> np.ndarray:
    """``key`` of an npz file (no pickles), float64, with trailing dimensions ``shape_tail``."""
    if not path.is_file():
        raise InputError("file not found", source=str(path))
    try:
        with np.load(check_npy(path), allow_pickle=False) as data:
            if key not in data.files:
                raise InputError(f"missing array '{key}' (found {data.files})", source=str(path))
            arr = data[key]
    except NPY_LOAD_ERRORS as exc:
        raise InputError(f"not a readable .npz file ({exc})", source=str(path)) from exc
    if arr.ndim != 1 + len(shape_tail) or arr.shape[1:] != shape_tail or \
            arr.dtype.kind not in "biuf":
        raise InputError(f"'{key}' has shape {arr.shape} and dtype {arr.dtype}, expected "
                         f"(N, {', '.join(map(str, shape_tail))}) numbers", source=str(path))
    return arr.astype(np.float64)


def load_ground_truth(folder: Path, k: int) -> np.ndarray:
    """``(N, K, 3)`` annotations of one experiment: ``keypoints_gt.npz`` or, failing that,
    a COCO keypoint file ``labels.json`` (annotations in file order)."""
    if (folder / GT_FILE).is_file() or not (folder / COCO_FILE).is_file():
        return checked_annotations(load_npz_array(folder / GT_FILE, GT_KEY, (k, 3)),
                                   folder / GT_FILE)
    path = folder / COCO_FILE
    try:
        anns = parse_nested(json.loads, read_text(path), source=str(path),
                            kind="JSON")["annotations"]
        arr = np.array([a["keypoints"] for a in anns], dtype=np.float64)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a COCO keypoint file ({exc})", source=str(path)) from exc
    if arr.ndim != 2 or arr.shape[1] != 3 * k:
        raise InputError(f"each annotation needs {3 * k} keypoint values", source=str(path))
    return checked_annotations(arr.reshape(-1, k, 3), path)


def checked_annotations(gt: np.ndarray, path: Path) -> np.ndarray:
    """``gt`` ``(N, K, 3)`` when every visibility is COCO's 0, 1 or 2 and every visible
    keypoint (v > 0) has finite x, y; else an InputError naming the annotation (row,
    1-based) and keypoint. A visible keypoint without coordinates used to be dropped from
    the errors as if not visible."""
    v = gt[..., 2]
    bad_v = ~np.isin(v, (0, 1, 2))
    bad_xy = (v > 0) & ~np.isfinite(gt[..., :2]).all(axis=-1)
    for bad, what in ((bad_v, "visibility {v!r} is not 0, 1 or 2 (COCO)"),
                      (bad_xy, "visible (v = {v!r}) without finite x, y ({x!r}, {y!r})")):
        if bad.any():
            i, j = (int(a[0]) for a in np.nonzero(bad))
            x, y, vis = gt[i, j].tolist()
            raise InputError(f"keypoint {j} " + what.format(v=vis, x=x, y=y),
                             source=str(path), row=i + 1)
    return gt


def keypoint_errors(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """``(N, K)`` Euclidean errors; NaN where the annotation is not visible (v = 0)."""
    err = np.hypot(pred[..., 0] - gt[..., 0], pred[..., 1] - gt[..., 1])
    return np.where(gt[..., 2] > 0, err, np.nan)


def mean_percentile_error(err: np.ndarray, percentiles: list[float]) -> tuple[float, np.ndarray]:
    """``(eps, table)``: table is ``(|P|, K)`` per-keypoint percentiles (NaN for a keypoint
    never visible, excluded from the mean over keypoints)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN keypoint columns
        table = np.nanpercentile(err, percentiles, axis=0, method="linear")
        return float(np.nanmean(table.mean(axis=0))), table


def _load_predictions(folder: Path, names: list[str], counts: list[int], k: int) -> np.ndarray:
    preds = []
    for e, n in zip(names, counts):
        path = folder / e / PRED_FILE
        p = load_npz_array(path, PRED_KEY, (k, 2))
        if p.shape[0] != n:
            raise InputError(f"{p.shape[0]} predictions for {n} annotations", source=str(path))
        if not np.all(np.isfinite(p)):
            raise InputError("non-finite predictions (OQ-A3.4)", source=str(path))
        preds.append(p)
    return np.concatenate(preds)


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: KeypointsConfig) -> StageResult:
    if ground_truth is None:
        raise InputError("the keypoints stage needs --ground-truth (exp_*/keypoints_gt.npz)")
    names = experiments(ground_truth, "ground-truth")
    k = config.n_keypoints
    gts = [load_ground_truth(ground_truth / e, k) for e in names]
    counts = [g.shape[0] for g in gts]
    gt = np.concatenate(gts)
    pcts = [float(p) for p in list_setting(config, "percentiles", 0.0, 100.0)]
    eps_ref, _ = mean_percentile_error(
        keypoint_errors(_load_predictions(reference, names, counts, k), gt), pcts)
    problems, per_exp = [], {}
    try:
        err = keypoint_errors(_load_predictions(submission, names, counts, k), gt)
    except InputError as exc:
        problems.append(str(exc))
        err = None
    criteria: dict[str, Any] = {}
    if err is None:
        ratios = {"pooled": None}
        eps = None
    else:
        eps, table = mean_percentile_error(err, pcts)
        ratios = {"pooled": np.array([float(tolerance_ratio(config.cutoff_px, eps))])}
        bounds = np.cumsum([0, *counts])
        for j, e in enumerate(names):
            per_exp[e] = {"mean_percentile_error_px": mean_percentile_error(
                err[bounds[j]:bounds[j + 1]], pcts)[0], "annotations": counts[j]}
        pooled = {q: float(np.nanpercentile(err, q)) for q in (50, 95, 97.5)}
        per_kp = {q: float(np.nanmean(np.nanpercentile(err, q, axis=0))) for q in (50, 95, 97.5)}
        criteria["extra_targets (reported, not pass criteria)"] = {
            f"p{q}": {"per_keypoint_mean_px": per_kp[q], "pooled_px": pooled[q],
                      "target_px": target, "met_per_keypoint": per_kp[q] <= target,
                      "met_pooled": pooled[q] <= target}
            for q, target in ((50, config.median_target_px), (95, config.p95_target_px),
                              (97.5, config.p975_target_px))}
        criteria["per_keypoint_percentiles_px"] = {
            f"p{p:g}": table[i] for i, p in enumerate(pcts)}
    score, result, summary, _ = summarise_ratios(
        ["mean_percentile_error"], ratios, cap=config.cap, nearly_all=1.0,
        structural_failure=bool(problems))
    summary["mean_percentile_error"].update(
        submission_px=eps, reference_px=eps_ref, cutoff_px=config.cutoff_px,
        implied_alpha=config.cutoff_px / eps_ref if eps_ref > 0 else None)
    criteria = {**summary, **criteria}
    return StageResult("keypoints", score, result, criteria, per_exp, config_record(config),
                       problems)
