"""TrackMate CSV exports and 3DeeCellTracker's tracked_coordinates.csv, on files written
exactly as the tools write them (tests/corpus/tracker_csv_cases.py says from which source
and commit). Expected tables are written out by hand from the files' text."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.corpus.tracker_csv_cases import SPOTS, deecell_csv, v6_spots, v7_edges, v7_spots
from trackverify.errors import InputError
from trackverify.io.formats import FORMATS, detect_format, read_points
from trackverify.io.tracks import read_tracks

from formats_data import FORMATS as SHARED_FORMATS, run, shared


def write(path, text: str, encoding: str = "utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def by_source(table: pd.DataFrame) -> dict[int, list[tuple]]:
    """``{TRACK_ID: [(frame, x, y), ...]}`` in frame order."""
    rows = table.sort_values(["source_track", "frame"], kind="stable")
    return {int(k): [(int(f), float(x), float(y)) for f, x, y in zip(g["frame"], g["x_um"], g["y_um"])]
            for k, g in rows.groupby("source_track", sort=True)}


#: SPOTS by hand: TRACK_ID 0 = spots 0, 1, 2; TRACK_ID 1 = spots 3, 4, 5; spot 6 in no track.
EXPECTED = {0: [(0, 10.0, 20.0), (1, 11.0, 20.0), (2, 12.0, 20.0)],
            1: [(0, 50.0, 20.0), (1, 51.0, 20.5), (2, 52.0, 21.0)]}


def test_v7_spots_table_read_in_micrometres(tmp_path):
    path = write(tmp_path / "run_spots.csv", v7_spots())
    assert detect_format(path) == "trackmate_csv"
    loaded = read_tracks(path, "reference")
    table = loaded.table
    assert len(table) == 6 and "z_um" not in table.columns          # spot 6 (no track) not read
    assert by_source(table) == EXPECTED
    assert sorted(table["node"]) == [0, 1, 2, 3, 4, 5]
    assert table.set_index("node").loc[4, "spot_name"] == "ID4"
    assert table.groupby("source_track")["track"].nunique().tolist() == [1, 1]
    assert table["parent_track"].isna().all()
    assert loaded.record["calibration"] == {"unit": "micron", "um_per_unit": [1.0, 1.0],
                                          "source": "TrackMate CSV units row '(micron)'"}
    assert loaded.record["spots"] == 7 and loaded.record["spots_read"] == 6
    assert loaded.warnings == []


@pytest.mark.parametrize("unit, factor", [("nm", 1e-3), ("µm", 1.0), ("mm", 1e3)])
def test_v7_units_row_scales(tmp_path, unit, factor):
    path = write(tmp_path / "a_spots.csv", v7_spots(unit=unit))
    table = read_tracks(path, "reference").table
    assert sorted(table["x_um"]) == pytest.approx(sorted(factor * x for _, t, _, x, _ in SPOTS if t is not None))


def test_v7_pixel_units_take_pixel_size(tmp_path):
    path = write(tmp_path / "a_spots.csv", v7_spots(unit="pixel"))
    loaded = read_tracks(path, "reference", pixel_size="0.5")
    assert loaded.record["calibration"]["source"] == "--pixel-size"
    assert by_source(loaded.table)[0] == [(0, 5.0, 10.0), (1, 5.5, 10.0), (2, 6.0, 10.0)]


def test_v7_windows_1252_micro_sign_bom_and_crlf(tmp_path):
    """Java's FileWriter on Windows writes cp1252 (µ is byte 0xB5); a BOM and CRLF are tolerated."""
    text = v7_spots(unit="µm").replace("\n", "\r\n")
    path = write(tmp_path / "w_spots.csv", text, "cp1252")
    assert b"(\xb5m)" in path.read_bytes()
    loaded = read_tracks(path, "reference")
    assert loaded.record["encoding"] == "cp1252" and loaded.record["calibration"]["unit"] == "µm"
    assert by_source(loaded.table) == EXPECTED
    path = tmp_path / "b_spots.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert detect_format(path) == "trackmate_csv" and by_source(read_tracks(path, "reference").table) == EXPECTED


