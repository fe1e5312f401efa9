"""A picture per event for the audit report, written as SVG directly (about 10 ms each,
deterministic bytes): where its ids were in the anchor frame (the frame a person checked)
beside where they are, and should be, in the event's *pictured frame* (``events.csv``'s
``pictured_frame``, :func:`trackverify.audit.events.pictured_frames`).

Both panels are x-y projections at one scale (a scale bar in each), each centred on what it
draws. Every id the event's sentence names is drawn in the pictured frame, in its own colour
(:data:`ROLES`): a filled circle where the tracker puts the id (its observation there), a
hollow circle where the registration puts the neuron the id's track started on (its own
place), a line joining the two; the look-alike's place (where the registration puts it, from
the event id's row) when the tracker gives the look-alike's id to no observation there. Other
ids around are grey dots. A frame event (most ids flagged at once) is a per-frame summary
instead: the frame's observations as dots coloured by verdict, no lines, and under the panels
the share of scored ids flagged in each frame around it. A legend under the panels says what
each mark and colour is.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from trackverify.report.numbers import fmt
from trackverify.report.svg import (INK, MUTED, RULE, figure, legend_row, px, scale_bar_length,
                                    text)

#: The roles of the ids a sentence names: colour and what the legend says of an id in it.
ROLES = {"event": ("#c0392b", "the event's id"),
         "lookalike": ("#2f6db5", "the identity whose place it takes"),
         "nearest": ("#2f6db5", "the nearest other identity"),
         "partner": ("#2f6db5", "the other id of the swap"),
         "started": ("#7b4fa6", "the identity its track started on"),
         "context": ("#9aa0a6", "other ids nearby")}
#: Verdict colours of a frame event's dots (the timeline's).
VERDICT_COLOURS = {"certified": "#8cc799", "flagged": "#cc292b", "abstained": "#f5ba4d",
                   None: "#9aa0a6"}
#: Panel size (px), the gap between the two panels and the figure's margin.
PANEL_W, PANEL_H, GAP, MARGIN = 400.0, 290.0, 28.0, 8.0
#: At most this many context ids are labelled (the nearest to the named ids).
MAX_LABELS = 24
#: Frames on each side of a frame event in its per-frame summary.
SUMMARY_FRAMES = 30


def event_picture(event: pd.Series, observations: pd.DataFrame) -> tuple[str, str]:
    """``(svg, note)``: the picture of ``event`` (a row of ``events.csv``) and one sentence on
    its pictured frame (the event id's distances there); ``observations`` are the audit's
    rows of the event's recording."""
    frame = int(event["pictured_frame"])
    valid = observations["pred_valid"].to_numpy(dtype=bool)
    now = observations[valid & (observations["frame"].to_numpy() == frame)]
    anchor = observations[observations["reason"].eq("anchor_frame").to_numpy()]
    anchor_frame = int(anchor["frame"].min()) if len(anchor) else None
    if event["kind"] == "frame":
        return _frame_summary(event, observations, now, anchor, anchor_frame), ""
    roles = named_ids(event, now)
    marks = _event_marks(roles, now)
    before = _anchor_marks(roles, anchor)
    spacing = _typical_spacing(anchor)
    panels = _place_panels([before, marks], spacing)
    left = _panel(panels[0], before, f"anchor frame {anchor_frame}" if anchor_frame is not None
                  else "no anchor frame", anchor_frame, 0)
    right = _panel(panels[1], marks, f"pictured frame {frame}", frame, 1)
    legend = _legend(roles)
    height = MARGIN + 18 + PANEL_H + 12 + 46
    svg = figure(2 * PANEL_W + GAP + 2 * MARGIN, height, left + right + legend,
                 f"event {event['rank']}: the anchor frame beside frame {frame}",
                 extra=f'class="event-picture" data-event="{event["rank"]}"')
    return svg, _note(event, roles, now, frame)


def named_ids(event: pd.Series, now: pd.DataFrame) -> dict:
    """The ids the event's sentence names, each with its role (:data:`ROLES`): its ids
    (``event``; a swap's second id ``partner``), its look-alike (``lookalike``; a drift's
    ``nearest``), and the
    anchor identity a later track started on (``started``, from the track's row in the
    pictured frame)."""
    ids = [i for i in str(event["ids"]).split(";") if i != ""]
    roles = {ids[0]: "event"} if ids else {}
    if event["kind"] in ("swap", "crossing"):
        roles.update({i: "partner" for i in ids[1:]})
    if pd.notna(event.get("lookalike_id")) and str(event["lookalike_id"]) not in roles:
        roles[str(event["lookalike_id"])] = "nearest" if event["kind"] == "drift" else "lookalike"
    if "start_identity" in now.columns:
        mine = now[now["pred_id"].astype(str).isin([i for i, r in roles.items()
                                                    if r in ("event", "partner")]).to_numpy()]
        for started in pd.unique(mine["start_identity"].dropna().astype(str)):
            roles.setdefault(started, "started")
    return roles


def _event_marks(roles: dict, now: pd.DataFrame) -> pd.DataFrame:
    """The pictured frame's marks, one row each: ``id`` (the track's id; a look-alike's own),
    ``neuron`` (whose place a place mark is: the anchor identity a later track started on,
    else the id), ``role`` (of the id) and ``place_role`` (of the neuron), ``kind`` (``obs``:
    where the tracker puts the id; ``place``: where the registration puts the neuron its
    track started on; ``look``: where it puts the event id's look-alike, from the event id's
    row), ``x, y``, ``pair`` (the observation's row a place or look mark belongs to, for the
    line joining them) and ``um`` (that distance, in 3-D)."""
    from trackverify.audit.events import own_distance

    ids = now["pred_id"].astype(str).to_numpy(dtype=object)
    role = np.array([roles.get(i, "context") for i in ids], dtype=object)
    rows = np.arange(len(now))
    xy = now[["x_um", "y_um"]].to_numpy(dtype=float)
    none = np.full(xy.shape, np.nan)
    place = (now[["expected_x_um", "expected_y_um"]].to_numpy(dtype=float, na_value=np.nan)
             if "expected_x_um" in now.columns else none)
    neuron = ids.copy()
    if "start_identity" in now.columns:
        started = now["start_identity"].notna().to_numpy()
        neuron[started] = now["start_identity"][started].astype(str).to_numpy(dtype=object)
    own = own_distance(now) if len(now) else np.zeros(0)

    def marks(keep, mark_id, mark_neuron, kind, at, um) -> pd.DataFrame:
        return pd.DataFrame({"id": mark_id[keep], "neuron": mark_neuron[keep],
                             "role": [roles.get(i, "context") for i in mark_id[keep]],
                             "place_role": [roles.get(n, roles.get(i, "context")) for n, i in
                                            zip(mark_neuron[keep], mark_id[keep])],
                             "kind": kind, "x": at[keep, 0], "y": at[keep, 1],
                             "pair": rows[keep], "um": um[keep]})

    parts = [marks(np.ones(len(now), dtype=bool), ids, ids, "obs", xy, np.full(len(now), np.nan)),
             marks((role != "context") & np.isfinite(place).all(axis=1), ids, neuron, "place",
                   place, own)]
    looks = ["lookalike_x_um", "lookalike_y_um"]
    if all(c in now.columns for c in [*looks, "lookalike_id", "lookalike_um"]):
        look = now["lookalike_id"]
        look_id = look.astype(str).where(look.notna(), "").to_numpy(dtype=object)
        at = now[looks].to_numpy(dtype=float, na_value=np.nan)
        keep = (role == "event") & np.isin(look_id, list(roles)) & np.isfinite(at).all(axis=1)
        parts.append(marks(keep, look_id, look_id, "look", at,
                           now["lookalike_um"].to_numpy(dtype=float, na_value=np.nan)))
    return pd.concat(parts, ignore_index=True)


def _anchor_marks(roles: dict, anchor: pd.DataFrame) -> pd.DataFrame:
    """The anchor frame's marks: every anchor identity as an observation (trusted: its own
    place), the named ones in their role's colour."""
    ids = anchor["pred_id"].astype(str).to_numpy()
    xy = anchor[["x_um", "y_um"]].to_numpy(dtype=float)
    role = [roles.get(i, "context") for i in ids]
    return pd.DataFrame({"id": ids, "neuron": ids, "role": role, "place_role": role,
                         "kind": "obs", "x": xy[:, 0], "y": xy[:, 1],
                         "pair": np.arange(len(ids)), "um": np.nan})


def _typical_spacing(anchor: pd.DataFrame) -> float:
    """The median distance from an anchor identity to its nearest other (x-y), or 5 um."""
    xy = anchor[["x_um", "y_um"]].to_numpy(dtype=float)
    if len(xy) < 2:
        return 5.0
    from scipy.spatial import cKDTree

    gap = cKDTree(xy).query(xy, k=2)[0][:, 1]
    gap = gap[np.isfinite(gap) & (gap > 0)]
    return float(np.median(gap)) if len(gap) else 5.0


def _place_panels(panels: list[pd.DataFrame], spacing: float) -> list[tuple]:
    """Per panel ``(centre x, centre y, um per px)``: one scale for both, each panel centred
    on its named marks (all its marks when none is named), wide enough for every named mark
    of both and at least four typical spacings."""
    boxes = []
    for marks in panels:
        named = marks[marks["role"] != "context"]
        chosen = named if len(named) else marks
        xy = chosen[["x", "y"]].to_numpy(dtype=float)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            boxes.append((0.0, 0.0, 0.0, 0.0))
            continue
        low, high = xy.min(axis=0), xy.max(axis=0)
        boxes.append((*(low + high) / 2, *(high - low)))
    need_w = max(max(b[2] for b in boxes), 4 * spacing) + 2 * spacing
    need_h = max(max(b[3] for b in boxes), 4 * spacing) + 2 * spacing
    per_px = max(need_w / PANEL_W, need_h / PANEL_H)
    return [(b[0], b[1], per_px) for b in boxes]


def _panel(view: tuple, marks: pd.DataFrame, title: str, frame, index: int) -> str:
    """One panel as an SVG group: its marks in ``view``'s window, labels, a scale bar."""
    cx, cy, per_px = view
    x0 = MARGIN + index * (PANEL_W + GAP)
    y0 = MARGIN + 18
    x = x0 + PANEL_W / 2 + (marks["x"].to_numpy(dtype=float) - cx) / per_px
    y = y0 + PANEL_H / 2 - (marks["y"].to_numpy(dtype=float) - cy) / per_px  # y up
    inside = (np.isfinite(x) & np.isfinite(y) & (x >= x0) & (x <= x0 + PANEL_W)
              & (y >= y0) & (y <= y0 + PANEL_H))
    named = (marks["role"] != "context").to_numpy()
    keep = inside | named
    x, y = np.clip(x, x0, x0 + PANEL_W), np.clip(y, y0, y0 + PANEL_H)
    out = [f'<g class="panel" data-frame="{"" if frame is None else int(frame)}">',
           f'<rect x="{px(x0)}" y="{px(y0)}" width="{px(PANEL_W)}" height="{px(PANEL_H)}" '
           f'fill="#ffffff" stroke="{RULE}"/>', text(x0, y0 - 6, title, 11, extra='font-weight="600"')]
    kind = marks["kind"].to_numpy()
    role = marks["role"].to_numpy()
    place_role = marks["place_role"].to_numpy()
    ids = marks["id"].to_numpy()
    neuron = marks["neuron"].to_numpy()
    pair = marks["pair"].to_numpy()
    distance = marks["um"].to_numpy(dtype=float)
    is_place = np.isin(kind, ["place", "look"])
    # a look-alike's place drawn once: from its own row when it has one in the frame
    shown = keep & ~((kind == "look") & np.isin(neuron, neuron[keep & (kind == "place")]))
    for k in np.flatnonzero(keep & is_place):  # lines first, under the circles
        for j in np.flatnonzero((pair == pair[k]) & (kind == "obs") & keep):
            colour = ROLES[role[j]][0]
            dash = ' stroke-dasharray="4 3"' if kind[k] == "look" else ""
            out.append(f'<line x1="{px(x[j])}" y1="{px(y[j])}" x2="{px(x[k])}" y2="{px(y[k])}" '
                       f'stroke="{colour}" stroke-width="1.2"{dash}/>')
            if role[j] == "event" and np.isfinite(distance[k]):  # beside the line's middle
                dx, dy = x[k] - x[j], y[k] - y[j]
                norm = max(float(np.hypot(dx, dy)), 1e-9)
                side = 1.0 if kind[k] == "look" else -1.0  # the two lines' labels apart
                ox, oy = -dy / norm * 10 * side, dx / norm * 10 * side
                out.append(text((x[j] + x[k]) / 2 + ox, (y[j] + y[k]) / 2 + oy + 3,
                                f"{fmt(float(distance[k]))} µm", 10,
                                "start" if ox >= 0 else "end", colour))
    context = np.flatnonzero(keep & (role == "context"))
    centre = np.array([x0 + PANEL_W / 2, y0 + PANEL_H / 2])
    near = context[np.argsort(np.hypot(x[context] - centre[0], y[context] - centre[1]),
                              kind="stable")][:MAX_LABELS]
    named_at = np.flatnonzero(keep & (role != "context"))  # their labels go first: a context
    crowded = (np.hypot(x[near, None] - x[None, named_at], y[near, None] - y[None, named_at])
               < 16).any(axis=1) if len(named_at) else np.zeros(len(near), dtype=bool)
    near = near[~crowded]  # label within 16 px of a named mark is left out
    for k in np.flatnonzero(shown):
        mark = f'data-id="{html.escape(str(ids[k]))}"'
        if is_place[k]:
            colour = ROLES[place_role[k]][0]
            out.append(f'<circle class="place" {mark} data-neuron="{html.escape(str(neuron[k]))}" '
                       f'cx="{px(x[k])}" cy="{px(y[k])}" r="6" fill="none" stroke="{colour}" '
                       'stroke-width="1.6"/>')
            owner = np.flatnonzero((pair == pair[k]) & (kind == "obs"))
            left = bool(len(owner)) and x[k] < x[owner[0]]  # the label away from its
            up = bool(len(owner)) and y[k] < y[owner[0]]  # observation, on both axes
            out.append(text(x[k] - 8 if left else x[k] + 8, y[k] - 9 if up else y[k] + 16,
                            f"{neuron[k]}'s place", 11, "end" if left else "start", colour))
            continue
        colour = ROLES[role[k]][0]
        radius = 3 if role[k] == "context" else 4.5
        out.append(f'<circle class="obs" {mark} cx="{px(x[k])}" cy="{px(y[k])}" r="{radius}" '
                   f'fill="{colour}"/>')
        if role[k] != "context" or k in near:
            own = np.flatnonzero((pair == pair[k]) & (kind == "place") & keep)
            down = bool(len(own)) and y[own[0]] < y[k]  # its place above it: the label below
            out.append(text(x[k] + 7, y[k] + 15 if down else y[k] - 5, str(ids[k]),
                            11 if role[k] != "context" else 9,
                            fill=colour if role[k] != "context" else MUTED))
    out.append(_scale_bar(x0, y0, per_px))
    return "".join(out) + "</g>"


def _scale_bar(x0: float, y0: float, per_px: float) -> str:
    """A bar of a round length in the panel's lower right corner."""
    length = scale_bar_length(PANEL_W * per_px)
    width = length / per_px
    right, base = x0 + PANEL_W - 8, y0 + PANEL_H - 8
    return (f'<line x1="{px(right - width)}" x2="{px(right)}" y1="{px(base)}" y2="{px(base)}" '
            f'stroke="{INK}" stroke-width="2"/>'
            + text(right - width / 2, base - 4, f"{fmt(length)} µm", 9, "middle"))


def _legend(roles: dict) -> str:
    """Two lines under the panels: what each mark is, and whose colour is whose."""
    y = MARGIN + 18 + PANEL_H + 18
    x = MARGIN
    marks = (f'<circle cx="{px(x + 5)}" cy="{px(y - 4)}" r="4.5" fill="{INK}"/>'
             + text(x + 14, y, "where the tracker puts the id", 10)
             + f'<circle cx="{px(x + 205)}" cy="{px(y - 4)}" r="6" fill="none" stroke="{INK}"/>'
             + text(x + 216, y, "where the registration puts its neuron (its place)", 10)
             + f'<line x1="{px(x + 482)}" x2="{px(x + 500)}" y1="{px(y - 4)}" y2="{px(y - 4)}" '
               f'stroke="{INK}"/>' + text(x + 504, y, "joins the two", 10)
             + f'<line x1="{px(x + 586)}" x2="{px(x + 604)}" y1="{px(y - 4)}" y2="{px(y - 4)}" '
               f'stroke="{INK}" stroke-dasharray="4 3"/>'
             + text(x + 608, y, "from the event's id to the place it takes", 10))
    entries = [(ROLES[role][0], f"{i}: {ROLES[role][1]}") for i, role in roles.items()]
    entries.append((ROLES["context"][0], "other ids"))
    return ('<g class="legend">' + marks
            + legend_row(entries, x, y + 12, size=10, swatch=(10.0, 10.0), gap=12.0) + "</g>")


def _note(event: pd.Series, roles: dict, now: pd.DataFrame, frame: int) -> str:
    """One sentence on the pictured frame: the event id's distance to the look-alike's place
    and to its own there (what the sentence states as medians over the event)."""
    from trackverify.audit.events import own_distance

    ids = [i for i, r in roles.items() if r == "event"]
    row = now[now["pred_id"].astype(str).isin(ids).to_numpy()]
    if not len(row):
        return f"Pictured: frame {frame}, where {', '.join(ids)} has no observation."
    own = own_distance(row.iloc[:1])[0]
    look = row["lookalike_um"].iloc[0] if "lookalike_um" in row.columns else np.nan
    q = row["lookalike_id"].iloc[0] if "lookalike_id" in row.columns else None
    words = [f"{fmt(float(own))} µm from its own place"] if np.isfinite(own) else []
    if pd.notna(q) and np.isfinite(look):
        words.insert(0, f"{fmt(float(look))} µm from where {q} should be")
    said = " and ".join(words) if words else "not scored"
    return f"Pictured: frame {frame}, where {ids[0]} is {said}."


def _frame_summary(event: pd.Series, observations: pd.DataFrame, now: pd.DataFrame,
                   anchor: pd.DataFrame, anchor_frame) -> str:
    """A frame event's picture: the anchor frame and the frame, every observation a dot
    coloured by verdict (no lines), and the share of scored ids flagged per frame around it."""
    frame = int(event["pictured_frame"])
    before, after = (pd.DataFrame({"id": rows["pred_id"].astype(str).to_numpy(), "role": "context",
                                   "kind": "obs", "x": rows["x_um"].to_numpy(dtype=float),
                                   "y": rows["y_um"].to_numpy(dtype=float)})
                     for rows in (anchor, now))
    views = _place_panels([before, after], _typical_spacing(anchor))
    out = [_dots(views[0], before, [None] * len(before),
                 f"anchor frame {anchor_frame}" if anchor_frame is not None else "", anchor_frame, 0),
           _dots(views[1], after, now["verdict"].to_numpy(dtype=object), f"frame {frame}", frame, 1)]
    y = MARGIN + 18 + PANEL_H + 18
    at = MARGIN
    for verdict, words in (("flagged", "flagged"), ("certified", "certified"),
                           ("abstained", "abstained"), (None, "not judged")):
        out.append(f'<circle cx="{px(at + 5)}" cy="{px(y - 4)}" r="4" '
                   f'fill="{VERDICT_COLOURS[verdict]}"/>' + text(at + 13, y, words, 10))
        at += 24 + 6 * len(words)
    out.append(text(at + 10, y, "each observation of the frame where the tracker puts it", 10,
                    fill=MUTED))
    out.append(_flag_strip(observations, frame, MARGIN, y + 14))
    height = y + 14 + 86
    return figure(2 * PANEL_W + GAP + 2 * MARGIN, height, "".join(out),
                  f"event {event['rank']}: frame {frame}, most ids flagged at once",
                  extra=f'class="event-picture" data-event="{event["rank"]}"')


def _dots(view: tuple, marks: pd.DataFrame, verdict, title: str, frame, index: int) -> str:
    """A panel of dots coloured by verdict, unlabelled."""
    cx, cy, per_px = view
    x0, y0 = MARGIN + index * (PANEL_W + GAP), MARGIN + 18
    x = x0 + PANEL_W / 2 + (marks["x"].to_numpy(dtype=float) - cx) / per_px
    y = y0 + PANEL_H / 2 - (marks["y"].to_numpy(dtype=float) - cy) / per_px
    keep = np.isfinite(x) & np.isfinite(y) & (x >= x0) & (x <= x0 + PANEL_W) \
        & (y >= y0) & (y <= y0 + PANEL_H)
    out = [f'<g class="panel" data-frame="{"" if frame is None else int(frame)}">',
           f'<rect x="{px(x0)}" y="{px(y0)}" width="{px(PANEL_W)}" height="{px(PANEL_H)}" '
           f'fill="#ffffff" stroke="{RULE}"/>', text(x0, y0 - 6, title, 11, extra='font-weight="600"')]
    ids = marks["id"].to_numpy()
    for k in np.flatnonzero(keep):
        colour = VERDICT_COLOURS.get(verdict[k] if isinstance(verdict[k], str) else None,
                                     VERDICT_COLOURS[None])
        out.append(f'<circle class="obs" data-id="{html.escape(str(ids[k]))}" cx="{px(x[k])}" '
                   f'cy="{px(y[k])}" r="3.5" fill="{colour}"/>')
    out.append(_scale_bar(x0, y0, per_px))
    return "".join(out) + "</g>"


def _flag_strip(observations: pd.DataFrame, frame: int, x0: float, y0: float) -> str:
    """Bars: the share of scored (certified or flagged) ids flagged in each frame within
    :data:`SUMMARY_FRAMES` of ``frame``, that frame's bar red, the others grey."""
    near = observations[(observations["frame"] - frame).abs().to_numpy() <= SUMMARY_FRAMES]
    scored = near[near["verdict"].isin(["certified", "flagged"]).to_numpy()]
    share = scored["verdict"].eq("flagged").groupby(scored["frame"]).mean()
    width, height = 2 * PANEL_W + GAP, 56.0
    per = width / (2 * SUMMARY_FRAMES + 1)
    first, last = (int(share.index.min()), int(share.index.max())) if len(share) \
        else (frame, frame)
    out = [text(x0, y0 + 8, f"share of scored ids flagged in each frame, frames {first} to "
                f"{last}; frame {frame} in red", 10, fill=MUTED),
           f'<line x1="{px(x0)}" x2="{px(x0 + width)}" y1="{px(y0 + 14 + height)}" '
           f'y2="{px(y0 + 14 + height)}" stroke="{RULE}"/>']
    for f, value in share.items():
        h = float(value) * height
        colour = VERDICT_COLOURS["flagged"] if f == frame else "#9aa0a6"
        out.append(f'<rect class="share" data-frame="{int(f)}" x="{px(x0 + (f - frame + SUMMARY_FRAMES) * per)}" '
                   f'y="{px(y0 + 14 + height - h)}" width="{px(max(per - 1, 1))}" '
                   f'height="{px(h)}" fill="{colour}"/>')
    return "".join(out)
