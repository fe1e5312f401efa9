"""Hand-built lineages (reference, prediction) with the metrics computed by hand.

Positions are 2-D points; every prediction sits exactly on its reference observation (or
far from everything), so the matching at threshold 1 um is known. Expected values are
worked out in each docstring from the definitions in ``trackverify.metrics.graph.metrics``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from graph_helpers import table

FAR = 1000.0


def track_rows(track: int, frames, x: float, parent: int = -1, y: float = 0.0) -> list:
    return [(f, track, parent, x, y) for f in frames]


def lineage(rows: list) -> pd.DataFrame:
    a = np.array(rows, dtype=float)
    return table(a[:, 0], a[:, 1], a[:, 2], a[:, 3:5])


def missed_division():
    """Reference: track 1 (frames 0-2) divides into 2 and 3 (frames 3-4). The prediction
    has every observation, but track 3 lost its parent link.

    Nodes 7, all matched. Reference edges 6 (4 in tracks, 2 division edges); predicted 5.
    FN edge 1 (1 -> 3); the predicted 1 -> 2 exists in the reference but is intertrack only
    there: WS 1. AOGM = 1.5 + 1 = 2.5, AOGM_0 = 70 + 9 = 79; LNK = 1 - 2.5 / 9.
    Divisions: reference 1 (FN), predicted 0: recall 0, precision and F1 undefined, MBC 0.
    CHOTA: reference tracklets T1 (3 nodes), T2, T3 (2 each; trajectories T1+T2+T3, T1+T2,
    T1+T3); predicted tracklets P12 (1 and its only child 2, 5 nodes) and P3 (2).
    Pairs: (T1, P12) 3 * 5 / (7 + 5 - 5); (T2, P12) 2 * 5 / (5 + 5 - 5);
    (T3, P3) 2 * 2 / (5 + 2 - 2): sum 173 / 35 over 7 nodes.
    """
    gt = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 5), -10.0, 1)
                 + track_rows(3, range(3, 5), 10.0, 1))
    pred = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 5), -10.0, 1)
                   + track_rows(3, range(3, 5), 10.0))
    expected = {"aogm": 2.5, "det": 1.0, "tra": 1 - 2.5 / 79, "lnk": 1 - 2.5 / 9,
                "ns_nodes": 0, "fp_nodes": 0, "fn_nodes": 0, "fp_edges": 0, "fn_edges": 1,
                "ws_edges": 1, "chota": math.sqrt(173 / 35 / 7),
                "frame_buffer_0": {"division_recall": 0.0, "division_precision": None,
                                   "division_f1": None, "mitotic_branching_correctness": 0.0,
                                   "gt_divisions": 1, "pred_divisions": 0, "tp_divisions": 0,
                                   "fp_divisions": 0, "fn_divisions": 1, "wc_divisions": 0}}
    return gt, pred, expected


def false_division():
    """Reference: one track, frames 0-4. The prediction follows it but divides after frame
    2: daughter 2 on the track, daughter 3 far away (2 FP nodes).

    Reference 5 nodes, 4 edges. Predicted edges between matched nodes: 4, all reference
    edges; 1 -> 2 is intertrack only in the prediction: WS 1. AOGM = 2 + 1 = 3,
    AOGM_0 = 50 + 6 = 56; DET = 1 - 2 / 50; LNK = 1 - 1 / 6.
    Divisions: reference 0, predicted 1 (FP): precision 0, recall and F1 undefined, MBC 0.
    CHOTA: one reference tracklet G (5 nodes); predicted P1 (3) with daughters P2 (2
    matched) and P3 (2 FP). (G, P1): 3 * 5 / (5 + 7 - 5); (G, P2): 2 * 5 / (5 + 5 - 5);
    union 5 + 2: CHOTA = sqrt((15 / 7 + 2) / 7).
    """
    gt = lineage(track_rows(1, range(5), 0.0))
    pred = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 5), 0.0, 1)
                   + track_rows(3, range(3, 5), FAR, 1))
    expected = {"aogm": 3.0, "det": 1 - 2 / 50, "tra": 1 - 3 / 56, "lnk": 1 - 1 / 6,
                "ns_nodes": 0, "fp_nodes": 2, "fn_nodes": 0, "fp_edges": 0, "fn_edges": 0,
                "ws_edges": 1, "chota": math.sqrt((15 / 7 + 2) / 7),
                "frame_buffer_0": {"division_recall": None, "division_precision": 0.0,
                                   "division_f1": None, "mitotic_branching_correctness": 0.0,
                                   "gt_divisions": 0, "pred_divisions": 1, "tp_divisions": 0,
                                   "fp_divisions": 1, "fn_divisions": 0, "wc_divisions": 0}}
    return gt, pred, expected


def switched_daughter():
    """Reference: track 1 (frames 0-2) divides into 2 (left) and 3 (right), frames 3-5;
    track 4 (far) runs frames 0-5. The predicted division takes track 4's continuation as
    its second daughter: predicted 1 -> 2 and 1 -> 5 (= track 4, frames 3-5); track 3 is
    predicted without a parent, track 4's frames 0-2 end alone.

    15 nodes, all matched; reference edges 13, predicted 12. FP edge: 1 -> 5 (its reference
    pair is not an edge). FN edges: 1 -> 3 and 4's frame 2 -> 3. AOGM = 1 + 3 = 4,
    AOGM_0 = 150 + 19.5; LNK = 1 - 4 / 19.5.
    Divisions: the reference division's match divides, but only one of its two outgoing
    edges is matched: wrong children. TP 0 of 1 and 1: recall 0, precision 0, F1 undefined,
    MBC 0.
    """
    gt = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 6), -10.0, 1)
                 + track_rows(3, range(3, 6), 10.0, 1) + track_rows(4, range(6), 100.0))
    pred = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 6), -10.0, 1)
                   + track_rows(5, range(3, 6), 100.0, 1) + track_rows(3, range(3, 6), 10.0)
                   + track_rows(4, range(3), 100.0))
    expected = {"aogm": 4.0, "det": 1.0, "tra": 1 - 4 / 169.5, "lnk": 1 - 4 / 19.5,
                "ns_nodes": 0, "fp_nodes": 0, "fn_nodes": 0, "fp_edges": 1, "fn_edges": 2,
                "ws_edges": 0,
                "frame_buffer_0": {"division_recall": 0.0, "division_precision": 0.0,
                                   "division_f1": None, "mitotic_branching_correctness": 0.0,
                                   "gt_divisions": 1, "pred_divisions": 1, "tp_divisions": 0,
                                   "fp_divisions": 0, "fn_divisions": 0, "wc_divisions": 1}}
    return gt, pred, expected


def late_division():
    """Reference: track 1 (frames 0-3) divides into 2 (left) and 3 (right), frames 4-6.
    The prediction divides one frame late: its track 1 runs to frame 4 (there on the left
    daughter), daughters frames 5-6. The reference's right daughter at frame 4 is missed.

    Buffer 0: FN 1 (the reference division's match does not divide), FP 1.
    Buffer 1: the reference division is early; the prediction's node one edge before its
    division (frame 3) is matched to it; left daughter: frame 4 matched to the predicted
    frame 4, a descendant; right daughter: frame 4 unmatched, frame 5 matched to predicted
    track 3, a descendant. Both daughters correct: TP 1, FP 0, FN 0, recall = precision =
    F1 = 1, MBC = 1 / (0 + 1).
    """
    gt = lineage(track_rows(1, range(4), 0.0) + track_rows(2, range(4, 7), -10.0, 1)
                 + track_rows(3, range(4, 7), 10.0, 1))
    pred = lineage(track_rows(1, range(4), 0.0) + [(4, 1, -1, -10.0, 0.0)]
                   + track_rows(2, range(5, 7), -10.0, 1) + track_rows(3, range(5, 7), 10.0, 1))
    expected = {
        "frame_buffer_0": {"division_recall": 0.0, "division_precision": 0.0,
                           "division_f1": None, "mitotic_branching_correctness": 0.0,
                           "gt_divisions": 1, "pred_divisions": 1, "tp_divisions": 0,
                           "fp_divisions": 1, "fn_divisions": 1, "wc_divisions": 0},
        "frame_buffer_1": {"division_recall": 1.0, "division_precision": 1.0,
                           "division_f1": 1.0, "mitotic_branching_correctness": 1.0,
                           "gt_divisions": 1, "pred_divisions": 1, "tp_divisions": 1,
                           "fp_divisions": 0, "fn_divisions": 0, "wc_divisions": 0}}
    return gt, pred, expected


CASES = {"missed_division": missed_division, "false_division": false_division,
         "switched_daughter": switched_daughter, "late_division": late_division}
