"""trackverify audit's input as users have it: one code path for the command, the API given a
path and the API given a DataFrame (blank ids, positions from the detections, axes a mapping
leaves out, pixel columns, the ``input`` block of audit.json)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.cli.app import main
from trackverify.errors import InputError

SPACING = 8.0
GRID = np.array([(x, y, y / 2) for y in (0.0, SPACING)
                 for x in (0.0, SPACING, 2 * SPACING)])  # six neurons, 3-D (z 0 and 4 um)


def worm(frames: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tracker output, detections): six neurons drifting 0.3 um per frame in x, each frame's
    detections numbered 10, 11, ... in a shuffled order, plus one unlabelled detection
    (id 99, 30 um away) per frame; the tracker names every neuron correctly."""
    order = np.array([3, 0, 5, 1, 4, 2])  # detection 10 + k is neuron order[k]
    rows, dets = [], []
    for t in range(frames):
        for k, neuron in enumerate(order):
            x, y, z = GRID[neuron]
            rows.append((t, 10 + k, int(neuron), x + 0.3 * t, y, z))
            dets.append((t, 10 + k, x + 0.3 * t, y, z))
        dets.append((t, 99, 40.0, 40.0, 4.0))
    tracks = pd.DataFrame(rows, columns=["frame", "detection", "pred_id", "x_um", "y_um", "z_um"])
    detections = pd.DataFrame(dets, columns=["frame", "detection", "x_um", "y_um", "z_um"])
    return tracks, detections


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


def _read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


ENTRIES = ("cli", "path", "dataframe")


def _run(entry: str, tracks: Path, detections: Path | None, out: Path, capsys,
         **options) -> tuple[dict, pd.DataFrame, str]:
    """Audit through one entry: (audit.json's summary, observations, warnings text)."""
    if entry == "cli":
        args = ["audit", str(tracks), "--out", str(out)]
        if detections is not None:
            args += ["--detections", str(detections)]
        for name, value in options.items():
            args += [f"--{name.replace('_', '-')}", str(value)]
        with pytest.raises(SystemExit) as done:
            main(args)
        stderr = capsys.readouterr().err
        if done.value.code != 0:
            lines = stderr.strip().splitlines()
            assert done.value.code == 2 and len(lines) == 1 and "Traceback" not in stderr
            raise InputError(lines[0].removeprefix("trackverify: error: "))
        summary = json.loads((out / "audit.json").read_text())
        return summary, pd.read_parquet(out / "audit.parquet"), stderr
    if entry == "path":
        result = trackverify.audit(tracks, detections, **options)
    else:
        result = trackverify.audit(_read(tracks), None if detections is None else _read(detections),
                                   source=str(tracks), detections_source=str(detections),
                                   **options)
    summary = json.loads(json.dumps(result.summary, default=str))
    return summary, result.observations, "\n".join(summary["input"]["warnings"])


def _refusal(entry, tracks, detections, tmp_path, capsys, **options) -> str:
    with pytest.raises(InputError) as refused:
        _run(entry, tracks, detections, tmp_path / f"out-{entry}", capsys, **options)
    assert not (tmp_path / f"out-{entry}").exists()
    return str(refused.value)


# 1. A blank pred_id is a detection without a prediction --------------------------------------

@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("suffix, with_valid", [(".csv", False), (".parquet", False),
                                                (".csv", True), (".parquet", True)])
def test_a_blank_pred_id_is_a_detection_without_a_prediction(tmp_path, capsys, entry, suffix,
                                                             with_valid):
    tracks, _ = worm()
    tracks["pred_id"] = tracks["pred_id"].astype("Int64")
    blank = [8, 15]  # 0-based rows after the anchor frame
    tracks.loc[blank, "pred_id"] = pd.NA
    if with_valid:
        tracks["pred_valid"] = tracks["pred_id"].notna()
    path = _write(tracks, tmp_path / f"tracks{suffix}")
    summary, obs, _ = _run(entry, path, None, tmp_path / "out", capsys)
    assert summary["counts"]["no_prediction"] == 2
    assert summary["counts"]["rows"] == len(tracks)
    assert obs.loc[blank, "reason"].tolist() == ["no_prediction", "no_prediction"]
    assert not obs.loc[blank, "pred_valid"].any()
    assert obs["pred_valid"].sum() == len(tracks) - 2


