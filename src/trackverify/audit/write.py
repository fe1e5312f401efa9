"""Write an audit's outputs into one folder, each file atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from trackverify.audit.result import AuditResult, not_judged
from trackverify.io.atomic import ensure_folder, write_json_atomic, write_text_atomic
from trackverify.io.paths import check_out_overlap
from trackverify.io.tabular import write_table


def write_audit(result: AuditResult, out: str | os.PathLike) -> Path:
    """``audit.parquet``, ``events.csv`` (the review list), ``joins.csv`` (later tracks that
    continue an anchor identity), ``segments.csv``, ``tracks.csv``, ``audit.json``,
    ``report.html``.

    Refused (:class:`~trackverify.errors.InputError`, nothing written) when ``out`` is, lies
    inside or contains an input the audit read (``result.summary["inputs"]``), as the
    command's ``--out``.
    """
    check_out_overlap(out, result.summary.get("inputs", {}))
    return write_outputs(result, out)


def write_outputs(result: AuditResult, out: str | os.PathLike) -> Path:
    """:func:`write_audit` without its ``--out`` check, for a caller that made it before the
    work (``audit(out=)``, the command)."""
    from trackverify.audit.report import render_audit_report

    out = ensure_folder(out)
    observations = result.observations.assign(lookalike_id=lookalike_column(result.observations))
    write_table(observations, out / "audit.parquet")
    write_table(result.events, out / "events.csv")
    write_table(result.joins, out / "joins.csv")
    write_table(result.segments, out / "segments.csv")
    write_table(result.tracks, out / "tracks.csv")
    write_json_atomic(out / "audit.json", result.summary)
    write_text_atomic(out / "report.html", render_audit_report(result))
    return out


def lookalike_column(observations: pd.DataFrame) -> pd.Series:
    """``lookalike_id`` with the type of ``pred_id`` (nullable integers for integer ids, else
    text): one Parquet type, and the same ids as ``pred_id`` reads back."""
    look = observations["lookalike_id"]
    if pd.api.types.is_integer_dtype(observations["pred_id"].dtype):
        return look.astype("Int64")
    return look.map(lambda v: None if v is None else str(v), na_action="ignore")


def one_line(result: AuditResult) -> str:
    """The terminal summary: every row counted once, by the report's words
    (:func:`trackverify.audit.result.not_judged`, then the judged by verdict)."""
    c = result.summary["counts"]
    t = result.summary["threshold"]
    calibrated = "calibrated" if t["calibrated"] else "NOT calibrated"
    if not c["audited"]:  # shares of nothing are undefined, not 0 %
        judged = "none judged"
    else:
        judged = f"{c['audited']} judged: " + ", ".join(
            f"{c[v]} {v} ({c[v] / c['audited']:.1%})" for v in ("certified", "flagged",
                                                                 "abstained"))
    kinds = ", ".join(f"{n} {words}" for words, n in not_judged(c))
    joins = (result.summary.get("continuity") or {}).get("joins", 0)
    stitched = f"; {joins} joins in joins.csv" if joins else ""
    return (f"{c['rows']} rows: {kinds + '; ' if kinds else ''}{judged}; {c['events']} events "
            f"to review (events.csv; {c['suspect_segments']} suspect segments in segments.csv)"
            f"{stitched}; threshold {t['source']} ({calibrated})")
