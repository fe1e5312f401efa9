"""``open_volume``: which reader a source needs, and what is taken from the file or given."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import regular_file
from trackverify.io.volumes.chunks import CACHE_BYTES, check_layout
from trackverify.io.volumes.found import Found
from trackverify.io.volumes.volume import SPATIAL, Volume

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _split(source: str) -> tuple[str, str | None]:
    """``file.h5:/path/to/dataset`` -> (``file.h5``, ``path/to/dataset``)."""
    if not os.path.exists(source) and ":" in source:
        path, _, inner = source.partition(":")
        if os.path.exists(path):
            return path, inner.strip("/") or None
    return source, None


def _read(source: str, dataset: str | None):
    """``(array, found, close)`` of the reader ``source`` needs."""
    from trackverify.extras import require

    path = Path(source)
    if path.is_dir():
        from trackverify.io.volumes import ngff, tiff

        if ngff.is_zarr(path):
            array, found = ngff.open_zarr(path, dataset)
            return array, found, None
        array, found = tiff.open_folder(path)
        return array, found, array.close
    path = regular_file(path, what="volume file")
    with open(path, "rb") as handle:
        magic = handle.read(8)
    if magic[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        from trackverify.io.volumes.tiff import open_tiff

        array, found = open_tiff(path)
        return array, found, array.close
    if magic == HDF5_MAGIC:
        from trackverify.io.formats import hdf5

        handle = hdf5.open_h5(path, "reading HDF5 volumes")
        if "nwb_version" in handle.attrs:
            handle.close()
            require("pynwb", "nwb", "reading NWB volumes")
            require("ndx_multichannel_volume", "nwb", "reading NWB volumes")
            from trackverify.io.volumes.nwb import open_nwb

            return open_nwb(path, dataset, source)
        try:
            if dataset is None:
                raise InputError("is an HDF5 file: name the dataset (FILE.h5:/path/to/data, or"
                                 " dataset=, --dataset)", source=source)
            from trackverify.io.volumes.hdf5 import H5Array, found_in

            node = hdf5.dataset(handle, dataset)
            if not hasattr(node, "shape"):
                raise InputError(f"'{dataset}' is a group, expected a dataset", source=source)
            return H5Array(node, dataset, source), found_in(node), handle.close
        except BaseException:
            handle.close()
            raise
    raise InputError("is not a volume trackverify reads (TIFF, HDF5 / NWB file, zarr or "
                     "OME-Zarr store, folder of TIFF files)", source=source)


def _axes(given: str | None, found: Found, ndim: int, shape, source: str,
          folder: bool) -> str:
    if given is None:
        if found.axes is None:
            raise InputError(f"the file does not state its axes (shape {tuple(shape)}): give "
                             "axes=, the letters of t, c, z, y, x in the file's order "
                             "(e.g. 'tzyx'; --axes)", source=source)
        return found.axes
    axes = str(given).strip().lower()
    if folder and "t" not in axes:
        axes = "t" + axes
    if len(axes) != ndim or not set(axes) <= set("tczyx") or len(set(axes)) != len(axes) \
            or not {"y", "x"} <= set(axes):
        raise InputError(f"axes '{given}' do not fit shape {tuple(shape)}: give {ndim} distinct "
                         "letters of t, c, z, y, x, including y and x", source=source)
    return axes


def _voxels(given, found: Found, axes: str, source: str) -> tuple[dict, dict]:
    voxel, origin = dict(found.voxel_um), dict(found.origin_um)
    whence = {a: found.where for a in voxel}
    if given is not None:
        if isinstance(given, Mapping):
            items = dict(given)
        elif isinstance(given, (int, float)):
            items = dict.fromkeys(SPATIAL, given)
        elif isinstance(given, Sequence) and len(given) in (2, 3):
            items = dict(zip(SPATIAL, given))
        else:
            raise InputError(f"voxel_um {given!r}: give x, y[, z] micrometres per voxel")
        for axis, value in items.items():
            if axis not in SPATIAL or not isinstance(value, (int, float)) or \
                    isinstance(value, bool) or not (0 < value < math.inf):
                raise InputError(f"voxel_um {axis}={value!r}: a positive number of "
                                 "micrometres per voxel, for x, y, z")
            voxel[axis], whence[axis] = float(value), "given"
    needed = [a for a in SPATIAL if a in axes]
    missing = [a for a in needed if a not in voxel]
    if missing:
        raise InputError(f"the file does not state the voxel size along {', '.join(missing)}: "
                         f"give voxel_um=({', '.join(needed)}) in micrometres per voxel "
                         f"(--voxel-um {','.join(a.upper() for a in needed)})", source=source)
    bad = [a for a in needed if not (0 < voxel[a] < math.inf)]
    if bad:
        raise InputError(f"the voxel size along {bad[0]} is {voxel[bad[0]]} um in "
                         f"{whence[bad[0]]}; give voxel_um= to correct it", source=source)
    voxel.setdefault("z", 1.0)
    return {a: voxel[a] for a in SPATIAL}, {a: float(origin.get(a, 0.0)) for a in SPATIAL}, \
        whence


def _channel(given, found: Found, axes: str, shape, source: str) -> int | None:
    n = int(shape[axes.index("c")]) if "c" in axes else 0
    names = found.channel_names if found.channel_names and len(found.channel_names) == n \
        else None
    listed = ", ".join(f"{i} ({name})" for i, name in enumerate(names)) if names else \
        f"0..{n - 1}"
    if given is None:
        if n > 1:
            raise InputError(f"holds {n} channels ({listed}): give channel= (--channel), an "
                             "index or a name", source=source)
        return 0 if n else None
    if n == 0:
        raise InputError(f"has no channel axis (axes '{axes}'); channel {given!r} does not "
                         "exist", source=source)
    if isinstance(given, str) and not given.isdigit():
        if not names or given not in names:
            raise InputError(f"no channel named '{given}' (channels: {listed})", source=source)
        return names.index(given)
    index = int(given)
    if not 0 <= index < n:
        raise InputError(f"channel {index} does not exist (channels: {listed})", source=source)
    return index


def _frames(given, n: int, source: str) -> np.ndarray:
    if given is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(given, (int, np.integer)) and not isinstance(given, bool):
        return np.arange(n, dtype=np.int64) + int(given)
    numbers = np.asarray(given)
    if numbers.shape != (n,) or numbers.dtype.kind not in "iu" or \
            (n > 1 and np.any(np.diff(numbers) <= 0)):
        raise InputError(f"frames= must be the first frame number or {n} increasing frame "
                         "numbers, one per time point of the volume", source=source)
    return numbers.astype(np.int64)


def open_volume(source: str | os.PathLike, *, axes: str | None = None,
                channel: int | str | None = None, voxel_um=None, dataset: str | None = None,
                frames=None, cache_bytes: int = CACHE_BYTES) -> Volume:
    """Open a lab's raw volume lazily (docs/guide/volumes.md): a TIFF file (ImageJ
    hyperstack, OME-TIFF, multi-page), a folder of TIFF files (one a frame, ordered by the
    last number in their names), a zarr array or OME-Zarr image (folder), an HDF5 dataset
    (``file.h5:/path`` or ``dataset=``), an NWB acquisition series (``dataset=`` its name).

    ``axes`` (letters of t, c, z, y, x in the file's order), ``voxel_um`` (x, y[, z] um per
    voxel, or a mapping) and ``channel`` (index or name) are taken from the file's metadata
    where it states them, else from these arguments (which override the file); neither is
    one line naming what to give. ``frames``: the tracker's number of the first time point
    (an int) or one number per time point; default 0, 1, 2, ... Nothing is read but the
    metadata until a crop asks for chunks."""
    source = str(source)
    path, inner = _split(source)
    array, found, close = _read(path, dataset if dataset is not None else inner)
    try:
        check_layout(array, "the volume")
        shape = array.shape
        order = _axes(axes, found, len(shape), shape, source, hasattr(array, "files"))
        voxel, origin, whence = _voxels(voxel_um, found, order, source)
        index = _channel(channel, found, order, shape, source)
        n_frames = int(shape[order.index("t")]) if "t" in order else 1
        numbers = _frames(frames, n_frames, source)
    except BaseException:
        if close is not None:
            close()
        raise
    where = {"axes": "given" if axes is not None else found.where,
             **{f"voxel_{a}": w for a, w in whence.items()}}
    return Volume(array, order, voxel, origin, index, found.channel_names, numbers, where,
                  cache_bytes, [close] if close is not None else [])
