"""The Cell Tracking Challenge's measures agree with py-ctcmetrics 1.3.3 (run in
.venv-ctcmetrics, which follows the Challenge's evaluation code) to 1e-9, on cases written
here (ctc_cases.py): one per error type, a large seeded one, and the Challenge's Java
fixture; invalid results are refused by both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import numpy as np
import tifffile
from ctc_cases import VALID, invalid_cases, large, planes_3d, span, write_case
from graph_helpers import DATA, HERE, ROOT
from test_graph_parity import _edited_hela

from tests.conftest import built_once
from trackverify.errors import InputError
from trackverify.metrics.graph.ctc import evaluate_ctc

pytestmark = pytest.mark.parity
CTCMETRICS_PYTHON = ROOT / ".venv-ctcmetrics" / "bin" / "python"
TOL = 1e-9
COUNTS = {"AOGM_NS": "ns_nodes", "AOGM_FN": "fn_nodes", "AOGM_FP": "fp_nodes",
          "AOGM_ED": "fp_edges", "AOGM_EA": "fn_edges", "AOGM_EC": "ws_edges",
          "AOGM": "aogm", "AOGM_0": "aogm_0", "TRA": "tra", "DET": "det", "LNK": "lnk"}


def run_reference(pairs: list) -> list:
    if not CTCMETRICS_PYTHON.exists():
        from tests.conftest import missing_reference
        missing_reference("reference environment .venv-ctcmetrics (make test builds it)")
    args = [str(x) for pair in pairs for x in pair]
    done = subprocess.run([str(CTCMETRICS_PYTHON), str(HERE / "ctcmetrics_reference.py"),
                           *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def ours(gt: Path, res: Path) -> dict:
    r = evaluate_ctc(gt, res)
    return {**r["ctc"]["pooled"], **r["challenge"]["pooled"], "chota": r["chota"]["pooled"]}


def compare(mine: dict, theirs: dict, name: str, skip: tuple = ()) -> None:
    assert theirs.get("Valid") == 1, (name, theirs)
    pairs = {**COUNTS, "CHOTA": "chota", "CT": "ct", "TF": "tf", "CCA": "cca", "SEG": "seg",
             **{f"{k}({i})": f"{k}({i})" for k in ("BC", "tp_div", "fp_div", "fn_div")
                for i in range(4)}}
    for key, mine_key in pairs.items():
        if key not in theirs or key in skip:
            continue
        a, b = mine[mine_key], theirs[key]
        if a is None or b is None:
            assert a is None and b is None, f"{name} {key}: {a} vs {b}"
        else:
            assert abs(a - b) <= TOL, f"{name} {key}: {a} vs {b}"


def _as_gt(gt: Path, res: Path) -> tuple[Path, Path]:
    """test_graph_parity's folders in the Challenge's layout: the reference in ``GT/TRA``,
    the track files named ``man_track.txt`` and ``res_track.txt``."""
    target = gt.parent / "GT" / "TRA"
    target.parent.mkdir()
    gt.rename(target)
    (target / "man_track_track.txt").rename(target / "man_track.txt")
    (res / "mask_track.txt").rename(res / "res_track.txt")
    return target.parent, res


def _hela_self(root: Path) -> tuple[Path, Path]:
    """The real HeLa result (92 frames, three-way divisions) as its own reference."""
    src = DATA / "ctc" / "Fluo-N2DL-HeLa_01_RES"
    tra = root / "GT" / "TRA"
    tra.mkdir(parents=True)
    for image in sorted(src.glob("mask*.tif")):
        shutil.copyfile(image, tra / image.name.replace("mask", "man_track"))
    shutil.copyfile(src / "res_track.txt", tra / "man_track.txt")
    return root / "GT", src


def _cases(root: Path) -> tuple[dict, dict]:
    out = {name: write_case(root / name, *make()[:2], make()[2]) for name, make in
           VALID.items()}
    for seed in (1, 2, 3):
        gt, res, n = large(seed)
        out[f"large_{seed}"] = write_case(root / f"large_{seed}", gt, res, n,
                                          seg_frames=(0, 7, 20))
    out["planes_3d"] = planes_3d(root / "planes_3d")
    java = DATA / "ctc" / "java-ctcmetrics_test_data"
    if java.is_dir():
        out["java"] = (java / "GT", java / "res")
        out["hela_edited"] = _as_gt(*_edited_hela(root / "hela_edited"))
        out["hela_self"] = _hela_self(root / "hela_self")
    return out, dict(zip(out, run_reference(list(out.values()))))


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """The CTC folders and py-ctcmetrics' measures on each, built once for the suite."""
    return built_once(tmp_path_factory, "ctc-parity", _cases)


