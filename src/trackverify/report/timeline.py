"""Timelines of the reports: rows (reference tracks, or predicted ids) x frames, coloured by
each cell's state, with events (identity switches) marked. One helper for every timeline:
the run and evaluate reports' per-track timeline and the audit's identity timeline.

A timeline is stored as run-length segments, never one entry per cell: a segment is a
maximal run of one row's cells on consecutive frames in one state (a frame where the row
has no cell, state 0 "not observed", ends it and is the background). States are codes
``1..len(states) - 1`` in rising severity.

Rendered as one raster image per timeline (inline SVG around an embedded image, so 200
rows x 5,000 frames is one element, not a million), with the events as markers on top.
When the frames outnumber :data:`MAX_COLUMNS`, ``ceil(frames / MAX_COLUMNS)`` consecutive
frames share one column, and a column shows its most severe state, so a single wrong frame
stays visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.report.plots import figure_svg, pyplot

#: At most this many columns; wider timelines are binned (a bin shows its worst state).
MAX_COLUMNS = 1500
#: Height of one row (inches): a 6-point label fits, so every row is labelled up to
#: MAX_LABELLED rows (200 ids: 25.6 inches); beyond, every ceil(n / MAX_LABELLED)-th.
ROW_INCHES = 0.125
MAX_LABELLED = 300
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
                   marker_label: str = "identity switch") -> Timeline:
    """A :class:`Timeline` from one entry per cell: ``row_ids`` (any ids; rows sorted by
    id), ``frame`` and ``state`` (codes ``1..``); markers by row id and frame (a marker on
    an id with no cell is dropped). ``frames`` defaults to the cells' first and last frame."""
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
                    markers, tuple(states), tuple(tuple(c) for c in colours), marker_label)


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
    """The timeline as inline SVG: one image for the cells, the markers on top (their group
    has id ``timeline-markers``), a legend of the states present and the markers."""
    starts, codes = binned(timeline)
    colours = np.asarray(timeline.colours, dtype=np.float64)
    n = max(len(timeline.rows), 1)
    plt = pyplot()
    height = float(np.clip(0.6 + ROW_INCHES * n, 2.0, 0.6 + ROW_INCHES * MAX_LABELLED))
    fig, ax = plt.subplots(figsize=(11, height))
    step = starts[1] - starts[0] if len(starts) > 1 else 1
    ax.imshow(colours[codes] if len(timeline.rows) else colours[np.zeros((1, 1), dtype=int)],
              aspect="auto", interpolation="none",
              extent=(starts[0] - 0.5, starts[-1] + step - 0.5, n - 0.5, -0.5))
    markers = timeline.markers
    if len(markers):
        row_points = 72.0 * (height - 0.6) / n  # the height of one row, in points
        ax.scatter(markers["frame"].to_numpy(), markers["row"].to_numpy(), marker="|",
                   s=max(0.7 * row_points, 3.0) ** 2, color="black", linewidths=0.6, zorder=3,
                   gid="timeline-markers", rasterized=len(markers) > 2000)
    tick = max(1, int(np.ceil(n / MAX_LABELLED)))  # every row labelled up to MAX_LABELLED
    ax.set_yticks(np.arange(0, len(timeline.rows), tick),
                  [str(i) for i in timeline.rows[::tick]], fontsize=6)
    ax.set(xlabel="frame", ylabel=timeline.row_label)
    ax.set_title(timeline.title, loc="left", pad=16)
    present = sorted({0, *np.unique(timeline.segments["state"]).tolist()})
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colours[i], edgecolor="0.6", lw=0.5)
               for i in present]
    labels = [timeline.states[i] for i in present]
    if len(markers):
        handles.append(plt.Line2D([], [], marker="|", ls="none", color="black", markersize=8))
        labels.append(f"{timeline.marker_label} ({len(markers)})")
    ax.legend(handles, labels, fontsize=7, frameon=False, ncol=len(labels), loc="lower right",
              bbox_to_anchor=(1, 1))
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


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
