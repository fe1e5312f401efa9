"""Canonical multi-object tracking metrics: HOTA, CLEAR (MOTA) and Identity (IDF1).

The definitions are TrackEval's (``trackeval.metrics.HOTA``, ``CLEAR``, ``Identity``),
reproduced to 1e-9 and shown equal to TrackEval and py-motmetrics in ``tests/mot``. They are
reported *beside* the oracle diagnostics of :mod:`trackverify.metrics.association`, never instead.

Data model (one sequence = one recording). Reference ("gt") detections carry a frame and a
reference id; predicted detections carry a frame and a predicted id. Similarities are given
sparsely as *candidate pairs* ``(gt index, pred index, similarity)`` with ``similarity > 0``
and both detections in the same frame; every other pair has similarity 0. For points,
:func:`similarity_pairs` gives ``s = max(0, 1 - d / zero_distance)``.

Each per-frame assignment of TrackEval is a maximum-weight matching, and a maximum-weight
matching decomposes over the connected components of the frame's candidate graph. So the
core solves everything in bulk: a component with one edge is matched outright, a star (one
detection on one side) takes its best edge, a 2 x 2 conflict takes its heavier diagonal, and
only larger components go to a Hungarian solve, one at a time. CLEAR's preference for
continuing matches makes frames depend on the previous frame; every component is solved
with the matches known so far, then again only those whose continuations changed, until
none changes (the frame-by-frame answer, in a few passes).

Definitions (``ALPHAS = 0.05, 0.10, ..., 0.95``, ``eps`` = float64 machine epsilon):

HOTA
    Global alignment ``A[g, p] = C[g, p] / (n_g + n_p - C[g, p])`` where ``C`` sums, over
    frames, ``s / (rowsum + colsum - s)`` of the frame's similarity matrix and ``n_g``,
    ``n_p`` count detections per id. Per frame, the matching maximises ``sum A * s``; at each
    alpha a matched pair is a TP if ``s >= alpha - eps``; FN / FP are the unmatched.
    ``DetRe = TP / (TP + FN)``, ``DetPr = TP / (TP + FP)``, ``DetA = TP / (TP + FN + FP)``;
    with ``M[g, p]`` the TPs of the id pair, ``AssA = sum M * M / (n_g + n_p - M) / TP``,
    ``AssRe = sum M * M / n_g / TP``, ``AssPr = sum M * M / n_p / TP``,
    ``LocA = sum(s over TPs) / TP``, ``HOTA = sqrt(DetA * AssA)``; each reported value is the
    mean over the 19 alphas (TrackEval's summary).
CLEAR
    Candidate pairs have ``s >= threshold - eps`` (threshold 0.5). Per frame with at least
    one reference and one predicted detection, the matching maximises
    ``sum(1000 * continues + s)``, where ``continues`` says the predicted id is the one the
    reference id was matched to in the previous such frame. ``IDSW`` counts matches whose
    predicted id differs from the reference id's previous match (any earlier frame).
    ``MOTA = (TP - FP - IDSW) / (TP + FN)``, ``MOTP = sum(s over matches) / TP``.
    Variant (``clear_metrics(..., idsw="consecutive")``, not TrackEval): only a switch whose
    previous match is in the immediately preceding frame number (``frame - 1``) counts.
    ``Frag`` = sum over reference ids of (runs of matched frames - 1). MT / PT / ML count
    reference ids by tracked ratio ``r`` (CLEAR-matched frames / frames present): TrackEval
    ``r > 0.8`` / ``0.2 <= r <= 0.8`` / ``r < 0.2``; py-motmetrics (``*_pymotmetrics``)
    ``r >= 0.8`` / ``0.2 <= r < 0.8`` / ``r < 0.2``.
Identity
    ``C[g, p]`` = frames where ``s >= threshold`` (no eps, as TrackEval); ``IDTP`` = weight of a
    maximum-weight one-to-one assignment of ids on ``C``; ``IDFN = n_gt - IDTP``,
    ``IDFP = n_pred - IDTP``; ``IDP = IDTP / (IDTP + IDFP)``, ``IDR = IDTP / (IDTP + IDFN)``,
    ``IDF1 = 2 IDTP / (2 IDTP + IDFP + IDFN)``.

Choices where the reference implementations disagree or carry a quirk (docs/reference/metrics.md):

- *Frames without detections* (TrackEval): a frame with no reference or no predicted
  detection is skipped, so it neither ends a run for ``Frag`` nor resets the "previous
  frame" of the continuation preference. We follow TrackEval. py-motmetrics counts a
  fragmentation at every tracked -> missed transition of the id's own frames instead.
- *Continuing matches* (py-motmetrics keeps every previous pairing first, as a hard
  constraint, from the id's last match at any time; TrackEval prefers continuations from
  the previous frame inside one weighted assignment). We follow TrackEval; the two agree
  unless a continuation competes with a better unmatched alternative.
- *Undefined values*: where the libraries print 0 (or 1) for a ratio with an empty
  denominator we return ``None``: ``MOTA`` and ``DetRe``/``IDR`` without reference
  detections, ``DetPr``/``IDP`` without predictions, ``MOTP``, ``AssA``, ``AssRe``,
  ``AssPr`` and ``LocA`` without any match, ``HOTA``, ``DetA`` and ``IDF1`` with neither.
- *Exact ties* between equally good matchings are broken by input order (smaller index
  first); the libraries break them by their solver's internal order. With continuous
  positions ties have probability zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from trackverify.tables import sorted_codes, stable_order, unique_inverse

ALPHAS = np.arange(0.05, 0.99, 0.05)  # TrackEval's array_labels, bit for bit
EPS = float(np.finfo(float).eps)
CONTINUATION_BONUS = 1000.0
CELL_TABLE_SLOTS = 1 << 20  # most cubes per block of frames in the direct cube table
METRICS = ("hota", "deta", "assa", "loca", "detre", "detpr", "assre", "asspr",
           "mota", "motp", "idsw", "frag", "idf1", "idp", "idr")
COUNTS = ("clr_tp", "clr_fn", "clr_fp", "idtp", "idfn", "idfp", "mt", "pt", "ml",
          "mt_pymotmetrics", "pt_pymotmetrics", "ml_pymotmetrics")
IDSW_RULES = ("last_matched", "consecutive")  # clear_metrics(idsw=...); the first is TrackEval's


# --------------------------------------------------------------------------- similarities

def similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, zero_distance: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate pairs of points in the same frame closer than ``zero_distance``.

    Returns ``(gt index, pred index, similarity)`` with ``similarity = max(0, 1 - d /
    zero_distance) > 0`` and ``d`` the Euclidean distance (in a deterministic order).

    Points are binned per frame into cubes of side ``2 * zero_distance * (1 + 1e-8)`` (laid
    out from the frame's own corner); along each axis a point can only have partners in its
    own cube and in the neighbour on the side of the cube's half it lies in, so each
    prediction looks up ``2 ** dim`` cubes, all at once, in a direct table of the cubes of a
    block of frames. The ``1e-8`` keeps a partner of a point on (or rounded to) its cube's
    half at least ``1e-8 * zero_distance`` inside the cube, far above the rounding of a
    position within the table's ``2 ** 20`` cubes (about ``2e-10 * zero_distance``).
    """
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    if len(gt_frame) == 0 or len(pred_frame) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    gt_xyz = np.asarray(gt_xyz, dtype=np.float64).reshape(len(gt_frame), -1)
    pred_xyz = np.asarray(pred_xyz, dtype=np.float64).reshape(len(pred_frame), -1)
    return similarity_pairs_by_axis(gt_frame, list(gt_xyz.T), pred_frame, list(pred_xyz.T),
                                    zero_distance)


