"""The stratified error rate of an audit from the decisions of ``review.csv``.

What is covered: the error rate of the finite population of audited observations (those of
``sample.json``'s strata), overall (``all``), in the certified strata (``certified``) and per
recording. The estimate is ``p = sum_h W_h x_h / n_h`` with ``W_h = N_h / N``.

Interval (Korn-Graubard with a finite-population correction and an add-one variance):
``v = sum_h W_h^2 (1 - n_h/N_h) q_h (1 - q_h) / n_h`` with ``q_h = (x_h + 1) / (n_h + 2)``
(never 0, so a stratum with no observed error still counts), effective size
``m = q (1 - q) / v`` with ``q = sum_h W_h q_h``, and the exact Clopper-Pearson interval of
``m p`` errors in ``m`` trials: ``low = Beta(a/2; mp, m - mp + 1)``,
``high = Beta(1 - a/2; mp + 1, m - mp)`` (0 / 1 at the ends); the one-sided upper bound is
``Beta(1 - a; mp + 1, m - mp)``. A census of every stratum (``v = 0``) gives ``low = high = p``.
``benchmarks/error_rate_coverage.py`` and ``tests/test_error_rate.py`` prove its coverage.

``unsure`` enters both bounds: ``low`` counts it correct, ``high`` (and the one-sided bound)
wrong; ``estimate`` leaves unsure rows out of their stratum. A review with an empty
``decision`` is refused: every sampled row must be decided (``unsure`` is a decision).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from scipy.stats import beta

from trackverify.errors import InputError
from trackverify.io.atomic import write_json_atomic
from trackverify.io.bounded import read_json
from trackverify.io.tabular import read_table
from trackverify.values import is_integer

from trackverify.review.sheet import DECISIONS

ALPHA = 0.05


def stratified_interval(N, n, x, alpha: float = ALPHA) -> dict[str, np.ndarray]:
    """Estimate, two-sided ``1 - alpha`` interval and one-sided upper bound (module docstring).

    ``N``, ``n``, ``x``: stratum sizes, sample sizes and errors found, shape ``(..., H)``
    (leading axes are independent designs, e.g. simulation draws); strata with ``N_h = 0``
    are ignored. Returns arrays ``estimate``, ``low``, ``high``, ``upper`` of shape ``(...)``;
    NaN where a non-empty stratum has no sampled row (undefined).

    >>> {k: round(float(v), 4) for k, v in stratified_interval([100], [100], [7]).items()}
    {'estimate': 0.07, 'low': 0.07, 'high': 0.07, 'upper': 0.07}
    """
    N, n, x = (np.asarray(a, dtype=float) for a in (N, n, x))
    W = N / N.sum(axis=-1, keepdims=True)
    present = N > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(present, W * x / n, 0.0).sum(axis=-1)
        q_h = (x + 1) / (n + 2)
        v = np.where(present, W**2 * (1 - n / N) * q_h * (1 - q_h) / n, 0.0).sum(axis=-1)
        q = np.where(present, W * q_h, 0.0).sum(axis=-1)
        m = q * (1 - q) / v
        k = m * p
        low = np.where(k > 0, beta.ppf(alpha / 2, k, m - k + 1), 0.0)
        high = np.where(k < m, beta.ppf(1 - alpha / 2, k + 1, m - k), 1.0)
        upper = np.where(k < m, beta.ppf(1 - alpha, k + 1, m - k), 1.0)
    census = v == 0
    low, high, upper = (np.where(census, p, b) for b in (low, high, upper))
    undefined = (present & (n == 0)).any(axis=-1)
    return {key: np.where(undefined, np.nan, value) for key, value in
            {"estimate": p, "low": low, "high": high, "upper": upper}.items()}


def _block(N, n, wrong, unsure, one_sided: bool) -> dict:
    """One population's numbers; ``unsure`` as correct for ``low``, as wrong for ``high``."""
    as_correct = stratified_interval(N, n, wrong)
    as_wrong = stratified_interval(N, n, wrong + unsure)
    decided = n - unsure
    point = stratified_interval(N, decided, wrong)["estimate"]
    block = {"estimate": _value(point), "low": _value(as_correct["low"]),
             "high": _value(as_wrong["high"]), "n_reviewed": int(n.sum()),
             "n_unsure": int(unsure.sum()), "N": int(N.sum())}
    if one_sided:
        block["upper_one_sided"] = _value(as_wrong["upper"])
    return block


def _value(a) -> float | None:
    a = float(a)
    return None if np.isnan(a) else a


