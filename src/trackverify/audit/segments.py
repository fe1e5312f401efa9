"""Suspect segments (maximal runs of one id's non-certified observations, ranked) and the
per-identity summary of an audit (the rules: :mod:`trackverify.audit.core`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.audit.result import UNCOVERED, audited

SEGMENT_COLUMNS = ("rank", "recording", "pred_id", "first_frame", "last_frame", "frames",
                   "flagged", "abstained", "max_score", "max_relative_score", "lookalike_id",
                   "reason")


def suspect_segments(observations: pd.DataFrame) -> pd.DataFrame:
    """Maximal runs of non-certified audited observations of one predicted id, ranked."""
    return segments_and_membership(observations)[0]


def segments_and_membership(observations: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The ranked segments, and per observation the rank of its segment (``Int64``, null
    outside every segment), on ``observations``' index."""
    rows = observations.assign(_position=np.arange(len(observations)))[audited(observations)]
    rows = rows.sort_values(["recording", "pred_id", "frame"], kind="stable")
    suspect = (rows["verdict"] != "certified").to_numpy()
    same_id = ((rows["recording"].to_numpy()[1:] == rows["recording"].to_numpy()[:-1])
               & (rows["pred_id"].to_numpy()[1:] == rows["pred_id"].to_numpy()[:-1]))
    starts = np.r_[True, ~same_id | (suspect[1:] != suspect[:-1])][:len(rows)]  # none: empty
    run = np.cumsum(starts)
    relative = (rows["relative_score"] if "relative_score" in rows.columns
                else pd.Series(np.nan, index=rows.index))
    picked = rows.assign(_run=run, _flagged=rows["verdict"].eq("flagged"),
                         _abstained=rows["verdict"].eq("abstained"), _relative=relative)[suspect]
    membership = pd.array(np.full(len(observations), pd.NA), dtype="Int64")
    if not len(picked):
        return (pd.DataFrame({c: pd.Series(dtype=object) for c in SEGMENT_COLUMNS}),
                pd.Series(membership, index=observations.index))
    grouped = picked.groupby("_run", sort=True)
    segments = pd.DataFrame({
        "recording": grouped["recording"].first(),
        "pred_id": grouped["pred_id"].first(),
        "first_frame": grouped["frame"].min(),
        "last_frame": grouped["frame"].max(),
        "frames": grouped.size(),
        "flagged": grouped["_flagged"].sum().astype(np.int64),
        "abstained": grouped["_abstained"].sum().astype(np.int64),
        "max_score": grouped["score"].max(),
        "max_relative_score": grouped["_relative"].max(),
        "lookalike_id": _mode_lookalike(picked),
        "reason": _shared_reason(picked, grouped),
    })
    # Values equal to 1e-6 tie (so floating-point noise of the registration never decides).
    key = segments.assign(_mean=grouped["_relative"].mean().round(6).fillna(-np.inf),
                          _relative=segments["max_relative_score"].round(6).fillna(-np.inf),
                          _score=segments["max_score"].round(6).fillna(-np.inf),
                          _uncovered=segments["reason"].isin(UNCOVERED))
    segments = segments.loc[key.sort_values(
        ["_uncovered", "_mean", "flagged", "_relative", "_score", "frames", "recording",
         "pred_id", "first_frame"],
        ascending=[True, False, False, False, False, False, True, True, True],
        kind="stable").index]
    segments.insert(0, "rank", np.arange(1, len(segments) + 1))
    rank_of_run = pd.Series(segments["rank"].to_numpy(), index=segments.index)
    membership[picked["_position"].to_numpy()] = rank_of_run.reindex(
        picked["_run"].to_numpy()).to_numpy()
    return segments.reset_index(drop=True), pd.Series(membership, index=observations.index)


def _shared_reason(picked: pd.DataFrame, grouped) -> pd.Series:
    """Per run: the abstention reason when every observation of it is abstained for that one
    reason, else None."""
    reason = grouped["reason"]
    one = picked["reason"].notna().groupby(picked["_run"]).all() & reason.nunique().eq(1)
    keep = (one & grouped["_abstained"].all()).to_numpy()
    first = reason.first()
    return pd.Series(np.where(keep, first.to_numpy(dtype=object), None), index=first.index,
                     dtype=object)


def _mode_lookalike(picked: pd.DataFrame) -> pd.Series:
    """Per run: the most frequent look-alike identity (ties: the smallest id), or None."""
    known = picked[picked["lookalike_id"].notna()]
    if not len(known):
        return pd.Series(None, index=pd.unique(picked["_run"]), dtype=object)
    counts = known.groupby(["_run", "lookalike_id"], sort=True).size().rename("n").reset_index()
    counts = counts.sort_values(["_run", "n"], ascending=[True, False], kind="stable")
    best = counts.drop_duplicates("_run").set_index("_run")["lookalike_id"]
    return best.reindex(pd.unique(picked["_run"])).astype(object)


def track_summary(observations: pd.DataFrame) -> pd.DataFrame:
    """Per (recording, predicted id): where its track started (``start_frame``,
    ``start_identity``: the anchor identity its start holds, null for none), audited
    observations, shares by verdict, first flagged."""
    rows = observations[audited(observations)]
    verdict = rows["verdict"]
    frame = rows.assign(certified=verdict.eq("certified"), flagged=verdict.eq("flagged"),
                        abstained=verdict.eq("abstained"),
                        flagged_frame=rows["frame"].where(verdict.eq("flagged")))
    grouped = frame.groupby(["recording", "pred_id"], sort=True)
    started = {}
    if "start_identity" in rows.columns:  # where each track started (its first row as it is)
        first = frame.drop_duplicates(["recording", "pred_id"]).set_index(
            ["recording", "pred_id"]).sort_index()
        started = {"start_frame": first["start_frame"], "start_identity": first["start_identity"]}
    out = pd.DataFrame({
        **started,
        "frames_observed": grouped.size(),
        "share_certified": grouped["certified"].mean(),
        "share_flagged": grouped["flagged"].mean(),
        "share_abstained": grouped["abstained"].mean(),
        "first_flagged_frame": grouped["flagged_frame"].min().astype("Int64"),
    })
    return out.reset_index()
