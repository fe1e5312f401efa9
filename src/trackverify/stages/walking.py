"""A5 Walking classifier: balanced per-frame accuracy on the labelled bouts, against the
reference (baseline) classifier scored on the same labels.

``BA = 1/2 (TP/(TP+FN) + TN/(TN+FP))`` over every labelled frame, pooled across experiments
and flies (positive class: walking). Pass iff ``BA_sub >= alpha * BA_ref`` (alpha = 0.95,
OQ-A5.1); score ``r = (1 - alpha BA_ref) / (1 - BA_sub)`` (uncapped in the paper; capped here
for reporting at ``cap``).

Formats: ``GROUND_TRUTH/labels.pkl`` in the label layout of EVALUATORS.md A5 (``sampleDirs``
name the ``exp_*`` folders; ``flies`` 1-based; ``t0s`` inclusive, ``t1s`` exclusive) and
``exp_*/walk_preds.pkl`` in the submission and reference folders: a list with one 1-D array
per fly, indexed like the per-frame feature arrays (label frames index it directly,
OQ-A5.2). Values other than 1 (including NaN) count as "not walking" (OQ-A5.5); labelled
frames beyond the end of an array count as wrong (OQ-A5.3) and are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.safe_pickle import load_restricted
from trackverify.scoring import balanced_accuracy, pass_relative, tolerance_ratio
from trackverify.stages.common import (StageResult, as_array, config_record, confined,
                                       summarise_ratios)
from trackverify.values import is_real

LABEL_KEYS = ("sampleDirs", "flies", "t0s", "t1s", "labels")
#: Most labelled frames one labels file may hold, over all its bouts (10^7 frames: 18 hours
#: of labels at 150 frames per second; a bout of 2^41 frames asked for 16 TiB).
MAX_LABELLED_FRAMES = 10**7


@dataclass(frozen=True)
class WalkingConfig:
    alpha: float = 0.95                     # OQ-A5.1
    labels_file: str = "labels.pkl"
    predictions_file: str = "walk_preds.pkl"
    cap: float = 10.0                       # reporting cap of the uncapped ratio


def expand_bouts(t0: np.ndarray, t1: np.ndarray, labels: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Frames ``t0[k] .. t1[k] - 1`` of every bout and their per-frame labels (vectorised)."""
    lengths = np.maximum(t1 - t0, 0)
    starts = np.cumsum(lengths) - lengths
    frames = np.arange(lengths.sum()) - np.repeat(starts, lengths) + np.repeat(t0, lengths)
    return frames.astype(np.int64), np.repeat(labels, lengths).astype(np.int64)


def load_labels(path: Path) -> list[tuple[str, int, np.ndarray, np.ndarray]]:
    """``(sample, fly index (0-based), frames, labels)`` per labelled fly."""
    raw = load_restricted(path)
    if not isinstance(raw, dict) or any(k not in raw for k in LABEL_KEYS):
        raise InputError(f"expected a dict with keys {list(LABEL_KEYS)}", source=str(path))
    out, total = [], 0
    try:
        for s, sample in enumerate(raw["sampleDirs"]):
            sample = _sample_dir(sample, s, path)
            flies = raw["flies"][s]
            for j, fly in enumerate(flies):
                fly = _fly_number(fly, f"flies[{s}][{j}]", path)
                t0, t1, lab = (_whole(raw[k][s][j], f"{k}[{s}][{j}]", path)
                               for k in ("t0s", "t1s", "labels"))
                if not (t0.size == t1.size == lab.size) or np.any(t1 < t0) or np.any(t0 < 0):
                    raise InputError(f"sample {s} fly {fly}: t0s/t1s/labels disagree",
                                     source=str(path))
                if not np.all(np.isin(lab, (0, 1))):
                    raise InputError(f"sample {s} fly {fly}: labels must be 0 or 1",
                                     source=str(path))
                total = _labelled_frames(total, t0, t1, f"[{s}][{j}]", path)
                frames, y = expand_bouts(t0, t1, lab)
                out.append((sample, fly - 1, frames, y))
    except (TypeError, IndexError, KeyError, ValueError, OverflowError) as exc:
        raise InputError(f"malformed walking labels ({type(exc).__name__}: {exc})",
                         source=str(path)) from exc
    return out


def _sample_dir(sample: Any, s: int, path: Path) -> str:
    """``sampleDirs[s]``: the name of one experiment folder (one plain path component)."""
    name = str(sample)
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise InputError(f"sampleDirs[{s}] = {name!r} is not the name of an experiment folder",
                         source=str(path))
    return name


def _fly_number(fly: Any, where: str, path: Path) -> int:
    """A 1-based fly number (a whole number >= 1; 0 would index the last fly)."""
    if not is_real(fly) or float(fly) != int(fly) or int(fly) < 1:
        raise InputError(f"{where} = {fly}: fly numbers are whole numbers from 1 (1-based)",
                         source=str(path))
    return int(fly)


