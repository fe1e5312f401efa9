"""The napari reader of audit folders: the layers' data equal the audit's files, and a row
of the events table jumps to its event (napari headless, Qt offscreen).

Expected values come from the files (read here with pandas) and from the scene of
tests/audit/test_audit.six_neurons: six neurons, ids 0 and 1 exchanged in frames 25-39, so
30 observations are flagged and one swap event (ids 0;1, frames 25-39) is listed.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("napari")
pytest.importorskip("npe2")

import trackverify  # noqa: E402
from tests.audit.test_audit import six_neurons  # noqa: E402
from tests.conftest import built_once  # noqa: E402
from trackverify.audit.write import write_audit  # noqa: E402
from trackverify.errors import InputError  # noqa: E402
from trackverify.napari_plugin.layers import OTHER_COLOR, VERDICT_COLORS, audit_layers  # noqa: E402
from trackverify.napari_plugin.reader import get_reader  # noqa: E402


def _audits(root):
    """Audit folders: ``flat`` (the 2-D scene, one recording), ``deep`` (z added, text ids,
    two recordings)."""
    flat = six_neurons()
    write_audit(trackverify.audit(flat), root / "flat")
    deep = pd.concat([flat.assign(recording="a"), flat.assign(recording="b")],
                     ignore_index=True)
    deep["z_um"] = 2.0 + 0.1 * deep["frame"]
    deep["pred_id"] = "n" + deep["pred_id"].astype(str)
    write_audit(trackverify.audit(deep), root / "deep")
    return {name: root / name for name in ("flat", "deep")}


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    return built_once(tmp_path_factory, "napari-audits", _audits)


@pytest.fixture
def viewer():
    import napari

    viewer = napari.Viewer(show=False)
    yield viewer
    viewer.close()


def expected_points(rows: pd.DataFrame) -> np.ndarray:
    axes = (["z_um"] if "z_um" in rows else []) + ["y_um", "x_um"]
    return rows[["frame", *axes]].to_numpy(np.float64)


def expected_tracks(rows: pd.DataFrame, ids) -> np.ndarray:
    """``track, frame, [z,] y, x`` of the rows with a prediction, by (track, frame)."""
    rows = rows[rows["pred_valid"]]
    data = np.column_stack([ids(rows["pred_id"]), expected_points(rows)])
    return data[np.lexsort((data[:, 1], data[:, 0]))]


def test_manifest_is_valid_and_registered():
    from importlib.metadata import entry_points
    from importlib.resources import files

    from npe2 import PluginManifest

    (point,) = [e for e in entry_points(group="napari.manifest") if e.name == "trackverify"]
    assert point.value == "trackverify.napari_plugin:napari.yaml"
    manifest = PluginManifest.from_file(files("trackverify.napari_plugin") / "napari.yaml")
    (reader,) = manifest.contributions.readers
    assert reader.accepts_directories and reader.command == "trackverify.get_reader"
    assert [w.display_name for w in manifest.contributions.widgets] == ["Audit events"]


def test_the_reader_takes_audit_folders_only(audits, tmp_path):
    assert callable(get_reader(str(audits["flat"]))) and callable(get_reader([audits["flat"]]))
    (tmp_path / "other").mkdir()
    (tmp_path / "audit.parquet").write_bytes(b"")
    for path in (tmp_path / "other", tmp_path / "audit.parquet", [audits["flat"]] * 2):
        assert get_reader(path) is None


def test_layers_equal_the_files_of_a_2d_audit(audits, viewer):
    folder = audits["flat"]
    rows = pd.read_parquet(folder / "audit.parquet")
    layers = viewer.open(folder, plugin="trackverify")
    assert [layer.name for layer in layers] == ["observations", "tracks"]
    points, tracks = layers
    assert np.array_equal(points.data, expected_points(rows))
    assert points.features["verdict"].tolist() == rows["verdict"].tolist()
    assert points.features["pred_id"].tolist() == rows["pred_id"].tolist()
    flagged = rows["verdict"].eq("flagged").to_numpy()
    assert flagged.sum() == 30  # ids 0 and 1 in frames 25-39
    judged = rows["verdict"].notna().to_numpy()
    assert (~judged).sum() == 6  # the anchor frame's rows: trusted, not judged, no verdict
    assert np.allclose(points.face_color[flagged], VERDICT_COLORS["flagged"])
    assert np.allclose(points.face_color[~flagged & judged], VERDICT_COLORS["certified"])
    assert np.allclose(points.face_color[~judged], OTHER_COLOR)
    assert np.array_equal(tracks.data, expected_tracks(rows, lambda p: p.to_numpy(np.int64)))
    meta = points.metadata["trackverify"]
    pd.testing.assert_frame_equal(pd.DataFrame(meta["events"]),
                                  pd.read_csv(folder / "events.csv"))
    assert meta["summary"] == json.loads((folder / "audit.json").read_text())


def test_layers_of_a_3d_audit_of_two_recordings_with_text_ids(audits, viewer):
    folder = audits["deep"]
    rows = pd.read_parquet(folder / "audit.parquet")
    layers = viewer.open(folder, plugin="trackverify")
    assert [layer.name for layer in layers] == ["observations (a)", "tracks (a)",
                                                "observations (b)", "tracks (b)"]
    for k, recording in enumerate(("a", "b")):
        mine = rows[rows["recording"] == recording]
        points, tracks = layers[2 * k], layers[2 * k + 1]
        assert points.data.shape[1] == 4 and np.array_equal(points.data, expected_points(mine))
        names = tracks.metadata["trackverify"]["pred_ids"]
        code = {name: i for i, name in enumerate(names)}
        assert sorted(names) == [f"n{i}" for i in range(6)]
        assert np.array_equal(tracks.data, expected_tracks(mine, lambda p: p.map(code)))
        assert [e["recording"] for e in points.metadata["trackverify"]["events"]] == [recording]
    from trackverify.napari_plugin.widget import show_every_depth

    show_every_depth(viewer)  # z = 2 + 0.1 frame over frames 0-49: a 4.9 um range
    assert viewer.dims.margin_left[1] == viewer.dims.margin_right[1] == pytest.approx(4.9)


def test_an_events_row_jumps_to_its_frame_and_ids(audits, viewer):
    """The swap event: frame 25, the observations of ids 0 and 1 there selected, the view
    centred on them."""
    from trackverify.napari_plugin.widget import camera, open_audit

    folder = audits["flat"]
    events = pd.read_csv(folder / "events.csv")
    _, table = open_audit(folder, viewer)
    assert table.table.rowCount() == len(events) == 1
    header = [table.table.horizontalHeaderItem(j).text() for j in range(table.table.columnCount())]
    row = {h: table.table.item(0, j).text() for j, h in enumerate(header)}
    assert (row["rank"], row["kind"], row["ids"], row["first_frame"]) == ("1", "swap", "0;1", "25")
    table.table.setCurrentCell(0, 0)
    points = viewer.layers["observations"]
    assert viewer.dims.point[0] == 25
    chosen = sorted(points.selected_data)
    rows = pd.read_parquet(folder / "audit.parquet")
    want = np.flatnonzero((rows["frame"] == 25) & rows["pred_id"].isin([0, 1]))
    assert chosen == want.tolist()
    assert np.allclose(camera(viewer).center[-2:], points.data[want, 1:].mean(axis=0))
    assert table.evidence.text() == events["evidence"].iloc[0]


def test_optional_files_absent_or_unknown(audits, tmp_path, viewer):
    """Without events.csv, tracks.csv and segments.csv, and beside a joins.csv and a file of
    no meaning, the folder opens; the table is empty and says so."""
    from trackverify.napari_plugin.widget import open_audit

    folder = tmp_path / "audit"
    shutil.copytree(audits["flat"], folder)
    for name in ("events.csv", "tracks.csv", "segments.csv"):
        (folder / name).unlink()
    (folder / "joins.csv").write_text("recording,pred_id,joined_id\nworm,0,1\n")
    (folder / "notes.bin").write_bytes(b"\x00\x01")
    _, table = open_audit(folder, viewer)
    assert [layer.name for layer in viewer.layers] == ["observations", "tracks"]
    assert table.table.rowCount() == 0 and "no events" in table.evidence.text()
    assert viewer.layers["observations"].metadata["trackverify"]["tracks"] is None


def test_a_missing_column_is_one_error(audits, tmp_path):
    folder = tmp_path / "audit"
    shutil.copytree(audits["flat"], folder)
    rows = pd.read_parquet(folder / "audit.parquet").drop(columns="verdict")
    rows.to_parquet(folder / "audit.parquet")
    with pytest.raises(InputError, match="verdict"):
        audit_layers(folder)


def test_the_volume_goes_underneath(audits, tmp_path):
    """The image hook: an array becomes the first layer, with its scale; a path waits for
    the volume readers and says so."""
    volume = np.zeros((50, 4, 4), dtype=np.uint8)
    layers = audit_layers(audits["flat"], image=volume, image_scale=(1, 8, 8))
    data, options, kind = layers[0]
    assert kind == "image" and data is volume and options["scale"] == (1.0, 8.0, 8.0)
    assert [layer[2] for layer in layers[1:]] == ["points", "tracks"]
    with pytest.raises(InputError, match="volume readers"):
        audit_layers(audits["flat"], image=tmp_path / "volume.tif")


def test_each_verdict_has_its_colour_and_any_other_is_white():
    from trackverify.napari_plugin.layers import OTHER_COLOR, verdict_colors

    got = verdict_colors(["abstained", "certified", "flagged", "no such verdict"])
    assert got.tolist() == [list(VERDICT_COLORS["abstained"]), list(VERDICT_COLORS["certified"]),
                            list(VERDICT_COLORS["flagged"]), list(OTHER_COLOR)]
