"""Checks of single values read from files, settings and arguments.

Each caller raises its own error (``ConfigError``, ``InputError``, ...) with its own
message; the definition of the value it accepts lives here, once.
"""

from __future__ import annotations

import numbers
from typing import Any


def is_integer(value: Any, low: int | None = None, high: int | None = None) -> bool:
    """Whether ``value`` is an integer, not a bool, with ``low <= value <= high`` (each
    bound only when given).

    An integer is a Python ``int`` or a numpy integer (any :class:`numbers.Integral`);
    ``True`` and ``False`` are ints to Python but not integers here, and neither is a
    float with a whole value (``2.0``) nor a numpy bool.
    """
    return bool(isinstance(value, numbers.Integral) and not isinstance(value, bool)
                and (low is None or value >= low) and (high is None or value <= high))
