"""How an audit reads its input: one path for the command, a file and a DataFrame.

:func:`read_input` takes the tracker's output as a file (any reader's format,
:mod:`trackverify.io.formats`; a trackverify table with ``--columns`` / ``--pixel-size``) or as
a DataFrame (the same ``columns`` / ``pixel_size`` apply), and optionally every detection of
each frame (a CSV / Parquet file or a DataFrame), and returns both tables ready for the audit
with a record of how they were read (``audit.json``'s ``input`` block).

* A blank (null) ``pred_id`` is a detection the tracker gave no identity (``pred_valid``
  false when the file has no ``pred_valid`` column).
* Positions: the tracker output's own ``x_um, y_um[, z_um]``; or, for one with a
  ``detection`` column and no positions, the detections' (joined on ``recording, frame,
  detection``; a detection id the detections lack is refused naming the tracker file,
  column ``detection`` and row); for one with positions and no ``detection`` column, each row
  is matched to the detection of its recording and frame within :data:`MATCH_TOLERANCE_UM`
  of its position, one to one (no such detection, two of them, or two rows on one: refused
  naming the row, with the fix: add a ``detection`` column), and then takes that detection's
  id and exact position.
* A z axis a mapping or a format leaves out is refused with the mapping that reads it
  (:func:`trackverify.io.formats.table.check_axes`); coordinates mapped from pixel columns get
  the formats' units warning (:func:`trackverify.io.formats.table.to_micrometres`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.tables import DETECTIONS, Schema, common_id_type, coordinate_columns, plain, validate

SINGLE_RECORDING = "recording"
#: How near (um) a row's position must be to a detection to be that detection, when the
#: tracker output has positions but no ``detection`` column: far below any two detections'
#: spacing (the units check warns below 0.5 um), far above the rounding of a position written
#: as text or float32 (about 1e-5 um at 100 um).
MATCH_TOLERANCE_UM = 1e-3
TRACKER_OUTPUT = Schema(
    "tracker output",
    required=("recording", "frame", "pred_id"),
    optional=("x_um", "y_um", "z_um", "detection", "pred_valid"),
    unique_keys=(("recording", "frame", "detection"),),
)
KEYS = ["recording", "frame", "detection"]


@dataclass
class AuditInput:
    """The audit's tables and how they were read (``audit.json``'s ``input`` block)."""

    tracks: pd.DataFrame
    detections: pd.DataFrame | None
    record: dict = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        return self.record["warnings"]


def read_input(tracks, detections=None, *, fmt: str | None = None, columns=None,
               pixel_size=None, source: str = "<tracks>",
               detections_source: str = "<detections>") -> AuditInput:
    """The tracker output and the detections, read and checked (module docstring).

    ``tracks`` / ``detections``: a path or a DataFrame (never modified); ``source`` /
    ``detections_source`` name a DataFrame in messages (a path names itself).
    """
    from trackverify.io.formats import parse_columns, parse_pixel_size

    if isinstance(tracks, (str, os.PathLike)):
        source = str(tracks)
    if isinstance(detections, (str, os.PathLike)):
        detections_source = str(detections)
    scale = parse_pixel_size(pixel_size)
    mapping = parse_columns(columns)
    frame, reader, units, warnings = _read_tracks(tracks, fmt, mapping, scale, source)
    path = Path(tracks) if reader == "table" else None
    table = _prepare_tracks(frame, source, path, mapping)
    if reader in ("table", "dataframe"):
        table, units, notes = _in_micrometres(table, mapping, scale, source)
        warnings = warnings + notes
    dets = None if detections is None else _prepare_detections(detections, detections_source)
    table, positions = _positions(table, dets, source, detections_source)
    if units is None:  # positions from the detections, in micrometres
        units = {"unit": "um", "um_per_unit": [1.0] * len(coordinate_columns(table)),
                 "source": "the detections' x_um, y_um[, z_um]"}
    record = {"reader": reader,
              "columns": {p: name for name, p in mapping.items()} or None,
              "pixel_size": None if scale is None else list(scale),
              "units": units, "positions": positions, "warnings": warnings}
    return AuditInput(table, dets, record)


def _read_tracks(tracks, fmt, mapping: dict, scale, source: str):
    """``(table before validation, reader name, units record or None, warnings)``."""
    from trackverify.io.formats import detect_format, input_path, load
    from trackverify.io.formats.table import apply_mapping, check_axes
    from trackverify.io.tabular import read_table

    if isinstance(tracks, (str, os.PathLike)):
        path = input_path(tracks)
        reader = fmt if fmt is not None else detect_format(path)
        if reader != "table":  # a tracker's own format: its reader, units and calibration
            loaded = load(path, "predictions", fmt=reader, columns=mapping or None,
                          pixel_size=scale, recording=SINGLE_RECORDING)
            _check_format_axes(path, loaded.table, source)
            return loaded.table, reader, loaded.info["calibration"], loaded.warnings
        frame = read_table(path)
    elif isinstance(tracks, pd.DataFrame):
        if fmt not in (None, "table"):
            raise InputError(f"a DataFrame is read as a table, not in format '{fmt}' (a "
                             "format names a file's layout: give the file)", source=source)
        frame, reader = tracks, "dataframe"
    else:
        raise InputError("the tracker output must be a table (pandas DataFrame) or a file",
                         source=source)
    frame = apply_mapping(frame, mapping, source)
    check_axes(frame, mapping, source)
    return frame, reader, None, []


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
    mapping = {name: project for project, name in guess.items()}
    check_axes(read_table(path).rename(columns=mapping), mapping, source,
               prefix="--format table ")


def _prepare_tracks(tracks: pd.DataFrame, source: str, path: Path | None = None,
                    mapping: dict | None = None) -> pd.DataFrame:
    """The tracker output validated (:data:`TRACKER_OUTPUT`); ``pred_valid`` derived from a
    null ``pred_id`` when absent; one recording named when ``recording`` is absent."""
    if "track" in tracks.columns:
        raise InputError("the tracker output has a 'track' column: audit takes no reference "
                         "(use `trackverify evaluate` or `run` when reference tracks exist)",
                         source=source, column="track")
    frame = tracks if "recording" in tracks.columns else tracks.assign(recording=SINGLE_RECORDING)
    if "pred_valid" not in frame.columns and "pred_id" in frame.columns:
        frame = frame.assign(pred_valid=frame["pred_id"].notna())
    from trackverify.io.formats.table import validated

    return validated(frame, TRACKER_OUTPUT, "predictions", source, mapping or {}, path,
                     names=list(tracks.columns))


def _in_micrometres(table: pd.DataFrame, mapping: dict, scale, source: str):
    from trackverify.io.formats.table import to_micrometres

    if not coordinate_columns(table):  # positions from the detections: micrometres
        return table, None, [] if scale is None else [
            f"{source}: --pixel-size ignored, the positions come from the detections"]
    return to_micrometres(table, mapping, scale, source)


def _prepare_detections(detections, source: str) -> pd.DataFrame:
    """The detection table (a CSV / Parquet file or a DataFrame), validated."""
    from trackverify.io.tabular import read_table

    if isinstance(detections, (str, os.PathLike)):
        detections = read_table(detections)
    if not isinstance(detections, pd.DataFrame):
        raise InputError("the detections must be a table (pandas DataFrame) or a file",
                         source=source)
    frame = detections if "recording" in detections.columns else detections.assign(
        recording=SINGLE_RECORDING)
    return validate(frame, DETECTIONS, source)


def _positions(table: pd.DataFrame, dets: pd.DataFrame | None, source: str,
               detections_source: str) -> tuple[pd.DataFrame, str]:
    """``table`` with positions and a ``detection`` column, and where its positions came from
    (module docstring); every row then one of ``dets``' detections, at its position."""
    has_positions, has_detection = bool(coordinate_columns(table)), "detection" in table.columns
    if dets is None:
        if not has_positions:
            raise InputError("the tracker output has no positions (x_um, y_um[, z_um]): give "
                             "them, or give --detections with the detections its 'detection' "
                             "column names" if has_detection else
                             "the tracker output has no positions (x_um, y_um[, z_um]) and "
                             "no 'detection' column (rename them in the file or map them with "
                             "--columns x_um=NAME,y_um=NAME)", source=source, column="x_um")
        if not has_detection:  # one detection per row, for the audit's own use only
            table["detection"] = table.groupby(["recording", "frame"], sort=False).cumcount()
        return table, "tracks"
    if has_detection and not has_positions:
        table, dets = one_id_type(table, dets, detections_source)
        table, how = _joined(table, dets, source, detections_source), (
            "detections: joined on recording, frame, detection")
    elif not has_detection and has_positions:
        table, how = _matched(table, dets, source, detections_source), (
            f"tracks; matched to the detections by position (within {MATCH_TOLERANCE_UM:g} um, "
            "one to one), ids and positions from the detections")
    elif not has_positions:
        raise InputError("the tracker output has neither positions (x_um, y_um[, z_um]) nor a "
                         "'detection' column naming the detections", source=source,
                         column="detection")
    else:
        how = "tracks"
    check_detections(table, dets, detections_source)
    return table, how


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


