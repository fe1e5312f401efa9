"""The layer data of an audit folder, from its files alone (no napari, no Qt).

Files: ``audit.parquet`` and ``audit.json`` make a folder an audit folder (the ``--out`` of
``trackverify audit``); ``events.csv`` gives the events table (none without it);
``tracks.csv`` and ``segments.csv`` ride along in the layers' metadata when present; any
other file (``report.html``, ``review.csv``, a later ``joins.csv`` ...) is ignored.

Coordinates are napari's axis order ``frame, [z,] y, x``: the audit's own frame numbers and
its micrometres (``x_um``, ``y_um``, and ``z_um`` when audit.parquet has it), so a frame
is one step of the time slider and 1 um one world unit.

Per recording (a name suffixed `` (recording)`` when the folder holds several):

- ``observations``: points, one per row of audit.parquet with a position, in the file's
  row order; face colour by verdict (:data:`VERDICT_COLORS`; white for a row with no
  verdict, not judged: the anchor frame's, one without an id, a track's start), the row's columns as
  features (``pred_id``, ``verdict``, ``score``, ``reason``, ``lookalike_id``, ``event``
  ...); size the median per-identity threshold (half an identity's spacing; 2 um when the
  file has none); the events and files in ``metadata["trackverify"]``;
- ``tracks``: the rows with a prediction (``pred_valid``, ``pred_id`` not null) and a
  position, as ``track, frame, [z,] y, x`` in (track, frame) order; track = the ``pred_id``
  when every id is a whole number, else its index in order of first appearance
  (``metadata["trackverify"]["pred_ids"]`` names them);
- with ``image``, the lab's volume first, underneath (:func:`image_layer`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError

REQUIRED = ("audit.parquet", "audit.json")
OPTIONAL = ("events.csv", "tracks.csv", "segments.csv")
COLUMNS = ("recording", "frame", "pred_id", "x_um", "y_um", "verdict")
#: Face colour of each verdict (RGBA); a verdict not listed, or none (a row not judged), is white.
VERDICT_COLORS = {"certified": (0.10, 0.60, 0.47, 1.0), "flagged": (0.85, 0.15, 0.10, 1.0),
                  "abstained": (0.55, 0.55, 0.55, 1.0)}
OTHER_COLOR = (1.0, 1.0, 1.0, 1.0)
DEFAULT_SIZE_UM = 2.0


def is_audit_folder(path) -> bool:
    """A folder holding ``audit.parquet`` and ``audit.json``."""
    try:
        folder = Path(path)
        return folder.is_dir() and all((folder / name).is_file() for name in REQUIRED)
    except (TypeError, OSError):
        return False


def read_audit(folder) -> dict:
    """``{"observations": DataFrame, "summary": dict, "events": DataFrame, "tracks":
    DataFrame | None, "segments": DataFrame | None, "files": [names]}`` of an audit folder
    (events empty when ``events.csv`` is absent)."""
    from trackverify.io.bounded import read_json
    from trackverify.io.tabular import read_table

    folder = Path(folder)
    if not is_audit_folder(folder):
        raise InputError("not an audit folder (audit.parquet and audit.json): give the --out "
                         "folder of `trackverify audit`", source=str(folder))
    observations = read_table(folder / "audit.parquet")
    for column in COLUMNS:
        if column not in observations.columns:
            raise InputError("no such column in an audit's observations",
                             source=str(folder / "audit.parquet"), column=column)
    optional = {name: read_table(folder / name) if (folder / name).is_file() else None
                for name in OPTIONAL}
    events = optional["events.csv"]
    if events is None:
        events = pd.DataFrame({"rank": pd.Series(dtype="int64"),
                               "recording": pd.Series(dtype="str")})
    return {"observations": observations, "summary": read_json(folder / "audit.json"),
            "events": events, "tracks": optional["tracks.csv"],
            "segments": optional["segments.csv"],
            "files": [n for n in (*REQUIRED, *OPTIONAL) if (folder / n).is_file()]}


def axes(observations: pd.DataFrame) -> list[str]:
    """The position columns in napari's order: ``[z_um,] y_um, x_um``."""
    return (["z_um"] if "z_um" in observations.columns else []) + ["y_um", "x_um"]


def point_rows(observations: pd.DataFrame) -> np.ndarray:
    """Whether each row has a position (every coordinate finite)."""
    return np.isfinite(observations[axes(observations)].to_numpy(np.float64)).all(axis=1)


def verdict_colors(verdict) -> np.ndarray:
    """RGBA per verdict (:data:`VERDICT_COLORS`; :data:`OTHER_COLOR` for any other)."""
    codes = pd.Index(list(VERDICT_COLORS)).get_indexer(
        pd.Series(verdict, dtype=object).astype(str))  # -1: not listed
    palette = np.array([*VERDICT_COLORS.values(), OTHER_COLOR], dtype=np.float64)
    return palette[codes]


