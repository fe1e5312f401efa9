"""GEFF (Graph Exchange File Format) zarr stores: metadata through the ``geff`` package
(GEFF >= 1.0) or read here (0.2 to 0.x), arrays through zarr.

The graph group is the path given or its ``tracks/`` subgroup (where geff-java and many
writers put it). Read: node ids, the links, and the node properties named by the metadata's
``axes``: the ``time`` axis gives the frame (or a ``FRAME`` / ``frame`` property when there
is one, e.g. when time is in minutes), the ``space`` axes give x, y[, z] by name (``x`` or
``..._x``; a z axis that is 0 everywhere is dropped). An axis without a type (the GEFF
spec makes it optional; ``geff.write_nx(..., axis_names=...)`` writes none) is time when
named ``t`` / ``time`` / ``frame`` and space when named as above. The graph is cut into tracklets
(:mod:`.graph`); a track / lineage property (``track_node_props``, or ``track_id``) is kept
as ``source_track``, node ids as ``node``. Units: the space axes' ``unit`` when every one is
a known length (micrometer, nanometer, ...), else uncalibrated (``--pixel-size``).

Versions: metadata under the ``geff`` key of ``geff_version`` 1.0 and later is validated by
the geff library (extra ``formats``: ``geff>=1.0,<2``, whose schema requires
``node_props_metadata`` and refuses older stores); that of 0.2 to 0.x (written by geff 0.2
to 0.5, geff-java, pycellin ...) is read here (:func:`own_metadata`: ``geff_version``,
``axes``, ``track_node_props``, the only keys used). Node ids, edge ids and node properties
(``nodes/props/NAME/values`` and ``missing``, laid out alike in every version from 0.2) are
read with zarr. The first layout (GEFF 0.1, flat attributes with ``position_attr``) is
refused with a message saying so.

Safety: before zarr opens the store, :func:`check_store` refuses special files (a FIFO chunk
would block), links out of the store (a chunk linked to ``/etc/passwd`` or another input),
metadata JSON above 64 MiB or nested too deeply, and arrays declaring more than
:data:`MAX_ARRAY_BYTES` whole or per chunk (a chunk bomb, a decompression bomb).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.extras import require
from trackverify.io.bounded import folder_files, inside, read_json
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.graph import node_frames, tracklets
from trackverify.io.formats.units import UNIT_TO_UM

FRAME_PROPS = ("FRAME", "frame")
METADATA_FILES = (".zattrs", ".zarray", ".zgroup", ".zmetadata", "zarr.json")
MAX_ARRAY_BYTES = 2**30
"""Most bytes one array of a GEFF store may declare (1 GiB: 134 million float64 node
values); zarr allocates the whole array, and each chunk, before it reads a byte."""


def _head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(65536)


def graph_group(path: Path) -> Path | None:
    """The folder holding the geff metadata: ``path`` or its ``tracks/``, the first whose
    ``.zattrs`` or ``zarr.json`` (a regular file) names geff in its first 64 KiB. A metadata
    file that is a link out of ``path`` is refused before it is opened
    (:func:`~trackverify.io.bounded.inside`)."""
    for candidate in (path, path / "tracks"):
        for name in (".zattrs", "zarr.json"):
            metadata = candidate / name
            if os.path.lexists(metadata):
                inside(metadata, path, what="store file")
            if metadata.is_file() and b'"geff' in _head(metadata):
                return candidate
    return None


def check_store(group: Path) -> None:
    """Refuse a store that would make zarr read outside it, block, or allocate without
    bound, before zarr opens anything: every file under ``group`` must be a regular file
    reached through no link leading out of the store (:func:`~trackverify.io.bounded.
    folder_files`), every metadata file JSON of at most 64 MiB nested no deeper than the
    parser follows, and every array of ``nodes/`` and ``edges/`` must declare at most
    :data:`MAX_ARRAY_BYTES`, both whole and per chunk (a compressed chunk inflates to its
    declared size: 30 bytes of zlib can declare gigabytes)."""
    for file in folder_files(group, what="store file"):
        if file.name in METADATA_FILES:
            read_json(file, what="zarr metadata file")
    zarr = require("zarr", "formats", "reading GEFF")
    try:
        root = zarr.open_group(str(group), mode="r")
        arrays = [(f"{name}/{path}", member) for name in ("nodes", "edges") if name in root
                  for path, member in root[name].members(max_depth=None)
                  if isinstance(member, zarr.Array)]
        sizes = [(name, tuple(int(n) for n in array.shape), int(array.dtype.itemsize),
                  [tuple(int(n) for n in c) for c in (array.chunks, array.shards) if c])
                 for name, array in arrays]
    except Exception as exc:  # zarr raises value / type / JSON errors for bad metadata
        raise InputError(f"zarr cannot open this store ({type(exc).__name__}: "
                         f"{_first_line(exc)})", source=str(group)) from exc
    for name, shape, itemsize, chunks in sizes:
        for kind, dims in (("shape", shape), *(("chunk shape", c) for c in chunks)):
            declared = math.prod(dims) * itemsize  # Python ints: no overflow
            if declared > MAX_ARRAY_BYTES:
                raise InputError(f"array '{name}' declares {kind} {list(dims)} of {itemsize}-"
                                 f"byte values ({declared} bytes); at most {MAX_ARRAY_BYTES} "
                                 "are read per array", source=str(group))


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""


def sniff(path: Path) -> bool:
    return path.is_dir() and graph_group(path) is not None


def _axis_key(name: str) -> str | None:
    low = name.lower()
    for axis in ("x", "y", "z"):
        if low == axis or low.endswith(f"_{axis}"):
            return axis
    return None


TIME_NAMES = ("t", "time", "frame")


def _axis_type(axis) -> str | None:
    """The axis' declared type; an axis declaring none (``geff.write_nx`` given
    ``axis_names`` only) is ``time`` when named t / time / frame, ``space`` when named x, y,
    z (or ``..._x`` ...), else None."""
    if axis.type is not None:
        return axis.type
    if axis.name.lower() in TIME_NAMES:
        return "time"
    return "space" if _axis_key(axis.name) is not None else None


def _values(props: dict, name: str, where: str, nodes: int, numeric: bool = True) -> np.ndarray:
    """Node property ``name``: one value per node (a 1-D array of ``nodes`` values, numbers
    when ``numeric``), none of them missing."""
    if name not in props:
        raise InputError(f"no node property '{name}'", source=where)
    prop = props[name]
    values = np.asarray(prop["values"])
    if values.ndim != 1 or len(values) != nodes:
        raise InputError(f"node property '{name}' must hold one value per node ({nodes}), "
                         f"found shape {values.shape}", source=where)
    if numeric and values.dtype.kind not in "iuf":
        raise InputError(f"node property '{name}' must be numbers, found dtype {values.dtype}",
                         source=where)
    missing = prop.get("missing")
    if missing is not None and np.asarray(missing).astype(bool).any():
        raise InputError(f"node property '{name}' is missing on some nodes", source=where)
    return values


@dataclass(frozen=True)
class Axis:
    """One entry of the metadata's ``axes``: a node property name, its type and unit."""

    name: str
    type: str | None
    unit: str | None


