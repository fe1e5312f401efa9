"""Zarr arrays (format 2 and 3) and OME-Zarr (NGFF) images, read without trusting the store.

The metadata are read as bounded JSON (``io.bounded.read_json``: size and nesting capped) and
checked before anything else: a numeric dtype, regular chunks of at most
``chunks.MAX_CHUNK_BYTES`` decoded, a compressor of ``chunks.CODECS`` and no other codec
(zarr 3: ``bytes``, one of gzip / zstd / blosc, optionally ``crc32c``; sharded arrays are not
read). Each chunk file is then read on its own, when a crop needs it, after
``io.bounded.inside`` (no link out of the store: a symlink farm pointing elsewhere is
refused at the first link) and ``regular_file``; its compressed bytes are checked before
decompression (``chunks.decompress``). A missing chunk is the fill value, as zarr reads it,
so a store whose header claims 10^12 voxels costs only the chunks a crop touches.

OME-NGFF (0.4 ``.zattrs`` ``multiscales``, 0.5 ``zarr.json`` ``attributes.ome``): the axes
(names t, c, z, y, x; space units), the first (full-resolution) dataset and its
``coordinateTransformations`` (``scale``, optional ``translation``, then the multiscale's own
ones), channel names from ``omero.channels[].label``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import inside, read_json, regular_file
from trackverify.io.volumes.chunks import CODECS, MAX_CHUNK_BYTES, decompress
from trackverify.io.volumes.found import Found, unit_factor

MAX_METADATA_BYTES = 16 * 1024 * 1024
V2_NAMES = (".zarray", ".zattrs", ".zgroup")


def is_zarr(folder: Path) -> bool:
    return any(os.path.lexists(folder / name) for name in (*V2_NAMES, "zarr.json"))


def _json(path: Path, root: Path) -> dict | None:
    """The JSON object at ``path`` inside ``root`` (None when there is none)."""
    if not os.path.lexists(path):
        return None
    inside(path, root, what="zarr metadata file")
    data = read_json(path, max_bytes=MAX_METADATA_BYTES, what="zarr metadata file")
    if not isinstance(data, dict):
        raise InputError("zarr metadata must be a JSON object", source=str(path))
    return data


def _fill(value, dtype: np.dtype, where: str):
    special = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    value = special.get(value, value) if isinstance(value, str) else value
    try:
        return np.array(0 if value is None else value).astype(dtype, casting="unsafe")[()]
    except (TypeError, ValueError):
        raise InputError(f"fill_value {value!r} is not a {dtype} value", source=where) from None


def _dtype(name, where: str) -> np.dtype:
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise InputError(f"unknown data type {name!r}", source=where) from None
    if dtype.kind not in "uif" or dtype.fields is not None or dtype.itemsize > 8:
        raise InputError(f"holds {dtype} values; a volume holds integers or floats",
                         source=where)
    return dtype


def _ints(values, name: str, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                               and v >= 0 for v in values):
        raise InputError(f"'{name}' must be a list of non-negative integers", source=where)
    return tuple(values)


class ZarrArray:
    """One zarr array (format 2 or 3) read chunk by chunk (module docstring)."""

    def __init__(self, folder: Path, root: Path):
        self.folder, self.root = folder, root
        self.source = str(folder)
        v3 = _json(folder / "zarr.json", root)
        meta = v3 if v3 is not None else _json(folder / ".zarray", root)
        if meta is None or (v3 is not None and v3.get("node_type") != "array"):
            raise InputError("is not a zarr array (no .zarray, or zarr.json of node_type "
                             "array)", source=self.source)
        where = str(folder / ("zarr.json" if v3 is not None else ".zarray"))
        self.shape = _ints(meta.get("shape"), "shape", where)
        (self._v3 if v3 is not None else self._v2)(meta, where)
        if len(self.chunks) != len(self.shape) or 0 in self.chunks:
            raise InputError(f"chunks {self.chunks} do not fit shape {self.shape}", source=where)
        self.chunk_bytes = math.prod(self.chunks) * self.dtype.itemsize
        if self.chunk_bytes > MAX_CHUNK_BYTES:
            raise InputError(f"declares chunks of {self.chunks} {self.dtype} "
                             f"({self.chunk_bytes} bytes decoded); at most {MAX_CHUNK_BYTES} "
                             "bytes a chunk are read", source=where)

    def _v2(self, meta: dict, where: str) -> None:
        self.dtype = _dtype(meta.get("dtype"), where)
        self.chunks = _ints(meta.get("chunks"), "chunks", where)
        self.order = meta.get("order", "C")
        if self.order not in ("C", "F"):
            raise InputError(f"order {self.order!r} is not C or F", source=where)
        if meta.get("filters"):
            ids = [f.get("id") if isinstance(f, dict) else f for f in meta["filters"]]
            raise InputError(f"filters {ids} are not read (a compressor alone is)", source=where)
        compressor = meta.get("compressor")
        self.codec = None if compressor is None else \
            (compressor.get("id") if isinstance(compressor, dict) else compressor)
        if self.codec is not None and self.codec not in CODECS:
            raise InputError(f"compressor {self.codec!r} is not read; readable: "
                             f"{', '.join(CODECS)} or none", source=where)
        self.checksum = False
        separator = meta.get("dimension_separator", ".")
        if separator not in (".", "/"):
            raise InputError(f"dimension_separator {separator!r} is not . or /", source=where)
        self.key = lambda index: separator.join(map(str, index)) or "0"
        self.fill = _fill(meta.get("fill_value"), self.dtype, where)

    def _v3(self, meta: dict, where: str) -> None:
        grid = meta.get("chunk_grid") or {}
        if grid.get("name") != "regular":
            raise InputError(f"chunk grid {grid.get('name')!r} is not read (regular only)",
                             source=where)
        self.chunks = _ints((grid.get("configuration") or {}).get("chunk_shape"),
                            "chunk_shape", where)
        self.dtype = _dtype(meta.get("data_type"), where)
        self.order, self.codec, self.checksum = "C", None, False
        codecs = meta.get("codecs")
        if not isinstance(codecs, list) or not codecs:
            raise InputError("'codecs' must be a list", source=where)
        names = [c.get("name") if isinstance(c, dict) else c for c in codecs]
        if names[0] == "sharding_indexed":
            raise InputError("is a sharded zarr 3 array, which is not read; rewrite it "
                             "without sharding", source=where)
        if names[0] != "bytes" or len(names) > 3:
            raise InputError(f"codecs {names} are not read; readable: bytes, then one of "
                             "gzip, zstd, blosc, then crc32c", source=where)
        endian = ((codecs[0].get("configuration") or {}).get("endian", "little")
                  if isinstance(codecs[0], dict) else "little")
        self.dtype = self.dtype.newbyteorder("<" if endian == "little" else ">")
        rest = names[1:]
        if rest and rest[-1] == "crc32c":
            self.checksum = True
            rest = rest[:-1]
        if len(rest) > 1 or (rest and rest[0] not in ("gzip", "zstd", "blosc")):
            raise InputError(f"codecs {names} are not read; readable: bytes, then one of "
                             "gzip, zstd, blosc, then crc32c", source=where)
        self.codec = rest[0] if rest else None
        encoding = meta.get("chunk_key_encoding") or {"name": "default"}
        separator = (encoding.get("configuration") or {}).get(
            "separator", "/" if encoding.get("name") == "default" else ".")
        if encoding.get("name") not in ("default", "v2") or separator not in (".", "/"):
            raise InputError(f"chunk_key_encoding {encoding!r} is not read", source=where)
        if encoding.get("name") == "default":
            self.key = lambda index: separator.join(["c", *map(str, index)])
        else:
            self.key = lambda index: separator.join(map(str, index)) or "0"
        self.fill = _fill(meta.get("fill_value"), self.dtype, where)

    def chunk(self, index: tuple[int, ...]) -> np.ndarray:
        shape = tuple(min(c, n - i * c) for i, c, n in zip(index, self.chunks, self.shape))
        path = self.folder / self.key(index)
        if not os.path.lexists(path):
            return np.full(shape, self.fill, dtype=self.dtype)
        inside(path, self.root, what="zarr chunk")
        path = regular_file(path, what="zarr chunk")
        what = f"chunk '{self.key(index)}'"
        size = path.stat().st_size
        if size > self.chunk_bytes + 65536:
            raise InputError(f"{what} stores {size} bytes, more than its {self.chunk_bytes} "
                             "decoded bytes can need", source=self.source)
        raw = path.read_bytes()
        if self.checksum:
            raw = self._crc(raw, what)
        data = decompress(self.codec, raw, self.chunk_bytes, source=self.source, what=what)
        full = np.frombuffer(data, dtype=self.dtype).reshape(self.chunks, order=self.order)
        return full[tuple(slice(0, n) for n in shape)]

    def _crc(self, raw: bytes, what: str) -> bytes:
        import google_crc32c

        body, stored = raw[:-4], raw[-4:]
        if len(raw) < 4 or google_crc32c.value(body) != int.from_bytes(stored, "little"):
            raise InputError(f"{what} fails its crc32c checksum", source=self.source)
        return body


def _ngff(attrs: dict, where: str) -> dict | None:
    """The first multiscale image of an NGFF group's attributes (0.4: top level, 0.5: 'ome')."""
    found = attrs.get("ome", attrs) if isinstance(attrs.get("ome"), dict) else attrs
    multiscales = found.get("multiscales")
    if multiscales is None:
        return None
    if not isinstance(multiscales, list) or not multiscales or \
            not isinstance(multiscales[0], dict):
        raise InputError("'multiscales' must be a non-empty list of objects", source=where)
    image = dict(multiscales[0])
    image["omero"] = found.get("omero")
    return image


