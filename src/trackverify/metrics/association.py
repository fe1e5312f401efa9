"""Oracle association and its identity diagnostics (SPEC section 3, protocol ``tracking_gt``).

These are diagnostics defined by the benchmark, not HOTA / IDF1 (see :mod:`trackverify.metrics.mot`
for the canonical metrics, reported beside them).

Input: one row per reference observation of one recording, with the prediction on that
observation's detection: columns ``frame, track, pred_id, pred_valid``. A missing or
invalid prediction is ``pred_valid = False``. Extra predicted observations (valid
predictions on detections without a reference observation, and second predictions on an
already-predicted detection) are counted by :func:`link_predictions` and passed in.

Definitions (per recording; pooled = sums of counts, rates recomputed from the sums):

- alignment: ``O[p, r]`` = number of frames where predicted id ``p`` is valid on the
  detection of reference track ``r``; one maximum-weight one-to-one assignment over the
  whole recording (Hungarian). Ties are broken lexicographically: reference tracks in
  ascending id order each take the smallest predicted id that keeps the total maximal
  (:func:`align_identities`). Pairs with zero overlap are not aligned.
- ``correct_observation_rate`` = (observations whose valid predicted id is aligned to their
  own track) / (all reference observations).
- ``identity_switches`` = over each track's frames in order, keeping only frames with a
  valid prediction: number of times the predicted id differs from the previous kept one
  (a change across a gap counts).
- ``fragmentations`` = sum over tracks of ``max(0, runs - 1)``, where a run is a maximal
  stretch of the track's consecutive observed frames that all carry a valid prediction with
  the same predicted id. "Consecutive" is taken along the track's own observed frames: a
  frame where the reference track itself is not observed does not break a run (the tracker
  had nothing to predict there), while a frame with an invalid or missing prediction does.
- ``extra_predicted_observations`` = as counted by :func:`link_predictions`; never in the
  denominator.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.tables import column_codes, joint_codes, stable_order, unique_inverse

DIAGNOSTICS = ("reference_observations", "correct_observation_rate", "identity_switches",
               "fragmentations", "extra_predicted_observations")


def align_identities(track_codes: np.ndarray, pred_codes: np.ndarray, n_tracks: int,
                     n_preds: int) -> np.ndarray:
    """Recording-wide maximum-overlap alignment with the SPEC's tie rule.

    ``track_codes`` and ``pred_codes`` are the rank codes (ascending ids) of the valid rows.
    Returns ``aligned_track[p]`` = the track code aligned to predicted code ``p``, or -1.

    One Hungarian solve finds the maximum total overlap ``W``. Ties are then broken
    lexicographically: tracks are taken in ascending id order, and each takes the smallest
    predicted id (with positive overlap) that still allows a total of ``W`` given the
    choices already made; a track with no such id stays unaligned.

    Without further solves: on the square (zero-padded) overlap matrix ``O``, optimal dual
    prices ``u, v`` (``u[p] + v[r] >= O[p, r]``, equality on the solved matching) are read
    off the solution by shortest paths (Bellman-Ford, exact integers). They stay optimal
    while pairs are forced or forbidden (weights only decrease and the total stays ``W``).
    A pair ``(p, r)`` lies on some matching of total ``W`` iff it is tight
    (``u[p] + v[r] = O[p, r]``) and the current matching can be rotated onto it: an
    alternating path of tight pairs from ``r``'s partner to ``p``'s partner. The matching is
    rotated along that path, so recordings without ties cost one solve and one pass.
    """
    aligned = np.full(n_preds, -1, dtype=np.int64)
    if n_preds == 0 or n_tracks == 0 or len(track_codes) == 0:
        return aligned
    n = max(n_preds, n_tracks)
    overlap = np.zeros((n, n), dtype=np.int64)  # rows: predicted ids (then padding)
    overlap[:n_preds, :n_tracks] = np.bincount(
        pred_codes * n_tracks + track_codes, minlength=n_preds * n_tracks
    ).reshape(n_preds, n_tracks)
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(overlap.astype(np.float64), maximize=True)
    col_of = np.empty(n, dtype=np.int64)
    col_of[rows] = cols
    row_of = np.empty(n, dtype=np.int64)
    row_of[cols] = rows
    u, v = _dual_prices(overlap, col_of, row_of)
    # Without a tie (no track has a tight positive-overlap id below its own partner) the
    # pass below rotates nothing: the solved matching is the answer as it stands.
    mates = row_of[:n_tracks]
    own = np.where((mates < n_preds) & (overlap[mates, np.arange(n_tracks)] > 0), mates, n_preds)
    tied = (overlap[:, :n_tracks] > 0) & (u[:, None] + v[None, :n_tracks] == overlap[:, :n_tracks]) \
        & (np.arange(n)[:, None] < own[None, :])
    allowed = np.ones((n, n), dtype=bool)  # cleared by forcing and forbidding
    for r in range(n_tracks) if tied.any() else ():
        mate = row_of[r]
        current = mate if mate < n_preds and overlap[mate, r] > 0 else n_preds
        for p in np.flatnonzero((overlap[:current, r] > 0) & allowed[:current, r]
                                & (u[:current] + v[r] == overlap[:current, r])):
            path = _tight_path(overlap, allowed, u, v, row_of, col_of, start=mate,
                               target=col_of[p], skip_col=r)
            if path is not None:  # rotate: mate -> path[0], ..., the last row -> target
                movers = np.r_[mate, row_of[path[:-1]]]
                col_of[movers] = path
                col_of[p] = r
                row_of[col_of] = np.arange(n)
                current = p
                break
        if current < n_preds:  # r and current pair with each other only
            allowed[current, :] = False
            allowed[:, r] = False
            allowed[current, r] = True
        else:  # r stays unaligned: no positive-overlap id may take it
            allowed[overlap[:, r] > 0, r] = False
    partner = row_of[:n_tracks]
    real = (partner < n_preds)
    real[real] = overlap[partner[real], np.flatnonzero(real)] > 0
    aligned[partner[real]] = np.flatnonzero(real)
    return aligned


def _dual_prices(weight: np.ndarray, col_of: np.ndarray, row_of: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Optimal duals of a maximum-weight perfect matching (integer weights, exact).

    ``v[k] = -d[k]``, with ``d`` the shortest distances (from a source joined to every
    column at cost 0) over moves "the row on column ``j`` switches to column ``k``" of cost
    ``weight[row, j] - weight[row, k]``; ``u[i] = weight[i, col_of[i]] - v[col_of[i]]``.
    Then ``u[i] + v[k] >= weight[i, k]`` with equality on the matching. The matching being
    optimal, there is no negative cycle and Bellman-Ford ends within ``n`` rounds.
    """
    n = len(col_of)
    on_row = weight[row_of]  # on_row[j, k] = weight of column j's row on column k
    move = on_row[np.arange(n), np.arange(n)][:, None] - on_row
    d = np.zeros(n, dtype=np.int64)
    for _ in range(n + 1):
        shorter = np.minimum(d, (d[:, None] + move).min(axis=0))
        if np.array_equal(shorter, d):
            break
        d = shorter
    else:  # pragma: no cover - scipy's solution is optimal
        raise RuntimeError("the identity alignment is not optimal")
    v = -d
    u = weight[np.arange(n), col_of] - v[col_of]
    return u, v


