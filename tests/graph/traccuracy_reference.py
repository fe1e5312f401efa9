"""traccuracy's metrics on shared inputs, run in the separate ``.venv-traccuracy``.

Usage (prints a JSON list, one object per input; each mode takes several inputs):

- ``traccuracy_reference.py points INPUT.npz [INPUT.npz ...]``: INPUT.npz holds ``threshold``,
  ``frame_buffer`` and per side (``gt``, ``pred``) ``SIDE_frame``, ``SIDE_id``,
  ``SIDE_parent`` (-1 = none) and ``SIDE_xyz``. Graphs are built here from those columns
  (each observation links to the track's next one; a parent track's last observation links
  to each child track's first), matched with ``PointMatcher(threshold)``.
- ``traccuracy_reference.py ctc GT_DIR RES_DIR MASKS.npz``: ``load_ctc_data`` on both
  folders, ``CTCMatcher``; the label stacks it read are saved to MASKS.npz (``gt``,
  ``pred``) so that the other side reads the same pixels.
- ``traccuracy_reference.py geff STORE OUT.npz``: ``load_geff_data`` and the graph split into
  tracks (a node continues its predecessor's track unless that one divides), saved as
  ``frame``, ``id``, ``parent``, ``xyz``.

An input traccuracy refuses (it raises) gives ``{"error": ...}`` in its place.

Metrics: ``CTCMetrics``, ``DivisionMetrics(max_frame_buffer)``, ``CHOTAMetric``, plus the
matching size and seconds. This file deliberately does not import trackverify.
"""

import json
import sys
import time
import warnings
from pathlib import Path

import networkx as nx
import numpy as np

warnings.filterwarnings("ignore")


def build_graph(frame, ids, parent, xyz):
    axes = ["x", "y", "z"][: xyz.shape[1]]
    g = nx.DiGraph()
    for i in range(len(frame)):
        g.add_node(i + 1, t=int(frame[i]), **{a: float(xyz[i, k]) for k, a in enumerate(axes)})
    order = np.lexsort((frame, ids))
    first, last = {}, {}
    for a, b in zip(order[:-1], order[1:]):
        if ids[a] == ids[b]:
            g.add_edge(int(a) + 1, int(b) + 1)
    for i in order:
        first.setdefault(int(ids[i]), int(i) + 1)
        last[int(ids[i])] = int(i) + 1
    for track in first:
        rows = np.flatnonzero(ids == track)
        p = int(parent[rows[0]])
        if p >= 0:
            g.add_edge(last[p], first[track])
    return g, tuple(axes)


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if value is None:
        return None
    v = float(value)
    return None if np.isnan(v) else v


def run(gt, pred, matcher, frame_buffer):
    from traccuracy.metrics import CHOTAMetric, CTCMetrics, DivisionMetrics

    t0 = time.perf_counter()
    matched = matcher.compute_mapping(gt, pred)
    out = {"n_matches": len(matched.mapping), "matching_type": matched.matching_type}
    ctc = CTCMetrics().compute(matched).results
    out["ctc"] = plain(ctc)
    out["chota"] = plain(CHOTAMetric().compute(matched).results)
    if matched.matching_type == "one-to-one" or not matched.mapping:
        out["divisions"] = plain(DivisionMetrics(max_frame_buffer=frame_buffer)
                                 .compute(matched).results)
    out["seconds"] = time.perf_counter() - t0
    out["gt_nodes"] = gt.graph.number_of_nodes()
    out["gt_edges"] = gt.graph.number_of_edges()
    return out


def points(path):
    from traccuracy import TrackingGraph
    from traccuracy.matchers import PointMatcher

    z = np.load(path)
    t0 = time.perf_counter()
    graphs = {}
    for side in ("gt", "pred"):
        g, axes = build_graph(z[f"{side}_frame"], z[f"{side}_id"], z[f"{side}_parent"],
                              z[f"{side}_xyz"])
        graphs[side] = TrackingGraph(g, location_keys=axes)
    build = time.perf_counter() - t0
    out = run(graphs["gt"], graphs["pred"], PointMatcher(float(z["threshold"])),
              int(z["frame_buffer"]))
    out["seconds_build"] = build
    return out


