"""ROC and precision-recall curves for the report (scikit-learn), thinned for plotting."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import precision_recall_curve, roc_curve

MAX_POINTS = 400


def _thin(*arrays: np.ndarray) -> list[list[float]]:
    n = len(arrays[0])
    keep = np.unique(np.linspace(0, n - 1, min(n, MAX_POINTS)).round().astype(int)) if n else []
    return [a[keep].tolist() for a in arrays]


def detection_curves(error: np.ndarray, score: np.ndarray) -> dict | None:
    """ROC and PR curves over labelled rows with a finite score; None if undefined."""
    ranked = ~np.isnan(error) & np.isfinite(score)
    y, s = error[ranked] == 1, score[ranked]
    if not ranked.any() or y.all() or not y.any():
        return None
    fpr, tpr, _ = roc_curve(y, s)
    precision, recall, _ = precision_recall_curve(y, s)
    fpr, tpr = _thin(fpr, tpr)
    recall, precision = _thin(recall[::-1], precision[::-1])
    return {"fpr": fpr, "tpr": tpr, "recall": recall, "precision": precision,
            "prevalence": float(y.mean())}