def test_v7_label_with_escaped_comma(tmp_path):
    """opencsv without a quote character escapes ',' and '"' with '"' (CSVWriter.processCharacter)."""
    text = v7_spots().replace("ID4,4,", 'cell",A""x,4,')
    table = read_tracks(write(tmp_path / "l_spots.csv", text), "reference").table
    assert table.set_index("node").loc[4, "spot_name"] == 'cell,A"x'


def test_v6_one_header_row_crlf(tmp_path):
    path = write(tmp_path / "Spots in tracks statistics.csv", v6_spots())
    assert detect_format(path) == "trackmate_csv"
    loaded = read_tracks(path, "reference")
    assert by_source(loaded.table) == EXPECTED
    assert loaded.record["layout"].startswith("TrackMate 6")
    assert loaded.record["calibration"]["um_per_unit"] == [1.0, 1.0]
    assert any("no calibration" in w for w in loaded.warnings)   # v6 has no units row


def test_v6_with_imagej_row_numbers(tmp_path):
    """Older ImageJ writes a row-number column first (header ' ', rows 1, 2, ...)."""
    lines = v6_spots().split("\r\n")
    text = "\r\n".join([" ," + lines[0]] + [f"{i},{line}" for i, line in enumerate(lines[1:-1], 1)]) + "\r\n"
    assert by_source(read_tracks(write(tmp_path / "s_spots.csv", text), "reference").table) == EXPECTED


def test_edges_table_beside_gives_a_division(tmp_path):
    """Spot 0 (frame 0) divides into spots 1 and 7 (frame 1); 1 -> 2. TRACK_ID 1 is a chain."""
    spots = SPOTS + ((7, 0, 1, 9.0, 19.0),)
    write(tmp_path / "run_spots.csv", v7_spots(spots))
    write(tmp_path / "run_edges.csv", v7_edges([(0, 0, 1), (0, 1, 2), (0, 0, 7), (1, 3, 4), (1, 4, 5)]))
    name, tracks = read_points(tmp_path / "run_spots.csv")
    table = tracks.table.set_index("node")
    assert name == "trackmate_csv" and tracks.details["edges_file"].endswith("run_edges.csv")
    assert tracks.details["links"] == 5
    mother, daughter, other = table.loc[0, "track"], table.loc[1, "track"], table.loc[7, "track"]
    assert len({mother, daughter, other}) == 3 and table.loc[2, "track"] == daughter
    assert table.loc[1, "parent_track"] == mother and table.loc[7, "parent_track"] == mother
    assert pd.isna(table.loc[0, "parent_track"])
    assert table.loc[3, "track"] == table.loc[4, "track"] == table.loc[5, "track"]
    assert table["track"].nunique() == 4


def test_edges_table_v6_name(tmp_path):
    write(tmp_path / "Spots in tracks statistics.csv", v6_spots())
    edges = "Label,TRACK_ID,SPOT_SOURCE_ID,SPOT_TARGET_ID\r\nID0 → ID1,0,0,1\r\n"
    write(tmp_path / "Links in tracks statistics.csv", edges)
    _, tracks = read_points(tmp_path / "Spots in tracks statistics.csv")
    assert tracks.details["edges_file"].endswith("Links in tracks statistics.csv")
    assert tracks.details["links"] == 1                 # only the table's links; spot 2 alone
    table = tracks.table.set_index("node")
    assert table.loc[0, "track"] == table.loc[1, "track"] != table.loc[2, "track"]


@pytest.mark.parametrize("name, edges", [("run_spots.csv", "run_edges.csv"),
                                         ("Spots in tracks statistics.csv",
                                          "Links in tracks statistics.csv")])
