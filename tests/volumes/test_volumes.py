"""Lab volumes (io/volumes): a synthetic volume rendered from the specimen, written by each
format's own writer (tifffile, zarr, h5py, pynwb), read back; expected pixels come from the
in-memory array sliced by hand, expected metadata from what the writer was told."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import InputError
from trackverify.io.volumes import (PLANES_HALF, check_alignment, contrast_limits, normalise,
                                    open_volume, png_bytes)
from trackverify.synth.specimen import SpecimenConfig, animal_observations
from trackverify.synth.volume import BACKGROUND, VOXEL_UM, render_volume, write_volume

pytest.importorskip("tifffile")
pytest.importorskip("zarr")
pytest.importorskip("h5py")

SOURCES = {"tiff": "v.tif", "zarr": "v.zarr", "hdf5": "v.h5", "nwb": "v.nwb"}


@pytest.fixture(scope="module")
def synthetic():
    obs = animal_observations(SpecimenConfig(frames=2, motion="moderate", neurons=40), 0)
    return render_volume(obs, seed=3)


@pytest.fixture(scope="module")
def written(synthetic, tmp_path_factory):
    folder = tmp_path_factory.mktemp("volumes")
    volume, _ = synthetic
    out = {}
    for kind, name in SOURCES.items():
        if kind == "nwb":
            pytest.importorskip("pynwb")
            pytest.importorskip("ndx_multichannel_volume")
        write_volume(volume, folder / name, kind)
        out[kind] = str(folder / name) + (":/volume" if kind == "hdf5" else "")
    return out


def _index(position, step=VOXEL_UM):
    """(x, y, z) voxel index nearest a position: voxel i's centre is at i * step."""
    return [int(math.floor(p / s + 0.5)) for p, s in zip(position, step)]


@pytest.mark.parametrize("kind", list(SOURCES))
def test_axes_and_voxel_size_come_from_the_metadata(written, synthetic, kind):
    with open_volume(written[kind]) as volume:
        assert volume.voxel_um == {"x": 0.3, "y": 0.3, "z": 1.5}
        assert volume.found["voxel_x"] != "given" and volume.found["axes"] != "given"
        assert volume.frame_shape == synthetic[0].shape[1:]
        assert sorted(volume.axes) == sorted("tzyx")


def _isolated(positions, count=5, apart_um=4.5):
    """Rows of frame 0 whose nearest other neuron is more than ``apart_um`` away, in x-y
    within 4 um of z (the depth the x-y view projects): their blob is the crop's brightest."""
    frame = positions[positions["frame"] == 0]
    xyz = frame[["x_um", "y_um", "z_um"]].to_numpy()
    d = np.hypot(*(xyz[:, None, :2] - xyz[None, :, :2]).transpose(2, 0, 1))
    d[np.abs(xyz[:, None, 2] - xyz[None, :, 2]) > 4.0] = np.inf
    np.fill_diagonal(d, np.inf)
    chosen = frame[d.min(axis=1) > apart_um]
    assert len(chosen) >= count
    return chosen.iloc[:count]


@pytest.mark.parametrize("kind", list(SOURCES))
def test_a_crop_is_centred_on_the_neuron_blob(written, synthetic, kind):
    array, positions = synthetic
    with open_volume(written[kind]) as volume:
        for row in _isolated(positions).itertuples():
            x, y, z = _index((row.x_um, row.y_um, row.z_um))
            crop = volume.crop(row.frame, (row.x_um, row.y_um, row.z_um), 3.0, "xy")
            n = math.ceil(3.0 / 0.3)  # 10 voxels either side
            expected = array[row.frame, max(z - PLANES_HALF, 0):z + PLANES_HALF + 1,
                             y - n:y + n + 1, x - n:x + n + 1].max(axis=0)
            np.testing.assert_array_equal(crop.image, expected.astype(np.float32))
            peak = np.unravel_index(np.argmax(crop.image), crop.image.shape)
            assert abs(peak[0] - n) <= 1 and abs(peak[1] - n) <= 1  # the blob at the centre
            assert crop.image[n, n] > BACKGROUND + 300
            assert crop.extent_um == pytest.approx(((x - n - 0.5) * 0.3, (x + n + 0.5) * 0.3,
                                                    (y - n - 0.5) * 0.3, (y + n + 0.5) * 0.3))


