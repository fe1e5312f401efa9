"""The Challenge's definition and traccuracy's on hand-computed CTC cases (ctc_cases.py),
and the evaluate command on CTC folders (mask matching, validation, the default)."""

from __future__ import annotations

import json

import pytest
from ctc_cases import VALID, invalid_cases, write_case

from trackverify.cli.app import main
from trackverify.metrics.graph.ctc import evaluate_ctc

pytest.importorskip("tifffile")
KEYS = ("ns_nodes", "fn_nodes", "fp_nodes", "fp_edges", "fn_edges", "ws_edges", "aogm",
        "aogm_0")

# name: (AOGM_0, {definition: (NS, FN, FP, ED, EA, EC)}); worked in the comments.
EXPECTED = {
    # 9 nodes, 6 edges. Frame 1: one label on 3 cells (k = 3): NS 2 (ctc) or 1; its edges
    # are not between uniquely matched nodes: the 6 reference edges are missing.
    "nonsplit_three": (99.0, {"ctc": (2, 0, 0, 0, 6, 0), "traccuracy": (1, 0, 0, 0, 6, 0)}),
    # 4 nodes, 3 edges; the result's 1 -> 2 link changes label (a parent link) where the
    # reference keeps its label: EC 1 (ctc); traccuracy sees no division: 0.
    "relabel_without_gap": (44.5, {"ctc": (0, 0, 0, 0, 0, 1),
                                   "traccuracy": (0, 0, 0, 0, 0, 0)}),
    # 6 nodes, 5 edges; the link 1 -> 3 is missing (EA 1); 1 -> 2 is a parent link on both
    # sides (ctc: EC 0), but leaves a division only in the reference (traccuracy: 1).
    "missed_division_single_child": (67.5, {"ctc": (0, 0, 0, 0, 1, 0),
                                            "traccuracy": (0, 0, 0, 0, 1, 1)}),
    # 15 nodes, 12 edges; a missed cell (FN 1, 2 missing edges), an extra cell (FP 1), two
    # tracks swapping cells (2 redundant edges, 2 missing ones).
    "nodes_and_edges": (168.0, {d: (0, 1, 1, 2, 4, 0) for d in ("ctc", "traccuracy")}),
    # 8 nodes, 7 edges; the result divides a frame late: daughter 3's first node is missed
    # (FN 1; its two edges missing), the result's 1@2 -> 3@3 is redundant, and the links
    # 1@1 -> 1@2 and 1@2 -> 2@3 are of the other kind on both definitions (EC 2).
    "late_division": (90.5, {d: (0, 1, 0, 1, 2, 2) for d in ("ctc", "traccuracy")}),
    "three_way_division": (90.5, {d: (0, 0, 0, 0, 0, 0) for d in ("ctc", "traccuracy")}),
}
WEIGHTS = (5, 10, 1, 1, 1.5, 1)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hand")
    return {name: write_case(root / name, *make()[:2], make()[2])
            for name, make in VALID.items()}


@pytest.mark.parametrize("definition", ["ctc", "traccuracy"])
@pytest.mark.parametrize("name", EXPECTED)
def test_aogm_counts_by_hand(folders, name, definition):
    zero, counts = EXPECTED[name]
    ns, fn, fp, ed, ea, ec = counts[definition]
    aogm = sum(w * c for w, c in zip(WEIGHTS, (ns, fn, fp, ed, ea, ec)))
    got = evaluate_ctc(*folders[name], definition=definition)["ctc"]["pooled"]
    assert tuple(got[k] for k in KEYS) == (ns, fn, fp, ed, ea, ec, aogm, zero)
    assert got["tra"] == pytest.approx(1 - aogm / zero, abs=1e-12)


def test_nonsplit_three_scores_by_hand(folders):
    """k = 3: DET 1 - 5 * 2 / 90 (ctc) against 1 - 5 / 90 (traccuracy); LNK 0 on both."""
    ctc = evaluate_ctc(*folders["nonsplit_three"])["ctc"]["pooled"]
    tr = evaluate_ctc(*folders["nonsplit_three"], definition="traccuracy")["ctc"]["pooled"]
    assert ctc["det"] == pytest.approx(80 / 90, abs=1e-12)
    assert tr["det"] == pytest.approx(85 / 90, abs=1e-12)
    assert ctc["aogm"] == 19 and tr["aogm"] == 14 and ctc["lnk"] == tr["lnk"] == 0


