"""Figures of the HTML reports: one matplotlib setup and one SVG export for every report.

:func:`pyplot` gives matplotlib's pyplot on the Agg backend with the reports' style and a
fixed SVG hash salt; :func:`figure_svg` turns a figure into inline SVG text without the date
metadata, so the same figure gives the same bytes on every run.
"""

from __future__ import annotations

import io
import warnings


def figure_svg(figure) -> str:
    """The figure as one inline ``<svg>`` element (no XML header, no metadata block).

    Text is written as text (``svg.fonttype`` none), so a character the layout font lacks
    (a recording named in CJK script) is shown by the browser's fonts: matplotlib's
    "Glyph ... missing from font" warning, one per character on stderr, is not given."""
    buffer = io.StringIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    return text[:start] + text[end + len("</metadata>"):] if start >= 0 else text


def legend(ax, **options) -> None:
    """``ax.legend(**options)`` when some artist of ``ax`` has a label; nothing otherwise (an
    empty plot, e.g. every row abstained, has no legend rather than matplotlib's warning)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**options)


def pyplot():
    """matplotlib.pyplot on the Agg backend, styled for the reports (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # text.parse_math off: a title or tick label is input text (a recording name, an id),
    # never TeX; "$\\frac{$" in a recording name would otherwise stop the report.
    plt.rcParams.update({"svg.hashsalt": "trackverify", "svg.fonttype": "none",
                         "text.parse_math": False,
                         "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    return plt
