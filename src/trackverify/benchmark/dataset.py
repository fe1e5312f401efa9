"""Where the observations of a run come from: a folder, a single table, or the specimen.

A dataset is a recording table plus a way to get each recording's observation table,
one recording at a time (memory does not grow with the cohort).

Frames are counted from each recording's first frame: a recording whose frames start at
``f0`` (1 for MATLAB-style numbering, or any later frame) is loaded with ``frame - f0``, so
its first frame is the anchor (frame 0) and ``start`` / ``recovery_end`` are counted from
it; ``source.first_frame`` keeps ``f0`` to write the rows back in the input's numbering.
A folder (or the folder of an ``observations.*`` file) may also hold ``detections.parquet``
(or ``.csv``): every source detection of each frame, ``recording, frame, detection, x_um,
y_um[, z_um]`` (extra columns allowed), with or without a reference identity. Every
observation's ``(recording, frame, detection)`` must be one of its rows, at the same position.
Identity-free evidence (``registered_distance``'s registration) then uses every detection of
the frame; without the table it uses the observation rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.tracks import check_detections
from trackverify.io.tabular import load_table, read_table
from trackverify.synth.specimen import (SpecimenConfig, animal_detections, animal_observations,
                                        provenance, recording_table)
from trackverify.tables import (DETECTIONS, RECORDINGS, TRACKER_IDS, common_id_type,
                                coordinate_columns, validate)


@dataclass(frozen=True)
class SpecimenSource:
    """One synthetic recording, generated where it is loaded (e.g. in a worker process)."""

    config: SpecimenConfig
    index: int
    first_frame: int = 0

    def load(self) -> pd.DataFrame:
        return animal_observations(self.config, self.index)

    def load_detections(self) -> pd.DataFrame | None:
        """The level's detection table (``freely_moving``: unlabelled and spurious points
        too), or None where the specimen's detections are its observation rows."""
        return animal_detections(self.config, self.index)


@dataclass(frozen=True)
class TableSource:
    """One recording's rows of a table that was read and validated up front."""

    table: pd.DataFrame
    first_frame: int = 0  # the input's number of frame 0 (the table holds frame - first_frame)
    detections: pd.DataFrame | None = None

    def load(self) -> pd.DataFrame:
        return self.table

    def load_detections(self) -> pd.DataFrame | None:
        """Every detection of the recording (``detections`` table), or None without one."""
        return self.detections


