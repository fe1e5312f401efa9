"""Numbers as people read them.

Every text output meant for people (terminal summaries and tables, Markdown, the HTML
reports, the sentences inside reports) writes a measured value through :func:`fmt`: rounded
to :data:`SIGNIFICANT_DIGITS` significant digits, trailing zeros dropped, positional
notation for ``1e-4 <= |x| < 1e6`` and scientific notation (``1.235e-05``) outside it.
Integers (counts) are written exactly. JSON outputs, and files read by other programs
(``scores.txt`` of the AnDi scoring program), keep full precision.

Examples: ``0.4000000000000001`` -> ``0.4``; ``2/3`` -> ``0.6667``; ``12345.678`` ->
``12350``; ``0.000012345`` -> ``1.234e-05`` (round half to even on the binary value);
``-0.0`` -> ``0``; ``None`` and NaN -> the caller's word for undefined.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

SIGNIFICANT_DIGITS = 4
"""Significant digits of every number printed for people."""


def fmt(value: object, digits: int = SIGNIFICANT_DIGITS, undefined: str = "null") -> str:
    """``value`` rounded to ``digits`` significant digits (see the module docstring).

    ``None`` and NaN give ``undefined``; booleans ``True`` / ``False``; integers (Python or
    numpy) their exact digits; infinities ``inf`` / ``-inf``; anything else ``str(value)``.
    """
    if value is None:
        return undefined
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if not isinstance(value, numbers.Real):
        return str(value)
    x = float(value)
    if math.isnan(x):
        return undefined
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")  # rounds once, at the right digit
    power = int(exponent)
    if -4 <= power < 6:
        text = f"{float(mantissa + 'e' + exponent):.{max(digits - 1 - power, 0)}f}"
        return _strip(text)
    return f"{_strip(mantissa)}e{power:+03d}"


def fmt_each(values) -> np.ndarray:
    """:func:`fmt` of each of ``values`` (an object array of text, e.g. a column of sentences'
    numbers); in a float column each distinct value is formatted once.

    >>> fmt_each([0.4000000000000001, float("nan"), 0.4000000000000001]).tolist()
    ['0.4', 'null', '0.4']
    """
    values = np.asarray(values)
    if values.dtype.kind != "f":
        return np.array([fmt(v) for v in values.ravel().tolist()], dtype=object)
    distinct, inverse = np.unique(values.ravel(), return_inverse=True)
    return np.array([fmt(v) for v in distinct.tolist()], dtype=object)[inverse]


def _strip(text: str) -> str:
    """Drop trailing zeros after a decimal point (and the point itself)."""
    return text.rstrip("0").rstrip(".") if "." in text else text
