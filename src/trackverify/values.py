"""Checks of single values read from files, settings and arguments.

Each caller raises its own error (``ConfigError``, ``InputError``, ...) with its own
message; the definition of the value it accepts lives here, once.
"""

from __future__ import annotations

import numbers
import sys
import unicodedata
from typing import Any

import numpy as np

#: The largest integer a setting, seed or id may hold: int64's (numpy, Parquet and JSON
#: readers keep every digit of it; 2^63 does not fit).
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def is_integer(value: Any, low: int | None = None, high: int | None = None) -> bool:
    """Whether ``value`` is an integer, not a bool, with ``low <= value <= high`` (each
    bound only when given).

    An integer is a Python ``int`` or a numpy integer (any :class:`numbers.Integral`);
    ``True`` and ``False`` are ints to Python but not integers here, and neither is a
    float with a whole value (``2.0``) nor a numpy bool.
    """
    return bool(isinstance(value, numbers.Integral) and not isinstance(value, bool)
                and (low is None or value >= low) and (high is None or value <= high))


def is_real(value: Any, low: float | None = None, high: float | None = None, *,
            strict: bool = False, finite: bool = True, float_range: bool = False) -> bool:
    """Whether ``value`` is a real number, not a bool, with ``low <= value <= high`` (each
    bound only when given; ``low < value`` when ``strict``) and, when ``finite``, neither
    NaN nor infinite.

    A real number is an integer (:func:`is_integer`: an int or numpy integer) or a float
    (a Python ``float`` or any numpy floating type); ``True``, ``False``, numpy bools, text
    and other number types (complex, ``Fraction``, ``Decimal``) are not. An integer is
    always finite, even one past the float range (``10 ** 400``). With ``finite=False``,
    NaN and the infinities are real numbers too (NaN then fails every bound, being neither
    ``>=`` nor ``<=`` anything). With ``float_range``, an integer must also convert to a
    float (``abs(value) <= sys.float_info.max``; ``10 ** 400`` does not).
    """
    integer = is_integer(value)
    if not (integer or isinstance(value, (float, np.floating))):
        return False
    if float_range and integer and abs(value) > sys.float_info.max:
        return False
    if finite and not integer and not np.isfinite(value):
        return False
    return bool((low is None or (value > low if strict else value >= low))
                and (high is None or value <= high))


#: Unicode categories that do not show as themselves: controls (C0, DEL and C1), format
#: characters (bidirectional overrides, zero-width spaces and joiners, soft hyphen), line and
#: paragraph separators, lone surrogates. (Not "unassigned": that depends on the Python's
#: Unicode version.)
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def hidden_character(text: str) -> str | None:
    """The first character of ``text`` that does not show as itself (a category of
    :data:`HIDDEN_CATEGORIES`: a right-to-left override shows ``'x\u202eatad.nwb'`` as
    ``'xdata.nwb'``), or None.

    >>> hidden_character("AVAL"), hidden_character("AV\u2028AL")
    (None, '\u2028')
    """
    return next((c for c in text if unicodedata.category(c) in HIDDEN_CATEGORIES), None)


def describe_character(c: str) -> str:
    """``c`` as ``U+202E (RIGHT-TO-LEFT OVERRIDE)``, for messages."""
    return f"U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})"