@dataclass
class Dataset:
    """Recordings (provenance) and where each one's observations come from."""

    recordings: pd.DataFrame
    source: dict
    _observations: pd.DataFrame | None = None
    _detections: pd.DataFrame | None = None
    _specimen: SpecimenConfig | None = None

    def sources(self, names: list[str] | None = None) -> Iterator[tuple[str, SpecimenSource | TableSource]]:
        """``(recording, source)`` in recording-table order; ``source.load()`` gives the table."""
        wanted = list(self.recordings["recording"]) if names is None else names
        if self._specimen is not None:
            index = {name: i for i, name in enumerate(self.recordings["recording"])}
            for name in wanted:
                yield name, SpecimenSource(self._specimen, index[name])
            return
        grouped = dict(tuple(self._observations.groupby("recording", sort=False)))
        detections = ({} if self._detections is None else
                      dict(tuple(self._detections.groupby("recording", sort=False))))
        for name in wanted:
            table = grouped[name].reset_index(drop=True)
            first = int(table["frame"].min())
            mine = detections.get(name)
            if mine is not None:  # counted from the same first frame as the observations
                mine = mine[mine["frame"].to_numpy() >= first].reset_index(drop=True)
                mine = mine.assign(frame=mine["frame"] - first) if first else mine
            yield name, TableSource(table.assign(frame=table["frame"] - first) if first else table,
                                    first, mine)

    def __iter__(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(recording, observation table)`` in recording-table order."""
        for name, source in self.sources():
            yield name, source.load()


def specimen_dataset(config: SpecimenConfig) -> Dataset:
    return Dataset(recording_table(config), {"specimen": provenance(config)}, _specimen=config)


def _check_whole_table(observations: pd.DataFrame, source: str) -> None:
    """The per-recording prediction checks of tracking_gt, once over the whole file, so a
    refusal names the file and counts rows of the file (not of one recording)."""
    from trackverify.metrics.tracking import check_predictions

    coords = coordinate_columns(observations)
    check_predictions(observations[["recording", "frame", "track", "detection", *coords]],
                      observations[["recording", "frame", "pred_id", "detection", "pred_valid",
                                    *coords]], source, reference_source=source)


def load_dataset(path: str | Path, fmt: str | None = None, columns: str | dict | None = None,
                 pixel_size: str | tuple | None = None, units: str | None = None,
                 recording: str | None = None) -> Dataset:
    """Load a folder (``observations.parquet`` or ``.csv`` + optional ``recordings.csv``), an
    observation table, or any tracker file :mod:`trackverify.io.formats` reads (its tracks
    become both the reference and the clean predictions), through the one reader of tracks
    (:func:`trackverify.io.tracks.read_tracks`). The source record (manifest) holds the
    format, the calibration used and any units warnings."""
    from trackverify.io.tracks import read_tracks
    path = Path(path)
    recordings_path = None
    if path.is_dir() and fmt in (None, "table") and any(
            (path / name).exists() for name in ("observations.parquet", "observations.csv")):
        table_path = next(p for p in (path / "observations.parquet", path / "observations.csv")
                          if p.exists())
        recordings_path = path / "recordings.csv"
        fmt = "table"
    elif path.is_dir() and fmt is None and not _is_tracker_folder(path):
        raise InputError("the folder has no observations.parquet or observations.csv",
                         source=str(path))
    else:
        table_path = path
    loaded = read_tracks(table_path, "observations", fmt=fmt, columns=columns,
                         pixel_size=pixel_size, units=units, recording=recording)
    observations = loaded.table
    _check_whole_table(observations, str(table_path))
    detections_path = _detections_path(path)
    detections = None
    if detections_path is not None:
        detections = load_table(detections_path, DETECTIONS)
        check_detections(observations, detections, str(detections_path))
    present = pd.unique(observations["recording"])
    if recordings_path is not None and recordings_path.exists():
        recordings = validate(read_table(recordings_path), RECORDINGS, source=str(recordings_path))
        observations["recording"], recordings["recording"] = common_id_type(
            observations["recording"], recordings["recording"], "recording",
            (str(table_path), str(recordings_path)))
        present = pd.unique(observations["recording"])
        unknown = ~pd.Series(present).isin(recordings["recording"]).to_numpy()
        if unknown.any():
            raise InputError(f"recording '{present[unknown.argmax()]}' of the observation table "
                             "is not in the recording table", source=str(recordings_path),
                             column="recording")
        recordings = recordings[recordings["recording"].isin(present)].reset_index(drop=True)
    else:
        recordings = pd.DataFrame({"recording": present, "animal_id": present,
                                   "provenance_group": "unknown", "source_folds": ""})
    record = loaded.record
    source = {"data": str(path), "format": record["format"],
              "calibration": record.get("calibration")}
    read = {k: v for k, v in record.items()
            if k not in ("path", "source", "format", "calibration", "warnings")}
    if any(v is not None for v in read.values()):
        source["read"] = read  # how it was read (mapping, recording, counts, version, ...)
    if loaded.warnings:
        source["warnings"] = loaded.warnings
    if detections_path is not None:
        source["detections"] = str(detections_path)
    return Dataset(recordings, source, _observations=observations, _detections=detections)


def _is_tracker_folder(path: Path) -> bool:
    from trackverify.io.formats import FORMATS

    return any(f.sniff(path) for f in FORMATS.values() if f.name != "table")


def _detections_path(path: Path) -> Path | None:
    """``detections.parquet`` / ``.csv`` in the data folder, or beside an ``observations.*`` file."""
    folder = path if path.is_dir() else path.parent if path.stem == "observations" else None
    if folder is None:
        return None
    return next((p for p in (folder / "detections.parquet", folder / "detections.csv")
                 if p.exists()), None)


def tracker_predictions(observations: pd.DataFrame, tracker: pd.DataFrame, first_frame: int = 0,
                        source: str = "tracker table") -> pd.DataFrame:
    """``observations`` with a tracker's identities as the predictions (copied; neither input
    is modified).

    ``tracker`` (:data:`~trackverify.tables.TRACKER_IDS`: ``recording, frame, detection,
    pred_id[, pred_valid]``, one row per detection, frames in the input's numbering) is
    joined on ``(recording, frame - first_frame, detection)``; an observation the tracker
    gave no row, or a null ``pred_id``, gets ``pred_valid`` false (and, for integer ids,
    ``pred_id`` -1, read by nothing). Raises :class:`InputError` naming ``source``, column and row for a table
    that is not one (missing column, repeated detection, ...).

    >>> obs = pd.DataFrame({"recording": "r", "frame": [0, 1], "track": 7, "detection": [3, 4],
    ...                     "x_um": 0.0, "y_um": 0.0, "pred_id": 7, "pred_valid": True})
    >>> ids = pd.DataFrame({"recording": ["r"], "frame": [1], "detection": [4], "pred_id": [9]})
    >>> tracker_predictions(obs, ids)[["frame", "pred_id", "pred_valid"]].values.tolist()
    [[0, -1, False], [1, 9, True]]
    """
    keys = ["recording", "frame", "detection"]
    tracker = validate(tracker, TRACKER_IDS, source=source)
    if "pred_valid" not in tracker.columns:
        tracker = tracker.assign(pred_valid=True)
    tracker = tracker[keys + ["pred_id", "pred_valid"]].assign(
        frame=tracker["frame"] - first_frame)
    if pd.api.types.is_integer_dtype(tracker["pred_id"].dtype):  # nullable: the join adds NA
        tracker["pred_id"] = tracker["pred_id"].astype("Int64")
    table = observations.drop(columns=["pred_id", "pred_valid"])
    for key in ("recording", "detection"):  # one id type on both sides, or the join misses
        table[key], tracker[key] = common_id_type(table[key], tracker[key], key,
                                                  ("the observations", source))
    joined = table.merge(tracker, on=keys, how="left", validate="one_to_one")
    valid = joined["pred_valid"].fillna(False).astype(bool) & joined["pred_id"].notna()
    joined["pred_valid"] = valid.to_numpy()
    if pd.api.types.is_integer_dtype(joined["pred_id"].dtype):  # text ids stay null there
        joined["pred_id"] = joined["pred_id"].where(valid, -1).astype(np.int64)
    return joined
