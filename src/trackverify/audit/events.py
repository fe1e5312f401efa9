"""Events: what a person checks once each, made from an audit's flagged observations.

A suspect segment is a run of one id's non-certified frames; on a real tracker most are one
frame long and the same mistake is listed again for every frame and every id it touches. An
*event* is one mistake, checked once:

- ``frame``: a frame in which at least half of the scored ids are flagged, more than
  independent flags explain: with ``n`` scored ids in the frame, ``k`` of them flagged, and
  ``q`` the recording's share of scored observations flagged, the binomial tail
  ``P(K >= k | n, q) <= 0.001 / F`` (``F`` the recording's audited frames: a 0.1 % chance,
  over the whole recording, that independent flags make one). The tracker or the
  registration failed on the whole frame: one event, not one per id. Its rows belong to no
  other event.
- ``swap``: two tracks ``p`` and ``q``, judged against identities ``a`` and ``b`` (an anchor
  identity's own id; for a later track, the identity its start holds), where ``p`` is
  flagged with look-alike ``b`` and ``q`` with look-alike ``a`` in the same frames, in at
  least half of the frames of the smaller of the two confusions: each sits at the other's
  place. ``crossing``: a swap neither track comes back from (no certified row of either
  after its first frame): two linked tracks that crossed.
- ``identity``: the other flagged observations of one id ``p`` whose look-alike (the
  identity whose registered anchor position is nearest) is one identity ``q``, over the
  whole recording: ``p`` sits on (or drifts towards) ``q``. A tracker's confusions recur:
  splitting them at gaps of ``G`` frames was measured for ``G`` = 1 ... 100 and no split
  (benchmarks/audit_events.py, docs/evidence/audit.md): every split lowered the wrong
  observations the top events hold, so an event is the confusion, listed with its first and
  last frame and its number of frames. Flagged rows without a look-alike (a verifier that
  does not register the anchor) form one event per id. ``switch``: an identity event its
  track never comes back from (no certified row after its first frame): the track left the
  neuron it started on at that frame and follows ``q``'s place from there.
- ``uncovered``: an id with no single start to judge it against (reasons
  ``no_anchor_identity``: several rows of its first frame; ``not_in_anchor_frame``: a later
  id for a verifier that does not register the anchor): no evidence of an error, but an
  identity to check by hand at its first frame.

Rank (the cost model): a look costs the same for every event (a person opens it and checks
the ids in a few of its frames); what a look is worth is the wrong observations it
settles. Those are estimated by the event's observations *on the look-alike*: flagged rows
nearer another identity's registered anchor position than their own
(:func:`on_another_place`; on the real tracker's development half 90 % of those are wrong,
8 % of the other flagged rows). Events are ranked by that count (descending), then flagged
observations, then observations (descending), then recording, kind, ids and first frame;
``uncovered`` events come after every other, by observations (descending). A verifier with
no look-alike ranks by flagged observations.

Each event names the frame to open, the one its picture in the report shows
(``pictured_frame``, :func:`pictured_frames`): a frame of it where its id sits as far from
the look-alike's place as its sentence's median says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.audit.result import UNCOVERED, audited
from trackverify.audit.segments import segments_and_membership
from trackverify.report.numbers import fmt_each

#: Family-wise chance that independent flags make one frame event in a recording.
FRAME_EVENT_ALPHA = 0.001
#: A frame event needs at least this share of the frame's scored ids flagged.
FRAME_EVENT_SHARE = 0.5
#: A swap needs the two confusions to share at least this share of the smaller one's frames.
SWAP_SHARE = 0.5
KINDS = ("frame", "swap", "crossing", "identity", "switch", "drift", "uncovered")
#: The order events of equal evidence keep: a crossing is a swap for good, a switch an
#: identity confusion for good (the same rule; the kind says the track never came back).
ORDER = {"frame": 0, "swap": 1, "crossing": 1, "identity": 2, "switch": 2, "drift": 3,
         "uncovered": 4}
EVENT_COLUMNS = ("rank", "kind", "recording", "ids", "lookalike_id", "first_frame",
                 "last_frame", "pictured_frame", "frames", "observations", "flagged",
                 "on_lookalike", "evidence")


def find_events(observations: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The ranked events of an audit, and per observation the rank of the event covering it
    (``Int64``, null when none), on ``observations``' index (see the module docstring).

    ``observations`` is an audit's observation table (``recording, frame, pred_id,
    pred_valid, score, verdict, reason, lookalike_id, lookalike_um, threshold_um``).
    """
    rows = _candidates(observations)
    membership = pd.Series(pd.array(np.full(len(observations), pd.NA), dtype="Int64"),
                           index=observations.index)
    if not len(rows):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in EVENT_COLUMNS}), membership
    rows["_event"] = _assign(rows, observations)
    rows = rows[rows["_event"].notna().to_numpy()]
    if not len(rows):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in EVENT_COLUMNS}), membership
    events = _describe(rows, _last_certified(observations), pictured_frames(rows, observations))
    rank = pd.Series(events["rank"].to_numpy(), index=events.index)
    membership.iloc[rows["_position"].to_numpy()] = rank.reindex(rows["_event"]).to_numpy()
    return events.reset_index(drop=True), membership


