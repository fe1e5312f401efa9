"""The corruption suite and per-row labels (SPEC section 4, protocol ``anatomical_verification``).

Every condition is a copy of one recording's clean observation table in which only
``pred_id`` / ``pred_valid`` change; coordinates and detections never do, and the anchor
frame (frame 0) is never corrupted. Intervals are half-open ``[start, end)``.

============================ =================================================================
condition                    what changes
============================ =================================================================
``control``                  nothing; every row tagged ``is_control = True``
``single_frame_swap``        a random pair exchanges predicted ids at frame ``start`` only
``persistent_swap``          a random pair exchanges predicted ids on ``[start, T)``
``swap_and_recovery``        a random pair exchanges predicted ids on ``[start, recovery_end)``
``nearby_swap``              the pair with the smallest reference separation (3-D distance at
                             frame ``start``; ties by ids) exchanges ids on
                             ``[start, recovery_end)``
``fragmentation``            one random track gets a brand-new predicted id on ``[start, T)``
``dropout``                  one random track's predictions are invalid on ``[start, T)``
``smooth_drift``             a random track's id slides along a chain of neighbouring tracks:
                             on the k-th of K equal parts of ``[start, recovery_end)`` the
                             track and the chain's k-th track exchange ids
``duplicate_identity``       on ``[start, recovery_end)`` a random second track also carries a
                             random first track's id (two detections, one id)
``long_gap_reassociation``   a random track is invalid on ``[start, recovery_end)``; on
                             ``[recovery_end, T)`` it and its nearest neighbour exchange ids
============================ =================================================================

"A pair exchanges predicted ids" means: on the rows of the two tracks inside the interval,
the two tracks' anchor identities are transposed (``pred_id == anchor(a)`` becomes
``anchor(b)`` and vice versa). On clean predictions this is exactly "each track carries the
other's id".

Random choices use one ``numpy.random.Generator(PCG64(seed))`` per recording, drawn in the
table's order (single_frame_swap, persistent_swap, swap_and_recovery, fragmentation,
dropout; nearby_swap draws nothing; then the later additions smooth_drift, duplicate_identity,
long_gap_reassociation, so the original six keep their draws), only among tracks observed at
``start`` (for pairs, both observed; candidates in ascending id order). Neighbours (the chain
of smooth_drift, the partner of long_gap_reassociation) are by 3-D reference distance at
``start``, ties by ids.

Labels (one row = one reference observation in one condition): ``error = 1`` where the
row's valid predicted id differs from its track's anchor identity (the predicted id the
track carries in frame 0), ``0`` where it equals it, null where the prediction is invalid or
the track has no anchor identity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.anchors import anchor_identities
from trackverify.errors import InputError
from trackverify.tables import coordinate_columns, plain

PAIR_MODES = {"single_frame_swap", "persistent_swap", "swap_and_recovery", "nearby_swap"}
DRAW_ORDER = ("single_frame_swap", "persistent_swap", "swap_and_recovery", "fragmentation",
              "dropout", "smooth_drift", "duplicate_identity", "long_gap_reassociation")
#: Modes on ``[start, recovery_end)`` (long_gap_reassociation also needs frames after it).
RECOVERY_MODES = {"swap_and_recovery", "nearby_swap", "smooth_drift", "duplicate_identity",
                  "long_gap_reassociation"}
#: Tracks each mode draws at random (smooth_drift and long_gap add neighbours, not draws).
DRAW_SIZE = {"duplicate_identity": 2}
#: Hops of smooth_drift (fewer if fewer tracks or frames are available).
DRIFT_HOPS = 3


@dataclass(frozen=True)
class Corruption:
    """What one condition changed: the chosen tracks and the half-open frame interval."""

    condition: str
    tracks: tuple
    frames: tuple[int, int] | None
    gap_end: int | None = None  # long_gap_reassociation: the gap is [frames[0], gap_end)

    def to_manifest(self) -> dict:
        entry = {"tracks": list(self.tracks), "frames": list(self.frames) if self.frames else None}
        if self.gap_end is not None:
            entry["gap_end"] = self.gap_end
        return entry


def label_errors(table: pd.DataFrame, anchors: pd.Series) -> pd.Series:
    """Per-row ``error`` (nullable Int8): 1 wrong id, 0 right id, null invalid or unanchored."""
    anchor = anchors.reindex(table["track"].to_numpy())
    has_anchor = anchor.notna().to_numpy()
    valid = table["pred_valid"].to_numpy(dtype=bool) & has_anchor
    wrong = table["pred_id"].to_numpy(dtype=object) != anchor.to_numpy(dtype=object)
    values = pd.array(np.where(wrong, 1, 0), dtype="Int8")
    values[~valid] = pd.NA
    return pd.Series(values, index=table.index, name="error")


def short_recording_hint(n_frames: int, start: int, recovery_end: int,
                         conditions: tuple[str, ...]) -> str:
    """The flags that would work for a recording of ``n_frames`` frames: a ``--start`` /
    ``--recovery-end`` at a third and two thirds of it, or the ``--conditions`` that fit the
    current settings (``control`` always does)."""
    fits = [c for c in conditions if c == "control" or (
        n_frames > start and (c not in RECOVERY_MODES or n_frames > recovery_end))]
    options = []
    if n_frames >= 3:
        new_start = max(1, n_frames // 3)
        new_end = max(new_start + 1, (2 * n_frames) // 3)
        if new_end < n_frames:
            options.append(f"--start {new_start} --recovery-end {new_end}")
    options.append(f"--conditions {','.join(fits) or 'control'}")
    return "try " + ", or ".join(options) + " (or set start / recovery_end / conditions in " \
        "the [run] table of --config; docs/configuration.md)"


def plan_corruptions(table: pd.DataFrame, conditions: tuple[str, ...], seed: int, start: int,
                     recovery_end: int, recording: str = "") -> dict[str, Corruption]:
    """Choose the tracks of every condition (all random draws happen here, in table order)."""
    frames = table["frame"].to_numpy()
    n_frames = int(frames.max()) + 1
    at_start = table[frames == start]
    candidates = np.sort(at_start["track"].to_numpy())
    rng = np.random.Generator(np.random.PCG64(seed))
    plans: dict[str, Corruption] = {}
    where = f"recording '{recording}'" if recording else "recording"
    for condition in conditions:
        if condition == "control":
            plans[condition] = Corruption(condition, (), None)
            continue
        end = recovery_end if condition in RECOVERY_MODES else n_frames
        if condition == "single_frame_swap":
            end = start + 1
        if condition == "long_gap_reassociation":
            end = n_frames
        if n_frames <= start or (condition in RECOVERY_MODES and n_frames <= recovery_end):
            needed = recovery_end if condition in RECOVERY_MODES else start
            raise InputError(f"{where} has {n_frames} frames, too short for '{condition}' "
                             f"(needs more than {needed}); "
                             + short_recording_hint(n_frames, start, recovery_end, conditions))
        need = 1 if condition in ("fragmentation", "dropout") else 2
        if len(candidates) < need:
            raise InputError(f"{where}: '{condition}' needs {need} track(s) observed at frame "
                             f"{start}, found {len(candidates)}")
        plans[condition] = Corruption(condition, (), (start, end))
    for condition in DRAW_ORDER:
        if condition not in plans:
            continue
        size = 2 if condition in PAIR_MODES else DRAW_SIZE.get(condition, 1)
        picks = candidates[rng.choice(len(candidates), size=size, replace=False)]
        plans[condition] = Corruption(condition, tuple(plain(p) for p in picks), plans[condition].frames)
    if "nearby_swap" in plans:
        plans["nearby_swap"] = Corruption("nearby_swap", _nearest_pair(at_start),
                                          plans["nearby_swap"].frames)
    if "smooth_drift" in plans:
        hops = min(DRIFT_HOPS, len(candidates) - 1, recovery_end - start)
        chain = _neighbour_chain(at_start, plans["smooth_drift"].tracks[0], hops)
        plans["smooth_drift"] = Corruption("smooth_drift", chain, plans["smooth_drift"].frames)
    if "long_gap_reassociation" in plans:
        pair = _neighbour_chain(at_start, plans["long_gap_reassociation"].tracks[0], 1)
        plans["long_gap_reassociation"] = Corruption("long_gap_reassociation", pair,
                                                     plans["long_gap_reassociation"].frames,
                                                     gap_end=recovery_end)
    return {c: plans[c] for c in conditions}



def _ordered_points(at_start: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Track ids (ascending), their positions at ``start`` and the pairwise distances."""
    ordered = at_start.sort_values("track", kind="stable")
    points = ordered[coordinate_columns(ordered)].to_numpy()
    diff = points[:, None, :] - points[None, :, :]
    return ordered["track"].to_numpy(), points, np.sqrt((diff ** 2).sum(-1))


