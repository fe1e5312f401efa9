"""A reader's points (``frame, track, x_um, y_um[, z_um]``, extras) as a project table.

* reference: ``recording, frame, track, x_um, y_um[, z_um]`` + extras;
* predictions: the same with ``track`` renamed ``pred_id`` (``parent_track`` then holds a
  parent's ``pred_id``) and ``pred_valid = True``;
* observations (``run --data``, ``convert``): the tracker's tracks as both the reference and
  the clean predictions: ``pred_id = track``, ``pred_valid = True`` and ``detection`` = the
  file's node / spot id when there is one (``node``), else the point's rank within its frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.tables import DEFAULT_RECORDING, OBSERVATIONS, PREDICTIONS, REFERENCE, validate


def parent_ids(parent: np.ndarray | None, none: np.ndarray | None = None,
               length: int = 0) -> pd.arrays.IntegerArray:
    """The ``parent_track`` column: ``parent`` (int64) with null where ``none`` is True;
    ``parent=None`` gives ``length`` nulls (a format without lineage)."""
    if parent is None:
        parent, none = np.zeros(length, dtype=np.int64), np.ones(length, dtype=bool)
    values = pd.array(np.where(none, 0, parent).astype(np.int64), dtype="Int64")
    values[np.asarray(none, dtype=bool)] = pd.NA
    return values


def as_kind(table: pd.DataFrame, kind: str, recording: str | None,
            source: str) -> pd.DataFrame:
    out = table.copy()
    if "recording" not in out.columns:
        out.insert(0, "recording", DEFAULT_RECORDING if recording is None else recording)
    if kind == "reference":
        return validate(out, REFERENCE, source)
    if kind == "predictions":
        out = out.rename(columns={"track": "pred_id"})
        out["pred_valid"] = True
        return validate(out, PREDICTIONS, source)
    if "node" in out.columns and not out.duplicated(["recording", "frame", "node"]).any():
        out["detection"] = out["node"]
    else:
        out["detection"] = out.groupby(["recording", "frame"], sort=False).cumcount()
    out["pred_id"] = out["track"]
    out["pred_valid"] = True
    return validate(out, OBSERVATIONS, source)