def _candidates(observations: pd.DataFrame) -> pd.DataFrame:
    """The rows an event may cover: flagged audited rows and an uncovered id's rows."""
    verdict = observations["verdict"].to_numpy(dtype=object)
    uncovered = observations["reason"].isin(UNCOVERED).to_numpy()
    keep = audited(observations) & ((verdict == "flagged") | uncovered)
    if "segment" in observations.columns:
        segment = observations["segment"]
    else:
        segment = segments_and_membership(observations)[1]
    rows = observations.assign(_position=np.arange(len(observations)),
                               _segment=segment.to_numpy(dtype=float, na_value=np.nan))[keep].copy()
    rows["_own_um"] = own_distance(rows)
    rows["_on"] = on_another_place(rows)
    rows["_uncovered"] = rows["reason"].isin(UNCOVERED).to_numpy()
    if "lookalike_id" not in rows.columns:
        rows["lookalike_id"] = None
    rows["_own"] = own_identity(rows)
    return rows


def own_identity(table: pd.DataFrame) -> np.ndarray:
    """Per row, the identity its track is judged against: ``start_identity`` (the anchor
    identity its start holds; None for a start on no identity's place), or the row's own
    ``pred_id`` for a table without that column (an anchor identity's own id)."""
    if "start_identity" not in table.columns:
        return table["pred_id"].to_numpy(dtype=object)
    return table["start_identity"].to_numpy(dtype=object)


def own_distance(table: pd.DataFrame) -> np.ndarray:
    """Per row, its distance (um) to where the registration puts its own predicted id
    (``expected_*``); the verifier's ``score`` where that place is not known (a verifier that
    does not register, or a table without ``expected_*``)."""
    from trackverify.tables import coordinate_columns

    score = table["score"].to_numpy(dtype=float, na_value=np.nan)
    axes = [c for c in coordinate_columns(table) if f"expected_{c}" in table.columns]
    if not axes:
        return score
    here = table[axes].to_numpy(dtype=float)
    there = table[[f"expected_{c}" for c in axes]].to_numpy(dtype=float, na_value=np.nan)
    distance = np.sqrt(((here - there) ** 2).sum(axis=1))
    return np.where(np.isfinite(distance), distance, score)


def on_another_place(table: pd.DataFrame) -> np.ndarray:
    """Per row: flagged, and nearer another identity's registered place than its own
    (``lookalike_um <`` :func:`own_distance`): the observation sits on (or towards) its
    look-alike. Its own distance, not its ``score``: registered_distance's score adds the
    margin excess, the one-to-one claim's penalty and track pooling, which put rows that
    sit at their own place above their look-alike's distance (on the real tracker's
    development half, 441 rows nearer their look-alike than their score, 21 % of them wrong,
    against 90 % of the rows nearer it than their own place)."""
    if "lookalike_um" not in table.columns:
        return np.zeros(len(table), dtype=bool)
    look = table["lookalike_um"].to_numpy(dtype=float, na_value=np.nan)
    flagged = table["verdict"].to_numpy(dtype=object) == "flagged"
    return flagged & (look < own_distance(table))


