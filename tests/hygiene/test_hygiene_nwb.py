"""WormID-layout NWB: reading hand-built files, round trips of both layouts, bad files."""

import re
import warnings
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

pynwb = pytest.importorskip("pynwb", reason="the 'nwb' extra is not installed")
h5py = pytest.importorskip("h5py")
ndx = pytest.importorskip("ndx_multichannel_volume")

from trackverify.cli.app import main  # noqa: E402
from trackverify.errors import InputError  # noqa: E402
from trackverify.io.nwb import read_nwb, write_nwb  # noqa: E402
from trackverify.io.tabular import read_table  # noqa: E402

SPACING = [0.5, 0.25, 2.0]
SEGMENTATION = "processing/CalciumActivity/CalciumSeriesSegmentation"


def _volume(nwb):
    device = nwb.create_device(name="scope")
    channel = ndx.OpticalChannelPlus(name="GCaMP", description="", excitation_lambda=488.0,
                                     excitation_range=[480.0, 496.0], emission_lambda=520.0,
                                     emission_range=[510.0, 530.0])
    volume = ndx.ImagingVolume(
        name="CalciumImVol", optical_channel_plus=[channel],
        order_optical_channels=ndx.OpticalChannelReferences(name="order_optical_channels",
                                                            channels=["GCaMP"]),
        description="", device=device, location="head", grid_spacing=SPACING,
        grid_spacing_unit="micrometers", origin_coords=[0.0, 0.0, 0.0],
        origin_coords_unit="micrometers", reference_frame="")
    nwb.add_imaging_plane(volume)
    return volume


def _nwbfile():
    return pynwb.NWBFile(session_description="hand-built", identifier="worm7-session",
                         session_start_time=datetime(2024, 1, 1, tzinfo=timezone.utc),
                         lab="Lab X", subject=pynwb.file.Subject(subject_id="worm7"))