def test_the_other_views_read_what_numpy_slicing_reads(written, synthetic):
    array, positions = synthetic
    row = positions.iloc[11]
    x, y, z = _index((row.x_um, row.y_um, row.z_um))
    with open_volume(written["zarr"]) as volume:
        plane = volume.crop(row.frame, (row.x_um, row.y_um, row.z_um), 1.5, "plane")
        np.testing.assert_array_equal(plane.image, array[row.frame, z, y - 5:y + 6, x - 5:x + 6])
        side = volume.crop(row.frame, (row.x_um, row.y_um, row.z_um), 3.0, "xz")
        rows = round(PLANES_HALF * 1.5 / 0.3)  # 10 rows of 0.3 um: the x-y view's depth
        expected = array[row.frame, max(z - 2, 0):z + 3, y - rows:y + rows + 1,
                         x - 10:x + 11].max(axis=1)
        assert side.axes == ("z", "x") and side.image.shape == (5, 21)
        top = 2 - (z - max(z - 2, 0))  # rows above the volume's first plane are NaN
        np.testing.assert_array_equal(side.image[top:top + expected.shape[0]], expected)
        assert side.extent_um[2:] == pytest.approx(((z - 2.5) * 1.5, (z + 2.5) * 1.5))


def test_outside_the_volume_is_nan_and_the_extent_is_the_one_asked(written, synthetic):
    array = synthetic[0]
    with open_volume(written["hdf5"]) as volume:
        crop = volume.crop(0, (0.0, 0.0, 3.0), 0.6, "plane")  # voxel (0, 0, 2), 2 either side
    assert crop.extent_um == pytest.approx((-0.75, 0.75, -0.75, 0.75))
    assert np.isnan(crop.image[:2]).all() and np.isnan(crop.image[:, :2]).all()
    np.testing.assert_array_equal(crop.image[2:, 2:], array[0, 2, :3, :3])


def test_the_overview_is_the_block_maximum_of_the_projection(written, synthetic):
    array = synthetic[0]
    with open_volume(written["tiff"]) as volume:
        view = volume.overview(1, pixels=32)
    projection = array[1].max(axis=0).astype(np.float32)
    step = math.ceil(max(projection.shape) / 32)
    rows, cols = math.ceil(projection.shape[0] / step), math.ceil(projection.shape[1] / step)
    padded = np.full((rows * step, cols * step), -np.inf, dtype=np.float32)
    padded[:projection.shape[0], :projection.shape[1]] = projection
    expected = padded.reshape(rows, step, cols, step).max(axis=(1, 3))
    np.testing.assert_array_equal(view.image, expected)
    assert view.extent_um == pytest.approx((-0.15, (cols * step - 0.5) * 0.3, -0.15,
                                            (rows * step - 0.5) * 0.3))


def test_a_folder_of_tiff_files_is_ordered_by_the_number_in_their_names(synthetic, tmp_path):
    tifffile = pytest.importorskip("tifffile")
    array = synthetic[0]
    folder = tmp_path / "frames"
    folder.mkdir()
    for t, name in enumerate(["stack_9.tif", "stack_10.tif"]):  # by text, 10 sorts first
        tifffile.imwrite(folder / name, array[t], imagej=True, resolution=(1 / 0.3, 1 / 0.3),
                         metadata={"axes": "ZYX", "spacing": 1.5, "unit": "um"})
    with open_volume(folder, frames=9) as volume:
        assert volume.axes == "tzyx" and list(volume.frame_numbers) == [9, 10]
        for t in (0, 1):
            got = volume.read(9 + t, range(3, 4), range(20, 30), range(5, 9))
            np.testing.assert_array_equal(got, array[t, 3:4, 20:30, 5:9])


def test_contrast_is_one_for_crops_side_by_side_and_png_decodes():
    image = pytest.importorskip("PIL.Image")
    a, b = np.arange(100.0).reshape(10, 10), np.arange(100.0, 200.0).reshape(10, 10)
    # percentiles of 0..199, linear: 1 % at 0.01 * 199, 99.5 % at 0.995 * 199
    assert contrast_limits(a, b) == pytest.approx((1.99, 198.005))
    left = normalise(a, contrast_limits(a, b))
    assert left[0, 0] == 0 and left[5, 0] == pytest.approx((50 - 1.99) / (198.005 - 1.99))
    left[0, 1] = np.nan
    decoded = np.asarray(image.open(io.BytesIO(png_bytes(left))).convert("LA"))
    expected = np.round(np.nan_to_num(left, nan=0.0) * 255).astype(np.uint8)
    np.testing.assert_array_equal(decoded[..., 0], expected)
    assert decoded[0, 1, 1] == 0 and decoded[0, 0, 1] == 255  # NaN is transparent
    assert contrast_limits(np.full((2, 2), np.nan)) is None


