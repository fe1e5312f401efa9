"""Joins and continuity: which later tracks continue an anchor identity after a break, and
into how many pieces each anchor identity's trace is split (the rules:
:mod:`trackverify.audit.core`).

A *join* is proposed for a track that starts after the anchor frame (its first observation,
the row with reason ``track_start``) on an anchor identity ``i``'s place: the registration's
one-to-one assignment gives its first observation's detection to ``i`` (``start_identity``)
and that observation lies within ``i``'s threshold of where the registration puts ``i``
(``start_um <= threshold_um``: it would be certified as ``i``). The join covers the track
from its first frame to the last frame before its first judged row in an event other than a
frame event (where it leaves ``i``; its last frame when it never does). Its evidence: that
distance, the threshold, the piece of ``i`` seen before it (``previous_id``, the track of
``i`` whose last certified frame, or its start, is the latest before the join's first
frame, and that frame), and the verdicts of its judged rows within the join.

*Continuity* of an anchor identity: its pieces, the identity's own track and every join to
it; a neuron's trace split in ten is a loss even when every piece is right.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.audit.result import audited
from trackverify.report.numbers import fmt_each
from trackverify.tables import coordinate_columns

JOIN_COLUMNS = ("recording", "id", "first_frame", "last_frame", "frames", "continues",
                "start_um", "threshold_um", "previous_id", "previous_last_frame", "judged",
                "certified", "flagged", "evidence")
CONTINUITY_COLUMNS = ("recording", "identity", "pieces", "ids")


def find_joins(observations: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """The proposed joins of an audit (module docstring), ordered by recording, identity
    and first frame; ``observations`` with their ``event`` column, ``events`` the ranked
    events."""
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in JOIN_COLUMNS})
    if "start_identity" not in observations.columns:
        return empty
    reason = observations["reason"]
    starts = observations[reason.eq("track_start").to_numpy()
                          & observations["start_identity"].notna().to_numpy()]
    axes = [c for c in coordinate_columns(starts) if f"expected_{c}" in starts.columns]
    here = starts[axes].to_numpy(dtype=float)
    there = starts[[f"expected_{c}" for c in axes]].to_numpy(dtype=float, na_value=np.nan)
    start_um = np.sqrt(((here - there) ** 2).sum(axis=1))
    starts = starts.assign(_start_um=start_um)[start_um <= starts["threshold_um"].to_numpy()]
    if not len(starts):
        return empty
    key = ["recording", "pred_id"]
    judged = observations[audited(observations)]
    ends = _join_ends(judged, events)
    joins = starts[[*key, "frame", "start_identity", "_start_um", "threshold_um"]].rename(
        columns={"frame": "first_frame", "start_identity": "continues",
                 "_start_um": "start_um"})
    joins = joins.merge(ends, on=key, how="left")
    joins["last_frame"] = joins["last_frame"].fillna(joins["first_frame"]).astype(np.int64)
    inside = judged.merge(joins[[*key, "last_frame"]], on=key)
    inside = inside[inside["frame"].to_numpy() <= inside["last_frame"].to_numpy()]
    counts = inside.assign(certified=inside["verdict"].eq("certified"),
                           flagged=inside["verdict"].eq("flagged")).groupby(key).agg(
        judged=("frame", "size"), certified=("certified", "sum"), flagged=("flagged", "sum"),
        frames=("frame", "nunique"))
    joins = joins.join(counts, on=key)
    for column in ("judged", "certified", "flagged", "frames"):
        joins[column] = joins[column].fillna(0).astype(np.int64)
    joins["frames"] += 1  # the first observation
    joins = _previous(joins, observations)
    joins = joins.rename(columns={"pred_id": "id"}).sort_values(
        ["recording", "first_frame", "id"], kind="stable").reset_index(drop=True)
    joins["evidence"] = _sentences(joins)
    return joins[list(JOIN_COLUMNS)]


def _join_ends(judged: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Per track: the last frame before its first judged row in a non-frame event, else its
    last judged frame (``last_frame``; absent for a track with no judged row)."""
    key = ["recording", "pred_id"]
    kind = (events.set_index("rank")["kind"] if len(events)
            else pd.Series(dtype=object))
    rank = judged["event"].to_numpy(dtype=float, na_value=np.nan)
    left = np.isfinite(rank) & ~pd.Series(rank).map(kind).eq("frame").to_numpy()
    leaving = judged[left].groupby(key)["frame"].min().rename("_leaves")
    last = judged.groupby(key)["frame"].max().rename("_last")
    ends = pd.concat([last, leaving], axis=1).reset_index()
    # the last judged frame before the first frame in an event
    prior = judged.merge(ends, on=key)
    prior = prior[prior["_leaves"].isna().to_numpy()
                  | (prior["frame"].to_numpy() < prior["_leaves"].to_numpy())]
    return prior.groupby(key)["frame"].max().rename("last_frame").reset_index()