def _tight_path(weight, allowed, u, v, row_of, col_of, start: int, target: int,
               skip_col: int) -> np.ndarray | None:
    """Columns ``j1, ..., target`` of an alternating path from row ``start`` (row -> column
    over a tight allowed pair, column -> its matched row), avoiding ``skip_col``; ``None``
    when there is none (breadth first)."""
    n = len(row_of)
    parent = np.full(n, -1, dtype=np.int64)  # column -> the row it was reached from
    seen = np.zeros(n, dtype=bool)
    seen[skip_col] = True
    frontier = np.array([start], dtype=np.int64)
    while len(frontier) and not seen[target]:
        reach = allowed[frontier] & (u[frontier, None] + v[None, :] == weight[frontier]) & ~seen
        hit_rows, hit_cols = np.nonzero(reach)
        cols, first = np.unique(hit_cols, return_index=True)
        parent[cols] = frontier[hit_rows[first]]
        seen[cols] = True
        frontier = row_of[cols]
    if parent[target] < 0:
        return None
    path = [target]
    while parent[path[-1]] != start:
        path.append(col_of[parent[path[-1]]])
    return np.array(path[::-1], dtype=np.int64)


def association_diagnostics(table: pd.DataFrame, extra_predicted_observations: int = 0) -> dict:
    """The SPEC section 3 diagnostics of one recording (see the module docstring)."""
    frame, track_codes, tracks, pred_codes, _ = _codes(table)
    return identity_diagnostics(frame, track_codes, len(tracks), pred_codes,
                                extra_predicted_observations)


