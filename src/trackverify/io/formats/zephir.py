"""ZephIR ``annotations.h5`` (+ ``worldlines.h5`` names, ``metadata.json`` volume shape).

``annotations.h5`` holds one dataset per column: ``t_idx`` (frame), ``worldline_id``
(identity), ``x, y, z`` (fractions 0..1 of the volume's extent in x, y, z), ``id``,
``parent_id`` (ZephIR's annotation bookkeeping, not a division) and ``provenance`` (4
bytes: ``ZEIR`` = ZephIR's tracking, ``ANTT`` = a manual annotation).

Read: ``track = worldline_id``; positions in voxels ``x = x_fraction * shape_x`` (likewise
y, z) with ``shape_x, shape_y, shape_z`` from ``metadata.json`` (the file's folder or its
parent, since ZephIR keeps annotation backups in ``backup/``); ``provenance`` is kept as
text; ``name`` comes from ``worldlines.h5`` (``id`` -> ``name``; ZephIR's ``"null"`` is
null); ``id`` is kept as ``node`` and ``parent_id`` as ``zephir_parent_id``. There are no
divisions (``parent_track`` is null). The voxel size is not in these files: give
``--pixel-size X,Y,Z``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import companion, read_json
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.io.formats.hdf5 import array, has, is_hdf5, numbers, open_h5

COLUMNS = ("t_idx", "worldline_id", "x", "y", "z", "provenance")
INTEGER_COLUMNS = ("t_idx", "worldline_id", "id", "parent_id")


def annotations_file(path: Path) -> Path:
    return path / "annotations.h5" if path.is_dir() else path


def sniff(path: Path) -> bool:
    path = annotations_file(path)
    if not is_hdf5(path):
        return False
    with open_h5(path, "reading ZephIR annotations") as h5:
        return all(has(h5, c) for c in COLUMNS)


def _beside(path: Path, name: str) -> Path | None:
    # the first that has the name, beside the file or one folder up; a FIFO, a folder or a
    # link out of its folder there is refused by name (companion), not skipped or followed
    return companion(path.parent / name, path.parent.parent / name, what=name)


def _text(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "S":
        return np.char.decode(values, "utf-8", "replace").astype(object)
    return values.astype(str).astype(object)


def read(path: Path) -> Tracks:
    path = annotations_file(path)
    where = str(path)
    with open_h5(path, "reading ZephIR annotations") as h5:
        missing = [c for c in COLUMNS if not has(h5, c)]
        if missing:
            raise InputError(f"not a ZephIR annotation file: no dataset(s) {missing}", source=where)
        data = {c: numbers(h5, c, 1, integer=c in INTEGER_COLUMNS) for c in COLUMNS
                if c != "provenance"}
        data["provenance"] = array(h5, "provenance")
        if data["provenance"].ndim != 1:
            raise InputError(f"'provenance' must be a 1-D array, found shape "
                             f"{data['provenance'].shape}", source=where)
        for extra in ("id", "parent_id"):
            if has(h5, extra):
                data[extra] = numbers(h5, extra, 1, integer=True)
    lengths = {c: len(v) for c, v in data.items()}
    if len(set(lengths.values())) != 1:
        raise InputError(f"the datasets have different lengths {lengths}", source=where)
    metadata_path = _beside(path, "metadata.json")
    if metadata_path is None:
        raise InputError("ZephIR positions are fractions of the volume: metadata.json (with "
                         "shape_x, shape_y, shape_z) must be beside the file or one folder up",
                         source=where)
    try:
        metadata = read_json(metadata_path, what="metadata.json")
        shape = tuple(float(metadata[f"shape_{a}"]) for a in "xyz")
    except InputError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"metadata.json needs numbers shape_x, shape_y, shape_z ({exc})",
                         source=str(metadata_path)) from exc
    table = pd.DataFrame({"frame": data["t_idx"].astype(np.int64),
                          "track": data["worldline_id"].astype(np.int64)})
    for axis, size in zip("xyz", shape):
        table[axis] = data[axis].astype(np.float64) * size
    table["parent_track"] = parent_ids(None, length=len(table))
    table["provenance"] = _text(data["provenance"])
    if "id" in data:
        table["node"] = data["id"].astype(np.int64)
    if "parent_id" in data:
        table["zephir_parent_id"] = data["parent_id"].astype(np.int64)
    worldlines = _beside(path, "worldlines.h5")
    if worldlines is not None:
        with open_h5(worldlines, "reading ZephIR worldlines") as h5:
            if has(h5, "id") and has(h5, "name"):
                ids, name = numbers(h5, "id", 1, integer=True), array(h5, "name")
                if name.shape != ids.shape:
                    raise InputError(f"'name' must hold one name per 'id' ({len(ids)}), found "
                                     f"shape {name.shape}", source=str(worldlines))
                names = pd.Series(_text(name), index=ids)
                names = names.where(names != "null")
                table["name"] = table["track"].map(names[~names.index.duplicated()])
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    provenance = table["provenance"].value_counts().sort_index()
    details = {"metadata_file": str(metadata_path), "volume_shape_xyz": list(shape),
               "worldlines_file": None if worldlines is None else str(worldlines),
               "provenance_counts": {str(k): int(v) for k, v in provenance.items()}}
    return Tracks(table, Calibration("voxel", None,
                                     "none (ZephIR files give fractions of the volume; voxels here)"),
                  details)
