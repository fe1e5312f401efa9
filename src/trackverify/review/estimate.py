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
wrong; ``estimate`` leaves unsure rows out of their stratum.

A review may stop early: the rows of ``review.csv`` come in the design's order
(``sample.json``'s ``order``), so its decided prefix (up to the last decided row; an
undecided row before it counts as unsure) is a sample of the design, and the interval quoted
(``low``, ``high``, and ``upper_one_sided`` for certified) is the anytime-valid confidence
sequence of :mod:`trackverify.review.sequence`, valid whenever the review stopped.
The Korn-Graubard interval above (``fixed_n``) is given beside it once every row is decided;
it holds only for a number of rows fixed before the review. A ``sample.json`` from before
the review order (no ``order``) gives the Korn-Graubard interval of a complete review only.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import beta

from trackverify.review.sequence import ALPHA, sequence_bounds
from trackverify import __version__
from trackverify.errors import InputError
from trackverify.io.atomic import write_json_atomic
from trackverify.io.bounded import read_json
from trackverify.io.tabular import read_table
from trackverify.values import is_integer

from trackverify.review.sheet import DECISIONS


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
             "high": _value(as_wrong["high"])}
    if one_sided:
        block["upper_one_sided"] = _value(as_wrong["upper"])
    return block


def _value(a) -> float | None:
    a = float(a)
    return None if np.isnan(a) else a


def read_decisions(audit_dir: Path) -> tuple[dict, "object"]:
    """``sample.json`` and ``review.csv`` with every decision checked (empty: not decided)."""
    design = read_design(audit_dir / "sample.json")
    path = audit_dir / "review.csv"
    review = read_table(path)
    for column in ("recording", "frame", "decision"):
        if column not in review:
            raise InputError("missing column", source=str(path), column=column)
    decision = review["decision"].astype("string").str.strip().str.lower().fillna("")
    bad = ~decision.isin(("", *DECISIONS))
    if bad.any():
        raise InputError(f"{review['decision'].iloc[int(np.argmax(bad))]!r} is not correct, "
                         "wrong or unsure", source=str(path), column="decision",
                         row=int(np.argmax(bad)) + 1)
    review = review.assign(decision=decision.to_numpy(dtype=str))
    if "order" in design:
        _check_order(design, review, path)
    else:
        _check_legacy(design, review, path)
    return design, review


def read_design(path: Path) -> dict:
    """``sample.json`` checked: its strata, and (when present) its ``order`` of valid strata."""
    design = read_json(path, what="sample.json")
    strata = design.get("strata") if isinstance(design, dict) else None
    if not isinstance(strata, list) or not strata or not all(
            isinstance(h, dict) and isinstance(h.get("stratum"), str)
            and is_integer(h.get("N"), 1) and is_integer(h.get("n"), 0, h.get("N"))
            for h in strata):
        raise InputError("strata must be a list of {stratum, N >= 1, 0 <= n <= N}; draw it "
                         "with `trackverify audit sample`", source=str(path))
    if "order" in design:
        order = design["order"] if isinstance(design["order"], dict) else {}
        codes, frames = order.get("stratum"), order.get("frame")
        share = [h.get("share") for h in strata]
        sequence = design.get("sequence")
        if not (isinstance(codes, list) and isinstance(frames, list)
                and len(codes) == len(frames)
                and all(is_integer(c, 0, len(strata) - 1) for c in codes)
                and all(is_integer(f) for f in frames)
                and all(isinstance(v, (int, float)) and v > 0 for v in share)
                and isinstance(sequence, dict) and is_integer(sequence.get("horizon"), 1)
                and sequence.get("alpha") == ALPHA):
            raise InputError("order must list each row's stratum and frame, each stratum its "
                             "share > 0, sequence its horizon; draw it with `trackverify audit "
                             "sample`", source=str(path))
        held = np.bincount(codes, minlength=len(strata))
        if any(held[h] != s["n"] for h, s in enumerate(strata)):
            raise InputError("order and strata disagree on the rows of a stratum",
                             source=str(path))
    return design


def _check_order(design: dict, review, path: Path) -> None:
    """review.csv holds sample.json's rows in its order (recording and frame per row)."""
    order = design["order"]
    if len(review) != len(order["stratum"]):
        raise InputError(f"holds {len(review)} rows, sample.json drew {len(order['stratum'])}: "
                         "review the drawn rows, no more and no fewer", source=str(path))
    names = np.array([s["stratum"].rsplit("/", 1)[0] for s in design["strata"]])
    expected = names[np.asarray(order["stratum"])]
    frames = np.asarray(order["frame"])
    moved = (review["recording"].astype(str).to_numpy() != expected) | (
        pd.to_numeric(review["frame"], errors="coerce").to_numpy() != frames)
    if moved.any():
        raise InputError("is not the observation sample.json drew at this row: keep "
                         "review.csv's rows in the order written (the order is the design)",
                         source=str(path), column="frame", row=int(np.argmax(moved)) + 1)


