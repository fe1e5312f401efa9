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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trackverify.errors import InputError

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


@dataclass(frozen=True)
class Calibration:
    """What one coordinate unit of a file is: ``um_per_unit`` per axis (x, y[, z]) or None."""

    unit: str
    um_per_unit: tuple[float, ...] | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "um_per_unit": None if self.um_per_unit is None
                else list(self.um_per_unit), "source": self.source}


@dataclass
class Tracks:
    """A reader's result: points in the file's units and what the file says they are."""

    table: Any  # pandas.DataFrame: frame, track, x, y[, z], parent_track, extras
    calibration: Calibration
    details: dict = field(default_factory=dict)


@dataclass
class Loaded:
    """A project table read from any format, and what was done to get it (for the manifest)."""

    table: Any  # pandas.DataFrame, validated against the kind's schema
    info: dict
    warnings: list[str] = field(default_factory=list)
    #: ``{column: "integers" | "text"}``: how the file typed its recording and detection ids
    #: (validation makes recording ids text; :func:`load_pair` says when two files differ)
    id_kinds: dict = field(default_factory=dict)


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


def read_tracks(path: str | os.PathLike, fmt: str | None = None, **options) -> tuple[str, Tracks]:
    """Read ``path`` in format ``fmt`` (detected when None): ``(format name, Tracks)``."""
    path = input_path(path)
    name = fmt if fmt is not None else detect_format(path)
    return name, get_format(name).read(path, **options)


def load(path: str | os.PathLike, kind: str, *, fmt: str | None = None,
         columns: str | dict | None = None, pixel_size: str | tuple | None = None,
         recording: str | None = None) -> Loaded:
    """Read any supported file as the project's ``kind`` of table (one of :data:`KINDS`).

    Coordinates become micrometres: the file's calibration when it has one (recorded in
    ``info["calibration"]``), else ``pixel_size`` (um per pixel, per axis), else they are
    taken as micrometres with a warning. The units check of :mod:`.units` adds warnings.
    """
    from trackverify.io.formats import convert, units

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    path = input_path(path)
    name = fmt if fmt is not None else detect_format(path)
    scale = parse_pixel_size(pixel_size)
    mapping = parse_columns(columns)
    if name == "table":
        from trackverify.io.formats import table as table_format
        return table_format.load_as(path, kind, mapping, scale, recording)
    if mapping:
        raise InputError(f"--columns applies to CSV / Parquet tables, not to format '{name}'",
                         source=str(path))
    tracks = get_format(name).read(path)
    table, calibration, notes = units.to_micrometres(tracks, scale, str(path))
    result = convert.as_kind(table, kind, recording, str(path))
    info = {"path": str(path), "format": name, "calibration": calibration, **tracks.details}
    return Loaded(result, info, notes + units.plausibility_warnings(result, str(path)),
                  id_kinds(table))


#: The id columns two files of :func:`load_pair` join on.
JOINED_IDS = ("recording", "detection")


def id_kinds(df) -> dict[str, str]:
    """``{column: "integers" | "text"}`` of the :data:`JOINED_IDS` columns of ``df`` as read
    (whole-valued floats are integers by the id rule)."""
    import pandas as pd

    return {column: "integers" if pd.api.types.is_numeric_dtype(df[column].dtype)
            and not pd.api.types.is_bool_dtype(df[column].dtype) else "text"
            for column in JOINED_IDS if column in df.columns}


def ids_met_as_text(ref: Loaded, pred: Loaded) -> list[str]:
    """A warning for each id column the two files type differently (integers in one, text in
    the other): they meet by the canonical text of the integers, 1 meeting '1'
    (:func:`trackverify.tables.common_id_type`; docs/robustness.md, "Ids as written"), which
    the scores then rest on."""
    notes = []
    for column in JOINED_IDS:
        kinds = (ref.id_kinds.get(column), pred.id_kinds.get(column))
        if None not in kinds and kinds[0] != kinds[1]:
            numbers, text = (ref, pred) if kinds[0] == "integers" else (pred, ref)
            notes.append(f"the {column} ids are integers in {numbers.info['path']} and text in "
                         f"{text.info['path']}: they meet by the text that writes each integer "
                         "(1 is '1', never '01' or '1.0')")
    return notes


def load_pair(reference: str | os.PathLike, predictions: str | os.PathLike, *,
              fmt: str | None = None, columns: str | dict | None = None,
              pixel_size: str | tuple | None = None,
              **per_file) -> tuple[Loaded, Loaded, list[str]]:
    """Reference and predictions from any supported files, and every units warning
    (each file's, plus the scale comparison of the two).

    ``fmt``, ``columns`` and ``pixel_size`` apply to both files; ``reference_fmt``,
    ``predictions_columns`` ... (the same names prefixed) to one file and take precedence.
    """
    from trackverify.io.formats.units import assumed_once, scale_mismatch_warnings

    shared = {"fmt": fmt, "columns": columns, "pixel_size": pixel_size}
    unknown = sorted(set(per_file) - {f"{p}_{k}" for p in ("reference", "predictions") for k in shared})
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}")

    def one(path, kind, prefix):
        return load(path, kind, **{k: per_file.get(f"{prefix}_{k}") or v for k, v in shared.items()})

    ref = one(reference, "reference", "reference")
    pred = one(predictions, "predictions", "predictions")
    warnings = assumed_once(ref, pred) + ids_met_as_text(ref, pred)
    if {"x_um", "y_um"} <= set(pred.table.columns):
        warnings += scale_mismatch_warnings(ref.table, pred.table, str(reference), str(predictions))
    return ref, pred, warnings
