"""NWB files in the WormID layout (extra ``nwb``: pynwb, hdmf, ndx-multichannel-volume).

Reading (with h5py, which pynwb brings) understands two layouts, both under
``processing/CalciumActivity``:

* **ROI layout**: ``CalciumSeriesSegmentation`` is an ``ImageSegmentation`` holding one
  ``PlaneSegmentation`` per frame, named ``Seg_tpoint_{t}``. Row ``i`` of every frame is
  the same neuron. Its ``voxel_mask`` (``x, y, z, weight`` voxel indices) gives the
  position ``origin_coords + centre * grid_spacing`` in micrometres, where ``centre`` is
  the weight-averaged voxel (plain mean when the weights sum to 0) and ``grid_spacing``
  / ``origin_coords`` come from the ``ImagingVolume`` the segmentation links to (units
  converted to um). A row with an empty voxel mask is a neuron not observed in that frame.
* **Label-volume layout**: ``CalciumSeriesSegmentation`` is a ``MultiChannelVolumeSeries``
  whose ``data`` is a ``[t, x, y, z]`` integer label volume; label ``k >= 1`` is neuron
  row ``k - 1`` (0 is background) and its position is the centre of its voxels.

Names come from the ``NeuronIDs`` ``SegmentationLabels`` (one label per row, kept
verbatim: labels may be empty or end in ``?`` for an uncertain name; labels stored as
per-character arrays are joined). The observation table gets ``track`` = row index,
``detection`` = row index, ``pred_id = track``, ``pred_valid = True`` and a
``neuron_name`` column; the recording table gets ``recording`` = the file's
``identifier``, ``animal_id`` = ``general/subject/subject_id`` (else the recording) and
``provenance_group`` = ``general/lab`` (else ``"unknown"``).

Writing produces the ROI layout (or the label-volume layout) with pynwb and the
``ndx-multichannel-volume`` classes. The writer chooses a voxel spacing (``voxel_um``) and
records it as the ``ImagingVolume``'s ``grid_spacing`` with ``origin_coords`` = the
smallest position per axis, so positions come back to within half a voxel. Columns the
WormID layout has no place for (``track``, ``detection``, ``pred_id``, ``pred_valid`` in the
ROI layout) are extra columns of each ``PlaneSegmentation``; the recording-table row and
the dimensionality are JSON in ``general/notes``. Files written here therefore round-trip
ids, frames and names exactly.

Malformed files raise :class:`~trackverify.errors.InputError` naming the file and the group.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.tables import OBSERVATIONS, RECORDINGS, plain, validate

MODULE = "processing/CalciumActivity"
SEGMENTATION = f"{MODULE}/CalciumSeriesSegmentation"
LABELS = f"{MODULE}/NeuronIDs"
FRAME_NAME = re.compile(r"^Seg_tpoint_(\d+)$")
NOTES_KEY = "trackverify"
ROI_VOXEL_UM = 0.001
LABEL_VOXEL_UM = 1.0
MAX_LABEL_VOXELS = 200_000_000
_UNIT_TO_UM = {"um": 1.0, "µm": 1.0, "micrometer": 1.0, "micrometers": 1.0, "micron": 1.0,
               "microns": 1.0, "mm": 1e3, "millimeter": 1e3, "millimeters": 1e3,
               "nm": 1e-3, "nanometer": 1e-3, "nanometers": 1e-3, "m": 1e6, "meter": 1e6,
               "meters": 1e6}


def _h5py():
    from trackverify.extras import require

    return require("h5py", "nwb", "reading NWB files")


# ----------------------------------------------------------------------------- reading


def read_nwb(path: str | os.PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read one WormID-layout NWB file: ``(observations, recordings)`` (module docstring)."""
    h5py = _h5py()
    source = str(path)
    if not Path(path).is_file():
        raise InputError("file not found", source=source)
    try:
        handle = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"not a readable NWB (HDF5) file ({exc})", source=source) from exc
    with handle as f:
        notes = _notes(f)
        recording_row = _recording_row(f, notes)
        if SEGMENTATION not in f:
            raise InputError(f"no group '{SEGMENTATION}' (not a WormID-layout NWB file)",
                             source=source)
        seg = f[SEGMENTATION]
        kind = _attr(seg, "neurodata_type")
        if isinstance(seg, h5py.Group) and "data" in seg and kind != "ImageSegmentation":
            frames, rows, voxels, columns, n_rows = _read_label_volume(seg, source)
        else:
            frames, rows, voxels, columns, n_rows = _read_rois(f, seg, source)
        names = _read_names(f, n_rows, source)
    origin, spacing = voxels
    positions = origin + columns["centre"] * spacing
    tracks = notes.get("tracks")
    track = (np.asarray(tracks, dtype=object)[rows] if tracks is not None and len(tracks) == n_rows
             else rows)
    obs = pd.DataFrame({
        "recording": recording_row["recording"],
        "frame": frames.astype(np.int64),
        "track": columns.get("track", track),
        "detection": columns.get("detection", rows),
        "x_um": positions[:, 0], "y_um": positions[:, 1], "z_um": positions[:, 2],
        "pred_id": columns.get("pred_id", columns.get("track", track)),
        "pred_valid": columns.get("pred_valid", np.ones(len(rows), dtype=bool)),
        "neuron_name": names[rows] if names is not None else None,
    })
    if names is None:
        obs = obs.drop(columns="neuron_name")
    if notes.get("dimensions") == 2:
        obs = obs.drop(columns="z_um")
    obs = obs.sort_values("frame", kind="stable").reset_index(drop=True)
    obs = validate(obs, OBSERVATIONS, source=source)
    recordings = validate(pd.DataFrame([recording_row]), RECORDINGS, source=source)
    return obs, recordings