def _previous(joins: pd.DataFrame, observations: pd.DataFrame) -> pd.DataFrame:
    """``previous_id`` / ``previous_last_frame``: the piece of the same identity (its own
    anchor track or another track started on it) whose last certified frame (its start
    counts: the anchor frame, or a later track's first observation) is the latest before the
    join's first frame; null when none."""
    on_place = (audited(observations) & observations["verdict"].eq("certified").to_numpy()) \
        | observations["reason"].isin(["anchor_frame", "track_start"]).to_numpy()
    pieces = observations[on_place & observations["start_identity"].notna().to_numpy()]
    pieces = pieces.groupby(["recording", "pred_id", "start_identity"], sort=False)[
        "frame"].max().rename("previous_last_frame").reset_index()
    pieces = pieces.rename(columns={"pred_id": "previous_id", "start_identity": "continues"})
    left = joins.assign(_key=_identity_key(joins), _at=joins["first_frame"].astype(np.int64))
    right = pieces.assign(_key=_identity_key(pieces),
                          _at=pieces["previous_last_frame"].astype(np.int64))
    left = left.sort_values("_at", kind="stable")
    right = right.sort_values("_at", kind="stable")[["_key", "_at", "previous_id",
                                                     "previous_last_frame"]]
    found = pd.merge_asof(left, right, on="_at", by="_key", allow_exact_matches=False)
    found["previous_last_frame"] = found["previous_last_frame"].astype("Int64")
    return found.drop(columns=["_key", "_at"])


def _identity_key(table: pd.DataFrame) -> pd.Series:
    """(recording, identity) as one text key ("\x00": no id holds a control character)."""
    return table["recording"].astype(str) + "\x00" + table["continues"].astype(str)


def _sentences(joins: pd.DataFrame) -> pd.Series:
    ids, to = joins["id"].astype(str), joins["continues"].astype(str)
    span = np.where(joins["first_frame"] == joins["last_frame"],
                    "frame " + joins["first_frame"].astype(str),
                    "frames " + joins["first_frame"].astype(str) + "-"
                    + joins["last_frame"].astype(str))
    before = np.where(joins["previous_id"].isna(), "; " + to + " was not on its place before",
                      "; " + to + " was last on its place at frame "
                      + joins["previous_last_frame"].astype(str) + " as id "
                      + joins["previous_id"].astype(str))
    return pd.Series("id " + ids + ", " + span + ", continues " + to + ": its first "
                     "observation " + fmt_each(joins["start_um"]) + " um from where " + to
                     + " should be (threshold " + fmt_each(joins["threshold_um"]) + " um)"
                     + before
                     + "; " + joins["certified"].astype(str) + " of "
                     + joins["judged"].astype(str) + " later observations certified",
                     index=joins.index, dtype=object)


def continuity(observations: pd.DataFrame, joins: pd.DataFrame) -> pd.DataFrame:
    """Per anchor identity (``recording, identity``): ``pieces`` (its own track and the
    joins to it) and their ``ids`` (';'-separated, in order of first frame)."""
    anchor = observations[observations["reason"].eq("anchor_frame").to_numpy()]
    own = pd.DataFrame({"recording": anchor["recording"].to_numpy(dtype=object),
                        "identity": anchor["pred_id"].to_numpy(dtype=object),
                        "id": anchor["pred_id"].to_numpy(dtype=object),
                        "first_frame": anchor["frame"].to_numpy()})
    if len(joins):
        own = pd.concat([own, pd.DataFrame({
            "recording": joins["recording"].to_numpy(dtype=object),
            "identity": joins["continues"].to_numpy(dtype=object),
            "id": joins["id"].to_numpy(dtype=object),
            "first_frame": joins["first_frame"].to_numpy()})], ignore_index=True)
    if not len(own):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CONTINUITY_COLUMNS})
    own = own.assign(_r=own["recording"].astype(str), _i=own["identity"].astype(str))
    own = own.sort_values(["_r", "_i", "first_frame"], kind="stable")
    grouped = own.groupby(["_r", "_i"], sort=False)
    out = pd.DataFrame({"recording": grouped["recording"].first(),
                        "identity": grouped["identity"].first(),
                        "pieces": grouped.size(),
                        "ids": grouped["id"].agg(lambda v: ";".join(map(str, v)))})
    return out.reset_index(drop=True)[list(CONTINUITY_COLUMNS)]


def continuity_summary(table: pd.DataFrame) -> dict:
    """``audit.json``'s continuity: anchor identities, how many in one piece, the median and
    largest number of pieces, the joins."""
    pieces = table["pieces"].to_numpy(dtype=np.int64)
    return {"anchor_identities": int(len(pieces)),
            "in_one_piece": int((pieces == 1).sum()),
            "median_pieces": float(np.median(pieces)) if len(pieces) else None,
            "max_pieces": int(pieces.max()) if len(pieces) else None,
            "joins": int((pieces - 1).sum())}