def _save(nwb, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pynwb.NWBHDF5IO(str(path), "w") as io:
            io.write(nwb)
    return path


def hand_built_rois(path, labels=("AVAL", "AVAR?", "")):
    """Two frames of three neurons, written with pynwb's own add_roi, the WormID way.

    Frame 1 gives neuron 0 a two-voxel mask with weights 1 and 3.
    """
    nwb = _nwbfile()
    volume = _volume(nwb)
    seg = pynwb.ophys.ImageSegmentation(name="CalciumSeriesSegmentation")
    masks = {0: [[[10, 4, 3, 1]], [[2, 8, 1, 1]], [[0, 0, 0, 1]]],
             1: [[[10, 4, 3, 1], [14, 4, 3, 3]], [[2, 9, 1, 1]], [[1, 1, 1, 1]]]}
    for t, rois in masks.items():
        plane = pynwb.ophys.PlaneSegmentation(name=f"Seg_tpoint_{t}", description="",
                                              imaging_plane=volume)
        for voxels in rois:
            plane.add_roi(voxel_mask=voxels)
        seg.add_plane_segmentation(plane)
    module = nwb.create_processing_module(name="CalciumActivity", description="")
    module.add(seg)
    module.add(ndx.SegmentationLabels(name="NeuronIDs", labels=list(labels), description="",
                                      ImageSegmentation=seg))
    return _save(nwb, path)


def test_reads_hand_built_rois(tmp_path):
    obs, recordings = read_nwb(hand_built_rois(tmp_path / "w.nwb"))
    assert recordings.to_dict("records") == [
        {"recording": "worm7-session", "animal_id": "worm7", "provenance_group": "Lab X"}]
    assert obs["frame"].tolist() == [0, 0, 0, 1, 1, 1]
    assert obs["track"].tolist() == [0, 1, 2, 0, 1, 2]
    assert obs["detection"].tolist() == obs["track"].tolist()
    assert obs["pred_id"].tolist() == obs["track"].tolist() and obs["pred_valid"].all()
    assert obs["neuron_name"].tolist() == ["AVAL", "AVAR?", ""] * 2
    # voxel index x spacing (0.5, 0.25, 2); frame 1 neuron 0: x = (10*1 + 14*3) / 4 = 13
    expected = np.array([[5.0, 1.0, 6.0], [1.0, 2.0, 2.0], [0.0, 0.0, 0.0],
                         [6.5, 1.0, 6.0], [1.0, 2.25, 2.0], [0.5, 0.25, 2.0]])
    np.testing.assert_allclose(obs[["x_um", "y_um", "z_um"]].to_numpy(), expected)


def hand_built_labels(path):
    """A [t, x, y, z] label volume: neuron 1 a 2x2x2 cube, neuron 2 one voxel."""
    nwb = _nwbfile()
    volume = _volume(nwb)
    data = np.zeros((2, 8, 8, 4), dtype=np.uint16)
    data[0, 2:4, 2:4, 0:2] = 1
    data[0, 6, 1, 3] = 2
    data[1, 3:5, 2:4, 1:3] = 1  # neuron 2 is not seen in frame 1
    series = ndx.MultiChannelVolumeSeries(name="CalciumSeriesSegmentation",
                                          imaging_volume=volume, data=data, unit="",
                                          rate=1.0, description="", dimension=[8, 8, 4],
                                          device=nwb.devices["scope"])
    module = nwb.create_processing_module(name="CalciumActivity", description="")
    module.add(series)
    module.add(ndx.SegmentationLabels(name="NeuronIDs", labels=["RMEL", "RMER?"],
                                      description="", MCVSeriesSegmentation=series))
    return _save(nwb, path)


def test_reads_hand_built_label_volume(tmp_path):
    obs, _ = read_nwb(hand_built_labels(tmp_path / "v.nwb"))
    assert obs["frame"].tolist() == [0, 0, 1] and obs["track"].tolist() == [0, 1, 0]
    assert obs["neuron_name"].tolist() == ["RMEL", "RMER?", "RMEL"]
    # cube centres (2.5, 2.5, 0.5) and (3.5, 2.5, 1.5) voxels; single voxel (6, 1, 3)
    expected = np.array([[1.25, 0.625, 1.0], [3.0, 0.25, 6.0], [1.75, 0.625, 3.0]])
    np.testing.assert_allclose(obs[["x_um", "y_um", "z_um"]].to_numpy(), expected)


def _replace_labels(path, data, **kwargs):
    with h5py.File(path, "a") as f:
        del f["processing/CalciumActivity/NeuronIDs/labels"]
        f["processing/CalciumActivity/NeuronIDs"].create_dataset("labels", data=data, **kwargs)


def test_per_character_labels_are_joined(tmp_path):
    path = hand_built_rois(tmp_path / "w.nwb")
    chars = np.array([list(b"AVAL\0"), list(b"AVAR?"), list(b"\0\0\0\0\0")], dtype=np.uint8)
    _replace_labels(path, chars.view("S1"))
    assert read_nwb(path)[0]["neuron_name"].tolist()[:3] == ["AVAL", "AVAR?", ""]
    spaces = np.array([list(b"AVAL "), list(b"AVAR?"), list(b"     ")], dtype=np.uint8)
    _replace_labels(path, spaces)  # character codes padded with spaces
    assert read_nwb(path)[0]["neuron_name"].tolist()[:3] == ["AVAL", "AVAR?", ""]
    ragged = np.empty(3, dtype=object)
    ragged[:] = [np.array([65, 86, 65, 76], dtype=np.uint16),
                 np.array([65, 86, 65, 82, 63], dtype=np.uint16), np.array([], dtype=np.uint16)]
    _replace_labels(path, ragged, dtype=h5py.vlen_dtype(np.uint16))
    assert read_nwb(path)[0]["neuron_name"].tolist()[:3] == ["AVAL", "AVAR?", ""]


@pytest.mark.parametrize("case", ["no_module", "bad_mask", "bad_labels", "short_labels",
                                  "bad_volume"])
def test_malformed_files_name_file_and_group(tmp_path, case):
    path = hand_built_labels(tmp_path / "v.nwb") if case == "bad_volume" else \
        hand_built_rois(tmp_path / "w.nwb")
    group = {"no_module": "processing/CalciumActivity/CalciumSeriesSegmentation",
             "bad_mask": "Seg_tpoint_1/voxel_mask", "bad_labels": "NeuronIDs/labels",
             "short_labels": "NeuronIDs/labels",
             "bad_volume": "CalciumSeriesSegmentation/data"}[case]
    with h5py.File(path, "a") as f:
        seg = "processing/CalciumActivity/CalciumSeriesSegmentation"
        if case == "no_module":
            del f["processing/CalciumActivity"]
        elif case == "bad_mask":
            del f[f"{seg}/Seg_tpoint_1/voxel_mask"]
            f[f"{seg}/Seg_tpoint_1"].create_dataset("voxel_mask", data=np.zeros((4, 2)))
        elif case == "bad_volume":
            del f[f"{seg}/data"]
            f[seg].create_dataset("data", data=np.zeros((2, 8, 8)))
    if case == "bad_labels":
        _replace_labels(path, np.array([b"\xff\xfe", b"ok", b"x"]))
    if case == "short_labels":
        _replace_labels(path, np.array([b"only one"]))
    with pytest.raises(InputError) as info:
        read_nwb(path)
    assert str(path) in str(info.value) and group in str(info.value)


def observation_table(rng, frames=8, tracks=(3, 11, 42, 7), missing=((2, 1), (5, 3))):
    rows = []
    for t in range(frames):
        for k, track in enumerate(tracks):
            if (t, k) in missing:
                continue
            rows.append({"recording": "rec-1", "frame": t, "track": track,
                         "detection": f"d{t}-{k}", "x_um": rng.uniform(-50, 50),
                         "y_um": rng.uniform(-20, 20), "z_um": rng.uniform(0, 10),
                         "pred_id": track if t < 5 else tracks[(k + 1) % len(tracks)],
                         "pred_valid": not (t == 6 and k == 0),
                         "neuron_name": ["AVAL", "AVAR?", "", "RIML"][k]})
    return pd.DataFrame(rows)


def _check_round_trip(before, after, spacing, ids=("detection", "pred_id", "pred_valid")):
    key = ["frame", "track"]
    merged = before.merge(after, on=key, suffixes=("", "_back"), validate="one_to_one")
    assert len(merged) == len(before) == len(after)
    for column in ("recording", "neuron_name", *ids):
        assert merged[column].tolist() == merged[f"{column}_back"].tolist(), column
    for axis in ("x_um", "y_um", "z_um"):
        assert np.abs(merged[axis] - merged[f"{axis}_back"]).max() <= spacing / 2 + 1e-9


def test_rois_round_trip(tmp_path):
    before = observation_table(np.random.default_rng(0))
    recording = {"recording": "rec-1", "animal_id": "worm-3", "provenance_group": "lab A",
                 "source_folds": "fold2"}
    write_nwb(before, tmp_path / "r.nwb", recording=recording, voxel_um=0.01)
    after, recordings = read_nwb(tmp_path / "r.nwb")
    _check_round_trip(before, after, 0.01)
    assert recordings.to_dict("records") == [recording]
    with h5py.File(tmp_path / "r.nwb") as f:  # the writer records the spacing it chose
        volume = f["general/optophysiology/ImagingVolume"]
        assert volume["grid_spacing"][()].tolist() == [0.01] * 3


def test_labels_round_trip(tmp_path):
    before = observation_table(np.random.default_rng(1), missing=())
    before["detection"] = before["track"].map({3: 0, 7: 1, 11: 2, 42: 3})  # row index
    before["pred_id"], before["pred_valid"] = before["track"], True
    write_nwb(before, tmp_path / "l.nwb", layout="labels", voxel_um=0.5)
    after, _ = read_nwb(tmp_path / "l.nwb")
    _check_round_trip(before, after, 0.5)


def test_two_dimensional_and_string_ids_round_trip(tmp_path):
    before = observation_table(np.random.default_rng(2)).drop(columns="z_um")
    before["track"] = "n" + before["track"].astype(str)
    before["pred_id"] = "p" + before["pred_id"].astype(str)
    write_nwb(before, tmp_path / "s.nwb")
    after, _ = read_nwb(tmp_path / "s.nwb")
    assert "z_um" not in after.columns
    merged = before.merge(after, on=["frame", "track"], suffixes=("", "_back"))
    assert len(merged) == len(before)
    assert (merged["pred_id"] == merged["pred_id_back"]).all()
    assert np.abs(merged["x_um"] - merged["x_um_back"]).max() <= 0.001 / 2 + 1e-9


def test_convert_command_round_trips(tmp_path):
    hand_built_rois(tmp_path / "w.nwb")
    steps = [[str(tmp_path / "w.nwb"), "--to", "parquet", "--out", str(tmp_path / "a")],
             [str(tmp_path / "a"), "--to", "nwb", "--out", str(tmp_path / "b.nwb")],
             [str(tmp_path / "b.nwb"), "--to", "parquet", "--out", str(tmp_path / "c")]]
    for args in steps:
        with pytest.raises(SystemExit) as info:
            main(["convert", *args])
        assert info.value.code == 0
    first = read_table(tmp_path / "a" / "observations.parquet")
    again = read_table(tmp_path / "c" / "observations.parquet")
    # Hand-built positions are multiples of the spacing; 0.001 um voxels keep them.
    pd.testing.assert_frame_equal(first.drop(columns=["x_um", "y_um", "z_um"]),
                                  again.drop(columns=["x_um", "y_um", "z_um"]))
    np.testing.assert_allclose(first[["x_um", "y_um", "z_um"]], again[["x_um", "y_um", "z_um"]],
                               atol=0.0005 + 1e-9)
    assert read_table(tmp_path / "c" / "recordings.csv").equals(
        read_table(tmp_path / "a" / "recordings.csv"))


def test_one_file_per_recording(tmp_path):
    table = pd.concat([observation_table(np.random.default_rng(3)),
                       observation_table(np.random.default_rng(4)).assign(recording="rec-2")])
    table.to_parquet(tmp_path / "obs.parquet")
    with pytest.raises(SystemExit) as info:
        main(["convert", str(tmp_path / "obs.parquet"), "--to", "nwb", "--out",
              str(tmp_path / "one.nwb")])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["convert", str(tmp_path / "obs.parquet"), "--to", "nwb", "--out",
              str(tmp_path / "many")])
    assert sorted(p.name for p in (tmp_path / "many").iterdir()) == ["rec-1.nwb", "rec-2.nwb"]


