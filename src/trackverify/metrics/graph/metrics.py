"""Graph tracking metrics: the Cell Tracking Challenge AOGM / DET / TRA / LNK, division
precision / recall / F1 with a frame buffer, and CHOTA.

Two definitions of the AOGM counts (``definition=``): ``"ctc"``, the Cell Tracking Challenge's
own evaluation (as py-ctcmetrics 1.3.3 computes it), and ``"traccuracy"`` (0.4.3:
``CTCMetrics``, ``DivisionMetrics``, ``CHOTAMetric``); each shown equal to its reference to
1e-9 in ``tests/graph``. Inputs: a reference graph ``G`` and a predicted
graph ``P`` (:class:`trackverify.metrics.graph.tracks.TrackGraph`) and a matching ``(mg, mp)`` of
their nodes (each reference node at most once; :mod:`trackverify.metrics.graph.matching`).
Undefined values are ``None``.

AOGM error counts (CTC)
    A predicted node matched to one reference node is a true positive (TP); matched to
    ``k >= 2``, a *non-split* node (NS); unmatched, a false positive (FP node). An unmatched
    reference node is a false negative (FN node). Among predicted edges whose two ends are
    TP: an edge whose matched reference pair is not a reference edge is an FP edge (the
    Challenge's ED); one that is, but of the other kind, is a wrong-semantics edge (WS, the
    Challenge's EC). A reference edge is an FN edge (EA) unless both ends are matched to TP
    nodes joined by a predicted edge. The two definitions differ in two places:

    - ``ctc``: a non-split node counts ``k - 1`` (the splits that correct it); an edge is a
      *parent link* when the track label changes across it (every parent -> child link,
      also to a single child), else a track link;
    - ``traccuracy``: a non-split node counts 1; an edge is *intertrack* when it leaves a
      division or enters a merge (a single-child parent link is a track link).

``AOGM = 5 NS + 1 FP + 10 FN + 1 FP_e + 1.5 FN_e + 1 WS`` (CTC weights),
``AOGM_0 = 10 |V_G| + 1.5 |E_G|``; ``TRA = 1 - min(AOGM, AOGM_0) / AOGM_0``;
``DET = 1 - min(AOGM_D, 10 |V_G|) / (10 |V_G|)`` with ``AOGM_D = 5 NS + FP + 10 FN``;
``LNK = 1 - min(AOGM_A, 1.5 |E_G|) / (1.5 |E_G|)`` with ``AOGM_A = FP_e + 1.5 FN_e + WS``.

Divisions (one-to-one matchings only)
    A division is a node with two or more successors. A reference division is TP when its
    match is a predicted division and exactly two of its outgoing edges are matched edges
    (both ends matched, the predicted edge present); *wrong children* (WC) when its match
    is a division otherwise; FN when unmatched or matched to a non-division. Predicted
    divisions not matched to a reference division are FP. With a frame buffer ``b``, an FP
    and an FN division ``dt = |t_fp - t_fn|`` frames apart (``0 < dt <= b``) become a TP when
    the earlier one's node is matched to the later one's ancestor ``dt`` edges back, and each
    daughter branch of the earlier division reaches (along its chain, up to the next
    division) a matched node whose match descends from that ancestor. Then
    ``recall = TP / |div_G|``, ``precision = TP / |div_P|``, ``F1 = 2 P R / (P + R)``,
    mitotic branching correctness ``MBC = TP / (TP + FP + FN + WC) = TP / (FP + |div_G|)``.
    (traccuracy 0.4.3 reports the buffer-0 MBC for every buffer; here MBC uses that
    buffer's counts.)

CHOTA (Kaiser et al. 2024)
    Tracklets are the components left after removing division edges; a tracklet's
    trajectory is itself with all its ancestor and descendant tracklets. With ``O[i, j]`` the
    matched node pairs of reference tracklet ``i`` and predicted tracklet ``j``, ``fn_i`` /
    ``fp_j`` the unmatched nodes, ``R`` the trajectory membership:
    ``TPA = (R_G O R_P^T)[i, j]``, ``FNA = (R_G (O 1 + fn))_i - TPA``,
    ``FPA = (R_P (O^T 1 + fp))_j - TPA``;
    ``CHOTA = sqrt(sum_{O[i,j] > 0} O[i, j] TPA / (TPA + FPA + FNA) / (FP + FN + |matches|))``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from trackverify.metrics.graph.tracks import TrackGraph
from trackverify.tables import lookup

CTC_WEIGHTS = {"ns": 5.0, "fp": 1.0, "fn": 10.0, "edge_fp": 1.0, "edge_fn": 1.5, "ws": 1.0}


def _maps(gt: TrackGraph, pred: TrackGraph, mg, mp):
    """Per-pred match counts, and the TP maps pred -> gt and gt -> pred (-1 elsewhere)."""
    mg = np.asarray(mg, dtype=np.int64)
    mp = np.asarray(mp, dtype=np.int64)
    if len(mg) and np.bincount(mg).max() > 1:
        raise ValueError("a reference node is matched twice")
    per_pred = np.bincount(mp, minlength=pred.n_nodes)
    single = per_pred[mp] == 1
    gt_of_pred = np.full(pred.n_nodes, -1, dtype=np.int64)
    gt_of_pred[mp[single]] = mg[single]
    pred_of_gt = np.full(gt.n_nodes, -1, dtype=np.int64)
    pred_of_gt[mg[single]] = mp[single]
    return mg, mp, per_pred, gt_of_pred, pred_of_gt


def _edge_index(graph: TrackGraph, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Index of edge ``s -> t`` in ``graph`` (-1 when absent)."""
    n = max(graph.n_nodes, 1)
    return lookup(graph.src * n + graph.dst, s * n + t)


