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
