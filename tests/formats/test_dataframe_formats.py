"""The Python trackers' DataFrames (trackpy, laptrack, ultrack, btrack CSV) and napari CSVs
with extra columns, on files written in the layouts their sources give
(tests/corpus/tracker_csv_cases.py; src/trackverify/io/formats/dataframe.py cites them).
Expected values are written out by hand from the files' text."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.corpus.tracker_csv_cases import (BROKEN_DATAFRAMES, BROKEN_NAPARI_GRAPHS, BTRACK_CSV,
                                            LAPTRACK_SPLIT, LAPTRACK_TRACKS, NAPARI_TRACKS,
                                            ULTRACK_TRACKS, trackpy_csv)
from trackverify.errors import InputError
from trackverify.io.formats import detect_format, read_points
from trackverify.io.tracks import read_tracks

from formats_data import run


def write(path, text: str):
    path.write_bytes(text.encode("utf-8"))
    return path


def points(table: pd.DataFrame) -> list[tuple]:
    """``(frame, track, x_um, y_um, parent_track or None)`` in frame, track order."""
    parent = table["parent_track"].astype(object).where(table["parent_track"].notna(), None)
    return [(int(f), int(t), float(x), float(y), None if p is None else int(p))
            for f, t, x, y, p in zip(table["frame"], table["track"], table["x_um"], table["y_um"], parent)]


def test_trackpy_csv_with_its_index_column(tmp_path):
    path = write(tmp_path / "features.csv", trackpy_csv())
    assert detect_format(path) == "trackpy"
    loaded = read_tracks(path, "reference", pixel_size="0.5")
    assert points(loaded.table) == [(0, 0, 5.0, 10.0, None), (0, 1, 25.0, 20.0, None),
                                    (1, 0, 5.5, 10.25, None), (1, 1, 25.5, 20.5, None)]
    assert loaded.record["format"] == "trackpy" and loaded.record["calibration"]["source"] == "--pixel-size"
    assert loaded.record["ignored_columns"] == ["mass", "size", "ecc", "signal", "raw_mass", "ep"]


def test_trackpy_parquet_3d_without_index(tmp_path):
    frame = pd.DataFrame({"z": [1.0, 2.0], "y": [3.0, 4.0], "x": [5.0, 6.0], "mass": [9.0, 9.0],
                          "frame": [0, 1], "particle": [7, 7]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, index=False)
    assert detect_format(path) == "trackpy"
    table = read_tracks(path, "predictions").table
    assert table["pred_id"].tolist() == [7, 7] and table["z_um"].tolist() == [1.0, 2.0]
    assert table["x_um"].tolist() == [5.0, 6.0] and table["y_um"].tolist() == [3.0, 4.0]


def test_parquet_nan_position_and_fractional_id_refused(tmp_path):
    base = {"frame": [0, 1, 2], "particle": [3, 3, 3], "x": [1.0, 2.0, 3.0], "y": [1.0, 1.0, 1.0]}
    path = tmp_path / "t.parquet"
    pd.DataFrame({**base, "x": [1.0, float("nan"), 3.0]}).to_parquet(path, index=False)
    with pytest.raises(InputError, match=r"column 'x', row 2: expected a finite number, found nan"):
        read_tracks(path, "reference")
    pd.DataFrame({**base, "particle": [3.0, 3.0, 3.5]}).to_parquet(path, index=False)
    with pytest.raises(InputError, match=r"column 'particle', row 3: expected a whole"):
        read_tracks(path, "reference")


def test_laptrack_parquet_with_its_split_parquet(tmp_path):
    tracks = pd.DataFrame({"frame": [0, 1, 1], "x": [5.0, 4.0, 6.0], "y": [0.0, 0.0, 0.0],
                           "tree_id": [0, 0, 0], "track_id": [0, 1, 2]})
    tracks.to_parquet(tmp_path / "run.parquet")              # with pandas' index metadata
    pd.DataFrame({"parent_track_id": [0, 0], "child_track_id": [1, 2]}).to_parquet(
        tmp_path / "run_split.parquet", index=False)
    assert detect_format(tmp_path / "run.parquet") == "laptrack"
    assert points(read_tracks(tmp_path / "run.parquet", "reference").table) == [
        (0, 0, 5.0, 0.0, None), (1, 1, 4.0, 0.0, 0), (1, 2, 6.0, 0.0, 0)]


def test_laptrack_division_from_the_split_table_beside(tmp_path):
    path = write(tmp_path / "tracks.csv", LAPTRACK_TRACKS)
    assert detect_format(path) == "laptrack"
    assert points(read_tracks(path, "reference").table) == [(0, 0, 10.0, 10.0, None), (1, 0, 11.0, 10.0, None),
                                                     (2, 1, 8.0, 10.0, None), (2, 2, 14.0, 10.0, None)]
    write(tmp_path / "tracks_split.csv", LAPTRACK_SPLIT)
    loaded = read_tracks(path, "reference")
    assert points(loaded.table)[2:] == [(2, 1, 8.0, 10.0, 0), (2, 2, 14.0, 10.0, 0)]
    assert loaded.table["source_track"].tolist() == [0, 0, 0, 0]          # tree_id
    assert loaded.record["lineage_files"] == [str(tmp_path / "tracks_split.csv")]


def test_laptrack_merge_lists_every_parent(tmp_path):
    """Tracks 0 and 1 merge into track 2 (merge_df.csv, laptrack's variable name)."""
    tracks = (",frame,x,y,tree_id,track_id\n0,0,1.0,1.0,0,1\n1,0,9.0,1.0,0,0\n2,1,5.0,1.0,0,2\n")
    path = write(tmp_path / "t.csv", tracks)
    write(tmp_path / "merge_df.csv", "parent_track_id,child_track_id\n1,2\n0,2\n")
    table = read_points(path, "laptrack")[1].table
    merged = table[table["track"] == 2].iloc[0]
    assert int(merged["parent_track"]) == 0 and merged["merge_parents"] == "0;1"


def test_ultrack_tracks_layer(tmp_path):
    path = write(tmp_path / "tracks.csv", ULTRACK_TRACKS)
    assert detect_format(path) == "ultrack"
    loaded = read_tracks(path, "reference")
    assert points(loaded.table) == [(0, 1, 20.0, 10.0, None), (1, 1, 21.0, 10.0, None),
                                    (2, 2, 22.0, 8.0, 1), (2, 3, 22.0, 12.0, 1)]
    assert loaded.table["node"].tolist() == [1000001, 2000001, 3000001, 3000002]


def test_btrack_export_csv_space_separated_and_comma(tmp_path):
    path = write(tmp_path / "tracks.csv", BTRACK_CSV)
    assert detect_format(path) == "btrack_csv"
    loaded = read_tracks(path, "reference")
    expected = [(0, 1, 10.0, 20.0, None), (1, 1, 11.0, 20.0, None),    # the dummy at frame 2 not read
                (3, 2, 9.0, 20.0, 1), (3, 3, 14.0, 20.0, 1)]
    assert points(loaded.table) == expected and "z_um" not in loaded.table.columns
    assert loaded.table["generation"].tolist() == [0, 0, 1, 1] and loaded.record["rows_skipped"] == 1
    comma = write(tmp_path / "df.csv", BTRACK_CSV.replace(" ", ","))
    assert detect_format(comma) == "btrack_csv" and points(read_tracks(comma, "reference").table) == expected


def test_napari_csv_with_extra_columns(tmp_path):
    path = write(tmp_path / "tracks.csv", "ID,t,y,x,area,label\n1,0,2.0,3.0,10,a\n1,1,2.5,3.5,11,a\n")
    assert detect_format(path) == "napari"
    loaded = read_tracks(path, "reference")
    assert points(loaded.table) == [(0, 1, 3.0, 2.0, None), (1, 1, 3.5, 2.5, None)]
    assert loaded.record["ignored_columns"] == ["area", "label"]


def test_napari_whole_ids_and_graph_read_exactly(tmp_path):
    # ids written 7.0 and 2^53 - 1 = 9007199254740991 (exact in float64), a graph key "9007199254740991"
    # whose parent is written 7.0
    path = write(tmp_path / "tracks.csv", "ID,t,y,x\n7.0,0,2.0,3.0\n7,1,2.5,3.5\n"
                                          "9007199254740991,2,8.0,9.0\n")
    write(tmp_path / "graph.json", '{"9007199254740991": [7.0]}')
    loaded = read_tracks(path, "reference")
    assert points(loaded.table) == [(0, 7, 3.0, 2.0, None), (1, 7, 3.5, 2.5, None),
                                    (2, 9007199254740991, 9.0, 8.0, 7)]


@pytest.mark.parametrize("name, graph, fragments", BROKEN_NAPARI_GRAPHS,
                         ids=[case[0] for case in BROKEN_NAPARI_GRAPHS])
def test_napari_graph_ids_that_are_not_whole_numbers_are_refused(tmp_path, name, graph, fragments):
    path = write(tmp_path / "tracks.csv", NAPARI_TRACKS)
    write(tmp_path / "graph.json", graph)
    with pytest.raises(InputError) as info:
        read_tracks(path, "reference")
    message = str(info.value)
    assert message.startswith(str(tmp_path / "graph.json"))
    assert all(fragment in message for fragment in fragments), message


def test_napari_graph_json_size_check(tmp_path, monkeypatch):
    from trackverify.io.formats import napari

    path = write(tmp_path / "tracks.csv", "ID,t,y,x\n1,0,2.0,3.0\n")
    write(tmp_path / "graph.json", '{"2": [1]}')
    monkeypatch.setattr(napari, "MAX_GRAPH_BYTES", 5)
    with pytest.raises(InputError, match="graph JSON is 10 bytes; at most 5 are read") as info:
        read_tracks(path, "reference")
    assert info.value.source == str(tmp_path / "graph.json")


@pytest.mark.parametrize("name, file_name, text, fmt, fragments", BROKEN_DATAFRAMES,
                         ids=[case[0] for case in BROKEN_DATAFRAMES])
def test_malformed_dataframes_refused_naming_file_column_row(tmp_path, name, file_name, text, fmt,
                                                              fragments):
    path = write(tmp_path / file_name, text)
    with pytest.raises(InputError) as info:
        read_tracks(path, "reference", fmt=fmt)
    message = str(info.value)
    assert message.startswith(str(path))
    assert all(fragment in message for fragment in fragments), message



def test_unknown_layout_suggests_the_columns_mapping(tmp_path, capsys):
    """A trackpy-like table under other names: the message gives the exact mapping, and that
    mapping works."""
    (tmp_path / "r").mkdir()
    ref = write(tmp_path / "r" / "ref.csv", "frame,track,x_um,y_um\n0,1,10.0,20.0\n1,1,11.0,20.5\n")
    pred = write(tmp_path / "pred.csv", "Frame,traj,pos_x,pos_y\n0,4,10.0,20.0\n1,4,11.0,20.5\n")
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--out",
                        tmp_path / "a"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "found columns ['Frame', 'traj', 'pos_x', 'pos_y']" in err
    assert "try --columns frame=Frame,x_um=pos_x,y_um=pos_y,pred_id=traj" in err
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--predictions-columns",
                        "frame=Frame,x_um=pos_x,y_um=pos_y,pred_id=traj", "--predictions-units", "um",
                        "--out", tmp_path / "b"], capsys)
    assert code == 0, err