# 2. Positions from the detections ------------------------------------------------------------

@pytest.mark.parametrize("entry", ENTRIES)
def test_a_detection_column_without_positions_takes_them_from_the_detections(tmp_path, capsys,
                                                                            entry):
    tracks, detections = worm()
    path = _write(tracks.drop(columns=["x_um", "y_um", "z_um"]), tmp_path / "tracks.csv")
    dets = _write(detections, tmp_path / "detections.parquet")
    summary, obs, _ = _run(entry, path, dets, tmp_path / "out", capsys)
    np.testing.assert_array_equal(obs[["x_um", "y_um", "z_um"]].to_numpy(),
                                  tracks[["x_um", "y_um", "z_um"]].to_numpy())
    assert summary["counts"]["audited"] == 24 and summary["counts"]["certified"] == 24
    assert summary["input"]["positions"].startswith("detections: joined on recording, frame, "
                                                    "detection")


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_detection_id_the_detections_lack_is_refused_with_its_row(tmp_path, capsys, entry):
    tracks, detections = worm()
    tracks.loc[13, "detection"] = 77  # frame 2; the detections hold 10..15 and 99
    path = _write(tracks.drop(columns=["x_um", "y_um", "z_um"]), tmp_path / "tracks.csv")
    dets = _write(detections, tmp_path / "detections.csv")
    message = _refusal(entry, path, dets, tmp_path, capsys)
    line = "" if entry == "dataframe" else " (line 15)"  # a CSV file's own line: header 1
    assert f"{path}, column 'detection', row 14{line}:" in message
    assert "77" in message and str(dets) in message


@pytest.mark.parametrize("entry", ENTRIES)
def test_positions_without_a_detection_column_are_matched_to_the_detections(tmp_path, capsys,
                                                                           entry):
    tracks, detections = worm()
    path = _write(tracks.drop(columns="detection"), tmp_path / "tracks.csv")
    dets = _write(detections, tmp_path / "detections.csv")
    summary, obs, _ = _run(entry, path, dets, tmp_path / "out", capsys)
    assert obs["detection"].tolist() == tracks["detection"].tolist()  # the file's own ids
    assert summary["counts"]["certified"] == 24
    assert summary["input"]["positions"].startswith("tracks; matched to the detections by "
                                                    "position")


def _off_its_detection(tracks, detections):  # frame 1: half a micrometre off
    tracks.loc[9, "x_um"] += 0.5
    return tracks, detections


def _two_rows_on_one(tracks, detections):
    tracks.loc[7, ["x_um", "y_um", "z_um"]] = tracks.loc[6, ["x_um", "y_um", "z_um"]].to_numpy()
    return tracks, detections


def _two_detections_at_one_row(tracks, detections):  # frame 3, detection 12 twice
    twin = detections[(detections["frame"] == 3) & (detections["detection"] == 12)]
    return tracks, pd.concat([detections, twin.assign(detection=50)], ignore_index=True)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("edit, row, says", [
    (_off_its_detection, 10, "no detection of its frame lies within 0.001 um"),
    (_two_rows_on_one, 8, "this row and row 7 are at the position of one detection"),
    (_two_detections_at_one_row, 21, "two detections of its frame lie within 0.001 um")])
def test_a_row_not_one_detection_by_position_is_refused_naming_the_fix(tmp_path, capsys, entry,
                                                                      edit, row, says):
    tracks, detections = edit(*worm())
    path = _write(tracks.drop(columns="detection"), tmp_path / "tracks.csv")
    dets = _write(detections, tmp_path / "detections.csv")
    message = _refusal(entry, path, dets, tmp_path, capsys)
    line = "" if entry == "dataframe" else f" (line {row + 1})"
    assert f"{path}, row {row}{line}: {says}" in message
    assert "add a `detection` column" in message
    assert "detection=" not in message  # no number the user never wrote