def test_branching_correctness_by_hand(folders):
    late = evaluate_ctc(*folders["late_division"])["challenge"]["pooled"]
    assert (late["tp_div(0)"], late["fp_div(0)"], late["fn_div(0)"], late["BC(0)"]) == \
        (0, 1, 1, 0)
    assert (late["tp_div(1)"], late["BC(1)"]) == (1, 1)
    three = evaluate_ctc(*folders["three_way_division"])
    assert three["challenge"]["pooled"]["BC(0)"] == 1
    # traccuracy's rule wants exactly two matched daughters: a wrong-children division.
    assert three["divisions"]["pooled"]["frame_buffer_0"]["wc_divisions"] == 1
    none = evaluate_ctc(*folders["relabel_without_gap"])["challenge"]["pooled"]
    assert none["BC(0)"] is None and none["cca"] is None  # no reference division


def test_complete_tracks_and_track_fractions_by_hand(folders):
    # relabel: 1 reference track of 4 frames, 2 result tracks of 2 each: none complete
    # (CT 0); its longest run on one result track is 2 of 4 frames (TF 0.5).
    got = evaluate_ctc(*folders["relabel_without_gap"])["challenge"]["pooled"]
    assert got["ct"] == 0 and got["tf"] == 0.5
    # missed division: all three reference tracks found whole: 2 * 3 / (3 + 3).
    got = evaluate_ctc(*folders["missed_division_single_child"])["challenge"]["pooled"]
    assert got["ct"] == 1 and got["tf"] == 1
    # nodes_and_edges: tracks 1 (5 frames: runs 2 + 2 on labels 1 and 4), 2 and 3 (runs 2
    # and 3 on labels 5 / 6): TF = (2/5 + 3/5 + 3/5) / 3; CT 0 (none whole), 3 vs 5 tracks.
    got = evaluate_ctc(*folders["nodes_and_edges"])["challenge"]["pooled"]
    assert got["tf"] == pytest.approx((2 / 5 + 3 / 5 + 3 / 5) / 3, abs=1e-12)
    assert got["ct"] == 0


def cli(capsys, *argv) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(["evaluate", *argv])
    captured = capsys.readouterr()
    return info.value.code, captured.out + captured.err


def test_evaluate_defaults_to_ctc_on_ctc_folders(folders, tmp_path, capsys):
    gt, res = folders["relabel_without_gap"]
    runs = {}
    for extra in ([], ["--definition", "traccuracy"]):
        out = tmp_path / f"out{len(extra)}"
        code, output = cli(capsys, "--reference", str(gt), "--predictions", str(res),
                           "--pixel-size", "1", "--out", str(out), *extra)
        assert code == 0, output
        runs[len(extra)] = json.loads((out / "results.json").read_text())
    ctc, tr = runs[0], runs[2]
    assert ctc["settings"]["definition"] == "ctc" and ctc["settings"]["graph_matching"] == "mask"
    assert ctc["graph_metrics"]["matching"].startswith("mask")
    assert ctc["graph_metrics"]["ctc"]["pooled"]["ws_edges"] == 1
    assert tr["graph_metrics"]["ctc"]["pooled"]["ws_edges"] == 0
    assert tr["settings"]["definition"] == "traccuracy"


def test_invalid_results_exit_2_with_one_line(tmp_path, capsys):
    for name, (gt, res, words) in invalid_cases(tmp_path).items():
        code, output = cli(capsys, "--reference", str(gt), "--predictions", str(res),
                           "--pixel-size", "1")
        assert code == 2, (name, output)
        lines = output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in output, (name, output)
        for word in words:
            assert word in lines[0], (name, lines[0])


