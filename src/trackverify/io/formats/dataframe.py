"""The pandas DataFrames Python trackers return, written to CSV or Parquet in their own layout.

One reader, four *dialects*, each registered under its own ``--format`` name and told apart
by the header alone (:data:`DIALECTS`, :func:`dialect_of`: the first line of a CSV, at most
:data:`~trackverify.io.tabular.MAX_HEADER_LINE` characters, or a Parquet file's schema). A
leading unnamed column (the index ``DataFrame.to_csv`` writes) is ignored. Every cell is read
as text and checked (:func:`~trackverify.io.tabular.cell_numbers`): an id or frame that is
not a whole number, or a position that is not a finite number, is refused naming the file,
the column and the row. Units are pixels (none of these files carries a pixel size): give
``--pixel-size``. Columns the dialect does not name are ignored (listed in the manifest).

* ``trackpy``: ``trackpy.locate`` / ``batch`` columns ``y, x, mass, size, ecc, signal,
  raw_mass, ep, frame`` (``z`` before ``y`` in 3-D), ``link`` adds ``particle``
  (soft-matter/trackpy, ``trackpy/feature.py`` and the walkthrough; pixels, ``x`` the
  column axis). ``track = particle``, ``frame = frame``; no lineage.
* ``laptrack``: ``LapTrack.predict_dataframe`` returns ``track_df, split_df, merge_df``;
  ``track_df`` is the input DataFrame (``frame`` and the coordinate columns the user chose)
  plus ``track_id`` and ``tree_id`` (integers from 0), ``split_df`` / ``merge_df`` hold
  ``parent_track_id, child_track_id`` (yfukai/laptrack, ``src/laptrack/data_conversion.py``
  ``tree_to_dataframe`` @ 03fc461b6b69e853327dd639536a3b9cb7bd3889). Positions are
  ``position_x, position_y[, position_z]`` (laptrack's examples) or ``x, y[, z]``.
  laptrack writes no files, so the split and merge tables are looked for beside the track
  table as ``<name>_split.csv`` / ``<name>_merge.csv`` (``.parquet`` for a Parquet table), or
  ``split_df.csv`` / ``merge_df.csv``; ``parent_track`` is a child's parent (with a merge
  the smallest parent, all of them in ``merge_parents``). ``tree_id`` is kept as
  ``source_track``.
* ``ultrack``: ``to_tracks_layer`` returns ``track_id, t, [z,] y, x`` then ``id``,
  ``parent_track_id``, ``parent_id`` (royerlab/ultrack,
  ``ultrack/core/export/tracks_layer.py`` @ 79e2553e1efaea1320e52804c9ef5a4951efe974;
  ``add_track_ids_to_tracks_df`` numbers tracks from 1 and writes ``NO_PARENT`` = -1 for a
  root). ``track = track_id``, ``frame = t``, ``parent_track = parent_track_id`` (null
  when -1); ``id`` is kept as ``node``.
* ``btrack_csv``: ``btrack.io.exporters.export_CSV`` writes, space-separated under the
  header ``constants.DEFAULT_EXPORT_PROPERTIES`` = ``ID t x y z parent root state
  generation dummy``, every tracklet's ``to_array`` (float32 values: ids as ``1.0``)
  (quantumjot/btrack, ``btrack/io/exporters.py`` @ 0c61b835b3b2468b8e8029d250499cca15ba6927,
  ``btrack/constants.py``); the same columns comma-separated (a DataFrame of
  ``Tracklet.to_dict``) are read too. As the HDF5 reader: ``track = ID``,
  ``parent_track = parent`` unless it is the track itself or <= 0 (btrack's "no parent"),
  ``root`` and ``generation`` kept, dummy (interpolated) rows (``dummy`` = 1, or ``True``
  in a DataFrame of ``Tracklet.to_dict``) not read,
  2-D when every ``z`` is 0.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import check_size, companion
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.io.formats.trackmate import MAX_BYTES
from trackverify.io.tabular import (cell_numbers, check_not_semicolons, header_line, read_table,
                                     text_cells)

PARQUET = (".parquet", ".pq")


@dataclass(frozen=True)
class Dialect:
    """A tracker's DataFrame layout: the columns that identify it and what each one is."""

    name: str
    signature: frozenset[str]  # every one of these names is in the header
    frame: str
    track: str
    axes: tuple[tuple[str, ...], ...]  # per axis x, y, z: the names it may have, in order
    parent: str | None = None
    node: str | None = None
    kept: tuple[tuple[str, str], ...] = ()  # (file column, table column) kept as whole numbers
    excludes: frozenset[str] = frozenset()  # none of these is in the header