def _nearest_pair(at_start: pd.DataFrame) -> tuple:
    """The two tracks closest together (3-D, or 2-D data in 2-D) at ``start``; ties by ids."""
    ids, _, distance = _ordered_points(at_start)
    i, j = np.triu_indices(len(ids), k=1)
    d = distance[i, j]
    # lexsort: last key is primary -> distance, then first id, then second id (ranks).
    best = np.lexsort((j, i, d))[0]
    return (plain(ids[i[best]]), plain(ids[j[best]]))


def _neighbour_chain(at_start: pd.DataFrame, first, hops: int) -> tuple:
    """``first``, then ``hops`` times the nearest not-yet-chosen track to the last chosen one.

    Distances are 3-D reference distances at ``start``; ties go to the smaller id (rank).
    """
    ids, _, distance = _ordered_points(at_start)
    chain = [int(np.flatnonzero(ids == first)[0])]
    for _ in range(hops):  # hops <= DRIFT_HOPS: a handful of iterations
        row = distance[chain[-1]].copy()
        row[chain] = np.inf
        chain.append(int(np.argmin(row)))  # argmin keeps the first (smallest id) of ties
    return tuple(plain(ids[k]) for k in chain)


def apply_corruption(table: pd.DataFrame, plan: Corruption, anchors: pd.Series,
                     new_id_factory) -> pd.DataFrame:
    """A corrupted copy of ``table`` (``pred_id`` / ``pred_valid`` only) for one condition."""
    out = table.copy()
    if plan.condition == "control":
        return out
    begin, end = plan.frames
    frames = out["frame"].to_numpy()
    in_interval = (frames >= begin) & (frames < end)
    tracks = out["track"].to_numpy()
    if plan.condition in PAIR_MODES:
        _exchange(out, table, in_interval, *plan.tracks, anchors)
    elif plan.condition == "fragmentation":
        rows = in_interval & (tracks == plan.tracks[0])
        pred = out["pred_id"].to_numpy(dtype=object).copy()
        pred[rows] = new_id_factory()
        out["pred_id"] = pd.Series(pred, index=out.index).astype(table["pred_id"].dtype)
    elif plan.condition == "dropout":
        rows = in_interval & (tracks == plan.tracks[0])
        valid = out["pred_valid"].to_numpy(dtype=bool).copy()
        valid[rows] = False
        out["pred_valid"] = valid
    elif plan.condition == "smooth_drift":
        first, chain = plan.tracks[0], plan.tracks[1:]
        # Part k of K (k = 1..K) of the interval: [begin + (k-1) L / K, begin + k L / K).
        edges = begin + (np.arange(len(chain) + 1) * (end - begin)) // len(chain)
        for k, other in enumerate(chain):  # K <= DRIFT_HOPS parts
            part_rows = (frames >= edges[k]) & (frames < edges[k + 1])
            _exchange(out, table, part_rows, first, other, anchors)
    elif plan.condition == "duplicate_identity":
        source, copy = plan.tracks
        rows = in_interval & (tracks == copy)
        if anchors.get(source) is not None:
            pred = out["pred_id"].to_numpy(dtype=object).copy()
            pred[rows] = anchors.get(source)
            out["pred_id"] = pd.Series(pred, index=out.index).astype(table["pred_id"].dtype)
    elif plan.condition == "long_gap_reassociation":
        lost, other = plan.tracks
        gap_end = plan.gap_end
        valid = out["pred_valid"].to_numpy(dtype=bool).copy()
        valid[in_interval & (frames < gap_end) & (tracks == lost)] = False
        out["pred_valid"] = valid
        _exchange(out, table, (frames >= gap_end) & (frames < end), lost, other, anchors)
    else:  # pragma: no cover - plan_corruptions only makes known conditions
        raise ValueError(plan.condition)
    return out