def _assign(rows: pd.DataFrame, observations: pd.DataFrame) -> np.ndarray:
    """Per candidate row, its event (a dense integer key; NaN: noise, no event); kinds
    decided in order: uncovered, frame, swap, then identity, drift or noise. Sets the
    columns ``_describe`` reads."""
    kind = np.where(rows["_uncovered"].to_numpy(), "uncovered", "identity").astype(object)
    in_frame, scored = _frame_event_rows(rows, observations)
    in_frame &= kind != "uncovered"
    kind[in_frame] = "frame"
    partner = _swap_partner(rows, kind).to_numpy(dtype=object)
    kind[pd.notna(partner)] = "swap"
    kind[_unsupported(rows, kind, observations)] = None  # noise: segments.csv only
    pred = rows["pred_id"].to_numpy(dtype=object)
    low, high = _ordered(pred, partner)
    look = np.where((kind == "identity") | (kind == "drift"),
                    rows["lookalike_id"].to_numpy(dtype=object), None)
    drift = kind == "drift"
    key = pd.DataFrame({
        "kind": kind, "recording": rows["recording"].to_numpy(dtype=object),
        "a": np.where(kind == "frame", None, low),
        "b": np.where(kind == "swap", high, look),
        "frame": np.where(kind == "frame", rows["frame"].to_numpy(), -1),
        "segment": np.where(drift, rows["_segment"].to_numpy(dtype=object), -1),
    })
    # "\x00" for a missing part: no id holds a control character (tables._check_text_ids)
    event = key.fillna("\x00").astype(str).groupby(list(key.columns), sort=False).ngroup()
    event = event.to_numpy().astype(float)
    event[pd.isna(kind)] = np.nan
    ids = np.where(kind == "swap", pd.Series(low).astype(str) + ";" + pd.Series(high).astype(str),
                   pd.Series(pred).astype(str))
    by_frame = pd.Series(pred[in_frame]).groupby(event[in_frame])
    frame_ids = by_frame.agg(lambda v: ";".join(map(str, np.sort(v.to_numpy()))))
    ids[in_frame] = frame_ids.reindex(event[in_frame]).to_numpy()
    rows["kind"], rows["_ids"], rows["_lookalike"] = kind, ids, look
    sort_id = low.copy()
    sort_id[in_frame] = by_frame.transform("min").to_numpy(dtype=object)
    rows["_sort_id"] = sort_id
    rows["_frame_n"] = scored
    return event


def _unsupported(rows: pd.DataFrame, kind: np.ndarray, observations: pd.DataFrame) -> np.ndarray:
    """Marks ``kind`` "drift" in place and returns the rows that make no event: flagged rows
    of a confusion ``p -> q`` none of whose rows is on ``q``'s place are a *drift* when they
    lie in a suspect segment (a run of ``p``'s frames with no certified one) of at least
    ``L`` flagged observations, ``L`` the shortest run that independent flags at the
    recording's rate ``q`` make anywhere in its ``N`` scored observations with chance at most
    ``FRAME_EVENT_ALPHA`` (``N q^L <= alpha``); shorter runs are scattered noise."""
    identity = kind == "identity"
    group = pd.DataFrame({"r": rows["recording"].astype(str).to_numpy(),
                          "p": rows["pred_id"].astype(str).to_numpy(),
                          "q": rows["lookalike_id"].astype(str).to_numpy(),
                          "on": rows["_on"].to_numpy() & identity})
    supported = group.groupby(["r", "p", "q"], dropna=False)["on"].transform("any").to_numpy()
    weak = identity & ~supported
    segment = rows["_segment"].to_numpy(dtype=float, na_value=np.nan)
    flagged = pd.Series(weak).groupby(segment).transform("sum").to_numpy()
    long_enough = flagged >= _shortest_run(rows, observations)
    kind[weak & long_enough & ~np.isnan(segment)] = "drift"
    return weak & ~(long_enough & ~np.isnan(segment))