DEFINITIONS = ("ctc", "traccuracy")


def check_definition(definition: str) -> str:
    if definition not in DEFINITIONS:
        raise ValueError(f"definition must be one of {DEFINITIONS}, got {definition!r}")
    return definition


def _parent_link(graph: TrackGraph) -> np.ndarray:
    """The Challenge's edge semantics: the track label changes across the edge."""
    return graph.track[graph.src] != graph.track[graph.dst]


def _intertrack(graph: TrackGraph) -> np.ndarray:
    in_degree = np.bincount(graph.dst, minlength=graph.n_nodes)
    return (graph.out_degree[graph.src] >= 2) | (in_degree[graph.dst] >= 2)


def _score(errors: float, zero: float):
    return None if zero == 0 else 1.0 - min(errors, zero) / zero


def ctc_metrics(gt: TrackGraph, pred: TrackGraph, mg, mp, definition: str = "traccuracy",
                penalize_extra_detections: bool = True) -> dict:
    """AOGM error counts, AOGM, DET, TRA and LNK under ``definition`` (``"ctc"`` or
    ``"traccuracy"``; see the module doc). ``penalize_extra_detections=False`` is the
    Challenge's setting for sparse references: FP nodes are still counted (``fp_nodes``)
    but weigh 0 in AOGM, DET and TRA."""
    semantics = _parent_link if check_definition(definition) == "ctc" else _intertrack
    mg, mp, per_pred, gt_of_pred, pred_of_gt = _maps(gt, pred, mg, mp)
    matched = np.zeros(gt.n_nodes, dtype=bool)
    matched[mg] = True
    split = per_pred >= 2
    ns = int((per_pred[split] - 1).sum() if definition == "ctc" else np.count_nonzero(split))
    fp = int(np.count_nonzero(per_pred == 0))
    fn = int(gt.n_nodes - np.count_nonzero(matched))
    both = (gt_of_pred[pred.src] >= 0) & (gt_of_pred[pred.dst] >= 0)
    at = _edge_index(gt, gt_of_pred[pred.src[both]], gt_of_pred[pred.dst[both]])
    fp_e = int(np.count_nonzero(at < 0))
    ws = int(np.count_nonzero(semantics(gt)[at[at >= 0]] != semantics(pred)[both][at >= 0]))
    ps, pt = pred_of_gt[gt.src], pred_of_gt[gt.dst]
    ok = (ps >= 0) & (pt >= 0)
    found = np.zeros(gt.n_edges, dtype=bool)
    found[ok] = _edge_index(pred, ps[ok], pt[ok]) >= 0
    fn_e = int(gt.n_edges - np.count_nonzero(found))
    w = CTC_WEIGHTS
    w_fp = w["fp"] if penalize_extra_detections else 0.0
    aogm_d = w["ns"] * ns + w_fp * fp + w["fn"] * fn
    aogm_a = w["edge_fp"] * fp_e + w["edge_fn"] * fn_e + w["ws"] * ws
    zero_d = w["fn"] * gt.n_nodes
    zero_a = w["edge_fn"] * gt.n_edges
    return {
        "aogm": aogm_d + aogm_a, "det": _score(aogm_d, zero_d), "tra": _score(aogm_d + aogm_a,
                                                                         zero_d + zero_a),
        "lnk": _score(aogm_a, zero_a),
        "ns_nodes": ns, "fp_nodes": fp, "fn_nodes": fn,
        "fp_edges": fp_e, "fn_edges": fn_e, "ws_edges": ws,
        "gt_nodes": int(gt.n_nodes), "gt_edges": int(gt.n_edges), "aogm_0": zero_d + zero_a,
    }


