"""The graph-metric families of ``trackverify evaluate``, per recording and pooled.

Families: ``ctc`` (AOGM error counts, DET, TRA, LNK), ``divisions`` (per frame buffer
``0..frame_buffer``) and ``chota`` (:mod:`trackverify.metrics.graph.metrics`). Graphs are built
from the validated tables (:mod:`trackverify.metrics.graph.tracks`; reference identity ``track``,
prediction identity ``pred_id``, valid predictions only; lineage links from each table's
``parent_track``). Reference and predicted nodes are matched by detection id when both
tables carry ``detection`` (same recording, frame and detection; one-to-one; of several
predictions on one detection the smallest ``pred_id``), otherwise by
position (:func:`trackverify.metrics.graph.matching.match_points` within ``match_distance_um``).

Division metrics need lineage links in both tables; without a ``parent_track`` column in
one of them they are reported as unavailable, with the reason. The pooled results are the
metrics of the disjoint union of the recordings' graphs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.metrics.graph.matching import match_points
from trackverify.metrics.graph.metrics import (check_definition, chota, ctc_metrics, division_metrics,
                                       is_one_to_one)
from trackverify.metrics.graph.tracks import PARENT, TrackGraph, graph_from_table
from trackverify.tables import lookup
from trackverify.errors import ConfigError
from trackverify.tables import coordinate_columns, validate_pair
from trackverify.values import is_integer, is_real

FAMILIES = ("ctc", "divisions", "chota")
#: Which measures stay meaningful on a sparse reference (only some cells annotated), and why
#: the others do not: a prediction on an unannotated cell is not an error there.
SPARSE_VALIDITY = {
    "ctc": (True, "AOGM, DET, TRA, LNK: unmatched predictions weigh 0 (the Challenge's "
                  "penalize_extra_detections = 0); every other error is about annotated cells"),
    "division_recall": (True, "counts reference divisions only"),
    "division_precision": (False, "a predicted division of an unannotated cell would count "
                                  "as false"),
    "division_f1": (False, "uses division precision"),
    "mitotic_branching_correctness": (False, "counts false-positive divisions"),
    "chota": (False, "unmatched predictions enter its denominator"),
    "BC": (False, "BC(i) counts false-positive divisions"),
    "ct": (False, "T_c counts every predicted track"),
    "cca": (False, "the predicted cell-cycle lengths include unannotated cells"),
    "tf": (True, "reference tracks only"),
    "seg": (True, "reference segments only"),
}


#: The ``tracking_gt`` measures a sparse reference invalidates (they count predictions on no
#: reference observation); the others there (recall-like, reference-side counts, MT / PT /
#: ML, switches, fragmentations, MOTP / LocA) stay valid.
TRACKING_SPARSE_INVALID = {
    **dict.fromkeys(("hota", "deta", "assa", "detpr", "asspr"),
                    "HOTA's precision side counts unmatched predictions"),
    **dict.fromkeys(("mota", "clr_fp"), "CLEAR counts unmatched predictions as FP"),
    **dict.fromkeys(("idf1", "idp", "idfp"), "the identity precision side counts unmatched "
                                             "predictions"),
    "extra_predicted_observations": "predictions on unannotated cells are not extra",
}


def sparse_validity() -> dict:
    """``{measure: {"valid": bool, "reason": str}}`` on a sparse reference (graph measures,
    and the ``tracking_gt`` measures it invalidates, prefixed ``tracking_gt.``)."""
    out = {k: {"valid": v, "reason": r} for k, (v, r) in SPARSE_VALIDITY.items()}
    out.update({f"tracking_gt.{k}": {"valid": False, "reason": r}
                for k, r in TRACKING_SPARSE_INVALID.items()})
    return out


def null_tracking_for_sparse(results: dict) -> dict:
    """Null, in place, the ``tracking_gt`` measures of :data:`TRACKING_SPARSE_INVALID` in
    ``results`` (``{recording: metrics}``)."""
    for row in results.values():
        for key in TRACKING_SPARSE_INVALID:
            if key in row:
                row[key] = None
    return results


def apply_sparse(results: dict) -> dict:
    """Null, in place, every measure of ``results`` (families per recording) not valid on a
    sparse reference (:data:`SPARSE_VALIDITY`); record the table under ``sparse_reference``."""
    for rec in results.get("chota", {}):
        results["chota"][rec] = None
    for per in (results.get("divisions") or {}).values():
        for buffer in (per or {}).values():
            for key in ("division_precision", "division_f1", "mitotic_branching_correctness"):
                buffer[key] = None
    for per in (results.get("challenge") or {}).values():
        for key in list(per):
            if key.startswith("BC(") or key in ("ct", "cca"):
                per[key] = None
    results["sparse_reference"] = {"on": True, "validity": sparse_validity()}
    return results
POOLED = "pooled"


def links_status(ref: pd.DataFrame, pred: pd.DataFrame) -> dict:
    """Whether both tables carry lineage links, and why not when they do not."""
    missing = [name for name, df in (("reference", ref), ("predictions", pred))
               if PARENT not in df.columns]
    if missing:
        return {"lineage_links": False,
                "reason": f"no '{PARENT}' column in the {' and the '.join(missing)}: "
                          "division metrics need parent links in both tables"}
    return {"lineage_links": True, "reason": None}


def _union(graphs: list[TrackGraph]) -> tuple[TrackGraph, np.ndarray]:
    """The disjoint union of graphs, and each input graph's node offset."""
    offsets = np.r_[0, np.cumsum([g.n_nodes for g in graphs])].astype(np.int64)
    t_off = np.r_[0, np.cumsum([len(g.track_parent) for g in graphs])].astype(np.int64)
    cat = np.concatenate
    xyz = None if any(g.xyz is None for g in graphs) else cat([g.xyz for g in graphs])
    return TrackGraph(
        frame=cat([g.frame for g in graphs]), track=cat([g.track + t for g, t in
                                                          zip(graphs, t_off)]),
        xyz=xyz, src=cat([g.src + o for g, o in zip(graphs, offsets)]),
        dst=cat([g.dst + o for g, o in zip(graphs, offsets)]),
        track_parent=cat([np.where(g.track_parent >= 0, g.track_parent + t, -1)
                          for g, t in zip(graphs, t_off)]),
        track_first=cat([g.track_first + o for g, o in zip(graphs, offsets)]),
        track_last=cat([g.track_last + o for g, o in zip(graphs, offsets)])), offsets


