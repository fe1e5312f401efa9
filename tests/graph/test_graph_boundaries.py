"""Graph metrics at their boundaries, by hand: the division frame buffer at exactly its
width (either direction), shifts that must not be made, F1 and MBC away from 0 and 1,
CHOTA with missed nodes and a chain of only children, wrong-semantics edges into a merge,
and every hand case whatever the order of its rows (so node 0 plays every role).

Positions are 2-D points; a prediction sits exactly on its reference observation or far
from everything (``FAR``), so the matching at 1 um is known. traccuracy 0.4.3 gives the
same division counts on each scene built from tables (its MBC aside, see
``trackverify.metrics.graph.metrics``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from graph_helpers import assert_same, ours
from lineages import CASES, FAR, lineage, track_rows

from trackverify.metrics.graph import metrics
from trackverify.errors import InputError
from trackverify.metrics.graph.matching import match_masks, match_points
from trackverify.metrics.graph.tracks import TrackGraph, build_track_graph, points
from trackverify.tables import lookup

# the division counts of a scene, per buffer
COUNTS = ("tp_divisions", "fp_divisions", "fn_divisions", "wc_divisions")


def counts(tp, fp, fn, wc=0) -> dict:
    return dict(zip(COUNTS, (tp, fp, fn, wc)))


def orders(n: int):
    """The row orders a scene is checked in: as built, reversed, every rotation."""
    yield np.arange(n)
    yield np.arange(n)[::-1]
    for k in range(1, n):
        yield np.roll(np.arange(n), k)


def check_every_order(gt: pd.DataFrame, pred: pd.DataFrame, expected: dict,
                      frame_buffer: int, label: str) -> None:
    """``expected`` for the scene with its reference rows in every order (the prediction as
    built) and its prediction rows in every order (the reference as built); the result has
    exactly the buffers ``0..frame_buffer``."""
    buffers = [f"frame_buffer_{b}" for b in range(frame_buffer + 1)]
    for side in ("gt", "pred"):
        for order in orders(len(gt if side == "gt" else pred)):
            g = gt.iloc[order].reset_index(drop=True) if side == "gt" else gt
            p = pred.iloc[order].reset_index(drop=True) if side == "pred" else pred
            out = ours(g, p, 1.0, frame_buffer=frame_buffer)
            assert sorted(k for k in out if k.startswith("frame_buffer")) == buffers
            assert_same(out, expected, tol=1e-12, label=f"{label} {side} {order.tolist()}")


@pytest.mark.parametrize("name", CASES)
def test_hand_cases_whatever_the_row_order(name):
    gt, pred, expected = CASES[name]()
    check_every_order(gt, pred, expected, 1, name)


def early_by(dt: int, y: float = 0.0, first: int = 1, end: int = 7):
    """Reference: track ``first`` (frames 0-4, x = 0) divides into ``first + 1`` (x = -10)
    and ``first + 2`` (x = 10), frames 5-6. The prediction divides ``dt`` frames early (its
    last frame 4 - dt): its first daughter stays on x = 0 until frame 4, then follows the
    left daughter; its second is far away until frame 4, then follows the right daughter
    (the daughters end before frame ``end``)."""
    a, b, c = first, first + 1, first + 2
    gt = (track_rows(a, range(5), 0.0, y=y) + track_rows(b, range(5, end), -10.0, a, y)
          + track_rows(c, range(5, end), 10.0, a, y))
    split = 5 - dt
    pred = (track_rows(a, range(split), 0.0, y=y) + track_rows(b, range(split, 5), 0.0, a, y)
            + track_rows(b, range(5, end), -10.0, a, y) + track_rows(c, range(split, 5), FAR, a, y)
            + track_rows(c, range(5, end), 10.0, a, y))
    return lineage(gt), lineage(pred)


def test_predicted_division_two_frames_early_is_found_at_buffer_two_not_one():
    """The predicted division (frame 2) is FP and the reference one (frame 4, its match
    does not divide) FN up to buffer 1; at buffer 2 = dt the reference division's ancestor
    2 edges back (frame 2) is the predicted division's match, its first daughter's frame 3
    is matched below that ancestor, its second (far at frames 3-4) reaches the right
    daughter at frame 5: TP 1, FP 0, FN 0 at buffers 2 and 3.

    CTC: 9 reference nodes, 8 edges; FP nodes 2 (the far ones); the predicted 2 -> 3 is a
    reference edge, intertrack only in the prediction, and 4 -> 5 (left) the reverse: WS 2;
    the reference 4 -> 5 (right) has no predicted edge: FN edge 1. AOGM = 2 + 1.5 + 2 = 5.5,
    DET = 1 - 2 / 90, TRA = 1 - 5.5 / 102, LNK = 1 - 3.5 / 12."""
    gt, pred = early_by(2)
    unfixed = {"division_recall": 0.0, "division_precision": 0.0, "division_f1": None,
               "mitotic_branching_correctness": 0.0, **counts(0, 1, 1)}
    fixed = {"division_recall": 1.0, "division_precision": 1.0, "division_f1": 1.0,
             "mitotic_branching_correctness": 1.0, **counts(1, 0, 0)}
    expected = {"aogm": 5.5, "det": 1 - 2 / 90, "tra": 1 - 5.5 / 102, "lnk": 1 - 3.5 / 12,
                "fp_nodes": 2, "fn_nodes": 0, "ns_nodes": 0, "fp_edges": 0, "fn_edges": 1,
                "ws_edges": 2, "frame_buffer_0": unfixed, "frame_buffer_1": unfixed,
                "frame_buffer_2": fixed, "frame_buffer_3": fixed}
    check_every_order(gt, pred, expected, 3, "early by 2")


def three_shifts():
    """late_division (the reference early by 1, y = 0), then early_by(1) (y = 100), then
    early_by(2) (y = 200): predicted rows in that order, so the FP divisions are in that
    order too."""
    g1, p1, _ = CASES["late_division"]()
    g2, p2 = early_by(1, 100.0, 11)
    g3, p3 = early_by(2, 200.0, 21)
    return (pd.concat([g1, g2, g3], ignore_index=True),
            pd.concat([p1, p2, p3], ignore_index=True))


def test_each_shift_is_made_at_its_own_buffer():
    """Three reference and three predicted divisions, none matched at buffer 0: TP 0, FP 3,
    FN 3, MBC 0 / (3 + 3). Buffer 1 shifts the late one and the one early by 1: TP 2, FP 1,
    FN 1, recall = precision = F1 = 2 / 3, MBC = 2 / (1 + 3). Buffer 2 shifts the third
    (the first two stay shifted): all 1. An FP division fixed at buffer 1 is passed over at
    buffer 2, not an end to the search."""
    gt, pred = three_shifts()
    third = 2 / 3
    expected = {
        "frame_buffer_0": {"division_recall": 0.0, "division_precision": 0.0,
                           "division_f1": None, "mitotic_branching_correctness": 0.0,
                           "gt_divisions": 3, "pred_divisions": 3, **counts(0, 3, 3)},
        "frame_buffer_1": {"division_recall": third, "division_precision": third,
                           "division_f1": third, "mitotic_branching_correctness": 0.5,
                           **counts(2, 1, 1)},
        "frame_buffer_2": {"division_recall": 1.0, "division_precision": 1.0,
                           "division_f1": 1.0, "mitotic_branching_correctness": 1.0,
                           **counts(3, 0, 0)}}
    check_every_order(gt, pred, expected, 2, "three shifts")


def test_one_division_found_of_two_gives_f1_and_mbc_between_0_and_1():
    """Reference: three lineages (y = 0, 100, 200); the first two divide after frame 2, the
    third is one track. The prediction has the first division; the second's daughters lost
    their parent links; the third divides falsely after frame 2 (one daughter far away).
    TP 1 (both daughter edges matched), FN 1, FP 1 (at the FN's frame: no shift at buffer
    1): recall = precision = 1 / 2, F1 = 2 (1/4) / 1 = 1 / 2, MBC = 1 / (1 + 2)."""
    gt = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 5), -10.0, 1)
                 + track_rows(3, range(3, 5), 10.0, 1)
                 + track_rows(4, range(3), 0.0, y=100) + track_rows(5, range(3, 5), -10.0, 4, 100)
                 + track_rows(6, range(3, 5), 10.0, 4, 100) + track_rows(7, range(5), 0.0, y=200))
    pred = lineage(track_rows(1, range(3), 0.0) + track_rows(2, range(3, 5), -10.0, 1)
                   + track_rows(3, range(3, 5), 10.0, 1)
                   + track_rows(4, range(3), 0.0, y=100) + track_rows(5, range(3, 5), -10.0, y=100)
                   + track_rows(6, range(3, 5), 10.0, y=100) + track_rows(7, range(3), 0.0, y=200)
                   + track_rows(8, range(3, 5), 0.0, 7, 200) + track_rows(9, range(3, 5), FAR, 7, 200))
    half = {"division_recall": 0.5, "division_precision": 0.5, "division_f1": 0.5,
            "mitotic_branching_correctness": 1 / 3, "gt_divisions": 2, "pred_divisions": 2,
            **counts(1, 1, 1)}
    check_every_order(gt, pred, {"frame_buffer_0": half, "frame_buffer_1": half}, 1,
                      "one of two")


def _anchor_far(gt, pred, frame, track=1):
    pred = pred.copy()
    at = (pred["frame"] == frame) & (pred["track"] == track)
    pred.loc[at, "x_um"] = FAR
    return gt, pred


def daughter_elsewhere():
    """early_by(1), but the prediction's second daughter follows track 4 (x = 50, frames
    0-6, its own lineage) from frame 4: every node of that chain is matched, none below the
    reference division's ancestor; the reference's right daughter is unmatched."""
    gt, _ = early_by(1)
    gt = pd.concat([gt, lineage(track_rows(4, range(7), 50.0))], ignore_index=True)
    pred = lineage(track_rows(1, range(4), 0.0) + track_rows(2, [4], 0.0, 1)
                   + track_rows(2, range(5, 7), -10.0, 1) + track_rows(3, range(4, 7), 50.0, 1)
                   + track_rows(4, range(4), 50.0))
    return gt, pred


@pytest.mark.parametrize("name, scene", [
    # late_division with the predicted frame 3 (the node one edge before the predicted
    # division) far away: the ancestor is not matched to the reference division
    ("ancestor unmatched", lambda: _anchor_far(*CASES["late_division"]()[:2], 3)),
    # early_by(1) with the predicted division's own node (frame 3) far away: the reference
    # division's ancestor is not matched to it
    ("early division unmatched", lambda: _anchor_far(*early_by(1), 3)),
    ("a daughter on another lineage", daughter_elsewhere),
])
def test_a_shift_within_the_buffer_needs_the_ancestor_and_both_daughters(name, scene):
    """Each scene has one FP and one FN division one frame apart, and one condition of the
    shift broken: TP 0, FP 1, FN 1 at buffer 1 as at buffer 0."""
    gt, pred = scene()
    expected = {f"frame_buffer_{b}": {"division_recall": 0.0, "division_precision": 0.0,
                                      **counts(0, 1, 1)} for b in (0, 1)}
    check_every_order(gt, pred, expected, 1, name)


def test_no_shift_when_the_lineage_is_shorter_than_the_frame_difference():
    """Reference (rows in this order): track 1 (frames 0-4, x = 0) divides into 2 and 3
    (frames 5-6); track 4 (x = 300) starts at frame 2 without a parent and divides after
    frame 3 into 5 and 6. The prediction divides track 1 after frame 1 (its daughters reach
    2 and 3 at frame 5) and has track 4's daughters unlinked. FN: reference node 4 (frame 4)
    and track 4's frame 3; FP: predicted frame 1.

    Buffer 2: the only FN within 2 frames is track 4's (dt = 2), whose lineage has one
    ancestor: no shift (TP 0, FP 1, FN 2). Buffer 3: track 1's division (dt = 3), ancestor 3
    edges back = reference node 1, the predicted division's match: TP 1, FP 0, FN 1."""
    gt = lineage(track_rows(1, range(5), 0.0) + track_rows(2, range(5, 7), -10.0, 1)
                 + track_rows(3, range(5, 7), 10.0, 1) + track_rows(4, range(2, 4), 300.0)
                 + track_rows(5, range(4, 6), 290.0, 4) + track_rows(6, range(4, 6), 310.0, 4))
    pred = lineage(track_rows(1, range(2), 0.0) + track_rows(2, range(2, 5), 0.0, 1)
                   + track_rows(2, range(5, 7), -10.0, 1) + track_rows(3, range(2, 5), FAR, 1)
                   + track_rows(3, range(5, 7), 10.0, 1) + track_rows(4, range(2, 4), 300.0)
                   + track_rows(5, range(4, 6), 290.0) + track_rows(6, range(4, 6), 310.0))
    out = ours(gt, pred, 1.0, frame_buffer=3)
    assert_same(out, {"frame_buffer_2": counts(0, 1, 2), "frame_buffer_3": counts(1, 0, 1)},
                label="short lineage")


