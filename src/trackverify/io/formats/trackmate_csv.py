"""TrackMate's CSV exports: the spots table, and the edges table beside it when there is one.

Both layouts TrackMate writes, told apart by the second line:

* **TrackMate 7 and later**, "Export to CSV" of the track tables (``TrackTableView``,
  ``AllSpotsTableView``), written by ``TablePanel.exportToCsv`` (trackmate-sc/TrackMate,
  ``src/main/java/fiji/plugin/trackmate/visualization/table/TablePanel.java`` @
  0f89cc9a76f4e1ed1279f5d2441dd1c24e8bf888; the columns from ``TrackTableView.java`` @
  02f44df3353c3b0abe3f64a00e2198e75db98dff): opencsv, ``,`` between cells, no quote
  character (a ``"`` escapes a ``,`` or ``"`` inside a cell), ``\\n`` line ends. Header rows:
  the feature keys (``LABEL, ID, TRACK_ID, QUALITY, POSITION_X, ...``), their names, their
  short names (each of those two left out when it repeats the row above), their units
  (``(micron)``, empty when none; the label cell empty). Then one row per spot.
* **TrackMate 6 and earlier**, the "Spots in tracks statistics" ImageJ table
  (``ExportStatsToIJAction.java`` @ 160c5134d4edda3ae8ecad71037778cf855df7f6) saved as
  ``.csv`` by ImageJ (``ij/measure/ResultsTable.java`` ``saveAs``, imagej/ImageJ @
  4efcff32c38d0935ce04825c3a69b6aafceef216): one header row (``Label, ID, TRACK_ID,``
  features; older ImageJ adds a row-number column first), a cell with a comma quoted, the
  platform's line ends (CRLF on Windows), ``None`` for a missing feature. It has no units.

Read: ``ID`` (kept as ``node``), ``TRACK_ID`` (kept as ``source_track``), ``FRAME``,
``POSITION_X/Y/Z``, the label (``spot_name``). Spots without a ``TRACK_ID`` (the
all-spots table lists spots in no track) are not read, as in the XML reader. Links come from
the edges table beside the file when it exists (:func:`edges_file`: ``<name>_edges.csv`` for
``<name>_spots.csv``, "Links in tracks statistics" for "Spots in tracks statistics"), and
tracks are cut into tracklets at divisions and merges (:mod:`.graph`); without it each
``TRACK_ID`` is one chain by frame, and a track with two spots in one frame (a division) is
refused, naming the edges file to add. 2-D when every ``POSITION_Z`` is 0.

Units: the units row's ``POSITION_X`` unit (``micron``, ``µm``, ``um``, ``nm``, ``mm``;
``pixel`` = uncalibrated: give ``--pixel-size``); a v6 file carries none (positions are in
TrackMate's spatial units, taken as micrometres with a warning). Text is UTF-8 (a BOM is
skipped) or, when it is not, Windows-1252 (what Java's ``FileWriter`` writes on Windows: a
``µ`` is one byte). Files over :data:`~trackverify.io.formats.trackmate.MAX_BYTES` are refused.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import check_size, companion
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.graph import tracklets
from trackverify.io.formats.trackmate import MAX_BYTES
from trackverify.io.formats.units import named_unit
from trackverify.io.tabular import MAX_HEADER_LINE, cell_numbers, text_cells

SPOT_COLUMNS = ("ID", "TRACK_ID", "FRAME", "POSITION_X", "POSITION_Y")
EDGE_COLUMNS = ("SPOT_SOURCE_ID", "SPOT_TARGET_ID")
LABELS = ("LABEL", "Label")
UNITS_CELL = re.compile(r"^(\(.*\))?$")


def _encoding(path: Path) -> str:
    """``utf-8-sig`` when the whole file decodes as UTF-8, else ``cp1252`` (checked in chunks)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8-sig"