def _shortest_run(rows: pd.DataFrame, observations: pd.DataFrame) -> np.ndarray:
    """Per candidate row, its recording's ``L`` (see :func:`_unsupported`)."""
    scored = observations[audited(observations)
                          & observations["verdict"].isin(["certified", "flagged"]).to_numpy()]
    per = scored["verdict"].eq("flagged").groupby(scored["recording"]).agg(["size", "mean"])
    n, q = per["size"].to_numpy(float), per["mean"].to_numpy(float)
    with np.errstate(divide="ignore"):  # q = 1: no run length is unusual
        length = np.where(q < 1, np.ceil(np.log(FRAME_EVENT_ALPHA / n) / np.log(q)), np.inf)
    return pd.Series(np.maximum(length, 2), index=per.index).reindex(
        rows["recording"]).to_numpy(dtype=float)


def _frame_event_rows(rows: pd.DataFrame, observations: pd.DataFrame) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """Which candidate rows lie in a frame event (module docstring: half the frame's scored
    ids flagged, binomial tail below ``FRAME_EVENT_ALPHA / F``), and each row's frame's
    number of scored ids."""
    from scipy.special import bdtrc  # P(X > k), X ~ Binomial(n, p); not scipy.stats (0.5 s import)

    scored = observations[audited(observations)
                          & observations["verdict"].isin(["certified", "flagged"]).to_numpy()]
    where = pd.MultiIndex.from_arrays([rows["recording"], rows["frame"]])
    if not len(scored):
        return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=np.int64)
    per_frame = scored.assign(_flag=scored["verdict"].eq("flagged")).groupby(
        ["recording", "frame"], sort=True)["_flag"].agg(["size", "sum"])
    per_recording = per_frame.groupby(level="recording").agg(
        n=("size", "sum"), k=("sum", "sum"), frames=("size", "size"))
    recording = per_frame.index.get_level_values("recording")
    rate = (per_recording["k"] / per_recording["n"]).reindex(recording).to_numpy()
    frames = per_recording["frames"].reindex(recording).to_numpy()
    n, k = per_frame["size"].to_numpy(), per_frame["sum"].to_numpy()
    event = (k >= FRAME_EVENT_SHARE * n) & (k > 0) & \
        (bdtrc(k - 1, n, rate) <= FRAME_EVENT_ALPHA / frames)
    flagged = rows["verdict"].to_numpy(dtype=object) == "flagged"
    n_of_row = per_frame["size"].reindex(where).fillna(0).to_numpy(dtype=np.int64)
    return where.isin(per_frame.index[event]) & flagged, n_of_row


