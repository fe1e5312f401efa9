"""HDF5 datasets as volumes (h5py), reached through ``io/formats/hdf5.py``: read-only, link by
link, no external link, no external storage or virtual dataset.

A contiguous dataset is read by h5py one plane (or band of rows) at a time, after its
declared size is checked against its stored bytes (``hdf5.check_storage``). A chunked
dataset is read one chunk at a time as stored (``read_direct_chunk``) and decoded here:
fletcher32 (checksum dropped), deflate (inflated to at most the chunk's declared size:
``chunks.decompress``), shuffle; any other filter (lzf, szip, plugins) is refused by name,
so no chunk is decompressed before its size is known. A missing chunk is the fill value.

Axes come from the dimension labels (``h5py`` ``dims[i].label``, when all are t/c/z/y/x);
voxel size from the ``element_size_um`` attribute (Fiji, ilastik: one value per dimension,
or per z, y, x) when there is one.
"""

from __future__ import annotations

import math

import numpy as np

from trackverify.errors import InputError
from trackverify.io.formats.hdf5 import check_in_file, check_storage
from trackverify.io.volumes.chunks import band_chunks, decompress
from trackverify.io.volumes.found import Found

#: HDF5 filter ids: deflate, shuffle, fletcher32.
DEFLATE, SHUFFLE, FLETCHER32 = 1, 2, 3
FILTER_NAMES = {4: "szip", 5: "nbit", 6: "scaleoffset", 32000: "lzf", 32001: "blosc",
                32004: "lz4", 32008: "bitshuffle", 32015: "zstd"}


class H5Array:
    """One h5py dataset read chunk by chunk (module docstring)."""

    def __init__(self, node, name: str, source: str):
        self.node, self.name, self.source = node, name, source
        check_in_file(node, name, source)
        self.shape = tuple(int(n) for n in node.shape)
        self.dtype = np.dtype(node.dtype)
        if self.dtype.kind not in "uif" or self.dtype.fields is not None:
            raise InputError(f"dataset '{name}' holds {node.dtype} values; a volume holds "
                             "integers or floats", source=source)
        if len(self.shape) < 2:
            raise InputError(f"dataset '{name}' is {len(self.shape)}-D; a volume has y and x "
                             "axes", source=source)
        if node.chunks is None:
            check_storage(node, name)
            self.chunks = band_chunks(self.shape, self.dtype.itemsize)
            self.filters = None
        else:
            self.chunks = tuple(int(c) for c in node.chunks)
            plist = node.id.get_create_plist()
            self.filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
            unknown = [f for f in self.filters if f not in (DEFLATE, SHUFFLE, FLETCHER32)]
            if unknown:
                raise InputError(f"dataset '{name}' is compressed with filter "
                                 f"{FILTER_NAMES.get(unknown[0], unknown[0])} (id {unknown[0]}),"
                                 " which is not read; readable: deflate (gzip), shuffle, "
                                 "fletcher32", source=source)
            self.fill = node.fillvalue

    def chunk(self, index: tuple[int, ...]) -> np.ndarray:
        start = tuple(i * c for i, c in zip(index, self.chunks))
        shape = tuple(min(c, n - s) for c, s, n in zip(self.chunks, start, self.shape))
        box = tuple(slice(s, s + n) for s, n in zip(start, shape))
        what = f"dataset '{self.name}' chunk at {start}"
        try:
            if self.filters is None:
                return np.asarray(self.node[box])
            info = self.node.id.get_chunk_info_by_coord(start)
            if info.byte_offset is None:
                return np.full(shape, self.fill, dtype=self.dtype)
            full = math.prod(self.chunks) * self.dtype.itemsize
            if info.size > full + 65536:
                raise InputError(f"{what} stores {info.size} bytes, more than its {full} "
                                 "decoded bytes can need", source=self.source)
            mask, raw = self.node.id.read_direct_chunk(start)
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            raise InputError(f"{what} cannot be read ({str(exc).strip()[:200]})",
                             source=self.source) from None
        data = self._decode(bytes(raw), mask, full, what)
        return np.frombuffer(data, dtype=self.dtype).reshape(self.chunks)[
            tuple(slice(0, n) for n in shape)]

    def _decode(self, raw: bytes, mask: int, full: int, what: str) -> bytes:
        for position in reversed(range(len(self.filters))):
            if mask & (1 << position):
                continue  # this filter was skipped for this chunk
            kind = self.filters[position]
            if kind == FLETCHER32:
                raw = raw[:-4]
            elif kind == DEFLATE:
                raw = decompress("zlib", raw, full, source=self.source, what=what)
            elif kind == SHUFFLE:
                size = self.dtype.itemsize
                if len(raw) % size:
                    raise InputError(f"{what} holds {len(raw)} bytes, not whole values",
                                     source=self.source)
                raw = np.frombuffer(raw, np.uint8).reshape(size, -1).T.tobytes()
        if len(raw) != full:
            raise InputError(f"{what} holds {len(raw)} bytes, not the {full} its chunk "
                             "shape declares", source=self.source)
        return raw


def found_in(node) -> Found:
    """Axes from the dimension labels, voxel size from ``element_size_um``."""
    labels = "".join(str(d.label).strip().lower() for d in node.dims)
    axes = labels if (len(labels) == node.ndim and set(labels) <= set("tczyx")
                      and len(set(labels)) == len(labels)) else None
    voxel = {}
    size = node.attrs.get("element_size_um")
    values = np.asarray(size, dtype=np.float64).ravel() if size is not None and \
        np.asarray(size).dtype.kind in "iuf" and np.asarray(size).size <= 8 else None
    if values is not None and np.all(np.isfinite(values)) and np.all(values > 0):
        if axes is not None and len(values) == len(axes):
            voxel = {a: float(v) for a, v in zip(axes, values) if a in "xyz"}
        elif len(values) in (2, 3):  # per (z,) y, x: the last dimensions
            voxel = dict(zip("zyx"[3 - len(values):], map(float, values)))
    return Found(axes=axes, voxel_um=voxel, where="dataset attributes")