def test_division_metrics_without_a_buffer_report_buffer_0_only():
    gt, pred, _ = CASES["late_division"]()
    g = build_track_graph(gt["frame"], gt["track"], gt["parent_track"], gt[["x_um", "y_um"]])
    p = build_track_graph(pred["frame"], pred["track"], pred["parent_track"],
                          pred[["x_um", "y_um"]])
    mg, mp = match_points(g.frame, g.xyz, p.frame, p.xyz, 1.0)
    assert list(metrics.division_metrics(g, p, mg, mp)) == ["frame_buffer_0"]


def test_matchings_that_are_not_one_to_one_are_refused_with_the_reason():
    g = build_track_graph([0, 0], [1, 2])
    p = build_track_graph([0, 0], [1, 2])
    assert metrics.is_one_to_one([0, 1], [1, 0])
    assert not metrics.is_one_to_one([0, 0], [0, 1])  # a reference node twice
    assert not metrics.is_one_to_one([0, 1], [0, 0])  # a predicted node twice
    with pytest.raises(ValueError, match="^a reference node is matched twice$"):
        metrics.ctc_metrics(g, p, [0, 0], [0, 1])
    with pytest.raises(ValueError, match="^division metrics need a one-to-one matching$"):
        metrics.division_metrics(g, p, [0, 1], [0, 0])


