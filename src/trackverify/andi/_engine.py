"""Vectorised single-trajectory scoring over a whole data set.

Trajectories are held as ragged arrays (flat values + offsets). Costs of every
changepoint and segment pairing are computed for all trajectories at once; the only
per-trajectory step is the Hungarian assignment of blocks of at least 2 x 2 (1 x k and
k x 1 blocks are solved in bulk: the optimum is the first minimum, which is the pair
``scipy.optimize.linear_sum_assignment`` returns).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np

from trackverify.assignment import assign


@dataclass(frozen=True)
class Ragged:
    """Rows of varying length: row i is ``values[offsets[i]:offsets[i+1]]``."""

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_lists(cls, rows, dtype=float) -> "Ragged":
        rows = list(rows)
        try:  # lists and 1-D arrays: lengths and values without per-row numpy calls
            lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
            offsets = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            values = np.fromiter(itertools.chain.from_iterable(rows), dtype=dtype,
                                 count=int(offsets[-1]))
            return cls(values, offsets)
        except (TypeError, ValueError):
            pass
        lengths = np.fromiter((np.size(r) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if offsets[-1]:
            values = np.concatenate([np.asarray(r, dtype=dtype).reshape(-1) for r in rows])
        else:
            values = np.zeros(0, dtype=dtype)
        return cls(values, offsets)

    @classmethod
    def from_lengths(cls, values, lengths) -> "Ragged":
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(np.asarray(values), offsets)

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def head(self, n: int) -> "Ragged":
        return Ragged(self.values[:self.offsets[n]], self.offsets[:n + 1])

    def row(self, i: int) -> np.ndarray:
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    def take(self, rows: np.ndarray) -> "Ragged":
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.lengths[rows]
        out = Ragged.from_lengths(np.zeros(0), lengths)
        flat = ranges(self.offsets[rows], lengths)
        return Ragged(self.values[flat], out.offsets)

    def last(self) -> np.ndarray:
        """Last element of each (non-empty) row."""
        return self.values[self.offsets[1:] - 1]


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every (s, l), without a loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    block = np.repeat(np.arange(len(lengths)), lengths)
    first = np.cumsum(lengths) - lengths
    return np.asarray(starts, dtype=np.int64)[block] + (np.arange(total) - first[block])


def _blocks(nrow: np.ndarray, ncol: np.ndarray):
    """For blocks of nrow x ncol: (block id, row, col) of every entry, row-major."""
    size = nrow * ncol
    entries = ranges(np.zeros(len(size), dtype=np.int64), size)
    block = np.repeat(np.arange(len(size)), size)
    c = ncol[block]
    return block, entries // np.maximum(c, 1), entries % np.maximum(c, 1)


def assign_blocks(cost: np.ndarray, nrow: np.ndarray, ncol: np.ndarray, which: np.ndarray):
    """Hungarian assignment of many small blocks stored row-major one after another.

    ``which`` selects the blocks to solve. Returns (block, row, col) of the pairs, ordered
    by block then row (the order of ``linear_sum_assignment``).
    """
    size = nrow * ncol
    start = np.cumsum(size) - size
    out_b, out_r, out_c = [], [], []
    # 1 x k and k x 1: the first minimum.
    for single_row in (True, False):
        sel = which & ((nrow == 1) if single_row else ((ncol == 1) & (nrow > 1))) & (size > 0)
        ids = np.flatnonzero(sel)
        if ids.size == 0:
            continue
        lengths = size[ids]
        flat = ranges(start[ids], lengths)
        vals = cost[flat]
        seg = np.repeat(np.arange(ids.size), lengths)
        seg_start = np.cumsum(lengths) - lengths
        mins = np.minimum.reduceat(vals, seg_start)
        hit = np.flatnonzero(vals == mins[seg])
        _, first = np.unique(seg[hit], return_index=True)
        arg = hit[first] - seg_start
        out_b.append(ids)
        out_r.append(np.zeros(ids.size, dtype=np.int64) if single_row else arg)
        out_c.append(arg if single_row else np.zeros(ids.size, dtype=np.int64))
    small = which & (nrow > 1) & (ncol > 1) & (np.maximum(nrow, ncol) <= 4)
    for shape in set(zip(nrow[small].tolist(), ncol[small].tolist())):
        ids = np.flatnonzero(small & (nrow == shape[0]) & (ncol == shape[1]))
        got, rows, cols = _unique_optimum(cost, start[ids], *shape)
        out_b.append(np.repeat(ids[got], rows.shape[1]))
        out_r.append(rows[got].ravel())
        out_c.append(cols[got].ravel())
        which = which.copy()
        which[ids[got]] = False
    rest = np.flatnonzero(which & (nrow > 1) & (ncol > 1))
    if rest.size:
        rb, rr, rc = [], [], []
        for b in rest.tolist():  # one Hungarian per trajectory; blocks are tiny
            r, c = assign(cost[start[b]:start[b] + size[b]].reshape(nrow[b], ncol[b]))
            rb.append(np.full(len(r), b))
            rr.append(r)
            rc.append(c)
        out_b += rb
        out_r += rr
        out_c += rc
    if not out_b:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    b = np.concatenate(out_b).astype(np.int64)
    r = np.concatenate(out_r).astype(np.int64)
    c = np.concatenate(out_c).astype(np.int64)
    order = np.lexsort((r, b))
    return b[order], r[order], c[order]


def _unique_optimum(cost, starts, r, c):
    """Blocks of one small shape r x c solved by enumerating every complete assignment.

    Returns (solved, rows, cols): ``solved`` marks blocks whose optimum beats every other
    assignment by more than 1e-9 (then any exact solver returns it); ties are left to the
    Hungarian solver so its tie-breaking is kept.
    """
    k = min(r, c)
    perms = np.array(list(itertools.permutations(range(max(r, c)), k)))  # (m, k)
    blocks = cost[starts[:, None] + np.arange(r * c)[None, :]].reshape(-1, r, c)
    if r <= c:  # rows 0..r-1 take columns perms
        rows = np.broadcast_to(np.arange(r), perms.shape)
        cols = perms
    else:  # columns 0..c-1 take rows perms
        rows, cols = perms, np.broadcast_to(np.arange(c), perms.shape)
    totals = blocks[:, rows, cols].sum(axis=2)  # (n, m)
    best = np.argmin(totals, axis=1)
    low = totals[np.arange(len(best)), best]
    near = (totals <= low[:, None] + 1e-9 * np.maximum(1.0, np.abs(low[:, None]))).sum(1)
    solved = near == 1
    br, bc = rows[best], cols[best]
    order = np.argsort(br, axis=1, kind="stable")
    return solved, np.take_along_axis(br, order, 1), np.take_along_axis(bc, order, 1)


@dataclass(frozen=True)
class ChangepointCounts:
    tp: int
    fp: int
    fn: int
    tp_empty: int
    num_cp_gt: int
    squared: np.ndarray

    def scores(self, threshold):
        """(RMSE, Jaccard) of ``ensemble_changepoint_error``."""
        if self.tp + self.fp + self.fn == 0:
            if self.num_cp_gt == 0:
                return 0, 1
            warnings.warn("No segments found in your predictions dataset.")
            return threshold, 0
        rmse = np.sqrt(np.mean(self.squared)) if self.squared.size else 0
        tp = self.tp + self.tp_empty
        return rmse, tp / (tp + self.fp + self.fn)


def changepoint_counts(gt: Ragged, pr: Ragged, threshold) -> ChangepointCounts:
    """Pooled TP / FP / FN of Hungarian changepoint pairings (cost |gt - pred|)."""
    lg, lp = gt.lengths, pr.lengths
    block, i, j = _blocks(lg, lp)
    cost = np.abs(gt.values[gt.offsets[block] + i] - pr.values[pr.offsets[block] + j])
    b, r, c = assign_blocks(cost, lg, lp, (lg > 0) & (lp > 0))
    diff = gt.values[gt.offsets[b] + r] - pr.values[pr.offsets[b] + c]
    hit = np.abs(diff) < threshold
    tp = int(hit.sum())
    miss = int(len(b) - tp)
    fp = miss + int(np.maximum(lp - lg, 0).sum())
    fn = miss + int(np.maximum(lg - lp, 0).sum())
    tp_empty = int(((lg == 0) & (lp == 0)).sum())
    return ChangepointCounts(tp, fp, fn, tp_empty, int(lg.sum()), diff[hit] ** 2)


def segment_intervals(cps: Ragged, corrected: bool):
    """Segments of each trajectory as half-open intervals [lo, hi), clipped to [0, T).

    The last changepoint is the length T; a single changepoint means one full segment plus
    one empty one (andi-datasets). Valid for non-negative changepoints and T >= 1.
    Returns (lo, hi, number of segments per trajectory).
    """
    lengths = cps.lengths
    T = cps.last()
    internal_len = np.where(lengths > 1, lengths - 1, 1)
    internal = cps.values[ranges(cps.offsets[:-1], internal_len)].astype(np.int64)
    nseg = internal_len + 1
    seg_off = np.cumsum(nseg) - nseg
    total = int(nseg.sum())
    shift = 0 if corrected else 1
    lo = np.zeros(total, dtype=np.int64)
    hi = np.zeros(total, dtype=np.int64)
    traj_of_internal = np.repeat(np.arange(cps.n), internal_len)
    k = np.arange(internal.size) - (np.cumsum(internal_len) - internal_len)[traj_of_internal]
    pos = seg_off[traj_of_internal] + k
    hi[pos] = internal + shift
    lo[pos + 1] = internal + shift
    Tseg = np.repeat(T, nseg)
    hi[seg_off + nseg - 1] = T
    lo = np.minimum(lo, Tseg)
    hi = np.clip(hi, lo, Tseg)
    return lo, hi, nseg


def segment_costs(gt: Ragged, pr: Ragged, corrected: bool):
    """Cost 1 - Jaccard of every (GT segment, predicted segment) pair, all trajectories."""
    glo, ghi, ng = segment_intervals(gt, corrected)
    plo, phi, np_ = segment_intervals(pr, corrected)
    goff = np.cumsum(ng) - ng
    poff = np.cumsum(np_) - np_
    block, i, j = _blocks(ng, np_)
    a_lo, a_hi = glo[goff[block] + i], ghi[goff[block] + i]
    b_lo, b_hi = plo[poff[block] + j], phi[poff[block] + j]
    inter = np.maximum(np.minimum(a_hi, b_hi) - np.maximum(a_lo, b_lo), 0)
    union = (a_hi - a_lo) + (b_hi - b_lo) - inter
    jac = np.zeros(len(inter))
    nz = union > 0
    jac[nz] = inter[nz] / union[nz]
    return 1 - jac, ng, np_