def test_pred_valid_stored_as_zero_one_integers_is_read(tmp_path):
    before = observation_table(np.random.default_rng(1))
    path = write_nwb(before, tmp_path / "r.nwb", voxel_um=0.01)
    seg = "processing/CalciumActivity/CalciumSeriesSegmentation"
    with h5py.File(path, "a") as f:
        for name in list(f[seg]):
            old = f[f"{seg}/{name}/pred_valid"]
            flags, attrs = old[()].astype(np.uint8), dict(old.attrs)
            del f[f"{seg}/{name}/pred_valid"]
            f[f"{seg}/{name}"].create_dataset("pred_valid", data=flags).attrs.update(attrs)
    _check_round_trip(before, read_nwb(path)[0], 0.01)


def test_the_schema_refuses_what_pynwb_refuses(tmp_path):
    # A MultiChannelVolumeSeries without its required 'dimension' dataset.
    path = hand_built_labels(tmp_path / "v.nwb")
    with h5py.File(path, "a") as f:
        del f["processing/CalciumActivity/CalciumSeriesSegmentation/dimension"]
    with pytest.raises(InputError, match="v.nwb: not a valid NWB file: the NWB schema refuses "
                                         "MultiChannelVolumeSeries/dimension"):
        read_nwb(path)


def test_writer_refuses_positions_the_voxel_grid_cannot_hold(tmp_path):
    obs = observation_table(np.random.default_rng(2))
    # A collapsing voxel size is the writer's refusal; coordinates near 1e300 or 1e18 um are
    # refused before it, by the table's own coordinate bound (beyond 1e9 um).
    for spacing, x, message in (
            (1e-300, obs["x_um"], "positions span too many voxels"),
            (0.001, obs["x_um"] + 1e300 * (obs["track"] == 3), "coordinate is implausibly large"),
            (1.0, obs["x_um"] * 1e18, "coordinate is implausibly large")):
        with pytest.raises(InputError, match=message):
            write_nwb(obs.assign(x_um=x), tmp_path / "r.nwb", voxel_um=spacing)
    assert not (tmp_path / "r.nwb").exists()


