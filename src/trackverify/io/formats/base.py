"""What every reader returns (:class:`Tracks`, :class:`Calibration`): the readers import
these from here, and the registry (:mod:`trackverify.io.formats`) re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Calibration:
    """What one coordinate unit of a file is: ``um_per_unit`` per axis (x, y[, z]) or None."""

    unit: str
    um_per_unit: tuple[float, ...] | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "um_per_unit": None if self.um_per_unit is None
                else list(self.um_per_unit), "source": self.source}


@dataclass
class Tracks:
    """A reader's result: points in the file's units and what the file says they are."""

    table: Any  # pandas.DataFrame: frame, track, x, y[, z], parent_track, extras
    calibration: Calibration
    details: dict = field(default_factory=dict)