def identity_diagnostics(frame: np.ndarray, track_codes: np.ndarray, n_tracks: int,
                         pred_codes: np.ndarray, extra_predicted_observations: int = 0) -> dict:
    """:func:`association_diagnostics` on arrays, one entry per reference observation.

    ``track_codes`` (``0..n_tracks-1``) and ``pred_codes`` are rank codes (ascending ids) of
    the track and of the observation's valid predicted id, ``-1`` for none.
    """
    if len(track_codes) == 0:
        return _finish(0, 0, 0, 0, extra_predicted_observations)
    return _diagnostics(_identity_arrays(frame, track_codes, n_tracks, pred_codes), n_tracks,
                        extra_predicted_observations)


def _diagnostics(a: dict, n_tracks: int, extra: int) -> dict:
    runs_per_track = np.bincount(a["track"][a["run_start"]], minlength=n_tracks)
    return _finish(len(a["track"]), int(a["correct"].sum()), len(a["switch_at"]),
                   int(np.clip(runs_per_track - 1, 0, None).sum()), extra)


def _identity_arrays(frame: np.ndarray, track_codes: np.ndarray, n_tracks: int,
                     pred_codes: np.ndarray, order: np.ndarray | None = None) -> dict:
    """The rows in (track, frame) order with what every identity count is made of.

    ``track``, ``pred``, ``valid``, ``correct`` (valid id aligned to the row's own track) in
    that order, and ``order`` (that order itself: ``frame.take(order)`` are the rows' frames,
    gathered by whoever needs them); ``per_track``: rows per track; ``switch_at`` /
    ``switch_from``: positions of the later / earlier row of each identity switch;
    ``run_start``: rows that start a run. ``order``: that row order when the caller has it
    (``stable_order(track_codes, n_tracks, frame)``).
    """
    track_codes = np.asarray(track_codes, dtype=np.int64)
    pred_codes = np.asarray(pred_codes, dtype=np.int64)
    if order is None:
        order = stable_order(track_codes, n_tracks, frame)
    # In (track, frame) order the track codes ascend: each code repeated as often as it occurs.
    per_track = np.bincount(track_codes, minlength=n_tracks)
    t_sorted = np.repeat(np.arange(n_tracks), per_track)
    p_sorted = pred_codes.take(order)
    v_sorted = p_sorted >= 0
    # The alignment counts overlaps, so the rows' order does not matter to it.
    at_valid = np.flatnonzero(v_sorted)
    vt, vp = t_sorted.take(at_valid), p_sorted.take(at_valid)
    used, pred_valid_codes = unique_inverse(vp, int(pred_codes.max()) + 1)
    aligned = align_identities(vt, pred_valid_codes, n_tracks, len(used))
    correct = np.zeros(len(track_codes), dtype=bool)
    correct[at_valid] = aligned[pred_valid_codes] == vt
    del pred_valid_codes
    # Identity switches: each valid row against the previous valid row of the same track.
    switch = (vt[1:] == vt[:-1]) & (vp[1:] != vp[:-1])
    switch_at, switch_from = at_valid[1:][switch], at_valid[:-1][switch]
    del vt, vp, at_valid, switch  # before the runs are found
    same_track = np.r_[False, t_sorted[1:] == t_sorted[:-1]]
    # Runs: a valid row starts a run unless the previous row of its track is valid, same id.
    continues = same_track & np.r_[False, v_sorted[:-1]] & np.r_[False, p_sorted[1:] == p_sorted[:-1]]
    return {"track": t_sorted, "pred": p_sorted, "valid": v_sorted, "order": order,
            "correct": correct, "per_track": per_track,
            "switch_at": switch_at, "switch_from": switch_from,
            "run_start": v_sorted & ~continues}


TRACK_COLUMNS = ("track", "observations", "correct", "identity_switches", "fragmentations",
                 "first_wrong_frame")
EVENT_COLUMNS = ("frame", "track", "from_id", "to_id")


def track_breakdown(table: pd.DataFrame) -> pd.DataFrame:
    """Per reference track of one recording: which tracks are wrong, and from when.

    ``table`` has ``frame, track, pred_id, pred_valid`` (one row per reference observation,
    as :func:`association_diagnostics` takes). Columns :data:`TRACK_COLUMNS`:
    ``observations``; ``correct`` (observations whose valid predicted id is aligned to this
    track); ``identity_switches`` and ``fragmentations`` with the module's definitions (they
    sum to the recording's diagnostics); ``first_wrong_frame``, the first frame whose
    observation is not correct (no valid prediction, or an id aligned elsewhere; null when
    every observation is correct). Tracks in ascending id order.
    """
    return identity_report(*_codes(table)).tracks


