"""Readers against files the trackers' own writers made (tests/data/writers/, written by
make_writers.py there with trackpy 0.7, laptrack 0.17.1, btrack 0.7.0, geff 0.5.0).

Expected values come from the scene in make_writers.py's docstring (track A: frames 0-19
but 7, x = 10 + 2t, y = 12, z = 8; B: frames 0-9 then daughters B1 / B2 in 10-19; C:
frames 4-15, x = 60, y = 60 - t, z = 16: 61 points) and from the writers' own files (the
split table laptrack returned, the LBEPR btrack wrote), never from the reader."""

from pathlib import Path

import pandas as pd
import pytest

from trackverify.errors import InputError
from trackverify.io.formats import detect_format, read_points
from trackverify.io.tracks import read_tracks

DATA = Path(__file__).resolve().parents[1] / "data" / "writers"


def at(table, frame, x):
    """The one row of ``table`` in ``frame`` at ``x``."""
    rows = table[(table["frame"] == frame) & (table["x"] == x)]
    assert len(rows) == 1
    return rows.iloc[0]


@pytest.mark.parametrize("name", ["linked_2d.csv", "linked_2d.parquet", "linked_3d.csv"])
def test_trackpy_link_with_memory(name):
    fmt, tracks = read_points(DATA / "trackpy" / name)
    t = tracks.table
    assert fmt == "trackpy"
    assert len(t) == 61
    assert t["track"].nunique() == 5  # memory=3 bridges A's one-frame gap
    assert (t["frame"] == 7).sum() == 2 and (t["frame"] == 10).sum() == 4
    a0, a8 = at(t, 0, 10.0), at(t, 8, 26.0)
    assert a0["y"] == 12.0 and a0["track"] == a8["track"]
    assert t["parent_track"].isna().all()
    assert ("z" in t.columns) == ("3d" in name)
    if "3d" in name:
        assert at(t, 4, 60.0)["z"] == 16.0


def test_trackpy_link_without_memory_splits_the_gap():
    t = read_points(DATA / "trackpy" / "linked_2d_no_memory.csv")[1].table
    assert t["track"].nunique() == 6
    assert at(t, 6, 22.0)["track"] != at(t, 8, 26.0)["track"]


@pytest.mark.parametrize("name", ["track_df.csv", "track_df.parquet", "track_df_3d.csv",
                                  "track_df_noindex.csv"])
def test_laptrack_track_df_with_splitting(name):
    fmt, tracks = read_points(DATA / "laptrack" / name)
    t = tracks.table
    assert fmt == "laptrack"
    assert len(t) == 61 and t["track"].nunique() == 5
    # the split table laptrack returned: parent 1, children 4 and 3
    assert set(t.loc[t["parent_track"].notna(), "track"]) == {3, 4}
    assert set(t["parent_track"].dropna()) == {1}
    assert at(t, 9, 40.0)["track"] == 1 and at(t, 10, 46.0)["track"] in (3, 4)
    assert at(t, 8, 26.0)["track"] == at(t, 6, 22.0)["track"] == 0  # gap closed
    assert ("z" in t.columns) == ("3d" in name)


@pytest.mark.parametrize("name", ["tracks.h5", "tracks_3d.h5", "tracks.csv", "tracks_3d.csv",
                                  "tracks_dataframe.csv"])
def test_btrack_export(name):
    fmt, tracks = read_points(DATA / "btrack" / name)
    t = tracks.table
    assert fmt == ("btrack" if name.endswith(".h5") else "btrack_csv")
    # btrack kept 60 of the 61 points (B2's first point is in none of its tracks) and
    # filled A's gap with a dummy, which is not read
    assert len(t) == 60 and t["track"].nunique() == 5
    assert not ((t["frame"] == 7) & (t["y"] == 12.0)).any()
    assert at(t, 8, 26.0)["track"] == at(t, 6, 22.0)["track"] == 2
    # LBEPR / parent column: tracks 4 and 5 are the daughters of track 1
    assert set(t.loc[t["parent_track"].notna(), "track"]) == {4, 5}
    assert set(t["parent_track"].dropna()) == {1}
    assert at(t, 9, 40.0)["track"] == 1
    assert ("z" in t.columns) == ("3d" in name)


def test_btrack_dummy_flag_must_be_a_flag(tmp_path):
    text = (DATA / "btrack" / "tracks_dataframe.csv").read_text().splitlines()
    text[3] = text[3].rsplit(",", 1)[0] + ",maybe"
    path = tmp_path / "tracks.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match=r"column 'dummy', row 3.*'maybe'"):
        read_points(path, "btrack_csv")


@pytest.mark.parametrize("name", ["tracks.geff", "tracks_3d.geff", "tracks_nounits.geff",
                                  "tracks_v3.zarr", "arrays.geff"])
def test_geff_write_nx_and_write_arrays(name):
    fmt, tracks = read_points(DATA / "geff" / name)
    t = tracks.table
    assert fmt == "geff"
    assert len(t) == 61 and t["track"].nunique() == 5  # tracklets A, B, C, B1, B2
    b = at(t, 9, 40.0)["track"]
    daughters = {at(t, 10, 46.0)["track"], at(t, 10, 34.0)["track"]}
    assert set(t.loc[t["parent_track"].notna(), "track"]) == daughters
    assert set(t["parent_track"].dropna()) == {b}
    assert at(t, 6, 22.0)["track"] == at(t, 8, 26.0)["track"]
    assert ("z" in t.columns) == ("3d" in name)
    micrometres = name in ("tracks.geff", "tracks_3d.geff", "arrays.geff")
    assert (tracks.calibration.um_per_unit is not None) == micrometres
    if name == "arrays.geff":  # the track_id property write_arrays was given
        assert set(t.loc[t["track"].isin(daughters), "source_track"]) == {3, 4}


def test_detection_and_micrometres():
    for folder, name, fmt in (("trackpy", "linked_3d.csv", "trackpy"),
                              ("laptrack", "track_df.parquet", "laptrack"),
                              ("btrack", "tracks_dataframe.csv", "btrack_csv"),
                              ("geff", "tracks_nounits.geff", "geff")):
        assert detect_format(DATA / folder / name) == fmt
    loaded = read_tracks(DATA / "geff" / "tracks_3d.geff", "predictions")
    row = loaded.table[(loaded.table["frame"] == 4) & (loaded.table["x_um"] == 60.0)]
    assert list(row["z_um"]) == [16.0]
    assert isinstance(loaded.table, pd.DataFrame)
