"""TIFF volumes through tifffile: an ImageJ hyperstack (axes, x / y resolution, z spacing and
unit from its metadata), an OME-TIFF (axes and PhysicalSize), a plain multi-page TIFF (axes
given), and a folder of TIFF files, one frame each.

Uncompressed contiguous data (what ImageJ writes, also beyond 4 GB) are read at their file
offsets, one plane (or band of rows) a chunk, after the data's declared end is checked
against the file's size. Other files are read one strip or tile a chunk, each segment's offset
and byte count checked against the file and its compressed bytes checked before they are
decompressed (:func:`~trackverify.io.volumes.chunks.decompress`).
"""

from __future__ import annotations

import math
import os
import re
from collections import OrderedDict
from pathlib import Path

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import inside, regular_file
from trackverify.io.volumes.chunks import MAX_CHUNK_BYTES, band_chunks, decompress
from trackverify.io.volumes.found import Found, unit_factor

TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
SUFFIXES = (".tif", ".tiff")
#: TIFF compression tag values read, by the codec that decodes them.
COMPRESSION = {1: None, 8: "zlib", 32946: "zlib", 50000: "zstd"}
MAX_FOLDER_FILES = 1_000_000
OPEN_FILES = 8


def is_tiff(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) in TIFF_MAGIC


def _tifffile():
    from trackverify.extras import require

    return require("tifffile", "images", "reading TIFF volumes")


