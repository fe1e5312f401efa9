"""3DeeCellTracker (WenChentao/3DeeCellTracker): ``track_information/tracked_coordinates.csv``.

Written by ``Tracker.save_coordinates`` (``CellTracker/tracker.py`` @
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

Not read: the later layout ``t,cell,x,y,z,phenotypes`` (z divided by ``z_xy_ratio``, in
slices), whose writer's repository was not identified (read it as a table: ``--format table
--columns frame=t,track=cell,x_um=x,y_um=y,z_um=z --pixel-size X,Y,Z``), and version 1's
``track_results/coords_real/coords%06d.npy`` (docs/formats.md says why).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.formats import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.io.formats.trackmate import MAX_BYTES

HEADER = ["cell", "t", "x(row)", "y(column)", "z(interpolated)"]


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        return [h.strip() for h in handle.readline(4096).strip().split(",")]


def sniff(path: Path) -> bool:
    return path.is_file() and _header(path) == HEADER


def read(path: Path) -> Tracks:
    from trackverify.io.tabular import read_table

    where = str(path)
    if path.stat().st_size > MAX_BYTES:
        raise InputError(f"the CSV file is larger than {MAX_BYTES} bytes", source=where)
    raw = read_table(path)
    if [str(c) for c in raw.columns] != HEADER:
        raise InputError(f"a 3DeeCellTracker tracked_coordinates.csv has the header "
                         f"{','.join(HEADER)}; found {','.join(map(str, raw.columns))}", source=where)
    if raw.empty:
        raise InputError("the table has a header and no rows", source=where)
    values = raw.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    bad[:, :2] |= np.isfinite(values[:, :2]) & (values[:, :2] != np.round(values[:, :2]))
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise InputError(f"expected a {'whole' if column < 2 else 'finite'} number, found "
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
    return Tracks(table, calibration, {"cells": int(table["track"].nunique()),
                                       "volumes": int(table["frame"].nunique())})
