"""MOTChallenge-style text: one comma- (or space-) separated line of numbers per detection.

* 4 or 5 values: ``frame, id, x, y[, z]`` (point trackers);
* 6 or more: MOTChallenge boxes ``frame, id, bb_left, bb_top, bb_width, bb_height[, conf,
  x, y, z]``; the point is the box centre ``(bb_left + bb_width / 2, bb_top + bb_height / 2)``
  and ``conf`` is kept as ``confidence``.

No header (a first line that is not numbers is refused with the expected layout). Frames
are kept as written (MOTChallenge counts from 1; the anchor is each recording's first
frame). Units are pixels: give ``--pixel-size``. No parent links.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids

NUMBER = re.compile(r"^\s*-?\d+(\.\d*)?([eE][-+]?\d+)?\s*$")


def _separator(line: str) -> str:
    return "," if "," in line else r"\s+"


def _fields(line: str) -> list[str]:
    return [f for f in re.split(_separator(line), line.strip()) if f != ""]


def sniff(path: Path) -> bool:
    """Comma-separated numbers (space-separated ones need ``--format mot``: CTC track
    files are space-separated too)."""
    if not path.is_file():
        return False
    with open(path, encoding="utf-8", errors="replace") as handle:
        line = handle.readline(4096)
    if "," not in line:
        return False
    parts = _fields(line)
    return len(parts) >= 4 and all(NUMBER.match(p) for p in parts)


def read(path: Path) -> Tracks:
    where = str(path)
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        first = handle.readline(4096)
    parts = _fields(first)
    if len(parts) < 4 or not all(NUMBER.match(p) for p in parts):
        raise InputError("a MOTChallenge-style file has no header: lines of frame,id,x,y[,z] "
                         "or frame,id,bb_left,bb_top,bb_width,bb_height[,...]", source=where, row=1)
    try:
        raw = pd.read_csv(path, sep=_separator(first), header=None, engine="python",
                          skipinitialspace=True)
    except (pd.errors.ParserError, ValueError) as exc:
        raise InputError(f"not a readable MOTChallenge-style file ({exc})", source=where) from exc
    values = raw.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise InputError("expected a number", source=where, column=str(column + 1), row=int(row) + 1)
    ids = values[:, :2]  # read as float64: exact below 2^53 only (2^53 + 1 became 2^53)
    whole = (ids != np.round(ids)) | (np.abs(ids) >= 2.0**53)
    if whole.any():
        row, column = np.argwhere(whole)[0]
        raise InputError(f"frame and id must be whole numbers below 2^53, found "
                         f"{str(raw.iat[row, column])!r}", source=where,
                         column=("frame", "id")[column], row=int(row) + 1)
    table = pd.DataFrame({"frame": values[:, 0].astype(np.int64),
                          "track": values[:, 1].astype(np.int64)})
    width = values.shape[1]
    if width in (4, 5):
        layout = "points"
        table["x"], table["y"] = values[:, 2], values[:, 3]
        if width == 5:
            table["z"] = values[:, 4]
    else:
        layout = "boxes"
        table["x"] = values[:, 2] + values[:, 4] / 2
        table["y"] = values[:, 3] + values[:, 5] / 2
        if width >= 7:
            table["confidence"] = values[:, 6]
    table["parent_track"] = parent_ids(None, length=len(table))
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    return Tracks(table, Calibration("pixel", None, "none (MOTChallenge text carries no pixel size)"),
                  {"layout": layout, "values_per_line": int(width)})