PLAIN_AXES = (("x",), ("y",), ("z",))
DIALECTS = {d.name: d for d in (
    Dialect("trackpy", frozenset({"frame", "particle", "x", "y"}), "frame", "particle", PLAIN_AXES),
    Dialect("laptrack", frozenset({"frame", "track_id", "tree_id"}), "frame", "track_id",
            (("position_x", "x"), ("position_y", "y"), ("position_z", "z")),
            kept=(("tree_id", "source_track"),)),
    Dialect("ultrack", frozenset({"track_id", "t", "y", "x"}), "t", "track_id", PLAIN_AXES,
            parent="parent_track_id", node="id", excludes=frozenset({"tree_id", "frame"})),
    Dialect("btrack_csv", frozenset({"ID", "t", "x", "y", "parent", "root"}), "t", "ID", PLAIN_AXES,
            parent="parent", kept=(("root", "root"), ("generation", "generation"))),
)}


def _spaced(line: str) -> bool:
    """Whether ``line`` is space-separated (btrack's export_CSV), not comma-separated."""
    return len(next(csv.reader(io.StringIO(line)), [])) == 1 and len(line.split()) > 1


def _split_line(line: str) -> list[str]:
    cells = next(csv.reader(io.StringIO(line)), [])
    if len(cells) == 1 and len(cells[0].split()) > 1:  # btrack's export_CSV: space-separated
        cells = cells[0].split()
    return [c.strip() for c in cells]


def _names(line: str) -> list[str]:
    """A CSV header line's column names, a leading unnamed index column dropped."""
    names = _split_line(line)
    return names[1:] if names[:1] == [""] else names


def header(path: Path) -> list[str]:
    """The column names (a leading unnamed index column dropped); reads the first line only."""
    if path.suffix.lower() in PARQUET:
        import pyarrow.parquet as pq

        names = [str(n) for n in pq.read_schema(path).names]
        return [n for n in names if n != "__index_level_0__"]
    return _names(header_line(path, errors="replace"))


def dialect_of(names: list[str]) -> Dialect | None:
    """The one dialect whose signature ``names`` hold, or None."""
    present = set(names)
    found = [d for d in DIALECTS.values() if d.signature <= present and not d.excludes & present]
    return found[0] if len(found) == 1 else None


def sniff(path: Path, dialect: str) -> bool:
    if not path.is_file():
        return False
    try:
        found = dialect_of(header(path))
    except InputError:
        return False
    return found is not None and found.name == dialect


def _cells(path: Path) -> pd.DataFrame:
    """Every cell of a CSV as text; a Parquet file's columns as they are."""
    where = str(path)
    check_size(path, MAX_BYTES, "table")
    if path.stat().st_size == 0:
        raise InputError("the file is empty", source=where)
    if path.suffix.lower() in PARQUET:
        table = read_table(path)  # a damaged file is one clean error
        table.columns = [str(c) for c in table.columns]
        return table
    first = header_line(path, errors="replace")
    names = _names(first)
    if not _spaced(first):
        check_not_semicolons(names, path)
    seen = pd.Index(names)
    if seen.has_duplicates:
        raise InputError("the column appears twice in the header", source=where,
                         column=str(seen[seen.duplicated()][0]))
    indexed = len(_split_line(first)) == len(names) + 1  # the unnamed index column first
    columns = (["__index__"] if indexed else []) + names
    table = text_cells(path, columns, 1, delimiter=" " if _spaced(first) else ",")
    return table[names]


def _axis_columns(dialect: Dialect, names: list[str], where: str) -> list[tuple[str, str]]:
    """``[(axis, file column), ...]`` for x, y and z when present; x and y are required."""
    found = []
    for axis, options in zip("xyz", dialect.axes):
        column = next((c for c in options if c in names), None)
        if column is None and axis != "z":
            raise InputError(f"missing column (a {dialect.name} table has "
                             f"{' or '.join(options)})", source=where, column=options[0])
        if column is not None:
            found.append((axis, column))
    return found