def test_wrong_semantics_edge_into_a_merge():
    """A reference merge (nodes 0 and 1 of frame 0 both link to node 2 of frame 1; the
    graph built directly: the table convention has no merges). The prediction keeps 0 -> 2
    only. That edge is a reference edge, intertrack in the reference (into a merge) and not
    in the prediction: WS 1; 1 -> 2 has no predicted edge: FN edge 1. AOGM = 1.5 + 1,
    AOGM_0 = 30 + 3, LNK = 1 - 2.5 / 3. traccuracy flags an edge into a merge intertrack
    too (``track_errors/_ctc.py``)."""
    def graph(src, dst):
        return TrackGraph(frame=np.array([0, 0, 1]), track=np.array([0, 1, 0]), xyz=None,
                          src=np.array(src), dst=np.array(dst), track_parent=np.array([-1, -1]),
                          track_first=np.array([0, 1]), track_last=np.array([2, 1]))

    out = metrics.ctc_metrics(graph([0, 1], [2, 2]), graph([0], [2]), [0, 1, 2], [0, 1, 2])
    assert (out["ws_edges"], out["fn_edges"], out["fp_edges"]) == (1, 1, 0)
    assert out["aogm"] == 2.5 and out["lnk"] == 1 - 2.5 / 3 and out["tra"] == 1 - 2.5 / 33


