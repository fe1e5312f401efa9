"""Figures written as SVG text directly: circles, lines, rectangles and text, no plotting
library (a picture costs milliseconds, not a quarter of a second), deterministic bytes.

Coordinates are pixels of the figure's own ``viewBox``; the report's CSS scales a figure down
to the page's width. Numbers in the markup are written with at most one decimal (:func:`px`),
numbers meant for people through :func:`trackverify.report.numbers.fmt`.
"""

from __future__ import annotations

import base64
import html
import math

import numpy as np

#: The reports' text colour, and a grey for axes and context.
INK, MUTED, RULE = "#1d2430", "#6b7280", "#c9ced8"


def px(value: float) -> str:
    """A coordinate as markup: one decimal, no trailing ``.0`` (``-0`` written ``0``)."""
    text = f"{float(value):.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def hex_colour(rgb) -> str:
    """``#rrggbb`` of an RGB triple in [0, 1], or a colour already written as text."""
    if isinstance(rgb, str):
        return rgb
    return "#" + "".join(f"{round(255 * float(c)):02x}" for c in rgb[:3])


def text(x: float, y: float, words: str, size: float = 11, anchor: str = "start",
         fill: str = INK, extra: str = "") -> str:
    """A ``<text>`` element of ``words`` (escaped) at (x, y), its baseline at y."""
    return (f'<text x="{px(x)}" y="{px(y)}" font-size="{px(size)}" text-anchor="{anchor}" '
            f'fill="{fill}"{(" " + extra) if extra else ""}>{html.escape(words)}</text>')


def figure(width: float, height: float, body: str, label: str, extra: str = "") -> str:
    """The whole ``<svg>`` element, ``label`` its accessible name (escaped)."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {px(width)} {px(height)}" '
            f'width="{px(width)}" height="{px(height)}" role="img" '
            f'aria-label="{html.escape(label)}" font-family="system-ui, sans-serif"'
            f'{(" " + extra) if extra else ""}>{body}</svg>')


def legend_row(entries, x: float, y: float, size: float = 11, swatch=(12.0, 10.0),
               gap: float = 14.0, stroke: str = "") -> str:
    """One line of a legend, left to right from ``x``: each entry ``(colour, label)`` a
    ``swatch`` (width, height) rectangle of the colour (or ``(markup, label)`` with the
    markup drawn from the entry's corner, when ``colour`` is SVG), top at ``y``, and its
    label of font ``size`` beside it. An entry takes its swatch, 4 px, its label (0.56
    ``size`` a character) and ``gap``. ``stroke``: a rectangle's outline colour, if any."""
    width, height = swatch
    edge = f' stroke="{stroke}" stroke-width="0.5"' if stroke else ""
    out = []
    for colour, label in entries:
        colour = hex_colour(colour)
        mark = (colour if colour.startswith("<") else
                f'<rect width="{px(width)}" height="{px(height)}" fill="{colour}"{edge}/>')
        out.append(f'<g transform="translate({px(x)} {px(y)})">{mark}</g>'
                   + text(x + width + 4, y + height - 1, label, size))
        x += width + 4 + 0.56 * size * len(label) + gap
    return "".join(out)


def png_image(png: bytes, x: float, y: float, width: float, height: float) -> str:
    """An ``<image>`` of the PNG bytes, stretched over the box with its pixels kept sharp."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<image x="{px(x)}" y="{px(y)}" width="{px(width)}" height="{px(height)}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" '
            f'href="data:image/png;base64,{data}"/>')


def ticks(low: float, high: float, count: int = 5) -> np.ndarray:
    """Round values (1, 2 or 5 times a power of ten apart) inside ``[low, high]``, about
    ``count`` of them; ``[low]`` when the range is empty.

    >>> ticks(0, 686).tolist()
    [0.0, 200.0, 400.0, 600.0]
    >>> ticks(0.0, 1.0).tolist()
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    """
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return np.array([float(low)])
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    values = (first + np.arange(int(math.floor(high / step + 1e-9)) - first + 1)) * step
    return np.round(values, 12)


def scale_bar_length(span_um: float) -> float:
    """A round length (1, 2 or 5 times a power of ten) of about a fifth of ``span_um``.

    >>> scale_bar_length(23.0), scale_bar_length(4.0)
    (5.0, 1.0)
    """
    if not math.isfinite(span_um) or span_um <= 0:
        return 1.0
    raw = span_um / 5
    power = 10.0 ** math.floor(math.log10(raw))
    return max((m * power for m in (1, 2, 5) if m * power <= raw), default=power)