def is_one_to_one(mg, mp) -> bool:
    """No node matched twice on either side."""
    return not len(mg) or (np.bincount(np.asarray(mg)).max() <= 1
                           and np.bincount(np.asarray(mp)).max() <= 1)


class _Walker:
    """Predecessor / successor walks on one graph (short, per division error)."""

    def __init__(self, graph: TrackGraph):
        self.frame = graph.frame
        self.pred = graph.predecessor
        self.indptr, self.succ = graph.successors()

    def successors(self, node: int) -> np.ndarray:
        return self.succ[self.indptr[node]:self.indptr[node + 1]]

    def back(self, node: int, steps: int) -> int:
        """The ancestor ``steps`` edges back, -1 when the chain is shorter."""
        for _ in range(steps):
            node = int(self.pred[node])
            if node < 0:
                return -1
        return node

    def reaches(self, source: int, target: int) -> bool:
        """A path ``source -> ... -> target`` exists (every node has one predecessor)."""
        while target >= 0 and self.frame[target] >= self.frame[source]:
            if target == source:
                return True
            target = int(self.pred[target])
        return False


def _shifted(early: _Walker, late: _Walker, early_node: int, late_anchor: int,
             early_matched: np.ndarray, early_to_late: np.ndarray) -> bool:
    """traccuracy's shifted-division test: each daughter chain of the early division hits a
    matched node whose match descends from ``late_anchor`` (the late division's ancestor)."""
    correct = 0
    for daughter in early.successors(early_node):
        node = int(daughter)
        while True:
            if early_matched[node] and late.reaches(late_anchor, int(early_to_late[node])):
                correct += 1
                break
            nxt = early.successors(node)
            if len(nxt) != 1:
                break
            node = int(nxt[0])
    return correct == 2


