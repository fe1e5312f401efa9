"""Dataset summary statistics (EVALUATORS B3) and per-variable summaries (B4, B5, B7).

Every function here expects a dataset that passed :func:`format.validate_format`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RATIO_STATS = ("n_sessions", "n_trials_total", "T_median", "n_neurons_total")
EXACT_STATS = ("n_subjects", "d_in", "d_out")
RATIO_LOW, RATIO_HIGH = 0.9, 1.1


def summary_statistics(data: dict[str, Any]) -> dict[str, float | int | None]:
    """The 7 scale statistics of a converted dataset.

    * ``n_sessions = len(neural)``; ``n_trials_total`` = sum of trials over sessions;
    * ``T_median`` = median over sessions (with >= 1 trial) of the session's mean trial
      length in bins (OQ-B3.1, as in the authors' code);
    * ``n_neurons_total`` = sum over sessions of the session's neuron count;
    * ``n_subjects = len(subjects)``; ``d_in``, ``d_out`` = rows of an input / output trial.
    """
    neural = data["neural"]
    lengths = [np.mean([x.shape[1] for x in session]) for session in neural if session]
    first_in = next((t for session in data["input"] for t in session), None)
    first_out = next((t for session in data["output"] for t in session), None)
    return {
        "n_sessions": len(neural),
        "n_trials_total": int(sum(len(session) for session in neural)),
        "T_median": float(np.median(lengths)) if lengths else None,
        "n_neurons_total": int(sum(session[0].shape[0] for session in neural if session)),
        "n_subjects": len(data["subjects"]),
        "d_in": int(first_in.shape[0]) if first_in is not None else len(data["input_names"]),
        "d_out": int(first_out.shape[0]) if first_out is not None else len(data["output_names"]),
    }


def ratio_band(ratio: float | None) -> str | None:
    """Reporting band of an agent/reference ratio: agreement 0.90-1.10, blue above,
    orange 0.70-0.90, red below 0.70 (EVALUATORS B3)."""
    if ratio is None:
        return None
    if RATIO_LOW <= ratio <= RATIO_HIGH:
        return "agreement"
    if ratio > RATIO_HIGH:
        return "blue"
    return "orange" if ratio >= 0.7 else "red"


def compare_statistics(agent: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """Compare summary statistics: ratio agent/reference in [0.9, 1.1] for the 4 scale
    statistics, exact equality for n_subjects, d_in and d_out. A ratio with a zero or
    undefined reference is undefined (None) and fails."""
    rows = {}
    for name in RATIO_STATS:
        a, r = agent[name], reference[name]
        ratio = (a / r) if (a is not None and r not in (None, 0)) else None
        rows[name] = {"agent": a, "reference": r, "ratio": ratio, "band": ratio_band(ratio),
                      "passed": ratio is not None and RATIO_LOW <= ratio <= RATIO_HIGH}
    for name in EXACT_STATS:
        rows[name] = {"agent": agent[name], "reference": reference[name],
                      "passed": agent[name] == reference[name]}
    return {"statistics": rows, "passed": all(row["passed"] for row in rows.values())}


def _pooled(trials: list[list[np.ndarray]]) -> np.ndarray | None:
    """All samples of every variable as one (d, n_samples) array: a 2-D trial contributes
    its T columns, a 1-D (per-trial) one a single column."""
    columns = [t if t.ndim == 2 else t[:, None] for session in trials for t in session]
    if not columns:
        return None
    return np.concatenate(columns, axis=1)


def variable_ranges(trials: list[list[np.ndarray]]) -> np.ndarray:
    """(d, 2) array of [min, max] of each variable over all sessions, trials and bins."""
    pooled = _pooled(trials)
    if pooled is None or pooled.shape[1] == 0:
        return np.zeros((0, 2))
    return np.stack([pooled.min(axis=1), pooled.max(axis=1)], axis=1).astype(np.float64)


def class_fractions(outputs: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Per output variable, the share of samples with each class code 0..max (unused codes
    between 0 and max count as 0). Per-trial outputs count once per trial, time-varying
    outputs once per bin, pooled over sessions."""
    pooled = _pooled(outputs)
    if pooled is None:
        return []
    codes = np.rint(pooled).astype(np.int64)
    fractions = []
    for row in codes:
        if row.size == 0:
            fractions.append(np.zeros(0))
            continue
        counts = np.bincount(row - min(0, int(row.min())))
        fractions.append(counts / row.size)
    return fractions


def class_counts(ranges: np.ndarray) -> list[int]:
    """Number of classes of each output: ``hi - lo + 1`` of its range (EVALUATORS B5)."""
    return [int(round(hi - lo)) + 1 for lo, hi in ranges]