def _swap_partner(rows: pd.DataFrame, kind: np.ndarray) -> pd.Series:
    """Per candidate row, the other id of its swap (None when not in one). Track ``p``
    judged against identity ``a`` (its own id for an anchor identity, the identity its start
    holds for a later track) and track ``q`` against ``b``: the confusions ``p -> b`` and
    ``q -> a`` are a swap when the frames in which both tracks are on the other's place are
    at least ``SWAP_SHARE`` of the smaller confusion's frames on the other's place."""
    pool = rows[(kind == "identity") & rows["lookalike_id"].notna().to_numpy()
                & pd.notna(rows["_own"]).to_numpy()]
    out = pd.Series(np.full(len(rows), None, dtype=object), index=rows.index)
    keyed = pd.DataFrame({"recording": pool["recording"].astype(str).to_numpy(),
                          "p": pool["pred_id"].astype(str).to_numpy(),
                          "a": pool["_own"].astype(str).to_numpy(),
                          "b": pool["lookalike_id"].astype(str).to_numpy(),
                          "frame": pool["frame"].to_numpy()}, index=pool.index)
    on = keyed[pool["_on"].to_numpy()]
    mirror = on.rename(columns={"p": "q", "a": "b", "b": "a"})
    both = on.merge(mirror, on=["recording", "a", "b", "frame"], how="inner")
    both = both[both["p"] != both["q"]]
    if not len(both):
        return out
    sizes = on.groupby(["recording", "p", "b"]).size()
    shared = both.groupby(["recording", "p", "b", "q", "a"]).size()
    level = shared.index.get_level_values
    mine = sizes.reindex(pd.MultiIndex.from_arrays([level(0), level(1), level(2)])).to_numpy()
    theirs = sizes.reindex(pd.MultiIndex.from_arrays([level(0), level(3), level(4)])).to_numpy()
    swapped = shared[shared.to_numpy() >= SWAP_SHARE * np.minimum(mine, theirs)].reset_index()
    if not len(swapped):
        return out
    # one partner per confusion p -> b: the track sharing the most frames (ties: first)
    swapped = swapped.sort_values(0, ascending=False, kind="stable").drop_duplicates(
        ["recording", "p", "b"])
    partner = swapped.set_index(["recording", "p", "b"])["q"]
    found = partner.reindex(pd.MultiIndex.from_frame(keyed[["recording", "p", "b"]]))
    chosen = found.notna().to_numpy()
    as_id = pd.Series(pool["pred_id"].to_numpy(dtype=object), index=keyed["p"].to_numpy())
    as_id = as_id[~as_id.index.duplicated()]  # the partner's id as written, from its text
    out.loc[pool.index[chosen]] = as_id.reindex(found.to_numpy()[chosen]).to_numpy(dtype=object)
    return out


