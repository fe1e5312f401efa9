"""GEFF (Graph Exchange File Format) zarr stores, read with the ``geff`` package.

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

Versions: the pinned ``geff`` (extra ``formats``) reads metadata under the ``geff`` key,
i.e. GEFF 0.2 (``props``) up to 1.1. The first layout (GEFF 0.1, flat attributes with
``position_attr``) is refused with a message saying so.

Safety: before zarr opens the store, :func:`check_store` refuses special files (a FIFO chunk
would block), links out of the store (a chunk linked to ``/etc/passwd`` or another input),
metadata JSON above 64 MiB or nested too deeply, and arrays declaring more than
:data:`MAX_ARRAY_BYTES` whole or per chunk (a chunk bomb, a decompression bomb).
"""

from __future__ import annotations

import math
import os
import warnings
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


def read(path: Path) -> Tracks:
    where = str(path)
    group = graph_group(path)
    if group is None:
        raise InputError("not a GEFF store (no .zattrs with geff metadata here or in tracks/)",
                         source=where)
    check_store(group)
    attrs = read_json(group / ".zattrs") if (group / ".zattrs").is_file() else {}
    if "geff" not in attrs and "geff_version" in attrs:
        raise InputError(f"GEFF {attrs['geff_version']} (flat attributes, position_attr) is the "
                         "first GEFF layout, which the geff package no longer reads; re-export "
                         "it with geff >= 0.2", source=where)
    require("geff", "formats", "reading GEFF")
    reader_module = require("geff.geff_reader", "formats", "reading GEFF")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # geff warns about unit names it does not know
            reader = reader_module.GeffReader(str(group))
            metadata = reader.metadata
            axes = list(metadata.axes or [])
            time_axes = [a.name for a in axes if _axis_type(a) == "time"]
            space_axes = [a for a in axes if _axis_type(a) == "space"]
            available = set(reader.node_prop_names) if hasattr(reader, "node_prop_names") else None
            frame_prop = next((p for p in FRAME_PROPS if available is None or p in available), None)
            track_props = dict(getattr(metadata, "track_node_props", None) or {})
            track_prop = track_props.get("tracklet") or track_props.get("lineage") or "track_id"
            wanted = [a.name for a in axes] + [p for p in (frame_prop, track_prop) if p]
            names = [p for p in dict.fromkeys(wanted) if available is None or p in available]
            reader.read_node_props(names)
            graph = reader.build()
    except InputError:
        raise
    except Exception as exc:  # geff raises pydantic / zarr / value errors for bad stores
        raise InputError(f"the geff package cannot read this store ({type(exc).__name__}: "
                         f"{_first_line(exc)})", source=where) from exc
    if not time_axes or not space_axes:
        raise InputError("the GEFF metadata must declare a time axis and space axes", source=where)
    props = graph["node_props"]
    node_ids = np.asarray(graph["node_ids"])
    edge_ids = np.asarray(graph["edge_ids"])
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
    details = {"geff_version": str(metadata.geff_version), "graph_group": str(group),
               "nodes": int(len(node_ids)), "links": int(len(edge_ids)),
               "frame_from": frame_name, "tracklets": int(table["track"].nunique())}
    return Tracks(table, calibration, details)