def switch_events(table: pd.DataFrame) -> pd.DataFrame:
    """Every identity switch of one recording: ``frame, track, from_id, to_id``.

    A switch is counted where :func:`association_diagnostics` counts one: between a track's
    consecutive valid rows (in frame order) whose predicted ids differ; ``frame`` is the later
    row's. Rows ordered by track id, then frame.
    """
    return identity_report(*_codes(table)).events


class IdentityReport:
    """One recording's identity results (:func:`identity_report`): ``diagnostics`` and three
    tables, each built when first read (from the arrays the diagnostics are counted from;
    a caller that reads none pays for none): ``tracks`` (:func:`track_breakdown`),
    ``events`` (:func:`switch_events`) and ``observations`` (:data:`OBSERVATION_COLUMNS`, one
    row per reference observation)."""

    def __init__(self, diagnostics: dict, arrays: dict | None = None, tracks=(), preds=(),
                 frame=()):
        self.diagnostics = diagnostics
        self._arrays = arrays  # _identity_arrays of the recording; None: no observation
        self._tracks, self._preds, self._frame = np.asarray(tracks), preds, frame

    @functools.cached_property
    def _frames(self) -> np.ndarray:
        """The rows' frames in the arrays' (track, frame) order."""
        return np.asarray(self._frame).take(self._arrays["order"])

    @functools.cached_property
    def tracks(self) -> pd.DataFrame:
        a = self._arrays
        if a is None:
            return _empty(TRACK_COLUMNS)
        n_tracks = len(self._tracks)
        # The first wrong row of each track is its earliest (rows by track, then frame).
        wrong = np.flatnonzero(~a["correct"])
        wrong_track = a["track"][wrong]
        earliest = wrong[np.r_[True, wrong_track[1:] != wrong_track[:-1]]] if len(wrong) else wrong
        never = np.iinfo(np.int64).max
        first = np.full(n_tracks, never, dtype=np.int64)
        first[a["track"][earliest]] = self._frames[earliest]
        return pd.DataFrame({
            "track": self._tracks,
            "observations": a["per_track"],
            "correct": np.bincount(a["track"][a["correct"]], minlength=n_tracks),
            "identity_switches": np.bincount(a["track"][a["switch_at"]], minlength=n_tracks),
            "fragmentations": np.clip(np.bincount(a["track"][a["run_start"]],
                                                  minlength=n_tracks) - 1, 0, None),
            "first_wrong_frame": pd.array([None if v == never else int(v) for v in first],
                                          dtype="Int64"),
        })

    @functools.cached_property
    def events(self) -> pd.DataFrame:
        a = self._arrays
        if a is None:
            return _empty(EVENT_COLUMNS)
        preds = np.asarray(self._preds, dtype=object)
        track_ids = np.asarray(self._tracks, dtype=object)
        return pd.DataFrame({"frame": self._frames[a["switch_at"]],
                             "track": track_ids[a["track"][a["switch_at"]]],
                             "from_id": preds[a["pred"][a["switch_from"]]],
                             "to_id": preds[a["pred"][a["switch_at"]]]})

    @functools.cached_property
    def observations(self) -> pd.DataFrame:
        a = self._arrays
        if a is None:
            return _empty(OBSERVATION_COLUMNS)
        # the table takes its four arrays as they are (copy=False: not copied into blocks)
        return pd.DataFrame({"frame": self._frames,
                             "track": np.repeat(self._tracks, a["per_track"]),
                             "predicted": a["valid"], "correct": a["correct"]}, copy=False)


#: Per reference observation, in (track, frame) order: ``predicted`` (a valid predicted id is
#: on it) and ``correct`` (that id is aligned to the observation's own track).
OBSERVATION_COLUMNS = ("frame", "track", "predicted", "correct")


def identity_report(frame, track_codes, tracks, pred_codes, preds,
                    extra_predicted_observations: int = 0, order: np.ndarray | None = None
                    ) -> IdentityReport:
    """The diagnostics, :func:`track_breakdown`, :func:`switch_events` and each observation's
    state (:data:`OBSERVATION_COLUMNS`) of one recording, from one alignment, on rank codes
    (``tracks`` / ``preds``: the ids of the codes). ``order``: the rows by (track, frame),
    when known (as :func:`trackverify.metrics.mot.sequence_counts` gives it in ``gt_order``).
    The diagnostics are counted here; the tables are built when first read
    (:class:`IdentityReport`, which keeps the arrays given: not to be changed meanwhile)."""
    if len(track_codes) == 0:
        return IdentityReport(_finish(0, 0, 0, 0, extra_predicted_observations))
    a = _identity_arrays(frame, track_codes, len(tracks), pred_codes, order)
    return IdentityReport(_diagnostics(a, len(tracks), extra_predicted_observations), a,
                          tracks, preds, frame)


