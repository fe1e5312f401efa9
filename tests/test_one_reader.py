"""One lab CSV means one thing to every command (io.tracks.read_tracks): blank ids, the
default recording, ids through a mapping, units of mapped columns, the file's own lines,
files that do not meet in space, and the record every output carries. Each case failed before
the commands shared one reader (audit and evaluate read the same file differently)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.errors import InputError
from trackverify.io.tracks import read_pair, read_tracks
from tests.conftest import run_cli

SPACING = 8.0


def lab_tracks(frames: int = 6) -> pd.DataFrame:
    """A lab's CSV: ``frame, track_id, x, y`` (micrometres, names without a unit), six
    neurons drifting 0.2 um per frame, ids written as decimals (``45.0``)."""
    grid = [(x, y) for y in (0.0, SPACING) for x in (0.0, SPACING, 2 * SPACING)]
    rows = [(t, float(40 + i), x + 0.2 * t, y) for t in range(frames)
            for i, (x, y) in enumerate(grid)]
    return pd.DataFrame(rows, columns=["frame", "track_id", "x", "y"])


def reference_of(lab: pd.DataFrame, recording: str = "worm_a") -> pd.DataFrame:
    return pd.DataFrame({"recording": recording, "frame": lab["frame"],
                         "track": lab["track_id"].astype(int), "x_um": lab["x"],
                         "y_um": lab["y"]})


MAPPING = "pred_id=track_id,x_um=x,y_um=y"


def test_a_blank_id_is_a_detection_without_identity_for_every_command(tmp_path):
    lab = lab_tracks()
    lab.loc[[7, 20], "track_id"] = np.nan  # two blank cells
    path = tmp_path / "lab.csv"
    lab.to_csv(path, index=False)
    read = read_tracks(path, columns=MAPPING, units="um")
    assert read.table["pred_valid"].tolist() == [i not in (7, 20) for i in range(len(lab))]
    assert read.record["rows_without_id"] == 2
    audited = trackverify.audit(path, columns=MAPPING, units="um")
    assert audited.observations["pred_valid"].sum() == len(lab) - 2
    found = trackverify.evaluate(reference_of(lab.fillna(0)), path, predictions_columns=MAPPING,
                                 predictions_units="um")
    pooled = found.tracking["pooled"]
    assert pooled["reference_observations"] == len(lab)
    assert pooled["correct_observations"] == len(lab) - 2  # the two blank rows: no prediction


def test_a_file_without_recordings_meets_a_reference_of_one_recording(tmp_path):
    lab = lab_tracks()
    path = tmp_path / "lab.csv"
    lab.to_csv(path, index=False)
    ref, pred, _ = read_pair(reference_of(lab, "worm_a"), path, predictions_columns=MAPPING,
                             predictions_units="um")
    assert pred.table["recording"].unique().tolist() == ["worm_a"]
    assert pred.record["recording"] == {"from": "<tracks>'s one recording", "name": "worm_a"}
    # the audit and evaluate name a file's one recording alike, or as --recording says
    assert read_tracks(path, columns=MAPPING, units="um").table["recording"].iat[0] == \
        trackverify.audit(path, columns=MAPPING, units="um").observations["recording"].iat[0] \
        == "recording"
    named = read_tracks(path, columns=MAPPING, units="um", recording="worm_b")
    assert named.table["recording"].unique().tolist() == ["worm_b"]


def test_the_command_line_evaluates_a_lab_file_against_a_one_recording_reference(tmp_path):
    lab = lab_tracks()
    lab.to_csv(tmp_path / "lab.csv", index=False)
    reference_of(lab).to_csv(tmp_path / "ref.csv", index=False)
    done = run_cli("evaluate", "--reference", str(tmp_path / "ref.csv"), "--predictions",
                   str(tmp_path / "lab.csv"), "--predictions-columns", MAPPING,
                   "--predictions-units", "um", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["tracking_gt"]["worm_a"]["correct_observation_rate"] == 1.0
    for side in ("reference", "predictions"):
        assert results["inputs"][side]["trackverify"] == trackverify.__version__


@pytest.mark.parametrize("entry", ["audit", "evaluate"])
def test_na_as_an_id_is_refused_through_a_mapping_too(tmp_path, entry):
    lab = lab_tracks().astype({"track_id": object})
    lab.loc[9, "track_id"] = "NA"
    path = tmp_path / "lab.csv"
    lab.to_csv(path, index=False)
    with pytest.raises(InputError) as refused:
        if entry == "audit":
            trackverify.audit(path, columns=MAPPING, units="um")
        else:
            trackverify.evaluate(reference_of(lab_tracks()), path,
                                 predictions_columns=MAPPING, predictions_units="um")
    assert str(refused.value).startswith(f"{path}, column 'pred_id', row 10 (line 11): the id "
                                         "'NA' is a missing-value marker")


@pytest.mark.parametrize("entry", ["audit", "evaluate"])
def test_mapped_coordinates_without_a_unit_are_refused_with_both_fixes(tmp_path, entry):
    path = tmp_path / "lab.csv"
    lab_tracks().to_csv(path, index=False)
    with pytest.raises(InputError) as refused:
        if entry == "audit":
            trackverify.audit(path, columns=MAPPING)
        else:
            trackverify.evaluate(reference_of(lab_tracks()), path, predictions_columns=MAPPING)
    assert str(refused.value) == (
        f"{path}, column 'x': the column 'x' (read as x_um) does not say its unit: give "
        "--pixel-size X[,Y[,Z]] (um per pixel) if it holds pixels, or --units um if it holds "
        "micrometres")
    said = lab_tracks().rename(columns={"x": "x (um)", "y": "y (um)"})
    said.to_csv(path, index=False)
    read = read_tracks(path, columns="pred_id=track_id,x_um=x (um),y_um=y (um)")
    assert read.record["calibration"]["source"] == "column names (x (um), y (um))"


def test_predictions_that_do_not_meet_the_reference_in_space_are_warned_of(tmp_path):
    lab = lab_tracks()
    ref = reference_of(lab)
    far = ref.rename(columns={"track": "pred_id"}).assign(x_um=ref["x_um"] + 100.0)
    found = trackverify.evaluate(ref, far)
    assert found.tracking["pooled"]["hota"] == 0
    assert found.warnings == [
        "<tracks>: in 6 of 6 frames no prediction lies within 5 um of any reference point: the "
        "two files may not share one coordinate frame (units, origin, axes), and the scores "
        "say little of the tracker"]
    assert trackverify.evaluate(ref, far.assign(x_um=ref["x_um"] + 1.0)).warnings == []


def test_a_refusal_names_the_files_own_line(tmp_path):
    path = tmp_path / "lab.csv"
    text = lab_tracks().to_csv(index=False).splitlines()
    text[4] = text[4].replace(",0.0", ",oops", 1)  # data row 4, line 5
    path.write_text("\n".join(text[:3] + [""] + text[3:]) + "\n")  # a blank line 4 before it
    with pytest.raises(InputError) as refused:
        read_tracks(path, columns=MAPPING, units="um")
    assert ", row 4 (line 6):" in str(refused.value)
    parquet = tmp_path / "lab.parquet"
    pd.read_csv(path).to_parquet(parquet)
    with pytest.raises(InputError) as refused:
        read_tracks(parquet, columns=MAPPING, units="um")
    assert ", row 4:" in str(refused.value)  # no lines in a Parquet file


def test_the_audit_json_records_how_and_by_which_version(tmp_path):
    path = tmp_path / "lab.csv"
    lab_tracks().to_csv(path, index=False)
    result = trackverify.audit(path, columns=MAPPING, units="um", out=tmp_path / "out")
    record = json.loads((tmp_path / "out" / "audit.json").read_text())["input"]
    assert record["path"] == str(path) and record["format"] == "table"
    assert record["columns"] == {"pred_id": "track_id", "x_um": "x", "y_um": "y"}
    assert record["calibration"]["source"] == "--units um"
    assert record["trackverify"] == trackverify.__version__
    assert record["recording"] == {"from": "default", "name": "recording"}
    assert result.summary["input"] == record