def test_a_division_without_its_edges_table_names_the_file_to_add(tmp_path, name, edges):
    """Spot 7 shares TRACK_ID 0 and frame 1 with spot 1: the message names the edges table
    TrackMate would have written beside this spots table."""
    spots = SPOTS + ((7, 0, 1, 9.0, 19.0),)
    text = v7_spots(spots) if name.endswith("_spots.csv") else v6_spots(spots)
    with pytest.raises(InputError, match=rf"two spots in frame 1 .*beside it \({edges}\)"):
        read_points(write(tmp_path / name, text))


@pytest.mark.parametrize("text, fragments", [
    ("", ["empty"]),
    (v7_spots().replace("TRACK_ID", "TRACK", 1), ["TRACK_ID"]),
    (v7_spots().replace("ID5,5,", "ID5,5.5,"), ["column 'ID'", "row 6", "whole"]),
    (v7_spots().replace(",,,(quality)", ",x,,(quality)"), ["units row"]),
])
def test_malformed_spots_refused_naming_file_column_row(tmp_path, text, fragments):
    path = write(tmp_path / "bad_spots.csv", text)
    with pytest.raises(InputError) as info:
        read_tracks(path, "reference", fmt="trackmate_csv")
    message = str(info.value)
    assert message.startswith(str(path)) and all(f in message for f in fragments), message


def test_duplicate_header_column_refused(tmp_path):
    path = write(tmp_path / "d_spots.csv", v7_spots().replace("VISIBILITY", "FRAME", 1))
    with pytest.raises(InputError, match="column 'FRAME'.*twice"):
        read_tracks(path, "reference", fmt="trackmate_csv")


# ------------------------------------------------------------------------------ 3DeeCellTracker

COORDS = np.array([[[10.0, 20.0, 3.0], [40.0, 20.0, 6.0]],      # t = 1: cells 1, 2
                   [[11.0, 21.0, 3.5], [41.0, 19.0, 6.0]],      # t = 2
                   [[12.0, 22.0, 4.0], [42.0, 18.0, 6.5]]])     # t = 3


def test_deecelltracker_columns_as_the_writer_fills_them(tmp_path):
    path = write(tmp_path / "tracked_coordinates.csv", deecell_csv(COORDS))
    assert path.read_text().splitlines()[3] == ",".join(          # t = 2, cell 1
        f"{v:.18e}" for v in (2, 1, 11.0, 21.0, 3.5))
    assert detect_format(path) == "3deecelltracker"
    loaded = read_tracks(path, "reference", pixel_size="0.5")
    table = loaded.table.sort_values(["track", "frame"])
    assert table["frame"].tolist() == [1, 2, 3, 1, 2, 3]
    assert table["track"].tolist() == [1, 1, 1, 2, 2, 2]
    assert table["x_um"].tolist() == [5.0, 5.5, 6.0, 20.0, 20.5, 21.0]
    assert table["z_um"].tolist() == [1.5, 1.75, 2.0, 3.0, 3.0, 3.25]
    assert loaded.record["calibration"]["um_per_unit"] == [0.5, 0.5, 0.5]


def test_deecelltracker_duplicate_cell_refused(tmp_path):
    lines = deecell_csv(COORDS).splitlines(keepends=True)
    path = write(tmp_path / "tracked_coordinates.csv", "".join(lines + [lines[1]]))
    with pytest.raises(InputError, match="row 7: cell 1 appears twice in volume 1"):
        read_tracks(path, "reference")


# ------------------------------------------------------------------------------ detection, CLI

def test_existing_files_detect_as_before(tmp_path):
    """No false positive: every shared tracker file and these readers' own files keep their format."""
    expected = {"trackmate_xml": "trackmate", "napari_tracks_csv": "napari", "btrack_hdf5": "btrack"}
    root = shared(SHARED_FORMATS)
    for folder, fmt in expected.items():
        for path in sorted((root / folder).iterdir()):
            if path.suffix in (".xml", ".h5") or path.name == "tracks.csv":
                assert detect_format(path) == fmt, path
    ctc = sorted(root.glob("ctc/**/res_track.txt")) + sorted(root.glob("ctc/**/man_track.txt"))
    assert ctc and all(detect_format(p) == "ctc" for p in ctc)
    for name, text in (("t.csv", "recording,frame,track,x_um,y_um\nr,0,1,1.0,2.0\n"),
                       ("n.csv", "ID,t,y,x\n1,0,2.0,3.0\n"), ("m.txt", "1,1,2.0,3.0\n")):
        assert detect_format(write(tmp_path / name, text)) == {"t.csv": "table", "n.csv": "napari",
                                                                "m.txt": "mot"}[name]
    assert set(FORMATS) >= {"trackmate_csv", "3deecelltracker"}