def _check_legacy(design: dict, review, path: Path) -> None:
    """A review drawn before the review order: complete, its strata named in ``stratum``."""
    if "stratum" not in review:
        raise InputError("missing column", source=str(path), column="stratum")
    empty = review["decision"] == ""
    if empty.any():
        raise InputError(f"{int(empty.sum())} of {len(review)} rows have no decision; a "
                         "sample drawn before the review order must be complete (draw a new "
                         "one to stop early)", source=str(path), column="decision",
                         row=int(np.argmax(empty)) + 1)
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


def interval_so_far(design: dict, decisions, target: float | None = None) -> dict:
    """The anytime-valid interval of ``all`` and ``certified`` from the decisions so far.

    ``design``: ``sample.json`` as read; ``decisions``: review.csv's decision of each row in
    order (``correct``, ``wrong``, ``unsure`` or empty). Cheap enough to call after every
    decision (a review of n rows costs O(n) per bisection step). Returns ``{"all": block,
    "certified": block or None}``, each block with ``low``, ``high``, ``half_width``,
    ``target_met`` (``half_width <= target``; None without a target), ``n_decided`` and
    ``n_rows``, and ``upper_one_sided`` for certified.

    Example (the review page after each decision)::

        design = json.loads(Path("audit/sample.json").read_text())
        interval_so_far(design, read_sheet("audit/review.csv").decisions, target=0.03)["all"]
    """
    review = _Decisions(design, np.asarray(list(decisions), dtype=str))
    return {name: review.sequence(keep, target, one_sided=name == "certified")
            if keep.any() else None for name, keep in review.populations()}


class _Decisions:
    """A review's decisions beside its design: the arrays every block is computed from."""

    def __init__(self, design: dict, decision: np.ndarray):
        strata = design["strata"]
        self.design = design
        self.names = [s["stratum"] for s in strata]
        self.N = np.array([s["N"] for s in strata])
        self.recording = np.array([name.rsplit("/", 1)[0] for name in self.names])
        self.certified = np.array([name.rsplit("/", 1)[1] == "certified" for name in self.names])
        self.ordered = "order" in design
        if self.ordered and len(decision) != len(design["order"]["stratum"]):
            raise ValueError(f"{len(decision)} decisions for the "
                             f"{len(design['order']['stratum'])} rows of sample.json")
        self.decision = decision

    def populations(self, keep=None):
        keep = np.ones(len(self.names), dtype=bool) if keep is None else keep
        return [("all", keep), ("certified", keep & self.certified)]

    def codes(self, strata=None) -> np.ndarray:
        if self.ordered:
            return np.asarray(self.design["order"]["stratum"], dtype=np.int64)
        index = {name: h for h, name in enumerate(self.names)}
        return np.array([index[s] for s in strata], dtype=np.int64)

    def sequence(self, keep: np.ndarray, target: float | None, one_sided: bool) -> dict:
        """The anytime-valid block of the strata ``keep`` (module docstring)."""
        codes = self.codes()
        decided = self.decision != ""
        last = int(np.flatnonzero(decided).max()) if decided.any() else -1
        wrong = (self.decision == "wrong").astype(float)
        unsure = ((self.decision == "unsure") | ~decided).astype(float)  # gaps count as unsure
        strata = self.design["strata"]
        share = np.array([s["share"] for s in strata])
        rates = np.array([s.get("planning_rate", 0.5) for s in strata])
        bounds = sequence_bounds(codes, wrong, unsure, self.N, share, rates, keep,
                                 self.design["sequence"]["horizon"], until=np.array(last))
        low, high = float(bounds["low"]), float(bounds["high"])
        inside = keep[codes]
        block = {"low": low, "high": high, "half_width": (high - low) / 2,
                 "target_met": None if target is None else bool((high - low) / 2 <= target),
                 "n_decided": int((decided & inside).sum()), "n_rows": int(inside.sum())}
        if one_sided:
            block["upper_one_sided"] = float(bounds["upper"])
        return block