@dataclass(frozen=True)
class Metadata:
    """What this reader takes from a store's ``geff`` metadata, whatever its version."""

    version: str
    axes: tuple[Axis, ...]
    track_node_props: dict
    read_by: str  # "geff <version>" (the library validated it) or "trackverify"


def major_version(version) -> int | None:
    """The GEFF major version of a ``geff_version`` string (``"0.2.2.dev20+g61"`` -> 0), or
    None when it does not start with a number."""
    head = str(version).split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _group_attrs(group: Path) -> dict:
    """The store's attributes: ``.zattrs`` (zarr format 2) or ``zarr.json``'s
    ``attributes`` (format 3)."""
    if (group / ".zattrs").is_file():
        attrs = read_json(group / ".zattrs", what="zarr metadata file")
    else:
        attrs = read_json(group / "zarr.json", what="zarr metadata file").get("attributes", {})
    return attrs if isinstance(attrs, dict) else {}


def own_metadata(geff: dict, where: str) -> Metadata:
    """The metadata of a GEFF 0.2 to 0.x store, read here (the geff library >= 1.0 refuses
    them: it requires ``node_props_metadata`` and ``edge_props_metadata`` and forbids keys
    they had, e.g. ``affine``): ``geff_version``, ``axes`` (each ``name``, optional ``type``
    and ``unit``) and ``track_node_props``; every other key is ignored."""
    axes = geff.get("axes") or []
    if not isinstance(axes, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str)
                                             for a in axes):
        raise InputError("the GEFF metadata's 'axes' must be a list of objects with a 'name'",
                         source=where)
    for axis in axes:
        for key in ("type", "unit"):
            if axis.get(key) is not None and not isinstance(axis[key], str):
                raise InputError(f"the GEFF axis '{axis['name']}' has a {key} that is not text "
                                 f"({axis[key]!r})", source=where)
    track = geff.get("track_node_props") or {}
    if not isinstance(track, dict) or not all(isinstance(v, str) for v in track.values()):
        raise InputError("the GEFF metadata's 'track_node_props' must map 'tracklet' / "
                         "'lineage' to property names", source=where)
    return Metadata(str(geff.get("geff_version")),
                    tuple(Axis(a["name"], a.get("type"), a.get("unit")) for a in axes),
                    dict(track), "trackverify")


