"""Timelines of the reports: rows (reference tracks, or predicted ids) x frames, coloured by
each cell's state, with events (identity switches) marked. One helper for every timeline:
the run and evaluate reports' per-track timeline and the audit's identity timeline.

A timeline is stored as run-length segments, never one entry per cell: a segment is a
maximal run of one row's cells on consecutive frames in one state (a frame where the row
has no cell, state 0 "not observed", ends it and is the background). States are codes
``1..len(states) - 1`` in rising severity.

Rendered as SVG written directly (no plotting library): one raster image for the cells
(so 200 rows x 5,000 frames is one element, not a million), every row labelled up to
:data:`MAX_LABELLED` rows, the events as markers on top and *guides* (a frame to see at a
glance, e.g. the anchor frame) as vertical lines. When the frames outnumber
:data:`MAX_COLUMNS`, ``ceil(frames / MAX_COLUMNS)`` consecutive frames share one column, and a
column shows its most severe state, so a single wrong frame stays visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.io.png import png_pixels
from trackverify.report.svg import (INK, MUTED, figure, hex_colour, legend_row, png_image, px,
                                    text, ticks)

#: At most this many columns; wider timelines are binned (a bin shows its worst state).
MAX_COLUMNS = 1500
#: Height of one row (px) up to MAX_LABELLED rows, each labelled (an 8 px label fits; 200 ids:
#: 1,800 px); beyond, the rows share MAX_LABELLED x ROW_PX and every ceil(n / MAX_LABELLED)-th
#: is labelled. Width of the whole figure (px).
ROW_PX = 9.0
MAX_LABELLED = 300
WIDTH = 1100.0
#: The background colour: a frame where the row has no cell.
NOT_OBSERVED = "not observed"
GREY, BLUE, GREEN = (0.96, 0.96, 0.97), (0.45, 0.55, 0.75), (0.55, 0.78, 0.60)
AMBER, RED, PURPLE = (0.96, 0.73, 0.30), (0.80, 0.16, 0.17), (0.62, 0.52, 0.78)
#: States of a reference track's observation (run and evaluate reports), rising severity.
REFERENCE_STATES = (NOT_OBSERVED, "correct", "no anchor identity", "no valid prediction",
                    "wrong identity")
REFERENCE_COLOURS = (GREY, GREEN, PURPLE, AMBER, RED)


@dataclass(frozen=True)
class Timeline:
    """What a timeline shows: ``rows`` (ids, top to bottom), the frame range ``frames``
    (first, last; inclusive), ``segments`` (columns ``row`` (index into ``rows``),
    ``first_frame``, ``last_frame``, ``state`` (code into ``states``)), ``markers``
    (columns ``row``, ``frame``), the state names and colours (code 0: the background)."""

    title: str
    row_label: str
    rows: np.ndarray
    frames: tuple[int, int]
    segments: pd.DataFrame
    markers: pd.DataFrame
    states: tuple[str, ...]
    colours: tuple[tuple[float, float, float], ...]
    marker_label: str = "identity switch"
    guides: tuple[tuple[int, str, tuple[float, float, float]], ...] = ()

    def segment_table(self) -> pd.DataFrame:
        """The segments by name: ``row`` (the row's id), ``first_frame``, ``last_frame``,
        ``state`` (its name); rows in display order, then frames."""
        return pd.DataFrame({"row": self.rows[self.segments["row"].to_numpy()],
                             "first_frame": self.segments["first_frame"].to_numpy(),
                             "last_frame": self.segments["last_frame"].to_numpy(),
                             "state": np.asarray(self.states, dtype=object)[
                                 self.segments["state"].to_numpy()]})

    def marker_table(self) -> pd.DataFrame:
        """The markers by name: ``row`` (the row's id) and ``frame``."""
        return pd.DataFrame({"row": self.rows[self.markers["row"].to_numpy()],
                             "frame": self.markers["frame"].to_numpy()})


def run_segments(row: np.ndarray, frame: np.ndarray, state: np.ndarray) -> pd.DataFrame:
    """Maximal runs of cells of one ``row`` on consecutive frames with one ``state``.

    One cell per (row, frame); a repeated cell keeps its most severe (largest) state.
    Returns ``row, first_frame, last_frame, state`` ordered by row, then frame.
    """
    row, frame, state = (np.asarray(a, dtype=np.int64) for a in (row, frame, state))
    order = np.lexsort((-state, frame, row))
    row, frame, state = row[order], frame[order], state[order]
    keep = np.r_[True, (row[1:] != row[:-1]) | (frame[1:] != frame[:-1])]
    row, frame, state = row[keep], frame[keep], state[keep]
    starts = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (frame[1:] != frame[:-1] + 1)
                                  | (state[1:] != state[:-1])])
    ends = np.r_[starts[1:] - 1, len(row) - 1].astype(np.int64)
    return pd.DataFrame({"row": row[starts], "first_frame": frame[starts],
                         "last_frame": frame[ends], "state": state[starts]})