def test_an_edge_with_one_end_unmatched_is_never_found():
    """Reference nodes (rows): 0 track 2 frame 0 (x = 10), 1 track 2 frame 1 (x = 10),
    2 track 1 frame 0 (x = 0), 3 track 1 frame 1 (x = 0); predicted: 0 track 1 frame 0
    (x = 0), 1 track 2 frame 0 (x = 10), 2 track 1 frame 1 (x = 0). Reference 0 -> 1 ends on
    an unmatched node: an FN edge (its key in the predicted edge table would be 1 * 3 - 1,
    the key of the predicted edge 0 -> 2). 2 -> 3 is found. FN node 1, FN edge 1."""
    gt = lineage(track_rows(2, range(2), 10.0) + track_rows(1, range(2), 0.0))
    pred = lineage([(0, 1, -1, 0.0, 0.0), (0, 2, -1, 10.0, 0.0), (1, 1, -1, 0.0, 0.0)])
    out = ours(gt, pred, 1.0)
    assert (out["fn_nodes"], out["fn_edges"], out["fp_edges"], out["n_matches"]) == (1, 1, 0, 3)
    assert out["aogm"] == 10 + 1.5


def test_tracklets_join_only_children_and_split_at_divisions():
    """Tracks 1 -> 2 (its only child) -> 3 and 4 (a division): tracklets {1, 2}, {3},
    {4}, numbered by their first track code, 3 and 4 children of {1, 2}."""
    g = build_track_graph([0, 1, 2, 3, 4, 4], [1, 1, 2, 2, 3, 4], [None, None, 1, 1, 2, 2])
    node_tracklet, parent = metrics.tracklets(g)
    assert node_tracklet.tolist() == [0, 0, 0, 0, 1, 2]
    assert parent.tolist() == [-1, 0, 0]


