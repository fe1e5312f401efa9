"""Every reader on the real files of ../shared/data (see each folder's SOURCE.md).

Expected numbers come from SOURCE.md, from the files' own text (parsed here with the
standard library), or from an independent computation (scipy.ndimage for centroids).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import InputError
from trackverify.io.formats import detect_format, read_points
from trackverify.io.tracks import read_tracks

from formats_data import FORMATS, ZEPHIR, shared

TRACKMATE = FORMATS / "trackmate_xml"
CTC = FORMATS / "ctc"
GEFF = FORMATS / "geff"


def tracklets(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop_duplicates("track").set_index("track")


def check_parent_links(table: pd.DataFrame) -> None:
    """Each parent exists and ends before its child starts (a lineage runs forward)."""
    span = table.groupby("track")["frame"].agg(["min", "max"])
    child = tracklets(table)["parent_track"].dropna().astype(int)
    assert child.isin(span.index).all()
    assert (span.loc[child.to_numpy(), "max"].to_numpy() < span.loc[child.index, "min"].to_numpy()).all()


def spot_attribute(path, spot_id: int, name: str) -> float:
    text = path.read_text(encoding="utf-8")
    tag = re.search(rf'<Spot ID="{spot_id}"[^>]*>', text).group(0)
    return float(re.search(rf' {name}="([^"]+)"', tag).group(1))


# ------------------------------------------------------------------------------ TrackMate

def test_trackmate_celegans_3d_with_divisions():
    path = shared(TRACKMATE / "Celegans-5pc-17timepoints.xml")
    name, tracks = read_points(path)
    table = tracks.table
    assert name == "trackmate" and len(table) == 87            # SOURCE.md: 87 spots
    assert {"x", "y", "z"} <= set(table.columns)                # 3-D
    # 4 tracks, 4 divisions: each division ends one tracklet and starts two.
    assert table["track"].nunique() == 4 + 2 * 4
    assert tracklets(table)["parent_track"].notna().sum() == 8
    check_parent_links(table)
    assert tracks.calibration.unit == "µm" and tracks.calibration.um_per_unit == (1.0,)
    loaded = read_tracks(path, "reference")
    row = loaded.table[loaded.table["node"] == 19680].iloc[0]
    assert row["x_um"] == spot_attribute(path, 19680, "POSITION_X")
    assert row["z_um"] == spot_attribute(path, 19680, "POSITION_Z")
    assert loaded.record["calibration"]["um_per_unit"] == [1.0, 1.0, 1.0]
    assert loaded.warnings == []


def test_trackmate_ecoli_crlf_comma_log_and_71_divisions():
    path = shared(TRACKMATE / "Ecoli_growth_on_agar_pad.xml")
    assert b"0,0658700" in path.read_bytes() and b"\r\n" in path.read_bytes()
    _, tracks = read_points(path)
    table = tracks.table
    assert len(table) == 526 and "z" not in table.columns    # 2-D
    assert table["track"].nunique() == 3 + 2 * 71             # 3 trees, 71 divisions
    assert tracklets(table)["parent_track"].notna().sum() == 142
    check_parent_links(table)


def test_trackmate_splits_and_merge_in_pixels():
    path = shared(TRACKMATE / "trackmate_tracks_with_splitting_merging.xml")
    _, tracks = read_points(path)
    table = tracks.table
    assert len(table) == 183
    # 4 tracks, 2 splits (+2 tracklets each), 1 merge (+1): 9 tracklets, 5 with a parent.
    assert table["track"].nunique() == 9
    assert tracklets(table)["parent_track"].notna().sum() == 5
    merged = tracklets(table)["merge_parents"].dropna()
    assert len(merged) == 1 and len(merged.iloc[0].split(";")) == 2
    assert tracklets(table).loc[merged.index[0], "parent_track"] == min(
        int(p) for p in merged.iloc[0].split(";"))
    assert tracks.calibration.um_per_unit is None             # spatialunits="pixel"
    plain = read_tracks(path, "predictions")
    assert any("no calibration" in w for w in plain.warnings)
    scaled = read_tracks(path, "predictions", pixel_size="0.5")
    assert scaled.record["calibration"] == {"unit": "pixel", "um_per_unit": [0.5, 0.5],
                                          "source": "--pixel-size"}
    assert np.allclose(scaled.table["x_um"], 0.5 * plain.table["x_um"])
    assert "pred_id" in scaled.table.columns and scaled.table["pred_valid"].all()


# ------------------------------------------------------------------------------ CTC

def test_ctc_hela_result_with_divisions():
    folder = shared(CTC / "Fluo-N2DL-HeLa_01_RES")
    name, tracks = read_points(folder)
    table = tracks.table
    lines = np.loadtxt(folder / "res_track.txt", dtype=np.int64).reshape(-1, 4)
    assert name == "ctc" and table["track"].nunique() == len(lines) == 285
    span = table.groupby("track")["frame"].agg(["min", "max"])
    spec = pd.DataFrame(lines, columns=["L", "B", "E", "P"]).set_index("L")
    assert (span["min"] >= spec.loc[span.index, "B"]).all()
    assert (span["max"] <= spec.loc[span.index, "E"]).all()
    parents = tracklets(table)["parent_track"].fillna(0).astype(int)
    assert (parents == spec.loc[parents.index, "P"]).all()
    assert tracks.calibration.um_per_unit is None


def test_ctc_centroids_match_scipy():
    ndimage = pytest.importorskip("scipy.ndimage")
    tifffile = pytest.importorskip("tifffile")
    folder = shared(CTC / "java-ctcmetrics_test_data" / "res")
    _, tracks = read_points(folder / "res_track.txt", "ctc")
    table = tracks.table
    assert sorted(table["track"].unique()) == [130, 200, 240]
    assert len(table) == 18                                   # 3 tracks x 6 frames
    image = tifffile.imread(folder / "mask003.tif")
    expected = ndimage.center_of_mass(np.ones_like(image), image, [200])[0]   # (row, column)
    row = table[(table["frame"] == 3) & (table["track"] == 200)].iloc[0]
    assert row["y"] == pytest.approx(expected[0]) and row["x"] == pytest.approx(expected[1])


def test_ctc_reference_folder_and_track_table_without_images():
    gt = shared(CTC / "java-ctcmetrics_test_data" / "GT" / "TRA")
    assert detect_format(gt) == "ctc"
    assert sorted(read_points(gt)[1].table["track"].unique()) == [13, 20, 24]
    with pytest.raises(InputError, match="no label images"):
        read_points(shared(CTC / "Ecoli_growth_on_agar_pad_TMtoCTC.txt"), "ctc")


# ------------------------------------------------------------------------------ GEFF

def test_geff_current_layout_matches_the_trackmate_file_it_came_from():
    """SOURCE.md: the pycellin GEFF export of the TrackMate E. coli file (two readers)."""
    pytest.importorskip("geff")
    _, geff = read_points(shared(GEFF / "Ecoli_growth_on_agar_pad.geff"))
    _, xml = read_points(shared(TRACKMATE / "Ecoli_growth_on_agar_pad.xml"))
    assert geff.calibration.um_per_unit == (1.0, 1.0)        # axes unit "micrometer"
    a = geff.table.sort_values("node", kind="stable").reset_index(drop=True)
    b = xml.table.sort_values("node", kind="stable").reset_index(drop=True)
    assert (a["node"].to_numpy() == b["node"].to_numpy()).all()
    assert (a["frame"].to_numpy() == b["frame"].to_numpy()).all()
    assert np.allclose(a[["x", "y"]], b[["x", "y"]])
    assert a["track"].nunique() == b["track"].nunique() == 145


def test_geff_props_layout_3d_float_ids():
    pytest.importorskip("geff")
    name, tracks = read_points(shared(GEFF / "mouse-20250719.zarr"))
    table = tracks.table
    assert name == "geff" and len(table) == 37009 and {"x", "y", "z"} <= set(table.columns)
    assert tracklets(table)["parent_track"].notna().sum() == 2 * 148   # 148 divisions
    assert tracks.calibration.um_per_unit is None                     # units null
    check_parent_links(table)


def test_geff_metadata_read_here_equals_the_geff_library_on_a_1_1_store():
    """GEFF 0.x metadata is read here (the library >= 1.0 refuses it), 1.x by the geff
    library: on the pycellin 1.1 store both readings give the same axes and track
    properties (SOURCE.md: axes POSITION_T, cell_x, cell_y, cell_z; lineage lineage_ID)."""
    pytest.importorskip("geff")
    from trackverify.io.bounded import read_json
    from trackverify.io.formats.geff import library_metadata, own_metadata

    store = shared(GEFF / "Ecoli_growth_on_agar_pad.geff")
    attrs = read_json(store / ".zattrs")["geff"]
    ours, theirs = own_metadata(attrs, str(store)), library_metadata(attrs, str(store))
    assert ours.axes == theirs.axes
    assert [(a.name, a.type, a.unit) for a in ours.axes] == [
        ("POSITION_T", "time", "minute"), ("cell_x", "space", "micrometer"),
        ("cell_y", "space", "micrometer"), ("cell_z", "space", "micrometer")]
    assert ours.track_node_props == theirs.track_node_props == {"lineage": "lineage_ID"}
    assert ours.version == theirs.version == "1.1"
    assert ours.read_by == "trackverify" and theirs.read_by.startswith("geff ")


@pytest.mark.parametrize("store, read_by", [("mouse-20250719.zarr", "trackverify"),
                                            ("Ecoli_growth_on_agar_pad.geff", "geff ")])
def test_geff_version_decides_who_reads_the_metadata(store, read_by):
    """0.2.2 (geff-java's mouse store) is read here, 1.1 by the library; results.json
    records which (``metadata_read_by``)."""
    pytest.importorskip("geff")
    _, tracks = read_points(shared(GEFF / store))
    assert tracks.details["metadata_read_by"].startswith(read_by)


def test_geff_1_x_metadata_the_library_refuses_is_one_error(tmp_path):
    """A 1.x store without node_props_metadata (required since GEFF 1.0) is refused by the
    library's schema, as one InputError."""
    pytest.importorskip("geff")
    import shutil

    store = tmp_path / "s.geff"
    shutil.copytree(shared(GEFF / "Ecoli_growth_on_agar_pad.geff"), store)
    attrs = json.loads((store / ".zattrs").read_text())
    del attrs["geff"]["node_props_metadata"]
    (store / ".zattrs").write_text(json.dumps(attrs))
    with pytest.raises(InputError, match="geff package refuses this store's metadata"):
        read_points(store)


def test_geff_first_layout_is_refused_with_a_reason():
    with pytest.raises(InputError, match="first GEFF layout"):
        read_points(shared(GEFF / "Fluo-N2DL-HeLa-01.zarr"))


# ------------------------------------------------------------------------------ btrack, napari

def test_btrack_hdf5():
    name, tracks = read_points(shared(FORMATS / "btrack_hdf5" / "tracks.h5"))
    table = tracks.table
    assert name == "btrack"
    assert len(table) == 2203 - 2                             # 2 dummy (gap) objects skipped
    assert table["track"].nunique() == 349 and table["frame"].max() == 9
    assert tracklets(table)["parent_track"].notna().sum() == 4
    assert "z" not in table.columns and not table.duplicated(["frame", "track"]).any()
    check_parent_links(table)


def test_napari_csv_with_graph():
    path = shared(FORMATS / "napari_tracks_csv" / "tracks.csv")
    name, tracks = read_points(path)
    table = tracks.table
    graph = json.loads((path.parent / "graph.json").read_text())
    assert name == "napari" and len(table) == 52678 and table["track"].nunique() == 409
    parents = tracklets(table)["parent_track"].dropna().astype(int)
    assert {int(k): v[0] for k, v in graph.items()} == parents.to_dict()


# ------------------------------------------------------------------------------ ZephIR

def test_zephir_annotations_fractions_names_provenance():
    h5py = pytest.importorskip("h5py")
    path = shared(ZEPHIR / "annotations-g.h5")
    name, tracks = read_points(path)
    table = tracks.table
    assert name == "zephir" and len(table) == 11776 and table["track"].nunique() == 23
    assert table["provenance"].value_counts().to_dict() == {"ZEIR": 11723, "ANTT": 53}
    assert sorted(table.loc[table["provenance"] == "ANTT", "frame"].unique()) == [23, 171, 271]
    with h5py.File(path, "r") as h5:
        first = (h5["t_idx"][0], h5["worldline_id"][0], float(h5["x"][0]), float(h5["z"][0]))
    row = table[(table["frame"] == first[0]) & (table["track"] == first[1])].iloc[0]
    assert row["x"] == pytest.approx(first[2] * 512) and row["z"] == pytest.approx(first[3] * 23)
    assert table["name"].isna().all()                          # every worldline is "null"
    loaded = read_tracks(path, "observations", pixel_size="0.3,0.3,1.5")
    assert loaded.record["calibration"]["um_per_unit"] == [0.3, 0.3, 1.5]
    assert "provenance" in loaded.table.columns


# ------------------------------------------------------------------------------ detection

@pytest.mark.parametrize("relative, expected", [
    ("tracker-formats/trackmate_xml/Celegans-5pc-17timepoints.xml", "trackmate"),
    ("tracker-formats/ctc/Fluo-N2DL-HeLa_01_RES", "ctc"),
    ("tracker-formats/geff/Ecoli_growth_on_agar_pad.geff", "geff"),
    ("tracker-formats/geff/mouse-20250719.zarr", "geff"),
    ("tracker-formats/btrack_hdf5/tracks.h5", "btrack"),
    ("tracker-formats/napari_tracks_csv/tracks.csv", "napari"),
    ("zephir-ift20-demo/annotations-g.h5", "zephir"),
])
def test_detect_format(relative, expected):
    assert detect_format(shared(FORMATS.parent / relative)) == expected


def test_undetectable_file_lists_the_formats(tmp_path):
    path = tmp_path / "notes.bin"
    path.write_bytes(b"\x00\x01 nothing known")
    with pytest.raises(InputError) as err:
        detect_format(path)
    assert "--format" in str(err.value) and "trackmate, ctc, geff" in str(err.value)
