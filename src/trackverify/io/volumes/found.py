"""What a volume file says about itself, and the rule that merges it with what is given."""

from __future__ import annotations

from dataclasses import dataclass, field

from trackverify.io.formats.units import UNCALIBRATED, UNIT_TO_UM

#: Unit names of volume metadata beyond the tracker formats' (OME-NGFF's UDUNITS names).
UNIT_NAMES = {**UNIT_TO_UM, "micrometer": 1.0, "micrometers": 1.0, "nanometer": 1e-3,
              "nanometers": 1e-3, "millimeter": 1e3, "millimeters": 1e3, "meters": 1e6,
              "m": 1e6, "um": 1.0, "\\u00b5m": 1.0}


@dataclass
class Found:
    """What the file states: ``axes`` (letters of t, c, z, y, x in the file's dimension
    order, None when it does not say), voxel size and origin per spatial axis (um), channel
    names, and ``where`` it says it (for messages and :meth:`Volume.describe`)."""

    axes: str | None = None
    voxel_um: dict[str, float] = field(default_factory=dict)
    origin_um: dict[str, float] = field(default_factory=dict)
    channel_names: list[str] | None = None
    where: str = "the file"


def unit_factor(unit: str) -> float | None:
    """Micrometres per ``unit`` (None for pixels, no unit or an unknown name)."""
    key = str(unit).strip().lower()
    if key in UNCALIBRATED:
        return None
    return UNIT_NAMES.get(key)
