"""The memory bound of a volume (io/volumes/chunks.py), measured with tracemalloc on arrays
whose headers claim far more than memory holds; and the compressed TIFF path."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from trackverify.io.volumes import open_volume

MiB = 1024 * 1024


def _peak(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_crop_of_a_zarr_claiming_1e12_voxels_reads_its_chunks_only(tmp_path):
    zarr = pytest.importorskip("zarr")
    shape, chunks = (1000, 1000, 1000, 1000), (1, 4, 256, 256)  # 10^12 uint16 voxels
    array = zarr.create_array(str(tmp_path / "huge.zarr"), shape=shape, chunks=chunks,
                              dtype="uint16", zarr_format=3)
    block = np.arange(8 * 300 * 300, dtype=np.uint16).reshape(8, 300, 300)
    array[500, 100:108, 400:700, 400:700] = block
    volume = open_volume(tmp_path / "huge.zarr", axes="tzyx", voxel_um=(0.5, 0.5, 2.0),
                         cache_bytes=4 * MiB)
    crop, peak = _peak(lambda: volume.crop(500, (275.0, 275.0, 208.0), 10.0, "xy"))
    # centre voxel (550, 550, 104), 20 voxels either side, planes 102..106
    np.testing.assert_array_equal(crop.image, block[2:7, 130:171, 130:171].max(axis=0))
    chunk = 4 * 256 * 256 * 2
    region = 5 * 41 * 41 * 2
    # the stated bound: the cache + one chunk being decoded + the box read, and its float copy
    assert peak <= 4 * MiB + chunk + region * 3 + MiB
    assert volume.cache.peak_bytes <= 4 * MiB


def test_a_crop_of_a_large_contiguous_tiff_reads_bands_of_rows(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    path = tmp_path / "large.tif"  # 40 planes of 2048 x 2048 (320 MB, sparse on disk)
    data = tifffile.memmap(path, shape=(40, 2048, 2048), dtype="uint16", imagej=True,
                           resolution=(1 / 0.25, 1 / 0.25), metadata={"axes": "ZYX",
                                                                     "spacing": 1.0, "unit": "um"})
    data[18:23, 1000:1100, 900:1000] = np.arange(5 * 100 * 100, dtype=np.uint16).reshape(5, 100, 100)
    data.flush()
    del data
    volume = open_volume(path, cache_bytes=2 * MiB)
    crop, peak = _peak(lambda: volume.crop(0, (250.0, 262.5, 20.0), 5.0, "xy"))
    expected = np.zeros((41, 41), np.float32)  # x 980..1020, y 1030..1070, planes 18..22
    expected[:, :20] = (np.arange(5 * 100 * 100).reshape(5, 100, 100)[:, 30:71, 80:100]
                        .max(axis=0))
    np.testing.assert_array_equal(crop.image, expected)
    assert volume.array.chunks == (1, 256, 2048)  # bands of 1 MiB
    assert peak <= 2 * MiB + MiB + 5 * 41 * 41 * 2 * 3 + MiB
    # the overview: one band of rows (1 MiB) and its float32 projection (2 MiB) at a time
    view, peak = _peak(lambda: volume.overview(0))
    assert view.image.shape == (256, 256) and view.image.max() == 5 * 100 * 100 - 1
    assert peak <= 8 * MiB
    volume.close()


def test_a_compressed_tiled_tiff_is_read_tile_by_tile(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    pytest.importorskip("imagecodecs")
    data = (np.arange(3 * 96 * 80) % 3001).astype(np.uint16).reshape(3, 96, 80)
    tifffile.imwrite(tmp_path / "tiled.tif", data, tile=(32, 32), compression="zlib", photometric="minisblack",
                     predictor=True)
    with open_volume(tmp_path / "tiled.tif", axes="zyx", voxel_um=(1, 1, 1)) as volume:
        assert volume.array.chunks == (1, 32, 32)
        got = volume.read(0, range(3), range(20, 70), range(10, 75))
    np.testing.assert_array_equal(got, data[:, 20:70, 10:75])