# What reading through pynwb's object tree catches that a walk of the HDF5 groups did not.


def test_per_character_labels_do_not_hide_an_inconsistent_table(tmp_path):
    # Per-character labels used to skip building the file with pynwb, so a PlaneSegmentation
    # with 2 ids for 3 rows was read (the h5py walk ignored ids). pynwb builds every table.
    path = hand_built_rois(tmp_path / "w.nwb")
    chars = np.array([list(b"AVAL\0"), list(b"AVAR?"), list(b"\0\0\0\0\0")], dtype=np.uint8)
    _replace_labels(path, chars.view("S1"))
    plane = "processing/CalciumActivity/CalciumSeriesSegmentation/Seg_tpoint_1"
    with h5py.File(path, "a") as f:
        attrs = dict(f[f"{plane}/id"].attrs)
        del f[f"{plane}/id"]
        f[plane].create_dataset("id", data=np.arange(2)).attrs.update(attrs)
    with pytest.raises(InputError, match=f"w.nwb: not a valid NWB file: pynwb cannot build "
                                         f"'{plane}' \\(PlaneSegmentation: "):
        read_nwb(path)


def test_a_segmentation_of_another_type_is_named(tmp_path):
    # An h5py walk took any group holding Seg_tpoint_* for an ImageSegmentation; the object
    # tree says what it is.
    nwb = _nwbfile()
    module = nwb.create_processing_module(name="CalciumActivity", description="")
    module.add(pynwb.base.Images(name="CalciumSeriesSegmentation", description=""))
    path = _save(nwb, tmp_path / "i.nwb")
    with pytest.raises(InputError, match="'processing/CalciumActivity/CalciumSeriesSegmentation'"
                                         " is of type Images, not ImageSegmentation"):
        read_nwb(path)