@pytest.mark.parametrize("make, name", [(v7_spots, "a_spots.csv"), (v6_spots, "a_spots.csv"),
                                        (lambda: deecell_csv(COORDS), "tracked_coordinates.csv")])
def test_evaluate_identical_files_every_metric_one(tmp_path, capsys, make, name):
    (tmp_path / "ref").mkdir()
    (tmp_path / "pred").mkdir()
    ref = write(tmp_path / "ref" / name, make())
    pred = write(tmp_path / "pred" / name, make())
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--out", tmp_path / "out"],
                       capsys)
    assert code == 0, err
    pooled = json.loads((tmp_path / "out" / "results.json").read_text())["tracking_gt"]["pooled"]
    assert pooled["reference_observations"] == 6          # 6 points in a track in each file
    assert pooled["correct_observation_rate"] == 1.0 and pooled["identity_switches"] == 0
    assert pooled["hota"] == pytest.approx(1.0)


def test_evaluate_one_swapped_spot(tmp_path, capsys):
    """Predictions = the reference with the frame-2 spots of the two tracks swapped between
    TRACK_IDs: 4 of 6 reference points keep their track's identity."""
    (tmp_path / "p").mkdir()
    ref = write(tmp_path / "r_spots.csv", v7_spots())
    swapped = tuple((i, {2: 1, 5: 0}.get(i, t), f, x, y) for i, t, f, x, y in SPOTS)
    pred = write(tmp_path / "p" / "r_spots.csv", v7_spots(swapped))
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--out", tmp_path / "out"],
                       capsys)
    assert code == 0, err
    pooled = json.loads((tmp_path / "out" / "results.json").read_text())["tracking_gt"]["pooled"]
    assert pooled["reference_observations"] == 6 and pooled["identity_switches"] == 2


