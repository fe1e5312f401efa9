"""A6 Gait (swing/stance) segmentation: two-sided bout-level balanced accuracy against the
reference's ``swing_stance.npy``.

On the frames where the reference is not -1 (all flies and the 6 legs jointly),

``E = 1/(2 N*) sum_{ref bouts b} mean_{t in b} 1[yhat_t != y*_t]
    + 1/(2 N^pred) sum_{pred bouts b} mean_{t in b} 1[y*_t != yhat_t]``, ``bout-BA = 1 - E``,

where a bout is a maximal run of one value within one (fly, leg) series after removing the
reference's -1 frames (OQ-A6.1: runs continue across removed frames by default,
``gaps = "break"`` breaks them). Per experiment ``r = (1 - 0.9) / (1 - bout-BA)``
(OQ-A6.2); the score is the mean of ``min(cap, r)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import NPY_LOAD_ERRORS, check_npy
from trackverify.scoring import tolerance_ratio
from trackverify.stages.common import StageResult, config_record, experiments, summarise_ratios

FILE = "swing_stance.npy"


@dataclass(frozen=True)
class GaitConfig:
    threshold: float = 0.9                  # OQ-A6.2
    gaps: str = "concatenate"               # OQ-A6.1: "concatenate" or "break"
    cap: float = 10.0
    nearly_all: float = 0.9                 # OQ-0.1


def _mean_bout_error(values: np.ndarray, series: np.ndarray, frames: np.ndarray,
                     wrong: np.ndarray, break_at_gaps: bool) -> float:
    start = np.ones(values.size, dtype=bool)
    start[1:] = (values[1:] != values[:-1]) | (series[1:] != series[:-1])
    if break_at_gaps:
        start[1:] |= frames[1:] != frames[:-1] + 1
    bout = np.cumsum(start) - 1
    return float(np.mean(np.bincount(bout, weights=wrong) / np.bincount(bout)))


def bout_balanced_accuracy(pred: np.ndarray, ref: np.ndarray, gaps: str = "concatenate"
                           ) -> float | None:
    """Two-sided bout-level balanced accuracy of ``pred`` against ``ref``, both
    ``(n_flies, total_frames, 6)``; None when the reference has no walking frame."""
    ref_s = np.moveaxis(ref, 2, 1).reshape(-1, ref.shape[1])   # (fly*leg, frames)
    pred_s = np.moveaxis(pred, 2, 1).reshape(-1, pred.shape[1])
    series, frames = np.nonzero(ref_s != -1)
    if series.size == 0:
        return None
    y, yhat = ref_s[series, frames], pred_s[series, frames]
    wrong = (y != yhat).astype(np.float64)
    brk = gaps == "break"
    e = 0.5 * _mean_bout_error(y, series, frames, wrong, brk) + \
        0.5 * _mean_bout_error(yhat, series, frames, wrong, brk)
    return 1.0 - e


def load_swing_stance(path: Path, shape: tuple[int, ...] | None = None) -> np.ndarray:
    if not path.is_file():
        raise InputError("file not found", source=str(path))
    try:
        arr = np.load(check_npy(path), allow_pickle=False)
    except NPY_LOAD_ERRORS as exc:
        raise InputError(f"not a readable .npy array ({exc})", source=str(path)) from exc
    if not isinstance(arr, np.ndarray):  # an .npz archive saved under the .npy name
        arr.close()
        raise InputError("an .npz archive, expected a .npy array", source=str(path))
    if arr.ndim != 3 or arr.shape[2] != 6:
        raise InputError(f"shape {arr.shape}, expected (n_flies, total_frames, 6)",
                         source=str(path))
    if shape is not None and arr.shape != shape:
        raise InputError(f"shape {arr.shape} differs from the reference's {shape}",
                         source=str(path))
    if arr.dtype.kind not in "iu":
        raise InputError(f"dtype {arr.dtype}, expected an integer array", source=str(path))
    if not np.all(np.isin(arr, (-1, 0, 1))):
        raise InputError("values outside {-1, 0, 1}", source=str(path))
    return arr


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: GaitConfig) -> StageResult:
    if config.gaps not in ("concatenate", "break"):
        raise InputError(f"gaps must be 'concatenate' or 'break', not {config.gaps!r}")
    names = experiments(reference, "reference")
    ratios, per_exp, problems = {}, {}, []
    for e in names:
        ref = load_swing_stance(reference / e / FILE)
        try:
            sub = load_swing_stance(submission / e / FILE, ref.shape)
        except InputError as exc:
            problems.append(str(exc))
            ratios[e], per_exp[e] = None, {"valid": False, "reason": str(exc)}
            continue
        ba = bout_balanced_accuracy(sub, ref, config.gaps)
        if ba is None:
            per_exp[e] = {"valid": True, "bout_balanced_accuracy": None,
                          "note": "the reference has no walking frame; experiment not scored"}
            continue
        r = float(tolerance_ratio(1.0 - config.threshold, 1.0 - ba))
        ratios[e] = np.array([r])
        per_exp[e] = {"valid": True, "bout_balanced_accuracy": ba, "ratio": min(config.cap, r)}
    score, result, criteria, passed = summarise_ratios(
        ["bout_balanced_accuracy"], ratios, cap=config.cap, nearly_all=config.nearly_all,
        structural_failure=bool(problems))
    for e, ok in passed.items():
        per_exp[e]["passed"] = ok
    return StageResult("gait", score, result, criteria, per_exp, config_record(config), problems)
