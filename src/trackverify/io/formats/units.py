"""Coordinates to micrometres, and the check that the units look plausible.

``to_micrometres`` multiplies the file's coordinates by, in order of preference, the
calibration the file carries, ``--pixel-size`` (um per pixel or voxel, per axis x, y[, z];
one value means every axis), or 1 (then the result says the units were assumed).

Plausibility (warnings, never errors): the *median nearest-neighbour spacing* is the median,
over the points of up to :data:`SAMPLED_FRAMES` frames spread evenly over each table, of each
point's distance to the nearest other point of its recording and frame. Neurons and cells
are a few micrometres apart, so a spacing below :data:`MIN_SPACING_UM` or above
:data:`MAX_SPACING_UM` suggests pixels or another unit. Reference and predictions whose
spacings differ by more than :data:`MAX_SCALE_RATIO` times are probably in different units.

Unit names (:data:`UNIT_TO_UM`, :func:`named_unit`): the one table of length units the readers
that find a unit name in a file (TrackMate XML and CSV, GEFF) turn into micrometres.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.errors import InputError

MIN_SPACING_UM = 0.5
MAX_SPACING_UM = 100.0
MAX_SCALE_RATIO = 2.0
SAMPLED_FRAMES = 50
AXES = ("x", "y", "z")
UNIT_TO_UM = {"um": 1.0, "µm": 1.0, "μm": 1.0, "micron": 1.0, "microns": 1.0, "micrometer": 1.0,
              "micrometre": 1.0, "micrometers": 1.0, "nm": 1e-3, "nanometer": 1e-3,
              "mm": 1e3, "millimeter": 1e3, "meter": 1e6, "angstrom": 1e-4}
UNCALIBRATED = {"pixel", "pixels", "px", ""}


def named_unit(unit: str, source: str, where: str, column: str):
    """The :class:`Calibration` of a file whose coordinates are in ``unit`` (``pixel`` or an
    empty name: uncalibrated); an unknown name is an InputError naming ``column``."""
    from trackverify.io.formats.base import Calibration

    key = unit.strip().lower()
    if key in UNCALIBRATED:
        return Calibration(unit.strip() or "pixel", None, source)
    if key not in UNIT_TO_UM:
        raise InputError(f"unknown spatial unit '{unit}' (known: {sorted(UNIT_TO_UM)}, pixel)",
                         source=where, column=column)
    return Calibration(unit, (UNIT_TO_UM[key],), source)


def axes_of(table: pd.DataFrame) -> list[str]:
    return [a for a in AXES if a in table.columns]


def expand_scale(scale: tuple[float, ...], ndim: int, source: str) -> tuple[float, ...]:
    """One value for every axis, or exactly one per axis."""
    if len(scale) == 1:
        return scale * ndim
    if len(scale) != ndim:
        raise InputError(f"--pixel-size has {len(scale)} values but the data are {ndim}-D "
                         f"(give 1 or {ndim})", source=source)
    return scale


def to_micrometres(tracks, pixel_size: tuple[float, ...] | None,
                   source: str) -> tuple[pd.DataFrame, dict, list[str]]:
    """``(table with x_um, y_um[, z_um], calibration record, notes)`` (module docstring)."""
    table = tracks.table
    axes = axes_of(table)
    calibration = tracks.calibration
    notes: list[str] = []
    if calibration.um_per_unit is not None:
        factors = expand_scale(tuple(calibration.um_per_unit), len(axes), source)
        record = {**calibration.to_dict(), "um_per_unit": list(factors)}
        if pixel_size is not None:
            notes.append(f"{source}: --pixel-size ignored, the file's calibration "
                         f"({calibration.source}) is used")
    elif pixel_size is not None:
        factors = expand_scale(pixel_size, len(axes), source)
        record = {"unit": calibration.unit, "um_per_unit": list(factors), "source": "--pixel-size"}
    else:
        factors = (1.0,) * len(axes)
        record, note = assumed_micrometres(calibration.unit, len(axes), source)
        notes.append(note)
    out = table.drop(columns=axes).copy()
    for axis, factor in zip(axes, factors):
        out[f"{axis}_um"] = table[axis].to_numpy(dtype=np.float64) * factor
    return out, record, notes


ASSUMED = "assumed (no calibration in the file and no --pixel-size)"


def assumed_micrometres(unit: str, ndim: int, source: str) -> tuple[dict, str]:
    """The calibration record and the warning of coordinates in ``unit`` (pixels, say) that
    nothing converts: taken as micrometres (the formats' files without a calibration, a
    table's columns mapped from pixel names without ``--pixel-size``)."""
    record = {"unit": unit, "um_per_unit": [1.0] * ndim, "source": ASSUMED}
    return record, _assumed_note(unit, source)


def _assumed_note(unit: str, sources: str, whose: str = "the file has") -> str:
    return (f"{sources}: coordinates are in {unit} and {whose} no calibration; taken as "
            "micrometres (give --pixel-size X[,Y[,Z]])")


def assumed_once(first, second) -> list[str]:
    """The warnings of two files read (:class:`~trackverify.io.tracks.TrackTable`), the
    "taken as micrometres" warning said once, naming both, when both files give it in the
    same unit (one ``--pixel-size`` answers both; a 2-D file against a 3-D one printed it
    twice)."""
    records = [read.record.get("calibration") or {} for read in (first, second)]
    units = {record.get("unit") for record in records}
    if len(units) != 1 or any(record.get("source") != ASSUMED for record in records):
        return first.warnings + second.warnings
    unit = units.pop()
    paths = [read.record.get("source") for read in (first, second)]
    notes = [_assumed_note(unit, path) for path in paths]
    rest = [w for w in first.warnings + second.warnings if w not in notes]
    return [_assumed_note(unit, " and ".join(paths), "both files have"), *rest]


def median_spacing_um(table: pd.DataFrame) -> float | None:
    """Median nearest-neighbour spacing (module docstring); None without two points in a frame."""
    from scipy.spatial import cKDTree

    columns = [c for c in ("x_um", "y_um", "z_um") if c in table.columns]
    if len(columns) < 2 or len(table) < 2:
        return None
    keys = table.groupby(["recording", "frame"], sort=True).indices
    names = list(keys)
    picks = np.unique(np.linspace(0, len(names) - 1, min(SAMPLED_FRAMES, len(names))).round()
                      .astype(int))
    points = table[columns].to_numpy(dtype=np.float64)
    distances = []
    for i in picks:  # a bounded sample of frames, not a per-row loop
        rows = keys[names[i]]
        if len(rows) < 2:
            continue
        d, _ = cKDTree(points[rows]).query(points[rows], k=2)
        distances.append(d[:, 1])
    if not distances:
        return None
    return float(np.median(np.concatenate(distances)))


def plausibility_warnings(table: pd.DataFrame, source: str) -> list[str]:
    spacing = median_spacing_um(table)
    if spacing is None:
        return []
    if spacing < MIN_SPACING_UM or spacing > MAX_SPACING_UM:
        return [f"{source}: the median nearest-neighbour spacing is {spacing:.3g} um, outside "
                f"[{MIN_SPACING_UM:g}, {MAX_SPACING_UM:g}] um: are the coordinates in pixels "
                "or another unit? (give --pixel-size X[,Y[,Z]])"]
    return []


def scale_mismatch_warnings(reference: pd.DataFrame, predictions: pd.DataFrame,
                            reference_source: str, predictions_source: str) -> list[str]:
    """A warning when the two tables' spacings differ by more than MAX_SCALE_RATIO times."""
    ref = median_spacing_um(reference)
    pred = median_spacing_um(predictions)
    if ref is None or pred is None or ref <= 0 or pred <= 0:
        return []
    ratio = max(ref, pred) / min(ref, pred)
    if ratio > MAX_SCALE_RATIO:
        return [f"the median nearest-neighbour spacing of {predictions_source} ({pred:.3g} um) "
                f"and of {reference_source} ({ref:.3g} um) differ {ratio:.2g}x: are they in "
                "the same units? (give --pixel-size for the one in pixels)"]
    return []