def test_a_tracker_layout_read_as_a_table_names_its_format(tmp_path):
    path = write(tmp_path / "t.csv", trackpy_csv())
    with pytest.raises(InputError, match="this is trackpy's layout: give --format trackpy"):
        read_tracks(path, "reference", fmt="table")


@pytest.mark.parametrize("command", ["run", "audit", "convert", "evaluate"])
def test_btrack_space_separated_text_given_as_a_table_names_its_format(tmp_path, capsys, command):
    """btrack's export_CSV is space-separated: read as a table it is one column, which named
    no format before (the header was split by commas only)."""
    path = write(tmp_path / "tracks.txt", BTRACK_CSV)
    out = tmp_path / "out"
    args = {"run": ["run", "--data", path, "--conditions", "control"],
            "audit": ["audit", path], "convert": ["convert", path, "--to", "parquet"],
            "evaluate": ["evaluate", "--reference", path, "--predictions", path]}[command]
    code, _, err = run([*args, "--format", "table", "--out", out], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "this is btrack_csv's layout: give --format btrack_csv" in err
    assert not out.exists()


def test_evaluate_trackpy_against_ultrack_through_format(tmp_path, capsys):
    """The same two tracks (x, y swapped back by each layout): every point matched, no switch."""
    ref = write(tmp_path / "ref.csv", trackpy_csv())
    pred = write(tmp_path / "pred.csv", "track_id,t,y,x,id,parent_track_id,parent_id\n"
                 "5,0,20.0,10.0,1,-1,-1\n6,0,40.0,50.0,2,-1,-1\n5,1,20.5,11.0,3,-1,1\n6,1,41.0,51.0,4,-1,2\n")
    code, _, err = run(["evaluate", "--reference", ref, "--predictions", pred, "--reference-format",
                        "trackpy", "--predictions-format", "ultrack", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    pooled = results["tracking_gt"]["pooled"]
    assert pooled["reference_observations"] == 4 and pooled["correct_observation_rate"] == 1.0
    assert pooled["identity_switches"] == 0
    assert results["inputs"]["predictions"]["format"] == "ultrack"


def test_audit_run_and_convert_accept_them_through_format(tmp_path, capsys):
    path = write(tmp_path / "features.csv", trackpy_csv())
    code, _, err = run(["audit", path, "--format", "trackpy", "--out", tmp_path / "audit"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "audit" / "audit.json").read_text())
    code, _, err = run(["run", "--data", path, "--format", "trackpy", "--out", tmp_path / "run",
                        "--no-rows", "--executor", "local", "--conditions", "control"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["source"]["format"] == "trackpy"
    btrack = write(tmp_path / "tracks.csv", BTRACK_CSV)
    code, _, err = run(["convert", btrack, "--format", "btrack_csv", "--to", "parquet", "--out",
                        tmp_path / "conv"], capsys)
    assert code == 0, err
    converted = pd.read_parquet(next((tmp_path / "conv").glob("*.parquet")))
    assert sorted(converted["pred_id"].tolist()) == [1, 1, 2, 3]