@pytest.mark.parametrize("entry", ENTRIES)
def test_ids_without_positions_or_detections_are_refused_naming_the_option(tmp_path, capsys,
                                                                          entry):
    tracks, _ = worm()
    path = _write(tracks.drop(columns=["x_um", "y_um", "z_um"]), tmp_path / "tracks.csv")
    message = _refusal(entry, path, None, tmp_path, capsys)
    assert f"{path}, column 'x_um': the tracks have no positions" in message
    assert "--detections" in message


# 3. Axes a mapping leaves out; pixel columns -------------------------------------------------

def _pixels(tracks: pd.DataFrame, z_name: str = "z_px") -> pd.DataFrame:
    return pd.DataFrame({"t": tracks["frame"], "cell": tracks["pred_id"],
                         "x_px": tracks["x_um"] * 2, "y_px": tracks["y_um"] * 2,
                         z_name: tracks["z_um"] * 2})


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_mapping_that_leaves_out_z_is_refused_with_the_complete_mapping(tmp_path, capsys,
                                                                        entry):
    tracks, _ = worm()
    path = _write(_pixels(tracks), tmp_path / "tracks.csv")
    message = _refusal(entry, path, None, tmp_path, capsys,
                       columns="frame=t,pred_id=cell,x_um=x_px,y_um=y_px")
    assert "'z_px'" in message
    assert "--columns frame=t,pred_id=cell,x_um=x_px,y_um=y_px,z_um=z_px" in message


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("z_name", ["z", "Z", "z_px"])
def test_a_table_beside_an_unnamed_z_is_refused(tmp_path, capsys, entry, z_name):
    tracks, _ = worm()
    table = tracks.drop(columns="z_um").assign(**{z_name: tracks["z_um"]})
    path = _write(table, tmp_path / "tracks.csv")
    message = _refusal(entry, path, None, tmp_path, capsys)
    assert f"'{z_name}'" in message and f"--columns z_um={z_name}" in message


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_constant_z_beside_x_and_y_is_not_an_axis(tmp_path, capsys, entry):
    tracks, _ = worm()
    flat = tracks.drop(columns="z_um").assign(z=0.0)
    path = _write(flat, tmp_path / "tracks.csv")
    summary, obs, _ = _run(entry, path, None, tmp_path / "out", capsys)
    assert "z_um" not in obs.columns and summary["counts"]["rows"] == len(tracks)


def test_a_format_that_leaves_out_z_is_refused_naming_the_table_mapping(tmp_path, capsys):
    tracks, _ = worm()
    trackpy = pd.DataFrame({"frame": tracks["frame"], "particle": tracks["pred_id"],
                            "x": tracks["x_um"], "y": tracks["y_um"], "z_px": tracks["z_um"]})
    path = _write(trackpy, tmp_path / "tracks.csv")
    for entry in ("cli", "path"):  # a DataFrame is read by no format
        message = _refusal(entry, path, None, tmp_path, capsys, pixel_size="0.5")
        assert "'z_px'" in message
        assert "--format table --columns x_um=x,y_um=y,pred_id=particle,z_um=z_px" in message


@pytest.mark.parametrize("entry", ENTRIES)
def test_mapped_pixel_columns_need_the_pixel_size_or_the_units(tmp_path, capsys, entry):
    """Coordinates mapped from names that do not say micrometres (x_px) are refused with both
    fixes; --pixel-size converts them, --units um takes them as micrometres."""
    tracks, _ = worm()
    path = _write(_pixels(tracks), tmp_path / "tracks.csv")
    columns = "frame=t,pred_id=cell,x_um=x_px,y_um=y_px,z_um=z_px"
    message = _refusal(entry, path, None, tmp_path, capsys, columns=columns)
    assert f"{path}, column 'x_px': the column 'x_px' (read as x_um) does not say its unit: " \
           "give --pixel-size X[,Y[,Z]] (um per pixel) if it holds pixels, or --units um if " \
           "it holds micrometres" in message
    summary, obs, warnings = _run(entry, path, None, tmp_path / "out2", capsys, columns=columns,
                                  pixel_size="0.5")
    assert "coordinates are in pixel" not in warnings
    np.testing.assert_allclose(obs[["x_um", "y_um", "z_um"]].to_numpy(),
                               tracks[["x_um", "y_um", "z_um"]].to_numpy())
    assert summary["input"]["calibration"] == {"unit": "pixel", "um_per_unit": [0.5, 0.5, 0.5],
                                               "source": "--pixel-size"}
    summary, obs, _ = _run(entry, path, None, tmp_path / "out3", capsys, columns=columns,
                           units="um")
    np.testing.assert_allclose(obs[["x_um", "y_um"]].to_numpy(),
                               2 * tracks[["x_um", "y_um"]].to_numpy())
    assert summary["input"]["calibration"] == {"unit": "um", "um_per_unit": [1.0, 1.0, 1.0],
                                               "source": "--units um"}


