"""What the review page draws for each sampled observation, from the audit's outputs.

For row ``i`` of review.csv (recording ``r``, frame ``t``, claimed id ``p``):

* the anchor frame ``a`` of ``r`` (audit.json's ``anchor_frame``, else ``r``'s first frame
  in audit.parquet, as the audit chose it), ``p``'s place there and every other identity of
  frame ``a`` within :data:`NEAR_UM` of it, with their ids;
* frame ``t``: every detection within :data:`NEAR_UM` of the observation, from the
  detections table audit.json names (a relative path is looked up from the current folder,
  then from AUDIT_DIR), else the tracker's rows of frame ``t`` (audit.parquet);
* ``p``'s track: its rows in frames ``t - TRACK_FRAMES .. t + TRACK_FRAMES``.

* where the registration puts ``p`` in frame ``t`` (audit.parquet's ``expected_*`` columns:
  the anchor place carried to frame ``t``), drawn in the observed frame; an audit without
  them (a verifier that does not register, or an older audit) marks the anchor place there
  and says so (``note``);
* the *start* of ``p``'s track, the observation the sampled one is judged against (the
  question a reviewer answers: is the sampled observation on the neuron its track started
  on?): its frame ``s`` (audit.parquet's ``start_frame``; the anchor frame for an anchor
  identity), its place, the anchor identity whose place it holds (``start_identity``; null:
  none) and every detection of frame ``s`` within :data:`NEAR_UM` of it (as ``observed``);
  null for an audit without ``start_frame`` (an older audit: its start is the anchor).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.tabular import read_table
from trackverify.review.sheet import Sheet

#: Radius (um) of the neighbourhoods drawn around the anchor place and the observation.
NEAR_UM = 25.0
#: Frames of the claimed id's track drawn either side of the observed frame.
TRACK_FRAMES = 5
REGISTERED_NOTE = ("the audit does not record the registered place; the claimed id's "
                   "anchor-frame place is marked instead")
EXPECTED_NOTE = "where the registration puts the claimed id in this frame"


def _points(table: pd.DataFrame, rows: np.ndarray, label: str, dims: list[str]) -> list[dict]:
    """``table``'s ``rows`` as JSON points {label, x, y[, z]}, in ``rows``' order."""
    part = table.iloc[rows]
    labels = part[label].to_numpy() if label in part else np.full(len(part), None)
    coords = {axis: part[f"{axis}_um"].to_numpy(float) for axis in dims}
    return [{"label": _label(labels[k]), **{axis: float(coords[axis][k]) for axis in dims}}
            for k in range(len(part))]


def _label(value) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _near(table: pd.DataFrame, rows: np.ndarray, centre: np.ndarray, dims: list[str]) -> np.ndarray:
    """Those of ``rows`` within :data:`NEAR_UM` of ``centre``, nearest first (stable)."""
    xyz = table.iloc[rows][[f"{axis}_um" for axis in dims]].to_numpy(float)
    distance = np.sqrt(((xyz - centre) ** 2).sum(axis=1))
    keep = np.flatnonzero(distance <= NEAR_UM)
    return rows[keep[np.argsort(distance[keep], kind="stable")]]


def _expected(audit: pd.DataFrame, rows: np.ndarray, dims: list[str]) -> dict | None:
    """Where the registration puts the claimed id in the observed frame (its row's
    ``expected_*``), or None when the audit does not say."""
    columns = [f"expected_{axis}_um" for axis in dims]
    if not len(rows) or not set(columns) <= set(audit.columns):
        return None
    place = audit.iloc[rows[0]][columns].to_numpy(dtype=float)
    return dict(zip(dims, place.tolist())) if np.isfinite(place).all() else None


def _start(audit: pd.DataFrame, track_rows: np.ndarray, dets: pd.DataFrame,
           dets_by_frame: dict, recording: str, det_label: str, dims: list[str]) -> dict | None:
    """The start of the claimed id's track (module docstring), or None when the audit does
    not record it or the track has none."""
    if "start_frame" not in audit.columns or not len(track_rows):
        return None
    first = audit["start_frame"].to_numpy(dtype=float, na_value=np.nan)[track_rows]
    frames = audit["frame"].to_numpy()[track_rows]
    at = track_rows[frames == first]
    if not len(at) or not np.isfinite(first[0]):
        return None
    row = audit.iloc[at[0]]
    place = row[[f"{a}_um" for a in dims]].to_numpy(dtype=float)
    frame = int(first[0])
    around = _near(dets, dets_by_frame.get((recording, frame), np.array([], dtype=np.int64)),
                   place, dims)
    identity = row["start_identity"] if "start_identity" in audit.columns else None
    return {"frame": frame, "place": dict(zip(dims, place.tolist())),
            "identity": _label(identity),
            "neighbours": _points(dets, around, det_label, dims)}


def _detections_path(audit_dir: Path, settings: dict) -> Path | None:
    named = (settings.get("inputs") or {}).get("detections")
    if not named or named == "None":
        return None
    for candidate in (Path(named), audit_dir / named):
        if candidate.is_file():
            return candidate
    return None


def _anchor_frames(audit: pd.DataFrame, settings: dict) -> dict[str, int]:
    fixed = settings.get("anchor_frame")
    first = audit.groupby("recording", sort=False)["frame"].min()
    return {str(r): int(fixed) if isinstance(fixed, int) else int(f) for r, f in first.items()}


def load_items(audit_dir: str | os.PathLike, sheet: Sheet) -> list[dict]:
    """One dict per row of ``sheet`` with what the page draws (see the module docstring)."""
    audit_dir = Path(audit_dir)
    audit = read_table(audit_dir / "audit.parquet")
    try:
        settings = json.loads((audit_dir / "audit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read ({exc})", source=str(audit_dir / "audit.json")) from None
    audit = audit.assign(recording=audit["recording"].astype(str))
    dims = ["x", "y", "z"] if "z_um" in audit else ["x", "y"]
    dets_path = _detections_path(audit_dir, settings)
    if dets_path is not None:
        dets = read_table(dets_path)
        dets = dets.assign(recording=dets["recording"].astype(str) if "recording" in dets
                           else audit["recording"].iloc[0])
        observed_source = f"detections ({dets_path.name})"
    else:
        dets, observed_source = audit, "the tracker's rows (no detections table found)"
    det_label = "detection" if dets is not audit else "pred_id"
    anchors = _anchor_frames(audit, settings)
    by_frame = audit.groupby(["recording", "frame"], sort=False).indices
    dets_by_frame = dets.groupby(["recording", "frame"], sort=False).indices
    # positions in ``audit`` itself (rows without an id in no group; a dropna() before the
    # groupby numbered the rows after the first missing id wrongly)
    by_id = audit.groupby(["recording", "pred_id"], sort=False, dropna=True).indices
    empty = np.array([], dtype=np.int64)
    items = []
    for index, row in enumerate(sheet.rows):
        recording, frame = row["recording"], int(float(row["frame"]))
        pred_id = float(row["pred_id"]) if row["pred_id"] not in ("", "nan") else np.nan
        observation = np.array([float(row.get(f"{axis}_um") or "nan") for axis in dims])
        anchor = anchors.get(recording)
        track_rows = by_id.get((recording, pred_id), empty)
        frames = audit["frame"].to_numpy()[track_rows]
        at_anchor = track_rows[frames == anchor]
        anchor_place = (audit.iloc[at_anchor[:1]][[f"{a}_um" for a in dims]].to_numpy(float)[0]
                        if len(at_anchor) else None)
        expected = _expected(audit, track_rows[frames == frame], dims)
        window = track_rows[np.abs(frames - frame) <= TRACK_FRAMES]
        window = window[np.argsort(audit["frame"].to_numpy()[window], kind="stable")]
        neighbours = (_near(audit, by_frame.get((recording, anchor), empty), anchor_place, dims)
                      if anchor_place is not None else empty)
        observed = _near(dets, dets_by_frame.get((recording, frame), empty), observation, dims)
        track = _points(audit, window, "frame", dims)
        start = _start(audit, track_rows, dets, dets_by_frame, recording, det_label, dims)
        items.append({
            "index": index, "recording": recording, "frame": frame,
            "pred_id": _label(pred_id), "detection": row.get("detection") or None,
            "stratum": row.get("stratum") or None, "decision": row["decision"],
            "dims": dims, "anchor_frame": anchor,
            "observation": dict(zip(dims, observation.tolist())),
            "anchor": None if anchor_place is None else dict(zip(dims, anchor_place.tolist())),
            "expected": expected,
            "anchor_neighbours": _points(audit, neighbours, "pred_id", dims),
            "observed": _points(dets, observed, det_label, dims),
            "observed_source": observed_source,
            "track": track,
            "start": start,
            "note": (EXPECTED_NOTE if expected is not None else REGISTERED_NOTE)
            if anchor_place is not None
            else f"id {_label(pred_id)} has no row in the anchor frame {anchor}",
        })
    return items