def _match(ref: pd.DataFrame, pred: pd.DataFrame, g: TrackGraph, p: TrackGraph,
           by_detection: bool, distance: float) -> tuple[np.ndarray, np.ndarray]:
    if by_detection:
        codes, uniques = pd.factorize(pd.concat([ref["detection"], pred["detection"]],
                                                ignore_index=True))
        n = max(len(uniques), 1)
        g_key = g.frame * n + codes[:len(ref)]
        p_key = p.frame * n + codes[len(ref):]
        # Several predictions on one detection: the smallest pred_id is the match (as the
        # oracle diagnostics link them, trackverify.metrics.association.link_predictions).
        rank = pd.factorize(pred["pred_id"], sort=True)[0]
        order = np.lexsort((rank, p_key))
        first = np.r_[True, p_key[order][1:] != p_key[order][:-1]] if len(order) else \
            np.zeros(0, dtype=bool)
        idx = order[first]
        found = lookup(p_key[idx], g_key)
        at = np.full(len(g_key), -1, dtype=np.int64)
        at[found >= 0] = idx[found[found >= 0]]
        mg = np.flatnonzero(at >= 0)
        return mg.astype(np.int64), at[mg].astype(np.int64)
    return match_points(g.frame, g.xyz, p.frame, p.xyz, distance)