@pytest.mark.parametrize("name", [*VALID, "large_1", "large_2", "large_3", "planes_3d", "java",
                                  "hela_edited", "hela_self"])
def test_measures_match_py_ctcmetrics(cases, name):
    folders, ref = cases
    if name not in folders:
        pytest.skip("shared tracker-format data absent")
    # planes_3d: py-ctcmetrics lists a 3-D frame with n segmented planes n times
    # (parse_masks), so it weighs that frame's segments n times in SEG: see below.
    compare(ours(*folders[name]), ref[name], name, skip=("SEG",) if name == "planes_3d" else ())


def test_seg_of_segmented_planes(cases):
    """SEG on planes of 3-D frames. Frame 0, plane 1: 3 segments, each shifted 2 px in the
    result (Jaccard 48 / 80): sum 1.8. Frame 2, planes 0 and 1: 3 segments, one missed, two
    whole in plane 0 and shifted in plane 1 (112 / 144 each): sum 14/9. Each reference
    segment counts once: (1.8 + 14/9) / 6. py-ctcmetrics counts frame 2 once per plane
    file: (1.8 + 2 * 14/9) / 9."""
    folders, ref = cases
    mine = ours(*folders["planes_3d"])["seg"]
    assert mine == pytest.approx((1.8 + 14 / 9) / 6, abs=1e-12)
    assert ref["planes_3d"]["SEG"] == pytest.approx((1.8 + 2 * 14 / 9) / 9, abs=1e-12)


def test_cases_exercise_every_error(cases):
    """The cases are not trivial: every AOGM component, a k = 3 non-split, a division
    found only with a frame of tolerance."""
    _, ref = cases
    for key in ("AOGM_NS", "AOGM_FN", "AOGM_FP", "AOGM_ED", "AOGM_EA", "AOGM_EC"):
        assert sum(r[key] for r in ref.values()) > 0, key
    assert ref["nonsplit_three"]["AOGM_NS"] == 2
    assert ref["late_division"]["BC(0)"] == 0 and ref["late_division"]["BC(1)"] == 1
    assert all(0 < ref[f"large_{s}"]["SEG"] < 1 for s in (1, 2, 3))  # shifted segments
    assert 0 < ref["planes_3d"]["SEG"] < 1  # segmented planes of 3-D frames
    large_ref = [ref[f"large_{s}"] for s in (1, 2, 3)]
    for key in ("AOGM_NS", "AOGM_FN", "AOGM_FP", "AOGM_ED", "AOGM_EA", "AOGM_EC"):
        assert sum(r[key] for r in large_ref) > 0, key


def test_invalid_results_are_refused_by_both(tmp_path):
    cases = invalid_cases(tmp_path)
    ref = run_reference([(gt, res) for gt, res, _ in cases.values()])
    for (name, (gt, res, words)), theirs in zip(cases.items(), ref):
        assert theirs.get("Valid") == 0 or "error" in theirs, (name, theirs)
        with pytest.raises(InputError) as info:
            evaluate_ctc(gt, res)
        message = str(info.value)
        assert "\n" not in message
        for word in words:
            assert word in message, (name, message)