def library_metadata(geff: dict, where: str) -> Metadata:
    """The metadata of a GEFF >= 1.0 store, validated by the geff library's own schema
    (``geff.GeffMetadata``)."""
    library = require("geff", "formats", "reading GEFF")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # geff warns about unit names it does not know
            model = library.GeffMetadata.model_validate(geff)
    except Exception as exc:  # pydantic's ValidationError, value errors
        raise InputError(f"the geff package refuses this store's metadata ({type(exc).__name__}: "
                         f"{_first_line(exc)})", source=where) from exc
    axes = tuple(Axis(a.name, a.type, a.unit) for a in (model.axes or []))
    return Metadata(str(model.geff_version), axes, dict(model.track_node_props or {}),
                    f"geff {getattr(library, '__version__', '?')}")


def read_metadata(group: Path, where: str) -> Metadata:
    """The store's ``geff`` metadata: GEFF >= 1.0 through the geff library, 0.2 to 0.x here
    (:func:`own_metadata`); the first layout (0.1, flat attributes) is refused."""
    attrs = _group_attrs(group)
    if "geff" not in attrs and "geff_version" in attrs:
        raise InputError(f"GEFF {attrs['geff_version']} (flat attributes, position_attr) is the "
                         "first GEFF layout, which the geff package no longer reads; re-export "
                         "it with geff >= 0.2", source=where)
    geff = attrs.get("geff")
    if not isinstance(geff, dict):
        raise InputError("the store's 'geff' metadata is not an object", source=where)
    major = major_version(geff.get("geff_version"))
    if major is None:
        raise InputError(f"the GEFF metadata's geff_version {geff.get('geff_version')!r} is not "
                         "a version number", source=where)
    return own_metadata(geff, where) if major < 1 else library_metadata(geff, where)


def _node_props(root, names: list[str]) -> tuple[list[str], dict]:
    """The node property names the store holds, and ``values`` / ``missing`` of those of
    ``names`` it holds, as numpy arrays."""
    holder = root["nodes"]
    available = list(holder["props"].group_keys()) if "props" in holder else []
    props = {}
    for name in names:
        if name in available:
            prop = holder["props"][name]
            props[name] = {"values": prop["values"][...],
                           "missing": prop["missing"][...] if "missing" in prop else None}
    return available, props


def _read_graph(group: Path, names: list[str], where: str) -> tuple[np.ndarray, np.ndarray,
                                                                     list[str], dict]:
    """``(node ids, edge ids, available node property names, the properties of names)``
    read with zarr (the store was checked first: :func:`check_store`)."""
    zarr = require("zarr", "formats", "reading GEFF")
    try:
        root = zarr.open_group(str(group), mode="r")
        node_ids = np.asarray(root["nodes"]["ids"][...])
        edge_ids = np.asarray(root["edges"]["ids"][...])
        available, props = _node_props(root, names)
    except Exception as exc:  # zarr raises key / value / type errors for bad stores
        raise InputError(f"zarr cannot read this store ({type(exc).__name__}: "
                         f"{_first_line(exc)})", source=where) from exc
    return node_ids, edge_ids, available, props


