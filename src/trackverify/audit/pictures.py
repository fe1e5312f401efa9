"""A small picture per event for the audit report: where its ids were in the anchor frame
(the frame a person checked) beside where they are, and should be, in the event's frame.

Left: the anchor frame's positions of the event's ids and of the identities around them
(x-y projection). Right: the event's *shown frame* (its observation with the largest score
among those on the look-alike's place, else its largest score): each id's position in that
frame (filled) and where the registration puts it (``expected_*``, hollow), joined by a line;
the event's own ids are red (the predicted id) and blue (its look-alike or swap partner).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.report.plots import figure_svg, pyplot
from trackverify.report.timeline import BLUE, RED

#: Identities within this many of the event id's anchor spacings are drawn around it.
NEIGHBOURHOOD_SPACINGS = 3.0
#: At most this many identities are labelled in one picture (the nearest to the event's id).
MAX_LABELS = 24


def shown_frame(event: pd.Series, rows: pd.DataFrame) -> int:
    """The frame the picture shows for ``event``: its covered row on the look-alike's place
    with the largest score, else its covered row with the largest score (ties: the earliest)."""
    from trackverify.audit.events import on_another_place

    on = on_another_place(rows)
    pool = rows[on] if on.any() else rows
    score = pool["score"].to_numpy(dtype=float, na_value=-np.inf)
    best = np.flatnonzero(score == score.max())
    return int(pool["frame"].to_numpy()[best].min())


def event_picture(event: pd.Series, observations: pd.DataFrame) -> str:
    """The event's picture as inline SVG (see the module docstring); ``observations`` are the
    audit's rows of the event's recording."""
    covered = observations[observations["event"].eq(event["rank"]).to_numpy(dtype=bool,
                                                                          na_value=False)]
    frame = shown_frame(event, covered)
    anchor = observations[observations["reason"].eq("anchor_frame").to_numpy()]
    now = observations[(observations["frame"].to_numpy() == frame)
                       & observations["pred_valid"].to_numpy(dtype=bool)]
    main, other = _main_ids(event, covered, frame)
    ids = _around(anchor, main + _started_on(covered, main), now)
    if "start_identity" in now.columns:  # later tracks drawn with the identity they started on
        ids = ids + [i for i in pd.unique(now.loc[now["start_identity"].isin(ids).to_numpy()
                                                  & ~now["pred_id"].isin(ids).to_numpy(),
                                                  "pred_id"]) if i not in ids]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.9))
    _panel(axes[0], anchor[anchor["pred_id"].isin(ids)], main, other, expected=False,
           title=f"anchor frame {int(anchor['frame'].min()) if len(anchor) else ''}")
    _panel(axes[1], now[now["pred_id"].isin(ids)], main, other, expected=True,
           title=f"frame {frame}")
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


def _started_on(covered: pd.DataFrame, main: list) -> list:
    """The anchor identities the event's main tracks started on (a later track is not in the
    anchor frame: its neighbourhood there is its start identity's)."""
    if "start_identity" not in covered.columns:
        return []
    started = covered.loc[covered["pred_id"].isin(main).to_numpy(), "start_identity"]
    return [i for i in pd.unique(started.dropna()) if i not in main]


def _main_ids(event: pd.Series, covered: pd.DataFrame, frame: int) -> tuple[list, list]:
    """The event's ids drawn red and blue: the predicted id and its look-alike (identity),
    the two ids (swap), the ids flagged in the frame (frame event), the id (others)."""
    ids = list(pd.unique(covered.loc[covered["frame"].to_numpy() == frame, "pred_id"]))
    if event["kind"] in ("identity", "switch") and pd.notna(event["lookalike_id"]):
        return ids[:1], [event["lookalike_id"]]
    if event["kind"] in ("swap", "crossing"):
        pair = list(np.sort(pd.unique(covered["pred_id"]).astype(object)))
        return pair[:1], pair[1:2]
    return ids, []


def _around(anchor: pd.DataFrame, main: list, now: pd.DataFrame) -> list:
    """The ids drawn: the event's, and the anchor identities within
    ``NEIGHBOURHOOD_SPACINGS`` spacings of them (at most ``MAX_LABELS``, nearest first)."""
    xy = anchor[["x_um", "y_um"]].to_numpy(dtype=float)
    centre = anchor[anchor["pred_id"].isin(main)][["x_um", "y_um"]].to_numpy(dtype=float)
    if not len(centre) or len(xy) < 2:
        return list(pd.unique(now["pred_id"]))[:MAX_LABELS]
    gaps = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(gaps, np.inf)
    radius = NEIGHBOURHOOD_SPACINGS * float(np.median(gaps.min(axis=1)))
    distance = np.sqrt(((xy[:, None, :] - centre[None, :, :]) ** 2).sum(-1)).min(axis=1)
    order = np.argsort(distance, kind="stable")
    near = order[distance[order] <= radius][:max(MAX_LABELS, len(main))]
    return list(anchor["pred_id"].to_numpy(dtype=object)[near])


def _panel(ax, rows: pd.DataFrame, main: list, other: list, expected: bool, title: str) -> None:
    colour = np.where(rows["pred_id"].isin(main), "red",
                      np.where(rows["pred_id"].isin(other), "blue", "0.45"))
    colour = np.where(colour == "red", _hex(RED), np.where(colour == "blue", _hex(BLUE), "#737373"))
    x, y = rows["x_um"].to_numpy(dtype=float), rows["y_um"].to_numpy(dtype=float)
    if expected and "expected_x_um" in rows.columns:
        ex = rows["expected_x_um"].to_numpy(dtype=float)
        ey = rows["expected_y_um"].to_numpy(dtype=float)
        known = np.isfinite(ex) & np.isfinite(ey)
        from matplotlib.collections import LineCollection

        ax.add_collection(LineCollection(
            np.stack([np.c_[x, y], np.c_[ex, ey]], axis=1)[known], colors=colour[known],
            linewidths=0.6))
        ax.scatter(ex[known], ey[known], s=28, facecolors="none", edgecolors=colour[known],
                   linewidths=0.8)
    ax.scatter(x, y, s=14, c=colour)
    for xi, yi, label, c in zip(x, y, rows["pred_id"].astype(str), colour):
        ax.annotate(label, (xi, yi), fontsize=6, color=c,
                    xytext=(2, 2), textcoords="offset points")
    ax.set_title(title, fontsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    ax.tick_params(labelsize=6)
    ax.set_xlabel("x (µm)", fontsize=7)
    ax.set_ylabel("y (µm)", fontsize=7)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(255 * c):02x}" for c in rgb)
