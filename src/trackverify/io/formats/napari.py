"""napari Tracks-layer CSV: header ``ID,t,y,x`` (2-D) or ``ID,t,z,y,x`` (3-D), + graph JSON.

Read: ``track = ID``, ``frame = t``, positions from ``x, y[, z]``. Columns after these (a
layer's ``properties`` or ``features`` written beside the data) are not read; they are
listed in the manifest (``ignored_columns``). The napari ``graph``
(``{child_id: [parent_id, ...]}``) is read from ``<name>.graph.json`` or ``graph.json``
beside the CSV (the first that exists; recorded in the manifest): ``parent_track`` is the
first listed parent (null when none) and ``merge_parents`` lists them all when a track has
several. Ids and frames must be whole numbers below 2^53 (written ``7`` or ``7.0``; larger ones
would be rounded in float64, two ids becoming one), positions finite numbers read as float64
(a decimal becomes the nearest double); a cell that is not (text, ``True``, ``nan``, ``inf``,
``1.5`` as an id) is an error naming the file, the column and the row
(:func:`trackverify.io.tabular.cell_numbers`). The graph's ids follow the same rule: JSON
integers, or keys / numbers that are whole numbers below 2^53 (``"2"``, ``2.0``), never
booleans. Units are pixels (napari CSVs carry no calibration): give ``--pixel-size``. The JSON
is refused above :data:`MAX_GRAPH_BYTES`, nested too deeply, or when it is not a regular
file (:func:`trackverify.io.bounded.read_json`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import companion, read_json
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.tabular import cell_numbers, read_table

HEADERS = (["ID", "t", "y", "x"], ["ID", "t", "z", "y", "x"])
MAX_GRAPH_BYTES = 64 * 1024**2


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        return [h.strip() for h in handle.readline(4096).strip().split(",")]


def layout(names: list[str]) -> list[str] | None:
    """The napari header ``names`` start with (3-D first), or None."""
    return next((h for h in reversed(HEADERS) if names[:len(h)] == h), None)


def sniff(path: Path) -> bool:
    return path.is_file() and layout(_header(path)) is not None


def graph_file(path: Path) -> Path | None:
    # anything under the name that is not a regular file in the folder is refused, not skipped
    return companion(path.with_suffix(".graph.json"), path.parent / "graph.json",
                     what="graph JSON")


def _graph_id(value) -> int | None:
    """A graph id (a JSON key, or a number in a parent list) as the int it names exactly, or
    None when it is not a whole number below 2^53 (a boolean, 1.5, "abc", 2^53)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (np.isfinite(value) and value.is_integer()):
        return None
    return int(value) if abs(value) < 2**53 else None


def read_graph(path: Path) -> dict[int, list[int]]:
    where = str(path)
    data = read_json(path, max_bytes=MAX_GRAPH_BYTES, what="graph JSON")
    if not isinstance(data, dict):
        raise InputError("the graph must be an object {child: [parents]}", source=where)
    graph: dict[int, list[int]] = {}
    for child, parents in data.items():
        parents = parents if isinstance(parents, list) else [parents]
        ids = [_graph_id(v) for v in (child, *parents)]
        if None in ids:
            bad = (child, *parents)[ids.index(None)]
            raise InputError(f"track {child!r}: ids must be whole numbers below 2^53, found "
                             f"{bad!r}", source=where)
        graph[ids[0]] = ids[1:]
    return graph


def read(path: Path) -> Tracks:
    where = str(path)
    raw = read_table(path)
    header = [str(c) for c in raw.columns]
    if layout(header) is None:
        raise InputError(f"a napari tracks CSV's header starts ID,t,y,x or ID,t,z,y,x; found "
                         f"{','.join(header)}", source=where)
    table = pd.DataFrame({
        "frame": cell_numbers(raw, "t", where, whole=True).astype(np.int64),
        "track": cell_numbers(raw, "ID", where, whole=True).astype(np.int64)})
    for axis in ("x", "y", "z"):
        if axis in layout(header):
            table[axis] = cell_numbers(raw, axis, where)
    graph_path = graph_file(path)
    graph = read_graph(graph_path) if graph_path is not None else {}
    first_parent = {c: p[0] for c, p in graph.items() if p}
    table["parent_track"] = pd.array(table["track"].map(first_parent), dtype="Int64")
    several = {c: p for c, p in graph.items() if len(p) > 1}
    if several:
        table["merge_parents"] = table["track"].map(
            {c: ";".join(str(v) for v in p) for c, p in several.items()})
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    details = {"graph_file": None if graph_path is None else str(graph_path),
               "ignored_columns": header[len(layout(header)):],
               "tracks": int(table["track"].nunique()), "tracks_with_parent": len(graph)}
    return Tracks(table, Calibration("pixel", None, "none (napari CSVs carry no pixel size)"),
                  details)
