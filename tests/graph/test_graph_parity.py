"""Graph metrics agree with traccuracy 0.4.3 (run in .venv-traccuracy) to 1e-9.

Inputs: the hand-built lineages (lineages.py), the real GEFF lineages in
``../shared/data/tracker-formats/geff`` (E. coli 2-D, HeLa 2-D, mouse 3-D) against
perturbed copies (jitter, dropped observations, cut parent links, false divisions,
extras), and the real CTC data (the java-ctcmetrics fixture; the HeLa result against an
edited copy of itself) matched by the CTC mask rule.

Known difference: traccuracy reports the buffer-0 mitotic branching correctness for every
frame buffer; ours uses each buffer's counts, so MBC is compared at buffer 0 only (and
checked by hand at buffer 1 in test_graph_hand).
"""

from __future__ import annotations

import numpy as np
import pytest
import tifffile
from graph_helpers import (DATA, assert_same, ctc_table, geff_tables, ours, perturb,
                           run_ctc, run_points, traccuracy_names)
from lineages import CASES

from tests.conftest import built_once
from trackverify.metrics.graph import metrics
from trackverify.metrics.graph.matching import match_masks
from trackverify.metrics.graph.tracks import graph_from_table

pytestmark = pytest.mark.parity
FRAME_BUFFER = 2
MBC = "mitotic_branching_correctness"
GEFF = {"ecoli": ("Ecoli_growth_on_agar_pad.geff", 2.0, 0.4),
        "hela": ("Fluo-N2DL-HeLa-01.zarr/tracks", 6.0, 1.5),
        "mouse": ("mouse-20250719.zarr/tracks", 4.0, 1.0)}


def compare(mine: dict, theirs: dict, label: str) -> None:
    names = traccuracy_names(theirs)
    for fb in range(1, FRAME_BUFFER + 1):
        names.pop(f"frame_buffer_{fb}", None)
    assert mine["n_matches"] == theirs["n_matches"], label
    assert_same(mine, names, label=label)
    fb_theirs = traccuracy_names(theirs)
    for fb in range(1, FRAME_BUFFER + 1):
        key = f"frame_buffer_{fb}"
        assert_same(mine[key], fb_theirs[key], label=f"{label} {key}", skip=(MBC,))
        d = mine[key]
        assert d[MBC] == d["tp_divisions"] / (d["fp_divisions"] + d["gt_divisions"])


def _geff_cases(tmp):
    tables = geff_tables(tmp, {name: DATA / "geff" / path for name, (path, _, _) in
                               GEFF.items()})
    cases = {}
    for name, (_, threshold, jitter) in GEFF.items():
        for seed in (1, 2):
            pred = perturb(tables[name], seed, jitter=jitter, false_divisions=8,
                           missed_divisions=8)
            cases[f"{name}_{seed}"] = (tables[name], pred, threshold)
    for name, make in CASES.items():
        gt, pred, _ = make()
        cases[name] = (gt, pred, 1.0)
    return cases, run_points(tmp, cases, FRAME_BUFFER)


@pytest.fixture(scope="module")
def geff_cases(tmp_path_factory):
    """The GEFF and lineage cases and traccuracy's metrics on each, built once for the suite."""
    if not (DATA / "geff").is_dir():
        pytest.skip("shared tracker-format data absent")
    return built_once(tmp_path_factory, "geff-parity", _geff_cases)


@pytest.mark.parametrize("name", [*CASES, *(f"{g}_{s}" for g in GEFF for s in (1, 2))])
def test_point_matched_metrics_match_traccuracy(geff_cases, name):
    cases, ref = geff_cases
    gt, pred, threshold = cases[name]
    compare(ours(gt, pred, threshold, FRAME_BUFFER), ref[name], name)


def test_geff_cases_exercise_every_error(geff_cases):
    """The real-data cases are not trivial: every error kind and a buffered division."""
    cases, ref = geff_cases
    totals = {}
    for name in cases:
        for key, value in traccuracy_names(ref[name]).items():
            if not isinstance(value, dict):
                totals[key] = totals.get(key, 0) + (value or 0)
    for key in ("fp_nodes", "fn_nodes", "fp_edges", "fn_edges", "ws_edges"):
        assert totals[key] > 0, key
    gained = [ref[n]["divisions"]["Frame Buffer 2"]["True Positive Divisions"]
              - ref[n]["divisions"]["Frame Buffer 0"]["True Positive Divisions"] for n in cases]
    assert max(gained) > 0


def _write_ctc(folder, masks: np.ndarray, rows: np.ndarray, name: str) -> None:
    folder.mkdir(parents=True)
    for t, image in enumerate(masks):
        tifffile.imwrite(folder / f"{name}{t:03d}.tif", image, compression="zlib")
    np.savetxt(folder / f"{name}_track.txt", rows, fmt="%d")


