"""The rows the check does not question: the reference and the predictions restricted to them,
so every metric can be reported twice (all rows, unquestioned rows)."""

from __future__ import annotations

import pandas as pd

from trackverify.reference_check.core import ReferenceCheck
from trackverify.tables import common_id_type

KEYS = ["recording", "frame", "detection"]


def unquestioned(reference: pd.DataFrame, predictions: pd.DataFrame,
                 check: ReferenceCheck) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(reference, predictions)`` without the questioned reference rows (copies; the inputs
    are not modified). With detection ids on both sides the predictions on the questioned
    rows' detections go too (neither a match nor a false positive: the reference says nothing
    there); without them only the reference rows go."""
    kept = check.kept
    ref = reference[kept].copy()
    keys = [k for k in KEYS if k in reference.columns and k in predictions.columns]
    if "detection" not in keys:
        return ref, predictions.copy()
    gone = reference.loc[~kept, keys].drop_duplicates()
    mine = predictions[keys].copy()
    for key in ("recording", "detection"):  # one id type on both sides (tables.common_id_type)
        if key in keys:
            mine[key], gone[key] = common_id_type(mine[key], gone[key], key,
                                                  ("the predictions", "the reference"))
    hit = mine.merge(gone.assign(_gone=True), on=keys, how="left")["_gone"]
    return ref, predictions[~hit.fillna(False).to_numpy(dtype=bool)].copy()


def rows_note(check: ReferenceCheck) -> str:
    """One sentence on what the check questions, for reports and terminals."""
    s = check.summary()
    if not s["rows_questioned"]:
        return f"The reference check questions none of the {s['rows']} reference rows."
    kinds = ", ".join(f"{v} {k}" for k, v in s["findings_by_kind"].items() if v)
    recordings = sorted({str(r) for r in check.findings["recording"]})
    frames = sorted({f for fs in check.findings["frames"] for f in fs})
    head = ", ".join(map(str, frames[:8])) + (" ..." if len(frames) > 8 else "")
    return (f"The reference has likely label errors: {s['findings']} findings ({kinds}) on "
            f"{s['rows_questioned']} of {s['rows']} rows, in recording(s) {', '.join(recordings)}, "
            f"frames {head}; every metric is given on all rows and on the {s['rows_kept']} rows "
            "the check does not question.")


#: The pooled numbers whose change the note states (key, name).
CHANGED = (("correct_observation_rate", "correct observation rate"), ("hota", "HOTA"),
           ("mota", "MOTA"), ("idf1", "IDF1"))


def changes_note(all_rows: dict, unquestioned_rows: dict) -> str:
    """One sentence: what leaving the questioned rows out changes in the pooled numbers."""
    from trackverify.report.numbers import fmt

    a, b = all_rows.get("pooled", {}), unquestioned_rows.get("pooled", {})
    parts = [f"{name} {fmt(a.get(k), undefined='null')} -> {fmt(b.get(k), undefined='null')}"
             for k, name in CHANGED if k in a and k in b]
    return "All rows -> unquestioned rows (pooled): " + ", ".join(parts) + "." if parts else ""
