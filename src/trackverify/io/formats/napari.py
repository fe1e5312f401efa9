"""napari Tracks-layer CSV: header ``ID,t,y,x`` (2-D) or ``ID,t,z,y,x`` (3-D), + graph JSON.

Read: ``track = ID``, ``frame = t``, positions from ``x, y[, z]``. Columns after these (a
layer's ``properties`` or ``features`` written beside the data) are not read; they are
listed in the manifest (``ignored_columns``). The napari ``graph``
(``{child_id: [parent_id, ...]}``) is read from ``<name>.graph.json`` or ``graph.json``
beside the CSV (the first that exists; recorded in the manifest): ``parent_track`` is the
first listed parent (null when none) and ``merge_parents`` lists them all when a track has
several. Ids and frames written as floats (``1.0``) must be whole numbers. Units are pixels
(napari CSVs carry no calibration): give ``--pixel-size``. The JSON is refused above
:data:`MAX_GRAPH_BYTES`, nested too deeply, or when it is not a regular file
(:func:`trackverify.io.bounded.read_json`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import read_json
from trackverify.io.formats import Calibration, Tracks
from trackverify.io.tabular import read_table

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
    for candidate in (path.with_suffix(".graph.json"), path.parent / "graph.json"):
        if candidate.exists():  # a FIFO or a folder is refused by read_graph, not skipped
            return candidate
    return None


def _whole(values: pd.Series, column: str, where: str) -> np.ndarray:
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(numeric) | (numeric != np.round(numeric))
    if bad.any():
        raise InputError("expected a whole number", source=where, column=column,
                         row=int(np.flatnonzero(bad)[0]) + 1)
    return numeric.astype(np.int64)


def read_graph(path: Path) -> dict[int, list[int]]:
    where = str(path)
    data = read_json(path, max_bytes=MAX_GRAPH_BYTES, what="graph JSON")
    if not isinstance(data, dict):
        raise InputError("the graph must be an object {child: [parents]}", source=where)
    graph: dict[int, list[int]] = {}
    for child, parents in data.items():
        parents = parents if isinstance(parents, list) else [parents]
        try:
            graph[int(float(child))] = [int(float(p)) for p in parents]
        except (TypeError, ValueError):
            raise InputError(f"track {child!r}: ids must be numbers", source=where) from None
    return graph


def read(path: Path) -> Tracks:
    where = str(path)
    raw = read_table(path)
    header = [str(c) for c in raw.columns]
    if layout(header) is None:
        raise InputError(f"a napari tracks CSV's header starts ID,t,y,x or ID,t,z,y,x; found "
                         f"{','.join(header)}", source=where)
    table = pd.DataFrame({"frame": _whole(raw["t"], "t", where),
                          "track": _whole(raw["ID"], "ID", where)})
    for axis in ("x", "y", "z"):
        if axis in layout(header):
            table[axis] = pd.to_numeric(raw[axis], errors="coerce")
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
