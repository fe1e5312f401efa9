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
from ctc_cases import VALID, invalid_cases, large, planes_3d, write_case
from graph_helpers import DATA, HERE, ROOT
from test_graph_parity import _edited_hela

from trackverify.errors import InputError
from trackverify.graph.ctc import evaluate_ctc

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


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctc")
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
