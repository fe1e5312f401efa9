"""Canonical multi-object tracking metrics: HOTA, CLEAR (MOTA) and Identity (IDF1).

The definitions are TrackEval's (``trackeval.metrics.HOTA``, ``CLEAR``, ``Identity``),
reproduced to 1e-9 and shown equal to TrackEval and py-motmetrics in ``tests/mot``. They are
reported *beside* the oracle diagnostics of :mod:`trackverify.associate`, never instead.

Data model (one sequence = one recording). Reference ("gt") detections carry a frame and a
reference id; predicted detections carry a frame and a predicted id. Similarities are given
sparsely as *candidate pairs* ``(gt index, pred index, similarity)`` with ``similarity > 0``
and both detections in the same frame; every other pair has similarity 0. For points,
:func:`similarity_pairs` gives ``s = max(0, 1 - d / zero_distance)``.

Each per-frame assignment of TrackEval is a maximum-weight matching, and a maximum-weight
matching decomposes over the connected components of the frame's candidate graph. So the
core solves everything in bulk: a component with one edge is matched outright, a star (one
detection on one side) takes its best edge, and only components with at least two
detections on both sides go to a Hungarian solve. CLEAR's preference for continuing matches
makes frames depend on the previous frame; components whose previous-frame matches are
known are solved together, round after round.

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
    ``Frag`` = sum over reference ids of (runs of matched frames - 1).
Identity
    ``C[g, p]`` = frames where ``s >= threshold`` (no eps, as TrackEval); ``IDTP`` = weight of a
    maximum-weight one-to-one assignment of ids on ``C``; ``IDFN = n_gt - IDTP``,
    ``IDFP = n_pred - IDTP``; ``IDP = IDTP / (IDTP + IDFP)``, ``IDR = IDTP / (IDTP + IDFN)``,
    ``IDF1 = 2 IDTP / (2 IDTP + IDFP + IDFN)``.

Choices where the reference implementations disagree or carry a quirk (docs/metrics.md):

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

ALPHAS = np.arange(0.05, 0.99, 0.05)  # TrackEval's array_labels, bit for bit
EPS = float(np.finfo(float).eps)
CONTINUATION_BONUS = 1000.0
METRICS = ("hota", "deta", "assa", "loca", "detre", "detpr", "assre", "asspr",
           "mota", "motp", "idsw", "frag", "idf1", "idp", "idr")
COUNTS = ("clr_tp", "clr_fn", "clr_fp", "idtp", "idfn", "idfp")


# --------------------------------------------------------------------------- similarities

def similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, zero_distance: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate pairs of points in the same frame closer than ``zero_distance``.

    Returns ``(gt index, pred index, similarity)`` with ``similarity = max(0, 1 - d /
    zero_distance) > 0`` and ``d`` the Euclidean distance, sorted by (gt, pred).
    """
    from scipy.spatial import cKDTree

    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    gt_xyz = np.asarray(gt_xyz, dtype=np.float64).reshape(len(gt_frame), -1)
    pred_xyz = np.asarray(pred_xyz, dtype=np.float64).reshape(len(pred_frame), -1)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))
    if len(gt_frame) == 0 or len(pred_frame) == 0:
        return empty
    # One tree over (coordinates, frame * K): points of different frames are > K apart.
    both = np.concatenate([gt_xyz, pred_xyz])
    span = float(both.max() - both.min()) if both.size else 0.0
    k = 2.0 * (span + zero_distance) + 1.0
    tree_g = cKDTree(np.column_stack([gt_xyz, gt_frame * k]))
    tree_p = cKDTree(np.column_stack([pred_xyz, pred_frame * k]))
    found = tree_g.sparse_distance_matrix(tree_p, zero_distance, output_type="ndarray")
    gi = found["i"].astype(np.int64)
    pj = found["j"].astype(np.int64)
    same = gt_frame[gi] == pred_frame[pj]
    gi, pj = gi[same], pj[same]
    # Recompute the distance exactly as sqrt(sum of squared differences), axis by axis.
    d = np.sqrt(((gt_xyz[gi] - pred_xyz[pj]) ** 2).sum(axis=1))
    sim = np.maximum(0.0, 1.0 - d / zero_distance)
    keep = sim > 0
    gi, pj, sim = gi[keep], pj[keep], sim[keep]
    order = np.lexsort((pj, gi))
    return gi[order], pj[order], sim[order]


# --------------------------------------------------------------------------- matching