def _labelled_frames(total: int, t0: np.ndarray, t1: np.ndarray, where: str, path: Path) -> int:
    """``total`` plus the frames of the bouts ``t0 .. t1 - 1``; beyond
    :data:`MAX_LABELLED_FRAMES` an InputError naming the bout that passes it."""
    lengths = np.minimum(t1 - t0, MAX_LABELLED_FRAMES + 1)  # (0 <= t0 <= t1: no overflow)
    reached = total + np.cumsum(lengths)
    over = np.flatnonzero(reached > MAX_LABELLED_FRAMES)
    if over.size:
        k = int(over[0])
        raise InputError(f"t1s{where}[{k}] = {int(t1[k])}: with this bout the labels cover more "
                         f"than the {MAX_LABELLED_FRAMES} frames a labels file may hold (t0s "
                         "and t1s are frame indices)", source=str(path))
    return int(reached[-1]) if reached.size else total


def _whole(values: Any, where: str, path: Path) -> np.ndarray:
    """``values`` as a 1-D int64 array; a fractional or non-finite value (which ``astype``
    would truncate or wrap) is an InputError naming ``where``."""
    arr = np.asarray(values).reshape(-1)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (np.abs(arr) >= 2.0**63)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(f"{where}[{first}] = {float(arr[first])!r} is not a whole number",
                             source=str(path))
    return np.asarray(arr, dtype=np.int64)  # other kinds: ValueError / OverflowError named


def load_predictions(path: Path, needed_flies: int) -> list[np.ndarray]:
    value = load_restricted(path)
    if not isinstance(value, (list, tuple)) or len(value) < needed_flies:
        got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
        raise InputError(f"expected a list of at least {needed_flies} per-fly arrays, found {got}",
                         source=str(path))
    out = []
    for i, item in enumerate(value):
        arr = as_array(item, str(path), f"fly {i}")
        if arr.ndim != 1 or arr.dtype.kind not in "biuf":
            raise InputError(f"fly {i}: expected a 1-D numeric array", source=str(path))
        out.append(arr.astype(np.float64))
    return out


def collect(folder: Path, labelled, config: WalkingConfig) -> tuple[np.ndarray, np.ndarray,
                                                                      dict[str, Any]]:
    """Pooled true and predicted labels of ``folder``'s predictions on the labelled frames."""
    need: dict[str, int] = {}
    for sample, fly, _, _ in labelled:
        need[sample] = max(need.get(sample, 0), fly + 1)
    preds = {s: load_predictions(confined(folder, s, config.predictions_file,
                                          what="setting 'predictions_file'"), n)
             for s, n in need.items()}
    ys, yhats, per_exp = [], [], {}
    for sample, fly, frames, y in labelled:
        p = preds[sample][fly]
        inside = frames < p.size
        # a frame without prediction counts as wrong (1 - y); an empty array has none at all
        hit = p[np.minimum(frames, p.size - 1)] == 1 if p.size else np.zeros(frames.shape, bool)
        yhat = np.where(inside, hit, 1 - y)
        ys.append(y)
        yhats.append(yhat.astype(np.int64))
        rec = per_exp.setdefault(sample, {"frames": 0, "frames_without_prediction": 0,
                                          "_y": [], "_yhat": []})
        rec["frames"] += int(y.size)
        rec["frames_without_prediction"] += int(np.sum(~inside))
        rec["_y"].append(y)
        rec["_yhat"].append(yhat)
    for rec in per_exp.values():
        rec["balanced_accuracy"] = balanced_accuracy(np.concatenate(rec.pop("_y")),
                                                     np.concatenate(rec.pop("_yhat")))
    return np.concatenate(ys), np.concatenate(yhats), per_exp


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: WalkingConfig) -> StageResult:
    if ground_truth is None:
        raise InputError("the walking stage needs --ground-truth (the folder of labels.pkl)")
    labels_path = confined(ground_truth, config.labels_file, what="setting 'labels_file'")
    labelled = load_labels(labels_path)
    if not labelled:
        raise InputError("no labelled frames", source=str(labels_path))
    y_ref, yhat_ref, ref_exp = collect(reference, labelled, config)
    ba_ref = balanced_accuracy(y_ref, yhat_ref)
    problems = []
    try:
        y, yhat, per_exp = collect(submission, labelled, config)
        ba = balanced_accuracy(y, yhat)
        r = float(tolerance_ratio(1.0 - config.alpha * ba_ref, 1.0 - ba))
    except InputError as exc:
        problems.append(str(exc))
        ba, r, per_exp = None, None, {}
    for e, rec in ref_exp.items():
        per_exp.setdefault(e, {})["reference_balanced_accuracy"] = rec["balanced_accuracy"]
    score, result, criteria, _ = summarise_ratios(
        ["balanced_accuracy"], {"pooled": None if r is None else np.array([r])}, cap=config.cap,
        nearly_all=1.0, structural_failure=bool(problems),
        unit_pass={"pooled": ba is not None and bool(pass_relative(ba, ba_ref, 1 - config.alpha))})
    criteria["balanced_accuracy"].update(
        submission=ba, reference=ba_ref, threshold=config.alpha * ba_ref,
        ratio=None if r is None else min(config.cap, r),
        passed=ba is not None and bool(pass_relative(ba, ba_ref, 1 - config.alpha)))
    return StageResult("walking", score, result, criteria, per_exp, config_record(config),
                       problems)