def test_cli_refuses_in_one_line(tmp_path, capsys):
    path = write(tmp_path / "x_spots.csv", v7_spots().replace("ID1,1,0,12.5,11.0", "ID1,1,0,12.5,abc"))
    code, _, err = run(["convert", path, "--to", "parquet", "--out", tmp_path / "o"], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{path}, column 'POSITION_X', row 3" in err


def write_coords_real(folder, coords: np.ndarray, digits: int = 6):
    """Version 1: ``np.save(coords_real / ("coords%06d.npy" % t), coords.real)`` per volume."""
    folder.mkdir(parents=True)
    for t, volume in enumerate(coords, start=1):
        np.save(folder / f"coords{t:0{digits}d}.npy", volume)
    return folder


def test_deecelltracker_v1_coords_real_folder(tmp_path):
    write_coords_real(tmp_path / "res" / "track_results" / "coords_real", COORDS, digits=4)
    for given in (tmp_path / "res", tmp_path / "res" / "track_results" / "coords_real"):
        assert detect_format(given) == "3deecelltracker"
        loaded = read_tracks(given, "reference")
        table = loaded.table.sort_values(["track", "frame"])
        assert table["frame"].tolist() == [1, 2, 3, 1, 2, 3]
        assert table["track"].tolist() == [1, 1, 1, 2, 2, 2]
        assert table["y_um"].tolist() == [20.0, 21.0, 22.0, 20.0, 19.0, 18.0]
        assert any("taken as micrometres" in w for w in loaded.warnings)


@pytest.mark.parametrize("breaks, fragments", [
    (lambda f: np.save(f / "coords000002.npy", COORDS[1][:1]), ["coords000002.npy", "(1, 3)"]),
    (lambda f: np.save(f / "coords000002.npy", np.array([{"a": 1}], dtype=object)), ["coords000002.npy"]),
    (lambda f: np.save(f / "coords0002.npy", COORDS[1]), ["volume 2"]),
    (lambda f: np.save(f / "coords000003.npy", COORDS[2] * np.nan), ["coords000003.npy", "row 1"]),
    (lambda f: (f / "coords000002.npy").write_bytes((f / "coords000002.npy").read_bytes()[:-8]),
     ["coords000002.npy", "declares"]),
])
def test_deecelltracker_v1_broken_arrays_refused(tmp_path, breaks, fragments):
    folder = write_coords_real(tmp_path / "coords_real", COORDS)
    breaks(folder)
    with pytest.raises(InputError) as info:
        read_tracks(folder, "reference", fmt="3deecelltracker")
    assert all(f in str(info.value) for f in fragments), str(info.value)


def test_size_limit_and_long_lines(tmp_path, monkeypatch):
    import trackverify.io.formats.trackmate_csv as reader

    path = write(tmp_path / "big_spots.csv", v7_spots())
    monkeypatch.setattr(reader, "MAX_BYTES", 100)
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read_tracks(path, "reference", fmt="trackmate_csv")
    monkeypatch.undo()
    long_header = v7_spots().replace("Label,Spot ID", "Label" + "x" * 70_000 + ",Spot ID", 1)
    with pytest.raises(InputError, match="line 2 is longer than 65536 characters"):
        read_tracks(write(tmp_path / "h_spots.csv", long_header), "reference", fmt="trackmate_csv")
    assert not reader.sniff(write(tmp_path / "w_spots.csv", "LABEL" + "x" * 70_000 + ",ID\n"))
    long_label = v7_spots().replace("ID5,5,", "ID" + "5" * 10_000_000 + ",5,")   # data row 6
    table = read_tracks(write(tmp_path / "l_spots.csv", long_label), "reference").table
    assert len(table.set_index("node").loc[5, "spot_name"]) == 10_000_002


def test_evaluate_two_v1_results_folders(tmp_path, capsys):
    """Two v1 folders, the second with cells 1 and 2 swapped from volume 3 on: each reference
    track keeps its identity for 2 of 3 volumes, 2 identity switches."""
    write_coords_real(tmp_path / "a" / "track_results" / "coords_real", COORDS)
    swapped = COORDS.copy()
    swapped[2] = swapped[2][::-1]
    write_coords_real(tmp_path / "b" / "track_results" / "coords_real", swapped)
    code, _, err = run(["evaluate", "--reference", tmp_path / "a", "--predictions", tmp_path / "b",
                        "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    pooled = json.loads((tmp_path / "out" / "results.json").read_text())["tracking_gt"]["pooled"]
    assert pooled["reference_observations"] == 6 and pooled["identity_switches"] == 2
    assert pooled["correct_observation_rate"] == pytest.approx(4 / 6)


def test_ids_beyond_float_precision_refused(tmp_path):
    """float64 holds whole numbers exactly below 2^53; a larger id would silently collide."""
    path = write(tmp_path / "i_spots.csv", v7_spots().replace("ID4,4,", f"ID4,{2**63},"))
    with pytest.raises(InputError, match=r"column 'ID', row 4: expected a whole \(below 2\^53\)"):
        read_tracks(path, "reference")
    lines = deecell_csv(COORDS).splitlines(keepends=True)
    lines[2] = "1e300," + lines[2].split(",", 1)[1]
    with pytest.raises(InputError, match=r"column 'cell', row 2: expected a whole"):
        read_tracks(write(tmp_path / "tracked_coordinates.csv", "".join(lines)), "reference")


def test_the_edges_table_alone_names_the_spots_table(tmp_path):
    path = write(tmp_path / "run_edges.csv", v7_edges([(0, 0, 1)]))
    assert detect_format(path) == "trackmate_csv"
    with pytest.raises(InputError, match="run_edges.csv: this is TrackMate's edges table"):
        read_tracks(path, "reference")