def test_frames_on_two_voxel_grids_are_refused(tmp_path):
    # The HDF5 walk took the first frame's grid for every frame; each PlaneSegmentation of
    # the object tree links its own imaging volume.
    path = hand_built_rois(tmp_path / "w.nwb")
    seg = "processing/CalciumActivity/CalciumSeriesSegmentation"
    with h5py.File(path, "a") as f:
        f.copy(f["general/optophysiology/CalciumImVol"], "general/optophysiology/OtherVol")
        f["general/optophysiology/OtherVol"].attrs["object_id"] = "6f1f6f7e-0000-4000-8000-1"
        f["general/optophysiology/OtherVol/grid_spacing"][...] = [1.0, 1.0, 1.0]
        del f[f"{seg}/Seg_tpoint_1/imaging_plane"]
        f[f"{seg}/Seg_tpoint_1/imaging_plane"] = h5py.SoftLink("/general/optophysiology/OtherVol")
    with pytest.raises(InputError, match="Seg_tpoint_1/imaging_plane' links the imaging volume "
                                         "'OtherVol', 'Seg_tpoint_0' links 'CalciumImVol'"):
        read_nwb(path)


def test_grid_spacing_without_a_unit_is_in_meters_as_the_schema_says(tmp_path):
    # NWB core ImagingPlane: grid_spacing's unit attribute has default_value 'meters'.
    path = hand_built_rois(tmp_path / "w.nwb")
    with h5py.File(path, "a") as f:
        del f["general/optophysiology/CalciumImVol/grid_spacing"].attrs["unit"]
    obs, _ = read_nwb(path)
    # frame 0 neuron 1: voxel (2, 8, 1) x spacing (0.5, 0.25, 2) m = (1, 2, 2) m = 1e6 um
    np.testing.assert_allclose(obs[["x_um", "y_um", "z_um"]].to_numpy()[1], [1e6, 2e6, 2e6])


