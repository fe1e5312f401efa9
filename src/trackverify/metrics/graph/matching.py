"""Node matching between a reference and a predicted track graph.

Two rules, each returning the matched pairs ``(gt node, pred node)`` sorted by gt node:

- :func:`match_points`, one-to-one within each frame by distance in um: among matchings that
  use only pairs at distance ``d <= threshold``, the one minimising
  ``sum over matched pairs (d - threshold)``, i.e. each match saves ``threshold - d`` over
  leaving both points unmatched. This is traccuracy's ``PointMatcher`` objective (a
  Hungarian solve with a "no match" sink of cost ``threshold`` per reference point), solved
  here for all frames at once: a pair that is the only candidate of both its points is
  matched outright, the rest go to one sparse bipartite matching (scipy's
  ``min_weight_full_bipartite_matching``). A pair at exactly ``threshold`` is kept (the
  threshold is inclusive).
- :func:`match_masks`, the Cell Tracking Challenge rule: a reference label is matched to the
  predicted label covering *more than half* of its pixels in the same frame (so at most one
  per reference label; a predicted label may match several reference labels).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from trackverify.tables import lookup as _lookup
from trackverify.metrics.graph.tracks import points
from trackverify.metrics.mot import similarity_pairs
from trackverify.tables import unique_inverse


def candidate_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, threshold: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All same-frame pairs at Euclidean distance ``<= threshold``: ``(gi, pj, d)``."""
    gt_xyz, pred_xyz = points(gt_xyz, len(gt_frame)), points(pred_xyz, len(pred_frame))
    # The pairs closer than a reach just beyond the threshold, then cut exactly at it.
    reach = threshold * (1 + 1e-9) + 1e-12
    gi, pj, _ = similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, reach)
    d = np.sqrt(((gt_xyz[gi] - pred_xyz[pj]) ** 2).sum(axis=1))
    keep = d <= threshold
    return gi[keep], pj[keep], d[keep]


