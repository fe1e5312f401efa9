"""Agreement of an agent judge with manual ratings (EVALUATORS B9; paper B §4.4).

Ratings are on the ordinal scale incorrect < concerning < ok < match < better. They are
binarised with {incorrect, concerning} as the positive class ("a mistake"); the manual
rating is the ground truth. From the confusion counts:

* ``balanced_accuracy = (TP/(TP+FN) + TN/(TN+FP)) / 2``
* ``d_prime = Phi^-1((TP+0.5)/(TP+FN+1)) - Phi^-1((FP+0.5)/(FP+TN+1))`` (log-linear correction)
* ``recall = TP/(TP+FN)``, ``precision = TP/(TP+FP)``, ``f1 = 2 TP / (2 TP + FP + FN)``

A ratio with a zero denominator is undefined (None).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from trackverify.errors import InputError

SCALE = ("incorrect", "concerning", "ok", "match", "better")
POSITIVE = frozenset({"incorrect", "concerning"})


def _ratio(num: float, den: float) -> float | None:
    return float(num / den) if den > 0 else None


def judge_agreement(tp: int, fp: int, fn: int, tn: int) -> dict[str, float | None]:
    """Balanced accuracy, d' (log-linear), recall, precision and F1 from confusion counts."""
    counts = np.array([tp, fp, fn, tn])
    if (counts < 0).any():
        raise ValueError(f"confusion counts must be >= 0, got {counts.tolist()}")
    recall = _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    ba = None if recall is None or specificity is None else 0.5 * (recall + specificity)
    hit = (tp + 0.5) / (tp + fn + 1.0)
    false_alarm = (fp + 0.5) / (fp + tn + 1.0)
    return {
        "balanced_accuracy": ba,
        "d_prime": float(norm.ppf(hit) - norm.ppf(false_alarm)),
        "recall": recall,
        "precision": _ratio(tp, tp + fp),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
    }


def binarise(ratings: Any, source: str = "ratings", column: str | None = None) -> np.ndarray:
    """True where a rating is incorrect or concerning (case-insensitive)."""
    values = pd.Series(ratings, dtype="object").astype(str).str.strip().str.lower()
    bad = ~values.isin(SCALE)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"'{values.iloc[row]}' is not a rating ({', '.join(SCALE)})",
                         source=source, column=column, row=row + 1)
    return values.isin(POSITIVE).to_numpy()


def confusion_counts(judge: np.ndarray, manual: np.ndarray) -> dict[str, int]:
    """TP/FP/FN/TN of binarised judge ratings against binarised manual ratings."""
    judge, manual = np.asarray(judge, bool), np.asarray(manual, bool)
    return {"tp": int((judge & manual).sum()), "fp": int((judge & ~manual).sum()),
            "fn": int((~judge & manual).sum()), "tn": int((~judge & ~manual).sum())}


def agreement_table(table: pd.DataFrame, judge_column: str = "judge_rating",
                    manual_column: str = "manual_rating", by: tuple[str, ...] = (),
                    source: str = "ratings") -> list[dict[str, Any]]:
    """One row per group of ``by`` (one row overall without): the group's values, the
    confusion counts and :func:`judge_agreement`. Rows with a missing rating are refused."""
    for col in (judge_column, manual_column, *by):
        if col not in table.columns:
            raise InputError(f"missing column '{col}' (columns: {', '.join(map(str, table.columns))})",
                             source=source)
    for col in (judge_column, manual_column):
        missing = table[col].isna().to_numpy()
        if missing.any():
            raise InputError("missing rating", source=source, column=col,
                             row=int(np.flatnonzero(missing)[0]) + 1)
    judge = binarise(table[judge_column], source, judge_column)
    manual = binarise(table[manual_column], source, manual_column)
    table = table.reset_index(drop=True)
    groups = [((), np.ones(len(table), bool))] if not by else [
        (key if isinstance(key, tuple) else (key,), table.index.isin(sub.index))
        for key, sub in table.groupby(list(by), sort=True)]
    rows = []
    for key, mask in groups:
        counts = confusion_counts(judge[mask], manual[mask])
        rows.append({**dict(zip(by, key)), **counts, "n": int(mask.sum()),
                     **judge_agreement(**counts)})
    return rows



def grade_spread(table: pd.DataFrame, rating_column: str, by: tuple[str, ...],
                 source: str = "ratings") -> pd.DataFrame:
    """Trial-to-trial variability: per group of ``by`` (e.g. agent, dataset, subtask), the
    highest minus the lowest ordinal grade (incorrect = 0 ... better = 4) over its rows
    (the repeated trials). 0 means every trial got the same grade."""
    for col in (rating_column, *by):
        if col not in table.columns:
            raise InputError(f"missing column '{col}'", source=source)
    values = table[rating_column].astype(str).str.strip().str.lower()
    binarise(values, source, rating_column)  # refuses unknown ratings, naming the row
    grades = values.map({name: i for i, name in enumerate(SCALE)})
    grouped = grades.groupby([table[c] for c in by], sort=True)
    return (grouped.max() - grouped.min()).rename("spread").reset_index()