def test_chota_of_a_chain_of_only_children_with_one_link_lost():
    """Reference: tracks 1 (frames 0-1), 2 (2-3, child of 1), 3 (4-5, child of 2): one
    tracklet G of 6 nodes. The prediction loses 3's link: P1 = {1, 2} (4 nodes), P2 = {3}
    (2). (G, P1): 4 * 4 / (6 + 4 - 4); (G, P2): 2 * 2 / (6 + 2 - 2); over 6 matched nodes:
    CHOTA = sqrt((16 / 6 + 4 / 6) / 6) = sqrt(5) / 3."""
    gt = lineage(track_rows(1, range(2), 0.0) + track_rows(2, range(2, 4), 0.0, 1)
                 + track_rows(3, range(4, 6), 0.0, 2))
    pred = lineage(track_rows(1, range(2), 0.0) + track_rows(2, range(2, 4), 0.0, 1)
                   + track_rows(3, range(4, 6), 0.0))
    assert ours(gt, pred, 1.0)["chota"] == pytest.approx(math.sqrt(5) / 3, abs=1e-12)


def test_chota_with_missed_reference_nodes():
    """Reference: one track, frames 0-3; predicted: frames 0-1 only. FN 2, one pair (G, P)
    with O = 2: TPA = 2, FNA = 2 + 2 - 2, FPA = 0: 2 * 2 / 4 over FP + FN + matches = 4:
    CHOTA = sqrt(1 / 4)."""
    gt = lineage(track_rows(1, range(4), 0.0))
    pred = lineage(track_rows(1, range(2), 0.0))
    out = ours(gt, pred, 1.0)
    assert out["fn_nodes"] == 2 and out["chota"] == pytest.approx(0.5, abs=1e-12)


# --- matching -----------------------------------------------------------------------------


def test_point_matching_of_coincident_points_at_threshold_zero():
    """Distance 0 <= threshold 0: matched; 0.5 apart: not."""
    mg, mp = match_points([0, 0], [[0.0, 0.0], [5.0, 0.0]], [0, 0], [[0.0, 0.0], [5.5, 0.0]],
                          0.0)
    assert mg.tolist() == [0] and mp.tolist() == [0]


def test_point_matching_on_one_axis():
    """1-D coordinates are one axis: gt 0 (x = 0) - pred 1 (x = 0.5), gt 1 (x = 3) - pred 0
    (x = 3.25), threshold 1."""
    mg, mp = match_points([0, 0], [0.0, 3.0], [0, 0], [3.25, 0.5], 1.0)
    assert mg.tolist() == [0, 1] and mp.tolist() == [1, 0]


def test_point_matching_contested_pair_at_threshold_minus_one():
    """Threshold 3: gt 0 (x = 4.5) and gt 1 (x = 0) both within 3 of pred X (x = 2):
    gt 1 - X (d = 2, saves 1) beats gt 0 - X (d = 2.5, saves 0.5); gt 0 stays unmatched."""
    mg, mp = match_points([0, 0], [[4.5, 0.0], [0.0, 0.0]], [0], [[2.0, 0.0]], 3.0)
    assert mg.tolist() == [1] and mp.tolist() == [0]


