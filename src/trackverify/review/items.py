"""What the review page shows of each sampled observation, from the audit's outputs.

For row ``i`` of the sheet (recording ``r``, frame ``t``, claimed id ``p``), :meth:`ReviewItems.detail`:

* ``anchor``: the anchor frame ``a`` of ``r`` (audit.json's ``anchor_frame``, else ``r``'s
  first frame in audit.parquet, as the audit chose it), ``p``'s place there and every
  identity of frame ``a`` within :data:`NEAR_UM` of it on each axis, with its id;
* ``steps``: ``p``'s track in frames ``t - TRACK_FRAMES .. t + TRACK_FRAMES`` (its rows, in
  frame order; ``at`` is the observation's step), each with its place and the detections of
  its frame within :data:`NEAR_UM` of it (the detections table audit.json names, looked up
  from the current folder then from AUDIT_DIR, else the tracker's rows), unlabelled, and the
  x-y positions of every detection of its frame (``outline``, for the whole-frame view). The
  page draws each step centred on the track's own place in that frame, so a moving worm's
  track is seen as the image or points around the id, never as jumps in the frame's
  coordinates;
* ``start``: the first observation of ``p``'s track, the one it is judged against
  (audit.parquet's ``start_frame``, when the audit writes it): its frame, place and the
  detections around it; null otherwise;
* in triage mode only, ``verifier``: the row's verdict, reason, score, threshold, stratum,
  event, look-alike and where the registration puts ``p`` in frame ``t`` (``expected``), and
  ``start``'s ``identity``. Blind (the default), nothing of the audit's judgement is served.

:meth:`ReviewItems.listing` is the light list: each row's recording, frame, id and where to
find it elsewhere (the sheet's ``row``, file and voxel coordinates).
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

#: Half the side (um) of the box of points sent around each place.
NEAR_UM = 25.0
#: Frames of the claimed id's track either side of the observed frame.
TRACK_FRAMES = 5
#: The sheet's columns that say where an observation is in other tools (design.WHERE).
WHERE = ("row", "x_file", "y_file", "z_file", "t_index", "x_voxel", "y_voxel", "z_voxel")
#: audit.parquet's columns shown in triage mode only.
VERIFIER = ("verdict", "reason", "score", "threshold_um", "relative_score", "lookalike_id",
            "lookalike_um", "segment", "event")
_EMPTY = np.array([], dtype=np.int64)


def label(value) -> str | None:
    """An id as text: whole floats without ``.0``; None for a missing one."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None


def detections_path(audit_dir: Path, settings: dict) -> Path | None:
    named = (settings.get("inputs") or {}).get("detections")
    if not named or named == "None":
        return None
    for candidate in (Path(named), audit_dir / named):
        if candidate.is_file():
            return candidate
    return None


def anchor_frames(audit: pd.DataFrame, settings: dict) -> dict[str, int]:
    """Each recording's anchor frame: audit.json's, else its first frame in audit.parquet."""
    fixed = settings.get("anchor_frame")
    first = audit.groupby("recording", sort=False)["frame"].min()
    return {str(r): int(fixed) if isinstance(fixed, int) else int(f) for r, f in first.items()}


