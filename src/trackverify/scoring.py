"""Small scoring building blocks shared by the families (one copy each)."""

from __future__ import annotations

import numpy as np


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float | None:
    """Mean over the classes present in ``y_true`` of the recall of that class.

    ``BA = (1/|C|) * sum_c |{i: y_i = c, yhat_i = c}| / |{i: y_i = c}|`` over classes
    ``c`` present in ``y_true``. Undefined (None) when ``y_true`` is empty. Matches
    ``sklearn.metrics.balanced_accuracy_score`` (without its adjustment).
    """
    y_true = np.asarray(y_true).ravel()
    y_pred = np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in length: {y_true.shape} vs {y_pred.shape}")
    if y_true.size == 0:
        return None
    classes, true_codes = np.unique(y_true, return_inverse=True)
    correct = (y_true == y_pred)
    per_class_total = np.bincount(true_codes, minlength=len(classes))
    per_class_correct = np.bincount(true_codes, weights=correct, minlength=len(classes))
    return float(np.mean(per_class_correct / per_class_total))


# --------------------------------------------------------------------------------------------
# Tolerance ratios, pass rules and verdicts (used by the pipeline-stage evaluators and any
# other family that scores "within tolerance of a reference").
# --------------------------------------------------------------------------------------------

PASS, PARTIAL, FAIL = "pass", "partial", "fail"


def tolerance_ratio(tau, err, cap: float | None = None) -> np.ndarray:
    """Tolerance ratio ``r = tau / err`` (higher is better; ``r >= 1`` iff within tolerance).

    Edge rules (EVALUATORS.md 0.2): ``err = 0`` gives ``+inf`` (the cap, when one is given);
    ``tau = 0`` with ``err > 0`` gives 0; ``tau = 0`` with ``err = 0`` gives 2; a NaN error
    (or tolerance) gives 0. With ``cap``, the result is
    ``min(cap, r)``. Works element-wise on arrays; returns float64 (a 0-d array for scalars).
    """
    tau = np.asarray(tau, dtype=np.float64)
    err = np.abs(np.asarray(err, dtype=np.float64))
    tau, err = np.broadcast_arrays(tau, err)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = tau / err
    r = np.where(err == 0, np.inf, r)
    r = np.where((tau == 0) & (err == 0), 2.0, r)
    r = np.where((tau == 0) & (err > 0), 0.0, r)
    r = np.where(np.isnan(err) | np.isnan(tau), 0.0, r)
    if cap is not None:
        r = np.minimum(r, cap)
    return r


def capped_mean(ratios, cap: float | None = None, valid=None, axis=None) -> np.ndarray:
    """Mean of ``v * min(cap, r)`` (``v`` = validity mask, 1 by default) over ``axis``.

    ``score = (1/|C|) sum_c E_e[v(e) min(cap, r_c(e))]`` is
    ``capped_mean(r[c, e], cap, valid[e]).mean()``; averaging criteria and experiments in
    either order gives the same value on a full (criteria x experiments) grid.
    """
    r = np.asarray(ratios, dtype=np.float64)
    if cap is not None:
        r = np.minimum(r, cap)
    if valid is not None:
        r = np.where(np.asarray(valid, dtype=bool), r, 0.0)
    return np.mean(r, axis=axis)


def pass_relative(score_sub, score_ref, eps: float) -> np.ndarray:
    """Ground-truth family: ``score(sub, GT) >= (1 - eps) * score(ref, GT)`` (higher is better)."""
    return np.asarray(score_sub, dtype=np.float64) >= (1.0 - eps) * np.asarray(score_ref,
                                                                              dtype=np.float64)


def pass_error_ratio(err_sub, err_ref, alpha: float) -> np.ndarray:
    """Ground-truth family for error metrics: ``err(sub) <= alpha * err(ref)`` (alpha >= 1)."""
    return np.asarray(err_sub, dtype=np.float64) <= alpha * np.asarray(err_ref, dtype=np.float64)


def pass_max_abs(sub, ref, eps: float) -> bool:
    """No-ground-truth family: ``max_i |sub_i - ref_i| <= eps`` (NaN differences fail)."""
    diff = np.abs(np.asarray(sub, dtype=np.float64) - np.asarray(ref, dtype=np.float64))
    return bool(diff.size == 0 or (np.all(np.isfinite(diff)) and diff.max() <= eps))


def verdict(unit_passed, score: float | None, *, nearly_all: float = 0.9,
            partial_ok: bool | None = None, structural_failure: bool = False) -> str:
    """Per-run verdict ``pass`` / ``partial`` / ``fail`` (EVALUATORS.md 0.2, OQ-0.1).

    ``pass`` when at least ``nearly_all`` of the units (experiments, lines) passed every
    criterion; otherwise ``partial`` when ``partial_ok`` holds (by default: the aggregate
    score is >= 1); otherwise ``fail``. A structural failure of any unit is always ``fail``.
    """
    passed = np.asarray(unit_passed, dtype=bool).ravel()
    if structural_failure or passed.size == 0:
        return FAIL
    if passed.mean() >= nearly_all:
        return PASS
    if partial_ok is None:
        partial_ok = score is not None and np.isfinite(score) and score >= 1.0
    return PARTIAL if partial_ok else FAIL
