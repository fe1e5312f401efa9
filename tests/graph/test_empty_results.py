"""A result with no tracks is scored (TRA 0, DET 0, undefined where undefined); a reference
with no tracks is refused.

Hand cases, each checked against both references: py-ctcmetrics 1.3.3 (its gate calls an
empty result invalid and then raises, so its own measure functions are called past the gate:
ctcmetrics_reference.past_the_gate) and traccuracy (its CTC loader's check raises on an empty
track file, so the result is loaded without it: traccuracy_reference.ctc).

CTC weights (Matula et al. 2015): a missed node (FN) costs 10, a missed edge (EA) 1.5, so a
result with no tracks has AOGM = AOGM_0 = 10 |V_ref| + 1.5 |E_ref| and DET = TRA = 0; LNK =
0 (no reference edge found); CHOTA = sqrt(0 / |V_ref|) = 0; division recall 0 (TP 0 of
the reference's divisions), precision and F1 undefined (no predicted division: 0 / 0).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from ctc_cases import render, rows_of, span, write_folder
from graph_helpers import assert_same, run_ctc, run_points, table, traccuracy_names

from trackverify.errors import InputError
from trackverify.io.formats import detect_format
from trackverify.io.tracks import read_tracks
from trackverify.metrics.graph.ctc import evaluate_ctc

# Case 1: track 1 (slot 0, frames 0-3), track 2 (slot 9, frames 0-1) divides into 3 and 4
# (slots 17, 18, frames 2-3): 10 nodes, 8 edges (1: 3, 2: 1, 3: 1, 4: 1, two parent links).
ONE = ({1: span(0, 0, 3), 2: span(9, 0, 1), 3: span(17, 2, 3), 4: span(18, 2, 3)},
       {3: 2, 4: 2}, 4)
# Case 2: track 1 (frames 0-1) divides into 2 (frames 2-3) and 3 (frames 2-5); 2 divides
# into 4 and 5 (frames 4-5). 12 nodes, 11 edges (7 within tracks, 4 parent links); track 2
# begins and ends with a division (a CCA track); segmentations of frames 0 and 2.
TWO = ({1: span(0, 0, 1), 2: span(0, 2, 3), 3: span(1, 2, 5), 4: span(0, 4, 5),
        5: span(2, 4, 5)}, {2: 1, 3: 1, 4: 2, 5: 2}, 6)
EXPECTED = {  # by hand, from the module doc's weights
    "one": {"aogm": 10 * 10 + 1.5 * 8, "fn_nodes": 10, "fn_edges": 8, "divisions": 1,
            "cca": None, "seg": None},
    "two": {"aogm": 10 * 12 + 1.5 * 11, "fn_nodes": 12, "fn_edges": 11, "divisions": 2,
            "cca": 0.0, "seg": 0.0},
}


def write_empty_case(root, case, seg_frames=()):
    """``root/gt`` (``TRA/`` and, for ``seg_frames``, ``SEG/``) and ``root/res``: an empty
    ``res_track.txt`` beside label images of background only."""
    import tifffile

    cells, parents, n_frames = case
    stack = render(cells, n_frames)
    write_folder(root / "gt" / "TRA", stack, rows_of(cells, parents), "man_track")
    if seg_frames:
        (root / "gt" / "SEG").mkdir()
        for t in seg_frames:
            tifffile.imwrite(root / "gt" / "SEG" / f"man_seg{t:03d}.tif", stack[t])
    write_folder(root / "res", render({}, n_frames), np.zeros((0, 4), np.int64), "mask")
    (root / "res" / "res_track.txt").write_text("")
    return root / "gt", root / "res"


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty")
    (root / "one").mkdir()
    (root / "two").mkdir()
    return {"one": write_empty_case(root / "one", ONE),
            "two": write_empty_case(root / "two", TWO, seg_frames=(0, 2))}


def check_by_hand(result: dict, name: str, definition: str) -> None:
    want = EXPECTED[name]
    ctc = result["ctc"]["pooled"]
    assert ctc["det"] == ctc["tra"] == ctc["lnk"] == 0.0
    assert ctc["aogm"] == ctc["aogm_0"] == want["aogm"] if definition == "ctc" else \
        ctc["aogm"] == want["aogm"]
    assert (ctc["fn_nodes"], ctc["fn_edges"]) == (want["fn_nodes"], want["fn_edges"])
    assert ctc["fp_nodes"] == ctc["ns_nodes"] == ctc["fp_edges"] == ctc["ws_edges"] == 0
    assert result["chota"]["pooled"] == 0.0
    for buffer in result["divisions"]["pooled"].values():
        assert buffer["division_recall"] == 0.0 and buffer["fn_divisions"] == want["divisions"]
        assert buffer["division_precision"] is None and buffer["division_f1"] is None
        assert buffer["mitotic_branching_correctness"] == 0.0
    challenge = result["challenge"]["pooled"]
    assert challenge["ct"] == 0.0 and challenge["tf"] == 0.0
    assert all(challenge[f"BC({i})"] == 0.0 for i in range(4))
    assert challenge["cca"] == want["cca"] and challenge["seg"] == want["seg"]


@pytest.mark.parametrize("name", ["one", "two"])
def test_empty_ctc_result_by_hand(cases, name):
    for definition in ("ctc", "traccuracy"):
        check_by_hand(evaluate_ctc(*cases[name], definition=definition), name, definition)


@pytest.mark.parity
def test_empty_ctc_result_equals_py_ctcmetrics(cases):
    from test_ctc_parity import compare, ours, run_reference

    theirs = run_reference([cases["one"], cases["two"]])
    for name, got in zip(("one", "two"), theirs):
        assert got["Valid"] == 0  # its gate: "No tracks in result"
        compare(ours(*cases[name]), {**got, "Valid": 1}, name)
        assert got["AOGM"] == EXPECTED[name]["aogm"] and got["TRA"] == got["DET"] == 0


@pytest.mark.parity
def test_empty_ctc_result_equals_traccuracy(cases, tmp_path):
    theirs = run_ctc(tmp_path, {n: (gt / "TRA", res) for n, (gt, res) in cases.items()})
    for name, (gt, res) in cases.items():
        mine = evaluate_ctc(gt, res, definition="traccuracy")
        flat = {**mine["ctc"]["pooled"], "chota": mine["chota"]["pooled"],
                **mine["divisions"]["pooled"]}
        got = traccuracy_names(theirs[name])
        assert got["tra"] == got["det"] == 0.0
        assert_same(flat, got, label=name)


def points_reference() -> pd.DataFrame:
    """Track 1 (frames 0-2), track 2 (frames 0-1) dividing into 3 and 4 (frame 2): 7 nodes,
    5 edges (1: 2, 2: 1, two parent links), one division."""
    return table([0, 1, 2, 0, 1, 2, 2], [1, 1, 1, 2, 2, 3, 4], [-1, -1, -1, -1, -1, 2, 2],
                 [[1, 1], [1.5, 1], [2, 1], [10, 10], [10, 10.5], [8, 12], [12, 12]])


def run(args, capsys):
    """``trackverify ARGS``: ``(exit code, stdout, stderr)``."""
    from trackverify.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def _evaluate_cli(reference, predictions, out, capsys):
    code, _, err = run(["evaluate", "--reference", reference, "--predictions", predictions,
                        "--out", out], capsys)
    assert code == 0, err
    return json.loads((out / "results.json").read_text())


def empty_geff(path):
    """A GEFF 1.x store of no node, written by the geff library."""
    geff = pytest.importorskip("geff")
    import networkx as nx

    geff.write(nx.DiGraph(), str(path), axis_names=["t", "y", "x"],
               axis_types=["time", "space", "space"], axis_units=[None, "micrometer",
                                                                   "micrometer"])
    return path


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["table", "geff"])
def test_empty_table_or_geff_result_equals_traccuracy(tmp_path, capsys, kind):
    """``trackverify evaluate`` on a point reference and a result with no tracks (a CSV of
    its header only, or a GEFF store of no node): AOGM = 10 * 7 + 1.5 * 5 = 77.5, TRA = DET
    = LNK = CHOTA = 0 and division precision / F1 null, as traccuracy gives (PointMatcher),
    and the tracking measures of no prediction (MOTA = 1 - 7 / 7 = 0, IDF1 0, HOTA 0, AssA
    and the precisions null)."""
    ref = points_reference()
    ref_csv = tmp_path / "ref.csv"
    ref.to_csv(ref_csv, index=False)
    if kind == "table":
        pred = tmp_path / "pred.csv"
        pred.write_text("frame,pred_id,x_um,y_um,parent_track\n")
    else:
        pred = empty_geff(tmp_path / "pred.geff")
    assert detect_format(pred) == kind
    results = _evaluate_cli(ref_csv, pred, tmp_path / "out", capsys)
    graph, tracking = results["graph_metrics"], results["tracking_gt"]["pooled"]
    ctc = graph["ctc"]["pooled"]
    assert ctc["aogm"] == 77.5 and ctc["det"] == ctc["tra"] == ctc["lnk"] == 0.0
    assert graph["chota"]["pooled"] == 0.0
    assert tracking["mota"] == tracking["idf1"] == tracking["hota"] == 0.0
    assert tracking["assa"] is None and tracking["idp"] is None and tracking["detpr"] is None
    assert tracking["correct_observations"] == 0 and tracking["reference_observations"] == 7
    empty = table([], [], [], np.zeros((0, 2)))
    theirs = traccuracy_names(run_points(tmp_path, {"empty": (ref, empty, 2.5)}, 1)["empty"])
    mine = {**ctc, "chota": graph["chota"]["pooled"],
            **{k: v for k, v in graph["divisions"]["pooled"].items()}}
    assert_same(mine, theirs, label=kind)


def test_empty_result_folder_is_recognised_as_ctc(cases, tmp_path):
    """The layout decides: an empty res_track.txt beside mask###.tif is CTC (given as the
    folder or as the track file); an empty res_track.txt alone is not."""
    _, res = cases["one"]
    assert detect_format(res) == "ctc" and detect_format(res / "res_track.txt") == "ctc"
    loaded = read_tracks(res, "predictions")
    assert len(loaded.table) == 0 and loaded.record["tracks"] == 0
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "res_track.txt").write_text("")
    with pytest.raises(InputError, match="cannot tell the format"):
        detect_format(alone)


def test_empty_result_with_labels_in_its_masks_is_refused(cases, tmp_path):
    """An empty track file beside masks that hold labels breaks the Challenge's rules."""
    import shutil

    _, res = cases["one"]
    bad = tmp_path / "res"
    shutil.copytree(res, bad)
    write_folder(bad, render({7: span(3, 0, 0)}, ONE[2]), np.zeros((0, 4), np.int64), "mask")
    (bad / "res_track.txt").write_text("")
    with pytest.raises(InputError, match="label 7 of frame 0 is not in res_track.txt"):
        read_tracks(bad, "predictions")


def test_reference_without_tracks_is_refused(cases, tmp_path, capsys):
    """Nothing to score against: the CTC reference (by the Challenge evaluation and as a
    table), a table and a GEFF store without tracks are each one error, exit 2."""
    gt, res = cases["one"]
    empty_gt = tmp_path / "gt" / "TRA"
    write_folder(empty_gt, render({}, ONE[2]), np.zeros((0, 4), np.int64), "man_track")
    (empty_gt / "man_track.txt").write_text("")
    with pytest.raises(InputError, match="reference track file has no tracks"):
        evaluate_ctc(empty_gt.parent, res)
    with pytest.raises(InputError, match="reference table has no rows"):
        read_tracks(empty_gt.parent, "reference")
    header = tmp_path / "ref.csv"
    header.write_text("frame,track,x_um,y_um\n")
    for path in (empty_gt.parent, header, empty_geff(tmp_path / "ref.geff")):
        code, _, err = run(["evaluate", "--reference", path, "--predictions", res], capsys)
        assert code == 2 and ("no tracks" in err or "has no rows" in err), err
        assert err.count("\n") == 1