def test_ragged_character_codes_are_read_although_pynwb_builds_them_empty(tmp_path):
    # hdmf 3.x builds a variable-length numeric dataset with no data (None); the labels
    # mapper reads that one dataset with h5py. Text labels of the same file come from pynwb.
    path = hand_built_rois(tmp_path / "w.nwb")
    ragged = np.empty(3, dtype=object)
    ragged[:] = [np.array([82, 73, 77, 76], dtype=np.uint16), np.array([], dtype=np.uint16),
                 np.array([65, 83, 72, 82, 63], dtype=np.uint16)]
    _replace_labels(path, ragged, dtype=h5py.vlen_dtype(np.uint16))
    assert read_nwb(path)[0]["neuron_name"].tolist()[:3] == ["RIML", "", "ASHR?"]


def test_per_character_labels_that_do_not_decode_are_named(tmp_path):
    path = hand_built_rois(tmp_path / "w.nwb")
    chars = np.array([list(b"AVAL"), list(b"A\xffAR"), list(b"RIML")], dtype=np.uint8)
    _replace_labels(path, chars.view("S1"))
    with pytest.raises(InputError, match="w.nwb: 'processing/CalciumActivity/NeuronIDs/labels' "
                                         "cannot be decoded as text"):
        read_nwb(path)


def _codes(names, dtype):
    """``names`` as a ``[labels, characters]`` array of their UTF-8 bytes, NUL-padded."""
    raw = [n.encode("utf-8") for n in names]
    out = np.zeros((len(raw), max(map(len, raw))), dtype=dtype)
    for i, b in enumerate(raw):
        out[i, :len(b)] = list(b)
    return out


@pytest.mark.parametrize("store", ["bytes", "uint8", "ragged_uint8", "code_points"])
def test_non_ascii_labels_stored_per_character_are_read(tmp_path, store):
    # 'Ä' is the two UTF-8 bytes C3 84: per-byte cells are joined, then decoded (they were
    # refused as S1 cells and read as 'Ã\x84' as uint8 codes); wider codes are code points.
    path = hand_built_rois(tmp_path / "w.nwb")
    names = ["AVAÄ", "нейрон?", ""]
    data = {"bytes": _codes(names, np.uint8).view("S1"), "uint8": _codes(names, np.uint8),
            "code_points": np.array([[ord(c) for c in n.ljust(7, "\0")] for n in names],
                                    dtype=np.uint32)}
    if store == "ragged_uint8":
        ragged = np.empty(3, dtype=object)
        ragged[:] = [np.frombuffer(n.encode("utf-8"), dtype=np.uint8) for n in names]
        _replace_labels(path, ragged, dtype=h5py.vlen_dtype(np.uint8))
    else:
        _replace_labels(path, data[store])
    assert read_nwb(path)[0]["neuron_name"].tolist()[:3] == names


@pytest.mark.parametrize("data, message", [
    (np.full((3, 2), 0xD800, dtype=np.int32), "row 0 holds character code 55296"),
    (np.array([[65, 0x110000]] * 3, dtype=np.int64), "row 0 holds character code 1114112"),
    (np.array([[65, 66], [67, -1], [68, 69]], dtype=np.int16), "row 1 holds character code -1"),
    (np.array([65, 66, 67]), "one int64 number per neuron, not text"),
    (np.array([65.0, 66.0, 67.0]), "one float64 number per neuron, not text"),
    (np.array([True, False, True]), "one bool number per neuron, not text"),
])
def test_labels_that_are_not_characters_are_named(tmp_path, data, message):
    path = hand_built_rois(tmp_path / "w.nwb")
    _replace_labels(path, data)
    with pytest.raises(InputError, match=re.escape(
            f"w.nwb: 'processing/CalciumActivity/NeuronIDs/labels' cannot be decoded as text "
            f"({message}")):
        read_nwb(path)


