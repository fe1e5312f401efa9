"""The one way in: evaluate, run --data and convert on tracker files (real files where the
shared data are present, hand-made tables otherwise)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest


from formats_data import FORMATS, run, shared

TRACKMATE = FORMATS / "trackmate_xml"



def test_evaluate_trackmate_against_its_geff_export(tmp_path, capsys):
    """The same E. coli tracks read by two readers: every observation matched, no switch."""
    pytest.importorskip("geff")
    ref = shared(TRACKMATE / "Ecoli_growth_on_agar_pad.xml")
    pred = shared(FORMATS / "geff" / "Ecoli_growth_on_agar_pad.geff")
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred,
                        "--zero-distance-um", "0.5", "--out", tmp_path], capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "results.json").read_text())
    pooled = results["tracking_gt"]["pooled"]
    assert pooled["reference_observations"] == 526 and pooled["correct_observation_rate"] == 1.0
    assert pooled["identity_switches"] == 0 and pooled["hota"] == pytest.approx(1.0)
    assert results["inputs"]["reference"]["format"] == "trackmate"
    assert results["inputs"]["predictions"]["format"] == "geff"
    assert results["inputs"]["reference"]["calibration"]["um_per_unit"] == [1.0, 1.0]
    assert results["warnings"] == []


def test_evaluate_ctc_pixels_with_and_without_pixel_size(tmp_path, capsys):
    pytest.importorskip("imagecodecs")
    base = shared(FORMATS / "ctc" / "java-ctcmetrics_test_data")
    args = ["evaluate", "--reference", base / "GT" / "TRA", "--predictions", base / "res",
            "--format", "ctc"]
    code, _, err = run(args + ["--out", tmp_path / "plain"], capsys)
    assert code == 0 and err.count("no calibration") == 1     # one warning naming both files
    assert f"{base / 'GT' / 'TRA'} and {base / 'res'}: coordinates are in pixel and both files " \
           "have no calibration" in err
    code, _, err = run(args + ["--pixel-size", "0.5", "--out", tmp_path / "um"], capsys)
    assert code == 0 and "no calibration" not in err
    results = json.loads((tmp_path / "um" / "results.json").read_text())
    assert results["inputs"]["predictions"]["calibration"] == {
        "unit": "pixel", "um_per_unit": [0.5, 0.5], "source": "--pixel-size"}
    pooled = results["tracking_gt"]["pooled"]                 # SOURCE.md: 3 tracks x 6 frames
    assert pooled["reference_observations"] == 18 and pooled["correct_observation_rate"] == 1.0


def test_evaluate_point_file_with_column_mapping_and_scale_warning(tmp_path, capsys):
    rng = np.random.default_rng(3)
    frames, ids = np.repeat(np.arange(1, 6), 4), np.tile(np.arange(4), 5)
    base = np.array([[0, 0], [8, 0], [0, 8], [8, 8]], dtype=float)
    xy = base[ids] + rng.normal(0, 0.1, (20, 2))
    ref = tmp_path / "ref.csv"
    pd.DataFrame({"frame": frames, "track": ids, "x_um": xy[:, 0], "y_um": xy[:, 1]}).to_csv(ref, index=False)
    pred = tmp_path / "tracker.csv"                           # MOTChallenge-like, in pixels of 0.25 um
    pd.DataFrame({"frame": frames, "id": ids, "x": xy[:, 0] * 4, "y": xy[:, 1] * 4}).to_csv(pred, index=False)
    mapping = "pred_id=id,x_um=x,y_um=y"  # the predictions file only
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--predictions-columns", mapping,
                        "--out", tmp_path / "a"], capsys)  # mapped names that say no unit
    assert code == 2 and "--pixel-size" in err and "--units um" in err
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--predictions-columns", mapping,
                        "--predictions-units", "um", "--out", tmp_path / "a"], capsys)
    assert code == 0 and "differ 4x" in err
    assert json.loads((tmp_path / "a" / "results.json").read_text())["warnings"]
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--predictions-columns", mapping,
                        "--predictions-pixel-size", "0.25", "--out", tmp_path / "b"], capsys)
    assert code == 0 and "warning" not in err
    pooled = json.loads((tmp_path / "b" / "results.json").read_text())["tracking_gt"]["pooled"]
    assert pooled["correct_observation_rate"] == 1.0


def test_ambiguous_or_unknown_format_lists_the_formats(tmp_path, capsys):
    odd = tmp_path / "tracks.dat"
    odd.write_text("nothing\n")
    code, _, err = run(["evaluate", "--reference", odd, "--predictions", odd], capsys)
    assert code == 2 and "--format" in err and "trackmate" in err and "Traceback" not in err
    code, _, err = run(["evaluate", "--reference", odd, "--predictions", odd, "--format", "trakmate"],
                       capsys)
    assert code == 2 and "did you mean 'trackmate'" in err


def test_convert_trackmate_to_observations(tmp_path, capsys):
    source = shared(TRACKMATE / "Celegans-5pc-17timepoints.xml")
    code, out, err = run(["convert", source, "--to", "parquet", "--out", tmp_path], capsys)
    assert code == 0, err
    obs = pd.read_parquet(tmp_path / "observations.parquet")
    assert len(obs) == 87 and {"parent_track", "z_um", "detection", "pred_id"} <= set(obs.columns)
    assert (obs["pred_id"] == obs["track"]).all() and obs["parent_track"].notna().any()


def test_convert_to_nwb_without_the_extra_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "hdmf", None)
    table = tmp_path / "obs.csv"
    pd.DataFrame({"frame": [0], "track": [1], "detection": [0], "x_um": [1.0], "y_um": [2.0],
                  "pred_id": [1], "pred_valid": [True]}).to_csv(table, index=False)
    code, _, err = run(["convert", table, "--to", "nwb", "--out", tmp_path / "x.nwb"], capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "'nwb' extra" in err and "pip install 'trackverify[nwb]'" in err
    assert not (tmp_path / "x.nwb").exists()


def test_run_on_a_short_tracker_file_prints_flags_that_work(tmp_path, capsys):
    source = shared(TRACKMATE / "trackmate_tracks_with_splitting_merging.xml")   # 50 frames
    code, _, err = run(["run", "--data", source, "--out", tmp_path / "a", "--no-rows",
                        "--executor", "local"], capsys)
    assert code == 2 and "spans 50 frame numbers (0-49; " in err  # floor(0.3 * 50), floor(0.7 * 50)
    assert "--start 15 --recovery-end 35" in err and "--conditions control" in err
    code, out, err = run(["run", "--data", source, "--out", tmp_path / "b", "--no-rows",
                          "--executor", "local", "--conditions", "control,single_frame_swap",
                          "--start", "16", "--threshold-um", "3"], capsys)
    assert code == 0, err
    assert "no calibration" in err                             # spatialunits="pixel"
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["input_warnings"] and "Input units" in (tmp_path / "b" / "report.html").read_text()
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["source"]["format"] == "trackmate"
    assert manifest["source"]["calibration"]["source"].startswith("assumed")
    assert manifest["source"]["read"]["spots"] == 183         # SOURCE.md
    assert results["settings"]["conditions"] == ["control", "single_frame_swap"]


def test_convert_zephir_keeps_provenance(tmp_path, capsys):
    source = shared(FORMATS.parent / "zephir-ift20-demo" / "annotations-g.h5")
    code, _, err = run(["convert", source, "--to", "parquet", "--pixel-size", "0.3,0.3,1.5",
                        "--out", tmp_path], capsys)
    assert code == 0, err
    obs = pd.read_parquet(tmp_path / "observations.parquet")
    assert obs["provenance"].value_counts().to_dict() == {"ZEIR": 11723, "ANTT": 53}
    assert obs["z_um"].max() <= 23 * 1.5 and obs["x_um"].max() <= 512 * 0.3
