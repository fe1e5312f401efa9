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

Only tracks with an anchor identity are corrupted: a track not observed in frame 0 has
unlabelled rows, so a corruption of it injects no error (on a real recording with a fifth of
its labels removed the nearest pair at ``start`` held such a track, and ``nearby_swap``
had no error in any draw). The nearest pair and the neighbours are taken among the tracks
with one; a random draw holding a track without one is drawn again among the tracks with
one, from a second generator ``PCG64([seed, 1])`` kept for these redraws, so no other
draw changes (a uniform draw among them in all). Fewer such tracks at ``start`` than a mode
needs is a :class:`WindowError`.

Labels (one row = one reference observation in one condition): ``error = 1`` where the
row's valid predicted id differs from its track's anchor identity (the predicted id the
track carries in frame 0), ``0`` where it equals it, null where the prediction is invalid or
the track has no anchor identity.

A recording that cannot take the window (too short for a mode, or too few tracks observed at
``start``, e.g. a frame gap there) is a :class:`WindowError` that says what would fit: SPEC's
window scaled to the recording (:func:`scaled_window`) or the nearest usable frames, in the
options of the calling command (:class:`WindowOptions`; ``run``'s unless reworded) and, for a
recording numbered from ``f0 > 0``, in the input's frame numbers too.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
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


def equal_ids(ids: np.ndarray, other) -> np.ndarray:
    """Element-wise ``ids == other`` (an array of the same length, or one id); a null on
    either side (``pd.NA``, None, NaN) is never equal, and never an ambiguous truth value."""
    ids = np.asarray(ids, dtype=object)
    other = np.broadcast_to(np.asarray(other, dtype=object), ids.shape)
    present = ~pd.isna(ids) & ~pd.isna(other)
    out = np.zeros(ids.shape, dtype=bool)
    out[present] = ids[present] == other[present]
    return out


def label_errors(table: pd.DataFrame, anchors: pd.Series) -> pd.Series:
    """Per-row ``error`` (nullable Int8): 1 wrong id, 0 right id, null invalid or unanchored."""
    anchor = anchors.reindex(table["track"].to_numpy())
    has_anchor = anchor.notna().to_numpy()
    pred = table["pred_id"].to_numpy(dtype=object)
    # A null pred_id is allowed on an invalid row (its label is null anyway).
    valid = table["pred_valid"].to_numpy(dtype=bool) & has_anchor & ~pd.isna(pred)
    wrong = ~equal_ids(pred, anchor.to_numpy(dtype=object))
    values = pd.array(np.where(wrong, 1, 0), dtype="Int8")
    values[~valid] = pd.NA
    return pd.Series(values, index=table.index, name="error")


#: SPEC's window (``start`` 300, ``recovery_end`` 700) as tenths of its 1,000-frame specimen:
#: the window a recording of T frame numbers gets when it is too short for SPEC's
#: (:func:`scaled_window`; the specimen part of ``evidence`` uses the same shares).
WINDOW_TENTHS = (3, 7)
#: The most tracks a mode needs observed at ``start`` (the pair swaps).
MOST_NEEDED = 2


@dataclass(frozen=True)
class WindowOptions:
    """How a command lets its user set the corruption window (every hint names only these):
    ``start`` / ``recovery_end`` always; ``conditions`` and the ``[run]`` table of a
    configuration file where it has them; as flags (``--recovery-end 8``) or, for
    ``trackverify.verify``, as keyword arguments (``recovery_end=8``)."""

    conditions: bool = True
    config: bool = True
    keywords: bool = False

    def setting(self, name: str, value) -> str:
        """One setting as the user gives it (``value``: a number or a list of names)."""
        if self.keywords:
            return f"{name}={value!r}"
        shown = ",".join(value) if isinstance(value, list) else value
        return f"--{name.replace('_', '-')} {shown}"

    def both(self, start, recovery_end) -> str:
        return (self.setting("start", start) + (" and " if self.keywords else " ")
                + self.setting("recovery_end", recovery_end))

    def config_note(self, keys: str) -> str:
        """`` (or set KEYS in the [run] table of --config ...)`` where there is a config file."""
        where = "config_file" if self.keywords else "--config"
        return (f" (or set {keys} in the [run] table of {where}; docs/reference/configuration.md)"
                if self.config else "")


#: ``run`` and ``verify`` (cli.run_settings); ``evidence`` has --start / --recovery-end only;
#: ``trackverify.verify`` takes keyword arguments.
RUN_OPTIONS = WindowOptions()
EVIDENCE_OPTIONS = WindowOptions(conditions=False, config=False)
PYTHON_OPTIONS = WindowOptions(keywords=True)


def frames_with(frames: np.ndarray, need: int) -> np.ndarray:
    """The frame numbers (ascending) that hold at least ``need`` observations, anchor excluded."""
    present, counts = np.unique(frames, return_counts=True)
    return present[(counts >= need) & (present >= 1)]


def usable_start(frames: np.ndarray, start: int, need: int = MOST_NEEDED) -> int | None:
    """``start``, or the first later frame holding ``need`` observations (None: there is none)."""
    usable = frames_with(frames, need)
    later = usable[usable >= start]
    return int(later[0]) if len(later) else None


def share_window(n_frames: int) -> tuple[int, int]:
    """floor(3 T / 10), floor(7 T / 10) of T frames (:data:`WINDOW_TENTHS`, integer arithmetic)."""
    return WINDOW_TENTHS[0] * n_frames // 10, WINDOW_TENTHS[1] * n_frames // 10


def scaled_window(frames: np.ndarray) -> tuple[int, int] | None:
    """The SPEC window scaled to a recording of T = ``max(frames) + 1`` frame numbers
    (:func:`share_window`), ``start`` moved on to the first frame at or after it that holds
    :data:`MOST_NEEDED` observations (:func:`usable_start`); None when no
    ``1 <= start < recovery_end < T`` results."""
    n_frames = int(frames.max()) + 1
    nominal, end = share_window(n_frames)
    start = usable_start(frames, max(1, nominal))
    return (start, end) if start is not None and start < end < n_frames else None


@dataclass(frozen=True)
class WindowProblem:
    """Why one recording cannot take the corruption window, in frames counted from its
    first (``first_frame`` = that frame's number in the input), and what would fit.

    ``found`` is None when the recording is too short for ``condition``: its frame-number
    span ``n_frames`` (T = last counted frame + 1, gaps included, as SPEC's ``[start, T)``) is
    at most ``start`` (or ``recovery_end``); ``present`` of those frame numbers hold an
    observation. Otherwise the recording has ``found`` < ``need`` observations at ``start``
    and ``nearest`` holds the closest frames before and after it with ``need`` (None where
    there is none).
    """

    recording: str
    condition: str
    start: int
    recovery_end: int
    n_frames: int
    conditions: tuple = ()
    window: tuple | None = None  # scaled_window of the recording
    found: int | None = None
    need: int = 0
    nearest: tuple = (None, None)
    first_frame: int = 0
    unlabelled: int = 0  # tracks observed at start without an anchor identity (not counted)
    present: int | None = None  # frame numbers holding an observation (of n_frames)

    def message(self, options: WindowOptions = RUN_OPTIONS) -> str:
        where = f"recording '{self.recording}'" if self.recording else "recording"
        if self.found is None:
            setting = "recovery_end" if self.condition in RECOVERY_MODES else "start"
            last = self.n_frames - 1
            counted = f"0-{last}" + (f", input frames {self.first_frame}-{self.first_frame + last}"
                                     if self.first_frame else "") + (
                f"; {self.present} of them present" if self.present is not None else "")
            return (f"{where} spans {self.n_frames} frame numbers ({counted}), too short for "
                    f"'{self.condition}' (needs more than {setting} = {getattr(self, setting)}); " + self._short_hint(options))
        at = f"frame {self.start}{self._input(self.start)}"
        if self.unlabelled:
            return (f"{where}: '{self.condition}' needs {self.need} track(s) observed at {at} "
                    f"with an identity in the anchor frame (frame 0), found {self.found} (and "
                    f"{self.unlabelled} without one: their rows are unlabelled, so a corruption "
                    f"of them injects no error); try another "
                    + ("start" if options.keywords else "--start") + options.config_note("start"))
        if self.found == 0:
            problem = (f"'{self.condition}' draws among the tracks observed at {at}, which "
                       "holds no observation (a gap in the recording's frame numbers)")
        else:
            problem = (f"'{self.condition}' needs {self.need} track(s) observed at {at}, found "
                       f"{self.found}")
        return f"{where}: {problem}; " + self._gap_hint(options)

    def _input(self, frame: int) -> str:
        """`` (input frame N)`` where the input's numbering differs from the counted one."""
        return f" (input frame {frame + self.first_frame})" if self.first_frame else ""

    def _short_hint(self, options: WindowOptions) -> str:
        """The flags that would work: the scaled window, or the conditions that fit the
        current settings (``control`` always does) where the command takes ``--conditions``."""
        fits = [c for c in self.conditions if c == "control" or (
            self.n_frames > self.start
            and (c not in RECOVERY_MODES or self.n_frames > self.recovery_end))]
        tries = []
        if self.window is not None:
            tries.append(options.both(*self.window))
        if options.conditions:
            tries.append(options.setting("conditions", fits or ["control"]))
        if not tries:
            return (f"no corruption window fits it (a frame after the anchor with "
                    f"{MOST_NEEDED} observed tracks, then a recovery end before its last frame)")
        keys = "start / recovery_end / conditions" if options.conditions else "start / recovery_end"
        return "try " + ", or ".join(tries) + options.config_note(keys)

    def _gap_hint(self, options: WindowOptions) -> str:
        """The nearest frames that hold enough tracks, and the start that would work."""
        named = [f for f in self.nearest if f is not None]
        if not named:
            return (f"no frame after the anchor has {self.need} observed track(s)"
                    + (f"; try {options.setting('conditions', ['control'])}"
                       if options.conditions else ""))
        before, after = self.nearest
        fit = after if after is not None and after < self.recovery_end else before
        fit = (options.setting("start", fit) if fit is not None else
               options.setting("start", after) + " and a later recovery end")
        frames = " and ".join(map(str, named)) + (
            f" (input {' and '.join(str(f + self.first_frame) for f in named)})"
            if self.first_frame else "")
        nearest = (f"the nearest frames with {self.need} or more observed tracks are {frames}"
                   if len(named) > 1 else
                   f"the nearest frame with {self.need} or more observed tracks is {frames}")
        return f"{nearest}; try {fit}" + options.config_note("start")


class WindowError(InputError):
    """A recording that cannot take the corruption window (:class:`WindowProblem`); the
    message names the options of the command given to :meth:`reworded` (``run``'s until then)."""

    def __init__(self, problem, *, options: WindowOptions = RUN_OPTIONS, source=None,
                 column=None, row=None):
        # ``problem`` is a WindowProblem, or (unpickled, e.g. from a worker) its message
        if isinstance(problem, WindowProblem):
            self.window, self.options = problem, options
            problem = problem.message(options)
        super().__init__(problem, source=source, column=column, row=row)

    def named(self, source: str) -> "WindowError":
        return WindowError(self.window, options=self.options, source=source, column=self.column,
                           row=self.row)

    def reworded(self, options: WindowOptions = RUN_OPTIONS,
                 first_frame: int | None = None) -> "WindowError":
        """The same problem in the options of the calling command, its frames also in the
        input's numbering (``first_frame``: the input's number of the recording's frame 0;
        None keeps the one it has)."""
        window = (self.window if first_frame is None else
                  dataclasses.replace(self.window, first_frame=first_frame))
        return WindowError(window, options=options, source=self.source, column=self.column,
                           row=self.row)


@contextlib.contextmanager
def window_errors(first_frame: int | None = None,
                  options: WindowOptions = RUN_OPTIONS) -> Iterator[None]:
    """A :class:`WindowError` raised inside is raised again worded for the caller
    (:meth:`WindowError.reworded`)."""
    try:
        yield
    except WindowError as exc:
        raise exc.reworded(options, first_frame) from None


def _check_window(table: pd.DataFrame, conditions: tuple[str, ...], start: int,
                  recovery_end: int, recording: str, labelled: int) -> None:
    """Every condition fits the recording: enough frames, enough tracks observed at ``start``
    and, of those, enough with an anchor identity (``labelled`` of them; raises
    :class:`WindowError` naming the first condition that does not fit)."""
    frames = table["frame"].to_numpy()
    n_frames = int(frames.max()) + 1
    found = int((frames == start).sum())
    for condition in conditions:
        if condition == "control":
            continue
        problem = WindowProblem(recording, condition, start, recovery_end, n_frames, conditions)
        if n_frames <= start or (condition in RECOVERY_MODES and n_frames <= recovery_end):
            present = len(np.unique(frames))  # not bincount: the span may be vast
            raise WindowError(dataclasses.replace(problem, window=scaled_window(frames),
                                                  present=present))
        need = 1 if condition in ("fragmentation", "dropout") else MOST_NEEDED
        if found < need:
            usable = frames_with(frames, need)
            before, after = usable[usable < start], usable[usable > start]
            nearest = (int(before[-1]) if len(before) else None,
                       int(after[0]) if len(after) else None)
            raise WindowError(dataclasses.replace(problem, found=found, need=need,
                                                  nearest=nearest))
        if labelled < need:
            raise WindowError(dataclasses.replace(problem, found=labelled, need=need,
                                                  unlabelled=found - labelled))


def plan_corruptions(table: pd.DataFrame, conditions: tuple[str, ...], seed: int, start: int,
                     recovery_end: int, recording: str = "") -> dict[str, Corruption]:
    """Choose the tracks of every condition (all random draws happen here, in table order).

    Only tracks with an anchor identity are corrupted (a track without one has unlabelled
    rows, so corrupting it would inject no error): the nearest pair and the neighbours are
    taken among them, and a random draw that holds a track without one is drawn again
    among those with one, from a second generator ``PCG64([seed, 1])`` (used for redraws
    only, in the same order), so every other draw stays the one of ``PCG64(seed)``; the
    result is a uniform draw among the tracks with one."""
    frames = table["frame"].to_numpy()
    n_frames = int(frames.max()) + 1
    at_start = table[frames == start]
    candidates = np.sort(at_start["track"].to_numpy())
    anchors = anchor_identities(table)
    labelled = candidates[pd.Index(candidates).isin(anchors.index[anchors.notna()])]
    _check_window(table, conditions, start, recovery_end, recording, len(labelled))
    at_start = at_start[at_start["track"].isin(labelled).to_numpy()]
    rng = np.random.Generator(np.random.PCG64(seed))
    spare = np.random.Generator(np.random.PCG64([seed, 1]))  # redraws only, in the same order
    plans: dict[str, Corruption] = {}
    for condition in conditions:
        if condition == "control":
            plans[condition] = Corruption(condition, (), None)
            continue
        end = recovery_end if condition in RECOVERY_MODES else n_frames
        if condition == "single_frame_swap":
            end = start + 1
        if condition == "long_gap_reassociation":
            end = n_frames
        plans[condition] = Corruption(condition, (), (start, end))
    for condition in DRAW_ORDER:
        if condition not in plans:
            continue
        size = 2 if condition in PAIR_MODES else DRAW_SIZE.get(condition, 1)
        picks = candidates[rng.choice(len(candidates), size=size, replace=False)]
        if len(labelled) < len(candidates) and not pd.Index(picks).isin(labelled).all():
            picks = labelled[spare.choice(len(labelled), size=size, replace=False)]
        plans[condition] = Corruption(condition, tuple(plain(p) for p in picks), plans[condition].frames)
    if "nearby_swap" in plans:
        plans["nearby_swap"] = Corruption("nearby_swap", _nearest_pair(at_start),
                                          plans["nearby_swap"].frames)
    if "smooth_drift" in plans:
        hops = min(DRIFT_HOPS, len(labelled) - 1, recovery_end - start)
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
    is_a, is_b = rows & equal_ids(pred, id_a), rows & equal_ids(pred, id_b)
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


def compose_corruptions(table: pd.DataFrame, conditions: tuple[str, ...], seed: int, start: int,
                        recovery_end: int, recording: str = "") -> tuple[pd.DataFrame, dict]:
    """One recording carrying every condition at once: a tracker output with identity errors
    of known place (the error-rate benchmark's specimen tracker).

    The plans are :func:`plan_corruptions`'s (the same draws as :func:`corrupt_recording`);
    they are applied one after the other, in ``conditions`` order, each to the previous one's
    output, so a swap transposes the anchor identities the rows carry at that point (a row an
    earlier condition moved to another id is left as it is). ``error`` is
    :func:`label_errors` against the clean table's anchor identities: 1 where the valid
    predicted id differs from the track's anchor identity, 0 where it equals it, null where the
    prediction is invalid or the track has none. ``table`` is not modified. Returns the table
    and the manifest entry ``condition -> {tracks, frames}``.
    """
    plans = plan_corruptions(table, conditions, seed, start, recovery_end, recording)
    anchors = anchor_identities(table)
    new_id = brand_new_id(table["pred_id"])
    out = table
    for plan in plans.values():
        out = apply_corruption(out, plan, anchors, lambda: new_id)
    out = out.copy()
    out["error"] = label_errors(out, anchors)
    return out, {c: p.to_manifest() for c, p in plans.items()}