def test_traccuracy_definition_matches_traccuracy(cases, tmp_path):
    """``definition="traccuracy"`` on the same CTC folders equals traccuracy 0.4.3 (its
    loader and CTCMatcher) on every count, TRA / DET / LNK, CHOTA and the division metrics."""
    from graph_helpers import assert_same, run_ctc, traccuracy_names

    folders, _ = cases
    names = [n for n in folders if n != "hela_self"]  # hela_self: as hela_edited, slower
    tra_dirs = {n: ((folders[n][0] / "TRA") if (folders[n][0] / "TRA").is_dir()
                    else folders[n][0], folders[n][1]) for n in names}
    ref = run_ctc(tmp_path, tra_dirs)
    for name in names:
        mine = evaluate_ctc(*folders[name], definition="traccuracy")
        flat = {**mine["ctc"]["pooled"], "chota": mine["chota"]["pooled"]}
        if mine["divisions"]["pooled"] is not None:
            flat.update(mine["divisions"]["pooled"])
        theirs = traccuracy_names(ref[name])
        theirs.pop("frame_buffer_1", None)
        assert_same(flat, theirs, label=name)


# --- the seeded sweep (tests/graph/ctc_sweep.py; larger: benchmarks/ctc_parity_sweep.py) ---

SWEEP_SEEDS = range(200)
TRACCURACY_SEEDS = range(60)


def sweep_outcomes(root: Path, seeds) -> list:
    """``(case, ours, py-ctcmetrics, disagreements, known departures)`` per seed: ours on the
    folders as written (lines by label), py-ctcmetrics on the same images with the lines
    parents first (its CHOTA depends on their order: test_chota_ignores_line_order)."""
    from ctc_sweep import compare_case, make_case, ours as sweep_ours, write

    cases = [make_case(s) for s in seeds]
    folders = [write(c, root / f"seed{c.seed}") for c in cases]
    mine = [sweep_ours(*plain) for plain, _ in folders]
    theirs = run_reference([ordered for _, ordered in folders])
    return [(c, m, t, *compare_case(c, m, t)) for c, m, t in zip(cases, mine, theirs)]


def test_seeded_sweep_matches_py_ctcmetrics(tmp_path):
    """Every measure and the validity of 200 generated cases equal py-ctcmetrics', except
    where py-ctcmetrics departs from the Challenge (ctc_sweep.KNOWN, docs/reference/metrics.md)."""
    outcomes = sweep_outcomes(tmp_path, SWEEP_SEEDS)
    problems = [(c.name, d) for c, _, _, d, _ in outcomes if d]
    assert not problems, problems[:5]
    # The sweep is not trivial: both kinds of verdict, every error kind, every edit.
    compared = [(c, m) for c, m, t, _, known in outcomes if "refused" not in m and not known]
    assert len(compared) >= 100 and sum("refused" in m for _, m, *_ in outcomes) >= 20
    for key in ("ns_nodes", "fn_nodes", "fp_nodes", "fp_edges", "fn_edges", "ws_edges"):
        assert sum(m[key] > 0 for _, m in compared) >= 5, key
    assert any(m["BC(0)"] is not None and m["BC(0)"] < m["BC(1)"] for _, m in compared)
    assert any(c.gt.ndim == 4 for c, _ in compared) and any(c.gt.ndim == 3 for c, _ in compared)
    assert any(np.bincount(c.gt_rows[:, 3][c.gt_rows[:, 3] > 0]).max(initial=0) == 3
               for c, _ in compared)
    edits = {e for c, *_ in outcomes for e in c.edits}
    assert edits >= {"delete_mask", "swap_from", "late_division", "early_division", "merge",
                     "split", "erase_parent", "miss_track", "extra_track", "relabel_from",
                     "shift", "unrepaired", "stale_lines"}, edits


