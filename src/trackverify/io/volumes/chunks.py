"""Chunked reads with a stated memory bound: every volume reader is a :class:`Chunked` array.

A reader says its array's ``shape``, ``dtype`` and ``chunks`` (the shape of the pieces it
decodes one at a time: a zarr or HDF5 chunk, a TIFF strip, tile or page) and decodes one
chunk on request. :func:`read_region` assembles a box of the array from the chunks it
touches and nothing else, through a :class:`ChunkCache` of decoded chunks capped in bytes.

The bound, per :class:`~trackverify.io.volumes.Volume`: the decoded-chunk cache (at most
``cache_bytes``, default :data:`CACHE_BYTES` = 256 MiB) + one chunk being decoded (at most
:data:`MAX_CHUNK_BYTES` = 64 MiB, checked when the volume is opened) + the box being
assembled (at most :data:`MAX_REGION_BYTES`). A chunk's compressed bytes are checked
*before* they are decompressed (:func:`decompress`): a chunk that would decode to more than
its declared size (a decompression bomb) is refused, never inflated.
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections import OrderedDict
from typing import Protocol

import numpy as np

from trackverify.errors import InputError

MAX_CHUNK_BYTES = 64 * 1024 * 1024
"""Largest decoded chunk (strip, tile, page) read: 64 MiB; larger chunks are refused unread."""

BAND_BYTES = 1024 * 1024
"""Contiguous (unchunked) data are read in bands of whole rows of about 1 MiB (at least a row)."""

CACHE_BYTES = 256 * 1024 * 1024
"""Default cap of a volume's cache of decoded chunks: 256 MiB."""

MAX_REGION_BYTES = 256 * 1024 * 1024
"""Largest box assembled by one read (float32 copies of crops are far smaller): 256 MiB."""

MAX_CHUNKS_PER_READ = 100_000
"""Most chunks one read may touch (a store of one-voxel chunks would otherwise take hours)."""


class Chunked(Protocol):
    """What a volume reader gives: a lazily read N-D array, decoded chunk by chunk."""

    source: str
    shape: tuple[int, ...]
    dtype: np.dtype
    chunks: tuple[int, ...]

    def chunk(self, index: tuple[int, ...]) -> np.ndarray:
        """The decoded chunk at grid position ``index`` (edge chunks clipped to the shape)."""


def check_layout(array: Chunked, what: str) -> None:
    """Refuse an array whose declared layout cannot be read within the bound: a non-numeric
    dtype, a chunk of more than :data:`MAX_CHUNK_BYTES` decoded, a chunk or shape of
    negative or zero extent. A large *shape* is not refused: only what is read counts."""
    source = array.source
    if array.dtype.kind not in "uif" or array.dtype.itemsize > 8:
        raise InputError(f"{what} holds {array.dtype} values; a volume holds integers or "
                         "floats", source=source)
    if len(array.chunks) != len(array.shape) or any(int(c) < 1 for c in array.chunks):
        raise InputError(f"{what} declares chunks {tuple(array.chunks)} for shape "
                         f"{tuple(array.shape)}", source=source)
    if any(int(n) < 0 for n in array.shape):
        raise InputError(f"{what} declares a negative shape {tuple(array.shape)}", source=source)
    chunk_bytes = math.prod(int(c) for c in array.chunks) * array.dtype.itemsize
    if chunk_bytes > MAX_CHUNK_BYTES:
        raise InputError(f"{what} declares chunks of {tuple(array.chunks)} {array.dtype} "
                         f"({chunk_bytes} bytes decoded); at most {MAX_CHUNK_BYTES} bytes a "
                         "chunk are read", source=source)


