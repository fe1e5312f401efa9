"""NWB files in the WormID layout (extra ``nwb``: pynwb, hdmf, ndx-multichannel-volume).

Reading goes through pynwb. ``pynwb.NWBHDF5IO`` builds the file's object tree (with the
namespaces the file caches and the ndx-multichannel-volume classes; lazily: a dataset stays
on disk until it is read), and everything below is taken from that tree: the ``NWBFile``
(identifier, lab, subject, notes), the ``ImageSegmentation``'s ``PlaneSegmentation`` tables
(their ``voxel_mask`` ragged column and the trackverify columns) or the
``MultiChannelVolumeSeries``' ``data``, the ``ImagingVolume``'s ``grid_spacing`` /
``origin_coords`` and their units, the ``SegmentationLabels``. A file pynwb cannot build is
refused naming the object (and field) pynwb names; each value is then checked; last, the
builder tree is validated by the NWB validator against the namespaces the file caches, and
what the schema refuses is refused (one tolerated deviation: ``NeuronIDs`` labels stored
per character, as in published WormID files). h5py is used only where pynwb cannot reach:

* the link pre-check, before pynwb opens the file: external links, dangling soft links and
  soft-link loops are refused (pynwb raises tracebacks on them), and, after pynwb failed
  without naming an object, an attribute reference to an unlinked object is named;
* per-character labels stored as ragged character codes (variable-length integers): hdmf
  3.x builds that dataset with no data, so the labels mapper reads it with h5py (labels
  stored as a ``[labels, characters]`` array are built by pynwb through the same mapper);
* the size bounds: before a dataset pynwb holds is read, its declared shape x item size is
  compared with the bytes h5py says the file stores (``hdf5.MAX_COMPRESSION`` times them when
  compressed; :mod:`trackverify.io.bounded`), and no label volume above
  ``MAX_LABEL_VOXELS`` is read (a declared 10^11-frame volume is refused unread).

Two layouts are understood, both under ``processing/CalciumActivity``:

* **ROI layout**: ``CalciumSeriesSegmentation`` is an ``ImageSegmentation`` holding one
  ``PlaneSegmentation`` per frame, named ``Seg_tpoint_{t}`` (the writer writes one per frame
  holding an observation). Row ``i`` of every frame is
  the same neuron. Its ``voxel_mask`` (``x, y, z, weight`` voxel indices) gives the
  position ``origin_coords + centre * grid_spacing`` in micrometres, where ``centre`` is
  the weight-averaged voxel (plain mean when the weights sum to 0) and ``grid_spacing``
  / ``origin_coords`` come from the ``ImagingVolume`` the segmentation links to (units
  converted to um; a ``grid_spacing`` without a unit is in meters, the NWB schema's
  default). Row ``i`` is the row's position (the table's ``id`` values are checked by
  pynwb, not used). A row with an empty voxel mask is a neuron not observed in that frame.
* **Label-volume layout**: ``CalciumSeriesSegmentation`` is a ``MultiChannelVolumeSeries``
  whose ``data`` is a ``[t, x, y, z]`` integer label volume; label ``k >= 1`` is neuron
  row ``k - 1`` (0 is background) and its position is the centre of its voxels.

Names come from the ``NeuronIDs`` ``SegmentationLabels`` (one label per row, kept
verbatim: labels may be empty or end in ``?`` for an uncertain name; labels stored as
per-character arrays are joined). The observation table gets ``track`` = row index,
``detection`` = row index, ``pred_id = track``, ``pred_valid = True`` and a
``neuron_name`` column (a stored ``pred_valid`` must be booleans or 0/1; frames are named
with canonical ASCII digits, ``Seg_tpoint_01`` is refused; every frame links one imaging
volume); the recording table gets ``recording`` = the ``NWBFile``'s ``identifier``,
``animal_id`` = its subject's ``subject_id`` (else the recording) and ``provenance_group``
= its ``lab`` (else ``"unknown"``).

Writing produces the ROI layout (or the label-volume layout) with pynwb and the
``ndx-multichannel-volume`` classes. The writer chooses a voxel spacing (``voxel_um``) and
records it as the ``ImagingVolume``'s ``grid_spacing`` with ``origin_coords`` = the
smallest position per axis, so positions come back to within half a voxel (a spacing or
coordinates for which they would not, or whose indices overflow uint32, are refused). Columns the
WormID layout has no place for (``track``, ``detection``, ``pred_id``, ``pred_valid`` in the
ROI layout) are extra columns of each ``PlaneSegmentation``; the recording-table row and
the dimensionality are JSON in ``general/notes``. Files written here therefore round-trip
ids, frames and names exactly.

Malformed files raise :class:`~trackverify.errors.InputError` naming the file and the group
(or the object and field pynwb names). While reading and writing, hdmf's per-field copy of
its type map is replaced by one copy (:func:`_one_type_map`, hdmf issue 1351).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import (MAX_LABEL_VOXELS, check_declared_bytes, check_frame_layout,
                                    regular_file)
from trackverify.io.formats.hdf5 import check_in_file, declared_allowed
from trackverify.tables import MAX_FRAME, OBSERVATIONS, RECORDINGS, plain, validate

MODULE = "processing/CalciumActivity"
SEGMENTATION = f"{MODULE}/CalciumSeriesSegmentation"
LABELS = f"{MODULE}/NeuronIDs"
FRAME_PREFIX = "Seg_tpoint_"
FRAME_NAME = re.compile(r"Seg_tpoint_(0|[1-9][0-9]*)", re.ASCII)  # canonical ASCII digits only
NOTES_KEY = "trackverify"
ROI_VOXEL_UM = 0.001
LABEL_VOXEL_UM = 1.0
# Validator findings tolerated: WormID files in the wild store NeuronIDs labels as
# per-character arrays (joined by _decode_labels), which the schema types as text.
_TOLERATED_SCHEMA = ("SegmentationLabels/labels",)
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
    source = str(path)
    path = regular_file(path)
    check_links(path, source)
    with pynwb_file(path, source) as (io, nwbfile):
        try:
            notes = _notes(nwbfile)
            recording_row = _recording_row(nwbfile, notes)
            seg, module = _segmentation(nwbfile, source)
            frames, rows, voxels, columns, n_rows = (
                _read_label_volume(seg, source) if _is_type(seg, "MultiChannelVolumeSeries")
                else _read_rois(seg, source))
            names = _read_names(module, n_rows, path, source)
        except (OSError, RuntimeError, KeyError) as exc:  # e.g. a corrupt compressed chunk
            raise InputError(f"cannot read the file's data ({_first_line(exc)})",
                             source=source) from None
        _check_schema(io, path, source)
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def check_links(path: Path, source: str) -> None:
    """Refuse a file h5py cannot open, an HDF5 file without the root attribute
    ``nwb_version`` (not NWB; pynwb said "TypeError: Missing NWB version"), external links,
    dangling soft links and soft-link loops (pynwb and h5py raise tracebacks on them), and
    datasets kept in other files
    (external storage, virtual datasets: :func:`hdf5.check_in_file`); every
    group is visited once (a hard-link cycle ends here and is refused by pynwb)."""
    h5py = _h5py()
    try:
        handle = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"not a readable NWB (HDF5) file ({exc})", source=source) from exc
    with handle as f:
        if "nwb_version" not in f.attrs:
            raise InputError("an HDF5 file, not NWB: no nwb_version attribute (an NWB file "
                             "records at its root the version of the standard it follows)",
                             source=source)
        seen: set = set()
        stack = [f]
        while stack:
            group = stack.pop()
            info = h5py.h5o.get_info(group.id)
            address = getattr(info, "addr", None) or getattr(info, "token", None)
            if address in seen:
                continue
            seen.add(address)
            for name in group:
                where = f"{group.name.rstrip('/')}/{name}"
                link = group.get(name, getlink=True)
                if isinstance(link, h5py.ExternalLink):
                    raise InputError(f"'{where}' is an external link to '{link.filename}'; an "
                                     "NWB file must be read on its own (no external links)",
                                     source=source)
                try:
                    target = group.get(name)
                except (KeyError, RuntimeError, OSError) as exc:
                    raise InputError(f"'{where}' is a soft link that cannot be resolved (a loop "
                                     f"or a broken target: {_first_line(exc)})",
                                     source=source) from None
                if target is None:
                    detail = f" to '{link.path}'" if isinstance(link, h5py.SoftLink) else ""
                    raise InputError(f"'{where}' is a dangling link{detail}", source=source)
                if isinstance(link, h5py.HardLink) and isinstance(target, h5py.Group):
                    stack.append(target)
                elif isinstance(target, h5py.Dataset):
                    check_in_file(target, where.lstrip("/"), source)


@contextmanager
def pynwb_file(path: Path, source: str) -> Iterator[Any]:
    """The file's ``NWBFile`` as pynwb builds it (lazily: datasets stay on disk until read),
    with the namespaces the file caches and the ndx-multichannel-volume classes; a file
    pynwb cannot build is refused with the object it names."""
    from pynwb import NWBHDF5IO

    io = None
    try:
        with warnings.catch_warnings(), _one_type_map():
            warnings.simplefilter("ignore")
            io = NWBHDF5IO(str(path), "r", manager=_read_manager(path))
            nwbfile = io.read()
    except Exception as exc:  # noqa: BLE001 - pynwb/hdmf raise many types on bad files
        if io is not None:
            io.close()
        problem = _untyped_column(path) or _build_problem(exc) or _dangling_reference(path) \
            or f"it ({type(exc).__name__}: {_first_line(exc)})"
        raise InputError(f"not a valid NWB file: pynwb cannot build {problem}",
                         source=source) from None
    try:
        yield io, nwbfile
    finally:
        io.close()


def _read_manager(path: Path):
    """A BuildManager for the file's cached namespaces whose SegmentationLabels mapper
    accepts per-character labels (a ``[labels, characters]`` array, as in published WormID
    files, which pynwb's own mapping refuses for its shape): each row becomes one label
    (joined by :func:`_decode_labels`). Every other type is mapped as pynwb maps it."""
    import ndx_multichannel_volume as ndx
    from hdmf.build import BuildManager
    from pynwb import NWBHDF5IO, get_type_map
    from pynwb.io.core import NWBContainerMapper

    class LabelsMapper(NWBContainerMapper):
        @NWBContainerMapper.constructor_arg("labels")
        def labels(self, builder, manager):
            child = builder.get("labels")
            data = getattr(child, "data", None)
            if data is None and child is not None and child.source:
                data = _ragged_labels(child)  # pynwb reads ragged numeric data as None
            elif (getattr(data, "ndim", 1) == 2 and _character_cells(data.dtype)
                  and _within_bounds(data)):
                cells = np.asarray(data[()])
                try:  # one label per row, padding stripped
                    data = np.asarray(_decode_labels(cells), dtype=object)
                except (UnicodeError, TypeError, ValueError):
                    data = np.empty(len(cells), dtype=object)  # rows: _read_names refuses them
                    data[:] = list(cells)
            return data

    type_map = get_type_map()
    NWBHDF5IO.load_namespaces(type_map, str(path))
    type_map.register_map(ndx.SegmentationLabels, LabelsMapper)
    return BuildManager(type_map)


def _ragged_labels(child) -> np.ndarray | None:
    """Labels stored as ragged arrays of character codes (h5py variable-length numbers),
    read with h5py: hdmf 3.x builds such a dataset with no data. None when the dataset
    is not one, or declares more than the file holds."""
    h5py = _h5py()
    with h5py.File(child.source, "r") as f:
        dataset = f.get(f"{child.location.rstrip('/')}/{child.name}")
        if (not isinstance(dataset, h5py.Dataset) or dataset.ndim != 1
                or h5py.check_vlen_dtype(dataset.dtype) is None or not _within_bounds(dataset)):
            return None
        return dataset[()]


def _character_cells(dtype: np.dtype) -> bool:
    """One character per cell: character codes or text of at most 4 bytes."""
    return dtype.kind in "iu" or (dtype.kind in "SU" and dtype.itemsize <= 4)


@contextmanager
def _one_type_map() -> Iterator[None]:
    """hdmf 3.x and pynwb 2.x deep-copy their whole type map each time a container field
    is set, only to read its term-set configuration (hdmf issue 1351, pynwb PR 2121: fixed
    upstream by not copying); building a file of 756 plane segmentations spent more than
    half its time there. While reading or writing, each field set gets one copy made once."""
    import hdmf.common
    import pynwb
    from hdmf.container import AbstractContainer
    from pynwb.core import NWBMixin

    patched = [(cls, cls.__dict__["_get_type_map"], copy()) for cls, copy in
               ((AbstractContainer, hdmf.common.get_type_map), (NWBMixin, pynwb.get_type_map))
               if "_get_type_map" in cls.__dict__]  # absent once upstream stops copying
    for cls, _, type_map in patched:
        cls._get_type_map = lambda self, type_map=type_map: type_map
    try:
        yield
    finally:
        for cls, original, _ in patched:
            cls._get_type_map = original


def _build_problem(exc: BaseException) -> str | None:
    """The object (and field) and reason of a pynwb/hdmf build failure, on one line:
    ``'<path>/<field>' (<type>: <reason>)``; None when the error names no object."""
    from hdmf.build import Builder

    builder = exc.args[0] if exc.args else None
    if not (isinstance(builder, Builder) and len(exc.args) > 1):
        text = _first_line(exc)
        named = re.search(r"builder root/(\S+)", text)
        reason = re.sub(r"\s*(for\s+)?builder root/\S+", "", text)
        return f"'{named.group(1)}' ({type(exc).__name__}: {reason})" if named else None
    where = builder.path.removeprefix("root").lstrip("/") or "/"
    reason = _first_line(Exception(str(exc.args[1])))
    match = re.fullmatch(r"Could not construct (\w+) object due to: (?:\w+\.__init__: )?(.*)",
                         reason)
    kind, reason = match.groups() if match else (builder.name, reason)
    field = re.search(r"(?:for|argument) '(\w+)'", reason)
    if field is not None:
        where = f"{where}/{field.group(1)}"
    return f"'{where}' ({kind}: {reason})"


def _first_problem(path: Path, problem) -> str | None:
    """The text ``problem(name, obj)`` gives for the first object of the file (h5py's visit
    order) it finds wrong, or None; the file is walked with h5py only when pynwb failed."""
    found: list[str] = []

    def visit(name, obj):
        text = problem(name, obj)
        if text is not None:
            found.append(text)
            return True
        return None

    with _h5py().File(path, "r") as f:
        f.visititems(visit)
    return found[0] if found else None


def _untyped_column(path: Path) -> str | None:
    """The first column an NWB table lists in its ``colnames`` that is stored without an NWB
    type (no ``neurodata_type`` attribute: a dataset replaced with h5py), which pynwb cannot
    build (it said only ``PlaneSegmentation: 'track'``), as ``'<table>/<column>' (...)``
    with the layout it needs."""
    h5py = _h5py()

    def untyped(name, obj):
        if not isinstance(obj, h5py.Group) or "colnames" not in obj.attrs:
            return None
        for column in np.atleast_1d(obj.attrs["colnames"]).tolist():
            column = column.decode("utf-8", "replace") if isinstance(column, bytes) else str(column)
            member = obj.get(column)
            if member is not None and "neurodata_type" not in member.attrs:
                return (f"'{name}/{column}' (listed in the table's colnames, stored without an "
                        "NWB type: every column of an NWB table is a VectorData; write it with "
                        "pynwb (add_column), or give the dataset the attributes neurodata_type "
                        "= 'VectorData', namespace = 'hdmf-common' and description)")
        return None

    return _first_problem(path, untyped)


def _dangling_reference(path: Path) -> str | None:
    """The first attribute holding an object reference that resolves to nothing (a
    deleted target), as ``'<object>' attribute '<name>' (...)``, when pynwb failed without
    naming an object (its error then names none)."""
    h5py = _h5py()

    def dangling(name, obj):
        for key in obj.attrs:
            if h5py.check_ref_dtype(obj.attrs.get_id(key).dtype) is None:
                continue
            refs = np.atleast_1d(obj.attrs[key]).ravel()
            try:
                for ref in refs:
                    if not ref or obj.file[ref].name is None:  # None: linked nowhere
                        raise ValueError
            except (ValueError, KeyError, RuntimeError, OSError):
                return (f"'{name}' (its attribute '{key}' refers to an object that is not in "
                        "the file)")
        return None

    return _first_problem(path, dangling)


def _check_schema(io, path: Path, source: str) -> None:
    """Validate the file with the NWB validator against the namespaces it caches (the
    extension and the core it extends; pynwb's core when it caches none), as
    ``pynwb.validate(paths=...)`` does, on the builder tree ``io`` already read: refuse
    what the schema refuses (except :data:`_TOLERATED_SCHEMA`)."""
    from hdmf.validate import ValidatorMap
    from pynwb import CORE_NAMESPACE
    try:
        from pynwb.validation import get_cached_namespaces_to_validate  # pynwb >= 3
    except ImportError:  # pynwb 2.x
        from pynwb.validate import get_cached_namespaces_to_validate

    with warnings.catch_warnings(), _one_type_map():
        warnings.simplefilter("ignore")
        try:
            names, manager, _ = get_cached_namespaces_to_validate(str(path))
            namespaces = ([manager.namespace_catalog.get_namespace(name=n) for n in names]
                          if names else
                          [io.manager.namespace_catalog.get_namespace(name=CORE_NAMESPACE)])
            builder = io.read_builder()  # the tree pynwb built the file from
            found = [str(e) for namespace in namespaces
                     for e in ValidatorMap(namespace).validate(builder)]
        except Exception as exc:  # noqa: BLE001 - pynwb/hdmf raise many types on bad files
            raise InputError(f"not a valid NWB file: the NWB validator cannot read it "
                             f"({type(exc).__name__}: {_first_line(exc)})",
                             source=source) from None
    errors = [e for e in found if not e.startswith(_TOLERATED_SCHEMA)]
    if errors:
        raise InputError(f"not a valid NWB file: the NWB schema refuses {errors[0]}"
                         + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                         source=source)


def _on_disk(data):
    """The h5py dataset behind what pynwb holds (it wraps compound and text datasets)."""
    return getattr(data, "dataset", data)


def _within_bounds(data) -> bool:
    dataset = _on_disk(data)
    if not hasattr(dataset, "id"):
        return True  # in memory
    declared, allowed = declared_allowed(dataset)
    return declared <= allowed


def _bounded(data, source: str):
    """The h5py dataset behind ``data`` after refusing one that declares more data than
    the file stores (uncompressed) or than :data:`hdf5.MAX_COMPRESSION` times its stored bytes
    (compressed); nothing is read."""
    dataset = _on_disk(data)
    if hasattr(dataset, "id"):
        declared, allowed = declared_allowed(dataset)
        check_declared_bytes(declared, allowed, source=source,
                             what=f"'{dataset.name}' (shape {dataset.shape}, {dataset.dtype})")
    return dataset


def _is_type(obj, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(obj).__mro__)


def _text(value: Any) -> str | None:
    if isinstance(value, np.ndarray):
        value = value.ravel()[0] if value.size else None
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return None if value is None else str(value)


def _notes(nwbfile) -> dict[str, Any]:
    text = _text(nwbfile.notes)
    try:
        data = json.loads(text) if text else {}
    except (json.JSONDecodeError, RecursionError):  # free-text notes (or nested too deeply)
        return {}
    notes = data.get(NOTES_KEY, {}) if isinstance(data, dict) else {}
    return notes if isinstance(notes, dict) else {}


def _recording_row(nwbfile, notes: dict[str, Any]) -> dict[str, Any]:
    saved = notes.get("recording_row")
    if isinstance(saved, list) and all(isinstance(p, list) and len(p) == 2 for p in saved):
        return dict(saved)  # [column, value] pairs keep the table's column order
    recording = _text(nwbfile.identifier) or "recording"
    subject = nwbfile.subject
    return {"recording": recording,
            "animal_id": (_text(subject.subject_id) if subject is not None else None)
            or recording,
            "provenance_group": _text(nwbfile.lab) or "unknown"}


def _segmentation(nwbfile, source: str):
    """``(CalciumSeriesSegmentation, CalciumActivity module)`` of the file's object tree."""
    module = nwbfile.processing.get(MODULE.split("/")[1])
    seg = module.data_interfaces.get(SEGMENTATION.rsplit("/", 1)[1]) if module else None
    if seg is None:
        raise InputError(f"no group '{SEGMENTATION}' (not a WormID-layout NWB file)",
                         source=source)
    if not (_is_type(seg, "ImageSegmentation") or _is_type(seg, "MultiChannelVolumeSeries")):
        raise InputError(f"'{SEGMENTATION}' is of type {seg.neurodata_type}, not "
                         "ImageSegmentation or MultiChannelVolumeSeries", source=source)
    return seg, module


def volume_geometry(volume, source: str, where: str,
                    n: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``(origin_um, spacing_um)`` of the ImagingVolume (or ImagingPlane) ``volume``: its
    ``grid_spacing`` and ``origin_coords`` (0 when absent) times their units (pynwb gives
    the schema's default unit, meters, when the file states none); ``n`` values each (an
    ImagingPlane of x and y: 2)."""
    out, label = [], ""
    for name in ("origin_coords", "grid_spacing"):
        data = getattr(volume, name, None)
        if data is None:
            if name == "origin_coords":
                out.append(np.zeros(n))
                continue
            raise InputError(f"the ImagingVolume '{volume.name}' linked from '{where}' has no "
                             "grid_spacing", source=source)
        dataset = _bounded(data, source)
        label = f"'{getattr(dataset, 'name', f'/general/optophysiology/{volume.name}/{name}')}'"
        dtype = dataset.dtype if hasattr(dataset, "dtype") else np.asarray(dataset).dtype
        if dtype.kind not in "iuf":
            raise InputError(f"{label} must hold {n} numbers, found {dtype}", source=source)
        values = np.asarray(dataset[()] if hasattr(dataset, "id") else dataset,
                            dtype=np.float64).ravel()
        if values.shape != (n,) or not np.all(np.isfinite(values)):
            raise InputError(f"{label} must hold {n} finite numbers, found shape "
                             f"{values.shape}", source=source)
        unit = str(getattr(volume, f"{name}_unit", None) or "meters").strip().lower()
        if unit not in _UNIT_TO_UM:
            raise InputError(f"{label} has unknown unit {unit!r}", source=source)
        out.append(values * _UNIT_TO_UM[unit])
    if np.any(out[1] <= 0):
        raise InputError(f"{label} must be > 0", source=source)
    return out[0], out[1]


def _read_rois(seg, source: str):
    """Frames, rows, geometry, extra columns and row count of the ROI layout, from the
    ImageSegmentation's PlaneSegmentation tables (their ``voxel_mask`` ragged column and
    the trackverify columns)."""
    frames_by_name = {}
    planes = seg.plane_segmentations
    for name in planes:
        if not name.startswith(FRAME_PREFIX):
            continue
        match = FRAME_NAME.fullmatch(name)
        if match is None:
            raise InputError(f"'/{SEGMENTATION}/{name}': a frame is named Seg_tpoint_{{t}} with "
                             "t in plain ASCII digits and no leading zero", source=source)
        digits = match.group(1)  # bounded before any array holds it (2^63 became a float)
        if len(digits) > len(str(MAX_FRAME)) or int(digits) > MAX_FRAME:
            raise InputError(f"'/{SEGMENTATION}/{name}': frame {digits} is implausibly large "
                             f"(frames are at most {MAX_FRAME})", source=source)
        frames_by_name[int(digits)] = name
    if not frames_by_name:
        raise InputError(f"'{SEGMENTATION}' holds no Seg_tpoint_{{t}} plane segmentations",
                         source=source)
    order = sorted(frames_by_name)
    first = planes[frames_by_name[order[0]]]
    geometry = volume_geometry(first.imaging_plane, source,
                                f"/{SEGMENTATION}/{first.name}/imaging_plane")
    frames, rows, centres = [], [], []
    extra: dict[str, list] = {}
    n_rows = None
    for t in order:
        plane = planes[frames_by_name[t]]
        where = f"/{SEGMENTATION}/{plane.name}"
        if plane.imaging_plane is not first.imaging_plane:
            raise InputError(f"'{where}/imaging_plane' links the imaging volume "
                             f"'{plane.imaging_plane.name}', '{first.name}' links "
                             f"'{first.imaging_plane.name}'; every frame must share one voxel "
                             "grid", source=source)
        columns = {c.name: c for c in plane.columns}
        for needed in ("voxel_mask", "voxel_mask_index"):
            if needed not in columns:
                raise InputError(f"'{where}' has no '{needed}'", source=source)
        mask, mask_index = (_bounded(columns[n].data, source)
                            for n in ("voxel_mask", "voxel_mask_index"))
        if mask_index.dtype.kind not in "iu":
            raise InputError(f"'{where}/voxel_mask_index' must hold integers", source=source)
        index = np.asarray(mask_index[()], dtype=np.int64).ravel()
        voxels = _voxel_array(mask, source, where)
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
            if column in columns:
                dataset = _bounded(columns[column].data, source)
                if dataset.ndim != 1:
                    raise InputError(f"'{where}/{column}' must be a one-dimensional dataset",
                                     source=source)
                values = dataset[()]
                if column == "pred_valid":
                    values = _valid_flags(values, source, f"{where}/{column}")
                if len(values) != index.size:
                    raise InputError(f"'{where}/{column}' has {len(values)} values for "
                                     f"{index.size} rows", source=source)
                extra.setdefault(column, []).append(_decode_values(values)[observed])
    columns_out: dict[str, Any] = {"centre": np.concatenate(centres)}
    for column, parts in extra.items():
        if len(parts) != len(order):
            raise InputError(f"column '{column}' is missing from some Seg_tpoint groups",
                             source=source)
        columns_out[column] = np.concatenate(parts)
    return np.concatenate(frames), np.concatenate(rows), geometry, columns_out, n_rows


def _valid_flags(values: np.ndarray, source: str, where: str) -> np.ndarray:
    """``pred_valid`` as stored: booleans, or integers that are all 0 or 1. Text ('False'
    is a non-empty string), other numbers (2, 0.5) are refused, never read as True."""
    if values.dtype == bool:
        return values
    if values.dtype.kind in "iu" and np.isin(values, (0, 1)).all():
        return values.astype(bool)
    bad = (np.flatnonzero(~np.isin(values, (0, 1)))[:1] if values.dtype.kind in "iuf"
           else np.arange(min(1, len(values))))
    example = (f"; row {int(bad[0])} holds {plain(_decode_values(values[bad])[0])!r}"
               if bad.size else "")
    raise InputError(f"'{where}' must hold booleans (or 0/1), found {values.dtype}{example}",
                     source=source)


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
    if data.ndim != 2 or data.shape[1] not in (3, 4) or data.dtype.kind not in "iuf":
        raise InputError(f"'{where}/voxel_mask' must be (voxels, 4) x, y, z, weight of real "
                         f"numbers; found shape {data.shape}, {data.dtype}", source=source)
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
    """Frames, rows, geometry, centres and row count of the label-volume layout, from the
    MultiChannelVolumeSeries' ``data`` (read in blocks of frames once its declared shape,
    voxel count and stored bytes are checked) and its ``imaging_volume``."""
    where = f"/{SEGMENTATION}"
    data = _on_disk(seg.data)
    if data.ndim != 4:
        raise InputError(f"'{where}/data' must be a [t, x, y, z] label volume; found shape "
                         f"{data.shape}", source=source)
    if not np.issubdtype(data.dtype, np.integer):
        raise InputError(f"'{where}/data' must hold integer labels, found {data.dtype}",
                         source=source)
    voxels = int(np.prod(data.shape, dtype=object))
    if voxels > MAX_LABEL_VOXELS:
        raise InputError(f"'{where}/data' declares a label volume of shape {data.shape} "
                         f"({voxels} voxels); at most {MAX_LABEL_VOXELS} are read",
                         source=source)
    _bounded(data, source)
    geometry = volume_geometry(seg.imaging_volume, source, where)
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


def _read_names(module, n_rows: int, path: Path, source: str) -> np.ndarray | None:
    """The ``NeuronIDs`` labels (SegmentationLabels) as text, one per row, or None when the
    file has no ``NeuronIDs``; a ``NeuronIDs`` that is not a SegmentationLabels is refused."""
    labels = module.data_interfaces.get(LABELS.rsplit("/", 1)[1])
    if labels is None or not _is_type(labels, "SegmentationLabels"):
        with _h5py().File(path, "r") as f:
            present = LABELS in f
            kind = "a dataset" if isinstance(f.get(LABELS), _h5py().Dataset) else \
                "a group without an NWB type (no neurodata_type attribute), which NWB " \
                "readers do not see"
        if labels is None and not present:
            return None
        found = kind if labels is None else f"a {labels.neurodata_type}"
        raise InputError(f"'{LABELS}' is {found}; the WormID layout keeps the neuron names "
                         "in a SegmentationLabels (namespace ndx-multichannel-volume) with the "
                         "datasets 'labels' (one text per neuron) and 'description': write it "
                         "with pynwb, or give the group the attributes neurodata_type = "
                         "'SegmentationLabels' and namespace = 'ndx-multichannel-volume'",
                         source=source)
    data = labels.labels
    if hasattr(_on_disk(data), "id"):
        data = _bounded(data, source)[()]
    try:
        names = _decode_labels(data)
    except (UnicodeError, TypeError, ValueError) as exc:
        raise InputError(f"'{LABELS}/labels' cannot be decoded as text ({exc})",
                         source=source) from exc
    if len(names) < n_rows:
        raise InputError(f"'{LABELS}/labels' has {len(names)} labels for {n_rows} neurons",
                         source=source)
    return np.asarray(names, dtype=object)


_MAX_CODE = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)


def _decode_labels(data: Any) -> list[str]:
    """Labels as a list of strings (ValueError naming the row otherwise): text, UTF-8
    bytes, or one row of per-character cells per label (a ``[labels, characters]`` array or
    ragged rows, padding of NUL / spaces stripped at the end). Cells of one byte (``S1``,
    ``uint8`` / ``int8`` codes) are the label's UTF-8 bytes, joined then decoded; wider
    integer cells are Unicode code points (0 is padding; 1..0x10FFFF without surrogates).
    Numbers one per label (1-D integers, floats, booleans) are not text."""
    array = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    if array.ndim == 2 and _character_cells(array.dtype):
        return [_joined_cells(row, i) for i, row in enumerate(array)]
    if array.ndim != 1:
        raise ValueError(f"expected one label per neuron, found shape {array.shape}")
    if array.dtype.kind not in "OSU":
        raise ValueError(f"one {array.dtype} number per neuron, not text")
    return [_decoded_label(value, i) for i, value in enumerate(array)]


def _decoded_label(value: Any, row: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"row {row}: {exc}") from None
    if isinstance(value, (np.ndarray, list, tuple)):
        return _joined_cells(value, row)
    raise ValueError(f"row {row} holds a {type(value).__name__}, not text")


def _joined_cells(cells: Any, row: int) -> str:
    """One label stored per character (rule in :func:`_decode_labels`)."""
    cells = np.asarray(cells)
    if cells.dtype == object:  # ragged rows of bytes or codes: their own dtype
        cells = np.asarray(cells.tolist()) if cells.size else cells.astype("S1")
    kind = cells.dtype.kind
    if cells.ndim != 1 or kind not in "iuSU":
        raise ValueError(f"row {row} holds {cells.dtype} values of shape {cells.shape}, "
                         "not text or character codes")
    if kind == "U":
        return "".join(cells.tolist()).rstrip("\x00 ")
    if kind in "iu":
        codes = cells.astype(np.int64)
        bad = (codes < 0) | (codes > (0xFF if cells.dtype.itemsize == 1 else _MAX_CODE)) | (
            (codes >= _SURROGATES[0]) & (codes <= _SURROGATES[1]))
        if bad.any():
            raise ValueError(f"row {row} holds character code {codes[bad][0]}, not a Unicode "
                             "character")
        if cells.dtype.itemsize > 1:
            return "".join(map(chr, codes[codes > 0].tolist())).rstrip(" ")
        raw = codes[codes > 0].astype(np.uint8).tobytes()
    else:
        raw = b"".join(cells.tolist())
    try:
        return raw.decode("utf-8").rstrip("\x00 ")
    except UnicodeDecodeError as exc:
        raise ValueError(f"row {row}: {exc}") from None


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
    def write(tmp: Path) -> None:
        with warnings.catch_warnings(), _one_type_map():
            warnings.simplefilter("ignore")
            _write(obs, row, tmp, layout, spacing)

    return write_atomic(path, write)


def _is_missing(value: Any) -> bool:
    return value is None or (np.ndim(value) == 0 and bool(pd.isna(value)))


def imaging_volume(device, spacing_um, origin_um, channel: str, channel_description: str,
                   description: str, reference_frame: str, wavelengths=(0.0, 0.0)):
    """An ndx-multichannel-volume ``ImagingVolume`` of one optical channel: ``grid_spacing``
    and ``origin_coords`` (x, y, z) in micrometres; ``wavelengths``: (excitation, emission) nm."""
    from ndx_multichannel_volume import (ImagingVolume, OpticalChannelPlus,
                                         OpticalChannelReferences)

    excitation, emission = wavelengths
    optical = OpticalChannelPlus(name=channel, description=channel_description,
                                 excitation_lambda=excitation,
                                 excitation_range=[excitation, excitation],
                                 emission_lambda=emission, emission_range=[emission, emission])
    return ImagingVolume(
        name="ImagingVolume", optical_channel_plus=[optical],
        order_optical_channels=OpticalChannelReferences(name="order_optical_channels",
                                                        channels=[channel]),
        description=description, device=device, location="head",
        grid_spacing=list(spacing_um), grid_spacing_unit="micrometers",
        origin_coords=list(origin_um), origin_coords_unit="micrometers",
        reference_frame=reference_frame)


def _write(obs: pd.DataFrame, row: dict[str, Any], path: Path, layout: str,
           spacing: float) -> None:
    from hdmf.common import ElementIdentifiers, VectorData, VectorIndex
    from ndx_multichannel_volume import MultiChannelVolumeSeries, SegmentationLabels
    from pynwb import NWBHDF5IO, NWBFile
    from pynwb.file import Subject
    from pynwb.ophys import ImageSegmentation, PlaneSegmentation

    dims = 3 if "z_um" in obs.columns else 2
    coords = obs[["x_um", "y_um"] + (["z_um"] if dims == 3 else [])].to_numpy(np.float64)
    if dims == 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    origin = coords.min(axis=0)
    index = _voxel_index(coords, origin, spacing)
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
    volume = imaging_volume(device, [spacing] * 3, origin.tolist(), "channel", "positions only",
                            "voxel grid chosen by trackverify to store positions",
                            "origin_coords is the smallest position per axis")
    nwb.add_imaging_plane(volume)
    module = nwb.create_processing_module(name="CalciumActivity", description="tracked neurons")
    if layout == "rois":
        segmentation = ImageSegmentation(name="CalciumSeriesSegmentation")
        # one plane segmentation per frame holding an observation (a frame number without
        # one is no group: frames 0 and 2**31 - 1 are two groups, read back the same)
        written, rank = np.unique(frame, return_inverse=True)
        check_frame_layout(len(written), n_rows, recording=row["recording"],
                           what="the NWB ROI layout (one row per track in every frame)")
        slot = np.full(len(written) * n_rows, -1, dtype=np.int64)
        slot[rank.reshape(-1) * n_rows + row_of_obs] = np.arange(len(obs))
        voxel_type = np.dtype([("x", "<u4"), ("y", "<u4"), ("z", "<u4"), ("weight", "<f4")])
        extras = {c: obs[c].to_numpy() for c in ("detection", "pred_id", "pred_valid")}
        for k, t in enumerate(written.tolist()):
            members = slot[k * n_rows:(k + 1) * n_rows]
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
        shape = (n_frames, *(int(n) + 1 for n in index.max(axis=0)))
        if int(np.prod(shape, dtype=object)) > MAX_LABEL_VOXELS:  # Python ints: no overflow
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
            rate=1.0, dimension=list(shape[1:]), device=device)
        link = {"MCVSeriesSegmentation": segmentation}
    module.add(segmentation)
    if "neuron_name" in obs.columns:
        names = (obs.drop_duplicates("track").set_index("track")["neuron_name"]
                 .reindex(tracks).fillna("").astype(str).tolist())
        module.add(SegmentationLabels(name="NeuronIDs", labels=names,
                                      description="neuron name per row ('' unknown, '?' unsure)",
                                      **link))
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)


def _voxel_index(coords: np.ndarray, origin: np.ndarray, spacing: float) -> np.ndarray:
    """Voxel indices ``rint((coords - origin) / spacing)`` as int64, refusing a spacing or
    coordinates that would overflow the uint32 voxel grid or collapse positions: every
    position must come back as ``origin + index * spacing`` within half a voxel (plus the
    float64 rounding of the position itself)."""
    with np.errstate(over="ignore", invalid="ignore"):
        steps = (coords - origin) / spacing
    if not np.all(np.isfinite(steps)) or steps.max(initial=0) >= np.iinfo(np.uint32).max:
        raise InputError(f"positions span too many voxels of {spacing:g} um (or are too large "
                         "to store); choose a coarser voxel spacing")
    index = np.rint(steps).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        back = origin + index * spacing
        error = np.abs(back - coords)
    tolerance = spacing / 2 * (1 + 1e-9) + 4 * np.spacing(np.abs(coords))
    if not np.all(np.isfinite(back)) or np.any(error > tolerance):
        raise InputError(f"a voxel spacing of {spacing:g} um cannot hold these positions (they "
                         "would not come back within half a voxel); choose another spacing")
    return index


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