def build_timeline(title: str, row_label: str, row_ids, frame, state, *, states: tuple[str, ...],
                   colours, marker_rows=(), marker_frames=(), frames: tuple[int, int] | None = None,
                   marker_label: str = "identity switch", guides=()) -> Timeline:
    """A :class:`Timeline` from one entry per cell: ``row_ids`` (any ids; rows sorted by
    id), ``frame`` and ``state`` (codes ``1..``); markers by row id and frame (a marker on
    an id with no cell is dropped). ``frames`` defaults to the cells' first and last frame;
    ``guides``: ``(frame, label, colour)`` of frames drawn as vertical lines."""
    codes, rows = pd.factorize(pd.Series(row_ids), sort=True)
    frame = np.asarray(frame, dtype=np.int64)
    if frames is None:
        frames = (int(frame.min()), int(frame.max())) if len(frame) else (0, 0)
    marker_code = pd.Index(rows).get_indexer(pd.Series(marker_rows, dtype=object)
                                             if len(marker_rows) else [])
    marker_frames = np.asarray(marker_frames, dtype=np.int64)
    kept = marker_code >= 0
    order = np.lexsort((marker_frames[kept], marker_code[kept]))
    markers = pd.DataFrame({"row": marker_code[kept][order].astype(np.int64),
                            "frame": marker_frames[kept][order]})
    return Timeline(title, row_label, np.asarray(rows, dtype=object),
                    (int(frames[0]), int(frames[1])), run_segments(codes, frame, state),
                    markers, tuple(states), tuple(tuple(c) for c in colours), marker_label,
                    tuple((int(f), str(label), tuple(c)) for f, label, c in guides))


def binned(timeline: Timeline, max_columns: int = MAX_COLUMNS) -> tuple[np.ndarray, np.ndarray]:
    """``(first frame of each column, codes[row, column])``: each segment painted on the
    columns it touches, a column keeping its most severe state (0 where nothing is)."""
    first, last = timeline.frames
    per_column = max(1, int(np.ceil((last - first + 1) / max_columns)))
    columns = (last - first) // per_column + 1
    codes = np.zeros((len(timeline.rows), columns), dtype=np.int8)
    seg = timeline.segments
    c0 = (seg["first_frame"].to_numpy() - first) // per_column
    c1 = (seg["last_frame"].to_numpy() - first) // per_column
    width = c1 - c0 + 1
    start_of = np.repeat(np.cumsum(width) - width, width)
    cols = np.repeat(c0, width) + np.arange(int(width.sum())) - start_of
    np.maximum.at(codes, (np.repeat(seg["row"].to_numpy(), width), cols),
                  np.repeat(seg["state"].to_numpy().astype(np.int8), width))
    return first + np.arange(columns) * per_column, codes


def timeline_svg(timeline: Timeline) -> str:
    """The timeline as inline SVG (module docstring): the title, a legend of the states
    present, the markers and the guides, the row labels (``<text class="row">``), the cells as
    one image, the markers in the group ``timeline-markers`` (one path: a short vertical
    stroke per marker), the guides as lines, and the frame axis (``<text class="frame">``)."""
    starts, codes = binned(timeline)
    first = timeline.frames[0]
    step = int(starts[1] - starts[0]) if len(starts) > 1 else 1
    span = len(starts) * step  # frames the columns cover
    n = max(len(timeline.rows), 1)
    every = max(1, int(np.ceil(n / MAX_LABELLED)))
    row_px = ROW_PX if n <= MAX_LABELLED else ROW_PX * MAX_LABELLED / n
    labels = [str(i) for i in timeline.rows[::every]]
    longest = max((len(label) for label in labels), default=1)
    left = 26.0 + min(6.0 * longest, 150.0)
    top, plot_w = 64.0, WIDTH - left - 12.0
    plot_h = max(row_px * n, 24.0)
    row_px = plot_h / n
    height = top + plot_h + 42.0
    x_of = lambda frame: left + (np.asarray(frame, dtype=float) - first + 0.5) * plot_w / span  # noqa: E731
    colours = np.asarray(timeline.colours, dtype=np.float64)
    cells = codes if len(timeline.rows) else np.zeros((1, 1), dtype=np.int8)
    body = [text(4, 16, timeline.title, 13, extra='font-weight="600"'),
            _legend(timeline, 30.0),
            png_image(png_pixels(np.round(colours[cells] * 255).astype(np.uint8)), left, top,
                      plot_w, plot_h)]
    if n > 20:  # a faint line every ten rows guides the eye along a row
        body.append('<path stroke="#ffffff" stroke-opacity="0.7" stroke-width="1" d="'
                    + "".join(f"M{px(left)} {px(top + k * row_px)}h{px(plot_w)}"
                              for k in range(10, n, 10)) + '"/>')
    body += [text(left - 4, top + (k * every + 0.5) * row_px + min(row_px, 8.0) * 0.35, label,
                  min(8.0, max(row_px, 5.0)), "end", extra='class="row"')
             for k, label in enumerate(labels)]
    body.append(text(10, top + plot_h / 2, timeline.row_label, 10, "middle", MUTED,
                     extra=f'transform="rotate(-90 10 {px(top + plot_h / 2)})"'))
    markers = timeline.markers
    if len(markers):
        x = x_of(markers["frame"].to_numpy())
        y = top + markers["row"].to_numpy() * row_px + 0.1 * row_px
        body.append('<g id="timeline-markers"><path stroke="#000000" stroke-width="1" d="'
                    + "".join(f"M{px(a)} {px(b)}v{px(0.8 * row_px)}" for a, b in zip(x, y))
                    + '"/></g>')
    for frame, label, colour in timeline.guides:
        x = float(x_of(frame))
        width = max(3.0, plot_w / span)
        body.append(f'<line class="guide" x1="{px(x)}" x2="{px(x)}" y1="{px(top - 6)}" '
                    f'y2="{px(top + plot_h)}" stroke="{hex_colour(colour)}" '
                    f'stroke-width="{px(width)}"/>')
        body.append(text(x + width, top - 8, label, 11, "start", hex_colour(colour),
                         extra='font-weight="600"'))
    axis = top + plot_h
    for value in ticks(first, timeline.frames[1], 8):
        x = float(x_of(value))
        body.append(f'<line x1="{px(x)}" x2="{px(x)}" y1="{px(axis)}" y2="{px(axis + 4)}" '
                    f'stroke="{INK}"/>')
        body.append(text(x, axis + 15, f"{int(value)}", 10, "middle", extra='class="frame"'))
    body.append(text(left + plot_w / 2, axis + 34, "frame", 10, "middle", MUTED))
    return figure(WIDTH, height, "".join(body), timeline.title)