def _first_rows(path: Path, encoding: str, count: int, v7: bool = False) -> list[list[str]]:
    """The first ``count`` lines' cells; a line over :data:`MAX_HEADER_LINE` characters (no
    TrackMate header or spot row is) is refused."""
    with open(path, encoding=encoding, errors="replace", newline="") as handle:
        lines = [handle.readline(MAX_HEADER_LINE + 1) for _ in range(count)]
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_HEADER_LINE:
            raise InputError(f"line {number} is longer than {MAX_HEADER_LINE} characters "
                             "(not a TrackMate table)", source=str(path))
    dialect = {"quoting": csv.QUOTE_NONE, "escapechar": '"'} if v7 else {}
    try:
        return [[c.strip() for c in row] for row in csv.reader(io.StringIO("".join(lines)), **dialect)]
    except csv.Error as exc:
        raise InputError(f"not a readable CSV header ({exc})", source=str(path)) from None


def _column_names(path: Path) -> list[str]:
    """The first line's cells (read as UTF-8; an over-long line is an InputError)."""
    return (_first_rows(path, "utf-8-sig", 1) or [[]])[0]


def sniff(path: Path) -> bool:
    """Every column the reader needs, or TrackMate's signature: the label column first
    (``LABEL``, ``Label``, or ImageJ's row numbers then ``Label``), ``ID`` and ``TRACK_ID``."""
    if not path.is_file():
        return False
    try:
        names = _column_names(path)
    except InputError:
        return False
    labelled = names[:1] in (["LABEL"], ["Label"]) or names[:2] == ["", "Label"]
    return set(SPOT_COLUMNS) <= set(names) or (labelled and (
        {"ID", "TRACK_ID"} <= set(names) or set(EDGE_COLUMNS) <= set(names)))


def _header(path: Path, key: str,
            required: tuple[str, ...]) -> tuple[list[str], list[str] | None, int, str]:
    """``(column names, units row or None, header rows, encoding)``; a units row is v7's."""
    where = str(path)
    check_size(path, MAX_BYTES, "CSV file")
    if path.stat().st_size == 0:
        raise InputError("the file is empty", source=where)
    encoding = _encoding(path)
    rows = _first_rows(path, encoding, 5)
    names = rows[0]
    for name in required:
        if name not in names:
            raise InputError("missing column (a TrackMate table has " + ", ".join(required) + ")",
                             source=where, column=name)
    seen = pd.Index(names)
    if seen.has_duplicates:
        raise InputError("the column appears twice in the header", source=where,
                         column=str(seen[seen.duplicated()][0]))
    if len(rows) < 2:
        raise InputError("the table has a header and no rows", source=where)
    second = rows[1][names.index(key)] if len(rows[1]) > names.index(key) else ""
    if pd.to_numeric(pd.Series([second]), errors="coerce").notna()[0]:
        return names, None, 1, encoding  # v6: the second line is data
    rows = _first_rows(path, encoding, 5, v7=True)
    for skip, units in enumerate(rows[1:4], start=2):
        if len(units) == len(names) and units[0] == "" and all(UNITS_CELL.match(c) for c in units):
            return names, units, skip, encoding
    raise InputError("a TrackMate 7 header ends with a units row ('(micron)' cells) within its "
                     "first 4 lines; none found (or the second line is not a spot)", source=where)


def _cells(path: Path, key: str, required: tuple[str, ...]) -> tuple[pd.DataFrame, list, list | None, str]:
    """``(the data rows as text, names, units, encoding)`` (:func:`.tabular.text_cells`)."""
    names, units, skip, encoding = _header(path, key, required)
    quoting = {"quote_char": '"'} if units is None else {"quote_char": False, "escape_char": '"'}
    return text_cells(path, names, skip, encoding, **quoting), names, units, encoding


#: How TrackMate names the edges table of a spots table (in this order of preference).
EDGES_NAMES = (("Spots in tracks statistics", "Links in tracks statistics"), ("spots", "edges"),
               ("Spots", "Edges"))


def edges_names(path: Path) -> list[Path]:
    """The names TrackMate would give the edges table beside the spots table ``path``."""
    return [path.with_name(head + new + tail) for old, new in EDGES_NAMES if old in path.name
            for head, _, tail in [path.name.rpartition(old)]]


def edges_file(path: Path) -> Path | None:
    """The edges table TrackMate names beside a spots table, if it is there (anything else
    under that name, a FIFO or a link out of the folder, is refused: :func:`companion`)."""
    return companion(*edges_names(path), what="edges table")