def graph_families(g: TrackGraph, p: TrackGraph, mg, mp, divisions: bool,
                   frame_buffer: int, definition: str = "traccuracy",
                   sparse_reference: bool = False) -> dict:
    """The three families for one pair of graphs and their matching."""
    out = {"ctc": ctc_metrics(g, p, mg, mp, definition, not sparse_reference),
           "chota": chota(g, p, mg, mp)["chota"]}
    if not divisions:
        out["divisions"] = None
    elif not is_one_to_one(mg, mp):
        out["divisions"] = None  # pragma: no cover - both matchings here are one-to-one
    else:
        out["divisions"] = division_metrics(g, p, mg, mp, frame_buffer)
    return out


def evaluate_graph(ref: pd.DataFrame, pred: pd.DataFrame, match_distance_um: float,
                   frame_buffer: int = 1, *, reference_source: str = "<reference>",
                   predictions_source: str = "<predictions>",
                   definition: str = "traccuracy", sparse_reference: bool = False) -> dict:
    """``{"status": links_status, "definition", "matching", "ctc": {recording: ...,
    "pooled": ...}, "divisions": {...}, "chota": {...}}`` (grouped by family) for validated
    tables (see the module doc); ``definition`` selects the AOGM counts
    (:func:`trackverify.metrics.graph.metrics.ctc_metrics`). Raw tables are validated first (as
    :func:`trackverify.evaluate_tracking` does); inputs are never modified. With
    ``sparse_reference`` unmatched predictions weigh 0 and the measures not valid on a
    sparse reference are null (:data:`SPARSE_VALIDITY`, recorded in the result)."""
    try:
        check_definition(definition)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not is_real(match_distance_um, 0, strict=True):
        raise ConfigError(f"match_distance_um must be a positive number, got "
                          f"{match_distance_um!r}")
    if not is_integer(frame_buffer, 0):
        raise ConfigError(f"frame_buffer must be a whole number >= 0, got {frame_buffer!r}")
    ref, pred, by_detection = validate_pair(ref, pred, reference_source, predictions_source)
    status = links_status(ref, pred)
    divisions = status["lineage_links"]
    coords = coordinate_columns(ref) if not by_detection else None
    valid = pred[pred["pred_valid"].to_numpy(dtype=bool)]
    preds = dict(tuple(valid.groupby("recording", sort=False)))
    results: dict = {}
    parts = []
    for recording, ref_rec in ref.groupby("recording", sort=True):
        pred_rec = preds.get(recording, valid.iloc[:0])
        g = graph_from_table(ref_rec, "track", coords, source=reference_source)
        p = graph_from_table(pred_rec, "pred_id", coords, source=predictions_source)
        mg, mp = _match(ref_rec, pred_rec, g, p, by_detection, match_distance_um)
        results[recording] = graph_families(g, p, mg, mp, divisions, frame_buffer, definition,
                                            sparse_reference)
        parts.append((g, p, mg, mp))
    matching = "detection: same recording, frame and detection id" if by_detection else \
        f"points: one-to-one per frame within {float(match_distance_um)} um (Hungarian)"
    status = {**status, "definition": definition, "matching": matching}
    if len(parts) == 1:  # the pooled graphs are the one recording's
        results[POOLED] = results[recording]
        return _finish(_by_family(status, results), sparse_reference)
    g_all, g_off = _union([x[0] for x in parts])
    p_all, p_off = _union([x[1] for x in parts])
    mg = np.concatenate([x[2] + o for x, o in zip(parts, g_off)])
    mp = np.concatenate([x[3] + o for x, o in zip(parts, p_off)])
    results[POOLED] = graph_families(g_all, p_all, mg, mp, divisions, frame_buffer, definition,
                                     sparse_reference)
    return _finish(_by_family(status, results), sparse_reference)


def _finish(results: dict, sparse_reference: bool) -> dict:
    if sparse_reference:
        return apply_sparse(results)
    results["sparse_reference"] = {"on": False}
    return results


def _by_family(status: dict, results: dict) -> dict:
    top = {"definition": status.pop("definition"), "matching": status.pop("matching")}
    return {"status": status, **top, **{family: {rec: fam[family] for rec, fam in results.items()}
                                 for family in FAMILIES}}