def test_point_matching_contested_pairs_exactly_at_the_threshold_are_kept():
    """Threshold 5: gt (0, 0) and (6, 8) are both exactly 5 from pred (3, 4): one of them is
    matched (a match at the threshold saves 0, it is still made)."""
    mg, mp = match_points([0, 0], [[0.0, 0.0], [6.0, 8.0]], [0], [[3.0, 4.0]], 5.0)
    assert len(mg) == 1 and mp.tolist() == [0]


def test_mask_matching_of_labels_over_several_frames_and_label_1():
    """Two frames with gt labels 1 and 2 each; predicted label 1 covers gt 2 in frame 0 and
    gt 1 in frame 1 (whole), label 2 the others. Node keys of one frame must not meet the
    next frame's."""
    gt = np.zeros((2, 1, 4), dtype=np.uint16)
    gt[:, 0, :2], gt[:, 0, 2:] = 1, 2
    pred = np.zeros_like(gt)
    pred[0, 0, :2], pred[0, 0, 2:] = 2, 1
    pred[1, 0, :2], pred[1, 0, 2:] = 1, 2
    # gt nodes: (0, 1), (0, 2), (1, 1), (1, 2); pred nodes: (1, 2), (1, 1), (0, 2), (0, 1)
    mg, mp = match_masks(gt, pred, [0, 0, 1, 1], [1, 2, 1, 2], [1, 1, 0, 0], [2, 1, 2, 1])
    assert mg.tolist() == [0, 1, 2, 3] and mp.tolist() == [2, 3, 1, 0]


def test_mask_matching_ignores_labels_without_a_node_and_empty_stacks():
    gt = np.zeros((1, 1, 4), dtype=np.uint16)
    gt[0, 0, :2], gt[0, 0, 2:] = 1, 2
    pred = gt.copy()
    # gt label 2 has no node; pred label 2 has one: no pair for it
    mg, mp = match_masks(gt, pred, [0], [1], [0, 0], [1, 2])
    assert mg.tolist() == [0] and mp.tolist() == [0]
    empty = np.zeros((0, 2, 2), dtype=np.uint16)
    for labels in ([], [0]):  # no image at all: nothing is matched
        mg, mp = match_masks(empty, empty, labels, labels, labels, labels)
        assert mg.tolist() == [] and mp.tolist() == []
    with pytest.raises(ValueError, match=r"^label images differ in shape: \(1, 1, 4\) vs "
                                         r"\(1, 2, 2\)$"):
        match_masks(gt, np.zeros((1, 2, 2)), [0], [1], [0], [1])


# --- the graph ----------------------------------------------------------------------------


def test_graph_arrays_by_hand():
    """Tracks (identities 9, 5: codes by sorted identity, 5 -> 0, 9 -> 1): 9 at frames 0, 1
    (rows 0, 2), 5 at frames 2, 3 (rows 3, 1), 5 a child of 9."""
    g = build_track_graph([0, 3, 1, 2], [9, 5, 9, 5], [None, 9, None, 9])
    assert g.track.tolist() == [1, 0, 1, 0]
    assert g.track_parent.tolist() == [1, -1]
    assert g.track_first.tolist() == [3, 0] and g.track_last.tolist() == [1, 2]
    assert sorted(zip(g.src.tolist(), g.dst.tolist())) == [(0, 2), (2, 3), (3, 1)]
    assert g.edge_keys().tolist() == [0 * 4 + 2, 2 * 4 + 3, 3 * 4 + 1]  # src * n + dst, sorted
    assert build_track_graph([0], [1]).edge_keys().tolist() == []
    indptr, targets = g.successors()
    assert indptr.tolist() == [0, 1, 1, 2, 3] and targets.tolist() == [2, 3, 1]
    alone = build_track_graph([4, 2], [7, 7])
    assert alone.track_parent.tolist() == [-1] and alone.track_last.tolist() == [0]
    assert build_track_graph([0], [1], [None]).track_parent.tolist() == [-1]


def test_points_are_float_columns():
    assert points([1, 2, 3], 3).tolist() == [[1.0], [2.0], [3.0]]
    assert points([1, 2, 3], 3).dtype == np.float64
    assert points(np.zeros(0), 0).shape == (0, 1)
    two = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert points(two, 2).tolist() == two.tolist()
    assert build_track_graph([0, 1], [1, 1], xyz=[0.5, 1.5]).xyz.tolist() == [[0.5], [1.5]]