def _max_weight_matching(pg: np.ndarray, pp: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Maximum-weight matching of a bipartite graph given by its edges (all ``w > 0``).

    Returns a boolean mask over the edges. Ties: smaller partner index first (stars);
    scipy's order (rows and columns in index order) in larger components.
    """
    n = len(pg)
    matched = np.zeros(n, dtype=bool)
    if n == 0:
        return matched
    g_codes = np.unique(pg, return_inverse=True)[1]
    p_codes = np.unique(pp, return_inverse=True)[1]
    n_g = int(g_codes.max()) + 1
    graph = coo_matrix((np.ones(n), (g_codes, p_codes + n_g)),
                       shape=(n_g + int(p_codes.max()) + 1,) * 2)
    _, labels = connected_components(graph, directed=False)
    comp = labels[g_codes]
    n_comp = int(comp.max()) + 1
    # Distinct detections per component on each side.
    gt_in = np.bincount(np.unique(comp * (n_g + 1) + g_codes) // (n_g + 1), minlength=n_comp)
    n_p = int(p_codes.max()) + 1
    pr_in = np.bincount(np.unique(comp * (n_p + 1) + p_codes) // (n_p + 1), minlength=n_comp)
    star = (gt_in[comp] == 1) | (pr_in[comp] == 1)
    # Stars (including single edges): the best edge; ties -> smaller partner index.
    partner = np.where(gt_in[comp] == 1, pp, pg)
    idx = np.flatnonzero(star)
    if len(idx):
        order = idx[np.lexsort((partner[idx], -w[idx], comp[idx]))]
        first = np.r_[True, comp[order][1:] != comp[order][:-1]]
        matched[order[first]] = True
    # General components: Hungarian on each.
    idx = np.flatnonzero(~star)
    if len(idx):
        idx = idx[np.argsort(comp[idx], kind="stable")]
        cuts = np.flatnonzero(np.diff(comp[idx])) + 1
        for block in np.split(idx, cuts):
            rows, r = np.unique(pg[block], return_inverse=True)
            cols, c = np.unique(pp[block], return_inverse=True)
            weight = np.zeros((len(rows), len(cols)))
            edge = np.full((len(rows), len(cols)), -1, dtype=np.int64)
            weight[r, c] = w[block]
            edge[r, c] = block
            ri, ci = linear_sum_assignment(weight, maximize=True)
            chosen = edge[ri, ci]
            matched[chosen[chosen >= 0]] = True
    return matched


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
    clear_matches: tuple[np.ndarray, np.ndarray] = field(default=None, repr=False)


def _codes(values) -> tuple[np.ndarray, int]:
    values = np.asarray(values)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), 0
    uniq, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), len(uniq)


def sequence_counts(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred, pair_similarity,
                    threshold: float = 0.5) -> SequenceCounts:
    """HOTA, CLEAR and Identity statistics of one sequence.

    ``gt_frame``/``gt_id`` describe the reference detections, ``pred_frame``/``pred_id`` the
    predicted ones (each id at most once per frame); ``pair_*`` are the candidate pairs
    (indices into those arrays; similarity in (0, 1]; same frame). ``threshold`` is the
    CLEAR / Identity similarity threshold. See the module docstring for the definitions.
    """
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    g_id, n_gid = _codes(gt_id)
    p_id, n_pid = _codes(pred_id)
    pg = np.asarray(pair_gt, dtype=np.int64)
    pp = np.asarray(pair_pred, dtype=np.int64)
    ps = np.asarray(pair_similarity, dtype=np.float64)
    if len(pg) and np.any(gt_frame[pg] != pred_frame[pp]):
        raise ValueError("candidate pairs must join detections of the same frame")
    keep = ps > 0
    pg, pp, ps = pg[keep], pp[keep], ps[keep]
    n_gt, n_pred = len(gt_frame), len(pred_frame)
    gt_count = np.bincount(g_id, minlength=n_gid).astype(np.float64)
    pr_count = np.bincount(p_id, minlength=n_pid).astype(np.float64)

    hota = _hota(pg, pp, ps, g_id, p_id, n_gid, n_pid, gt_count, pr_count, n_gt, n_pred)
    clear = _clear(gt_frame, pred_frame, g_id, p_id, n_gid, pg, pp, ps, threshold)
    ident = _identity(pg, pp, ps, g_id, p_id, n_gt, n_pred, threshold)
    return SequenceCounts(n_gt=n_gt, n_pred=n_pred, **hota, **clear, **ident)


def _pair_keys(a: np.ndarray, b: np.ndarray, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique id-pair keys and the inverse index of each element."""
    keys, inverse = np.unique(a * max(n_b, 1) + b, return_inverse=True)
    return keys, inverse


def _hota(pg, pp, ps, g_id, p_id, n_gid, n_pid, gt_count, pr_count, n_gt, n_pred) -> dict:
    n_alpha = len(ALPHAS)
    tp = np.zeros(n_alpha)
    loca_sum = np.zeros(n_alpha)
    assa = np.zeros(n_alpha)
    assre = np.zeros(n_alpha)
    asspr = np.zeros(n_alpha)
    if n_gt and n_pred and len(pg):
        rowsum = np.bincount(pg, weights=ps, minlength=n_gt)
        colsum = np.bincount(pp, weights=ps, minlength=n_pred)
        denom = colsum[pp] + rowsum[pg] - ps
        sim_iou = np.where(denom > 0 + EPS, ps / np.where(denom > 0, denom, 1.0), 0.0)
        gi, pi = g_id[pg], p_id[pp]
        keys, inv = _pair_keys(gi, pi, n_pid)
        potential = np.bincount(inv, weights=sim_iou, minlength=len(keys))
        kg, kp = keys // max(n_pid, 1), keys % max(n_pid, 1)
        align = potential / (gt_count[kg] + pr_count[kp] - potential)
        weight = align[inv] * ps
        pos = weight > 0
        matched = np.zeros(len(pg), dtype=bool)
        matched[np.flatnonzero(pos)[_max_weight_matching(pg[pos], pp[pos], weight[pos])]] = True
        ms, m_inv = ps[matched], inv[matched]
        # Number of alphas at which each match counts: alpha_a - eps <= s.
        n_pass = np.searchsorted(ALPHAS - EPS, ms, side="right")
        hist = np.bincount(m_inv * (n_alpha + 1) + n_pass,
                           minlength=len(keys) * (n_alpha + 1)).reshape(len(keys), n_alpha + 1)
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


def _lookup(sorted_keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Position of each query in ``sorted_keys``, or -1."""
    if len(sorted_keys) == 0:
        return np.full(len(query), -1, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, query)
    pos_c = np.minimum(pos, len(sorted_keys) - 1)
    return np.where(sorted_keys[pos_c] == query, pos_c, -1)


def _clear(gt_frame, pred_frame, g_id, p_id, n_gid, pg, pp, ps, threshold) -> dict:
    n_gt, n_pred = len(gt_frame), len(pred_frame)
    # Processed frames: at least one reference and one predicted detection.
    frames = np.intersect1d(gt_frame, pred_frame)
    n_proc = len(frames)
    cand = ps >= threshold - EPS
    cg, cp, cs = pg[cand], pp[cand], ps[cand]
    edge_of_gt = np.full(n_gt, -1, dtype=np.int64)  # candidate edge matched to each gt det
    if n_proc and len(cg):
        proc = np.full(n_gt, -1, dtype=np.int64)
        in_proc = np.isin(gt_frame, frames)
        proc[in_proc] = np.searchsorted(frames, gt_frame[in_proc])
        # Each gt detection's detection of the same id in the previous processed frame.
        key = g_id * (n_proc + 1) + proc
        order = np.argsort(key, kind="stable")
        skeys = key[order]
        prev_pos = _lookup(skeys, key - 1)
        prev_det = np.where(in_proc & (proc > 0) & (prev_pos >= 0),
                            order[np.maximum(prev_pos, 0)], -1)
        # Components of the candidate graph (all within one frame by construction).
        n_nodes = n_gt + n_pred
        graph = coo_matrix((np.ones(len(cg)), (cg, cp + n_gt)), shape=(n_nodes, n_nodes))
        _, labels = connected_components(graph, directed=False)
        comp = labels[cg]
        edges_per = np.bincount(comp, minlength=labels.max() + 1)
        single = edges_per[comp] == 1
        edge_of_gt[cg[single]] = np.flatnonzero(single)
        pending = np.flatnonzero(~single)
        resolved = np.ones(n_gt, dtype=bool)
        resolved[cg[pending]] = False
        while len(pending):
            # A component is ready when the previous-frame matches of its ids are known.
            dep = prev_det[cg[pending]]
            blocked = (dep >= 0) & ~resolved[np.maximum(dep, 0)]
            comp_blocked = np.zeros(labels.max() + 1, dtype=bool)
            comp_blocked[comp[pending][blocked]] = True
            ready = pending[~comp_blocked[comp[pending]]]
            if len(ready) == 0:  # pragma: no cover - dependencies point to earlier frames
                raise RuntimeError("CLEAR matching could not be ordered")
            dep = prev_det[cg[ready]]
            prev_edge = np.where(dep >= 0, edge_of_gt[np.maximum(dep, 0)], -1)
            prev_pid = np.where(prev_edge >= 0, p_id[cp[np.maximum(prev_edge, 0)]], -1)
            cont = prev_pid == p_id[cp[ready]]
            w = CONTINUATION_BONUS * cont + cs[ready]
            chosen = ready[_max_weight_matching(cg[ready], cp[ready], w)]
            edge_of_gt[cg[chosen]] = chosen
            resolved[cg[ready]] = True
            pending = pending[comp_blocked[comp[pending]]]
    m_gt = np.flatnonzero(edge_of_gt >= 0)
    m_pred = cp[edge_of_gt[m_gt]]
    tp = len(m_gt)
    motp_sum = 0.0
    idsw = frag = 0
    if tp:
        motp_sum = float(cs[edge_of_gt[m_gt]].sum())
        # IDSW: a match whose predicted id differs from the id's previous match.
        order = np.lexsort((gt_frame[m_gt], g_id[m_gt]))
        gs, ps_id = g_id[m_gt][order], p_id[m_pred][order]
        idsw = int(np.count_nonzero((gs[1:] == gs[:-1]) & (ps_id[1:] != ps_id[:-1])))
        # Frag: runs of matches over consecutive processed frames, per id, minus one.
        proc_m = np.searchsorted(frames, gt_frame[m_gt])[order]
        continues = np.r_[False, (gs[1:] == gs[:-1]) & (proc_m[1:] == proc_m[:-1] + 1)]
        runs = np.bincount(gs[~continues], minlength=n_gid)
        frag = int(np.clip(runs - 1, 0, None).sum())
    return {"clr_tp": tp, "clr_fn": n_gt - tp, "clr_fp": n_pred - tp, "idsw": idsw,
            "frag": frag, "motp_sum": motp_sum, "clear_matches": (m_gt, m_pred)}


def _identity(pg, pp, ps, g_id, p_id, n_gt, n_pred, threshold) -> dict:
    idtp = 0
    hit = ps >= threshold
    if hit.any():
        gi, pi = g_id[pg[hit]], p_id[pp[hit]]
        n_p = int(p_id.max()) + 1
        keys, inv = _pair_keys(gi, pi, n_p)
        counts = np.bincount(inv, minlength=len(keys)).astype(np.float64)
        rows, r = np.unique(keys // n_p, return_inverse=True)
        cols, c = np.unique(keys % n_p, return_inverse=True)
        weight = np.zeros((len(rows), len(cols)))
        weight[r, c] = counts
        ri, ci = linear_sum_assignment(weight, maximize=True)
        idtp = int(round(weight[ri, ci].sum()))
    return {"idtp": idtp, "idfn": n_gt - idtp, "idfp": n_pred - idtp}


# --------------------------------------------------------------------------- public API

def clear_metrics(gt_frame, gt_id, pred_frame, pred_id, pair_gt, pair_pred, pair_similarity,
                  threshold: float = 0.5) -> dict:
    """CLEAR-MOT of one sequence from candidate pairs (usable with any similarity).

    ``pair_*`` list the candidate pairs (indices into the reference and predicted
    detections of the same frame) and their similarity; a pair is matchable when
    ``similarity >= threshold - eps``. Returns ``mota, motp, idsw, frag, clr_tp, clr_fn,
    clr_fp`` (``MOTA = (TP - FP - IDSW) / (TP + FN)``, ``MOTP = mean similarity of
    matches``; see :mod:`trackverify.mot` for the matching).
    """
    gt_frame = np.asarray(gt_frame, dtype=np.int64)
    pred_frame = np.asarray(pred_frame, dtype=np.int64)
    g_id, n_gid = _codes(gt_id)
    p_id, _ = _codes(pred_id)
    ps = np.asarray(pair_similarity, dtype=np.float64)
    keep = ps > 0
    counts = _clear(gt_frame, pred_frame, g_id, p_id, n_gid,
                    np.asarray(pair_gt, dtype=np.int64)[keep],
                    np.asarray(pair_pred, dtype=np.int64)[keep], ps[keep], threshold)
    return {k: v for k, v in _finish_clear(counts["clr_tp"], counts["clr_fn"], counts["clr_fp"],
                                            counts["idsw"], counts["frag"],
                                            counts["motp_sum"]).items()}


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
                     "idtp", "idfn", "idfp")})


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
