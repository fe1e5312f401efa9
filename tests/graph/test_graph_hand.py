"""Graph, matching and graph metrics on hand-computed cases (lineages.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from graph_helpers import assert_same, ours
from lineages import CASES

from trackverify.errors import InputError
from trackverify.metrics.graph import metrics
from trackverify.metrics.graph.matching import match_masks, match_points
from trackverify.metrics.graph.tracks import build_track_graph, graph_from_table, points


@pytest.mark.parametrize("name", CASES)
def test_hand_computed_metrics(name):
    gt, pred, expected = CASES[name]()
    assert_same(ours(gt, pred, 1.0, frame_buffer=1), expected, tol=1e-12, label=name)


def test_graph_edges_follow_tracks_and_parent_links():
    # Track 7 (frames 0, 1, 3: a skip edge) divides into 8 and 9; 9 has one row.
    g = build_track_graph([3, 0, 1, 4, 5, 4], [7, 7, 7, 8, 8, 9], [None, None, None, 7, 7, 7])
    edges = sorted(zip(g.src.tolist(), g.dst.tolist()))
    assert edges == [(0, 3), (0, 5), (1, 2), (2, 0), (3, 4)]
    assert g.divisions().tolist() == [0]
    assert g.predecessor.tolist() == [2, -1, 1, 0, 3, 0]


@pytest.mark.parametrize("frame, ids, parent, message, row", [
    ([0, 0], [1, 1], None, "on two rows of frame 0", 2),
    ([0, 1, 2], [1, 2, 2], [None, 1, 3], "not a track", 3),
    ([0, 1, 2], [1, 2, 2], [None, 1, None], "changes within", 3),
    ([0, 1, 1], [1, 1, 2], [None, None, 1], "not after its parent", 3),
    ([0], [1], [1], "not after its parent", 1),
])
def test_bad_lineages_are_input_errors_naming_column_and_row(frame, ids, parent, message, row):
    with pytest.raises(InputError, match=message) as err:
        build_track_graph(frame, ids, parent, source="t.csv")
    assert err.value.row == row and err.value.source == "t.csv"


def test_inputs_are_not_modified():
    from lineages import switched_daughter

    gt, pred, _ = switched_daughter()
    before = gt.copy(deep=True), pred.copy(deep=True)
    ours(gt, pred, 1.0)
    pd.testing.assert_frame_equal(gt, before[0])
    pd.testing.assert_frame_equal(pred, before[1])
    frame = np.array([2, 0, 1])
    ids = np.array([5, 5, 5])
    build_track_graph(frame, ids)
    assert frame.tolist() == [2, 0, 1] and ids.tolist() == [5, 5, 5]


def test_point_matching_saves_threshold_minus_distance_not_count():
    """traccuracy's objective: each match saves threshold - d. With threshold 2, A (x=0.1)
    and B (x=-1.95) against X (x=0) and Y (x=2.05): {A-X} saves 1.9, {A-Y, B-X} saves
    0.05 + 0.05, so one match is optimal although two are possible."""
    gx = np.array([[0.1, 0.0], [-1.95, 0.0]])
    px = np.array([[0.0, 0.0], [2.05, 0.0]])
    mg, mp = match_points([0, 0], gx, [0, 0], px, 2.0)
    assert mg.tolist() == [0] and mp.tolist() == [0]


def test_point_matching_is_per_frame_and_inclusive_at_the_threshold():
    mg, mp = match_points([0, 1, 1], [[0, 0], [0, 0], [5, 5]], [1, 0, 1],
                          [[0, 0], [3, 4], [5, 6]], 5.0)
    # gt 0 (frame 0) -> pred 1 at exactly 5; gt 1 -> pred 0 at 0; gt 2 -> pred 2 at 1.
    assert mg.tolist() == [0, 1, 2] and mp.tolist() == [1, 0, 2]


def test_mask_matching_needs_more_than_half_of_the_reference_pixels():
    gt = np.zeros((1, 4, 4), dtype=np.uint16)
    pred = np.zeros_like(gt)
    gt[0, 0, :] = 1           # 4 pixels
    pred[0, 0, :3] = 9        # covers 3 of 4: matched
    gt[0, 2, :] = 2           # 4 pixels
    pred[0, 2, :2] = 8        # covers 2 of 4: exactly half, not matched
    gt[0, 3, :2] = 3          # 2 pixels, covered by 9 too (9 matches 1 and 3)
    pred[0, 3, :2] = 9
    mg, mp = match_masks(gt, pred, [0, 0, 0], [1, 2, 3], [0, 0], [9, 8])
    assert mg.tolist() == [0, 2] and mp.tolist() == [0, 0]


def test_a_predicted_node_on_two_reference_nodes_is_one_non_split():
    g = build_track_graph([0, 1, 0, 1], [1, 1, 2, 2])
    p = build_track_graph([0, 1], [1, 1])
    # Frame 1: the prediction covers both reference cells (CTC many-to-one).
    out = metrics.ctc_metrics(g, p, [0, 1, 3], [0, 1, 1])
    # NS 1 (pred node 1); FN node 1 (gt 2); the predicted edge 0 -> 1 ends on a non-split
    # node, so it is not compared; both reference edges are FN.
    assert (out["ns_nodes"], out["fn_nodes"], out["fp_nodes"]) == (1, 1, 0)
    assert (out["fp_edges"], out["fn_edges"], out["ws_edges"]) == (0, 2, 0)
    assert out["aogm"] == 5 + 10 + 3.0
    assert out["det"] == 1 - 15 / 40 and out["lnk"] == 1 - 3 / 3
    with pytest.raises(ValueError, match="one-to-one"):
        metrics.division_metrics(g, p, [0, 1, 3], [0, 1, 1])


def test_empty_reference_gives_undefined_scores():
    g = build_track_graph([0], [1])
    p = build_track_graph([], [])
    out = metrics.ctc_metrics(g, p, [], [])
    assert out["lnk"] is None and out["det"] == 0.0
    assert metrics.chota(g, p, [], [])["chota"] == 0.0
    empty = build_track_graph([], [])
    assert metrics.chota(empty, empty, [], [])["chota"] is None


def test_table_rows_in_errors_are_the_tables_rows():
    df = pd.DataFrame({"frame": [0, 1, 1], "track": [1, 1, 1]})
    with pytest.raises(InputError) as err:
        graph_from_table(df, "track")
    assert err.value.row == 3 and err.value.column == "track"


def test_mask_matching_in_3d_and_with_a_first_frame_offset():
    gt = np.zeros((2, 2, 3, 3), dtype=np.uint16)  # frames 5 and 6, z, y, x
    pred = np.zeros_like(gt)
    gt[1, :, 0, :] = 4            # 6 voxels in frame 6
    pred[1, 0, 0, :] = 2          # 3 voxels in z = 0 ...
    pred[1, 1, 0, :2] = 2         # ... and 2 in z = 1: 5 of 6, matched
    gt[0, 0, 0, 0] = 4            # frame 5: one voxel, predicted by label 2 too
    pred[0, 0, 0, 0] = 2
    mg, mp = match_masks(gt, pred, [6, 5], [4, 4], [5, 6], [2, 2], first_frame=5)
    assert mg.tolist() == [0, 1] and mp.tolist() == [1, 0]


def test_points_are_n_rows_or_one_axis_and_nothing_else():

    # 3 points: a (3, 2) array as given, a length-3 vector as one axis
    assert points([[0, 1], [2, 3], [4, 5]], 3).tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert points([7, 8, 9], 3).tolist() == [[7.0], [8.0], [9.0]]
    assert points(np.zeros((0, 2)), 0).shape == (0, 2) and points([], 0).shape == (0, 1)
    # flattened x0, y0, x1, y1, x2, y2 used to be read as 3 points of 2 axes silently
    for bad, shape in (([0, 1, 2, 3, 4, 5], "(6,)"), ([[0, 1], [2, 3]], "(2, 2)"),
                       (np.zeros((3, 1, 2)), "(3, 1, 2)")):
        with pytest.raises(InputError) as raised:
            points(bad, 3)
        assert str(raised.value) == (f"coordinates of shape {shape} for 3 points; "
                                     "expected (3, dim) or (3,)")