def test_edited_hela_matches_py_ctcmetrics(tmp_path):
    """The real HeLa result's first 8 frames (43 to 49 cells a frame) as the reference, and
    4 results with 3 seeded edits each (ctc_sweep.edited_real): every measure agrees."""
    from ctc_sweep import compare_case, edited_real, ours as sweep_ours, write

    src = DATA / "ctc" / "Fluo-N2DL-HeLa_01_RES"
    if not src.is_dir():
        pytest.skip("shared tracker-format data absent")
    cases = edited_real(src, 8, range(4))
    folders = [write(c, tmp_path / f"hela{c.seed}") for c in cases]
    mine = [sweep_ours(*plain) for plain, _ in folders]
    theirs = run_reference([ordered for _, ordered in folders])
    for case, m, t in zip(cases, mine, theirs):
        assert "refused" not in m and len(case.edits) >= 2, (case.name, m)
        assert compare_case(case, m, t) == ([], []), case.name
    assert sum(m["aogm"] for m in mine) > 0


def test_seeded_sweep_traccuracy_definition_matches_traccuracy(tmp_path):
    """``definition="traccuracy"`` equals traccuracy 0.4.3 on every generated case both
    accept (all counts, TRA / DET / LNK, CHOTA, the division metrics)."""
    from ctc_sweep import make_case, write
    from graph_helpers import assert_same, run_ctc, traccuracy_names

    mine, folders = {}, {}
    for seed in TRACCURACY_SEEDS:
        case = make_case(seed)
        (gt, res), _ = write(case, tmp_path / f"seed{seed}")
        try:
            r = evaluate_ctc(gt, res, definition="traccuracy")
        except InputError:
            continue
        mine[case.name] = {**r["ctc"]["pooled"], "chota": r["chota"]["pooled"],
                           **(r["divisions"]["pooled"] or {})}
        folders[case.name] = (gt / "TRA", res)
    ref = run_ctc(tmp_path, folders)
    compared = [name for name in folders if "error" not in ref[name]]
    assert len(compared) >= 40
    for name in compared:
        theirs = traccuracy_names(ref[name])
        theirs.pop("frame_buffer_1", None)
        assert_same(mine[name], theirs, label=name)


# --- where py-ctcmetrics departs from the Challenge (docs/reference/metrics.md), reduced cases ------

def _case(root: Path, gt: tuple, res: tuple, n_frames: int, res_rows=None):
    return write_case(root, gt, res, n_frames, res_rows)


def test_sixteen_bit_labels_whose_sum_passes_2_16(tmp_path):
    """Reference labels 64000 and 65000, result labels 600 and 700, 16-bit images, each
    result cell exactly on its reference cell for 2 frames: a perfect result (4 nodes, 2
    links: AOGM 0, TRA 1). py-ctcmetrics adds its offset (reference max + 1) to the result
    image in 16 bits, which wraps (65001 + 600 > 65535), and matches nothing."""
    gt = ({64000: span(0, 0, 1), 65000: span(1, 0, 1)}, {})
    res = ({600: span(0, 0, 1), 700: span(1, 0, 1)}, {})
    folders = _case(tmp_path, gt, res, 2)
    mine = ours(*folders)
    assert (mine["aogm"], mine["tra"], mine["det"], mine["fn_nodes"]) == (0, 1.0, 1.0, 0)
    theirs = run_reference([folders])[0]
    assert theirs["AOGM_FN"] == 4 and theirs["TRA"] < 0.5


def test_chota_ignores_line_order(tmp_path):
    """Reference: 1 (frame 0) divides into 2 and 3 (frames 1-2). Result: the same cells,
    10 -> {12, 13}, and 12 continued from frame 2 under label 11 (parent 12). CHOTA joins a
    single child to its parent's tracklet, so the result's tracklets are {10}, {12, 11},
    {13}: each matches a reference tracklet whole, with the same lineage: CHOTA = 1,
    whatever the order of the lines. py-ctcmetrics merges 11 into 12 keeping the first of
    the two lines (11's, whose parent is now the merged track itself): the merged track
    loses its parent, and with the lines by label its CHOTA is
    sqrt((3/5 * 1 + 2/3 * 2 + 1 * 2) / 5) (pairs 1-10, 2-{12, 11}, 3-13); with 12's line
    before 11's it is 1."""
    gt = ({1: span(0, 0, 0), 2: span(0, 1, 2), 3: span(1, 1, 2)}, {2: 1, 3: 1})
    res = ({10: span(0, 0, 0), 12: span(0, 1, 1), 11: span(0, 2, 2), 13: span(1, 1, 2)},
           {12: 10, 13: 10, 11: 12})
    by_label = _case(tmp_path / "by_label", gt, res, 3)
    first = _case(tmp_path / "parents_first", gt, res, 3,
                  np.array([[10, 0, 0, 0], [12, 1, 1, 10], [13, 1, 2, 10], [11, 2, 2, 12]]))
    assert ours(*by_label)["chota"] == ours(*first)["chota"] == 1.0
    theirs = run_reference([by_label, first])
    assert theirs[0]["CHOTA"] == pytest.approx(np.sqrt((3 / 5 + 4 / 3 + 2) / 5), abs=1e-12)
    assert theirs[1]["CHOTA"] == pytest.approx(1.0, abs=1e-12)


