"""Corpus cases of the lab-volume readers (src/trackverify/io/volumes, docs/reference/robustness.md
"Lab volumes"), through ``trackverify volume SOURCE --tracks TRACKS``: headers claiming
10^12 voxels, chunks that decompress to gigabytes, links out of the input (an NWB external
link, a zarr store of symlinks), a volume whose frames or channels disagree with what is
asked. Each is refused on one line naming the file and the field, before anything large is
allocated or anything outside the input is read."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from tests.corpus.make_corpus import Case, generator

TRACKS = pd.DataFrame({"frame": [0, 0, 1], "pred_id": [1, 2, 1], "x_um": [2.0, 5.0, 2.5],
                       "y_um": [2.0, 6.0, 2.5], "z_um": [1.0, 1.0, 1.0]})


def tracks(folder: Path, frames=(0, 0, 1)) -> Path:
    path = folder / "tracks.csv"
    TRACKS.assign(frame=list(frames)).to_csv(path, index=False)
    return path


def zarr_v2(folder: Path, shape, chunks, compressor=None, dtype="<u2") -> Path:
    """A zarr format 2 array folder written by hand (metadata only; chunks added by callers)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype,
        "compressor": compressor, "fill_value": 0, "order": "C", "filters": None}))
    return folder


def huge_tiff(path: Path) -> Path:
    """A one-page TIFF whose tags claim 10^6 x 10^6 16-bit pixels in one 8-byte strip."""
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [(256, 4, 1, 10**6), (257, 4, 1, 10**6), (258, 3, 1, 16), (259, 3, 1, 1),
               (262, 3, 1, 1), (273, 4, 1, 8), (277, 3, 1, 1), (278, 4, 1, 10**6),
               (279, 4, 1, 8)]
    ifd = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHI", tag, kind, count) + (struct.pack("<HH", value, 0) if kind == 3
                                                 else struct.pack("<I", value))
        for tag, kind, count, value in entries) + struct.pack("<I", 0)
    path.write_bytes(b"II*\x00" + struct.pack("<I", 16) + bytes(8) + ifd)
    return path


def deflate_bomb(megabytes: int = 48) -> bytes:
    """zlib data small on disk (about 1 KB a MB) that inflates to ``megabytes`` MB of zeros."""
    return zlib.compress(bytes(megabytes * 1024 * 1024), 9)


def blosc_liar(nbytes: int = 2**31) -> bytes:
    """A blosc frame whose header states ``nbytes`` decompressed bytes."""
    return bytes([2, 1, 1, 2]) + struct.pack("<III", nbytes, 0, 32) + bytes(16)


def hdf5_bomb(path: Path) -> Path:
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as handle:
        data = handle.create_dataset("volume", shape=(4, 64, 64), chunks=(1, 64, 64),
                                     dtype="<u2", compression="gzip")
        data.id.write_direct_chunk((0, 0, 0), deflate_bomb(8))  # 8 MB from a 8 KB chunk
        data.attrs["element_size_um"] = [1.0, 1.0, 1.0]
    return path


def nwb_with_external_link(folder: Path) -> Path:
    import h5py

    from trackverify.synth.volume import write_nwb

    folder.mkdir(parents=True, exist_ok=True)
    path = write_nwb(np.zeros((2, 3, 8, 8), np.uint16), folder / "volume.nwb")
    outside = folder.parent / f"{folder.name}-outside.h5"
    with h5py.File(outside, "w") as handle:
        handle["data"] = np.zeros((2, 8, 8, 3), np.uint16)
    with h5py.File(path, "a") as handle:
        handle["acquisition/Elsewhere"] = h5py.ExternalLink(str(outside), "/data")
    return path


@generator
def volume_cases(root: Path) -> list[Case]:
    cases = []

    def case(name, source, fragments, *options, frames=(0, 0, 0)):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        table = tracks(folder, frames)
        cases.append(Case(name, ["volume", str(source(folder)), *options, "--tracks",
                                 str(table)], 2, fragments))

    case("volume_tiff_claims_1e12_voxels", lambda f: huge_tiff(f / "huge.tif"),
         ["huge.tif", "the TIFF header declares YX (1000000, 1000000) uint16 ending at byte "
          "2000000000008 but the file holds only 130"], "--voxel-um", "1,1")
    case("volume_zarr_chunk_of_gigabytes", lambda f: zarr_v2(
        f / "big.zarr", (10**6, 10**6, 10**6), (1024, 1024, 1024)),
        [".zarray", "declares chunks of (1024, 1024, 1024) uint16 (2147483648 bytes"],
        "--axes", "zyx", "--voxel-um", "1,1,1")

    def bomb(folder):
        store = zarr_v2(folder / "bomb.zarr", (64, 64), (64, 64), {"id": "zlib", "level": 9})
        (store / "0.0").write_bytes(deflate_bomb())
        return store

    case("volume_zarr_deflate_bomb", bomb,
         ["bomb.zarr", "chunk '0.0' would decompress to more bytes, not the 8192 bytes",
          "refused before decompressing"], "--axes", "yx", "--voxel-um", "1,1")

    def liar(folder):
        store = zarr_v2(folder / "liar.zarr", (64, 64), (64, 64), {"id": "blosc"})
        (store / "0.0").write_bytes(blosc_liar())
        return store

    case("volume_zarr_blosc_header_claims_2gb", liar,
         ["liar.zarr", "chunk '0.0' would decompress to 2147483648 bytes, not the 8192"],
         "--axes", "yx", "--voxel-um", "1,1")

    def farm(folder):
        secret = folder.parent / f"{folder.name}-secret"
        secret.write_bytes(bytes(8192))
        store = zarr_v2(folder / "farm.zarr", (64, 64), (64, 64))
        (store / "0.0").symlink_to(secret)
        return store

    case("volume_zarr_symlink_farm", farm,
         ["farm.zarr/0.0", "is a link to", "outside", "links out of an input are not followed"],
         "--axes", "yx", "--voxel-um", "1,1")
    case("volume_hdf5_deflate_bomb", lambda f: hdf5_bomb(f / "bomb.h5"),
         ["bomb.h5", "dataset 'volume' chunk at (0, 0, 0) would decompress to more bytes"],
         "--dataset", "volume", "--axes", "zyx")
    case("volume_nwb_external_link", nwb_with_external_link,
         ["volume.nwb", "'/acquisition/Elsewhere' is an external link"], frames=(0, 0, 1))

    def two_frames(folder):
        return zarr_v2(folder / "short.zarr", (2, 4, 16, 16), (1, 4, 16, 16))

    case("volume_frames_beyond_the_volume", two_frames,
         ["short.zarr", "have 1 frame(s) the volume does not hold (first 7)",
          "numbered 0..1"], "--axes", "tzyx", "--voxel-um", "1,1,1", frames=(0, 0, 7))
    case("volume_channel_that_does_not_exist", two_frames,
         ["short.zarr", "has no channel axis (axes 'tzyx'); channel '2' does not exist"],
         "--axes", "tzyx", "--voxel-um", "1,1,1", "--channel", "2")
    case("volume_axis_that_does_not_exist", two_frames,
         ["short.zarr", "axes 'tzqx' do not fit shape (2, 4, 16, 16)"],
         "--axes", "tzqx", "--voxel-um", "1,1,1")
    case("volume_without_voxel_size", two_frames,
         ["short.zarr", "does not state the voxel size along x, y, z: give voxel_um=(x, y, z)",
          "--voxel-um X,Y,Z"], "--axes", "tzyx")
    return cases
