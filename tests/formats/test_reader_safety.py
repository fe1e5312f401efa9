"""Hostile and malformed inputs: XML bombs and external entities, HDF5 external links,
and small hand-written files of the text formats (expected values computed by hand)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import InputError, MissingExtraError
from trackverify.io.formats import parse_columns, parse_pixel_size, read_points
from trackverify.io.tracks import read_tracks

MODEL = ('<TrackMate version="7"><Model spatialunits="um" timeunits="s"><AllSpots>'
         '<SpotsInFrame frame="0"><Spot ID="1" FRAME="0" POSITION_X="{x}" POSITION_Y="2" '
         'POSITION_Z="0" name="a"/></SpotsInFrame></AllSpots><AllTracks/><FilteredTracks/>'
         '</Model></TrackMate>')


def test_billion_laughs_is_refused(tmp_path):
    pytest.importorskip("defusedxml")
    lol = "".join(f'<!ENTITY l{i} "{"&l%d;" % (i - 1) * 10}">' for i in range(1, 10))
    path = tmp_path / "bomb.xml"
    path.write_text('<?xml version="1.0"?><!DOCTYPE TrackMate [<!ENTITY l0 "lol">' + lol + ']>'
                    + MODEL.format(x="&l9;"))
    with pytest.raises(InputError, match="refused"):
        read_points(path, "trackmate")


def test_external_entity_and_external_dtd_are_refused(tmp_path):
    pytest.importorskip("defusedxml")
    secret = tmp_path / "secret.txt"
    secret.write_text("1.0")
    entity = tmp_path / "xxe.xml"
    entity.write_text(f'<?xml version="1.0"?><!DOCTYPE TrackMate [<!ENTITY s SYSTEM '
                      f'"file://{secret}">]>' + MODEL.format(x="&s;"))
    dtd = tmp_path / "dtd.xml"
    dtd.write_text('<?xml version="1.0"?><!DOCTYPE TrackMate SYSTEM "http://example.invalid/x.dtd">'
                   + MODEL.format(x="1"))
    for path in (entity, dtd):
        with pytest.raises(InputError, match="refused"):
            read_points(path, "trackmate")


def test_not_well_formed_xml(tmp_path):
    path = tmp_path / "cut.xml"
    path.write_text(MODEL.format(x="1")[:120])
    with pytest.raises(InputError, match="not well-formed"):
        read_points(path, "trackmate")


def _btrack_with_coords(path, make_coords):
    """The smallest btrack file (one track of two points), its coords dataset made by
    ``make_coords(group)``."""
    import h5py

    with h5py.File(path, "w") as h5:
        make_coords(h5.create_group("objects/obj_type_1"))
        h5.create_group("tracks/obj_type_1")
        for name, value in (("tracks", [0, 1]), ("map", [[0, 2]]), ("LBEPR", [[1, 0, 1, 1, 1, 0]])):
            h5[f"tracks/obj_type_1/{name}"] = np.array(value)
    return path


@pytest.fixture
def other_h5(tmp_path):
    """Another HDF5 file holding the coords a hostile file points at."""
    h5py = pytest.importorskip("h5py")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as h5:
        h5["coords"] = np.zeros((2, 5))
    return other


def test_hdf5_external_link_is_not_followed(tmp_path, other_h5):
    import h5py

    other = other_h5

    def link(group):
        group["coords"] = h5py.ExternalLink(str(other), "coords")

    with pytest.raises(InputError, match="external link"):
        read_points(_btrack_with_coords(tmp_path / "tracks.h5", link), "btrack")


@pytest.mark.parametrize("make_coords, message", [
    # raw data in another file (here one that need not exist: nothing is read)
    (lambda g: g.create_dataset("coords", shape=(2, 5), dtype="f8",
                                external=[("outside.bin", 0, 80)]),
     "keeps its data in external file.s. .'outside.bin'.; external storage is not read"),
    # 2^34 x 5 float32 (320 GiB) declared, no chunk written: refused before any allocation
    (lambda g: g.create_dataset("coords", shape=(2 ** 34, 5), dtype="f4", chunks=(1024, 5),
                                compression="gzip"),
     "declares 343597383680 bytes but the file holds only 4096"),
], ids=["external_storage", "declared_not_stored"])
def test_hdf5_data_not_in_the_file_are_refused(tmp_path, make_coords, message):
    pytest.importorskip("h5py")
    with pytest.raises(InputError, match=message):
        read_points(_btrack_with_coords(tmp_path / "tracks.h5", make_coords), "btrack")


def test_hdf5_virtual_dataset_is_not_followed(tmp_path, other_h5):
    import h5py

    other = other_h5

    def virtual(group):
        layout = h5py.VirtualLayout(shape=(2, 5), dtype="f8")
        layout[:] = h5py.VirtualSource(str(other), "coords", shape=(2, 5))
        group.create_virtual_dataset("coords", layout)

    with pytest.raises(InputError, match="virtual dataset"):
        read_points(_btrack_with_coords(tmp_path / "tracks.h5", virtual), "btrack")


def test_hdf5_well_compressed_data_is_read(tmp_path):
    """Zeros deflate about as far as deflate goes; 8 MB of them in gzip chunks still read."""
    h5py = pytest.importorskip("h5py")
    from trackverify.io.formats.hdf5 import array

    path = tmp_path / "zeros.h5"
    with h5py.File(path, "w") as h5:
        h5.create_dataset("z", data=np.zeros((200_000, 5)), chunks=(50_000, 5),
                          compression="gzip", compression_opts=9)
    with h5py.File(path, "r") as h5:
        assert h5["z"].id.get_storage_size() < 8_000_000 // 100  # stored far smaller
        values = array(h5, "z")
    assert values.shape == (200_000, 5) and not values.any()


def test_missing_extra_is_one_line_with_the_install_command(tmp_path, monkeypatch):
    path = tmp_path / "t.xml"
    path.write_text(MODEL.format(x="1"))
    monkeypatch.setitem(sys.modules, "defusedxml", None)
    monkeypatch.setitem(sys.modules, "defusedxml.ElementTree", None)
    with pytest.raises(MissingExtraError) as err:
        read_points(path, "trackmate")
    assert "'formats' extra" in str(err.value)
    assert "pip install 'trackverify[formats]'" in str(err.value)
    assert "\n" not in str(err.value)


def test_mot_points_and_boxes(tmp_path):
    points = tmp_path / "points.txt"
    points.write_text("1,7,10.0,20.0,3.0\n2,7,11.0,21.0,3.5\n")
    _, tracks = read_points(points)
    assert tracks.table[["frame", "track", "x", "y", "z"]].values.tolist() == [
        [1, 7, 10.0, 20.0, 3.0], [2, 7, 11.0, 21.0, 3.5]]
    boxes = tmp_path / "gt.txt"
    boxes.write_text("1,3,100,50,20,10,1,-1,-1,-1\n")
    _, tracks = read_points(boxes)
    row = tracks.table.iloc[0]
    assert (row["x"], row["y"]) == (110.0, 55.0)              # box centre: 100 + 20/2, 50 + 10/2
    bad = tmp_path / "bad.txt"
    bad.write_text("1,3,100,50\n2,x,1,1\n")
    with pytest.raises(InputError, match="row 2"):
        read_points(bad, "mot")


def test_table_column_mapping_and_units(tmp_path):
    path = tmp_path / "tracker.csv"
    pd.DataFrame({"t": [0, 0, 1], "id": [1, 2, 1], "x": [0.0, 10.0, 1.0],
                  "y": [0.0, 0.0, 0.0]}).to_csv(path, index=False)
    with pytest.raises(InputError, match="column 'x': the column 'x' .read as x_um. does not "
                                          "say its unit"):
        read_tracks(path, "predictions", columns="frame=t,pred_id=id,x_um=x,y_um=y")
    loaded = read_tracks(path, "predictions", columns="frame=t,pred_id=id,x_um=x,y_um=y",
                         units="um")
    assert loaded.table["recording"].unique().tolist() == ["recording"]
    assert loaded.table["x_um"].tolist() == [0.0, 10.0, 1.0]
    named = read_tracks(path, "predictions", columns="frame=t,pred_id=id,x_um=x,y_um=y",
                        units="um", recording="worm 3")
    assert named.table["recording"].unique().tolist() == ["worm 3"]
    assert named.record["recording"] == {"from": "--recording", "name": "worm 3"}
    scaled = read_tracks(path, "predictions", columns="frame=t,pred_id=id,x_um=x,y_um=y",
                  pixel_size="0.25")
    assert scaled.table["x_um"].tolist() == [0.0, 2.5, 0.25]
    with pytest.raises(InputError) as err:
        read_tracks(path, "predictions", columns="frame=time,pred_id=id")
    assert "'time' (closest: t" in str(err.value)


def test_missing_columns_all_named_with_suggestions(tmp_path):
    path = tmp_path / "mot.csv"
    pd.DataFrame({"frame": [1], "id": [1], "x": [1.0], "y": [2.0], "z": [3.0]}).to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        read_tracks(path, "reference", fmt="table")
    text = str(err.value)
    assert "track" in text and "x_um (closest: x)" in text and "y_um (closest: y)" in text
    assert "recording" not in err.value.column


def test_implausible_units_warn(tmp_path):
    path = tmp_path / "pixels.csv"
    frame = np.repeat([0, 1], 3)
    pd.DataFrame({"frame": frame, "track": [1, 2, 3] * 2, "x_um": [0.0, 300.0, 600.0] * 2,
                  "y_um": 0.0}).to_csv(path, index=False)
    loaded = read_tracks(path, "reference")
    assert len(loaded.warnings) == 1 and "300 um" in loaded.warnings[0]
    tight = tmp_path / "tight.csv"
    pd.DataFrame({"frame": frame, "track": [1, 2, 3] * 2, "x_um": [0.0, 0.1, 0.2] * 2,
                  "y_um": 0.0}).to_csv(tight, index=False)
    assert "0.1 um" in read_tracks(tight, "reference").warnings[0]


def test_scale_mismatch_warns():
    from trackverify.io.formats.units import scale_mismatch_warnings

    ref = pd.DataFrame({"recording": "r", "frame": 0, "x_um": [0.0, 5.0, 10.0], "y_um": 0.0})
    pred = ref.assign(x_um=ref["x_um"] * 3)                    # spacing 15 vs 5 um: 3x
    assert len(scale_mismatch_warnings(ref, pred, "ref", "pred")) == 1
    assert scale_mismatch_warnings(ref, ref.assign(x_um=ref["x_um"] * 1.9), "ref", "pred") == []


@pytest.mark.parametrize("text", ["a", "1,2,3,4", "0", "-1", "1,,2"])
def test_bad_pixel_size(text):
    with pytest.raises(InputError, match="--pixel-size"):
        parse_pixel_size(text)


def test_columns_syntax():
    assert parse_columns("frame=t, pred_id=id") == {"t": "frame", "id": "pred_id"}
    with pytest.raises(InputError, match="PROJECT=FILE"):
        parse_columns("frame")


@pytest.mark.parametrize("fmt, name, data", [
    ("trackmate", "t.xml", b"<TrackMate><Model><AllSpots><Spot ID='x'/></AllSpots></Model></TrackMate>"),
    ("trackmate", "t.xml", b"<Other/>"),
    ("ctc", "res_track.txt", b"1 0 x 0\n"),
    ("ctc", "res_track.txt", b"1 5 2 0\n"),
    ("btrack", "t.h5", b"\x89HDF\r\n\x1a\n" + b"\x00" * 64),
    ("zephir", "annotations.h5", b"not hdf5"),
    ("napari", "tracks.csv", b"ID,t,y,x\n1,0.5,1,2\n"),
    ("napari", "tracks.csv", b"id,frame,y,x\n1,0,1,2\n"),
    ("mot", "gt.txt", b"frame,id,x,y\n"),
    ("geff", "g.zarr", None),
])
def test_malformed_files_are_one_line_errors(tmp_path, fmt, name, data):
    path = tmp_path / name
    if data is None:
        path.mkdir()
        (path / ".zattrs").write_text('{"geff": {"geff_version": "1.1", "directed": true}}')
    else:
        path.write_bytes(data)
    with pytest.raises(InputError) as err:
        read_points(path, fmt)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_xml_nested_100000_deep_is_read(tmp_path):
    """10^5 nested unknown elements beside the model: expat does not recurse, so the file is
    read (the one spot of the one filtered track) rather than failing or stalling."""
    pytest.importorskip("defusedxml")
    spots = ('<Spot ID="1" FRAME="0" POSITION_X="1" POSITION_Y="2" POSITION_Z="0" name="a"/>'
             '<Spot ID="2" FRAME="1" POSITION_X="3" POSITION_Y="4" POSITION_Z="0" name="b"/>')
    deep = "<a>" * 100_000 + "</a>" * 100_000
    path = tmp_path / "deep.xml"
    path.write_text(f'<TrackMate version="7"><Model spatialunits="um" timeunits="s"><AllSpots>'
                    f'<SpotsInFrame frame="0">{spots}</SpotsInFrame></AllSpots><AllTracks>'
                    f'<Track TRACK_ID="0"><Edge SPOT_SOURCE_ID="1" SPOT_TARGET_ID="2"/></Track>'
                    f'</AllTracks><FilteredTracks><TrackID TRACK_ID="0"/></FilteredTracks>'
                    f'</Model>{deep}</TrackMate>')
    _, tracks = read_points(path, "trackmate")
    assert tracks.table[["frame", "track", "x", "y"]].values.tolist() == [[0, 1, 1.0, 2.0],
                                                                          [1, 1, 3.0, 4.0]]