def read(path: Path) -> Tracks:
    where = str(path)
    group = graph_group(path)
    if group is None:
        raise InputError("not a GEFF store (no .zattrs with geff metadata here or in tracks/)",
                         source=where)
    check_store(group)
    metadata = read_metadata(group, where)
    axes = list(metadata.axes)
    time_axes = [a.name for a in axes if _axis_type(a) == "time"]
    space_axes = [a for a in axes if _axis_type(a) == "space"]
    track_props = metadata.track_node_props
    track_prop = track_props.get("tracklet") or track_props.get("lineage") or "track_id"
    wanted = list(dict.fromkeys([a.name for a in axes] + [*FRAME_PROPS, track_prop]))
    node_ids, edge_ids, available, props = _read_graph(group, wanted, where)
    frame_prop = next((p for p in FRAME_PROPS if p in available), None)
    if not time_axes or not space_axes:
        raise InputError("the GEFF metadata must declare a time axis and space axes", source=where)
    if node_ids.ndim != 1 or node_ids.dtype.kind not in "iuf":  # (float ids: found in real files)
        raise InputError(f"the node ids must be a 1-D array of numbers, found {node_ids.dtype} "
                         f"{node_ids.shape}", source=where)
    if edge_ids.size == 0:
        edge_ids = edge_ids.reshape(0, 2).astype(node_ids.dtype)
    if edge_ids.ndim != 2 or edge_ids.shape[1] != 2 or edge_ids.dtype.kind not in "iuf":
        raise InputError(f"the edge ids must be an (edges, 2) array of node ids, found "
                         f"{edge_ids.dtype} {edge_ids.shape}", source=where)
    frame_name = frame_prop if frame_prop in props else time_axes[0]
    frames = node_frames(_values(props, frame_name, where, len(node_ids)), where, frame_name)
    table = pd.DataFrame({"node": node_ids, "frame": frames})
    units = []
    for axis in space_axes:
        key = _axis_key(axis.name)
        if key is None or key in table.columns:
            raise InputError(f"cannot tell which of x, y, z the space axis '{axis.name}' is",
                             source=where)
        table[key] = _values(props, axis.name, where, len(node_ids)).astype(np.float64)
        units.append(axis.unit)
    if "z" in table.columns and (table["z"] == 0).all():
        table = table.drop(columns="z")
    index = pd.Index(node_ids)
    if not index.is_unique:
        raise InputError("two nodes share an id", source=where)
    src = index.get_indexer(edge_ids[:, 0])
    dst = index.get_indexer(edge_ids[:, 1])
    if (src < 0).any() or (dst < 0).any():
        raise InputError("a link names a node that is not in the graph", source=where)
    track, parent, merges = tracklets(table["frame"].to_numpy(), src, dst, where)
    table["track"] = track
    table["parent_track"] = parent
    if merges is not None:
        table["merge_parents"] = merges
    if track_prop in props:
        table["source_track"] = _values(props, track_prop, where, len(node_ids), numeric=False)
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    factors = [UNIT_TO_UM.get(str(u).lower()) if u is not None else None for u in units]
    calibrated = all(f is not None for f in factors)
    by_axis = {_axis_key(a.name): f for a, f in zip(space_axes, factors)}
    calibration = Calibration(
        str(units[0]) if calibrated else "pixel",
        tuple(by_axis[k] for k in "xyz" if k in table.columns) if calibrated else None,
        f"GEFF axes units {units}")
    details = {"geff_version": metadata.version, "metadata_read_by": metadata.read_by,
               "graph_group": str(group),
               "nodes": int(len(node_ids)), "links": int(len(edge_ids)),
               "frame_from": frame_name, "tracklets": int(table["track"].nunique())}
    return Tracks(table, calibration, details)