def _attr(obj, name: str) -> Any:
    value = obj.attrs.get(name)
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _scalar_text(f, path: str) -> str | None:
    if path not in f:
        return None
    value = f[path][()]
    if isinstance(value, np.ndarray):
        value = value.ravel()[0] if value.size else None
    return value.decode("utf-8") if isinstance(value, bytes) else (None if value is None
                                                                    else str(value))


def _notes(f) -> dict[str, Any]:
    text = _scalar_text(f, "general/notes")
    try:
        data = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return data.get(NOTES_KEY, {}) if isinstance(data, dict) else {}


def _recording_row(f, notes: dict[str, Any]) -> dict[str, Any]:
    saved = notes.get("recording_row")
    if isinstance(saved, list) and all(isinstance(p, list) and len(p) == 2 for p in saved):
        return dict(saved)  # [column, value] pairs keep the table's column order
    recording = _scalar_text(f, "identifier") or "recording"
    return {"recording": recording,
            "animal_id": _scalar_text(f, "general/subject/subject_id") or recording,
            "provenance_group": _scalar_text(f, "general/lab") or "unknown"}


def _volume_geometry(volume, source: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(origin_um, spacing_um)`` of an ImagingVolume group."""
    out = []
    for name in ("origin_coords", "grid_spacing"):
        if name not in volume:
            if name == "origin_coords":
                out.append(np.zeros(3))
                continue
            raise InputError(f"the ImagingVolume '{volume.name}' linked from '{where}' has no "
                             "grid_spacing", source=source)
        values = np.asarray(volume[name][()], dtype=np.float64).ravel()
        if values.shape != (3,) or not np.all(np.isfinite(values)):
            raise InputError(f"'{volume.name}/{name}' must hold 3 finite numbers, found shape "
                             f"{values.shape}", source=source)
        unit = str(_attr(volume[name], "unit") or "micrometers").strip().lower()
        if unit not in _UNIT_TO_UM:
            raise InputError(f"'{volume.name}/{name}' has unknown unit {unit!r}", source=source)
        out.append(values * _UNIT_TO_UM[unit])
    if np.any(out[1] <= 0):
        raise InputError(f"'{volume.name}/grid_spacing' must be > 0", source=source)
    return out[0], out[1]


def _linked_volume(group, link: str, source: str):
    if link not in group:
        raise InputError(f"'{group.name}' has no '{link}' link to its ImagingVolume",
                         source=source)
    return group[link]


def _read_rois(f, seg, source: str):
    h5py = _h5py()
    if not isinstance(seg, h5py.Group):
        raise InputError(f"'{SEGMENTATION}' is not a group", source=source)
    frames_by_name = {int(m.group(1)): name for name in seg
                      if (m := FRAME_NAME.match(name))}
    if not frames_by_name:
        raise InputError(f"'{SEGMENTATION}' holds no Seg_tpoint_{{t}} plane segmentations",
                         source=source)
    order = sorted(frames_by_name)
    first = seg[frames_by_name[order[0]]]
    geometry = _volume_geometry(_linked_volume(first, "imaging_plane", source), source, first.name)
    frames, rows, centres = [], [], []
    extra: dict[str, list] = {}
    n_rows = None
    for t in order:
        plane = seg[frames_by_name[t]]
        where = plane.name
        for needed in ("voxel_mask", "voxel_mask_index"):
            if needed not in plane:
                raise InputError(f"'{where}' has no '{needed}'", source=source)
        index = np.asarray(plane["voxel_mask_index"][()], dtype=np.int64).ravel()
        voxels = _voxel_array(plane["voxel_mask"], source, where)
        if index.size and (np.any(np.diff(index) < 0) or index[-1] != len(voxels)
                           or index[0] < 0):
            raise InputError(f"'{where}/voxel_mask_index' does not index voxel_mask "
                             f"({len(voxels)} voxels)", source=source)
        if n_rows is None:
            n_rows = index.size
        elif index.size != n_rows:
            raise InputError(f"'{where}' has {index.size} rows but the first frame has {n_rows}; "
                             "row i must be the same neuron in every frame", source=source)
        counts = np.diff(np.r_[0, index])
        row_of_voxel = np.repeat(np.arange(index.size), counts)
        observed = counts > 0
        centre = _centres(voxels, row_of_voxel, index.size)[observed]
        frames.append(np.full(int(observed.sum()), t))
        rows.append(np.flatnonzero(observed))
        centres.append(centre)
        for column in ("track", "detection", "pred_id", "pred_valid"):
            if column in plane:
                values = plane[column][()]
                if len(values) != index.size:
                    raise InputError(f"'{where}/{column}' has {len(values)} values for "
                                     f"{index.size} rows", source=source)
                extra.setdefault(column, []).append(_decode_values(values)[observed])
    columns: dict[str, Any] = {"centre": np.concatenate(centres)}
    for column, parts in extra.items():
        if len(parts) != len(order):
            raise InputError(f"column '{column}' is missing from some Seg_tpoint groups",
                             source=source)
        columns[column] = np.concatenate(parts)
    if "pred_valid" in columns:
        columns["pred_valid"] = columns["pred_valid"].astype(bool)
    return np.concatenate(frames), np.concatenate(rows), geometry, columns, n_rows


def _voxel_array(dataset, source: str, where: str) -> np.ndarray:
    """``voxel_mask`` as an ``(M, 4)`` float array ``x, y, z, weight``."""
    data = dataset[()]
    if data.dtype.names is not None:
        missing = [c for c in ("x", "y", "z") if c not in data.dtype.names]
        if missing:
            raise InputError(f"'{where}/voxel_mask' has no field '{missing[0]}'", source=source)
        weight = (data["weight"].astype(np.float64) if "weight" in data.dtype.names
                  else np.ones(len(data)))
        return np.column_stack([data["x"], data["y"], data["z"], weight]).astype(np.float64)
    data = np.asarray(data)
    if data.ndim != 2 or data.shape[1] not in (3, 4) or not np.issubdtype(data.dtype, np.number):
        raise InputError(f"'{where}/voxel_mask' must be (voxels, 4) x, y, z, weight; found "
                         f"shape {data.shape}", source=source)
    data = data.astype(np.float64)
    return data if data.shape[1] == 4 else np.column_stack([data, np.ones(len(data))])


def _centres(voxels: np.ndarray, row_of_voxel: np.ndarray, n_rows: int) -> np.ndarray:
    """Weighted mean voxel per row (plain mean where a row's weights sum to 0)."""
    weight = voxels[:, 3]
    wsum = np.bincount(row_of_voxel, weights=weight, minlength=n_rows)
    count = np.bincount(row_of_voxel, minlength=n_rows).astype(np.float64)
    use_weight = wsum > 0
    out = np.zeros((n_rows, 3))
    for axis in range(3):
        weighted = np.bincount(row_of_voxel, weights=voxels[:, axis] * weight, minlength=n_rows)
        plain = np.bincount(row_of_voxel, weights=voxels[:, axis], minlength=n_rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, axis] = np.where(use_weight, weighted / np.where(use_weight, wsum, 1),
                                    plain / np.maximum(count, 1))
    return out


def _read_label_volume(seg, source: str):
    where = seg.name
    data = seg["data"]
    if data.ndim != 4:
        raise InputError(f"'{where}/data' must be a [t, x, y, z] label volume; found shape "
                         f"{data.shape}", source=source)
    if not np.issubdtype(data.dtype, np.integer):
        raise InputError(f"'{where}/data' must hold integer labels, found {data.dtype}",
                         source=source)
    geometry = _volume_geometry(_linked_volume(seg, "imaging_volume", source), source, where)
    frames, rows, centres = [], [], []
    n_rows = 0
    step = max(1, int(2e7 // max(1, int(np.prod(data.shape[1:])))))
    for start in range(0, data.shape[0], step):
        block = np.asarray(data[start:start + step])
        t, x, y, z = np.nonzero(block)
        labels = block[t, x, y, z].astype(np.int64)
        if labels.size and labels.min() < 0:
            raise InputError(f"'{where}/data' holds negative labels", source=source)
        if not labels.size:
            continue
        top = int(labels.max())
        n_rows = max(n_rows, top)
        key = t * (top + 1) + labels
        uniq, inverse = np.unique(key, return_inverse=True)
        centre = _centres(np.column_stack([x, y, z, np.ones(len(x))]).astype(np.float64),
                          inverse, len(uniq))
        frames.append(uniq // (top + 1) + start)
        rows.append(uniq % (top + 1) - 1)
        centres.append(centre)
    if not frames:
        raise InputError(f"'{where}/data' holds no labelled voxel", source=source)
    return (np.concatenate(frames), np.concatenate(rows), geometry,
            {"centre": np.concatenate(centres)}, n_rows)


def _read_names(f, n_rows: int, source: str) -> np.ndarray | None:
    if LABELS not in f:
        return None
    group = f[LABELS]
    if "labels" not in group:
        raise InputError(f"'{LABELS}' has no 'labels' dataset", source=source)
    try:
        names = _decode_labels(group["labels"][()])
    except (UnicodeDecodeError, TypeError, ValueError) as exc:
        raise InputError(f"'{LABELS}/labels' cannot be decoded as text ({exc})",
                         source=source) from exc
    if len(names) < n_rows:
        raise InputError(f"'{LABELS}/labels' has {len(names)} labels for {n_rows} neurons",
                         source=source)
    return np.asarray(names, dtype=object)


def _decode_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return chr(int(value)) if value else ""  # a character code; 0 is padding
    if isinstance(value, (np.ndarray, list, tuple)):
        return "".join(_decode_text(v) for v in np.asarray(value, dtype=object).ravel())
    raise TypeError(f"label of type {type(value).__name__}")


def _decode_labels(data: Any) -> list[str]:
    """Labels as a list of strings: text, UTF-8 bytes, or per-character arrays joined
    (characters or integer character codes, ragged or padded with NUL / spaces)."""
    array = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    if array.ndim == 2 and (array.dtype.kind in "iu" or (array.dtype.kind in "SU"
                                                          and array.dtype.itemsize <= 4)):
        # One row of single characters (or character codes) per label, padding stripped.
        return ["".join(_decode_text(c) for c in row).rstrip("\x00 ") for row in array]
    if array.ndim != 1:
        raise ValueError(f"expected one label per neuron, found shape {array.shape}")
    return [_decode_text(v) for v in array]


def _decode_values(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind in "SO":
        return np.array([v.decode("utf-8") if isinstance(v, bytes) else v for v in values],
                        dtype=object)
    return values


# ----------------------------------------------------------------------------- writing


def write_nwb(observations: pd.DataFrame, path: str | os.PathLike, *,
              recording: dict[str, Any] | None = None, layout: str = "rois",
              voxel_um: float | None = None) -> Path:
    """Write one recording's observation table as a WormID-layout NWB file (atomically).

    ``recording`` is its row of the recording table (default: the recording is its own
    animal, provenance ``unknown``). ``layout`` is ``"rois"`` (one PlaneSegmentation per
    frame) or ``"labels"`` (a ``[t, x, y, z]`` label volume; keeps positions, tracks and
    names). ``voxel_um`` is the isotropic voxel spacing the writer records (default
    0.001 um for ROIs, 1 um for labels); positions are rounded to it.
    """
    from trackverify.io.atomic import write_atomic

    from trackverify.extras import require

    if layout not in ("rois", "labels"):
        raise InputError(f"unknown NWB layout {layout!r} (use rois or labels)")
    for module in ("hdmf", "pynwb", "ndx_multichannel_volume"):  # one line, before any work
        require(module, "nwb", "writing NWB (convert --to nwb)")
    obs = validate(observations, OBSERVATIONS, source="<observations>")
    names_present = obs["recording"].unique()
    if len(names_present) != 1:
        raise InputError(f"an NWB file holds one recording; the table has {len(names_present)}",
                         column="recording")
    rec_id = names_present[0]
    row = {"recording": rec_id, "animal_id": rec_id, "provenance_group": "unknown"}
    if recording is not None:
        row = {k: None if _is_missing(v) else v for k, v in recording.items()}
    row = {k: plain(v) for k, v in row.items()}
    spacing = float(voxel_um if voxel_um is not None
                    else ROI_VOXEL_UM if layout == "rois" else LABEL_VOXEL_UM)
    if not np.isfinite(spacing) or spacing <= 0:
        raise InputError(f"voxel spacing {voxel_um} um must be > 0")
    return write_atomic(path, lambda tmp: _write(obs, row, tmp, layout, spacing))


def _is_missing(value: Any) -> bool:
    return value is None or (np.ndim(value) == 0 and bool(pd.isna(value)))


def _write(obs: pd.DataFrame, row: dict[str, Any], path: Path, layout: str,
           spacing: float) -> None:
    from hdmf.common import ElementIdentifiers, VectorData, VectorIndex
    from ndx_multichannel_volume import (ImagingVolume, MultiChannelVolumeSeries,
                                         OpticalChannelPlus, OpticalChannelReferences,
                                         SegmentationLabels)
    from pynwb import NWBHDF5IO, NWBFile
    from pynwb.file import Subject
    from pynwb.ophys import ImageSegmentation, PlaneSegmentation

    dims = 3 if "z_um" in obs.columns else 2
    coords = obs[["x_um", "y_um"] + (["z_um"] if dims == 3 else [])].to_numpy(np.float64)
    if dims == 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    origin = coords.min(axis=0)
    index = np.rint((coords - origin) / spacing).astype(np.int64)
    if index.max(initial=0) >= np.iinfo(np.uint32).max:
        raise InputError(f"positions span too many voxels of {spacing} um; choose a coarser "
                         "voxel spacing")
    tracks, row_of_obs = np.unique(obs["track"].to_numpy(), return_inverse=True)
    frame = obs["frame"].to_numpy()
    n_frames, n_rows = int(frame.max()) + 1, len(tracks)
    notes = {NOTES_KEY: {"recording_row": [[k, v] for k, v in row.items()],
                         "dimensions": dims, "layout": layout,
                         "tracks": [plain(t) for t in tracks]}}
    nwb = NWBFile(session_description=f"tracked neuron positions of recording {row['recording']}",
                  identifier=str(row["recording"]), lab=str(row["provenance_group"]),
                  session_start_time=datetime(1970, 1, 1, tzinfo=timezone.utc),
                  notes=json.dumps(notes, sort_keys=True, default=str),
                  subject=Subject(subject_id=str(row["animal_id"]),
                                  species="http://purl.obolibrary.org/obo/NCBITaxon_6239"))
    device = nwb.create_device(name="Microscope", description="unknown")
    channel = OpticalChannelPlus(name="channel", description="positions only",
                                 excitation_lambda=0.0, excitation_range=[0.0, 0.0],
                                 emission_lambda=0.0, emission_range=[0.0, 0.0])
    volume = ImagingVolume(
        name="ImagingVolume", optical_channel_plus=[channel],
        order_optical_channels=OpticalChannelReferences(name="order_optical_channels",
                                                        channels=["channel"]),
        description="voxel grid chosen by trackverify to store positions", device=device,
        location="head", grid_spacing=[spacing] * 3, grid_spacing_unit="micrometers",
        origin_coords=origin.tolist(), origin_coords_unit="micrometers",
        reference_frame="origin_coords is the smallest position per axis")
    nwb.add_imaging_plane(volume)
    module = nwb.create_processing_module(name="CalciumActivity", description="tracked neurons")
    if layout == "rois":
        segmentation = ImageSegmentation(name="CalciumSeriesSegmentation")
        key = frame * n_rows + row_of_obs
        slot = np.full(n_frames * n_rows, -1, dtype=np.int64)
        slot[key] = np.arange(len(obs))
        voxel_type = np.dtype([("x", "<u4"), ("y", "<u4"), ("z", "<u4"), ("weight", "<f4")])
        extras = {c: obs[c].to_numpy() for c in ("detection", "pred_id", "pred_valid")}
        for t in range(n_frames):
            members = slot[t * n_rows:(t + 1) * n_rows]
            present = members >= 0
            voxels = np.zeros(int(present.sum()), dtype=voxel_type)
            for axis, name in enumerate("xyz"):
                voxels[name] = index[members[present], axis]
            voxels["weight"] = 1.0
            mask = VectorData(name="voxel_mask", description="voxel centre of each neuron",
                              data=voxels)
            columns = [mask, VectorIndex(name="voxel_mask_index", target=mask,
                                         data=np.cumsum(present).astype(np.int64))]
            columns.append(VectorData(name="track", description="reference track id",
                                      data=_filled(tracks, np.ones(n_rows, bool),
                                                   np.arange(n_rows))))
            for column, values in extras.items():
                columns.append(VectorData(name=column, description=f"trackverify {column}",
                                          data=_filled(values, present, members)))
            segmentation.add_plane_segmentation(PlaneSegmentation(
                name=f"Seg_tpoint_{t}", description=f"neuron positions at frame {t}",
                imaging_plane=volume, columns=columns,
                colnames=[c.name for c in columns if c.name != "voxel_mask_index"],
                id=ElementIdentifiers(name="id", data=np.arange(n_rows))))
        link = {"ImageSegmentation": segmentation}
    else:
        shape = (n_frames, *(index.max(axis=0) + 1))
        if int(np.prod(shape, dtype=np.float64)) > MAX_LABEL_VOXELS:
            raise InputError(f"a label volume of shape {shape} is too large at {spacing} um; "
                             "choose a coarser voxel spacing or the rois layout")
        labels = np.zeros(shape, dtype=np.uint16 if n_rows < 65535 else np.uint32)
        target = (frame, index[:, 0], index[:, 1], index[:, 2])
        flat = np.ravel_multi_index(target, shape)
        if np.unique(flat).size != flat.size:
            raise InputError(f"two neurons share a voxel of {spacing} um in one frame; choose a "
                             "finer voxel spacing or the rois layout")
        labels[target] = row_of_obs + 1
        segmentation = MultiChannelVolumeSeries(
            name="CalciumSeriesSegmentation", imaging_volume=volume, data=labels,
            unit="label", description="label k is neuron row k - 1; 0 is background",
            rate=1.0)
        link = {"MCVSeriesSegmentation": segmentation}
    module.add(segmentation)
    if "neuron_name" in obs.columns:
        names = (obs.drop_duplicates("track").set_index("track")["neuron_name"]
                 .reindex(tracks).fillna("").astype(str).tolist())
        module.add(SegmentationLabels(name="NeuronIDs", labels=names,
                                      description="neuron name per row ('' unknown, '?' unsure)",
                                      **link))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBHDF5IO(str(path), "w") as io:
            io.write(nwb)


def _filled(values: np.ndarray, present: np.ndarray, members: np.ndarray) -> list | np.ndarray:
    """Per-row values of one frame; rows without an observation get a placeholder."""
    if values.dtype == bool:
        out = np.zeros(len(present), dtype=bool)
        out[present] = values[members[present]]
        return out
    if np.issubdtype(values.dtype, np.integer):
        out = np.full(len(present), -1, dtype=np.int64)
        out[present] = values[members[present]]
        return out
    out = np.full(len(present), "", dtype=object)
    out[present] = values[members[present]]
    return [str(v) for v in out]


# ----------------------------------------------------------------------------- convert


def read_any(path: Path, **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Observations and recordings from an NWB file, a folder of them, or anything
    :func:`trackverify.dataset.load_dataset` reads (a folder with ``observations.parquet``
    (+ ``recordings.csv``), an observation table, a tracker's file; ``options`` are its
    ``fmt``, ``columns`` and ``pixel_size``)."""
    from trackverify.dataset import load_dataset

    from trackverify.io.tabular import load_table, read_table

    path = Path(path)
    fmt = options.get("fmt")
    if fmt in (None, "nwb") and path.is_file() and path.suffix.lower() == ".nwb":
        return read_nwb(path)
    if fmt in (None, "nwb") and path.is_dir():
        files = sorted(path.glob("*.nwb"))
        if files:
            parts = [read_nwb(p) for p in files]
            return (pd.concat([p[0] for p in parts], ignore_index=True),
                    pd.concat([p[1] for p in parts], ignore_index=True))
    dataset = load_dataset(path, **options)
    return dataset._observations, dataset.recordings


def convert(source: str | os.PathLike, to: str, out: str | os.PathLike, *,
            layout: str = "rois", voxel_um: float | None = None, **options) -> list[Path]:
    """``to="parquet"``: write ``out/observations.parquet`` and ``out/recordings.csv``.
    ``to="nwb"``: one file per recording: ``out`` itself if it ends in ``.nwb`` (one
    recording only), else ``out/<recording>.nwb``. ``options`` (``fmt``, ``columns``,
    ``pixel_size``) say how to read ``source`` (:func:`read_any`)."""
    from trackverify.io.tabular import write_table

    if to == "nwb":
        from trackverify.extras import require

        for module in ("hdmf", "pynwb", "ndx_multichannel_volume"):  # before reading anything
            require(module, "nwb", "convert --to nwb")
    obs, recordings = read_any(Path(source), **options)
    out = Path(out)
    if to == "parquet":
        return [write_table(obs, out / "observations.parquet"),
                write_table(recordings, out / "recordings.csv")]
    if to != "nwb":
        raise InputError(f"unknown target format {to!r} (use parquet or nwb)")
    names = list(pd.unique(obs["recording"]))
    if out.suffix.lower() == ".nwb" and len(names) != 1:
        raise InputError(f"{len(names)} recordings need one NWB file each; give a folder as "
                         "--out", source=str(out))
    rows = {r["recording"]: r for r in recordings.to_dict("records")}
    written = []
    for name in names:
        target = out if out.suffix.lower() == ".nwb" else out / f"{name}.nwb"
        written.append(write_nwb(obs[obs["recording"] == name], target,
                                 recording=rows.get(name), layout=layout, voxel_um=voxel_um))
    return written