def _legend(timeline: Timeline, y: float) -> str:
    """One line of swatches: the states present (the background first) and the markers, each
    with its name (a guide is named on the plot, beside its line)."""
    present = sorted({0, *np.unique(timeline.segments["state"]).tolist()})
    entries = [(timeline.colours[i], timeline.states[i]) for i in present]
    if len(timeline.markers):
        entries.append(('<path d="M6 0v10" stroke="#000000" stroke-width="1.5"/>',
                        f"{timeline.marker_label} ({len(timeline.markers)})"))
    return '<g class="legend">' + legend_row(entries, 4.0, y, stroke="#8a94a6") + "</g>"


def control_states(predicted: np.ndarray, error: np.ndarray) -> np.ndarray:
    """:data:`REFERENCE_STATES` codes of a run's control rows from their labels (``error``
    1 / 0 / NaN against the anchor identities): 1 correct (0), 4 wrong identity (1), 3 no
    valid prediction (``predicted`` false), 2 no anchor identity (a valid id, no label)."""
    error = np.asarray(error, dtype=np.float64)
    return np.select([error == 1, error == 0, ~np.asarray(predicted, dtype=bool)], [4, 1, 3], 2)


def aligned_states(predicted: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """:data:`REFERENCE_STATES` codes against the recording-wide identity alignment: 1
    correct (the id is aligned to the track), 4 wrong identity (a valid id aligned
    elsewhere or nowhere), 3 no valid prediction."""
    return np.select([np.asarray(correct, dtype=bool), np.asarray(predicted, dtype=bool)],
                     [1, 4], 3)


def reference_timeline(title: str, track, frame, state, events: pd.DataFrame,
                       frames: tuple[int, int] | None = None) -> Timeline:
    """A per-reference-track timeline (:data:`REFERENCE_STATES`), the identity switches
    (``events``: ``track, frame``) marked."""
    return build_timeline(title, "reference track", track, frame, state,
                          states=REFERENCE_STATES, colours=REFERENCE_COLOURS,
                          marker_rows=events["track"].to_numpy(dtype=object),
                          marker_frames=events["frame"].to_numpy(), frames=frames)


def cells_in_state(timeline: Timeline, state: int) -> int:
    """How many cells of the timeline are in ``state``."""
    seg = timeline.segments[timeline.segments["state"].to_numpy() == state]
    return int((seg["last_frame"] - seg["first_frame"] + 1).sum())


def reference_timelines_html(timelines: list[Timeline], limit: int = 12) -> str:
    """Up to ``limit`` timelines, those with the most wrong-identity cells first (ties in the
    given order), and a sentence saying how many are not shown."""
    worst = REFERENCE_STATES.index("wrong identity")
    order = sorted(range(len(timelines)), key=lambda i: -cells_in_state(timelines[i], worst))
    shown = [timelines[i] for i in order[:limit]]
    note = (f"<p>The {limit} recordings with the most wrong identities of {len(timelines)} are "
            "shown.</p>") if len(timelines) > limit else ""
    return note + "".join(timeline_svg(t) for t in shown)