def similarity_pairs_by_axis(gt_frame, gt_axes, pred_frame, pred_axes, zero_distance: float
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`similarity_pairs` with the coordinates given axis by axis: ``gt_axes`` and
    ``pred_axes`` are sequences of ``dim`` 1-D arrays (e.g. a table's columns, used as they
    are instead of being copied into one array)."""
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    if len(gt_frame) == 0 or len(pred_frame) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    # contiguous (copied only when not): the distance checks read them with take
    gt_axes = [np.ascontiguousarray(x, dtype=np.float64) for x in gt_axes]
    pred_axes = [np.ascontiguousarray(x, dtype=np.float64) for x in pred_axes]
    dim = len(gt_axes)
    side = 2.0 * zero_distance * (1.0 + 1e-8)  # see similarity_pairs: rounding margin
    n_frames = int(max(gt_frame.max(), pred_frame.max())) + 1
    # Work in frame order: each block of frames is then a contiguous slice; one axis at a time.
    g_by_frame, p_by_frame = frame_order(gt_frame, n_frames), frame_order(pred_frame, n_frames)
    g_frames, g_axes = in_frame_order(gt_frame, gt_axes, g_by_frame)
    p_frames, p_axes = in_frame_order(pred_frame, pred_axes, p_by_frame)
    g_starts = np.r_[0, np.flatnonzero(g_frames[1:] != g_frames[:-1]) + 1]
    p_starts = np.r_[0, np.flatnonzero(p_frames[1:] != p_frames[:-1]) + 1]
    g_cells, p_cells, toward, n_cell = [], [], [], []
    for g_x, p_x in zip(g_axes, p_axes):
        # Cubes are laid out from each frame's own corner: a moving specimen keeps them few.
        origin = np.full(n_frames, np.inf)
        origin[g_frames[g_starts]] = np.minimum.reduceat(g_x, g_starts)
        origin[p_frames[p_starts]] = np.minimum(origin[p_frames[p_starts]],
                                                np.minimum.reduceat(p_x, p_starts))
        origin -= side
        g_cell = np.subtract(g_x, origin[g_frames])  # in place from here (the same numbers)
        g_cell /= side
        np.floor(g_cell, out=g_cell)
        p_pos = np.subtract(p_x, origin[p_frames])
        p_pos /= side
        p_cell = np.floor(p_pos)
        p_pos -= p_cell
        toward.append(p_pos >= 0.5)  # the neighbour cube is above
        del p_pos
        # cubes along this axis, with a margin cube on either side (as a float: no overflow)
        n_cell.append(float(max(g_cell.max(), p_cell.max())) + 2.0)
        if float(np.prod(n_cell)) > CELL_TABLE_SLOTS:  # one axis alone can exceed the table
            return _similarity_pairs_tree(gt_frame, gt_axes, pred_frame, pred_axes,
                                          zero_distance)
        n_cell[-1] = int(n_cell[-1])
        g_cells.append(g_cell.astype(np.int32))
        p_cells.append(p_cell.astype(np.int32))
        del g_cell, p_cell
    frame_stride = int(np.prod(n_cell))
    g_local = np.zeros(len(g_frames), dtype=np.int32)  # < frame_stride <= CELL_TABLE_SLOTS
    p_local = np.zeros(len(p_frames), dtype=np.int32)
    steps = []  # per axis, the offset to the neighbour cube each prediction looks up
    for a in range(dim):
        stride = int(np.prod(n_cell[a + 1:]))
        g_local += g_cells[a] * stride
        p_local += p_cells[a] * stride
        step = toward[a].astype(np.int32)  # +stride toward the neighbour above, else -stride
        step *= 2 * stride
        step -= stride
        steps.append(step)
    del g_cells, p_cells, toward
    # A direct table cube -> (occupied, first, count) over a block of frames at a time. One
    # table is reused: only the occupied cubes are written (and cleared after the block).
    block = max(1, _table_slots(n_frames * frame_stride) // frame_stride)
    occupied = np.zeros(block * frame_stride, dtype=bool)
    # read where occupied only; a block's runs (occupied cubes) are at most its points
    g_block = np.diff(np.searchsorted(g_frames, np.arange(0, n_frames + block, block)))
    run_of = np.zeros(block * frame_stride, dtype=np.uint16 if g_block.max() <= 1 << 16
                      else np.int32)
    parts = []
    index = np.int32 if max(len(g_frames), len(p_frames)) < 1 << 31 else np.int64
    for f0 in range(0, n_frames, block):
        gs = slice(np.searchsorted(g_frames, f0), np.searchsorted(g_frames, f0 + block))
        ps = slice(np.searchsorted(p_frames, f0), np.searchsorted(p_frames, f0 + block))
        if gs.start == gs.stop or ps.start == ps.stop:
            continue
        g_key = (g_frames[gs] - f0) * frame_stride + g_local[gs]
        g_sorted = _radix_order(g_key, block * frame_stride)
        keys = g_key[g_sorted]
        first = np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1]  # runs: one per cube
        run_count = np.diff(np.r_[first, len(keys)])
        cubes = keys[first]
        occupied[cubes] = True
        run_of[cubes] = np.arange(len(first))
        # The 2 ** dim cubes of each prediction, corner c taking the axes of c's bits (built
        # corner by corner, then read prediction by prediction).
        query = np.empty((2 ** dim, ps.stop - ps.start), dtype=np.int32)
        query[0] = (p_frames[ps] - f0) * frame_stride + p_local[ps]
        for a, step in enumerate(steps):
            np.add(query[:1 << a], step[None, ps], out=query[1 << a:2 << a])
        query = query.T.ravel()  # never outside the table: every point has a margin cube
        hit = np.flatnonzero(occupied.take(query))  # take: int32 indices without a copy
        run = run_of.take(query.take(hit)).astype(np.intp)
        count, lo = run_count[run], first[run]
        if len(count) and count.max() > 1:  # several reference points in one cube
            ends = np.cumsum(count)
            lo = np.repeat(lo - (ends - count), count) + np.arange(int(ends[-1]))
            hit = np.repeat(hit, count)
        occupied[cubes] = False
        del query, run, count, keys, first, run_count, cubes
        gi, pj, sim = _finish_pairs(gs.start + g_sorted[lo], ps.start + (hit >> dim), g_axes,
                                    p_axes, zero_distance)  # few candidates alive at once
        parts.append((gi.astype(index), pj.astype(index), sim))  # kept in int32 where they fit
    del g_local, p_local, steps, occupied, run_of  # before the pairs are joined
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    columns = [list(column) for column in zip(*parts)]
    del parts
    gi, pj, sim = (_concatenate_freeing(column, dtype) for column, dtype
                   in zip(columns, (np.int64, np.int64, np.float64)))
    return (gi if g_by_frame is None else g_by_frame[gi],
            pj if p_by_frame is None else p_by_frame[pj], sim)


def _table_slots(cubes: int) -> int:
    """Cubes of the direct cube table for ``cubes`` cubes in all (every frame's): about
    ``256 sqrt(cubes)``, between ``2**16`` and :data:`CELL_TABLE_SLOTS`. The table costs in
    proportion to its size (zeroed and paged in afresh each call, about 6 ns a cube) and
    each block of frames a fixed amount (about 0.3 ms), so ``sqrt(cubes * 0.3 ms / 6 ns)``
    cubes a block cost least; the pairs are the same for any block (and in the same
    order)."""
    return int(min(CELL_TABLE_SLOTS, max(1 << 16, 256 * np.sqrt(float(cubes)))))


def _concatenate_freeing(parts: list, dtype) -> np.ndarray:
    """``np.concatenate(parts, dtype=dtype)``, emptying the list (its arrays are freed once
    copied)."""
    out = np.concatenate(parts, dtype=dtype)
    parts.clear()
    return out


def _radix_order(keys: np.ndarray, span: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integers in ``0..span-1`` (``span <= 2**32``):
    one or two stable radix passes of 16 bits (the second of 8 bits when they suffice)."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if span > 1 << 16:
        high = np.uint8 if span <= 1 << 24 else np.uint16
        order = order[np.argsort((keys[order] >> 16).astype(high), kind="stable")]
    return order


def frame_order(frame: np.ndarray, n_frames: int) -> np.ndarray | None:
    """Stable order by frame (``frame`` int64, below ``n_frames``; a radix sort for frame
    numbers below 65536); None when the points are in frame order already."""
    if np.all(frame[1:] >= frame[:-1]):
        return None
    small = frame.astype(np.uint16) if n_frames <= 1 << 16 else frame
    return np.argsort(small, kind="stable")


def in_frame_order(frame: np.ndarray, axes: list[np.ndarray], order: np.ndarray | None):
    """Frames and the arrays of ``axes`` (e.g. one per coordinate axis) in ``order``
    (:func:`frame_order`; as given when None)."""
    if order is None:
        return frame, axes
    in_order = np.repeat(np.arange(int(frame.max()) + 1), np.bincount(frame))  # = frame[order]
    return in_order, [x.take(order) for x in axes]


def _finish_pairs(gi, pj, g_axes, p_axes, zero_distance):
    """Keep the pairs with positive similarity; ``*_axes``: one coordinate array per axis.

    The distance exactly as sqrt(sum of squared differences), axis by axis in order, over
    every candidate (one pass, then one selection: most candidates are pairs).
    """
    d2 = None
    for g_x, p_x in zip(g_axes, p_axes):
        diff = g_x.take(gi)
        diff -= p_x.take(pj)
        diff *= diff
        if d2 is None:
            d2 = diff
        else:
            d2 += diff
    sim = np.sqrt(d2, out=d2)  # in place from here: 1 - d / zero_distance
    sim /= zero_distance
    np.subtract(1.0, sim, out=sim)
    keep = np.flatnonzero(sim > 0)
    return gi.take(keep), pj.take(keep), sim.take(keep)


def _similarity_pairs_tree(gt_frame, gt_axes, pred_frame, pred_axes, zero_distance):
    """The same pairs by a k-d tree over (coordinates, frame * K), for huge extents."""
    from scipy.spatial import cKDTree

    gt_xyz, pred_xyz = np.column_stack(gt_axes), np.column_stack(pred_axes)
    both = np.concatenate([gt_xyz, pred_xyz])
    k = 2.0 * (float(both.max() - both.min()) + zero_distance) + 1.0
    tree_g = cKDTree(np.column_stack([gt_xyz, gt_frame * k]))
    tree_p = cKDTree(np.column_stack([pred_xyz, pred_frame * k]))
    found = tree_g.sparse_distance_matrix(tree_p, zero_distance, output_type="ndarray")
    gi, pj = found["i"].astype(np.int64), found["j"].astype(np.int64)
    same = gt_frame[gi] == pred_frame[pj]
    return _finish_pairs(gi[same], pj[same], gt_xyz.T, pred_xyz.T, zero_distance)


# --------------------------------------------------------------------------- matching

class _Graph:
    """Connected components of a candidate graph (edges ``pg[e] -- pp[e]``).

    Components never span frames, because candidate pairs never do.
    """

    def __init__(self, pg: np.ndarray, pp: np.ndarray, n_gt: int, n_pred: int,
                 alone: np.ndarray | None = None):
        n = len(pg)
        # An edge that is the only edge of both its detections is a component by itself
        # (``alone``: those edges, when the caller knows them).
        if alone is None:
            alone = _alone(pg, pp, n_gt, n_pred)
        n_alone = int(alone.sum())
        self.alone = alone
        self.comp = np.empty(n, dtype=np.int64)
        self.comp[alone] = np.arange(n_alone)
        rest = np.flatnonzero(~alone)
        g_nodes, gi = unique_inverse(pg[rest], n_gt)
        p_nodes, pi = unique_inverse(pp[rest], n_pred)
        m = len(g_nodes) + len(p_nodes)
        graph = coo_matrix((np.ones(len(rest)), (gi, pi + len(g_nodes))), shape=(m, m))
        n_rest, labels = connected_components(graph, directed=False) if m else (0, np.zeros(0))
        labels = labels.astype(np.int64)
        self.comp[rest] = n_alone + labels[gi]
        self.gt_in = np.r_[np.ones(n_alone, np.int64),
                           np.bincount(labels[:len(g_nodes)], minlength=n_rest)]
        self.pr_in = np.r_[np.ones(n_alone, np.int64),
                           np.bincount(labels[len(g_nodes):], minlength=n_rest)]
        self.pg, self.pp = pg, pp


def _alone(pg: np.ndarray, pp: np.ndarray, n_gt: int, n_pred: int) -> np.ndarray:
    """Edges that are the only edge of both their detections."""
    return (np.bincount(pg, minlength=n_gt)[pg] == 1) & \
        (np.bincount(pp, minlength=n_pred)[pp] == 1)


def _local_index(comp: np.ndarray, node: np.ndarray) -> np.ndarray:
    """Rank of each edge's node among the distinct nodes of its component (index order)."""
    span = int(node.max()) + 1
    uniq, inverse = np.unique(comp * span + node, return_inverse=True)
    owner = uniq // span
    start = np.r_[True, owner[1:] != owner[:-1]]
    return (np.arange(len(uniq)) - np.flatnonzero(start)[np.cumsum(start) - 1])[inverse]


def _max_weight_matching(g: _Graph, edges: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Maximum-weight matching over whole components of ``g`` (edge subset ``edges``).

    ``w`` (>= 0) weighs ``edges``. Returns the matched subset of ``edges``. Stars (one
    detection on one side) take their best edge, ties to the smaller partner index; 2 x 2
    components take the heavier of the two diagonals (ties: the main diagonal); larger
    components are solved by scipy's Hungarian, rows and columns in index order.
    """
    matched = np.zeros(len(edges), dtype=bool)
    if len(edges) == 0:
        return edges
    alone = g.alone[edges]  # the only edge of both its detections: matched outright
    matched[alone] = True
    rest = np.flatnonzero(~alone)
    if len(rest) == 0:
        return edges[matched]
    matched_rest = _match_components(g, edges[rest], w[rest])
    matched[rest[matched_rest]] = True
    return edges[matched]


def _match_components(g: _Graph, edges: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`_max_weight_matching` on edges none of which is alone: a boolean mask."""
    matched = np.zeros(len(edges), dtype=bool)
    comp = g.comp[edges]
    n_g, n_p = g.gt_in[comp], g.pr_in[comp]
    single = (n_g == 1) & (n_p == 1)
    matched[single] = True
    star = (n_g == 1) | (n_p == 1)
    idx = np.flatnonzero(star & ~single)
    if len(idx):
        partner = np.where(n_g[idx] == 1, g.pp[edges[idx]], g.pg[edges[idx]])
        order = idx[np.lexsort((partner, -w[idx], comp[idx]))]
        first = np.r_[True, comp[order][1:] != comp[order][:-1]]
        matched[order[first]] = True
    square = np.flatnonzero((n_g == 2) & (n_p == 2))
    if len(square):
        local, li = unique_inverse(comp[square], len(g.gt_in))
        # Local rows / columns: 0 for the smaller of the component's two detections.
        r = _not_smallest(li, len(local), g.pg[edges[square]])
        c = _not_smallest(li, len(local), g.pp[edges[square]])
        block = np.zeros((len(local), 2, 2))
        block[li, r, c] = w[square]
        main = block[:, 0, 0] + block[:, 1, 1] >= block[:, 0, 1] + block[:, 1, 0]
        matched[square[(r == c) == main[li]]] = True
    idx = np.flatnonzero(~star & ~((n_g == 2) & (n_p == 2)))
    if len(idx):
        idx = idx[np.argsort(comp[idx], kind="stable")]
        rows = _local_index(comp[idx], g.pg[edges[idx]])
        cols = _local_index(comp[idx], g.pp[edges[idx]])
        # Every component's weight matrix in one flat buffer (row-major, zeros where no
        # edge), and which edge each entry is; then one Hungarian solve per component.
        start = np.r_[0, np.flatnonzero(np.diff(comp[idx])) + 1]
        k = comp[idx[start]]
        shape_g, shape_p = g.gt_in[k], g.pr_in[k]
        offset = np.r_[0, np.cumsum(shape_g * shape_p)]
        entry = np.repeat(offset[:-1], np.diff(np.r_[start, len(idx)])) + \
            rows * np.repeat(shape_p, np.diff(np.r_[start, len(idx)])) + cols
        weight = np.zeros(int(offset[-1]))
        slot = np.full(int(offset[-1]), -1, dtype=np.int64)
        weight[entry] = w[idx]
        slot[entry] = idx
        solved = [linear_sum_assignment(weight[o:o + n_r * n_c].reshape(n_r, n_c), maximize=True)
                  for o, n_r, n_c in zip(offset[:-1].tolist(), shape_g.tolist(),
                                         shape_p.tolist())]
        # each solve's (row, column) pairs as entries of the flat buffer, all at once
        n_solved = np.minimum(shape_g, shape_p)
        chosen = slot[np.repeat(offset[:-1], n_solved)
                      + np.concatenate([ri for ri, _ in solved]) * np.repeat(shape_p, n_solved)
                      + np.concatenate([ci for _, ci in solved])]
        matched[chosen[chosen >= 0]] = True
    return matched


def _not_smallest(group: np.ndarray, n_groups: int, node: np.ndarray) -> np.ndarray:
    """For each element, whether its node is not the smallest node of its group (0 / 1: the
    local index in a group of two distinct nodes)."""
    smallest = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, group, node)
    return (node != smallest[group]).astype(np.int64)


# --------------------------------------------------------------------------- sequences

@dataclass
class SequenceCounts:
    """The sufficient statistics of one sequence (or several, combined)."""

    n_gt: int
    n_pred: int
    hota_tp: np.ndarray
    hota_fn: np.ndarray
    hota_fp: np.ndarray
    assa: np.ndarray
    assre: np.ndarray
    asspr: np.ndarray
    loca: np.ndarray
    clr_tp: int
    clr_fn: int
    clr_fp: int
    idsw: int
    frag: int
    motp_sum: float
    idtp: int
    idfn: int
    idfp: int
    mt: int = 0
    pt: int = 0
    ml: int = 0
    mt_pymotmetrics: int = 0
    pt_pymotmetrics: int = 0
    clear_matches: tuple[np.ndarray, np.ndarray] = field(default=None, repr=False)
    #: the reference detections by (id, frame) (``tables.stable_order``), for the diagnostics
    gt_order: np.ndarray = field(default=None, repr=False)


def _codes(values) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Dense codes ``0..n-1`` of ids (in sorted id order), ``n`` and, where counted, how
    many times each code occurs (:func:`trackverify.tables.sorted_codes`)."""
    codes, ids, counts = sorted_codes(values)
    return codes, len(ids), counts


def sequence_counts(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred, pair_similarity,
                    threshold: float = 0.5, *, checked_pairs: bool = False) -> SequenceCounts:
    """HOTA, CLEAR and Identity statistics of one sequence.

    ``gt_frame``/``gt_id`` describe the reference detections, ``pred_frame``/``pred_id`` the
    predicted ones (each id at most once per frame); ``pair_*`` are the candidate pairs
    (indices into those arrays; similarity in (0, 1]; same frame). ``threshold`` is the
    CLEAR / Identity similarity threshold. See the module docstring for the definitions.
    ``checked_pairs``: the pairs are known to join detections of one frame with a positive
    similarity (as :func:`similarity_pairs` gives them), so they are not checked again.
    """
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    g_id, n_gid, gt_count = _codes(gt_id)
    p_id, n_pid, pr_count = _codes(pred_id)
    pg = np.asarray(pair_gt, dtype=np.int64)
    pp = np.asarray(pair_pred, dtype=np.int64)
    ps = np.asarray(pair_similarity, dtype=np.float64)
    if not checked_pairs:
        if len(pg) and np.any(gt_frame[pg] != pred_frame[pp]):
            raise ValueError("candidate pairs must join detections of the same frame")
        keep = ps > 0
        if not keep.all():
            pg, pp, ps = pg[keep], pp[keep], ps[keep]
        del keep
    n_gt, n_pred = len(gt_frame), len(pred_frame)
    gt_count = (np.bincount(g_id, minlength=n_gid) if gt_count is None else gt_count
                ).astype(np.float64)
    pr_count = (np.bincount(p_id, minlength=n_pid) if pr_count is None else pr_count
                ).astype(np.float64)

    # Shared by HOTA, CLEAR and Identity: the id pair of every pair, the pairs alone in the
    # graph of all pairs (the only pair of both their detections: matched outright by HOTA
    # and, when candidates, by CLEAR) and the others (the only ones that need a matching),
    # and the reference detections by (id, frame) (also for the diagnostics).
    keys, inv = _pair_keys(g_id[pg], p_id[pp], n_gid, n_pid)
    alone = _alone(pg, pp, n_gt, n_pred)
    hota = _hota(pg, pp, ps, g_id, p_id, n_gid, n_pid, gt_count, pr_count, n_gt, n_pred, alone,
                 (keys, inv))
    ident = _identity(pg, pp, ps, g_id, p_id, n_gt, n_pred, threshold, (keys, inv))
    del keys, inv  # before CLEAR, the largest step
    gt_order = stable_order(g_id, n_gid, gt_frame)
    clear = _clear(gt_frame, pred_frame, g_id, p_id, n_gid, pg, pp, ps, threshold,
                   gt_order=gt_order, alone=alone)
    del alone
    return SequenceCounts(n_gt=n_gt, n_pred=n_pred, **hota, **clear, **ident, gt_order=gt_order)


def _pair_keys(a: np.ndarray, b: np.ndarray, n_a: int, n_b: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Distinct id-pair keys ``a * n_b + b`` (sorted) and each element's position in them."""
    span = max(n_b, 1)
    keys = a * span + b
    if n_a * span <= 1 << 24:  # dense: O(n) instead of a sort
        return unique_inverse(keys, n_a * span)
    return np.unique(keys, return_inverse=True)


def _hota(pg, pp, ps, g_id, p_id, n_gid, n_pid, gt_count, pr_count, n_gt, n_pred,
          alone: np.ndarray, pair_keys: tuple[np.ndarray, np.ndarray]) -> dict:
    """HOTA counts per alpha; ``alone``: :func:`_alone` of the pairs, ``pair_keys``: their id
    pairs (:func:`_pair_keys` of ``g_id[pg], p_id[pp]``)."""
    n_alpha = len(ALPHAS)
    tp = np.zeros(n_alpha)
    loca_sum = np.zeros(n_alpha)
    assa = np.zeros(n_alpha)
    assre = np.zeros(n_alpha)
    asspr = np.zeros(n_alpha)
    if n_gt and n_pred and len(pg):
        # The pairs alone in the graph (the only pair of both their detections) have
        # denominator s + s - s = s, so s / s = 1 (where s > eps); they are matched whatever
        # their weight. The others share their detections' row and column sums only with
        # each other, and are matched by a maximum-weight matching of their own graph (its
        # components are the graph's).
        rest = np.flatnonzero(~alone)
        rg, rp, rs = pg[rest], pp[rest], ps[rest]
        sim_iou = (ps > 0 + EPS).astype(np.float64)
        rowsum = np.bincount(rg, weights=rs, minlength=n_gt)
        colsum = np.bincount(rp, weights=rs, minlength=n_pred)
        denom = colsum[rp] + rowsum[rg] - rs
        rest_iou = np.zeros(len(rs))  # s / denom where denom > eps, else 0
        np.divide(rs, denom, out=rest_iou, where=denom > 0 + EPS)
        sim_iou[rest] = rest_iou
        del rowsum, colsum, denom, rest_iou  # big temporaries go as soon as they are used
        keys, inv = pair_keys
        potential = np.bincount(inv, weights=sim_iou, minlength=len(keys))
        del sim_iou
        kg, kp = keys // max(n_pid, 1), keys % max(n_pid, 1)
        align = potential / (gt_count[kg] + pr_count[kp] - potential)
        matched = alone.copy()
        if len(rest):
            # None of them is alone among them: each shares a detection with another pair,
            # which is not alone either, so is among them too.
            graph = _Graph(rg, rp, n_gt, n_pred, alone=np.zeros(len(rest), dtype=bool))
            chosen = _max_weight_matching(graph, np.arange(len(rest)), align[inv[rest]] * rs)
            del graph
            matched[rest[chosen]] = True
            del chosen
        del rest, rg, rp, rs
        ms, m_inv = ps[matched], inv[matched]
        n_pass = _alphas_passed(ms)
        code = m_inv * (n_alpha + 1)
        code += n_pass
        del m_inv
        hist = np.bincount(code, minlength=len(keys) * (n_alpha + 1)).reshape(len(keys), n_alpha + 1)
        del code
        # matches[k, a] = matches of id pair k with n_pass > a.
        matches = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:].astype(np.float64)
        tp = matches.sum(axis=0)
        sim_hist = np.bincount(n_pass, weights=ms, minlength=n_alpha + 1)
        loca_sum = np.cumsum(sim_hist[::-1])[::-1][1:]
        ng, npr = gt_count[kg][:, None], pr_count[kp][:, None]
        assa = (matches * (matches / np.maximum(1, ng + npr - matches))).sum(0) / np.maximum(1, tp)
        assre = (matches * (matches / np.maximum(1, ng))).sum(0) / np.maximum(1, tp)
        asspr = (matches * (matches / np.maximum(1, npr))).sum(0) / np.maximum(1, tp)
    fn = n_gt - tp
    fp = n_pred - tp
    loca = np.maximum(1e-10, loca_sum) / np.maximum(1e-10, tp)
    return {"hota_tp": tp, "hota_fn": fn, "hota_fp": fp, "assa": assa, "assre": assre,
            "asspr": asspr, "loca": loca}


def _alphas_passed(s: np.ndarray) -> np.ndarray:
    """Number of alphas at which a match of similarity ``s`` counts: ``#{a: alpha_a - eps <=
    s}`` (``np.searchsorted(ALPHAS - EPS, s, side="right")``, without the binary search:
    ``floor(20 s)`` is that number or one less, and one comparison settles it).

    ``floor(20 s)`` is never one too many: ``20 s`` rounds to at most ``k`` only for ``s``
    within an ulp of ``k / 20``, and ``alpha_(k-1) - eps`` lies below that (checked on every
    float near each ``k / 20`` by a test)."""
    n = np.floor(s * 20.0).astype(np.intp)
    np.clip(n, 0, len(ALPHAS), out=n)
    n += _ALPHA_STEPS.take(n) <= s  # one too few
    return n


_ALPHA_STEPS = np.r_[ALPHAS - EPS, np.inf]  # the alphas' lower bounds, then none


def _clear(gt_frame, pred_frame, g_id, p_id, n_gid, pg, pp, ps, threshold,
           idsw_rule: str = "last_matched", gt_order: np.ndarray | None = None,
           alone: np.ndarray | None = None) -> dict:
    """CLEAR counts; ``gt_order``: the reference detections by (id, frame), ``alone``: the
    pairs alone in the graph of all pairs (:func:`_alone`), when known."""
    n_gt, n_pred = len(gt_frame), len(pred_frame)
    # Processed frames: at least one reference and one predicted detection.
    n_frames = int(max(gt_frame.max(initial=-1), pred_frame.max(initial=-1))) + 1
    busy = (np.bincount(gt_frame, minlength=n_frames) > 0) & \
        (np.bincount(pred_frame, minlength=n_frames) > 0)
    n_proc = int(busy.sum())
    cand = ps >= threshold - EPS
    edge_of_gt = np.full(n_gt, -1, dtype=np.int64)  # candidate pair matched to each gt det
    if n_proc and cand.any():
        # Processed-frame rank of each reference detection (int32: exact, half the memory).
        proc = np.where(busy, np.cumsum(busy) - 1, -1).astype(np.int32)[gt_frame]
        # Reference detections of processed frames by (id, processed frame); each one's
        # predecessor is the same id in the previous processed frame, if there.
        if gt_order is None:
            gt_order = stable_order(g_id, n_gid, gt_frame)
        if n_proc < n_frames:
            by_id = gt_order[proc[gt_order] >= 0]
            id_by = g_id[by_id]
        else:  # every detection: the ids ascend, each repeated as often as it occurs
            by_id = gt_order
            id_by = np.repeat(np.arange(n_gid, dtype=np.int32 if n_gid < 1 << 31 else np.int64),
                              np.bincount(g_id, minlength=n_gid))
        proc_by = proc[by_id]
        # A candidate alone in the graph of all pairs is alone among the candidates: matched.
        # The other candidates (``pairs``, indices into all pairs) form the graph to solve;
        # components of one reference and one prediction there are matched too.
        if alone is None:
            pairs = np.flatnonzero(cand)
        else:
            matched_alone = np.flatnonzero(alone & cand)
            edge_of_gt[pg[matched_alone]] = matched_alone
            del matched_alone
            pairs = np.flatnonzero(cand & ~alone)
        cg, cp = pg[pairs], pp[pairs]
        graph = _Graph(cg, cp, n_gt, n_pred)  # components all within one frame
        comp = graph.comp
        single = graph.alone.copy()
        others = np.flatnonzero(~single)
        single[others] = (graph.gt_in[comp[others]] == 1) & (graph.pr_in[comp[others]] == 1)
        edge_of_gt[cg[single]] = pairs[single]
        pending = np.flatnonzero(~single)
        # Each pending pair's reference predecessor (-1: none), found among the rows by
        # (id, processed frame), whose keys id * n_proc + rank ascend (an id once a frame).
        prev_det = _predecessors(cg[pending], g_id, proc, by_id,
                                 id_by.astype(np.int64) * n_proc + proc_by, n_proc)
        _match_continuing(graph, pending, prev_det, pairs, cg, p_id[cp[pending]], pp, p_id,
                          ps, edge_of_gt)
        del graph, comp, single, others, prev_det, pairs, cg, cp, proc
    m_gt = np.flatnonzero(edge_of_gt >= 0)
    m_edge = edge_of_gt[m_gt]
    del edge_of_gt
    m_pred = pp[m_edge]
    tp = len(m_gt)
    motp_sum = 0.0
    idsw = frag = 0
    if tp:
        motp_sum = float(ps[m_edge].sum())
        del m_edge
        # IDSW: a match whose predicted id differs from the id's previous match (the codes
        # in int32 where they fit: half the memory, the same comparisons).
        pid_of_gt = np.full(n_gt, -1, dtype=np.int32 if n_pred < 1 << 31 else np.int64)
        pid_of_gt[m_gt] = p_id[m_pred]
        pid_by = pid_of_gt.take(by_id)  # by (id, frame); -1: not matched
        del pid_of_gt
        is_match = pid_by >= 0
        gs, ps_id, proc_m = (x.compress(is_match) for x in (id_by, pid_by, proc_by))
        del pid_by
        same_id = gs[1:] == gs[:-1]
        switch = same_id & (ps_id[1:] != ps_id[:-1])
        if idsw_rule == "consecutive":  # ... and the previous match is in frame - 1
            frame_m = gt_frame[by_id[is_match]]
            switch &= frame_m[1:] == frame_m[:-1] + 1
        idsw = int(np.count_nonzero(switch))
        # Frag: runs of matches over consecutive processed frames, per id, minus one.
        continues = np.r_[False, same_id & (proc_m[1:] == proc_m[:-1] + 1)]
        runs = np.bincount(gs[~continues], minlength=n_gid)
        frag = int(np.clip(runs - 1, 0, None).sum())
    return {"clr_tp": tp, "clr_fn": n_gt - tp, "clr_fp": n_pred - tp, "idsw": idsw,
            "frag": frag, "motp_sum": motp_sum, **_mostly_tracked(g_id, n_gid, m_gt),
            "clear_matches": (m_gt, m_pred)}


def _match_continuing(graph: _Graph, pending, prev_det, pairs, cg, pending_pid, pp, p_id, ps,
                      edge_of_gt) -> None:
    """CLEAR's matching of the ``pending`` candidates (indices into ``pairs``; whole
    components of ``graph``, none a single pair), each weighing ``1000 * continues + s``
    where ``continues`` says the pair's predicted id (``pending_pid``) is the one its
    reference detection's predecessor (``prev_det``, -1: none) is matched to. Writes the
    matches into ``edge_of_gt`` (the matched pair of each reference detection, -1: none).

    A component's matching depends on its predecessors' matches, which lie in earlier
    frames, so the matchings consistent with each other are unique: the frame-by-frame
    answer. They are found by solving every component with the matches known so far (the
    pending reference detections unmatched at first), then again only those whose
    continuation flags changed, until none changes (at most as many passes as the longest
    chain of dependent components, plus one; mostly far fewer: a continuation that holds
    anyway changes nothing)."""
    if len(pending) == 0:
        return
    has_prev = np.flatnonzero(prev_det >= 0)
    prev_of, prev_pid = prev_det[has_prev], pending_pid[has_prev]
    weight = ps[pairs[pending]]  # plus the bonus where the pair continues
    comp_of = unique_inverse(graph.comp[pending], len(graph.gt_in))[1]
    flagged = np.zeros(int(comp_of.max()) + 1, dtype=bool)
    cont = np.zeros(len(pending), dtype=bool)
    redo = np.arange(len(pending))  # every component at first
    for _ in range(len(pending) + 1):
        w = weight[redo]
        w[cont[redo]] += CONTINUATION_BONUS
        edge_of_gt[cg[pending[redo]]] = -1
        chosen = _max_weight_matching(graph, pending[redo], w)
        edge_of_gt[cg[chosen]] = pairs[chosen]
        prev_edge = edge_of_gt[prev_of]
        now = np.zeros(len(pending), dtype=bool)
        now[has_prev] = (prev_edge >= 0) & (p_id[pp[np.maximum(prev_edge, 0)]] == prev_pid)
        flagged[:] = False
        flagged[comp_of[now != cont]] = True
        if not flagged.any():
            return
        cont = now
        redo = np.flatnonzero(flagged[comp_of])
    raise RuntimeError("CLEAR matching did not settle")  # pragma: no cover - see above


def _predecessors(gts, g_id, proc, by_id, keys_by, n_proc) -> np.ndarray:
    """The reference detection of the same id in the previous processed frame of each of
    ``gts`` (-1: none); ``by_id``: reference rows by (id, processed frame), ``keys_by``
    their ascending keys ``id * n_proc + processed-frame rank``."""
    want = g_id[gts] * n_proc + proc[gts] - 1
    at = np.searchsorted(keys_by, want, side="right") - 1
    found = (proc[gts] > 0) & (at >= 0)
    found[found] = keys_by[at[found]] == want[found]
    return np.where(found, by_id[np.maximum(at, 0)], -1)


def _mostly_tracked(g_id, n_gid, m_gt) -> dict:
    """MT / PT / ML from each reference id's tracked ratio ``r`` = CLEAR-matched frames /
    frames present. TrackEval: MT ``r > 0.8``, PT ``0.2 <= r <= 0.8``, ML ``r < 0.2``;
    py-motmetrics: MT ``r >= 0.8``, PT ``0.2 <= r < 0.8``, ML the same (they differ only
    for ids tracked in exactly 80 % of their frames)."""
    present = np.bincount(g_id, minlength=n_gid)
    ratio = np.bincount(g_id[m_gt], minlength=n_gid)[present > 0] / present[present > 0]
    mt = int(np.count_nonzero(ratio > 0.8))
    pt = int(np.count_nonzero(ratio >= 0.2)) - mt
    mt_mm = int(np.count_nonzero(ratio >= 0.8))
    return {"mt": mt, "pt": pt, "ml": int(len(ratio)) - mt - pt, "mt_pymotmetrics": mt_mm,
            "pt_pymotmetrics": int(np.count_nonzero(ratio >= 0.2)) - mt_mm}


def _identity(pg, pp, ps, g_id, p_id, n_gt, n_pred, threshold,
              pair_keys: tuple[np.ndarray, np.ndarray]) -> dict:
    """Identity counts; ``pair_keys``: the pairs' id pairs (:func:`_pair_keys` of
    ``g_id[pg], p_id[pp]`` with ``n_b = p_id.max() + 1``)."""
    idtp = 0
    hit = ps >= threshold
    if hit.any():
        n_p = int(p_id.max()) + 1
        keys, inv = pair_keys  # the id pairs with a pair at the threshold, over all id pairs
        counts = np.bincount(inv[hit], minlength=len(keys))
        keys, counts = keys[counts > 0], counts[counts > 0].astype(np.float64)
        rows, r = np.unique(keys // n_p, return_inverse=True)
        cols, c = np.unique(keys % n_p, return_inverse=True)
        weight = np.zeros((len(rows), len(cols)))
        weight[r, c] = counts
        ri, ci = linear_sum_assignment(weight, maximize=True)
        idtp = int(round(weight[ri, ci].sum()))
    return {"idtp": idtp, "idfn": n_gt - idtp, "idfp": n_pred - idtp}


# --------------------------------------------------------------------------- public API

def clear_metrics(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred, pair_similarity,
                  threshold: float = 0.5, idsw: str = "last_matched") -> dict:
    """CLEAR-MOT of one sequence from candidate pairs (usable with any similarity).

    ``pair_*`` list the candidate pairs (indices into the reference and predicted
    detections of the same frame) and their similarity; a pair is matchable when
    ``similarity >= threshold - eps``. Returns ``mota, motp, idsw, frag, clr_tp, clr_fn,
    clr_fp`` (``MOTA = (TP - FP - IDSW) / (TP + FN)``, ``MOTP = mean similarity of
    matches``; see :mod:`trackverify.metrics.mot` for the matching).

    ``idsw`` chooses which identity switches count: ``"last_matched"`` (TrackEval; a match
    whose predicted id differs from the reference id's previous match, at any earlier
    frame) or ``"consecutive"`` (only those whose previous match is at frame ``frame - 1``,
    frame numbers as given). The matching, and every other count, is the same for both.
    """
    if idsw not in IDSW_RULES:
        raise ValueError(f"idsw must be one of {IDSW_RULES}, not {idsw!r}")
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    g_id, n_gid, _ = _codes(gt_id)
    p_id, _, _ = _codes(pred_id)
    ps = np.asarray(pair_similarity, dtype=np.float64)
    keep = ps > 0
    counts = _clear(gt_frame, pred_frame, g_id, p_id, n_gid,
                    np.asarray(pair_gt, dtype=np.int64)[keep],
                    np.asarray(pair_pred, dtype=np.int64)[keep], ps[keep], threshold, idsw)
    return _finish_clear(counts["clr_tp"], counts["clr_fn"], counts["clr_fp"], counts["idsw"],
                         counts["frag"], counts["motp_sum"])


def _finish_clear(tp, fn, fp, idsw, frag, motp_sum) -> dict:
    return {
        "mota": (tp - fp - idsw) / (tp + fn) if tp + fn else None,
        "motp": motp_sum / tp if tp else None,
        "idsw": int(idsw), "frag": int(frag),
        "clr_tp": int(tp), "clr_fn": int(fn), "clr_fp": int(fp),
    }


def combine(counts: list[SequenceCounts]) -> SequenceCounts:
    """Combined-sequence statistics, as TrackEval's ``combine_sequences``.

    HOTA sums TP / FN / FP per alpha and averages AssA, AssRe, AssPr and LocA weighted by
    each sequence's TP; CLEAR and Identity sum their counts.
    """
    tp = sum(c.hota_tp for c in counts)

    def weighted(name):
        return sum(getattr(c, name) * c.hota_tp for c in counts) / np.maximum(1.0, tp)

    loca = np.maximum(1e-10, sum(c.loca * c.hota_tp for c in counts)) / np.maximum(1e-10, tp)
    return SequenceCounts(
        n_gt=sum(c.n_gt for c in counts), n_pred=sum(c.n_pred for c in counts),
        hota_tp=tp, hota_fn=sum(c.hota_fn for c in counts),
        hota_fp=sum(c.hota_fp for c in counts), assa=weighted("assa"),
        assre=weighted("assre"), asspr=weighted("asspr"), loca=loca,
        **{k: sum(getattr(c, k) for c in counts)
           for k in ("clr_tp", "clr_fn", "clr_fp", "idsw", "frag", "motp_sum",
                     "idtp", "idfn", "idfp", "mt", "pt", "ml", "mt_pymotmetrics",
                     "pt_pymotmetrics")})


def finish(c: SequenceCounts) -> dict:
    """The reported metrics (lower-case keys, ``None`` where undefined; see module doc)."""
    tp, fn, fp = c.hota_tp, c.hota_fn, c.hota_fp
    detre = tp / np.maximum(1, tp + fn)
    detpr = tp / np.maximum(1, tp + fp)
    deta = tp / np.maximum(1, tp + fn + fp)
    hota = np.sqrt(deta * c.assa)
    any_det = c.n_gt + c.n_pred > 0
    any_match = bool(tp[0] > 0)

    def mean(values, defined):
        return float(np.mean(values)) if defined else None

    out = {
        "hota": mean(hota, any_det), "deta": mean(deta, any_det),
        "assa": mean(c.assa, any_match), "loca": mean(c.loca, any_match),
        "detre": mean(detre, c.n_gt > 0), "detpr": mean(detpr, c.n_pred > 0),
        "assre": mean(c.assre, any_match), "asspr": mean(c.asspr, any_match),
    }
    out.update(_finish_clear(c.clr_tp, c.clr_fn, c.clr_fp, c.idsw, c.frag, c.motp_sum))
    out.update({"mt": int(c.mt), "pt": int(c.pt), "ml": int(c.ml),
                "mt_pymotmetrics": int(c.mt_pymotmetrics),
                "pt_pymotmetrics": int(c.pt_pymotmetrics), "ml_pymotmetrics": int(c.ml)})
    idtp, idfn, idfp = c.idtp, c.idfn, c.idfp
    out.update({
        "idf1": 2 * idtp / (2 * idtp + idfp + idfn) if any_det else None,
        "idp": idtp / (idtp + idfp) if idtp + idfp else None,
        "idr": idtp / (idtp + idfn) if idtp + idfn else None,
        "idtp": int(idtp), "idfn": int(idfn), "idfp": int(idfp),
    })
    return out


def canonical_metrics(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred,
                      pair_similarity, threshold: float = 0.5) -> dict:
    """HOTA, CLEAR and Identity metrics of one sequence (see the module docstring)."""
    return finish(sequence_counts(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred,
                                  pair_similarity, threshold))
