"""Readers for the files trackers write, one module each, behind one registry.

Every reader turns a file into the same thing, a :class:`Tracks`: one row per tracked
point (``frame, track, x, y[, z]`` in the file's own units, ``parent_track`` and
format-specific extra columns) and a :class:`Calibration` saying what one unit is in
micrometres when the file says so. :func:`load` then applies the calibration (or
``--pixel-size``), checks the units look plausible, and returns one of the project's
tables (reference, predictions or observations; :mod:`trackverify.tables`), validated with
the same file / column / row messages as every other table.

Divisions and merges. Graph formats (TrackMate, GEFF) are cut into *tracklets*: a tracklet
ends where a node has more or fewer than one successor or where its successor has more than
one predecessor. Every branch is its own ``track`` (integers from 1, ordered by first frame),
and ``parent_track`` holds the id of the track it came from (null when none; with a merge,
the smallest of the parents, all of them in ``merge_parents``). Formats that already store
tracklets (CTC, btrack, napari, and the DataFrames of trackpy, laptrack, ultrack and btrack
read by :mod:`.dataframe`) keep their own ids and parent links. The graph's own track
or lineage id, where there is one, is kept as ``source_track``.

Formats are chosen by ``--format NAME`` or detected from the extension and a look at the
content (:func:`detect_format`); an ambiguous or unknown file is an error listing the formats.
Importing this package is cheap: a reader's module (and its heavy dependencies) is
imported only when a file of that format is sniffed or read.
"""

from __future__ import annotations

import difflib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trackverify.errors import InputError
from trackverify.io.formats.base import Calibration, Tracks  # noqa: F401 (re-exported)

KINDS = ("reference", "predictions", "observations")


@dataclass(frozen=True)
class Format:
    """A registered format: its name, file extensions, extra and the module that reads it."""

    name: str
    module: str
    extensions: tuple[str, ...]
    summary: str
    extra: str | None = "formats"
    dialect: str | None = None  # one module reading several layouts: which one this is
    folder: bool = False  # whether a folder may be given (else only a regular file is read)

    def _reader(self):
        return importlib.import_module(f"trackverify.io.formats.{self.module}")

    def _dialect(self) -> dict:
        return {} if self.dialect is None else {"dialect": self.dialect}

    def sniff(self, path: Path) -> bool:
        """Whether ``path`` looks like this format (reads at most a few kilobytes)."""
        try:
            return bool(self._reader().sniff(path, **self._dialect()))
        except (OSError, ValueError, UnicodeDecodeError):
            return False

    def read(self, path: Path, **options) -> "Tracks":
        if not self.folder:  # a folder given to a reader of files: one line, not IsADirectoryError
            from trackverify.io.bounded import regular_file

            regular_file(path)
        return self._reader().read(path, **self._dialect(), **options)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("trackmate", "trackmate", (".xml",), "TrackMate XML (spots, tracks, filtered tracks)"),
    Format("ctc", "ctc", ("_track.txt",),
           "Cell Tracking Challenge res_track.txt / man_track.txt with label TIFFs", folder=True),
    Format("geff", "geff", (".geff", ".zarr"), "GEFF graph (zarr store), read with the geff package",
           folder=True),
    Format("btrack", "btrack", (".h5", ".hdf5"), "btrack HDF5 (objects + tracks)"),
    Format("napari", "napari", (".csv",), "napari tracks CSV (ID,t,[z,]y,x) + graph JSON"),
    Format("zephir", "zephir", (".h5",), "ZephIR annotations.h5 (+ worldlines.h5, metadata.json)",
           folder=True),
    Format("mot", "mot", (".txt",), "MOTChallenge-style text: frame,id,x,y[,z] or boxes"),
    Format("trackmate_csv", "trackmate_csv", (".csv",),
           "TrackMate spots table CSV (v7 four-row or v6 one-row header) + edges table beside it",
           extra=None),
    Format("3deecelltracker", "deecelltracker", (".csv",),
           "3DeeCellTracker tracked_coordinates.csv (legacy) or coords_real/coords%06d.npy (v1)",
           extra=None, folder=True),
    *(Format(name, "dataframe", (".csv", ".parquet", ".pq"), summary, extra=None, dialect=name)
      for name, summary in (
          ("trackpy", "trackpy DataFrame (frame, particle, x, y[, z], mass, ...) as CSV / Parquet"),
          ("laptrack", "laptrack track_df (frame, track_id, tree_id, positions) + split_df / "
                       "merge_df beside it"),
          ("ultrack", "ultrack to_tracks_layer DataFrame (track_id, t, [z,] y, x, id, "
                      "parent_track_id, ...)"),
          ("btrack_csv", "btrack export_CSV / DataFrame (ID t x y z parent root state "
                         "generation dummy)"))),
    Format("table", "table", (".csv", ".tsv", ".parquet", ".pq"),
           "trackverify table (CSV / Parquet), renamed with --columns", extra=None),
)}