def test_neuron_ids_that_are_not_segmentation_labels_are_refused(tmp_path):
    # Without its NWB type the group was skipped and the names silently dropped.
    path = hand_built_rois(tmp_path / "w.nwb")
    with h5py.File(path, "a") as f:
        group = f["processing/CalciumActivity/NeuronIDs"]
        for key in list(group.attrs):
            del group.attrs[key]
    with pytest.raises(InputError, match="w.nwb: 'processing/CalciumActivity/NeuronIDs' is a "
                                         "group without an NWB type .* give the group the "
                                         "attributes neurodata_type = 'SegmentationLabels' and "
                                         "namespace = 'ndx-multichannel-volume'$"):
        read_nwb(path)
    with h5py.File(path, "a") as f:  # the message's remedy, as written, makes the file read
        group = f["processing/CalciumActivity/NeuronIDs"]
        group.attrs["neurodata_type"] = "SegmentationLabels"
        group.attrs["namespace"] = "ndx-multichannel-volume"
    observations, _ = read_nwb(path)
    assert observations["neuron_name"].tolist() == ["AVAL", "AVAR?", ""] * 2


def test_a_table_column_without_its_nwb_type_is_named_with_the_layout_it_needs(tmp_path):
    """Non-ASCII track names stored as text read; the same names in a column replaced with
    h5py without its attributes are refused naming the column and the attributes it needs
    (pynwb said only "PlaneSegmentation: 'track'")."""
    names = np.array(["Ä0", "神経", "b"], dtype=object)
    table = pd.DataFrame({"recording": "r1", "frame": np.repeat([0, 1], 3),
                          "track": np.tile(names, 2), "detection": np.tile([0, 1, 2], 2),
                          "x_um": np.tile([0.0, 10, 20], 2), "y_um": 5.0, "z_um": 1.0,
                          "pred_id": np.tile(names, 2), "pred_valid": True})
    path = write_nwb(table, tmp_path / "w.nwb")
    assert set(read_nwb(path)[0]["track"]) == set(names)
    columns = [f"{SEGMENTATION}/Seg_tpoint_{t}/track" for t in (0, 1)]
    with h5py.File(path, "a") as f:
        for where in columns:
            del f[where]
            f.create_dataset(where, data=list(names), dtype=h5py.string_dtype("utf-8"))
    with pytest.raises(InputError, match=re.escape(
            f"'{columns[0]}' (listed in the table's colnames, stored without an NWB type: every "
            "column of an NWB table is a VectorData")):
        read_nwb(path)
    with h5py.File(path, "a") as f:  # the remedy the message gives
        for where in columns:
            f[where].attrs.update(neurodata_type="VectorData", namespace="hdmf-common",
                                  description="track")
    assert set(read_nwb(path)[0]["track"]) == set(names)


def test_frames_far_apart_write_one_plane_segmentation_each(tmp_path):
    """Frames 0, 1 and 2**31 - 1: the ROI layout wrote a group for every frame number in
    between and laid out (frames x tracks) slots, 48 GiB (MemoryError); now one group per
    frame holding an observation, read back with the same frames."""
    frames = np.repeat([0, 1, 2**31 - 1], 3)
    before = pd.DataFrame({"recording": "r1", "frame": frames, "track": np.tile([0, 1, 2], 3),
                           "detection": np.tile([0, 1, 2], 3), "x_um": np.tile([0.0, 10, 20], 3),
                           "y_um": 5.0, "z_um": 1.0, "pred_id": np.tile([0, 1, 2], 3),
                           "pred_valid": True})
    write_nwb(before, tmp_path / "far.nwb", voxel_um=0.5)
    after, _ = read_nwb(tmp_path / "far.nwb")
    assert sorted(set(after["frame"].tolist())) == [0, 1, 2**31 - 1]
    assert len(after) == 9
    with h5py.File(tmp_path / "far.nwb") as f:
        groups = f["processing/CalciumActivity/CalciumSeriesSegmentation"]
        assert sorted(k for k in groups if k.startswith("Seg_tpoint_")) == [
            "Seg_tpoint_0", "Seg_tpoint_1", "Seg_tpoint_2147483647"]