class TiffArray:
    """The first series of one TIFF file as a chunked array (module docstring)."""

    def __init__(self, path: Path, source: str | None = None):
        tifffile = _tifffile()
        self.path = path
        self.source = source or str(path)
        try:
            self.tif = tifffile.TiffFile(path)
            series = self.tif.series[0]
            self.shape = tuple(int(n) for n in series.shape)
            self.dtype = np.dtype(series.dtype)
            self.series_axes = series.axes
            self.offset = series.dataoffset
            page = series.keyframe
            self.file_size = os.fstat(self.tif.filehandle.fileno()).st_size
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - tifffile raises many types on bad files
            raise InputError(f"not a readable TIFF file ({type(exc).__name__}: "
                             f"{str(exc).strip()[:300]})", source=self.source) from None
        if "S" in self.series_axes:
            self.close()
            raise InputError(f"holds samples per pixel (axes {self.series_axes}: RGB or "
                             "interleaved channels); a volume is read from one grey value a "
                             "voxel", source=self.source)
        if len(self.shape) < 2:
            self.close()
            raise InputError(f"holds a {len(self.shape)}-D series; a volume has y and x axes",
                             source=self.source)
        ny, nx = self.shape[-2:]
        if self.offset is not None:  # contiguous and uncompressed: read at offsets
            self.contiguous = True
            self.chunks = band_chunks(self.shape, self.dtype.itemsize)
            end = int(self.offset) + math.prod(self.shape) * self.dtype.itemsize
            if end > self.file_size:
                self.close()
                raise InputError(f"the TIFF header declares {self.series_axes} {self.shape} "
                                 f"{self.dtype} ending at byte {end} but the file holds only "
                                 f"{self.file_size}; the file is truncated or its header is "
                                 "false", source=self.source)
        else:
            self.contiguous = False
            if page.compression not in COMPRESSION:
                self.close()
                raise InputError(f"compression {int(page.compression)} "
                                 f"({page.compression.name}) is not read; readable: none, "
                                 "deflate, zstd", source=self.source)
            self.pages = series.pages
            self.chunks = (1,) * (len(self.shape) - 2) + tuple(int(c) for c in page.chunks[-2:])
            self._check_segments(page)

    def close(self) -> None:
        self.tif.close()

    def _check_segments(self, page) -> None:
        """Refuse a first page whose strips or tiles cannot hold its declared size: fewer
        segments than its size needs, or segments beyond the end of the file."""
        ny, nx = self.shape[-2:]
        ry, rx = self.chunks[-2:]
        needed = math.ceil(ny / ry) * math.ceil(nx / rx)
        offsets, counts = page.dataoffsets, page.databytecounts
        ends = [int(o) + int(c) for o, c in zip(offsets, counts)]
        problem = None
        if len(offsets) < needed:
            problem = (f"declares {len(offsets)} strip(s) or tile(s) but its {ny} x {nx} "
                       f"pixels need {needed}")
        elif ends and max(ends) > self.file_size:
            problem = f"declares data up to byte {max(ends)} but the file holds {self.file_size}"
        if problem is not None:
            self.close()
            raise InputError(f"page 0 {problem}; the file is truncated or its header is false",
                             source=self.source)

    def _page(self, index: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(index[:-2], self.shape[:-2])) if len(index) > 2 else 0

    def chunk(self, index: tuple[int, ...]) -> np.ndarray:
        ny, nx = self.shape[-2:]
        ry, rx = self.chunks[-2:]
        y0, x0 = index[-2] * ry, index[-1] * rx
        rows, cols = min(ry, ny - y0), min(rx, nx - x0)
        if self.contiguous:
            start = int(self.offset) + (self._page(index) * ny + y0) * nx * self.dtype.itemsize
            data = self._read_at(start, rows * nx)
            return data.reshape((1,) * (len(self.shape) - 2) + (rows, nx))
        return self._segment(index, rows, cols)

    def _read_at(self, start: int, count: int) -> np.ndarray:
        raw = os.pread(self.tif.filehandle.fileno(), count * self.dtype.itemsize, start)
        return np.frombuffer(raw, dtype=self.dtype).copy()

    def _segment(self, index, rows, cols) -> np.ndarray:
        page = self.pages[self._page(index)]
        if page is None:
            raise InputError(f"page {self._page(index)} of the series is missing",
                             source=self.source)
        page = page.aspage() if hasattr(page, "aspage") else page
        across = math.ceil(self.shape[-1] / self.chunks[-1])
        segment = index[-2] * across + index[-1]
        offsets, counts = page.dataoffsets, page.databytecounts
        if segment >= len(offsets):
            raise InputError(f"page {page.index} has {len(offsets)} segments, fewer than its "
                             "size needs", source=self.source)
        offset, count = int(offsets[segment]), int(counts[segment])
        if offset + count > self.file_size or count > MAX_CHUNK_BYTES + 65536:
            raise InputError(f"page {page.index} segment {segment} declares bytes "
                             f"{offset}..{offset + count}, beyond the file's "
                             f"{self.file_size} bytes or the chunk bound", source=self.source)
        raw = os.pread(self.tif.filehandle.fileno(), count, offset)
        expected = math.prod(self.chunks[-2:]) * self.dtype.itemsize
        codec = COMPRESSION[int(page.compression)]
        if codec is not None:  # checked before tifffile decompresses it (again)
            decompress(codec, raw, expected, source=self.source, exact=False,
                       what=f"page {page.index} segment {segment}")
        try:
            data = page.decode(raw, segment)[0]
        except Exception as exc:  # noqa: BLE001 - imagecodecs raises many types
            raise InputError(f"page {page.index} segment {segment} cannot be decoded "
                             f"({type(exc).__name__}: {str(exc).strip()[:200]})",
                             source=self.source) from None
        data = np.asarray(data).reshape(data.shape[-3], data.shape[-2])[:rows, :cols]
        return data.reshape((1,) * (len(self.shape) - 2) + (rows, cols))


def _imagej_found(tif, axes: str) -> Found:
    meta = tif.imagej_metadata or {}
    unit = str(meta.get("unit", "")).replace("\\u00B5", "µ")
    factor = unit_factor(unit)
    voxel = {}
    if factor is not None:
        page = tif.pages.first
        for axis, tag in (("x", "XResolution"), ("y", "YResolution")):
            value = page.tags.get(tag)
            if value is not None:
                num, den = value.value
                if num > 0 and den > 0:
                    voxel[axis] = den / num * factor
        if "spacing" in meta and isinstance(meta["spacing"], (int, float)):
            voxel["z"] = float(meta["spacing"]) * factor
    return Found(axes=axes, voxel_um=voxel, where="ImageJ metadata")


def _ome_found(tif, axes: str) -> Found:
    tifffile = _tifffile()
    voxel = {}
    try:
        pixels = tifffile.xml2dict(tif.ome_metadata)["OME"]["Image"]
        pixels = (pixels[0] if isinstance(pixels, list) else pixels)["Pixels"]
    except (KeyError, TypeError, IndexError, ValueError):
        return Found(axes=axes, where="OME-XML")
    for axis in SPATIAL_AXES:
        size = pixels.get(f"PhysicalSize{axis.upper()}")
        factor = unit_factor(str(pixels.get(f"PhysicalSize{axis.upper()}Unit", "µm")))
        if isinstance(size, (int, float)) and factor is not None:
            voxel[axis] = float(size) * factor
    return Found(axes=axes, voxel_um=voxel, where="OME-XML")