def read_settings(audit_dir: Path) -> dict:
    try:
        return json.loads((audit_dir / "audit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read ({exc})", source=str(audit_dir / "audit.json")) from None


class _Points:
    """A table's positions as arrays, indexed by (recording, frame)."""

    def __init__(self, table: pd.DataFrame, dims: list[str], labels: str | None):
        self.xyz = table[[f"{a}_um" for a in dims]].to_numpy(float)
        self.labels = table[labels].to_numpy() if labels else None
        self.by_frame = table.groupby(["recording", "frame"], sort=False).indices
        self.dims = dims

    def rows(self, recording: str, frame: int) -> np.ndarray:
        return self.by_frame.get((recording, frame), _EMPTY)

    def near(self, recording: str, frame: int, centre: np.ndarray) -> list[dict]:
        """The points of the frame within NEAR_UM of ``centre`` on every axis, nearest first."""
        rows = self.rows(recording, frame)
        offset = self.xyz[rows] - centre
        keep = np.flatnonzero((np.abs(offset) <= NEAR_UM).all(axis=1))
        keep = keep[np.argsort((offset[keep] ** 2).sum(axis=1), kind="stable")]
        return [{"label": None if self.labels is None else label(self.labels[rows[k]]),
                 **dict(zip(self.dims, np.round(self.xyz[rows[k]], 3).tolist()))} for k in keep]

    def outline(self, recording: str, frame: int) -> list[list[float]]:
        return np.round(self.xyz[self.rows(recording, frame)][:, :2], 1).tolist()


class ReviewItems:
    """The items of one sheet (module docstring); ``triage`` adds the audit's judgement;
    ``design``: sample.json as read (the stratum of each row in triage mode), or None."""

    def __init__(self, audit_dir: str | os.PathLike, sheet: Sheet, triage: bool = False,
                 design: dict | None = None):
        audit_dir = Path(audit_dir)
        audit = read_table(audit_dir / "audit.parquet")
        self.settings = read_settings(audit_dir)
        self.audit = audit.assign(recording=audit["recording"].astype(str))
        self.dims = ["x", "y", "z"] if "z_um" in audit else ["x", "y"]
        self.triage, self.design, self.rows = triage, design, sheet.rows
        path = detections_path(audit_dir, self.settings)
        if path is not None:
            dets = read_table(path)
            dets = dets.assign(recording=dets["recording"].astype(str) if "recording" in dets
                               else self.audit["recording"].iloc[0])
            self.points_source = f"the detections ({path.name})"
        else:
            dets, self.points_source = self.audit, "the tracker's rows (no detections table found)"
        self.detections = _Points(dets, self.dims, None)
        self.identities = _Points(self.audit, self.dims, "pred_id")
        self.anchors = anchor_frames(self.audit, self.settings)
        self.by_id = self.audit.groupby(["recording", "pred_id"], sort=False, dropna=True).indices
        self.frames = self.audit["frame"].to_numpy()
        self.numeric_ids = self.audit["pred_id"].dtype.kind in "fiu"

    def __len__(self) -> int:
        return len(self.rows)

    # -- the row of the sheet in audit.parquet
    def _key(self, index: int) -> tuple[str, int, object]:
        row = self.rows[index]
        text = row["pred_id"]
        pred_id = (float(text) if _number(text) is not None else np.nan) if self.numeric_ids \
            else text
        return row["recording"], int(float(row["frame"])), pred_id

    def _track(self, recording: str, pred_id) -> np.ndarray:
        rows = self.by_id.get((recording, pred_id), _EMPTY)
        return rows[np.argsort(self.frames[rows], kind="stable")]

    def _observed_row(self, index: int, track: np.ndarray, frame: int) -> int | None:
        """The audit row of sheet row ``index``: its id's row in its frame (its detection,
        else the nearest to its position, when the id has several there)."""
        here = track[self.frames[track] == frame]
        if len(here) > 1:
            row = self.rows[index]
            if "detection" in self.audit and _number(row.get("detection")) is not None:
                same = here[self.audit["detection"].to_numpy()[here] == float(row["detection"])]
                here = same if len(same) else here
            place = self._place(index)
            here = here[np.argsort(((self.identities.xyz[here] - place) ** 2).sum(axis=1),
                                   kind="stable")]
        return int(here[0]) if len(here) else None

    def _place(self, index: int) -> np.ndarray:
        return np.array([_number(self.rows[index].get(f"{a}_um")) or np.nan for a in self.dims])

    def _xyz(self, place: np.ndarray) -> dict:
        return dict(zip(self.dims, np.round(place, 4).tolist()))

    # -- what the page shows
    def listing(self, voxels: pd.DataFrame | None = None) -> list[dict]:
        """Each row's recording, frame, claimed id and ``where`` (the sheet's :data:`WHERE`
        cells, ``voxels``' when given and the sheet has none)."""
        out = []
        for index, row in enumerate(self.rows):
            where = {name: row[name] for name in WHERE if row.get(name, "") != ""}
            if voxels is not None and "t_index" not in where and pd.notna(voxels["t_index"].iloc[index]):
                where.update({k: v for k, v in voxels.iloc[index].items() if pd.notna(v)})
            out.append({"index": index, "recording": row["recording"],
                        "frame": int(float(row["frame"])), "pred_id": label(self._key(index)[2]),
                        "detection": row.get("detection") or None,
                        "where": {k: (int(v) if k in ("row", "t_index") else _number(v))
                                  for k, v in where.items()}})
        return out

    def detail(self, index: int) -> dict:
        """Everything the page draws for sheet row ``index`` (module docstring)."""
        recording, frame, pred_id = self._key(index)
        track = self._track(recording, pred_id)
        window = track[np.abs(self.frames[track] - frame) <= TRACK_FRAMES]
        observed = self._observed_row(index, track, frame)
        places = self.identities.xyz[window]
        if observed is None:  # the sheet's row is not in the audit: its own place only
            window, places = np.array([-1]), self._place(index)[None, :]
        at = int(np.flatnonzero(window == observed)[0]) if observed is not None else 0
        frames = np.where(window >= 0, self.frames[np.maximum(window, 0)], frame)
        steps = [{"frame": int(f), "place": self._xyz(p),
                  "points": self.detections.near(recording, int(f), p),
                  "outline": self.detections.outline(recording, int(f))}
                 for f, p in zip(frames, places)]
        anchor_frame = self.anchors.get(recording)
        at_anchor = track[self.frames[track] == anchor_frame]
        anchor_place = self.identities.xyz[at_anchor[0]] if len(at_anchor) else None
        item = {"index": index, "recording": recording, "frame": frame,
                "pred_id": label(pred_id), "dims": self.dims, "points_source": self.points_source,
                "anchor": {"frame": anchor_frame,
                           "place": None if anchor_place is None else self._xyz(anchor_place),
                           "points": [] if anchor_place is None else
                           self.identities.near(recording, anchor_frame, anchor_place)},
                "steps": steps, "at": at, "start": self._start(recording, track)}
        if self.triage:
            item["verifier"] = self._verifier(index, observed)
        return item

    def _start(self, recording: str, track: np.ndarray) -> dict | None:
        """The first observation of the track (audit.parquet's ``start_frame``), or None."""
        if "start_frame" not in self.audit.columns or not len(track):
            return None
        first = pd.to_numeric(self.audit["start_frame"], errors="coerce").to_numpy(float)[track]
        at = track[self.frames[track] == first]
        if not len(at):
            return None
        place, frame = self.identities.xyz[at[0]], int(first[0])
        start = {"frame": frame, "place": self._xyz(place),
                 "points": self.detections.near(recording, frame, place)}
        if self.triage and "start_identity" in self.audit.columns:
            start["identity"] = label(self.audit["start_identity"].iloc[at[0]])
        return start

    def _verifier(self, index: int, observed: int | None) -> dict:
        """The audit's judgement of the row (triage mode only)."""
        if observed is None:
            return {}
        row = self.audit.iloc[observed]
        out = {name: (label(row[name]) if name in ("lookalike_id", "segment", "event")
                      else row[name] if name in ("verdict", "reason") else _number(row[name]))
               for name in VERIFIER if name in self.audit.columns}
        out = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in out.items()}
        columns = [f"expected_{a}_um" for a in self.dims]
        expected = row[columns].to_numpy(float) if set(columns) <= set(self.audit.columns) else None
        out["expected"] = self._xyz(expected) if expected is not None and np.isfinite(
            expected).all() else None
        order = (self.design or {}).get("order", {}).get("stratum")
        if order is not None and index < len(order):
            out["stratum"] = self.design["strata"][order[index]]["stratum"]
        elif self.rows[index].get("stratum"):
            out["stratum"] = self.rows[index]["stratum"]
        return out