def division_metrics(gt: TrackGraph, pred: TrackGraph, mg, mp, frame_buffer: int = 0
                     ) -> dict:
    """Division counts and scores for each buffer ``0..frame_buffer``:
    ``{"frame_buffer_0": {...}, ...}`` (see the module doc). Needs a one-to-one matching."""
    mg = np.asarray(mg, dtype=np.int64)
    mp = np.asarray(mp, dtype=np.int64)
    if not is_one_to_one(mg, mp):
        raise ValueError("division metrics need a one-to-one matching")
    pred_of_gt = np.full(gt.n_nodes, -1, dtype=np.int64)
    pred_of_gt[mg] = mp
    gt_of_pred = np.full(pred.n_nodes, -1, dtype=np.int64)
    gt_of_pred[mp] = mg
    # Matched reference edges (both ends matched, the predicted edge present).
    ps, pt = pred_of_gt[gt.src], pred_of_gt[gt.dst]
    ok = (ps >= 0) & (pt >= 0)
    tp_edge = np.zeros(gt.n_edges, dtype=bool)
    tp_edge[ok] = _edge_index(pred, ps[ok], pt[ok]) >= 0
    good_children = np.bincount(gt.src[tp_edge], minlength=gt.n_nodes)
    div_g, div_p = gt.divisions(), pred.divisions()
    is_div_p = pred.out_degree >= 2
    partner = pred_of_gt[div_g]
    hit = partner >= 0
    hit[hit] = is_div_p[partner[hit]]  # (no prediction: nothing is indexed)
    tp = hit & (good_children[div_g] == 2)
    n_tp, n_wc = int(tp.sum()), int((hit & ~tp).sum())
    fn_nodes = div_g[~hit]
    fp_nodes = np.setdiff1d(div_p, partner[hit])
    n_gt, n_pred = len(div_g), len(div_p)
    out = {"frame_buffer_0": _division_scores(n_tp, len(fp_nodes), len(fn_nodes), n_wc,
                                              n_gt, n_pred)}
    if frame_buffer < 1 or len(fp_nodes) == 0 or len(fn_nodes) == 0:
        for b in range(1, frame_buffer + 1):
            out[f"frame_buffer_{b}"] = dict(out["frame_buffer_0"])
        return out
    walk_g, walk_p = _Walker(gt), _Walker(pred)
    matched_g, matched_p = pred_of_gt >= 0, gt_of_pred >= 0
    fixed_at_fp = np.zeros(len(fp_nodes), dtype=np.int64)  # buffer that corrected it, 0 = none
    fixed_fn = np.zeros(len(fn_nodes), dtype=bool)
    t_fp, t_fn = pred.frame[fp_nodes], gt.frame[fn_nodes]
    for b in range(1, frame_buffer + 1):
        for a in range(len(fp_nodes)):
            if fixed_at_fp[a]:
                continue
            fp_node = int(fp_nodes[a])
            near = np.flatnonzero((np.abs(t_fn - t_fp[a]) <= b) & (t_fn != t_fp[a]) & ~fixed_fn)
            for c in near:
                fn_node = int(fn_nodes[c])
                dt = int(t_fn[c] - t_fp[a])
                if dt > 0:  # the predicted division is early
                    anchor = walk_g.back(fn_node, dt)
                    good = anchor >= 0 and pred_of_gt[anchor] == fp_node and _shifted(
                        walk_p, walk_g, fp_node, anchor, matched_p, gt_of_pred)
                else:  # the reference division is early
                    anchor = walk_p.back(fp_node, -dt)
                    good = anchor >= 0 and gt_of_pred[anchor] == fn_node and _shifted(
                        walk_g, walk_p, fn_node, anchor, matched_g, pred_of_gt)
                if good:
                    fixed_at_fp[a] = b
                    fixed_fn[c] = True
                    break
        shifted = int(np.count_nonzero(fixed_at_fp))
        out[f"frame_buffer_{b}"] = _division_scores(
            n_tp + shifted, len(fp_nodes) - shifted, len(fn_nodes) - shifted, n_wc, n_gt, n_pred)
    return out