def _clip(rows: np.ndarray, last: int) -> np.ndarray:
    rows = rows[rows[:, 1] <= last].copy()
    rows[:, 2] = np.minimum(rows[:, 2], last)
    rows[~np.isin(rows[:, 3], rows[:, 0]), 3] = 0
    return rows


def _edited_hela(tmp, n_frames: int = 40):
    """The HeLa result (first frames) as reference, and an edited copy as prediction:
    labels shifted by 3 px, three childless tracks erased, two parent links cut, one
    track continued under a new label (a single-child link)."""
    src = DATA / "ctc" / "Fluo-N2DL-HeLa_01_RES"
    masks = np.stack([tifffile.imread(src / f"mask{t:03d}.tif") for t in range(n_frames)])
    rows = _clip(np.loadtxt(src / "res_track.txt", dtype=np.int64, ndmin=2), n_frames - 1)
    _write_ctc(tmp / "gt", masks, rows, "man_track")
    pred = np.roll(masks, 3, axis=2)
    edited = rows.copy()
    childless = edited[~np.isin(edited[:, 0], edited[:, 3]) & (edited[:, 2] - edited[:, 1] > 3)]
    for label in childless[:3, 0]:
        pred[pred == label] = 0
    edited = edited[~np.isin(edited[:, 0], childless[:3, 0])]
    daughters = np.flatnonzero(edited[:, 3] > 0)
    edited[daughters[:2], 3] = 0
    long = edited[(edited[:, 2] - edited[:, 1] >= 10) & ~np.isin(edited[:, 0], edited[:, 3])][0]
    new = int(max(edited[:, 0].max(), masks.max())) + 1
    split = long[1] + 5
    block = pred[split:long[2] + 1]
    block[block == long[0]] = new
    edited[edited[:, 0] == long[0], 2] = split - 1
    edited = np.vstack([edited, [new, split, long[2], long[0]]])
    _write_ctc(tmp / "res", pred, edited, "mask")
    return tmp / "gt", tmp / "res"


def _merged_cells(tmp):
    """Two reference cells side by side, frames 0-2; the prediction covers both with one
    label in frame 1 (a non-split node: many-to-one), separate labels before and after."""
    gt = np.zeros((3, 20, 20), dtype=np.uint16)
    gt[:, 2:8, 2:8] = 1
    gt[:, 2:8, 10:16] = 2
    pred = np.zeros_like(gt)
    pred[0, 2:8, 2:8], pred[0, 2:8, 10:16] = 1, 2
    pred[1, 1:9, 1:17] = 1
    pred[2, 2:8, 2:8], pred[2, 2:8, 10:16] = 1, 3
    _write_ctc(tmp / "gt", gt, np.array([[1, 0, 2, 0], [2, 0, 2, 0]]), "man_track")
    _write_ctc(tmp / "res", pred, np.array([[1, 0, 2, 0], [2, 0, 0, 0], [3, 2, 2, 0]]), "mask")
    return tmp / "gt", tmp / "res"


def _ctc_ours(gt_dir, res_dir, masks) -> dict:
    gt = ctc_table(next(gt_dir.glob("*_track.txt")))
    pred = ctc_table(next(res_dir.glob("*_track.txt")))
    g, p = graph_from_table(gt, "track"), graph_from_table(pred, "track")
    mg, mp = match_masks(masks["gt"], masks["pred"], g.frame, gt["track"], p.frame,
                         pred["track"])
    out = {**metrics.ctc_metrics(g, p, mg, mp), **metrics.chota(g, p, mg, mp),
           "n_matches": len(mg)}
    if metrics.is_one_to_one(mg, mp):
        out.update(metrics.division_metrics(g, p, mg, mp, 1))
    return out


def test_ctc_matched_metrics_match_traccuracy(tmp_path):
    java = DATA / "ctc" / "java-ctcmetrics_test_data"
    if not java.is_dir():
        pytest.skip("shared tracker-format data absent")
    cases = {"java": (java / "GT" / "TRA", java / "res"),
             "hela": _edited_hela(tmp_path / "hela"),
             "merged": _merged_cells(tmp_path / "merged")}
    ref = run_ctc(tmp_path, cases)
    for name, (gt_dir, res_dir) in cases.items():
        mine = _ctc_ours(gt_dir, res_dir, ref[name]["masks"])
        assert mine["gt_nodes"] == ref[name]["gt_nodes"], name
        assert mine["gt_edges"] == ref[name]["gt_edges"], name
        theirs = traccuracy_names(ref[name])
        theirs.pop("frame_buffer_1", None)
        assert mine["n_matches"] == ref[name]["n_matches"], name
        assert_same(mine, theirs, label=name)
    hela = traccuracy_names(ref["hela"])
    assert hela["fn_nodes"] > 0 and hela["fn_edges"] > 0 and hela["tra"] < 1
    merged = traccuracy_names(ref["merged"])
    # Non-split: one predicted node on two reference nodes; no division metrics then.
    assert merged["ns_nodes"] == 1 and "divisions" not in ref["merged"]