def _beside(path: Path, what: str) -> Path | None:
    """laptrack's split or merge table beside ``path`` (module docstring), if there is one
    (anything else under that name, a FIFO or a link out of the folder, is refused)."""
    suffix = path.suffix if path.suffix.lower() in PARQUET else ".csv"
    return companion(path.with_name(f"{path.stem}_{what}{suffix}"),
                     path.with_name(f"{what}_df{suffix}"), what=f"laptrack {what} table")


def _laptrack_parents(path: Path, track: np.ndarray) -> tuple[pd.arrays.IntegerArray,
                                                               np.ndarray | None, list]:
    """``(parent_track, merge_parents or None, tables read)`` from the split / merge tables."""
    pairs, used = [], []
    for what in ("split", "merge"):
        beside = _beside(path, what)
        if beside is None:
            continue
        cells = _cells(beside)
        for column in ("parent_track_id", "child_track_id"):
            if column not in cells.columns:
                raise InputError(f"missing column (laptrack's {what}_df has parent_track_id, "
                                 "child_track_id)", source=str(beside), column=column)
        parent = cell_numbers(cells, "parent_track_id", str(beside), whole=True).astype(np.int64)
        child = cell_numbers(cells, "child_track_id", str(beside), whole=True).astype(np.int64)
        for column, values in (("parent_track_id", parent), ("child_track_id", child)):
            unknown = ~np.isin(values, track)
            if unknown.any():
                row = int(np.flatnonzero(unknown)[0])
                raise InputError(f"names track {values[row]}, which is not a track_id of "
                                 f"{path.name}", source=str(beside), column=column, row=row + 1)
        pairs.append(pd.DataFrame({"child": child, "parent": parent}))
        used.append(str(beside))
    if not pairs:
        return parent_ids(None, length=len(track)), None, used
    links = pd.concat(pairs).drop_duplicates().sort_values(["child", "parent"], kind="stable")
    first = links.groupby("child", sort=True)["parent"].min()
    present = np.isin(track, first.index.to_numpy())
    parent = parent_ids(first.reindex(track).fillna(0).to_numpy(dtype=np.int64), ~present)
    listed = links.assign(parent=links["parent"].astype(str)).groupby("child", sort=True)["parent"]
    several = listed.agg(";".join)[listed.size() > 1]
    merges = pd.Series(track).map(several).to_numpy() if len(several) else None
    return parent, merges, used


FLAG_WORDS = {"true": True, "false": False}


def _flags(cells: pd.DataFrame, column: str, where: str) -> np.ndarray:
    """``cells[column]`` as booleans: ``0`` / ``1`` (``export_CSV``'s float32 ``0.0`` /
    ``1.0``), or ``True`` / ``False`` (case ignored; a DataFrame of ``Tracklet.to_dict``
    holds Python booleans, which ``to_csv`` writes as words and Parquet as a bool column);
    anything else is refused naming the file, column and row."""
    values = cells[column]
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=bool)
    text = values.astype(str).str.strip().str.lower()
    words = text.map(FLAG_WORDS)
    numbers = pd.to_numeric(text, errors="coerce")
    flags = words.where(words.notna(), numbers.map({0.0: False, 1.0: True}))
    bad = flags.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"expected 0, 1, True or False, found {values.iloc[row]!r}",
                         source=where, column=column, row=row + 1)
    return flags.to_numpy(dtype=bool)