def read_decisions(audit_dir: Path) -> tuple[dict, "object"]:
    """``sample.json`` and ``review.csv`` with every decision checked."""
    design = read_json(audit_dir / "sample.json", what="sample.json")
    strata = design.get("strata") if isinstance(design, dict) else None
    if not isinstance(strata, list) or not all(
            isinstance(h, dict) and isinstance(h.get("stratum"), str)
            and is_integer(h.get("N"), 1) and is_integer(h.get("n"), 0, h.get("N"))
            for h in strata):
        raise InputError("strata must be a list of {stratum, N >= 1, 0 <= n <= N}; draw it "
                         "with `trackverify audit sample`", source=str(audit_dir / "sample.json"))
    path = audit_dir / "review.csv"
    review = read_table(path)
    for column in ("recording", "stratum", "decision"):
        if column not in review:
            raise InputError("missing column", source=str(path), column=column)
    decision = review["decision"].astype("string").str.strip().str.lower()
    empty = decision.isna() | decision.eq("")
    if empty.any():
        raise InputError(f"{int(empty.sum())} of {len(review)} rows have no decision; decide "
                         "each (correct, wrong or unsure) before estimating",
                         source=str(path), column="decision", row=int(np.argmax(empty)) + 1)
    bad = ~decision.isin(DECISIONS)
    if bad.any():
        raise InputError(f"{review['decision'].iloc[int(np.argmax(bad))]!r} is not correct, "
                         "wrong or unsure", source=str(path), column="decision",
                         row=int(np.argmax(bad)) + 1)
    known = {s["stratum"] for s in design["strata"]}
    stranger = ~review["stratum"].astype(str).isin(known)
    if stranger.any():
        raise InputError("stratum not in sample.json", source=str(path), column="stratum",
                         row=int(np.argmax(stranger)) + 1)
    held = review["stratum"].astype(str).value_counts()
    for s in design["strata"]:
        if held.get(s["stratum"], 0) != s["n"]:
            raise InputError(f"holds {held.get(s['stratum'], 0)} rows of stratum "
                             f"{s['stratum']!r}, sample.json drew {s['n']}: review the drawn "
                             "rows, no more and no fewer", source=str(path), column="stratum")
    return design, review.assign(decision=decision)


def estimate_error_rate(audit_dir: str | os.PathLike) -> dict:
    """The error-rate estimate of a filled review; writes ``audit_dir/estimate.json``.

    Also puts the estimate's section into the audit's ``report.html``.
    Returns ``{"all": {...}, "certified": {..., "upper_one_sided"}, "per_recording":
    {recording: {"all": ..., "certified": ...}}, ...}``; each block holds ``estimate``,
    ``low``, ``high`` (95 %), ``n_reviewed``, ``n_unsure`` and the population size ``N``.
    ``trackverify.estimate_error_rate`` is this function; the command is ``trackverify audit
    estimate``.

    Example (after every row of ``audit/review.csv`` has its decision)::

        result = trackverify.estimate_error_rate("audit")
        result["all"]["low"], result["all"]["high"], result["certified"]["upper_one_sided"]
    """
    audit_dir = Path(audit_dir)
    design, review = read_decisions(audit_dir)
    names = [s["stratum"] for s in design["strata"]]
    N = np.array([s["N"] for s in design["strata"]])
    index = {name: h for h, name in enumerate(names)}
    codes = review["stratum"].astype(str).map(index).to_numpy()
    n = np.bincount(codes, minlength=len(names))
    wrong = np.bincount(codes, weights=review["decision"].eq("wrong").to_numpy(), minlength=len(names))
    unsure = np.bincount(codes, weights=review["decision"].eq("unsure").to_numpy(), minlength=len(names))
    recording = np.array([name.rsplit("/", 1)[0] for name in names])
    certified = np.array([name.rsplit("/", 1)[1] == "certified" for name in names])

    def blocks(keep):
        return {"all": _block(N[keep], n[keep], wrong[keep], unsure[keep], False),
                "certified": _block(N[keep & certified], n[keep & certified],
                                    wrong[keep & certified], unsure[keep & certified], True)
                if (keep & certified).any() else None}

    whole = blocks(np.ones(len(names), dtype=bool))
    result = {**whole, "per_recording": {str(r): blocks(recording == r) for r in np.unique(recording)},
              "confidence": 1 - ALPHA,
              "covers": "the error rate of the finite population of audited observations",
              "interval": "Korn-Graubard stratified Clopper-Pearson with finite-population "
                          "correction; unsure as correct for low, as wrong for high",
              "seed": design.get("seed")}
    write_json_atomic(audit_dir / "estimate.json", result)
    _add_to_report(audit_dir / "report.html", result)
    return result


def _add_to_report(path: Path, result: dict) -> None:
    """The estimate's section in the audit's ``report.html`` (left alone when absent or made
    before the report had a place for it)."""
    from trackverify.audit.report import with_error_rate
    from trackverify.io.atomic import write_text_atomic

    if path.is_file():
        updated = with_error_rate(path.read_text(encoding="utf-8"), result)
        if updated is not None:
            write_text_atomic(path, updated)


def summary_lines(result: dict) -> list[str]:
    """The estimate as text: one line per population, then the JSON's place."""
    def line(name: str, block: dict | None) -> str:
        if block is None:
            return f"{name}: no such observations"
        if block["estimate"] is None:
            return f"{name}: undefined (a stratum has no decided row)"
        text = (f"{name}: {block['estimate']:.1%} wrong (95 % CI {block['low']:.1%}-"
                f"{block['high']:.1%}; {block['n_reviewed']} reviewed of {block['N']}")
        if "upper_one_sided" in block:
            text += f"; at most {block['upper_one_sided']:.1%}, one-sided 95 %"
        return text + ")"

    lines = [line("all", result["all"]), line("certified", result["certified"])]
    if len(result["per_recording"]) > 1:
        for recording, blocks in result["per_recording"].items():
            lines += [line(f"{recording} {k}", v) for k, v in blocks.items()]
    return lines