def ctc(gt_dir, res_dir, masks_out):
    from traccuracy.loaders import load_ctc_data
    from traccuracy.matchers import CTCMatcher

    t0 = time.perf_counter()
    gt = load_ctc_data(gt_dir)
    # a result with no tracks: traccuracy's own check of the track file (_check_ctc) takes
    # min / max of its frames and raises on an empty file, so it is loaded without the check
    empty = not any(p.read_text().strip() for p in Path(res_dir).glob("*_track.txt"))
    pred = load_ctc_data(res_dir, run_checks=not empty)
    load = time.perf_counter() - t0
    np.savez_compressed(masks_out, gt=gt.segmentation, pred=pred.segmentation)
    out = run(gt, pred, CTCMatcher(), 1)
    out["seconds_build"] = load
    return out


GEFF_TIME = ("t", "FRAME")
GEFF_SPACE = (("x", "cell_x"), ("y", "cell_y"), ("z",))


def read_geff(store):
    """Nodes (time, x, y[, z]) and edges of a geff store, read with zarr (traccuracy's
    ``load_geff_data`` only reads stores whose axes are named t / x / y / z)."""
    import zarr

    root = zarr.open_group(store, mode="r")
    props = root["nodes/props"] if "props" in root["nodes"] else root["nodes/attrs"]
    ids = np.asarray(root["nodes/ids"][:])
    g = nx.DiGraph()
    t = next(np.asarray(props[k]["values"][:]) for k in GEFF_TIME if k in props)
    space = [np.asarray(props[k]["values"][:], dtype=float) for names in GEFF_SPACE
             for k in names[:1] + names[1:] if k in props][:3]
    for i, n in enumerate(ids.tolist()):
        g.add_node(n, t=int(t[i]), **{a: float(v[i]) for a, v in zip("xyz", space)})
    g.add_edges_from(map(tuple, np.asarray(root["edges/ids"][:]).tolist()))
    return g


def geff(store, out_path):
    g = read_geff(store)
    nodes = sorted(g.nodes, key=lambda n: (g.nodes[n]["t"], n))
    index = {n: i for i, n in enumerate(nodes)}
    axes = [a for a in ("x", "y", "z") if a in g.nodes[nodes[0]]]
    track = np.full(len(nodes), -1, dtype=np.int64)
    parent = np.full(len(nodes), -1, dtype=np.int64)
    n_tracks = 0
    for n in nodes:  # frame order: a predecessor always comes first
        before = list(g.predecessors(n))
        if len(before) > 1:
            raise ValueError("merges cannot be written as tracks")
        if before and g.out_degree(before[0]) == 1:
            track[index[n]] = track[index[before[0]]]
        else:
            track[index[n]] = n_tracks
            n_tracks += 1
            if before:
                parent[index[n]] = track[index[before[0]]]
    per_track_parent = np.full(n_tracks, -1)
    np.maximum.at(per_track_parent, track, parent)
    np.savez(out_path, frame=np.array([g.nodes[n]["t"] for n in nodes], dtype=np.int64),
             id=track, parent=per_track_parent[track],
             xyz=np.array([[g.nodes[n][a] for a in axes] for n in nodes], dtype=np.float64))
    return {"nodes": g.number_of_nodes(), "edges": g.number_of_edges(),
            "divisions": sum(1 for n in g if g.out_degree(n) >= 2)}


def main():
    """One process for many inputs (the imports take seconds): results in argument order."""
    mode, args = sys.argv[1], sys.argv[2:]
    run_one, size = {"points": (points, 1), "ctc": (ctc, 3), "geff": (geff, 2)}[mode]
    out = []
    for i in range(0, len(args), size):
        try:
            out.append(run_one(*args[i:i + size]))
        except Exception as exc:  # noqa: BLE001 - an input traccuracy refuses, reported
            out.append({"error": f"{type(exc).__name__}: {exc}"})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