def _exchange(out: pd.DataFrame, table: pd.DataFrame, frame_rows: np.ndarray, a, b,
              anchors: pd.Series) -> None:
    """In place: on ``frame_rows`` of tracks ``a`` and ``b``, transpose their anchor identities."""
    id_a, id_b = anchors.get(a), anchors.get(b)
    if id_a is None or id_b is None:
        return
    rows = frame_rows & np.isin(out["track"].to_numpy(), [a, b])
    pred = out["pred_id"].to_numpy(dtype=object).copy()
    is_a, is_b = rows & (pred == id_a), rows & (pred == id_b)
    pred[is_a], pred[is_b] = id_b, id_a
    out["pred_id"] = pd.Series(pred, index=out.index).astype(table["pred_id"].dtype)


def brand_new_id(pred_ids: pd.Series):
    """A predicted id used nowhere in the recording, of the same type as the others."""
    values = pred_ids.dropna()
    if pd.api.types.is_integer_dtype(values.dtype):
        return int(values.max()) + 1 if len(values) else 1
    used = set(values.astype(str))
    candidate, n = "fragment", 1
    while candidate in used:  # terminates: at most len(used) + 1 names are tried
        n += 1
        candidate = f"fragment-{n}"
    return candidate


def corrupt_recording(table: pd.DataFrame, conditions: tuple[str, ...], seed: int, start: int,
                      recovery_end: int, recording: str = "") -> tuple[pd.DataFrame, dict]:
    """All conditions of one recording, stacked, with ``condition, is_control, error``.

    Returns the stacked table and the manifest entry ``condition -> {tracks, frames}``.
    """
    plans = plan_corruptions(table, conditions, seed, start, recovery_end, recording)
    anchors = anchor_identities(table)
    new_id = brand_new_id(table["pred_id"])
    parts = []
    for condition, plan in plans.items():
        part = apply_corruption(table, plan, anchors, lambda: new_id)
        part["condition"] = condition
        part["is_control"] = condition == "control"
        part["error"] = label_errors(part, anchors)
        parts.append(part)
    stacked = pd.concat(parts, ignore_index=True)
    stacked["condition"] = pd.Categorical(stacked["condition"], categories=list(plans))
    return stacked, {c: p.to_manifest() for c, p in plans.items()}