def band_chunks(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Chunks for contiguous data: one plane's bands of rows of about :data:`BAND_BYTES`."""
    row = max(int(shape[-1]) * itemsize, 1)
    return (1,) * (len(shape) - 2) + (max(1, min(int(shape[-2]), BAND_BYTES // row)),
                                      int(shape[-1]))


def chunk_shape(array: Chunked, index: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of chunk ``index``: the chunk shape, clipped at the array's far edge."""
    return tuple(min(c, n - i * c) for i, c, n in zip(index, array.chunks, array.shape))


class ChunkCache:
    """Decoded chunks, least recently used first out, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = int(max_bytes)
        self.bytes = 0
        self.peak_bytes = 0
        self._chunks: OrderedDict = OrderedDict()

    def get(self, array: Chunked, index: tuple[int, ...], keep: bool = True) -> np.ndarray:
        key = (id(array), index)
        found = self._chunks.get(key)
        if found is not None:
            self._chunks.move_to_end(key)
            return found
        data = np.asarray(array.chunk(index))
        expected = chunk_shape(array, index)
        if data.shape != expected:
            raise InputError(f"chunk {index} decodes to shape {data.shape}, not the declared "
                             f"{expected}", source=array.source)
        if keep and data.nbytes <= self.max_bytes:
            self._chunks[key] = data
            self.bytes += data.nbytes
            while self.bytes > self.max_bytes:
                _, old = self._chunks.popitem(last=False)
                self.bytes -= old.nbytes
            self.peak_bytes = max(self.peak_bytes, self.bytes)
        return data


def chunk_ranges(array: Chunked, region: tuple[slice, ...]) -> list[range]:
    """Per dimension, the chunk grid positions a box of unit-step slices touches."""
    out = []
    for s, c in zip(region, array.chunks):
        out.append(range(s.start // c, (s.stop - 1) // c + 1) if s.stop > s.start else range(0))
    return out


def read_region(array: Chunked, region: tuple[slice, ...], cache: ChunkCache,
                keep: bool = True) -> np.ndarray:
    """The box ``region`` (unit-step slices within the shape) of ``array``, assembled from
    the chunks it touches only (``keep``: leave them in ``cache``)."""
    shape = tuple(s.stop - s.start for s in region)
    size = math.prod(shape) * array.dtype.itemsize
    if size > MAX_REGION_BYTES:
        raise InputError(f"a read of {shape} voxels ({size} bytes) is larger than the "
                         f"{MAX_REGION_BYTES} bytes one read may take", source=array.source)
    ranges = chunk_ranges(array, region)
    if math.prod(len(r) for r in ranges) > MAX_CHUNKS_PER_READ:
        raise InputError(f"a read of {shape} voxels touches more than {MAX_CHUNKS_PER_READ} "
                         f"chunks of {tuple(array.chunks)}; the chunks are too small to read "
                         "crops from", source=array.source)
    out = np.empty(shape, dtype=array.dtype)
    for index in itertools.product(*ranges):
        data = cache.get(array, index, keep)
        src, dst = [], []
        for i, c, s in zip(index, array.chunks, region):
            lo, hi = max(s.start, i * c), min(s.stop, (i + 1) * c)
            src.append(slice(lo - i * c, hi - i * c))
            dst.append(slice(lo - s.start, hi - s.start))
        out[tuple(dst)] = data[tuple(src)]
    return out


# ----------------------------------------------------------------------------- codecs

#: The compressors whose output size is checked before they run (ids as zarr v2 / numcodecs,
#: zarr v3, HDF5's deflate filter and TIFF's deflate and zstd name them).
CODECS = ("zlib", "gzip", "zstd", "blosc", "lz4")


def _bomb(source: str, what: str, found: str, expected: int) -> InputError:
    return InputError(f"{what} would decompress to {found}, not the {expected} bytes its "
                      "declared shape holds; it is refused before decompressing", source=source)


def _inflate(raw: bytes, expected: int, source: str, what: str) -> bytes:
    """zlib or gzip data (header detected) inflated to at most ``expected`` + 1 bytes."""
    inflater = zlib.decompressobj(47)  # 32 + 15: zlib or gzip header, detected
    try:
        out = inflater.decompress(raw, expected + 1)
    except zlib.error as exc:
        raise InputError(f"{what} is not readable deflate data ({exc})", source=source) from None
    if len(out) > expected or inflater.unconsumed_tail:
        raise _bomb(source, what, "more bytes", expected)
    return out


def _zstd_content_size(raw: bytes) -> int | None:
    """The decompressed size a zstd frame header states (None when it states none)."""
    if len(raw) < 6 or raw[:4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = raw[4]
    size_flag, single = descriptor >> 6, (descriptor >> 5) & 1
    position = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single else 0, 2, 4, 8)[size_flag]
    if width == 0 or len(raw) < position + width:
        return None
    value = int.from_bytes(raw[position:position + width], "little")
    return value + 256 if width == 2 else value


def decompress(codec: str | None, raw: bytes, expected: int, *, source: str,
               what: str, exact: bool = True) -> bytes:
    """``raw`` decompressed by ``codec`` (one of :data:`CODECS`, None: stored as is) into
    exactly ``expected`` bytes. The size is known before anything is inflated: blosc's and
    lz4's headers and zstd's frame header state it (and must state ``expected``, or at most
    it when not ``exact``: a TIFF's last strip); deflate (zlib, gzip) states none and is
    inflated to at most ``expected`` + 1 bytes."""
    if codec is None:
        out = raw
    elif codec in ("zlib", "gzip"):
        out = _inflate(raw, expected, source, what)
    else:
        if codec == "blosc":
            stated = struct.unpack_from("<I", raw, 4)[0] if len(raw) >= 16 else None
        elif codec == "lz4":
            stated = struct.unpack_from("<I", raw, 0)[0] if len(raw) >= 4 else None
        elif codec == "zstd":
            stated = _zstd_content_size(raw)
        else:
            raise InputError(f"{what} is compressed with '{codec}'; readable: "
                             f"{', '.join(CODECS)} or none", source=source)
        if stated is None or stated > expected or (exact and stated != expected):
            raise _bomb(source, what, "a size its header does not state" if stated is None
                        else f"{stated} bytes", expected)
        out = _numcodec(codec).decode(raw)
    out = bytes(memoryview(out).cast("B"))
    if len(out) > expected or (exact and len(out) != expected):
        raise InputError(f"{what} decompresses to {len(out)} bytes, not the {expected} its "
                         "declared shape holds", source=source)
    return out


def _numcodec(codec: str):
    from trackverify.extras import require

    numcodecs = require("numcodecs", "images", f"reading {codec}-compressed volumes")
    return {"blosc": numcodecs.Blosc, "lz4": numcodecs.LZ4, "zstd": numcodecs.Zstd}[codec]()