def test_reference_frame_without_cells(tmp_path):
    """Reference: one cell in frames 0-1, frame 2 empty; result: the same cell and an extra
    one in frame 2. CHOTA = sqrt(2 / (2 matches + 1 FP)); py-ctcmetrics' CHOTA raises on the
    empty frame; every other measure agrees."""
    gt = ({1: span(0, 0, 1)}, {})
    res = ({4: span(0, 0, 1), 5: [(2, 9)]}, {})
    folders = _case(tmp_path, gt, res, 3)
    mine = ours(*folders)
    assert mine["chota"] == pytest.approx(np.sqrt(2 / 3), abs=1e-12)
    assert mine["fp_nodes"] == 1 and mine["aogm"] == 1
    theirs = run_reference([folders])[0]
    assert theirs["CHOTA_error"].startswith("IndexError")
    compare(mine, {**theirs, "Valid": 1}, "empty reference frame")


def test_reference_without_links(tmp_path):
    """A reference of two single-frame cells (frames 0 and 1, other slots) has no links:
    LNK is undefined (None); py-ctcmetrics divides by zero. TRA = DET = 1 for the same cells
    in the result."""
    gt = ({1: [(0, 0)], 2: [(1, 3)]}, {})
    folders = _case(tmp_path, gt, ({7: [(0, 0)], 8: [(1, 3)]}, {}), 2)
    mine = ours(*folders)
    assert mine["lnk"] is None and mine["tra"] == mine["det"] == 1.0
    theirs = run_reference([folders])[0]
    assert theirs["LNK_error"].startswith("ZeroDivisionError")
    compare(mine, theirs, "no links")


def test_track_line_past_the_images(tmp_path):
    """A result line ``1 0 2 0`` with images for frames 0-1 only: the label is absent from
    frame 2 of its range, so the result is refused (naming the label and frame).
    py-ctcmetrics checks the lines only up to the last image, and accepts it."""
    gt = ({1: span(0, 0, 1)}, {})
    folders = _case(tmp_path, gt, gt, 2, np.array([[1, 0, 2, 0]]))
    with pytest.raises(InputError, match="label 1 is missing from frame 2, which has no label"):
        evaluate_ctc(*folders)
    assert run_reference([folders])[0]["Valid"] == 1


def test_result_image_without_background(tmp_path):
    """Result label 5 covers every pixel of both frames, so it covers the reference cell:
    one result node per frame, each matched, the link kept: AOGM 0, TRA = DET = 1.
    py-ctcmetrics assumes label 0 is in every image, drops label 5 and calls the result
    invalid."""
    gt = ({1: span(0, 0, 1)}, {})
    gt_dir, res_dir = _case(tmp_path, gt, gt, 2)
    for t in range(2):
        tifffile.imwrite(res_dir / f"mask{t:03d}.tif", np.full((128, 128), 5, np.uint16))
    np.savetxt(res_dir / "res_track.txt", [[5, 0, 1, 0]], fmt="%d")
    mine = ours(gt_dir, res_dir)
    assert (mine["tra"], mine["det"], mine["fp_nodes"], mine["aogm"]) == (1.0, 1.0, 0, 0)
    assert run_reference([(gt_dir, res_dir)])[0]["Valid"] == 0