def track_ids(pred_id: pd.Series) -> tuple[np.ndarray, list]:
    """``(napari track id per row, the pred_id of each distinct id)``: the ids themselves
    when all are whole numbers, else their indices in order of first appearance."""
    codes, uniques = pd.factorize(pred_id, sort=False)
    values = pd.to_numeric(pd.Series(uniques), errors="coerce").to_numpy(np.float64)
    if len(values) and np.isfinite(values).all() and (values == np.round(values)).all() \
            and np.abs(values).max() < 2**53:
        return values.astype(np.int64)[codes], [int(v) for v in values]
    return codes.astype(np.int64), [str(v) for v in uniques]


def _suffix(recording: str, several: bool) -> str:
    return f" ({recording})" if several else ""


def recording_layers(rows: pd.DataFrame, recording: str, several: bool, audit: dict,
                     folder: Path) -> list[tuple]:
    """The observations and tracks layers of one recording (see the module doc)."""
    cols = ["frame", *axes(rows)]
    located = rows[point_rows(rows)]
    points = located[cols].to_numpy(np.float64)
    features = located.drop(columns=cols).reset_index(drop=True)
    threshold = pd.to_numeric(located["threshold_um"], errors="coerce").to_numpy(np.float64) \
        if "threshold_um" in located.columns else np.zeros(0)
    size = float(np.nanmedian(threshold)) if np.isfinite(threshold).any() else DEFAULT_SIZE_UM
    events = audit["events"]
    if "recording" in events.columns and len(events):
        events = events[events["recording"].astype(str) == recording]
    valid = located["pred_id"].notna().to_numpy()
    if "pred_valid" in located.columns:
        valid = valid & located["pred_valid"].fillna(False).to_numpy(dtype=bool)
    tracked = located[valid]
    ids, pred_ids = track_ids(tracked["pred_id"].reset_index(drop=True))
    track_data = np.column_stack([ids, tracked[cols].to_numpy(np.float64)]) if len(tracked) \
        else np.zeros((0, len(cols) + 1))
    track_data = track_data[np.lexsort((track_data[:, 1], track_data[:, 0]))]
    meta = {"folder": str(folder), "recording": recording, "files": audit["files"],
            "events": events.to_dict("records"), "summary": audit["summary"]}
    for name in ("tracks", "segments"):
        table = audit[name]
        if table is not None and "recording" in table.columns:
            table = table[table["recording"].astype(str) == recording]
        meta[name] = None if table is None else table.to_dict("records")
    suffix = _suffix(recording, several)
    return [
        (points, {"name": f"observations{suffix}", "features": features,
                  "face_color": verdict_colors(located["verdict"]), "size": size,
                  "border_width": 0,
                  "metadata": {"trackverify": meta}}, "points"),
        (track_data, {"name": f"tracks{suffix}", "tail_length": 10,
                      "metadata": {"trackverify": {**meta, "pred_ids": pred_ids}}}, "tracks"),
    ]


def read_volume(path):
    """Where the lab's volume readers plug in (TIFF, OME-Zarr, NWB, HDF5: not part of
    trackverify yet): a path is refused with one line until they do; give the array."""
    raise InputError("opening a volume from a file needs trackverify's volume readers (TIFF, "
                     "OME-Zarr, NWB, HDF5), not there yet: pass the array as image=",
                     source=str(path))


def image_layer(image, scale=None) -> tuple:
    """The lab's volume as an image layer: ``image`` an array napari takes (numpy, dask,
    zarr), axes ``frame, [z,] y, x``, or a path (:func:`read_volume`); ``scale`` the
    micrometres per voxel along each axis (1 for the frame axis), so its voxels land on the
    audit's micrometres."""
    if isinstance(image, (str, os.PathLike)):
        image = read_volume(image)
    options = {"name": "volume", "colormap": "gray"}
    if scale is not None:
        options["scale"] = tuple(float(s) for s in scale)
    return image, options, "image"


def audit_layers(folder, image=None, image_scale=None) -> list[tuple]:
    """napari ``LayerData`` tuples ``(data, options, kind)`` of the audit folder ``folder``:
    the volume (when ``image`` is given: :func:`image_layer`), then per recording its
    observations and tracks (see the module doc)."""
    folder = Path(folder)
    audit = read_audit(folder)
    observations = audit["observations"]
    recordings = observations["recording"].astype(str)
    names = list(dict.fromkeys(recordings))
    layers = [image_layer(image, image_scale)] if image is not None else []
    for recording in names:
        rows = observations[(recordings == recording).to_numpy()]
        layers += recording_layers(rows, recording, len(names) > 1, audit, folder)
    return layers


def event_rows(features: pd.DataFrame, frames: np.ndarray, rank: int, frame: int
               ) -> np.ndarray:
    """Indices of the points of event ``rank`` in ``frame`` (``features["event"]`` is each
    observation's event, audit.parquet's column)."""
    if "event" not in features.columns:
        return np.zeros(0, dtype=np.int64)
    event = pd.to_numeric(features["event"], errors="coerce").to_numpy(np.float64)
    return np.flatnonzero((event == rank) & (np.asarray(frames) == frame))