SPATIAL_AXES = ("x", "y", "z")


def open_tiff(path: str | os.PathLike) -> tuple[TiffArray, Found]:
    """One TIFF file: its first series and what its metadata say (axes, voxel size)."""
    array = TiffArray(regular_file(path, what="TIFF file"), str(path))
    axes = array.series_axes.lower()
    known = set(axes) <= set("tczyx") and len(set(axes)) == len(axes)
    try:
        if array.tif.is_imagej:
            return array, _imagej_found(array.tif, axes if known else None)
        if array.tif.is_ome:
            return array, _ome_found(array.tif, axes if known else None)
    except Exception:
        array.close()
        raise
    return array, Found(axes=axes if known and axes in ("yx", "zyx") else None,
                        where="TIFF tags")


NUMBER = re.compile(r"(\d+)(?!.*\d)")


def folder_frames(folder: Path) -> list[Path]:
    """The TIFF files of ``folder`` (``.tif`` / ``.tiff``, any case) in frame order: by the
    integer of the last run of digits in the name (``frame_2.tif`` before ``frame_10.tif``);
    a name without digits or two files of one number are refused."""
    names = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.lower().endswith(SUFFIXES) and not entry.name.startswith("."):
                names.append(entry.name)
                if len(names) > MAX_FOLDER_FILES:
                    raise InputError(f"holds more than {MAX_FOLDER_FILES} TIFF files",
                                     source=str(folder))
    if not names:
        raise InputError("holds no .tif / .tiff file (a folder volume is one TIFF file a "
                         "frame)", source=str(folder))
    numbered = {}
    for name in names:
        match = NUMBER.search(name)
        if match is None:
            raise InputError(f"'{name}' has no frame number (files are ordered by the last "
                             "number in their name)", source=str(folder))
        number = int(match.group(1))
        if number in numbered:
            raise InputError(f"'{numbered[number]}' and '{name}' have the same frame number "
                             f"{number}", source=str(folder))
        numbered[number] = name
    return [folder / numbered[n] for n in sorted(numbered)]


class FolderArray:
    """A folder of TIFF files of one shape and dtype as one array, time first; files are
    opened when first read (at most ``OPEN_FILES`` at once), each checked then."""

    def __init__(self, folder: Path, files: list[Path], first: TiffArray):
        self.folder, self.files = folder, files
        self.source = str(folder)
        self.shape = (len(files), *first.shape)
        self.dtype = first.dtype
        self.chunks = (1, *first.chunks)
        self._open: OrderedDict = OrderedDict({0: first})

    def file(self, t: int) -> TiffArray:
        array = self._open.get(t)
        if array is None:
            path = inside(self.files[t], self.folder, what="TIFF file")
            array = TiffArray(regular_file(path, what="TIFF file"))
            if array.shape != self.shape[1:] or array.dtype != self.dtype or \
                    array.chunks != self.chunks[1:]:
                array.close()
                raise InputError(f"holds {array.shape} {array.dtype} (chunks {array.chunks}); "
                                 f"the folder's first file holds {self.shape[1:]} {self.dtype}"
                                 f" (chunks {self.chunks[1:]})", source=str(path))
            self._open[t] = array
            while len(self._open) > OPEN_FILES:
                self._open.popitem(last=False)[1].close()
        self._open.move_to_end(t)
        return array

    def chunk(self, index: tuple[int, ...]) -> np.ndarray:
        return self.file(index[0]).chunk(index[1:])[np.newaxis]

    def close(self) -> None:
        while self._open:
            self._open.popitem()[1].close()


def open_folder(folder: Path) -> tuple[FolderArray, Found]:
    """A folder of TIFF files, one frame each, in the order of :func:`folder_frames`."""
    files = folder_frames(folder)
    first, found = open_tiff(inside(files[0], folder, what="TIFF file"))
    axes = None if found.axes is None or "t" in found.axes else "t" + found.axes
    return FolderArray(folder, files, first), Found(axes=axes, voxel_um=found.voxel_um,
                                                    where=f"{found.where} of {files[0].name}")
