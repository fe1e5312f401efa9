"""3DeeCellTracker (WenChentao/3DeeCellTracker): the legacy ``tracked_coordinates.csv`` and
version 1's ``track_results/coords_real/coords%06d.npy``.

**Legacy CSV**, ``track_information/tracked_coordinates.csv``, written by ``Tracker.save_coordinates`` (``CellTracker/tracker.py`` @
55a572c0ec5707c9e50dedb09b2d5f81aec29b27): ``np.savetxt`` of the stacked
``(t, cell, x, y, z)`` of every cell tracked from volume 1 at every volume, ``,`` between
values, ``%.18e`` numbers, under the header line ``cell,t,x(row),y(column),z(interpolated)``.
The header's first two names are swapped: the first column is the volume ``t``
(``np.repeat(arange(1, t + 1), cell)``) and the second the cell (``np.tile(arange(1, cell
+ 1), t)``), both from 1; they are read as the writer fills them (``frame = t``, ``track =
cell``), and errors name the columns as the header does. No parent links (the tracker
follows the cells of volume 1; no divisions).

Units: ``x`` (image row) and ``y`` (column) are pixels and ``z`` is "interpolated ... with
the same unit as x and y" (the writer's docstring): one ``--pixel-size`` value (µm per x-y
pixel) applies to all three axes. A value that is not a finite number is refused (the writer
stores every cell at every volume).

**Version 1** (``TrackerLite``), a folder ``coords_real`` (or a results folder holding
``track_results/coords_real``): one ``coords%06d.npy`` per volume (``coords%04d.npy`` in
earlier commits), written by ``np.save(..., coords.real)`` in
``CoordsToImageTransformer.save_tracking_results`` and ``interpolate`` (volume 1)
(``CellTracker/coord_image_transformer.py`` @ 052322e4b099b67493f152d40dafa2857fb2e981 and
the ``%06d`` version of the same file). Each is an ``(n, 3)`` array; row ``i`` is the cell
labelled ``i + 1`` at volume 1 (``center_of_mass`` over labels ``1..max``), a lost cell keeps
its previous position, and ``Coordinates.real`` is the voxel index times the ``voxel_size``
given to the tracker. Read: ``frame`` = the volume in the file name, ``track = i + 1``. The
files do not say the unit of ``voxel_size``: the coordinates are taken as micrometres (with
the warning) unless ``--pixel-size`` says what one unit is. Arrays are read with
``numpy.load(allow_pickle=False)`` after their header is checked against the file size.

Not read: the later CSV layout ``t,cell,x,y,z,phenotypes`` (z divided by ``z_xy_ratio``, in
slices), whose writer's repository was not identified (read it as a table: ``--format table
--columns frame=t,track=cell,x_um=x,y_um=y,z_um=z --pixel-size X,Y,Z``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import NPY_LOAD_ERRORS, check_npy, check_size
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.io.formats.trackmate import MAX_BYTES

HEADER = ["cell", "t", "x(row)", "y(column)", "z(interpolated)"]
COORDS_FILE = re.compile(r"^coords(\d{4}|\d{6})\.npy$")


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        return [h.strip() for h in handle.readline(4096).strip().split(",")]


def coords_folder(path: Path) -> Path | None:
    """The ``coords_real`` folder of version 1 that ``path`` is or holds, if any."""
    for folder in (path, path / "track_results" / "coords_real"):
        if folder.is_dir() and any(COORDS_FILE.match(p.name) for p in folder.iterdir()):
            return folder
    return None


def sniff(path: Path) -> bool:
    if path.is_dir():
        return coords_folder(path) is not None
    return path.is_file() and _header(path) == HEADER


def _read_coords(folder: Path) -> pd.DataFrame:
    files = sorted((int(COORDS_FILE.match(p.name).group(1)), p) for p in folder.iterdir()
                   if COORDS_FILE.match(p.name))
    volumes = [t for t, _ in files]
    if len(set(volumes)) < len(volumes):
        t = next(t for t, u in zip(volumes, volumes[1:]) if t == u)
        raise InputError(f"two files hold volume {t} (coords%04d and coords%06d names)", source=str(folder))
    arrays = []
    for _, path in files:  # one file per volume
        try:
            array = np.load(check_npy(path), allow_pickle=False)
        except NPY_LOAD_ERRORS as exc:
            raise InputError(f"cannot read a numpy array ({' '.join(str(exc).split())})",
                             source=str(path)) from None
        shaped = isinstance(array, np.ndarray) and array.ndim == 2 and array.shape[1] == 3 \
            and array.dtype.kind in "iuf"
        if not shaped or (arrays and len(array) != len(arrays[0])):
            raise InputError(f"expected a numeric (cells, 3) array like the first volume's, got "
                             f"{getattr(array, 'dtype', type(array).__name__)} "
                             f"{getattr(array, 'shape', '')}", source=str(path))
        if not np.isfinite(array).all():
            row = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
            raise InputError("a coordinate is not a finite number", source=str(path), row=row + 1)
        arrays.append(array.astype(np.float64))
    cells = len(arrays[0])
    points = np.concatenate(arrays)
    return pd.DataFrame({"frame": np.repeat(volumes, cells).astype(np.int64),
                         "track": np.tile(np.arange(1, cells + 1), len(arrays)),
                         "x": points[:, 0], "y": points[:, 1], "z": points[:, 2]})


def read(path: Path) -> Tracks:
    folder = coords_folder(path) if path.is_dir() else None
    if path.is_dir():
        if folder is None:
            raise InputError("no coords_real folder of coords%06d.npy files", source=str(path))
        table = _read_coords(folder)
        table["parent_track"] = parent_ids(None, length=len(table))
        calibration = Calibration("3DeeCellTracker voxel_size units", None,
                                  "none (coords_real = voxel index x the tracker's voxel_size, "
                                  "whose unit the files do not say)")
        return Tracks(table, calibration, {"layout": "coords_real (version 1)", "folder": str(folder),
                                           "cells": int(table["track"].nunique()),
                                           "volumes": int(table["frame"].nunique())})
    return _read_csv(path)


def _read_csv(path: Path) -> Tracks:
    from trackverify.io.tabular import read_table

    where = str(path)
    check_size(path, MAX_BYTES, "CSV file")
    raw = read_table(path)
    if [str(c) for c in raw.columns] != HEADER:
        raise InputError(f"a 3DeeCellTracker tracked_coordinates.csv has the header "
                         f"{','.join(HEADER)}; found {','.join(map(str, raw.columns))}", source=where)
    if raw.empty:
        raise InputError("the table has a header and no rows", source=where)
    values = raw.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    ids = values[:, :2]
    bad[:, :2] |= np.isfinite(ids) & ((ids != np.round(ids)) | (np.abs(ids) >= 2.0**53))
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise InputError(f"expected a {'whole (below 2^53)' if column < 2 else 'finite'} number, found "
                         f"{str(raw.iat[row, column])!r}", source=where, column=HEADER[column],
                         row=int(row) + 1)
    table = pd.DataFrame({"frame": values[:, 0].astype(np.int64),
                          "track": values[:, 1].astype(np.int64),
                          "x": values[:, 2], "y": values[:, 3], "z": values[:, 4]})
    twice = table.duplicated(["frame", "track"]).to_numpy()
    if twice.any():
        row = int(np.flatnonzero(twice)[0])
        raise InputError(f"cell {table['track'][row]} appears twice in volume {table['frame'][row]}",
                         source=where, row=row + 1)
    table["parent_track"] = parent_ids(None, length=len(table))
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    calibration = Calibration("pixel", None, "none (3DeeCellTracker writes x-y pixels; z in the same unit)")
    return Tracks(table, calibration, {"layout": "tracked_coordinates.csv (legacy)",
                                       "cells": int(table["track"].nunique()),
                                       "volumes": int(table["frame"].nunique())})
