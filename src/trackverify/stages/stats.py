"""A7 Statistical comparisons: per line x speed class x alpha, the same significance call or
p-values within a factor ``1 + delta_p``.

``c(l, phi, alpha) = 1[s = s*] or 1[max(p/p*, p*/p) <= 1 + delta_p]`` (the second term only
when both p-values are finite and positive), ``line_ok(l) = prod c``, ``score = mean_l
line_ok(l)``; pass iff score = 1, partial iff score >= 0.9 (EVALUATORS.md A7). The share
of correct cells is reported too.

Format: one CSV per line, ``<line>.csv`` directly in the submission and reference folders
(header ``metric,value``; the 10 metrics of A7; ``sig_*`` values ``True`` / ``False``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.stages.common import StageResult, config_record, list_setting, natural_key
from trackverify.scoring import verdict

SPEEDS = ("slow", "fast")
METRICS = ("u_statistic_slow", "p_value_slow", "u_statistic_fast", "p_value_fast",
           "sig_slow_0.05", "sig_slow_0.01", "sig_slow_0.001",
           "sig_fast_0.05", "sig_fast_0.01", "sig_fast_0.001")


@dataclass(frozen=True)
class StatsConfig:
    delta_p: float = 0.10                   # OQ-A7.1
    alphas: str = "0.05,0.01,0.001"
    partial_threshold: float = 0.9


class ImpossibleValue(InputError):
    """A value that reads well but cannot be right (a p-value outside [0, 1], a negative U):
    the file is refused (exit 2), not scored, even on the submission side."""


def read_stats_csv(path: Path) -> dict[str, Any]:
    """The 10 values of a statistics CSV: p and U as floats (NaN when empty), sig as bool.

    A p-value outside [0, 1] or a negative U statistic raises :class:`ImpossibleValue`.
    Blank lines are allowed at the end of the file only.
    """
    if not path.is_file():
        raise InputError("file not found", source=str(path))
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"not a readable CSV file ({exc})", source=str(path)) from exc
    while rows and rows[-1] == []:  # blank lines at the end of the file (only there)
        rows.pop()
    if not rows or [c.strip() for c in rows[0]] != ["metric", "value"]:
        raise InputError("the header must be 'metric,value'", source=str(path))
    values: dict[str, Any] = {}
    for n, row in enumerate(rows[1:], start=1):
        if len(row) != 2:
            raise InputError("expected 2 fields", source=str(path), row=n)
        metric, raw = row[0].strip(), row[1].strip()
        if metric in values:
            raise InputError(f"metric '{metric}' appears twice", source=str(path), row=n)
        if metric.startswith("sig_"):
            if raw.lower() not in ("true", "false"):
                raise InputError(f"'{raw}' is not True/False", source=str(path),
                                 column="value", row=n)
            values[metric] = raw.lower() == "true"
        else:
            try:
                values[metric] = float(raw) if raw else np.nan
            except ValueError as exc:
                raise InputError(f"'{raw}' is not a number", source=str(path), column="value",
                                 row=n) from exc
            if metric.startswith("p_value_") and not 0.0 <= values[metric] <= 1.0 \
                    and not np.isnan(values[metric]):
                raise ImpossibleValue(f"{metric} = {raw} is outside [0, 1] (a p-value is a "
                                      "probability)", source=str(path), column="value", row=n)
            if metric.startswith("u_statistic_") and values[metric] < 0:
                raise ImpossibleValue(f"{metric} = {raw} is negative (a Mann-Whitney U counts "
                                      "pairs)", source=str(path), column="value", row=n)
    missing = [m for m in METRICS if m not in values]
    if missing:
        raise InputError(f"missing metric(s) {missing}", source=str(path))
    return values


def cell_correct(s: bool, s_ref: bool, p: float, p_ref: float, delta_p: float) -> bool:
    """``1[s = s*] or 1[max(p/p*, p*/p) <= 1 + delta_p]`` (p term only for positive p's)."""
    if s == s_ref:
        return True
    if not (np.isfinite(p) and np.isfinite(p_ref) and p > 0 and p_ref > 0):
        return False
    return max(p / p_ref, p_ref / p) <= 1.0 + delta_p


def evaluate(submission: Path, reference: Path, ground_truth: Path | None,
             config: StatsConfig) -> StageResult:
    if not Path(reference).is_dir():
        raise InputError("reference folder not found", source=str(reference))
    lines = sorted((p.stem for p in Path(reference).glob("*.csv")), key=natural_key)
    if not lines:
        raise InputError("no <line>.csv files in the reference folder", source=str(reference))
    alphas = list_setting(config, "alphas", 0.0, 1.0)
    per_line, problems, ok, cells = {}, [], [], []
    for line in lines:
        ref = read_stats_csv(reference / f"{line}.csv")
        try:
            sub = read_stats_csv(submission / f"{line}.csv")
        except ImpossibleValue:
            raise
        except InputError as exc:
            problems.append(str(exc))
            per_line[line] = {"valid": False, "reason": str(exc), "line_ok": False}
            ok.append(False)
            continue
        record, warnings = {}, []
        for speed in SPEEDS:
            p, p_ref = sub[f"p_value_{speed}"], ref[f"p_value_{speed}"]
            for alpha in alphas:
                key = f"sig_{speed}_{alpha}"
                if key not in sub or key not in ref:
                    raise InputError(f"metric '{key}' is missing (alphas setting)",
                                     source=str(reference / f"{line}.csv"))
                record[key] = cell_correct(sub[key], ref[key], p, p_ref, config.delta_p)
                if np.isfinite(p) and sub[key] != (p < float(alpha)):
                    warnings.append(f"{key} = {sub[key]} disagrees with p = {p}")
        cells += list(record.values())
        ok.append(all(record.values()))
        per_line[line] = {"valid": True, "cells": record, "line_ok": ok[-1],
                          "warnings": warnings}
    score = float(np.mean(ok))
    result = verdict(ok, score, nearly_all=1.0, partial_ok=score >= config.partial_threshold,
                     structural_failure=bool(problems))
    criteria = {"lines_correct": {"value": score, "lines": len(lines)},
                "cells_correct": {"value": float(np.mean(cells)) if cells else None,
                                  "cells": len(cells)}}
    return StageResult("stats", score, result, criteria, per_line, config_record(config),
                       problems)