def format_names() -> str:
    return ", ".join(FORMATS)


def _suffix_matches(path: Path, fmt: Format) -> bool:
    name = path.name.lower().rstrip("/")
    return any(name.endswith(ext) for ext in fmt.extensions)


def input_path(path: str | os.PathLike) -> Path:
    """``path`` if it is a folder (some formats are folders) or a regular file; a FIFO, a
    device or a socket is refused before anything reads it (:mod:`trackverify.io.bounded`)."""
    from trackverify.io.bounded import regular_file

    path = Path(path)
    return path if path.is_dir() else regular_file(path)


def detect_format(path: str | os.PathLike) -> str:
    """The one format ``path`` is in, from its extension and content, or an InputError."""
    path = input_path(path)
    by_suffix = [f for f in FORMATS.values() if _suffix_matches(path, f)]
    candidates = by_suffix or list(FORMATS.values())
    matches = [f.name for f in candidates if f.name != "table" and f.sniff(path)]
    if not matches and path.is_file() and (any(f.name == "table" for f in by_suffix)
                                           or path.suffix.lower() in (".txt", "")):
        matches = ["table"]  # a .csv / .parquet (or a .txt / extensionless file: read_table
        #                      reads it by its content) that is no tracker's layout
    if len(matches) == 1:
        return matches[0]
    if not matches:
        expected = [f"{f.name}, {f.summary}" for f in by_suffix if f.name != "table"]
        layouts = f": not the layout of {'; nor of '.join(expected)}" if expected else ""
        raise InputError(f"cannot tell the format{layouts}; give --format, one of: "
                         f"{format_names()}", source=str(path))
    raise InputError(f"the format is ambiguous ({', '.join(matches)}); give --format, one of: "
                     f"{format_names()}", source=str(path))


def get_format(name: str) -> Format:
    if name not in FORMATS:
        close = difflib.get_close_matches(name, list(FORMATS), n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InputError(f"unknown format '{name}'{hint}; known: {format_names()}")
    return FORMATS[name]


def parse_columns(text: str | dict | None) -> dict[str, str]:
    """``"frame=t,pred_id=id,x_um=x"`` -> ``{"t": "frame", "id": "pred_id", "x": "x_um"}``
    (a mapping from the file's names to the project's names)."""
    if text is None:
        return {}
    if isinstance(text, dict):
        return dict(text)
    mapping: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        target, sep, present = part.partition("=")
        if not sep or not target.strip() or not present.strip():
            raise InputError(f"--columns: '{part}' is not PROJECT=FILE (e.g. frame=t,x_um=x)")
        if present.strip() in mapping:
            raise InputError(f"--columns: the file's column '{present.strip()}' is mapped twice")
        mapping[present.strip()] = target.strip()
    return mapping


def parse_pixel_size(text: str | tuple | None) -> tuple[float, ...] | None:
    """``"0.3"`` (every axis), ``"0.3,0.3"`` (x, y) or ``"0.3,0.3,1.5"`` (x, y, z), in um."""
    if text is None:
        return None
    parts = text.split(",") if isinstance(text, str) else list(text)
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise InputError(f"--pixel-size: '{text}' is not X[,Y[,Z]] (um per pixel or voxel)") from None
    if not 1 <= len(values) <= 3 or not all(v > 0 and v < float("inf") for v in values):
        raise InputError(f"--pixel-size: '{text}' must be 1 to 3 positive numbers (um per pixel)")
    return values


def read_points(path: str | os.PathLike, fmt: str | None = None, **options) -> tuple[str, Tracks]:
    """A reader's points of ``path`` in format ``fmt`` (detected when None), in the file's own
    units: ``(format name, Tracks)`` (the project's tables: :func:`trackverify.io.tracks.read_tracks`)."""
    path = input_path(path)
    name = fmt if fmt is not None else detect_format(path)
    return name, get_format(name).read(path, **options)


def read_file(path: Path, kind: str, name: str, scale: tuple[float, ...] | None,
              recording: str | None) -> tuple[Any, dict, list[str]]:
    """A tracker's file in format ``name`` (not ``table``: trackverify's own tables are read by
    :func:`trackverify.io.tracks.read_tracks`) as the project's ``kind`` of table:
    ``(table, info, warnings)``. Coordinates become micrometres: the file's calibration when it
    has one (``info["calibration"]``), else ``scale`` (um per pixel, per axis), else they are
    taken as micrometres with a warning; the units check of :mod:`.units` adds warnings.
    Read by :func:`trackverify.io.tracks.read_tracks`, the one door."""
    from trackverify.io.formats import convert, units

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    tracks = get_format(name).read(path)
    table, calibration, notes = units.to_micrometres(tracks, scale, str(path))
    result = convert.as_kind(table, kind, recording, str(path))
    from trackverify.tables import id_kinds

    info = {"calibration": calibration, **tracks.details, "ids_as_read": id_kinds(table)}
    return result, info, notes + units.plausibility_warnings(result, str(path))
