"""Track pooling: a row's score lifted to the level of the run of its own track (issue 14).

Per-frame evidence is noisy while identity errors persist: inside a long swap segment a single
frame can happen to agree with the wrong claim. Pooling groups the scores of *the claim under
test* by that claim (the predicted track) and, for each scored row ``i`` of track ``g`` at
position ``r_i`` of ``g``'s rows ordered by frame, takes

    m_i = median{ s_j : j in g, |r_j - r_i| <= h, s_j finite }     (the row's own included)
    pooled_i = max(s_i, m_i)                                        (NaN where s_i is NaN)

with the window clipped at the track's ends (fewer than ``2 h + 1`` rows there; the median of
an even count is the mean of its two middle values). ``h = 0`` is the identity.

Why ``max``: a single-frame swap keeps its raw score (it stays visible), while a low-scored
row in a run of high scores is lifted to the run's level. A median over ``2 h + 1`` rows keeps
a step edge exactly when each side of it is a run of at least ``h + 1`` rows, so correct rows
next to an error run are not raised, and an isolated high score on correct rows does not
spread to its neighbours. An abstained row (NaN) stays abstained and adds nothing to its
neighbours' medians, but keeps its position in the track.

Nothing here reads coordinates or a warp: it only regroups scores already computed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def track_positions(track: np.ndarray, order: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray,
                                                                         np.ndarray]:
    """The rows in track order and each one's place in its track.

    ``track`` holds per row an integer track code (-1 = in no track: left out); ``order`` the
    sort keys within a track, most significant first (e.g. ``[frame, detection]``), sorted
    stably. Returns ``rows`` (indices of the tracked rows, grouped by track, each track in
    order), ``rank`` (the position of each of them in its track, from 0) and ``length`` (its
    track's number of rows).
    """
    track = np.asarray(track)
    rows = np.flatnonzero(track >= 0)
    keys = [np.asarray(k)[rows] for k in reversed(order)] + [track[rows]]
    rows = rows[np.lexsort(keys)]  # lexsort is stable: exact ties keep row order
    code = track[rows]
    starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
    counts = np.diff(np.r_[starts, len(rows)])
    length = np.repeat(counts, counts)
    rank = np.arange(len(rows)) - np.repeat(starts, counts)
    return rows, rank, length


def pool_along_tracks(scores: np.ndarray, track: np.ndarray, order: list[np.ndarray],
                      window: int) -> np.ndarray:
    """``max(s_i, median of the finite scores within +-window positions of i in its track)``
    (module docstring); rows in no track (``track < 0``) and NaN rows are returned as they
    are. Vectorised: one (rows x (2 window + 1)) matrix of neighbour scores, sorted per row."""
    scores = np.asarray(scores, dtype=np.float64)
    out = scores.copy()
    if window <= 0:
        return out
    rows, rank, length = track_positions(track, order)
    # a window reaching beyond the longest track holds that whole track: the same medians
    # (so ``track_window = 10**12`` costs what the longest track costs, never 10**12 columns)
    window = min(int(window), int(length.max(initial=1)) - 1)
    if window <= 0:
        return out
    offsets = np.arange(-window, window + 1)
    place = rank[:, None] + offsets[None, :]
    inside = (place >= 0) & (place < length[:, None])
    neighbour = np.arange(len(rows))[:, None] + offsets[None, :]
    values = np.where(inside, scores[rows][np.clip(neighbour, 0, max(len(rows) - 1, 0))], np.nan)
    values.sort(axis=1)  # NaN last
    count = np.isfinite(values).sum(axis=1)
    picked = np.arange(len(rows))
    # count = 0 (only for a NaN row) reads NaN at both places (columns -1 and 0)
    median = (values[picked, (count - 1) // 2] + values[picked, count // 2]) / 2
    out[rows] = np.maximum(scores[rows], median)
    return out


def claimed_tracks(table: pd.DataFrame) -> tuple[np.ndarray, list[np.ndarray]]:
    """The predicted tracks of a verifier's table, for :func:`pool_along_tracks`: per row the
    code of its ``(recording, pred_id)`` (-1 where ``pred_valid`` is false: no claim), and the
    order within a track: ``frame``, then ``detection`` when present (rows tied on both make
    the same claim on the same detection), else the coordinates (rows tied on all of them
    make the same claim on the same point). Never the row order. Each key is factorised on
    its own (a ``(recording, pred_id)`` code = recording code x number of ids + id code)."""
    valid = table["pred_valid"].to_numpy(dtype=bool)
    track = np.full(len(table), -1, dtype=np.int64)
    if valid.any():
        ids, names = pd.factorize(table["pred_id"][valid])  # a Series: categories stay fast
        recordings = (pd.factorize(table["recording"][valid])[0]
                      if "recording" in table.columns else 0)
        track[valid] = np.where((ids >= 0) & (recordings >= 0),
                                recordings * len(names) + ids, -1)
    within = ("frame", "detection") if "detection" in table.columns else (
        "frame", "x_um", "y_um", "z_um")
    return track, [table[c].to_numpy() for c in within if c in table.columns]