def estimate_error_rate(audit_dir: str | os.PathLike, target: float | None = None) -> dict:
    """The error-rate estimate of a review, whole or stopped early; writes
    ``audit_dir/estimate.json``.

    Also puts the estimate's section into the audit's ``report.html``.
    Returns ``{"all": {...}, "certified": {..., "upper_one_sided"}, "per_recording":
    {recording: {"all": ..., "certified": ...}}, ...}``; each block holds ``estimate`` (the
    stratified estimate of the decided rows; None while a stratum has none), ``low``,
    ``high`` (the anytime-valid 95 % interval), ``half_width``, ``target_met`` (half-width
    at most ``target``; None without one), ``n_decided`` of ``n_rows`` (the block's rows in
    review.csv), ``n_unsure``, the population size ``N`` and ``fixed_n`` (the Korn-Graubard
    interval of a complete review, else None). ``trackverify.estimate_error_rate`` is this
    function; the command is ``trackverify audit estimate [--target 0.03]``.

    Example (after some rows of ``audit/review.csv``, in order, have their decision)::

        result = trackverify.estimate_error_rate("audit", target=0.03)
        result["all"]["low"], result["all"]["high"], result["all"]["target_met"]
    """
    audit_dir = Path(audit_dir)
    if not (audit_dir / "sample.json").exists():  # the review's first step is not done yet
        raise InputError("no sample.json: draw the observations to review first "
                         f"(trackverify audit sample {audit_dir} --n 200), decide them "
                         f"(trackverify review {audit_dir}, or review.csv in any tool), then "
                         "estimate", source=str(audit_dir))
    design, review = read_decisions(audit_dir)
    decisions = _Decisions(design, review["decision"].to_numpy(dtype=str))
    codes = decisions.codes(None if decisions.ordered else review["stratum"].astype(str))
    H = len(decisions.names)
    decided = review["decision"].to_numpy() != ""
    rows = np.bincount(codes, minlength=H)
    counts = {kind: np.bincount(codes, weights=review["decision"].eq(kind).to_numpy(),
                                minlength=H) for kind in DECISIONS}
    complete = bool(decided.all())

    def block(keep: np.ndarray, one_sided: bool) -> dict | None:
        if not keep.any():
            return None
        N, wrong, unsure = decisions.N[keep], counts["wrong"][keep], counts["unsure"][keep]
        sure = counts["correct"][keep] + wrong
        point = _value(stratified_interval(N, sure, wrong)["estimate"])
        fixed = _block(N, rows[keep], wrong, unsure, one_sided) if complete else None
        out = {"estimate": point, "n_unsure": int(unsure.sum()), "N": int(N.sum())}
        if decisions.ordered:
            out.update(decisions.sequence(keep, target, one_sided))
        else:  # a sample from before the review order: the fixed-N interval only
            out.update({k: fixed[k] for k in fixed if k != "estimate"},
                       n_decided=int(rows[keep].sum()), n_rows=int(rows[keep].sum()),
                       half_width=None if None in (fixed["low"], fixed["high"])
                       else (fixed["high"] - fixed["low"]) / 2, target_met=None)
        out["fixed_n"] = fixed
        return out

    def blocks(keep: np.ndarray) -> dict:
        return {name: block(k, name == "certified") for name, k in decisions.populations(keep)}

    whole = blocks(np.ones(H, dtype=bool))
    result = {**whole, "per_recording": {str(r): blocks(decisions.recording == r)
                                         for r in np.unique(decisions.recording)},
              "confidence": 1 - ALPHA, "target": target,
              "n_decided": int(decided.sum()), "n_rows": len(review), "complete": complete,
              "covers": "the error rate of the finite population of audited observations",
              "interval": ("anytime-valid confidence sequence (stratified betting without "
                           "replacement), valid whenever the review stopped"
                           if decisions.ordered else "Korn-Graubard (fixed N)"),
              "fixed_n_interval": "Korn-Graubard stratified Clopper-Pearson with "
                                  "finite-population correction, a complete review of a "
                                  "number of rows fixed in advance",
              "unsure": "counted correct for low, wrong for high; an undecided row before "
                        "the last decided one counts as unsure",
              "seed": design.get("seed"), "audit": str(audit_dir),
              "trackverify": __version__}
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
    """The estimate as text: the review's progress, one line per population (the
    anytime-valid interval, then the fixed-N one of a complete review)."""
    def pct(value) -> str:
        return "undefined" if value is None else f"{value:.1%}"

    def line(name: str, block: dict | None) -> str:
        if block is None:
            return f"{name}: no such observations"
        point = ("no estimate yet (a stratum has no decided row)" if block["estimate"] is None
                 else f"{block['estimate']:.1%} wrong")
        text = (f"{name}: {point}; 95 % {pct(block['low'])}-{pct(block['high'])}")
        if block.get("half_width") is not None:
            text += f" (half-width {100 * block['half_width']:.1f} points"
            if block.get("target_met") is not None:
                text += ", target reached" if block["target_met"] else ", target not reached"
            text += ")"
        if "upper_one_sided" in block:
            text += f"; at most {pct(block['upper_one_sided'])}, one-sided 95 %"
        text += f"; {block['n_decided']} of {block['n_rows']} rows decided, population {block['N']}"
        if block["fixed_n"] is not None and ordered:
            text += (f"\n  {name} fixed-N (Korn-Graubard, complete review): "
                     f"{pct(block['fixed_n']['low'])}-{pct(block['fixed_n']['high'])}")
        return text

    ordered = result["interval"].startswith("anytime")
    lines = [f"{result['n_decided']} of {result['n_rows']} rows decided; "
             + ("anytime-valid intervals (valid whenever the review stops)" if ordered
                else "fixed-N intervals (a sample drawn before the review order)")]
    if result.get("target") is not None:
        lines[0] += f"; target half-width {100 * result['target']:.1f} points"
    lines += [line("all", result["all"]), line("certified", result["certified"])]
    if len(result["per_recording"]) > 1:
        for recording, blocks in result["per_recording"].items():
            lines += [line(f"{recording} {k}", v) for k, v in blocks.items()]
    return lines