def match_points(gt_frame, gt_xyz, pred_frame, pred_xyz, threshold: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matching per frame by distance (see the module doc for the objective)."""
    gi, pj, d = candidate_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, threshold)
    if len(gi) == 0:
        return gi, pj
    # Components of the candidate graph that are a single pair are matched outright; the
    # rest are solved together (only reference points with a candidate take part, each
    # with a private "no match" sink column).
    rows, gi_local = unique_inverse(gi, int(gi.max()) + 1)
    cols, pj_local = unique_inverse(pj, int(pj.max()) + 1)
    n_r, n_c = len(rows), len(cols)
    alone = (np.bincount(gi_local, minlength=n_r)[gi_local] == 1) & \
        (np.bincount(pj_local, minlength=n_c)[pj_local] == 1)
    out_g, out_p = [gi[alone]], [pj[alone]]
    if not alone.all():
        gi_local, pj_local, d = gi_local[~alone], pj_local[~alone], d[~alone]
        rows_l, gi_local = unique_inverse(gi_local, n_r)
        cols_l, pj_local = unique_inverse(pj_local, n_c)
        n_r, n_c = len(rows_l), len(cols_l)
        offset = 1.0 + threshold  # every weight > 0 (scipy drops explicit zeros)
        sink = offset + threshold + 1e-12 * offset  # a pair at exactly the threshold is kept
        weight = np.r_[d + offset, np.full(n_r, sink)]
        r = np.r_[gi_local, np.arange(n_r)]
        c = np.r_[pj_local, n_c + np.arange(n_r)]
        graph = sparse.csr_matrix((weight, (r, c)), shape=(n_r, n_c + n_r))
        row_ind, col_ind = min_weight_full_bipartite_matching(graph)
        real = col_ind < n_c
        out_g.append(rows[rows_l[row_ind[real]]])
        out_p.append(cols[cols_l[col_ind[real]]])
    mg, mp = np.concatenate(out_g).astype(np.int64), np.concatenate(out_p).astype(np.int64)
    order = np.argsort(mg, kind="stable")
    return mg[order], mp[order]


def frame_overlaps(gt_image: np.ndarray, pred_image: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every overlapping pair of labels (> 0) of two label images of one frame:
    ``(gt_label, pred_label, overlap, gt_area, pred_area)`` in pixels, sorted by
    ``(gt_label, pred_label)``. Only the reference's foreground pixels are visited."""
    g = np.asarray(gt_image).ravel()
    p = np.asarray(pred_image).ravel()
    if g.shape != p.shape:
        raise ValueError(f"label images differ in shape: {np.shape(gt_image)} vs "
                         f"{np.shape(pred_image)}")
    fg = np.flatnonzero(g)
    gl = g[fg].astype(np.int64)
    pl = p[fg].astype(np.int64)
    n_g = int(gl.max(initial=0)) + 1
    gt_area = np.bincount(gl, minlength=n_g)
    both = pl > 0
    n_p = int(pl.max(initial=0)) + 1
    key, overlap = np.unique(gl[both] * n_p + pl[both], return_counts=True)
    g_lab, p_lab = key // n_p, key % n_p
    pf = p[p > 0].astype(np.int64)
    pred_area = np.bincount(pf, minlength=max(n_p, int(pf.max(initial=0)) + 1))
    return g_lab, p_lab, overlap, gt_area[g_lab], pred_area[p_lab]


def match_masks(gt_masks: np.ndarray, pred_masks: np.ndarray, gt_frame, gt_label,
                pred_frame, pred_label, first_frame: int = 0
                ) -> tuple[np.ndarray, np.ndarray]:
    """CTC matching of label images: gt node ``i`` (label ``gt_label[i]`` in frame
    ``gt_frame[i]``) is matched to pred node ``j`` when ``j``'s label covers more than half
    of ``i``'s pixels, i.e. ``2 * overlap > area``.

    ``gt_masks`` and ``pred_masks`` are stacks ``(frames, [z,] y, x)`` of integer labels
    (0 = background), stack index ``frame - first_frame``. Nodes whose label is absent from
    their frame's image are never matched.
    """
    gt_masks = np.asarray(gt_masks)
    pred_masks = np.asarray(pred_masks)
    if gt_masks.shape != pred_masks.shape:
        raise ValueError(f"label images differ in shape: {gt_masks.shape} vs "
                         f"{pred_masks.shape}")
    gt_label = np.asarray(gt_label, dtype=np.int64)
    pred_label = np.asarray(pred_label, dtype=np.int64)
    n_g = int(max(gt_masks.max(initial=0), gt_label.max(initial=0))) + 1
    n_p = int(max(pred_masks.max(initial=0), pred_label.max(initial=0))) + 1
    win_frame, win_gt, win_pred = [], [], []
    for t in range(gt_masks.shape[0]):  # one image at a time: memory stays one frame
        gl, pl, overlap, gt_area, _ = frame_overlaps(gt_masks[t], pred_masks[t])
        win = 2 * overlap > gt_area
        win_gt.append(gl[win])
        win_pred.append(pl[win])
        win_frame.append(np.full(int(win.sum()), t + first_frame, dtype=np.int64))
    win_frame = np.concatenate(win_frame) if win_frame else np.zeros(0, np.int64)
    win_gt = np.concatenate(win_gt) if win_gt else np.zeros(0, np.int64)
    win_pred = np.concatenate(win_pred) if win_pred else np.zeros(0, np.int64)
    # Labels -> nodes.
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    gi = _lookup(gt_frame * n_g + gt_label, win_frame * n_g + win_gt)
    pj = _lookup(pred_frame * n_p + pred_label, win_frame * n_p + win_pred)
    ok = (gi >= 0) & (pj >= 0)
    gi, pj = gi[ok], pj[ok]
    order = np.argsort(gi, kind="stable")
    return gi[order], pj[order]