def test_alignment_holds_and_a_wrong_voxel_size_is_caught(written, synthetic):
    positions = synthetic[1]
    with open_volume(written["hdf5"]) as volume:
        good = check_alignment(volume, positions, 0)
    assert good.aligned and good.separation > 0.9
    assert good.mean_at_detections > good.mean_at_random
    with open_volume(written["hdf5"], voxel_um=(0.6, 0.6, 1.5)) as volume:
        wrong = check_alignment(volume, positions, 0)
    assert not wrong.aligned
    assert wrong.suspected == "voxel size in x and y half the one used"
    assert "check voxel_um" in wrong.sentence
    with open_volume(written["hdf5"], axes="tzxy") as volume:  # x and y swapped
        swapped = check_alignment(volume, positions, 0)
    assert not swapped.aligned and swapped.suspected == "x and y swapped"
    moved = positions.assign(x_um=positions["x_um"] + 3.0)
    with open_volume(written["hdf5"]) as volume:
        shifted = check_alignment(volume, moved, 0)
    assert not shifted.aligned and shifted.suspected == "offset"
    assert shifted.offset_um[0] == pytest.approx(-3.0, abs=0.6)


def test_tracks_beyond_the_volume_frames_are_refused(written, synthetic):
    late = synthetic[1].assign(frame=synthetic[1]["frame"] + 5)
    with open_volume(written["zarr"]) as volume:
        with pytest.raises(InputError, match=r"5 frame\(s\) numbered|frame\(s\) the volume does"
                                             r" not hold \(first 5\)"):
            check_alignment(volume, late, 5)


def _plain_zarr(tmp_path, data, **attrs):
    zarr = pytest.importorskip("zarr")
    array = zarr.create_array(str(tmp_path / "plain.zarr"), shape=data.shape, chunks=data.shape,
                              dtype=data.dtype, zarr_format=2)
    array[...] = data
    return tmp_path / "plain.zarr"


def test_what_the_file_does_not_say_is_asked_for_in_one_line(tmp_path):
    path = _plain_zarr(tmp_path, np.zeros((3, 4, 5), np.uint16))
    with pytest.raises(InputError, match=r"does not state its axes.*give axes="):
        open_volume(path)
    with pytest.raises(InputError, match=r"voxel size along x, y, z: give voxel_um=\(x, y, z\)"):
        open_volume(path, axes="zyx")
    with open_volume(path, axes="zyx", voxel_um=(0.5, 0.5, 2)) as volume:
        assert volume.found["voxel_z"] == "given"
    with pytest.raises(InputError, match="axes 'qyx' do not fit"):
        open_volume(path, axes="qyx", voxel_um=(0.5, 0.5, 2))
    with pytest.raises(InputError, match="has no channel axis"):
        open_volume(path, axes="zyx", voxel_um=(0.5, 0.5, 2), channel=1)


def test_channels_by_name_or_index(tmp_path):
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(str(tmp_path / "two.zarr"), mode="w", zarr_format=2)
    data = np.stack([np.zeros((4, 6, 8), np.uint16), np.full((4, 6, 8), 7, np.uint16)])
    group.create_array("0", shape=data.shape, chunks=(1, 2, 6, 8), dtype=data.dtype)[...] = data
    group.attrs["multiscales"] = [{"version": "0.4", "axes": [
        {"name": "c", "type": "channel"}, *({"name": a, "type": "space", "unit": "micrometer"}
                                            for a in "zyx")],
        "datasets": [{"path": "0", "coordinateTransformations": [
            {"type": "scale", "scale": [1, 2.0, 0.5, 0.5]}]}]}]
    group.attrs["omero"] = {"channels": [{"label": "green"}, {"label": "red"}]}
    with pytest.raises(InputError, match=r"holds 2 channels \(0 \(green\), 1 \(red\)\)"):
        open_volume(tmp_path / "two.zarr")
    with open_volume(tmp_path / "two.zarr", channel="red") as volume:
        assert volume.channel == 1 and volume.read(0, range(4), range(6), range(8)).max() == 7
    with pytest.raises(InputError, match="channel 2 does not exist"):
        open_volume(tmp_path / "two.zarr", channel=2)