def _links(path: Path, node: np.ndarray, track: np.ndarray, frame: np.ndarray,
           rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, Path | None]:
    """Link ends as spot positions: the edges table's, or each track chained by frame."""
    edges = edges_file(path)
    if edges is None:
        order = np.lexsort((frame, track))
        same = track[order][1:] == track[order][:-1]
        twice = same & (frame[order][1:] == frame[order][:-1])
        if twice.any():
            i = order[1:][np.flatnonzero(twice)[0]]
            raise InputError(f"track {int(track[i])} has two spots in frame {int(frame[i])} (a "
                             "division or a merge): put TrackMate's edges table beside it "
                             f"({(edges_names(path) or [Path('edges.csv')])[0].name})", source=str(path),
                             column="TRACK_ID", row=int(rows[i]) + 1)
        return order[:-1][same], order[1:][same], None
    cells = _cells(edges, "SPOT_SOURCE_ID", EDGE_COLUMNS)[0]
    index = pd.Index(node)
    ends = []
    for column in EDGE_COLUMNS:
        at = index.get_indexer(cell_numbers(cells, column, str(edges), whole=True))
        if (at < 0).any():
            row = int(np.flatnonzero(at < 0)[0])
            raise InputError(f"names spot {cells[column].iloc[row].strip()}, which is not a spot "
                             f"in a track of {path.name}", source=str(edges), column=column, row=row + 1)
        ends.append(at)
    return ends[0], ends[1], edges


def read(path: Path) -> Tracks:
    where = str(path)
    if path.stat().st_size and set(EDGE_COLUMNS) <= set(_column_names(path)):
        raise InputError("this is TrackMate's edges table: give the spots table beside it (read "
                         "with it)", source=where)
    cells, names, units, encoding = _cells(path, "ID", SPOT_COLUMNS)
    if cells.empty:
        raise InputError("the table has a header and no rows", source=where)
    track_id = cell_numbers(cells, "TRACK_ID", where, whole=True, blank_ok=True)
    rows = np.flatnonzero(np.isfinite(track_id))
    node = cell_numbers(cells, "ID", where, whole=True).astype(np.int64)
    if pd.Index(node).has_duplicates:
        row = int(np.flatnonzero(pd.Index(node).duplicated())[0])
        raise InputError(f"spot ID {node[row]} appears twice", source=where, column="ID", row=row + 1)
    axes = [a for a in ("x", "y", "z") if f"POSITION_{a.upper()}" in names]
    table = pd.DataFrame({"node": node[rows],
                          "frame": cell_numbers(cells, "FRAME", where, whole=True)[rows].astype(np.int64)})
    for axis in axes:
        table[axis] = cell_numbers(cells, f"POSITION_{axis.upper()}", where)[rows]
    if "z" in table.columns and (table["z"] == 0).all():
        table = table.drop(columns="z")
    label = next((n for n in LABELS if n in names), None)
    if label is not None:
        table["spot_name"] = cells[label].to_numpy()[rows]
    source_track = track_id[rows].astype(np.int64)
    src, dst, edges = _links(path, table["node"].to_numpy(), source_track,
                             table["frame"].to_numpy(), rows)
    track, parent, merges = tracklets(table["frame"].to_numpy(), src, dst,
                                      where if edges is None else str(edges))
    table = table.assign(track=track, parent_track=parent, source_track=source_track)
    if merges is not None:
        table["merge_parents"] = merges
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    if units is None:
        calibration = Calibration("TrackMate spatial units", None,
                                  "none (a TrackMate 6 CSV has no units row)")
    else:
        unit = units[names.index("POSITION_X")].strip("()")
        calibration = named_unit(unit, f"TrackMate CSV units row '({unit})'", where, "POSITION_X")
    details = {"layout": "TrackMate 6 (one header row)" if units is None else "TrackMate 7 (units row)",
               "encoding": encoding, "spots": int(len(cells)), "spots_read": int(len(table)),
               "edges_file": None if edges is None else str(edges), "links": int(len(src)),
               "tracklets": int(table["track"].nunique())}
    return Tracks(table, calibration, details)