def _division_scores(tp: int, fp: int, fn: int, wc: int, n_gt: int, n_pred: int) -> dict:
    recall = tp / n_gt if n_gt else None
    precision = tp / n_pred if n_pred else None
    f1 = (2 * precision * recall / (precision + recall)
          if recall is not None and precision is not None and precision + recall > 0 else None)
    return {"division_recall": recall, "division_precision": precision, "division_f1": f1,
            "mitotic_branching_correctness": tp / (fp + n_gt) if fp + n_gt else None,
            "gt_divisions": int(n_gt), "pred_divisions": int(n_pred), "tp_divisions": int(tp),
            "fp_divisions": int(fp), "fn_divisions": int(fn), "wc_divisions": int(wc)}


def tracklets(graph: TrackGraph) -> tuple[np.ndarray, np.ndarray]:
    """Each node's tracklet code, and each tracklet's parent tracklet (-1 for none).

    Tracklets are the components without division edges: a track joins its parent's
    tracklet when it is the parent's only child."""
    parent = graph.track_parent
    n_t = len(parent)
    children = np.bincount(parent[parent >= 0], minlength=n_t)
    up = np.arange(n_t)
    joins = (parent >= 0) & (children[np.maximum(parent, 0)] == 1)
    up[joins] = parent[joins]
    while True:  # pointer jumping to each chain's root
        nxt = up[up]
        if np.array_equal(nxt, up):
            break
        up = nxt
    code, roots = np.unique(up, return_inverse=True)
    roots = roots.astype(np.int64)
    tracklet_parent = np.full(len(code), -1, dtype=np.int64)
    splits = (parent >= 0) & ~joins
    tracklet_parent[roots[splits]] = roots[parent[splits]]
    return roots[graph.track], tracklet_parent


def _trajectories(tracklet_parent: np.ndarray) -> sparse.csr_matrix:
    """``R[i, a] = 1`` when ``a`` is ``i``, an ancestor or a descendant of ``i``."""
    n = len(tracklet_parent)
    rows, cols = [np.arange(n)], [np.arange(n)]
    node, anc = np.arange(n), tracklet_parent.copy()
    while True:
        has = anc >= 0
        if not has.any():
            break
        node, anc = node[has], anc[has]
        rows += [node, anc]
        cols += [anc, node]
        anc = tracklet_parent[anc]
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n))


def chota(gt: TrackGraph, pred: TrackGraph, mg, mp) -> dict:
    """CHOTA (see the module doc); any matching (one-to-one or not)."""
    mg = np.asarray(mg, dtype=np.int64)
    mp = np.asarray(mp, dtype=np.int64)
    tg, parent_g = tracklets(gt)
    tp, parent_p = tracklets(pred)
    n_g, n_p = len(parent_g), len(parent_p)
    unmatched_g = np.ones(gt.n_nodes, dtype=bool)
    unmatched_g[mg] = False
    unmatched_p = np.ones(pred.n_nodes, dtype=bool)
    unmatched_p[mp] = False
    fn = np.bincount(tg[unmatched_g], minlength=n_g).astype(np.float64)
    fp = np.bincount(tp[unmatched_p], minlength=n_p).astype(np.float64)
    union = fp.sum() + fn.sum() + len(mg)
    if union == 0:
        return {"chota": None}
    overlap = sparse.csr_matrix((np.ones(len(mg)), (tg[mg], tp[mp])), shape=(n_g, n_p))
    overlap.sum_duplicates()
    r_g, r_p = _trajectories(parent_g), _trajectories(parent_p)
    gt_sum = r_g @ (np.asarray(overlap.sum(axis=1)).ravel() + fn)
    pred_sum = r_p @ (np.asarray(overlap.sum(axis=0)).ravel() + fp)
    tpa_all = (r_g @ overlap @ r_p.T).tocsr()
    o = overlap.tocoo()
    tpa = np.asarray(tpa_all[o.row, o.col]).ravel()
    a_sigma = float(np.sum(o.data * tpa / (gt_sum[o.row] + pred_sum[o.col] - tpa)))
    return {"chota": float(np.sqrt(a_sigma / union))}