def _ordered(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise (smaller, larger) of two id arrays of one type, numbers numerically;
    where ``b`` is None, (a, None)."""
    known = pd.notna(b)
    low, high = a.copy(), b.copy()
    if known.any():
        swap = np.zeros(len(a), dtype=bool)
        swap[known] = b[known] < a[known]  # one id type per table: ints with ints, text with text
        low[swap], high[swap] = b[swap], a[swap]
    return low, high


def _last_certified(observations: pd.DataFrame) -> pd.Series:
    """Per (recording, predicted id as text), the last frame of a certified judged row."""
    rows = observations[audited(observations)
                        & observations["verdict"].eq("certified").to_numpy()]
    return rows["frame"].groupby([rows["recording"].astype(str).to_numpy(),
                                  rows["pred_id"].astype(str).to_numpy()]).max()


def _for_good(events: pd.DataFrame, last_certified: pd.Series) -> np.ndarray:
    """Per event: each of its ids has no certified row after the event's first frame (the
    track left its place and never came back)."""
    ids = events["ids"].astype(str).str.split(";")
    flat = ids.explode()
    key = pd.MultiIndex.from_arrays([events["recording"].astype(str).reindex(flat.index),
                                     flat.to_numpy()])
    last = last_certified.reindex(key).to_numpy(dtype=float, na_value=-np.inf)
    first = events["first_frame"].reindex(flat.index).to_numpy(dtype=float)
    return pd.Series(last < first, index=flat.index).groupby(level=0).all() \
        .reindex(events.index).to_numpy(dtype=bool)


def pictured_frames(rows: pd.DataFrame, observations: pd.DataFrame) -> pd.Series:
    """Per event (indexed by its key ``_event``), the frame its picture shows
    (``events.csv``'s ``pictured_frame``): a frame event's frame; an uncovered id's first
    frame; otherwise one of its rows, chosen among those on the look-alike's place (all its
    rows when none is), preferring rows whose frame holds a valid row of the look-alike's id
    (so both ids are drawn), as the row whose distance to the look-alike's place (none on
    it: to its own place, a drift) is nearest the median of that distance over those rows,
    the median its sentence quotes (distances within 1e-6 um tie: the registration's noise
    never decides); ties: the earliest frame."""
    event = rows["_event"].to_numpy(dtype=float)
    on = rows["_on"].to_numpy(dtype=bool)
    has_on = pd.Series(on).groupby(event).transform("any").to_numpy(dtype=bool)
    pool = np.where(has_on, on, True)
    look_um = rows["lookalike_um"].to_numpy(dtype=float, na_value=np.nan) \
        if "lookalike_um" in rows.columns else np.full(len(rows), np.nan)
    measure = np.where(has_on, look_um, rows["_own_um"].to_numpy(dtype=float, na_value=np.nan))
    valid = observations[observations["pred_valid"].to_numpy(dtype=bool)]
    seen = pd.MultiIndex.from_arrays([valid["recording"].astype(str), valid["frame"],
                                      valid["pred_id"].astype(str)])
    look = rows["lookalike_id"]
    here = look.notna().to_numpy() & pd.MultiIndex.from_arrays(
        [rows["recording"].astype(str), rows["frame"], look.astype(str)]).isin(seen)
    both = pd.Series(pool & here).groupby(event).transform("any").to_numpy(dtype=bool)
    pool = np.where(both, pool & here, pool)
    target = pd.Series(np.where(pool, measure, np.nan)).groupby(event).transform("median")
    gap = np.abs(measure - target.to_numpy(dtype=float))
    gap = np.where(np.isfinite(gap), np.round(gap, 6), np.inf)  # 1e-6 um apart: a tie
    frame = rows["frame"].to_numpy()
    picked = np.flatnonzero(pool)
    picked = picked[np.lexsort((frame[picked], gap[picked], event[picked]))]
    first = pd.Series(frame[picked], index=event[picked])
    chosen = first[~first.index.duplicated()]
    whole = rows["kind"].isin(["frame", "uncovered"]).to_numpy()  # the event's first frame
    earliest = pd.Series(frame[whole], index=event[whole]).groupby(level=0).min()
    return earliest.combine_first(chosen).astype(np.int64)


def _describe(rows: pd.DataFrame, last_certified: pd.Series | None = None,
              pictured: pd.Series | None = None) -> pd.DataFrame:
    """One row per event (EVENT_COLUMNS), ranked; indexed by the event key. An identity
    event (swap) whose ids have no certified row after its first frame is a ``switch``
    (``crossing``): the track left for good. ``pictured``: each event's pictured frame
    (:func:`pictured_frames`; its first frame when not given)."""
    on = rows["_on"].to_numpy()
    rows = rows.assign(_flagged=rows["verdict"].eq("flagged"),
                       _on_own=rows["_own_um"].where(on), _on_look=rows["lookalike_um"].where(on)
                       if "lookalike_um" in rows.columns else np.nan,
                       _id_text=rows["pred_id"].astype(str))
    g = rows.groupby("_event", sort=True)
    # each event's first row as it is (GroupBy.first makes floats of integer ids beside None)
    first = rows.drop_duplicates("_event").set_index("_event").sort_index()
    events = pd.DataFrame({
        "kind": first["kind"],
        "recording": first["recording"],
        "ids": first["_ids"],
        "lookalike_id": first["_lookalike"],
        "first_frame": g["frame"].min(),
        "last_frame": g["frame"].max(),
        "pictured_frame": (g["frame"].min() if pictured is None
                           else pictured.reindex(first.index)),
        "frames": g["frame"].nunique(),
        "observations": g.size(),
        "flagged": g["_flagged"].sum().astype(np.int64),
        "on_lookalike": g["_on"].sum().astype(np.int64),
        "_score": g["_on_own"].median(),
        "_look": g["_on_look"].median(),
        "_all_own": g["_own_um"].median(),
        "_threshold": g["threshold_um"].median(),
        "_scored": first["_frame_n"],
        "_sort_id": first["_sort_id"],
    })
    if last_certified is not None and len(events):
        good = _for_good(events, last_certified)
        kind = events["kind"].to_numpy(dtype=object)
        kind[good & (kind == "identity")] = "switch"
        kind[good & (kind == "swap")] = "crossing"
        events["kind"] = kind
    events["_start_identity"] = first["_own"]
    events["_start_frame"] = (first["start_frame"] if "start_frame" in first.columns
                              else pd.Series(pd.NA, index=first.index, dtype="Int64"))
    events["evidence"] = _evidence(events)
    order = events.assign(_last=events["kind"].eq("uncovered"),
                          _kind=events["kind"].map(ORDER))
    order = order.sort_values(
        ["_last", "on_lookalike", "flagged", "observations", "recording", "_kind", "_sort_id",
         "first_frame"],
        ascending=[True, False, False, False, True, True, True, True], kind="stable")
    events = events.loc[order.index, [c for c in EVENT_COLUMNS if c != "rank"]]
    events.insert(0, "rank", np.arange(1, len(events) + 1))
    return events


def _evidence(events: pd.DataFrame) -> pd.Series:
    """A sentence per event: what was seen, where (numbers with report.numbers.fmt)."""
    span = np.where(events["first_frame"] == events["last_frame"],
                    "frame " + events["first_frame"].astype(str),
                    "frames " + events["first_frame"].astype(str) + "-"
                    + events["last_frame"].astype(str))
    frames = " (" + events["frames"].astype(str) + " frames)"
    ids, look = events["ids"].astype(str), events["lookalike_id"].astype(str)
    on, flagged = events["on_lookalike"].astype(str), events["flagged"].astype(str)
    look_um = fmt_each(events["_look"])  # each measured column formatted once
    sits = ("id " + ids + " sits a median " + look_um + " um from where " + look
            + " should be and " + fmt_each(events["_score"]) + " um from its own place in " + on
            + " of " + flagged + " flagged observations, " + span + frames)
    drifts = ("id " + ids + " is a median " + fmt_each(events["_all_own"])
              + " um from its own place (flagged: score above its threshold of "
              + fmt_each(events["_threshold"]) + " um) in " + flagged
              + " flagged observations, " + span + frames
              + np.where(events["lookalike_id"].notna(), "; nearest other identity: " + look, ""))
    swap = ("ids " + ids.str.replace(";", " and ") + " each sit near the other's place: " + flagged
            + " flagged observations, " + on + " on the other's place, " + span + frames)
    frame = (span + ": " + flagged + " of " + events["_scored"].astype("Int64").astype(str)
             + " scored ids flagged at once: the tracker or the registration failed on the "
             "whole frame")
    uncovered = ("id " + ids + " has no single start to judge it against (several rows of "
                 "its first frame, or not in the anchor frame for a verifier that does not "
                 "register it); check it by hand from frame " + events["first_frame"].astype(str))
    started = events["_start_identity"]
    start_frame = events["_start_frame"].astype("Int64").astype(str).fillna("?").to_numpy(
        dtype=object)
    named = (started.astype(str) + "'s place").to_numpy(dtype=object)
    where = np.where(pd.isna(started).to_numpy(), "a place no anchor identity holds", named)
    origin = " (it started on " + where + " at frame " + start_frame + ")"
    origin = np.where(started.astype(str).to_numpy() == ids.to_numpy(), "", origin)
    switch = ("id " + ids + " leaves the place it started on" + origin + " at frame "
              + events["first_frame"].astype(str) + " and follows " + look
              + "'s place from there: a median " + look_um + " um from where " + look
              + " should be in " + on + " of " + flagged + " flagged observations, " + span
              + frames)
    crossing = ("ids " + ids.str.replace(";", " and ") + " cross at frame "
                + events["first_frame"].astype(str) + ": each follows the other's place from "
                "there (" + flagged + " flagged observations, " + on + " on the other's place, "
                + span + frames + ")")
    kind = events["kind"].to_numpy()
    identity = np.where(events["on_lookalike"].to_numpy() > 0, sits, drifts)
    text = np.select([kind == "frame", kind == "swap", kind == "crossing", kind == "switch",
                      kind == "uncovered"], [frame, swap, crossing, switch, uncovered], identity)
    return pd.Series(text, index=events.index, dtype=object)