def _empty(columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _codes(table: pd.DataFrame):
    """``frame``, track codes and ids, valid predicted-id codes (-1 none) and ids of a table."""
    track_codes, tracks = pd.factorize(table["track"], sort=True)
    valid = table["pred_valid"].to_numpy(dtype=bool) & table["pred_id"].notna().to_numpy()
    pred_codes = np.full(len(table), -1, dtype=np.int64)
    pred_codes[valid], preds = pd.factorize(table["pred_id"][valid], sort=True)
    return table["frame"].to_numpy(), track_codes, tracks, pred_codes, preds


def _finish(n: int, correct: int, switches: int, fragmentations: int, extra: int) -> dict:
    return {
        "reference_observations": int(n),
        "correct_observations": int(correct),
        "correct_observation_rate": (correct / n) if n else None,
        "identity_switches": int(switches),
        "fragmentations": int(fragmentations),
        "extra_predicted_observations": int(extra),
    }


def pool_diagnostics(per_recording: list[dict]) -> dict:
    """Pooled diagnostics: sums of the counts, the rate recomputed from the sums."""
    n = sum(d["reference_observations"] for d in per_recording)
    return _finish(n, sum(d["correct_observations"] for d in per_recording),
                   sum(d["identity_switches"] for d in per_recording),
                   sum(d["fragmentations"] for d in per_recording),
                   sum(d["extra_predicted_observations"] for d in per_recording))


def link_predictions(reference: pd.DataFrame, predictions: pd.DataFrame,
                     source: str = "<predictions>") -> tuple[pd.DataFrame, int]:
    """Put each reference observation beside the prediction on its detection.

    Both tables must carry ``detection`` (the fixed source detections). Among several
    valid predictions on one detection, the one with the smallest ``pred_id`` is kept and
    the others count as extra; valid predictions on detections without a reference
    observation count as extra too. Invalid predictions count nowhere. Returns the
    reference table with ``pred_id, pred_valid`` added, and the number of extras.
    """
    if "detection" not in reference.columns or "detection" not in predictions.columns:
        raise InputError("linking predictions to reference observations needs a 'detection' "
                         "column in both tables", source=source, column="detection")
    key = ["recording", "frame", "detection"]
    valid = predictions[predictions["pred_valid"].to_numpy(dtype=bool)]
    ids = valid["pred_id"]
    rank, uniques = pd.factorize(ids, sort=True)
    gi, pj = same_key([reference[c].to_numpy() for c in key],
                      [valid[c].to_numpy() for c in key])
    linked, extra = link_smallest(len(reference), gi, rank[pj], len(valid))
    merged = reference.drop(columns=[c for c in ("pred_id", "pred_valid") if c in reference.columns])
    merged = merged.reset_index(drop=True)
    has = linked >= 0
    column = pd.Series(uniques.take(np.maximum(linked, 0)), dtype=ids.dtype if
                       pd.api.types.is_integer_dtype(ids.dtype) else object)
    if pd.api.types.is_integer_dtype(column.dtype):
        column = column.astype("Int64")
    column[~has] = None
    merged["pred_id"] = column
    merged["pred_valid"] = has
    return merged, extra


def same_key(reference_keys: list[np.ndarray], prediction_keys: list[np.ndarray]
             ) -> tuple[np.ndarray, np.ndarray]:
    """Every (reference row, prediction row) with equal keys (e.g. frame and detection),
    reference keys being unique: ``(gi, pj)``, ``pj`` ascending."""
    n_ref = len(reference_keys[0])
    code, span = joint_codes([column_codes(np.concatenate([np.asarray(r), np.asarray(p)]))
                              for r, p in zip(reference_keys, prediction_keys)])
    ref_of = np.full(span, -1, dtype=np.int64)
    ref_of[code[:n_ref]] = np.arange(n_ref)
    found = ref_of[code[n_ref:]]
    pj = np.flatnonzero(found >= 0)
    return found[pj], pj


def link_smallest(n_reference: int, gi: np.ndarray, rank: np.ndarray, n_valid: int
                  ) -> tuple[np.ndarray, int]:
    """The oracle link by detection: each reference observation takes the smallest rank
    among the valid predictions on it (``-1``: none); extras = the other valid predictions."""
    linked = np.full(n_reference, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(linked, gi, np.asarray(rank, dtype=np.int64))
    linked[linked == np.iinfo(np.int64).max] = -1
    return linked, int(n_valid - np.count_nonzero(linked >= 0))