def read_detections(path: Path, reference):
    """The detection table, validated like every table (columns, integral frames, finite
    coordinates: one error naming the file, column and row); a detection id is optional.
    Without a ``recording`` column it belongs to the reference's one recording (refused when
    the reference holds several); a recording the reference does not hold is refused."""
    import numpy as np

    from trackverify.errors import InputError
    from trackverify.io.tabular import read_table
    from trackverify.tables import Schema, common_id_type, validate

    schema = Schema("detection table", required=("frame", "x_um", "y_um"),
                    optional=("recording", "detection", "z_um"))
    table = read_table(path)
    detections = validate(table, schema, source=str(path))
    recordings = reference["recording"].drop_duplicates()
    if "recording" not in table.columns:
        if len(recordings) > 1:
            raise InputError(f"no column 'recording', and the reference holds {len(recordings)} "
                             "recordings: say which each detection belongs to", source=str(path))
        return detections.assign(recording=recordings.iat[0] if len(recordings) else "")
    own, known = common_id_type(detections["recording"], recordings)
    unknown = np.flatnonzero(~own.isin(known).to_numpy())
    if len(unknown):
        raise InputError(f"recording {own.iat[unknown[0]]!r} is not in the reference",
                         source=str(path), column="recording", row=int(unknown[0]) + 1)
    return detections.assign(recording=own)