def test_the_docs_example_runs(tmp_path, monkeypatch):
    """docs/reference/metrics.md's evaluate_ctc example, which writes its own two folders:
    the result is the reference (two cells, two frames, no division)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "metrics.md").read_text()
    section = text.split("## The Cell Tracking Challenge's own evaluation")[1]
    code = section.split("```python\n")[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "docs/reference/metrics.md", "exec"), scope)  # noqa: S102 - the docs' own code
    assert scope["result"]["ctc"]["pooled"]["tra"] == 1  # nothing to correct
    assert scope["result"]["ctc"]["pooled"]["aogm"] == 0
    assert scope["result"]["challenge"]["pooled"]["BC(0)"] is None  # no reference division


def test_sparse_reference_by_hand(tmp_path, capsys):
    """One annotated cell of two: dense, the other cell's 4 nodes are FP (AOGM 4, DET
    1 - 4 / 40); sparse, they weigh 0 (AOGM 0, DET = TRA = 1) and the measures that count
    them are null, with the reason."""
    gt = ({1: [(t, 0) for t in range(4)]}, {})
    res = ({1: [(t, 0) for t in range(4)], 2: [(t, 1) for t in range(4)]}, {})
    folders = write_case(tmp_path / "sparse", gt, res, 4)
    dense = evaluate_ctc(*folders)
    assert dense["ctc"]["pooled"]["aogm"] == 4 and dense["ctc"]["pooled"]["det"] == 0.9
    assert dense["sparse_reference"] == {"on": False}
    sparse = evaluate_ctc(*folders, sparse_reference=True)
    ctc = sparse["ctc"]["pooled"]
    assert (ctc["fp_nodes"], ctc["aogm"], ctc["det"], ctc["tra"], ctc["lnk"]) == (4, 0, 1, 1, 1)
    assert sparse["chota"]["pooled"] is None
    challenge = sparse["challenge"]["pooled"]
    assert challenge["ct"] is None and challenge["BC(0)"] is None and challenge["tf"] == 1
    validity = sparse["sparse_reference"]["validity"]
    assert validity["chota"]["valid"] is False and validity["chota"]["reason"]
    assert validity["ctc"]["valid"] is True
    out = tmp_path / "out"
    code, output = cli(capsys, "--reference", str(folders[0]), "--predictions",
                       str(folders[1]), "--pixel-size", "1", "--sparse-reference", "--out",
                       str(out))
    assert code == 0, output
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["sparse_reference"] is True
    assert data["graph_metrics"]["ctc"]["pooled"]["tra"] == 1
    assert data["graph_metrics"]["sparse_reference"]["on"] is True
    pooled = data["tracking_gt"]["pooled"]
    assert pooled["hota"] is None and pooled["mota"] is None and pooled["idf1"] is None
    assert pooled["correct_observation_rate"] == 1  # reference-side: still reported
    assert data["graph_metrics"]["sparse_reference"]["validity"]["tracking_gt.mota"][
        "valid"] is False


def test_sparse_reference_on_points():
    """The same rule on point data: unmatched predictions weigh 0, CHOTA is null."""
    import pandas as pd

    from trackverify.metrics.graph.evaluate import evaluate_graph

    ref = pd.DataFrame({"recording": "r", "frame": [0, 1], "track": [1, 1],
                        "x_um": [0.0, 0.0], "y_um": [0.0, 0.0]})
    pred = pd.DataFrame({"recording": "r", "frame": [0, 1, 0, 1], "pred_id": [1, 1, 2, 2],
                         "x_um": [0.0, 0.0, 50.0, 50.0], "y_um": [0.0] * 4})
    dense = evaluate_graph(ref, pred, 1.0)["ctc"]["pooled"]
    sparse = evaluate_graph(ref, pred, 1.0, sparse_reference=True)
    assert dense["aogm"] == 2 and dense["det"] == 0.9
    assert sparse["ctc"]["pooled"]["aogm"] == 0 and sparse["ctc"]["pooled"]["tra"] == 1
    assert sparse["chota"]["pooled"] is None


def test_ctc_definition_on_points():
    """Point data under definition ctc: a track continued under a new id with a parent link
    is a parent link where the reference keeps its track (EC 1); traccuracy: 0."""
    import pandas as pd

    from trackverify.metrics.graph.evaluate import evaluate_graph

    ref = pd.DataFrame({"recording": "r", "frame": [0, 1, 2, 3], "track": 1,
                        "x_um": 0.0, "y_um": 0.0})
    pred = pd.DataFrame({"recording": "r", "frame": [0, 1, 2, 3], "pred_id": [1, 1, 2, 2],
                         "parent_track": pd.array([None, None, 1, 1], dtype="Int64"),
                         "x_um": 0.0, "y_um": 0.0})
    ref = ref.assign(parent_track=pd.array([None] * 4, dtype="Int64"))
    ctc = evaluate_graph(ref, pred, 1.0, definition="ctc")
    tr = evaluate_graph(ref, pred, 1.0)
    assert ctc["definition"] == "ctc" and ctc["ctc"]["pooled"]["ws_edges"] == 1
    assert ctc["ctc"]["pooled"]["aogm"] == 1 and tr["ctc"]["pooled"]["ws_edges"] == 0
