"""The one reader of tracks: every command and the Python API read tracks here, one way.

:func:`read_tracks` takes a tracker's output (``kind="predictions"``), reference tracks
(``"reference"``) or an observation table (``"observations"``: both at once, ``run --data``),
as a file in any reader's format (:mod:`trackverify.io.formats`) or as a DataFrame, with
optionally every detection of each frame, and returns a :class:`TrackTable`: the table,
validated (:mod:`trackverify.tables`), the detections, and the *record* of how it was read
(``audit.json``'s ``input``, ``evaluate``'s ``inputs``, the manifest). The rules, the same
for every command:

* **Ids as written** (:func:`trackverify.tables.id_column`): ``45.0`` is 45; ``NA`` or
  ``None`` as an id is refused (a missing id is a blank cell), also in a column that
  ``columns`` maps to an id (the mapping is known before the file's cells are typed).
* **A blank id**: in predictions, a detection the tracker gave no identity (``pred_valid``
  false when the table has no ``pred_valid`` column); in a reference, refused (a reference
  row names its track; unlabelled detections belong in the detections).
* **Recording**: a table without a ``recording`` column holds one recording, named
  ``recording`` unless ``recording`` names it (``--recording NAME``).
* **Units**: a tracker format's calibration, else ``pixel_size``, else micrometres with a
  warning (:mod:`trackverify.io.formats.units`). A table's columns named in micrometres
  (``x_um``) are micrometres; coordinates ``columns`` maps from other names must say their
  unit: ``pixel_size`` (they are pixels), ``units="um"`` (they are micrometres), or a name
  that says micrometres (``x (um)``, ``X_micron``); otherwise they are refused with both fixes.
* **Positions from the detections**: rows with a ``detection`` column and no positions take
  their detections' positions (joined on ``recording, frame, detection``; an id the
  detections lack is refused naming the row); predictions with positions and no
  ``detection`` column are matched to the detection of their frame within
  :data:`MATCH_TOLERANCE_UM`, one to one (refused, with the fix, when that fails), and take
  its id and exact position.
* **Where**: a refusal names the file, the column and the row (1-based data row) and, for a
  text file, the file's own line (``row 76 (line 77)``: the header is line 1).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify import __version__
from trackverify.errors import InputError
from trackverify.tables import (DEFAULT_RECORDING, JOINED_IDS, OBSERVATIONS, PREDICTIONS,
                                READ_AS_IDS, REFERENCE, Schema, check_unique, common_id_type,
                                coordinate_columns, id_kinds, plain, validate)

KINDS = ("predictions", "reference", "observations")
SCHEMAS = {"predictions": PREDICTIONS, "reference": REFERENCE, "observations": OBSERVATIONS}
#: How near (um) a row's position must be to a detection to be that detection, when the
#: tracks have positions but no ``detection`` column: far below any two detections' spacing
#: (the units check warns below 0.5 um), far above the rounding of a position written as
#: text or float32 (about 1e-5 um at 100 um).
MATCH_TOLERANCE_UM = 1e-3
KEYS = ["recording", "frame", "detection"]
#: A column name that says its values are micrometres: ``um``, ``µm``, ``micron(s)`` or
#: ``micrometre(s)`` / ``micrometer(s)`` as a word.
MICRON_NAME = re.compile(r"(?:^|[^a-z])(?:um|µm|μm|microns?|micromet(?:er|re)s?)(?:$|[^a-z])",
                         re.IGNORECASE)
UNITS = ("um",)


@dataclass
class TrackTable:
    """What :func:`read_tracks` read: the validated table, the detections (or None) and the
    record of how (``record["warnings"]``: the units warnings, also :attr:`warnings`)."""

    table: pd.DataFrame
    detections: pd.DataFrame | None = None
    record: dict = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        return self.record.get("warnings", [])


def read_tracks(tracks, kind: str = "predictions", *, detections=None, fmt: str | None = None,
                columns: str | dict | None = None, pixel_size: str | tuple | None = None,
                units: str | None = None, recording: str | None = None,
                source: str | None = None, detections_source: str | None = None,
                one_per_detection: bool = False) -> TrackTable:
    """Tracks as ``kind`` (:data:`KINDS`), read by the rules of the module docstring.

    ``tracks`` / ``detections``: a path or a DataFrame (never modified); ``source`` /
    ``detections_source`` name a DataFrame in messages (a path names itself). ``fmt``: the
    format's name (detected when None); ``columns``: ``"frame=t,pred_id=id"`` or a dict of
    the file's names -> the project's; ``pixel_size``: um per pixel, ``"X[,Y[,Z]]"``;
    ``units="um"``: mapped coordinates are micrometres; ``recording``: the name of a table's
    one recording when it has no ``recording`` column; ``one_per_detection``: refuse two rows
    on one ``(recording, frame, detection)`` (a prediction table may hold them: ``evaluate``
    counts the second as an extra prediction; the audit judges each detection once).

    >>> frame = pd.DataFrame({"frame": [0, 0, 1], "pred_id": [4.0, None, 4.0],
    ...                       "x": [1.0, 9.0, 1.5], "y": [2.0, 2.0, 2.0]})
    >>> read = read_tracks(frame, columns="x_um=x,y_um=y", units="um")
    >>> read.table[["recording", "pred_id", "pred_valid"]].values.tolist()
    [['recording', 4, True], ['recording', <NA>, False], ['recording', 4, True]]
    >>> read.record["calibration"]["source"]
    '--units um'
    """
    from trackverify.io.formats import detect_format, input_path, parse_columns, parse_pixel_size

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    path = Path(tracks) if isinstance(tracks, (str, os.PathLike)) else None
    source = str(path) if path is not None else (source or "<tracks>")
    if path is not None:
        path = input_path(path)
        fmt = fmt if fmt is not None else detect_format(path)
    scale, mapping = parse_pixel_size(pixel_size), parse_columns(columns)
    if units is not None and units not in UNITS:
        raise InputError(f"--units: {units!r} is not a unit trackverify takes (um; pixels are "
                         "given by --pixel-size)")
    if units is not None and scale is not None:
        raise InputError("give --units um (the coordinates are micrometres) or --pixel-size "
                         "(they are pixels of that size), not both")
    with _lines_of(path if fmt == "table" else None):  # a reader's own rows are its own
        table, record = _read(tracks, path, kind, fmt, mapping, scale, units, recording, source)
        dets = None
        if detections is not None:
            dets = read_detections(detections, table, detections_source)
            detections_source = dets.attrs.pop("source")
            table, record["positions"] = _positions(table, dets, kind, source, detections_source)
        if one_per_detection:
            check_unique(table, (KEYS,), source)
    record.setdefault("positions", "tracks" if coordinate_columns(table) else None)
    record.update(path=None if path is None else str(path), source=source,
                  rows=int(len(table)), trackverify=__version__)
    if kind == "predictions":
        record["rows_without_id"] = int((~table["pred_valid"].to_numpy(dtype=bool)).sum())
    return TrackTable(table, dets, record)


def _read(tracks, path: Path | None, kind: str, fmt, mapping: dict, scale, units, recording,
          source: str) -> tuple[pd.DataFrame, dict]:
    """The validated table and its record (format, columns, calibration, warnings); ``fmt``: the
    format of ``path`` (known), or of a DataFrame (None or ``table``)."""
    from trackverify.io.formats import read_file
    from trackverify.io.formats.table import apply_mapping, check_axes, validated
    from trackverify.io.tabular import read_table

    reader = fmt
    if path is not None:
        if reader != "table":  # a tracker's own format: its reader, units and calibration
            if units is not None:
                raise InputError(f"--units applies to CSV / Parquet tables, not to format "
                                 f"'{reader}' (its reader knows its units; --pixel-size gives "
                                 "a pixel size)", source=source)
            if mapping:
                raise InputError(f"--columns applies to CSV / Parquet tables, not to format "
                                 f"'{reader}'", source=source)
            table, info, warnings = read_file(path, kind, reader, scale, recording)
            _check_format_axes(path, table, source)
            return table, {**info, "format": reader, "recording": _recording_record(False, recording),
                           "ids_as_read": info.pop("ids_as_read"),
                           "columns": None,
                           "pixel_size": None if scale is None else list(scale),
                           "warnings": warnings}
        ids = tuple(name for name, target in mapping.items() if target in READ_AS_IDS)
        frame = read_table(path, id_columns=ids)
    elif isinstance(tracks, pd.DataFrame):
        if fmt not in (None, "table"):
            raise InputError(f"a DataFrame is read as a table, not in format '{fmt}' (a "
                             "format names a file's layout: give the file)", source=source)
        frame = tracks
    else:
        raise InputError("the tracks must be a table (pandas DataFrame) or a file",
                         source=source)
    names = [str(c) for c in frame.columns]
    frame = apply_mapping(frame, mapping, source)
    named, kinds = "recording" in frame.columns, id_kinds(frame)
    check_axes(frame, mapping, source)
    table = validated(frame, SCHEMAS[kind], kind, source, mapping, path, names=names)
    if not named and recording is not None:  # validation named it DEFAULT_RECORDING
        table["recording"] = str(recording)
    table, calibration, warnings = table_micrometres(table, mapping, scale, units, source)
    return table, {"format": "table" if path is not None else "dataframe",
                   "recording": _recording_record(named, recording), "ids_as_read": kinds,
                   "columns": {p: name for name, p in mapping.items()} or None,
                   "pixel_size": None if scale is None else list(scale),
                   "calibration": calibration, "warnings": warnings}


def table_micrometres(table: pd.DataFrame, mapping: dict[str, str], scale, units,
                      source: str) -> tuple[pd.DataFrame, dict, list[str]]:
    """``(table, calibration record, warnings)`` of a validated table by the units rule (module
    docstring); ``mapping``: the file's names -> the project's. Plus the units' plausibility
    warnings."""
    from trackverify.io.formats.units import expand_scale, plausibility_warnings

    coords = coordinate_columns(table)
    named = {project: name for name, project in mapping.items()}
    mapped = [c for c in coords if c in named]
    notes = []
    if not coords:
        return table, None, [] if scale is None else [
            f"{source}: --pixel-size ignored, the table has no coordinates"]
    if scale is not None and not mapped:
        notes.append(f"{source}: --pixel-size ignored, the table's columns are named in um")
    if scale is not None and mapped:
        factors = expand_scale(scale, len(coords), source)
        table = table.copy()
        for column, factor in zip(coords, factors):
            table[column] = table[column].to_numpy(dtype=np.float64) * factor
        calibration = {"unit": "pixel", "um_per_unit": list(factors), "source": "--pixel-size"}
    elif units == "um" and mapped:
        calibration = {"unit": "um", "um_per_unit": [1.0] * len(coords), "source": "--units um"}
    else:
        unsaid = [c for c in mapped if not MICRON_NAME.search(named[c])]
        if unsaid:
            column = named[unsaid[0]]
            raise InputError(f"the column '{column}' (read as {unsaid[0]}) does not say its "
                             "unit: give --pixel-size X[,Y[,Z]] (um per pixel) if it holds "
                             "pixels, or --units um if it holds micrometres", source=source,
                             column=column)
        calibration = {"unit": "um", "um_per_unit": [1.0] * len(coords),
                       "source": "column names (" + ", ".join(
                           named.get(c, c) for c in coords) + ")"}
    return table, calibration, notes + plausibility_warnings(table, source)


def _check_format_axes(path: Path, table: pd.DataFrame, source: str) -> None:
    """A CSV / Parquet tracker file whose reader took x and y but left a z column of another
    name: refused with the ``--format table --columns`` that reads it."""
    from trackverify.io.formats.dataframe import guessed_columns, header
    from trackverify.io.formats.table import check_axes
    from trackverify.io.tabular import read_table

    if "z_um" in table.columns or path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        return
    guess = guessed_columns(header(path), "pred_id", ("frame", "id", "x_um", "y_um"))
    if guess is None:
        return
    try:
        frame = read_table(path)
    except InputError:  # not a table read as one (the format's reader read it its own way)
        return
    mapping = {name: project for project, name in guess.items()}
    check_axes(frame.rename(columns=mapping), mapping, source, prefix="--format table ")


def ids_met_as_text(ref: TrackTable, pred: TrackTable) -> list[str]:
    """A warning for each id column the two inputs type differently (integers in one, text in
    the other): they meet by the canonical text of the integers, 1 meeting '1'
    (:func:`trackverify.tables.common_id_type`; docs/reference/robustness.md, "Ids as written"), which
    the scores then rest on."""
    notes = []
    for column in JOINED_IDS:
        kinds = (ref.record["ids_as_read"].get(column), pred.record["ids_as_read"].get(column))
        if None not in kinds and kinds[0] != kinds[1]:
            numbers, text = (ref, pred) if kinds[0] == "integers" else (pred, ref)
            notes.append(f"the {column} ids are integers in {numbers.record['source']} and text "
                         f"in {text.record['source']}: they meet by the text that writes each "
                         "integer (1 is '1', never '01' or '1.0')")
    return notes


def _recording_record(named: bool, recording: str | None) -> dict:
    """Where the recording names came from: the table's column, ``--recording`` or the
    default name."""
    if named:
        return {"from": "column", "name": None}
    return {"from": "default" if recording is None else "--recording",
            "name": DEFAULT_RECORDING if recording is None else recording}


@contextlib.contextmanager
def _lines_of(path: Path | None) -> Iterator[None]:
    """An :class:`InputError` about a data row of a CSV / TSV file ``path``, raised inside,
    gains the row's line in the file (:func:`trackverify.io.tabular.data_lines`, read only
    then)."""
    from trackverify.io.tabular import data_lines

    try:
        yield
    except InputError as exc:
        if path is None or exc.row is None or exc.line is not None or exc.source != str(path):
            raise
        lines = data_lines(path)
        if lines is None or not 1 <= exc.row <= len(lines):
            raise
        raise exc.at_line(int(lines[exc.row - 1])) from None


#: Every detection of each frame, labelled or not: ``frame, x_um, y_um[, z_um]``, with
#: ``recording`` (a table without it belongs to the tracks' one recording) and ``detection``
#: ids (needed where rows name their detections). Extra columns (``kind``) are kept.
DETECTION_TABLE = Schema("detection table", required=("frame", "x_um", "y_um"),
                         optional=("recording", "detection", "z_um"),
                         unique_keys=(("recording", "frame", "detection"),))


def read_detections(detections, tracks: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """The detection table (a CSV / Parquet file or a DataFrame), validated like every table
    (one error naming the file, column and row) and matched to ``tracks``' recordings:
    without a ``recording`` column it belongs to their one recording (refused when they hold
    several); a recording they do not hold is refused. ``attrs["source"]``: its name."""
    from trackverify.io.tabular import read_table

    if isinstance(detections, (str, os.PathLike)):
        source = str(detections)
        with _lines_of(Path(detections)):
            frame = read_table(detections)
            return _detections_of(frame, tracks, source)
    if not isinstance(detections, pd.DataFrame):
        raise InputError("the detections must be a table (pandas DataFrame) or a file",
                         source=source or "<detections>")
    return _detections_of(detections, tracks, source or "<detections>")


def _detections_of(frame: pd.DataFrame, tracks: pd.DataFrame, source: str) -> pd.DataFrame:
    recordings = tracks["recording"].drop_duplicates()
    if "recording" not in frame.columns:
        if len(recordings) > 1:
            raise InputError(f"no column 'recording', and the tracks hold {len(recordings)} "
                             "recordings: say which each detection belongs to", source=source)
        frame = frame.assign(recording=recordings.iat[0] if len(recordings) else
                             DEFAULT_RECORDING)
    table = validate(frame, DETECTION_TABLE, source)
    own, known = common_id_type(table["recording"], recordings, "recording",
                                (source, "the tracks"))
    unknown = np.flatnonzero(~own.isin(known).to_numpy())
    if len(unknown):
        raise InputError(f"recording {plain(own.iat[unknown[0]])!r} is not in the tracks",
                         source=source, column="recording", row=int(unknown[0]) + 1)
    table["recording"] = own
    table.attrs["source"] = source
    return table


def _positions(table: pd.DataFrame, dets: pd.DataFrame, kind: str, source: str,
               detections_source: str) -> tuple[pd.DataFrame, str]:
    """``table`` with positions from the detections where it has none (module docstring), and
    where its positions came from."""
    has_positions, has_detection = bool(coordinate_columns(table)), "detection" in table.columns
    if (has_detection or (has_positions and kind == "predictions")) \
            and "detection" not in dets.columns:
        raise InputError("the detection table has no 'detection' column (the ids the tracks' "
                         "rows name their detections by)", source=detections_source,
                         column="detection")
    if has_detection and not has_positions:
        table, dets = one_id_type(table, dets, detections_source)
        table, how = _joined(table, dets, source, detections_source), (
            "detections: joined on recording, frame, detection")
    elif not has_detection and has_positions and kind == "predictions":
        table, how = _matched(table, dets, source, detections_source), (
            f"tracks; matched to the detections by position (within {MATCH_TOLERANCE_UM:g} um, "
            "one to one), ids and positions from the detections")
    elif not has_positions:
        raise InputError("the tracks have neither positions (x_um, y_um[, z_um]) nor a "
                         "'detection' column naming the detections", source=source,
                         column="detection")
    elif has_detection:
        how = "tracks"
    else:  # a reference or observations with positions: the detections are other evidence
        return table, "tracks"
    check_detections(table, dets, detections_source)
    return table, how


def require_positions(table: pd.DataFrame, source: str) -> None:
    """Refuse tracks without positions, saying how to give them."""
    if coordinate_columns(table):
        return
    raise InputError("the tracks have no positions (x_um, y_um[, z_um]): give them, or give "
                     "--detections with the detections its 'detection' column names"
                     if "detection" in table.columns else
                     "the tracks have no positions (x_um, y_um[, z_um]) and no 'detection' "
                     "column (rename them in the file or map them with --columns "
                     "x_um=NAME,y_um=NAME)", source=source, column="x_um")


def _joined(table: pd.DataFrame, dets: pd.DataFrame, source: str,
            detections_source: str) -> pd.DataFrame:
    coords = coordinate_columns(dets)
    joined = table[KEYS].merge(dets[KEYS + coords], on=KEYS, how="left", indicator=True)
    missing = (joined["_merge"] == "left_only").to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise InputError(f"detection {plain(table['detection'].iloc[row])!r} of frame "
                         f"{int(table['frame'].iloc[row])} is not a detection of "
                         f"{detections_source}", source=source, column="detection", row=row + 1)
    out = table.copy()
    for column in coords:
        out[column] = joined[column].to_numpy(dtype=np.float64)
    return out


def _matched(table: pd.DataFrame, dets: pd.DataFrame, source: str,
             detections_source: str) -> pd.DataFrame:
    """Each row the one detection of its recording and frame within the tolerance, one to one
    (a k-d tree over positions with the (recording, frame) key as one more axis, spaced so
    no two keys are within the tolerance of each other)."""
    from scipy.spatial import cKDTree

    from trackverify.tables import column_codes, joint_codes

    coords = coordinate_columns(table)
    if coordinate_columns(dets) != coords:
        raise InputError(f"the detection table is {len(coordinate_columns(dets))}-D but the "
                         f"tracker output is {len(coords)}-D", source=detections_source,
                         column="z_um")
    both = pd.concat([table[["recording", "frame"]], dets[["recording", "frame"]]],
                     ignore_index=True)
    key, _ = joint_codes([column_codes(both["recording"]), column_codes(both["frame"])])
    points = np.concatenate([table[coords].to_numpy(np.float64), dets[coords].to_numpy(np.float64)])
    step = 2.0 * float(np.abs(points).max(initial=0.0)) + 1.0  # > any distance in one key + tol
    spread = np.column_stack([points, key.astype(np.float64) * step])
    n = len(table)
    distance, index = cKDTree(spread[n:]).query(spread[:n], k=2,
                                                distance_upper_bound=MATCH_TOLERANCE_UM)
    fix = "add a `detection` column (the detection ids of the detections) to say which is which"
    where = f"within {MATCH_TOLERANCE_UM:g} um of this row's position in {detections_source}"
    for problem, bad in (("no detection of its frame lies", ~np.isfinite(distance[:, 0])),
                         ("two detections of its frame lie", np.isfinite(distance[:, 1]))):
        if bad.any():
            raise InputError(f"{problem} {where}: {fix}", source=source,
                             row=int(np.flatnonzero(bad)[0]) + 1)
    chosen = index[:, 0]
    order = np.argsort(chosen, kind="stable")
    repeat = np.flatnonzero(chosen[order][1:] == chosen[order][:-1])
    if len(repeat):
        first = repeat[np.argmin(order[1:][repeat])]  # the earliest row that repeats one
        raise InputError(f"this row and row {order[first] + 1} are at the position of one "
                         f"detection of {detections_source}: {fix}", source=source,
                         row=int(order[first + 1]) + 1)
    out = table.copy()
    out["detection"] = dets["detection"].to_numpy()[chosen]
    for column in coords:
        out[column] = dets[column].to_numpy(dtype=np.float64)[chosen]
    return out


def check_detections(observations: pd.DataFrame, detections: pd.DataFrame, source: str) -> None:
    """Every observation's ``(recording, frame, detection)`` is a detection row, at its position.

    Raises :class:`InputError` naming the detection file and the first offending observation
    row (1-based) otherwise; the coordinate sets must match (2-D with 2-D, 3-D with 3-D).
    """
    coords = coordinate_columns(observations)
    if coordinate_columns(detections) != coords:
        raise InputError(f"the detection table is {len(coordinate_columns(detections))}-D but the "
                         f"observations are {len(coords)}-D", source=source, column="z_um")
    keys = ["recording", "frame", "detection"]
    left, right = one_id_type(observations[keys + coords], detections[keys + coords], source)
    joined = left.merge(right, on=keys, how="left", suffixes=("", "_detection"), indicator=True)
    missing = (joined["_merge"] == "left_only").to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        values = ", ".join(f"{k}={plain(observations[k].iloc[row])!r}" for k in keys)
        raise InputError(f"observation row {row + 1} ({values}) is not a row of the detection "
                         "table", source=source, column="detection")
    moved = np.zeros(len(joined), dtype=bool)
    for c in coords:
        moved |= ~np.isclose(joined[c].to_numpy(), joined[c + "_detection"].to_numpy(),
                             rtol=1e-9, atol=1e-9)
    if moved.any():
        row = int(np.flatnonzero(moved)[0])
        values = ", ".join(f"{k}={plain(observations[k].iloc[row])!r}" for k in keys)
        raise InputError(f"observation row {row + 1} ({values}) is not at its detection's "
                         "position (detections are fixed)", source=source, column="x_um")


def one_id_type(observations: pd.DataFrame, detections: pd.DataFrame,
                source: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``observations`` and ``detections`` with ``recording`` and ``detection`` in one id type
    on both sides (:func:`~trackverify.tables.common_id_type`: an integer meets the text that
    writes it; integers beside text that never does are refused, naming ``source``), so a
    join on them meets; new frames, the inputs untouched."""
    pairs = {key: common_id_type(observations[key], detections[key], key,
                                 ("the observations", source))
             for key in ("recording", "detection")}
    return (observations.assign(**{k: a for k, (a, _) in pairs.items()}),
            detections.assign(**{k: b for k, (_, b) in pairs.items()}))


