"""``trackverify evaluate`` and ``evaluate_graph`` with lineage links: the graph families in
results.json, the reason when links are absent, one-line input errors, pooling."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from graph_helpers import assert_same, ours
from lineages import false_division, missed_division

from trackverify.cli.app import main
from trackverify.errors import ConfigError
from trackverify.metrics.graph.evaluate import evaluate_graph


def tables(make, recording="a"):
    gt, pred, expected = make()
    ref = gt.assign(recording=recording)
    pred = pred.rename(columns={"track": "pred_id"}).assign(recording=recording)
    return ref, pred, expected


def run(tmp_path, ref, pred, capsys, *extra):
    ref.to_csv(tmp_path / "ref.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--reference", str(tmp_path / "ref.csv"), "--predictions",
              str(tmp_path / "pred.csv"), "--out", str(tmp_path / "out"), *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return exit_info.value.code, captured.out, captured.err


def test_results_group_the_graph_metrics_by_family(tmp_path, capsys):
    ref, pred, expected = tables(missed_division)
    code, out, _ = run(tmp_path, ref, pred, capsys, "--match-distance-um", "1")
    assert code == 0 and "graph metrics" in out
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    graph = data["graph_metrics"]
    assert set(graph) == {"status", "definition", "matching", "ctc", "divisions", "chota",
                          "sparse_reference"}
    assert graph["sparse_reference"] == {"on": False}
    assert graph["status"] == {"lineage_links": True, "reason": None}
    # point data: traccuracy's definition by default, matched as points
    assert graph["definition"] == "traccuracy" and data["settings"]["definition"] == "traccuracy"
    assert graph["matching"] == "points: one-to-one per frame within 1.0 um (Hungarian)"
    assert set(graph["ctc"]) == {"a", "pooled"}
    flat = {**graph["ctc"]["a"], "chota": graph["chota"]["a"], **graph["divisions"]["a"]}
    assert_same(flat, expected, tol=1e-12)
    assert data["settings"]["match_distance_um"] == 1.0
    assert data["settings"]["division_frame_buffer"] == 1
    # MT / PT / ML beside CLEAR: all 3 reference tracks are matched in every frame.
    assert data["tracking_gt"]["a"]["mt"] == 3 and data["tracking_gt"]["a"]["ml"] == 0


def test_without_parent_links_divisions_are_null_with_the_reason(tmp_path, capsys):
    ref, pred, _ = tables(missed_division)
    code, out, _ = run(tmp_path, ref, pred.drop(columns="parent_track"), capsys)
    assert code == 0
    assert "division metrics not reported" in out and "predictions" in out
    graph = json.loads((tmp_path / "out" / "results.json").read_text())["graph_metrics"]
    assert graph["status"]["lineage_links"] is False
    assert graph["divisions"] == {"a": None, "pooled": None}
    assert graph["ctc"]["a"]["tra"] is not None


def test_bad_parent_is_one_line_naming_file_column_and_row(tmp_path, capsys):
    ref, pred, _ = tables(missed_division)
    ref.loc[5, "parent_track"] = 9
    code, _, err = run(tmp_path, ref, pred, capsys)
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "ref.csv" in line and "parent_track" in line
    assert "row 6" in line


def test_pooled_is_the_union_of_recordings():
    ra, pa, _ = tables(missed_division, "a")
    rb, pb, _ = tables(false_division, "b")
    ref = pd.concat([ra, rb], ignore_index=True)
    pred = pd.concat([pa, pb], ignore_index=True)
    res = evaluate_graph(ref, pred, 1.0)
    a, b, pooled = (res["ctc"][k] for k in ("a", "b", "pooled"))
    for key in ("aogm", "ns_nodes", "fp_nodes", "fn_nodes", "fp_edges", "fn_edges",
                "ws_edges", "gt_nodes", "gt_edges"):
        assert pooled[key] == a[key] + b[key]
    zero = 10 * pooled["gt_nodes"] + 1.5 * pooled["gt_edges"]
    assert pooled["tra"] == 1 - pooled["aogm"] / zero
    div = res["divisions"]["pooled"]["frame_buffer_0"]
    assert (div["gt_divisions"], div["pred_divisions"], div["fn_divisions"],
            div["fp_divisions"]) == (1, 1, 1, 1)


def test_linked_by_detection_when_both_tables_carry_it():
    ref, pred, expected = tables(missed_division)
    ref["detection"] = range(len(ref))
    pred = pred.assign(detection=range(len(pred)), x_um=pred["x_um"] + 50.0)
    res = evaluate_graph(ref, pred, 1.0)
    assert_same(res["ctc"]["a"], {k: expected[k] for k in ("aogm", "tra", "lnk", "det")})


def test_matches_the_table_level_computation_and_does_not_modify_inputs():
    ref, pred, _ = tables(false_division)
    before = ref.copy(deep=True), pred.copy(deep=True)
    res = evaluate_graph(ref, pred, 1.0)
    pd.testing.assert_frame_equal(ref, before[0])
    pd.testing.assert_frame_equal(pred, before[1])
    direct = ours(ref, pred, 1.0, pred_id="pred_id")
    assert res["ctc"]["a"]["aogm"] == direct["aogm"] and res["chota"]["a"] == direct["chota"]


@pytest.mark.parametrize("kw", [{"match_distance_um": 0}, {"match_distance_um": True},
                                {"frame_buffer": -1}, {"frame_buffer": 1.5}])
def test_bad_settings_are_config_errors(kw):
    ref, pred, _ = tables(false_division)
    args = {"match_distance_um": 1.0, "frame_buffer": 1, **kw}
    with pytest.raises(ConfigError):
        evaluate_graph(ref, pred, args["match_distance_um"], args["frame_buffer"])


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, -5e-324, True, float("nan"), float("inf"),
                                 "1.0", None])
def test_a_match_distance_that_is_not_a_positive_finite_number_is_refused(bad):
    ref, pred, _ = tables(false_division)
    with pytest.raises(ConfigError) as caught:
        evaluate_graph(ref, pred, bad)
    assert str(caught.value) == f"match_distance_um must be a positive number, got {bad!r}"


@pytest.mark.parametrize("good", [1, np.int64(1), np.float32(1.0), np.float64(1.0)])
def test_a_match_distance_of_any_real_type_scores_as_its_float(good):
    ref, pred, _ = tables(false_division)
    assert evaluate_graph(ref, pred, good) == evaluate_graph(ref, pred, 1.0)


def test_no_predictions_every_reference_node_and_edge_is_missed():
    ref, pred, _ = tables(false_division)
    res = evaluate_graph(ref, pred.iloc[:0], 1.0)
    ctc = res["ctc"]["a"]
    assert (ctc["fn_nodes"], ctc["fn_edges"], ctc["fp_nodes"]) == (5, 4, 0)
    assert ctc["det"] == 0.0 and ctc["tra"] == 0.0 and ctc["lnk"] == 0.0
    assert res["chota"]["a"] == 0.0
    div = res["divisions"]["a"]["frame_buffer_0"]
    assert div["division_recall"] is None and div["division_precision"] is None


def test_by_detection_without_predictions_and_with_two_on_one_detection():
    ref, pred, _ = tables(false_division)
    ref["detection"] = range(len(ref))
    pred = pred.assign(detection=-1 - pd.Series(range(len(pred))))
    empty = evaluate_graph(ref, pred.iloc[:0], 1.0)
    assert empty["ctc"]["a"]["fn_nodes"] == 5
    # Frame 0: a second prediction on detection 0 (a new id): the smaller pred_id is the
    # match, the other a false-positive node. With id 0 (smaller than track 1), the new one
    # takes the match and the track's first edge is lost: one FN edge.
    base = pred.assign(detection=list(range(5)) + [-1, -2])
    for new_id, fn_edges in ((99, 0), (0, 1)):
        both = pd.concat([pred.iloc[:1].assign(pred_id=new_id, detection=0), base],
                         ignore_index=True)
        ctc = evaluate_graph(ref, both, 1.0)["ctc"]["a"]
        assert (ctc["fn_nodes"], ctc["fp_nodes"], ctc["fn_edges"]) == (0, 3, fn_edges)