def test_lookup_gives_minus_one_when_absent():
    assert lookup(np.array([5, 3]), np.array([3, 4, 5])).tolist() == [1, -1, 0]
    assert lookup(np.array([], dtype=np.int64), np.array([3])).tolist() == [-1]


@pytest.mark.parametrize("frame, ids, parent, message", [
    ([0, 1, 2], [1, 2, 2], [None, 1, 3], "parent_track 3 is not a track of this recording"),
    ([0, 1, 2], [1, 2, 2], [None, 1, None],
     "parent_track changes within track 2 (it is one value per track)"),
    ([0, 1, 1], [1, 1, 2], [None, None, 1], "track 2 starts in frame 1, not after its parent 1 "
                                            "ends"),
])
def test_lineage_errors_name_the_parent_column_and_the_given_row(frame, ids, parent, message):
    with pytest.raises(InputError) as err:
        build_track_graph(frame, ids, parent, rows=[11, 12, 13])
    assert err.value.column == "parent_track" and err.value.row == 13
    assert str(err.value) == f"<table>, column 'parent_track', row 13: {message}"


def test_identity_and_parent_values_are_quoted_as_given():
    with pytest.raises(InputError) as err:
        build_track_graph([0, 0], np.array([1, 1]), rows=[11, 12])
    assert str(err.value) == "<table>, column 'track', row 12: track 1 is on two rows of frame 0"
    with pytest.raises(InputError) as err:
        build_track_graph([0, 1], np.array([1, 2]), np.array([3, 3]))
    assert str(err.value) == ("<table>, column 'parent_track', row 1: parent_track 3 is not "
                              "a track of this recording")


def test_a_shift_of_a_division_into_three_counts_two_correct_daughters():
    """early_by(1) with a third reference daughter 4 (x = 30, frames 5-6) and a third
    predicted daughter far from everything (listed first, so it is the division's first
    successor). Its chain reaches no matched node; the other two are correct: exactly two
    correct daughters, so buffer 1 shifts the division (TP 1, FP 0, FN 0)."""
    gt, _ = early_by(1)
    gt = pd.concat([gt, lineage(track_rows(4, range(5, 7), 30.0, 1))], ignore_index=True)
    pred = lineage(track_rows(1, range(4), 0.0) + track_rows(4, range(4, 7), -FAR, 1)
                   + track_rows(2, [4], 0.0, 1) + track_rows(2, range(5, 7), -10.0, 1)
                   + track_rows(3, [4], FAR, 1) + track_rows(3, range(5, 7), 10.0, 1))
    check_every_order(gt, pred, {"frame_buffer_0": counts(0, 1, 1),
                                 "frame_buffer_1": counts(1, 0, 0)}, 1, "three daughters")


def test_a_division_of_one_observation_tracks_is_found():
    """Reference and prediction: track 1 (frame 0) divides into 2 and 3 (frame 1), one
    observation each; so the division's two edges are the only edges (the first, index 0,
    among them). TP 1: recall = precision = F1 = MBC = 1."""
    rows = [(0, 1, -1, 0.0, 0.0), (1, 2, 1, -10.0, 0.0), (1, 3, 1, 10.0, 0.0)]
    out = ours(lineage(rows), lineage(rows), 1.0, frame_buffer=0)
    assert_same(out, {"frame_buffer_0": {"division_recall": 1.0, "division_precision": 1.0,
                                         "division_f1": 1.0,
                                         "mitotic_branching_correctness": 1.0,
                                         **counts(1, 0, 0)}})