# 4. audit.json records how the input was read ------------------------------------------------

@pytest.mark.parametrize("entry", ENTRIES)
def test_audit_json_records_the_reader_mapping_pixel_size_and_units(tmp_path, capsys, entry):
    tracks, _ = worm()
    path = _write(_pixels(tracks), tmp_path / "tracks.csv")
    summary, _, _ = _run(entry, path, None, tmp_path / "out", capsys,
                         columns="frame=t,pred_id=cell,x_um=x_px,y_um=y_px,z_um=z_px",
                         pixel_size="0.5,0.5,0.5")
    block = summary["input"]
    assert block["format"] == ("dataframe" if entry == "dataframe" else "table")
    assert block["columns"] == {"frame": "t", "pred_id": "cell", "x_um": "x_px", "y_um": "y_px",
                                "z_um": "z_px"}
    assert block["pixel_size"] == [0.5, 0.5, 0.5]
    assert block["calibration"]["um_per_unit"] == [0.5, 0.5, 0.5]
    assert block["positions"] == "tracks"
    assert "inputs" in summary  # the files, beside how they were read


def test_a_plain_dataframe_records_its_reader_and_units():
    tracks, _ = worm()
    block = trackverify.audit(tracks).summary["input"]
    assert block == {"format": "dataframe", "columns": None, "pixel_size": None,
                     "recording": {"from": "default", "name": "recording"},
                     "ids_as_read": {"detection": "integers"},
                     "calibration": {"unit": "um", "um_per_unit": [1.0, 1.0, 1.0],
                                     "source": "column names (x_um, y_um, z_um)"},
                     "positions": "tracks", "warnings": [], "path": None, "source": "<tracks>",
                     "rows": 30, "rows_without_id": 0, "trackverify": trackverify.__version__}


REAL = Path(__file__).resolve().parents[2] / "examples" / "real-tracker"


def test_the_real_tracker_output_as_users_write_it_audits_as_the_shipped_table(tmp_path):
    """The CPD tracker's output on the real recording, written as CSV with blank ids and no
    pred_valid, once without positions and once without detection ids: the same verdicts and
    scores as the shipped Parquet table (8,617 of its detections have no identity)."""
    shipped = pd.read_parquet(REAL / "tracker_cpd.parquet")
    detections = REAL / "detections.parquet"
    ids_only = _write(shipped.drop(columns=["pred_valid", "x_um", "y_um", "z_um"]),
                      tmp_path / "ids_only.csv")
    positions_only = _write(shipped.drop(columns=["pred_valid", "detection"]),
                            tmp_path / "positions_only.csv")
    expected = trackverify.audit(REAL / "tracker_cpd.parquet", detections).observations
    assert (expected["reason"] == "no_prediction").sum() == 8617
    for path in (ids_only, positions_only):
        got = trackverify.audit(path, detections).observations
        pd.testing.assert_frame_equal(got[["detection", "verdict", "reason"]],
                                      expected[["detection", "verdict", "reason"]])
        np.testing.assert_allclose(got["score"], expected["score"], rtol=0, atol=1e-9)


def test_a_dataframe_in_a_format_is_refused():
    tracks, _ = worm()
    with pytest.raises(InputError, match="a DataFrame is read as a table, not in format 'trackpy'"):
        trackverify.audit(tracks, fmt="trackpy")
