"""Where the observations of a run come from: a folder, a single table, or the specimen.

A dataset is a recording table plus a way to get each recording's observation table,
one recording at a time (memory does not grow with the cohort).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from trackverify.errors import InputError
from trackverify.io.tabular import read_table
from trackverify.synth.specimen import SpecimenConfig, animal_observations, provenance, recording_table
from trackverify.tables import RECORDINGS, validate


@dataclass(frozen=True)
class SpecimenSource:
    """One synthetic recording, generated where it is loaded (e.g. in a worker process)."""

    config: SpecimenConfig
    index: int

    def load(self) -> pd.DataFrame:
        return animal_observations(self.config, self.index)


@dataclass(frozen=True)
class TableSource:
    """One recording's rows of a table that was read and validated up front."""

    table: pd.DataFrame

    def load(self) -> pd.DataFrame:
        return self.table


@dataclass
class Dataset:
    """Recordings (provenance) and where each one's observations come from."""

    recordings: pd.DataFrame
    source: dict
    _observations: pd.DataFrame | None = None
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
        for name in wanted:
            yield name, TableSource(grouped[name].reset_index(drop=True))

    def __iter__(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(recording, observation table)`` in recording-table order."""
        for name, source in self.sources():
            yield name, source.load()


def specimen_dataset(config: SpecimenConfig) -> Dataset:
    return Dataset(recording_table(config), {"specimen": provenance(config)}, _specimen=config)


def load_dataset(path: str | Path, fmt: str | None = None, columns: str | dict | None = None,
                 pixel_size: str | tuple | None = None) -> Dataset:
    """Load a folder (``observations.parquet`` or ``.csv`` + optional ``recordings.csv``), an
    observation table, or any tracker file :mod:`trackverify.io.formats` reads (its tracks
    become both the reference and the clean predictions). The source record (manifest) holds
    the format, the calibration used and any units warnings."""
    from trackverify.io.formats import detect_format, load

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
    loaded = load(table_path, "observations", fmt=fmt or detect_format(table_path),
                  columns=columns, pixel_size=pixel_size)
    observations = loaded.table
    present = pd.unique(observations["recording"])
    if recordings_path is not None and recordings_path.exists():
        recordings = validate(read_table(recordings_path), RECORDINGS, source=str(recordings_path))
        unknown = ~pd.Series(present).isin(recordings["recording"]).to_numpy()
        if unknown.any():
            raise InputError(f"recording '{present[unknown.argmax()]}' of the observation table "
                             "is not in the recording table", source=str(recordings_path),
                             column="recording")
        recordings = recordings[recordings["recording"].isin(present)].reset_index(drop=True)
    else:
        recordings = pd.DataFrame({"recording": present, "animal_id": present,
                                   "provenance_group": "unknown", "source_folds": ""})
    source = {"data": str(path), "format": loaded.info["format"],
              "calibration": loaded.info.get("calibration")}
    if loaded.warnings:
        source["warnings"] = loaded.warnings
    return Dataset(recordings, source, _observations=observations)


def _is_tracker_folder(path: Path) -> bool:
    from trackverify.io.formats import FORMATS

    return any(f.sniff(path) for f in FORMATS.values() if f.name != "table")
