"""A track graph over the project's tables: nodes = observations, edges = links.

Convention (shared with the format readers of :mod:`trackverify.io.formats`): a table of one
recording has one row per observation with ``frame``, an identity column (``track`` in a
reference table, ``pred_id`` in a prediction table), coordinates ``x_um, y_um[, z_um]`` and,
for lineages, a per-track ``parent_track`` column: the identity of the track this track
branched from (in the same identity column), null when it has none. Every branch is its own
track; the value is constant over a track's rows.

Edges:

- within a track, each observation links to the track's next observation (by frame; a gap
  of several frames is one edge, a *skip* edge);
- across a division, the last observation of the parent track links to the first
  observation of each child track (its frame must be later).

So every node has at most one incoming edge (a forest, no merges); a node with two or more
outgoing edges is a *division*. The graph holds index arrays only; the caller's table is
read (``to_numpy``) and never modified or kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.errors import InputError

PARENT = "parent_track"


@dataclass(frozen=True)
class TrackGraph:
    """Nodes ``0..n-1`` (the rows given, in order) and directed edges ``src -> dst``.

    ``track`` gives each node's track code (``0..n_tracks-1``, in sorted identity order),
    ``track_parent`` each track's parent track code (-1 for none), ``track_first`` /
    ``track_last`` each track's first and last node, ``xyz`` the coordinates (or None).
    """

    frame: np.ndarray
    track: np.ndarray
    xyz: np.ndarray | None
    src: np.ndarray
    dst: np.ndarray
    track_parent: np.ndarray
    track_first: np.ndarray
    track_last: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.frame)

    @property
    def n_edges(self) -> int:
        return len(self.src)

    @property
    def out_degree(self) -> np.ndarray:
        return np.bincount(self.src, minlength=self.n_nodes)

    @property
    def predecessor(self) -> np.ndarray:
        """Each node's incoming neighbour (-1 for none)."""
        pred = np.full(self.n_nodes, -1, dtype=np.int64)
        pred[self.dst] = self.src
        return pred

    def divisions(self) -> np.ndarray:
        """Nodes with two or more outgoing edges, ascending."""
        return np.flatnonzero(self.out_degree >= 2)

    def successors(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR adjacency ``(indptr, targets)``: node ``i``'s successors are
        ``targets[indptr[i]:indptr[i + 1]]`` (in ascending order)."""
        order = np.lexsort((self.dst, self.src))
        indptr = np.r_[0, np.cumsum(self.out_degree)]
        return indptr, self.dst[order]

    def edge_keys(self) -> np.ndarray:
        """``src * n + dst`` of every edge, sorted (for membership tests)."""
        return np.sort(self.src * max(self.n_nodes, 1) + self.dst)


def _null(values: np.ndarray) -> np.ndarray:
    return pd.isna(pd.Series(values, dtype=object)).to_numpy()


def build_track_graph(frame, identity, parent=None, xyz=None, *, source: str = "<table>",
                      column: str = "track", rows=None) -> TrackGraph:
    """Build the :class:`TrackGraph` of one recording (see the module doc for the edges).

    ``frame``, ``identity`` (and ``parent``, ``xyz``) are per-row arrays; ``rows`` gives each
    row's 1-based row number in ``source`` for error messages (default ``1..n``). Raises
    :class:`InputError` when an identity is on two rows of one frame, a track's
    ``parent_track`` is not constant, names an unknown track or itself, or does not end
    before the child track starts.
    """
    frame = np.asarray(frame, dtype=np.int64)
    n = len(frame)
    rows = np.arange(1, n + 1) if rows is None else np.asarray(rows)
    code, uniques = pd.factorize(np.asarray(identity, dtype=object), sort=True)
    code = code.astype(np.int64)
    n_tracks = len(uniques)
    order = np.lexsort((frame, code))
    c_sorted, f_sorted = code[order], frame[order]
    same = c_sorted[1:] == c_sorted[:-1]
    dup = same & (f_sorted[1:] == f_sorted[:-1])
    if dup.any():
        at = order[1:][dup][0]
        raise InputError(f"{column} {uniques[code[at]]!r} is on two rows of frame "
                         f"{frame[at]}", source=source, column=column, row=int(rows[at]))
    src, dst = order[:-1][same], order[1:][same]
    starts = np.r_[0, np.flatnonzero(~same) + 1] if n else np.zeros(0, np.int64)
    ends = np.r_[starts[1:] - 1, n - 1] if n else np.zeros(0, np.int64)
    track_first = order[starts]
    track_last = order[ends]
    track_parent = np.full(n_tracks, -1, dtype=np.int64)
    if parent is not None and n:
        parent = np.asarray(parent, dtype=object)
        null = _null(parent)
        parent_code = np.full(n, -1, dtype=np.int64)
        if (~null).any():
            found = pd.Index(uniques).get_indexer(pd.Index(parent[~null]))
            if (found < 0).any():
                at = np.flatnonzero(~null)[np.flatnonzero(found < 0)[0]]
                raise InputError(f"{PARENT} {parent[at]!r} is not a {column} of this "
                                 "recording", source=source, column=PARENT, row=int(rows[at]))
            parent_code[~null] = found
        p_sorted = parent_code[order]
        varies = same & (p_sorted[1:] != p_sorted[:-1])
        if varies.any():
            at = order[1:][varies][0]
            raise InputError(f"{PARENT} changes within {column} {uniques[code[at]]!r} (it is "
                             "one value per track)", source=source, column=PARENT,
                             row=int(rows[at]))
        track_parent = p_sorted[starts]
        child = np.flatnonzero(track_parent >= 0)
        p = track_parent[child]
        bad = (p == child) | (frame[track_last[p]] >= frame[track_first[child]])
        if bad.any():
            at = track_first[child[bad][0]]
            raise InputError(f"{column} {uniques[code[at]]!r} starts in frame {frame[at]}, "
                             f"not after its parent {uniques[p[bad][0]]!r} ends",
                             source=source, column=PARENT, row=int(rows[at]))
        src = np.r_[src, track_last[p]]
        dst = np.r_[dst, track_first[child]]
    if xyz is not None:
        xyz = points(xyz, n)
    return TrackGraph(frame=frame, track=code, xyz=xyz, src=src.astype(np.int64),
                      dst=dst.astype(np.int64), track_parent=track_parent,
                      track_first=track_first, track_last=track_last)


def graph_from_table(df: pd.DataFrame, identity: str, coords: list[str] | None = None, *,
                     source: str = "<table>") -> TrackGraph:
    """:func:`build_track_graph` of one recording's (validated) table; ``parent_track`` is
    used when the table has it. Row numbers in errors are the table's index + 1."""
    parent = df[PARENT].to_numpy() if PARENT in df.columns else None
    xyz = df[coords].to_numpy(np.float64) if coords else None
    return build_track_graph(df["frame"].to_numpy(), df[identity].to_numpy(), parent, xyz,
                             source=source, column=identity,
                             rows=np.asarray(df.index, dtype=np.int64) + 1)


def points(xyz, n: int) -> np.ndarray:
    """Coordinates as an ``(n, dim)`` float64 array (1-D input of length ``n`` = one axis).

    Any other shape (flattened ``x0, y0, x1, y1, ...``, a row count other than ``n``, 3-D)
    raises :class:`InputError` naming both shapes."""
    xyz = np.asarray(xyz, dtype=np.float64)
    if xyz.ndim == 1 and xyz.shape[0] == n:
        return xyz.reshape(n, 1)
    if xyz.ndim != 2 or xyz.shape[0] != n:
        raise InputError(f"coordinates of shape {xyz.shape} for {n} points; expected ({n}, dim) "
                         f"or ({n},)")
    return xyz
