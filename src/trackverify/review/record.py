"""How a review was made: who decided, in which mode, on what (``estimate.json``'s
``review``), two reviewers' agreement (``agreement``) and the methods paragraph (``methods``).

Agreement: each other reviewer's sheet ``review-<name>.csv`` of the audit folder (the same
rows as review.csv, :func:`trackverify.review.sheet.second_sheet`) against review.csv, over
the rows both decided. With ``n`` such rows, ``n_ij`` of them decided ``i`` in review.csv and
``j`` in the other (``i, j`` in correct, wrong, unsure), the observed agreement is
``p_o = sum_i n_ii / n``, the agreement expected by chance ``p_e = sum_i (n_i. / n)(n_.i / n)``
and Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` (Cohen 1960); None (JSON null) when ``n = 0``
or ``p_e = 1`` (both reviewers gave one and the same decision to every row).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.review.sheet import DECISIONS, MODES, SECOND_SHEET, SHOWN, Sheet, read_sheet


def cohen_kappa(first, second) -> dict:
    """Agreement of two reviewers' decisions of the same rows (module docstring; '' is
    undecided). Returns ``rows``, ``observed``, ``chance``, ``kappa`` and ``table``
    (``table[i][j]``: rows decided ``i`` by the first and ``j`` by the second).

    >>> cohen_kappa(["correct", "correct", "wrong", "wrong"], ["correct", "wrong", "wrong", "wrong"])["kappa"]
    0.5
    """
    a, b = np.asarray(list(first), dtype=str), np.asarray(list(second), dtype=str)
    both = (a != "") & (b != "")
    codes = {d: k for k, d in enumerate(DECISIONS)}
    table = np.zeros((len(DECISIONS), len(DECISIONS)), dtype=np.int64)
    np.add.at(table, ([codes[v] for v in a[both]], [codes[v] for v in b[both]]), 1)
    n = int(table.sum())
    observed = chance = kappa = None
    if n:
        observed = float(np.trace(table) / n)
        chance = float((table.sum(axis=1) / n) @ (table.sum(axis=0) / n))
        kappa = None if chance >= 1 else (observed - chance) / (1 - chance)
    return {"rows": n, "observed": observed, "chance": chance, "kappa": kappa,
            "table": {d: {e: int(table[i, j]) for j, e in enumerate(DECISIONS)}
                      for i, d in enumerate(DECISIONS)}}


def _reviewers(sheet: Sheet) -> list[str]:
    return sorted({r for r, d in zip(sheet.column("reviewer"), sheet.decisions) if r and d})


def agreement(audit_dir: Path) -> list[dict]:
    """review.csv against each ``review-<name>.csv`` of ``audit_dir`` (module docstring);
    a sheet of other rows is refused naming its first row that differs."""
    paths = sorted(p for p in Path(audit_dir).glob("review-*.csv") if SECOND_SHEET.fullmatch(p.name))
    if not paths:
        return []
    first = read_sheet(Path(audit_dir) / "review.csv")
    out = []
    for path in paths:
        other = read_sheet(path)
        mine, theirs = first.sample(), other.sample()
        if mine != theirs:
            row = next((k for k, (x, y) in enumerate(zip(mine, theirs)) if x != y),
                       min(len(mine), len(theirs)))
            raise InputError("does not hold review.csv's rows in its order (another reviewer's "
                             "sheet is made by `trackverify review --second-reviewer`)",
                             source=str(path), row=row or None)
        out.append({"sheets": ["review.csv", path.name],
                    "reviewers": [_reviewers(first), _reviewers(other)],
                    **cohen_kappa(first.decisions, other.decisions)})
    return out


def review_record(review: pd.DataFrame, path: Path) -> dict:
    """What the decided rows of review.csv (as read, ``decision`` checked) record: their
    count by mode and by what was shown ('not recorded' for an empty cell), the reviewers and
    the seconds spent (sum and median of the recorded ones)."""
    decided = review["decision"].to_numpy(dtype=str) != ""
    out: dict = {"decided": int(decided.sum())}
    for column, allowed in (("mode", MODES), ("shown", SHOWN)):
        cells = (review[column].astype("string").str.strip().str.lower().fillna("")
                 .to_numpy(dtype=str) if column in review else np.full(len(review), ""))
        bad = decided & ~np.isin(cells, ("", *allowed))
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(f"{cells[row]!r} is not one of {', '.join(allowed)} (or empty)",
                             source=str(path), column=column, row=row + 1)
        out[column] = {v: int((decided & (cells == v)).sum()) for v in allowed}
        out[column]["not recorded"] = int((decided & (cells == "")).sum())
    names = (review["reviewer"].astype("string").str.strip().fillna("").to_numpy(dtype=str)
             if "reviewer" in review else np.full(len(review), ""))
    out["reviewers"] = sorted(set(names[decided]) - {""})
    seconds = (pd.to_numeric(review["seconds"], errors="coerce").to_numpy(float)
               if "seconds" in review else np.full(len(review), np.nan))
    spent = seconds[decided & np.isfinite(seconds)]
    out["seconds"] = {"recorded": int(spent.size), "total": float(spent.sum()) if spent.size
                      else None, "median": float(np.median(spent)) if spent.size else None}
    return out


def _pct(value) -> str:
    return "undefined" if value is None else f"{100 * value:.1f} %"


def methods(result: dict, design: dict) -> str:
    """The methods paragraph of ``result`` (estimate.json) and ``design`` (sample.json): the
    design, the mode (blind / triage), what the reviewers saw (images / positions), who
    reviewed and their agreement, where the review stopped, the sequence and the numbers."""
    record, allocation = result["review"], design.get("allocation", {})
    rates = allocation.get("planning_rate", {})
    decided = record["decided"]
    triage = record["mode"]["triage"]
    blind = ("blind" if not triage else
             f"partly blind ({triage} of {decided} decisions made with the audit's verdicts shown)")
    images, positions = record["shown"]["images"], record["shown"]["positions"]
    if images and not positions:
        seen = "on the raw image volumes (crops around each observation and its anchor place)"
    elif images:
        seen = f"on the raw image volumes for {images} and on positions only for {positions} rows"
    elif positions:
        seen = "on positions only (no images)"
    else:
        seen = "in a tool of the reviewer's choice (what was shown is not recorded)"
    who = ", ".join(record["reviewers"]) or "a reviewer (not recorded)"
    stop = (f"stopped after {result['n_decided']} of {result['n_rows']} rows"
            if not result["complete"] else f"complete ({result['n_rows']} rows)")
    if result.get("target") is not None:
        stop += (f" once the 95 % interval was narrower than +-{100 * result['target']:.1f} points"
                 if result["all"] and result["all"].get("target_met") else
                 f" (target half-width {100 * result['target']:.1f} points, not reached)")
    text = (f"Identity errors were estimated from a {blind} human review {seen} of "
            f"observations drawn from the trackverify audit (version {result['trackverify']}) "
            f"by stratified random sampling (strata: recording x audit verdict; Neyman "
            f"allocation with planning error rates {rates.get('certified', 0.05):g} for "
            f"certified and {rates.get('flagged', 0.5):g} for flagged observations, at least "
            f"{allocation.get('floor', 10)} per stratum; seed {design.get('seed')}), reviewed "
            f"in the sample's random order by {who} and {stop}. Each observation was marked "
            "correct, wrong or unsure.")
    for pair in result.get("agreement", []):
        others = ", ".join(pair["reviewers"][1]) or pair["sheets"][1]
        kappa = "undefined" if pair["kappa"] is None else f"{pair['kappa']:.2f}"
        text += (f" A second reviewer ({others}) decided {pair['rows']} of the same rows "
                 f"independently: Cohen's kappa {kappa} (observed agreement "
                 f"{_pct(pair['observed'])}).")
    every, certified = result["all"], result["certified"]
    if every is not None:
        kind = ("anytime-valid confidence sequence {}, stratified betting for sampling "
                "without replacement, Waudby-Smith & Ramdas 2020" if result["interval"].startswith(
                    "anytime") else "Korn-Graubard interval {} of a complete review of a number "
                "of rows fixed in advance")
        opening = (f" The tracker's identities were wrong in {_pct(every['estimate'])} of the "
                   f"{every['N']} audited observations (95 % " if every["estimate"] is not None
                   else f" The error rate of the {every['N']} audited observations has no point "
                   "estimate yet (a stratum has no decided row; 95 % ")
        text += (opening + kind.format(f"{_pct(every['low'])} to {_pct(every['high'])}")
                 + "; unsure counted as correct for the lower and as wrong for the upper limit)")
        text += (f"; of the certified observations at most {_pct(certified['upper_one_sided'])}"
                 " were wrong (one-sided 95 %)." if certified is not None and
                 certified.get("upper_one_sided") is not None else ".")
    return text