def _transforms(items, n: int, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(scale, translation) of a list of NGFF coordinateTransformations over ``n`` axes."""
    scale, shift = np.ones(n), np.zeros(n)
    for item in items or []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "identity":
            continue
        values = item.get(kind) if kind in ("scale", "translation") else None
        if not isinstance(values, list) or len(values) != n or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in values):
            raise InputError(f"coordinateTransformations: {kind!r} must be {n} finite numbers "
                             "(one per axis)", source=where)
        if kind == "scale":
            scale, shift = scale * np.array(values), shift * np.array(values)
        else:
            shift = shift + np.array(values)
    return scale, shift


def _ngff_found(image: dict, level: dict, n: int, where: str) -> Found:
    axes = image.get("axes")
    if not isinstance(axes, list) or len(axes) != n:
        raise InputError(f"'axes' must list {n} axes, one per dimension of the array",
                         source=where)
    names = [str(a.get("name") if isinstance(a, dict) else a).lower() for a in axes]
    scale, shift = _transforms(level.get("coordinateTransformations"), n, where)
    top_scale, top_shift = _transforms(image.get("coordinateTransformations"), n, where)
    scale, shift = scale * top_scale, shift * top_scale + top_shift
    voxel, origin = {}, {}
    for i, (name, axis) in enumerate(zip(names, axes)):
        unit = axis.get("unit") if isinstance(axis, dict) else None
        factor = unit_factor(unit) if unit is not None else None
        if name in ("x", "y", "z") and factor is not None:
            voxel[name], origin[name] = float(scale[i] * factor), float(shift[i] * factor)
    channels = None
    omero = image.get("omero")
    if isinstance(omero, dict) and isinstance(omero.get("channels"), list):
        channels = [str(c.get("label", i)) if isinstance(c, dict) else str(i)
                    for i, c in enumerate(omero["channels"])]
    valid = set(names) <= set("tczyx") and len(set(names)) == len(names)
    return Found(axes="".join(names) if valid else None, voxel_um=voxel, origin_um=origin,
                 channel_names=channels, where="OME-NGFF metadata")


def open_zarr(folder: Path, dataset: str | None = None) -> tuple[ZarrArray, Found]:
    """A zarr array, or the full-resolution (or ``dataset``) array of an OME-Zarr image."""
    root = folder
    v3 = _json(folder / "zarr.json", root)
    attrs = (v3 or {}).get("attributes") if v3 is not None else _json(folder / ".zattrs", root)
    where = str(folder / ("zarr.json" if v3 is not None else ".zattrs"))
    image = _ngff(attrs, where) if isinstance(attrs, dict) else None
    is_array = (v3 or {}).get("node_type") == "array" or os.path.lexists(folder / ".zarray")
    if image is not None:
        datasets = image.get("datasets")
        if not isinstance(datasets, list) or not datasets or not all(
                isinstance(d, dict) and isinstance(d.get("path"), str) for d in datasets):
            raise InputError("'multiscales' datasets must be objects with a 'path'",
                             source=where)
        paths = [d["path"] for d in datasets]
        if dataset is not None and dataset not in paths:
            raise InputError(f"no dataset '{dataset}' in the multiscales (there are: "
                             f"{', '.join(paths)})", source=where)
        level = datasets[paths.index(dataset) if dataset is not None else 0]
        array = ZarrArray(_member(folder, level["path"]), root)
        return array, _ngff_found(image, level, len(array.shape), where)
    if is_array:
        return ZarrArray(folder, root), Found(where="zarr metadata")
    if dataset is None:
        raise InputError("is a zarr group without OME-NGFF multiscales: give the array's "
                         "path inside it (dataset=, --dataset)", source=str(folder))
    array = ZarrArray(_member(folder, dataset), root)
    return array, Found(where="zarr metadata")


def _member(folder: Path, path: str) -> Path:
    """``folder / path`` for a relative path that stays in the store (no ``..``)."""
    parts = Path(path).parts
    if Path(path).is_absolute() or ".." in parts or not parts:
        raise InputError(f"dataset path {path!r} must be a relative path inside the store",
                         source=str(folder))
    member = folder.joinpath(*parts)
    if not member.is_dir():
        raise InputError(f"no array '{path}' in the store", source=str(folder))
    return Path(inside(member, folder, what="zarr array"))