def test_a_daughter_edge_to_an_unmatched_node_is_not_a_matched_edge():
    """Reference: track 1 (frame 0, x = 0) divides into 2 (x = -10) and 3 (x = 10) at frame
    1; track 9 (x = 50) at frames 0 and 1. Predicted rows: 9 (frame 0), 1 (frame 0), 2
    (frame 1, child of 1), 3 (frame 1, far, child of 1), 9 (frame 1). The reference edge
    1 -> 3 ends on an unmatched node: one matched daughter edge, so the division has wrong
    children (its key in the predicted edge table would be 1 * 5 - 1, the key of the
    predicted edge 0 -> 4). TP 0, WC 1, FP 0, FN 0; MBC = 0 / (0 + 1)."""
    gt = lineage([(0, 1, -1, 0.0, 0.0), (1, 2, 1, -10.0, 0.0), (1, 3, 1, 10.0, 0.0),
                  (0, 9, -1, 50.0, 0.0), (1, 9, -1, 50.0, 0.0)])
    pred = lineage([(0, 9, -1, 50.0, 0.0), (0, 1, -1, 0.0, 0.0), (1, 2, 1, -10.0, 0.0),
                    (1, 3, 1, FAR, 0.0), (1, 9, -1, 50.0, 0.0)])
    out = ours(gt, pred, 1.0, frame_buffer=0)
    assert_same(out, {"frame_buffer_0": {"division_recall": 0.0, "division_precision": 0.0,
                                         "division_f1": None,
                                         "mitotic_branching_correctness": 0.0,
                                         **counts(0, 0, 0, 1)}})


def test_a_shift_found_through_a_daughter_with_one_matched_node():
    """Shifts whose second daughter chain has exactly one matched node. Reference early:
    late_division with the daughters ending at frame 5 (the right one unmatched at frame 4,
    matched at 5 only). Prediction early: early_by(1) with the daughters at frame 5 only
    (the far daughter is matched at frame 5 only). Each: FP 1, FN 1 at buffer 0; TP 1 at
    buffer 1."""
    gt, pred, _ = CASES["late_division"]()
    late = gt[gt["frame"] < 6].reset_index(drop=True), pred[pred["frame"] < 6].reset_index(
        drop=True)
    for name, (g, p) in {"late": late, "early": early_by(1, end=6)}.items():
        check_every_order(g, p, {"frame_buffer_0": counts(0, 1, 1),
                                 "frame_buffer_1": counts(1, 0, 0)}, 1, name)


def two_candidates():
    """Reference: track 1 (frames 0-4, x = 0) divides into 2 (x = -10) and 3 (x = 10),
    frames 5-7. The prediction divides twice: after frame 3 into 4 (x = 0 at frame 4,
    -10 at 5) and 5 (far at 4, x = 10 at 5-6, then ends); 4 divides after frame 5 into 6
    (x = -10, frames 6-7) and 7 (far at 6, x = 10 at 7)."""
    gt = lineage(track_rows(1, range(5), 0.0) + track_rows(2, range(5, 8), -10.0, 1)
                 + track_rows(3, range(5, 8), 10.0, 1))
    pred = lineage(track_rows(1, range(4), 0.0) + track_rows(4, [4], 0.0, 1)
                   + track_rows(4, [5], -10.0, 1) + track_rows(5, [4], FAR, 1)
                   + track_rows(5, range(5, 7), 10.0, 1) + track_rows(6, range(6, 8), -10.0, 4)
                   + track_rows(7, [6], FAR, 4) + track_rows(7, [7], 10.0, 4))
    return gt, pred


def test_two_fp_divisions_that_could_each_take_the_fn_division_share_it_once():
    """In two_candidates the reference division (frame 4, matched to the predicted frame 4
    of track 4, no division) is FN; both predicted divisions are FP. At buffer 1 either
    would be its shift: the early one (frame 3: the reference ancestor at frame 3 is its
    match; daughter 4 is on the reference at frame 4, daughter 5 reaches the right daughter
    at frame 5), and the late one (frame 5: its ancestor at frame 4 is the FN's match; the
    left daughter's frame 5 is its own node, the right daughter's frame 7 is matched to its
    daughter 7). The FN division is taken once: TP 1, FP 1, FN 0; recall 1, precision 1/2,
    F1 = 2 (1/2) / (3/2) = 2/3, MBC = 1 / (1 + 1)."""
    gt, pred = two_candidates()
    expected = {"frame_buffer_0": {"division_recall": 0.0, "division_precision": 0.0,
                                   "gt_divisions": 1, "pred_divisions": 2, **counts(0, 2, 1)},
                "frame_buffer_1": {"division_recall": 1.0, "division_precision": 0.5,
                                   "division_f1": 2 / 3, "mitotic_branching_correctness": 0.5,
                                   **counts(1, 1, 0)}}
    check_every_order(gt, pred, expected, 1, "two candidates")
