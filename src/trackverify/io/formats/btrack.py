"""btrack HDF5 (``HDF5FileHandler`` output): ``objects/obj_type_1`` + ``tracks/obj_type_1``.

Read: ``objects/<type>/coords`` rows ``[t, x, y, z, dummy]``; ``tracks/<type>/tracks`` the
concatenated object indices of every tracklet, sliced by ``tracks/<type>/map`` (start, end);
``LBEPR`` rows ``label, begin, end, parent, root, generation``. Negative indices in
``tracks`` are btrack's *dummy* objects (positions it interpolated over a gap, not
detections) and are not read. ``track = label``; ``parent_track = parent`` unless the
parent is the track itself (btrack's "no parent"); ``root`` and ``generation`` are kept.
The object type is the only ``obj_type_*`` group, else ``obj_type_1``. 2-D when every z is 0.
Units are pixels (no calibration in the file): give ``--pixel-size``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.io.formats.graph import node_frames
from trackverify.io.formats.hdf5 import dataset, has, is_hdf5, numbers, open_h5


def sniff(path: Path) -> bool:
    if not is_hdf5(path):
        return False
    with open_h5(path, "reading btrack HDF5") as h5:
        return has(h5, "objects") and has(h5, "tracks")


def _object_type(h5, where: str) -> str:
    names = sorted(n for n in dataset(h5, "tracks") if n.startswith("obj_type_"))
    if not names:
        raise InputError("no tracks/obj_type_* group", source=where)
    return names[0] if len(names) == 1 else "obj_type_1"


def read(path: Path) -> Tracks:
    where = str(path)
    with open_h5(path, "reading btrack HDF5") as h5:
        kind = _object_type(h5, where)
        coords = numbers(h5, f"objects/{kind}/coords", 2)
        order = numbers(h5, f"tracks/{kind}/tracks", 1, integer=True)
        spans = numbers(h5, f"tracks/{kind}/map", 2, integer=True)
        lbepr = numbers(h5, f"tracks/{kind}/LBEPR", 2, integer=True)
        version = dataset(h5, f"tracks/{kind}").attrs.get("version")
    if coords.ndim != 2 or coords.shape[1] < 4:
        raise InputError(f"objects/{kind}/coords must have rows [t, x, y, z, ...]", source=where)
    if spans.shape != (len(lbepr), 2) or lbepr.ndim != 2 or lbepr.shape[1] < 4:
        raise InputError(f"tracks/{kind}/map and LBEPR disagree", source=where)
    lengths = spans[:, 1] - spans[:, 0]
    if (lengths < 0).any() or (spans < 0).any() or (spans > len(order)).any():
        raise InputError(f"tracks/{kind}/map points outside tracks/{kind}/tracks", source=where)
    if int(lengths.sum()) > len(order):  # each entry is in one track (10^5 spans of all of
        # 10^5 entries, a 2.4 MB file, asked for 80 GB)
        raise InputError(f"tracks/{kind}/map spans {int(lengths.sum())} entries of "
                         f"tracks/{kind}/tracks, which holds {len(order)}: the spans overlap",
                         source=where)
    which = np.repeat(np.arange(len(spans)), lengths)
    position = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    index = order[np.repeat(spans[:, 0], lengths) + position]
    real = index >= 0
    which, index = which[real], index[real]
    if (index >= len(coords)).any():
        raise InputError(f"tracks/{kind}/tracks names an object beyond objects/{kind}/coords",
                         source=where)
    frames = node_frames(coords[index, 0], where, f"objects/{kind}/coords t")
    label = lbepr[which, 0]
    parent = lbepr[which, 3]
    table = pd.DataFrame({"frame": frames, "track": label,
                          "x": coords[index, 1], "y": coords[index, 2], "z": coords[index, 3],
                          "node": index})
    no_parent = (parent == label) | (parent <= 0)
    table["parent_track"] = parent_ids(parent, no_parent)
    if lbepr.shape[1] >= 6:
        table["root"] = lbepr[which, 4]
        table["generation"] = lbepr[which, 5]
    if (table["z"] == 0).all():
        table = table.drop(columns="z")
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    details = {"btrack_version": None if version is None else str(version),
               "object_type": kind, "tracks": int(len(lbepr)),
               "tracks_with_parent": int(((lbepr[:, 3] != lbepr[:, 0]) & (lbepr[:, 3] > 0)).sum()),
               "dummy_objects_skipped": int((~real).sum())}
    return Tracks(table, Calibration("pixel", None, "none (btrack files carry no pixel size)"),
                  details)