def read_pair(reference, predictions, **options) -> tuple[TrackTable, TrackTable, list[str]]:
    """Reference and predictions by :func:`read_tracks`, and every units warning (each
    file's, plus the scale comparison of the two).

    ``fmt``, ``columns``, ``pixel_size``, ``units`` and ``recording`` apply to both;
    ``reference_fmt``, ``predictions_columns`` ... (the same names prefixed) to one and take
    precedence. A side without a ``recording`` column (and no ``recording`` given) whose other
    side holds one recording is that recording (its record says so).
    """
    from trackverify.io.formats.units import assumed_once, scale_mismatch_warnings

    shared = ("fmt", "columns", "pixel_size", "units", "recording")
    unknown = sorted(set(options) - set(shared) - {f"{p}_{k}" for p in ("reference", "predictions")
                                                     for k in shared})
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}")

    def one(path, kind):
        return read_tracks(path, kind, **{k: options.get(f"{kind}_{k}") or options.get(k)
                                          for k in shared})

    ref, pred = one(reference, "reference"), one(predictions, "predictions")
    _same_recording(ref, pred)
    _same_recording(pred, ref)
    warnings = assumed_once(ref, pred) + ids_met_as_text(ref, pred)
    if {"x_um", "y_um"} <= set(pred.table.columns):
        warnings += scale_mismatch_warnings(ref.table, pred.table, ref.record["source"],
                                            pred.record["source"])
    return ref, pred, warnings


def _same_recording(side: TrackTable, other: TrackTable) -> None:
    """A side named by the default recording name takes ``other``'s one recording."""
    names = pd.unique(other.table["recording"])
    if side.record["recording"]["from"] != "default" or len(names) != 1:
        return
    side.table["recording"] = names[0]
    side.record["recording"] = {"from": f"{other.record['source']}'s one recording",
                                "name": plain(names[0])}