def read(path: Path, dialect: str) -> Tracks:
    where = str(path)
    spec = DIALECTS[dialect]
    cells = _cells(path)
    names = list(cells.columns)
    for column in sorted(spec.signature | {spec.frame, spec.track}):
        if column not in names:
            raise InputError(f"missing column (a {spec.name} table has "
                             f"{', '.join(sorted(spec.signature))})", source=where, column=column)
    if cells.empty:
        raise InputError("the table has a header and no rows", source=where)
    axes = _axis_columns(spec, names, where)
    keep = np.ones(len(cells), dtype=bool)
    if spec.name == "btrack_csv" and "dummy" in names:
        keep = ~_flags(cells, "dummy", where)
    rows = np.flatnonzero(keep)

    def ints(column: str) -> np.ndarray:  # the kept rows' whole numbers of ``column``
        return cell_numbers(cells, column, where, whole=True).astype(np.int64)[rows]

    track = ints(spec.track)
    table = pd.DataFrame({"frame": ints(spec.frame), "track": track})
    for axis, column in axes:
        table[axis] = cell_numbers(cells, column, where)[rows]
    if spec.node is not None and spec.node in names:
        table["node"] = ints(spec.node)
    for column, target in spec.kept:
        if column in names:
            table[target] = ints(column)
    details: dict = {"layout": spec.name}
    if spec.name == "laptrack":
        parent, merges, used = _laptrack_parents(path, track)
        table["parent_track"] = parent
        if merges is not None:
            table["merge_parents"] = merges
        details["lineage_files"] = used
    elif spec.parent is not None and spec.parent in names:
        parent = ints(spec.parent)
        none = parent == -1 if spec.name == "ultrack" else (parent == track) | (parent <= 0)
        table["parent_track"] = parent_ids(parent, none)
    else:
        table["parent_track"] = parent_ids(None, length=len(table))
    if "z" in table.columns and spec.name == "btrack_csv" and (table["z"] == 0).all():
        table = table.drop(columns="z")
    twice = table.duplicated(["frame", "track"]).to_numpy()
    if twice.any():
        at = int(np.flatnonzero(twice)[0])
        raise InputError(f"track {table['track'].iloc[at]} appears twice in frame "
                         f"{table['frame'].iloc[at]}", source=where, column=spec.track,
                         row=int(rows[at]) + 1)
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    used_columns = {spec.frame, spec.track, spec.parent, spec.node, "dummy",
                    *(c for _, c in axes), *(c for c, _ in spec.kept)}
    details.update({"points": int(len(table)), "tracks": int(table["track"].nunique()),
                    "rows_skipped": int(len(cells) - len(rows)),
                    "ignored_columns": [c for c in names if c not in used_columns]})
    return Tracks(table, Calibration("pixel", None, f"none ({spec.name} tables carry no pixel size)"),
                  details)


#: The names trackers give the columns the project's tables need (for :func:`columns_hint`).
ALIASES = {
    "frame": ("frame", "t", "time", "time_point", "timepoint"),
    "id": ("particle", "track_id", "track", "trackid", "id", "cell", "trajectory", "traj",
           "label"),
    "x_um": ("x", "position_x", "x_px", "x_pixel", "centroid_x", "centroid-1", "pos_x"),
    "y_um": ("y", "position_y", "y_px", "y_pixel", "centroid_y", "centroid-0", "pos_y"),
    "z_um": ("z", "position_z", "z_px", "z_pixel", "centroid_z", "pos_z"),
}


def guessed_columns(names: list[str], id_column: str,
                    targets: tuple[str, ...] = ("frame", "id", "x_um", "y_um", "z_um")
                    ) -> dict[str, str] | None:
    """The project's ``targets`` (``id`` as ``id_column``) -> the file's names trackers give
    them (:data:`ALIASES`, case ignored), for a header with a frame, an id and x, y; else
    None. Names already the project's are left out (no mapping needed)."""
    lower = {}
    for name in names:
        lower.setdefault(name.lower(), name)
    chosen = {target: next((lower[a] for a in ALIASES[target] if a in lower), None)
              for target in targets}
    if any(chosen[t] is None for t in ("frame", "id", "x_um", "y_um")):
        return None
    chosen[id_column] = chosen.pop("id")
    return {target: name for target, name in chosen.items()
            if name is not None and name != target}


def columns_hint(names: list[str], kind: str) -> str:
    """For a table that misses the project's columns: ``" (this is trackpy's layout: give
    --format trackpy)"`` when the header is a known dialect's, else the exact ``--columns``
    mapping when it has a frame, an id and x, y under names trackers use (:data:`ALIASES`,
    case ignored) and ``kind`` is one a mapping can give (reference, predictions), else
    ``""``."""
    found = dialect_of(names)
    if found is not None:
        return f"; this is {found.name}'s layout: give --format {found.name}"
    if kind not in ("reference", "predictions"):
        return ""
    chosen = guessed_columns(names, "track" if kind == "reference" else "pred_id")
    if chosen is None:
        return ""
    pairs = [f"{target}={name}" for target, name in chosen.items()]
    return (f"; the header looks like a tracker's table: try --columns {','.join(pairs)}"
            " with --pixel-size X[,Y[,Z]] if the positions are pixels, --units um if they are "
            "micrometres")
