"""The audit's self-contained HTML report: the answer first (:mod:`trackverify.audit.answer`),
then what the verdicts mean, every row accounted for, the threshold in words, the identity
timeline, the score distribution, the events to review with a picture each, the continuity
and the identities worst first. Every figure is SVG written directly (no plotting library)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from trackverify.audit import answer
from trackverify.report.html import cell, page, table
from trackverify.report.numbers import fmt
from trackverify.report.svg import (INK, MUTED, RULE, figure, hex_colour, legend_row, px, text,
                                    ticks)
from trackverify.report.timeline import (AMBER, BLUE, GREEN, GREY, NOT_OBSERVED, RED, Timeline,
                                         build_timeline, timeline_svg)

#: Timeline states, in rising severity (code 0, the background: not observed), and colours.
LEGEND = (NOT_OBSERVED, "anchor frame", "certified", "abstained", "flagged")
COLOURS = (GREY, BLUE, GREEN, AMBER, RED)
#: Events shown with a picture each (the rest are in events.csv).
EVENT_ROWS = 20
#: Rows of the per-id table (worst first; the rest are in tracks.csv).
ID_ROWS = 500


def identity_timeline(recording: str, observations: pd.DataFrame) -> Timeline:
    """One recording's identity timeline: anchor identities x frames from the anchor frame on.

    A row is an anchor identity: the rows of every track judged against it (its own, and
    each later track whose start holds its place, ``start_identity``), a marker where such a
    later track starts. State per observation (:data:`LEGEND`; two tracks in one frame show
    the worse): anchor frame, certified, abstained, flagged; a later track's start (not
    judged) is drawn certified, as the assignment puts it on the identity's place; invalid
    predictions, frames before the anchor and tracks that started on no identity's place
    are not drawn (:func:`fragment_summary` counts them)."""
    rows = observations[observations["pred_valid"].to_numpy(dtype=bool)
                        & ~observations["reason"].eq("before_anchor").to_numpy()]
    own = (rows["start_identity"] if "start_identity" in rows.columns else rows["pred_id"])
    rows = rows[own.notna().to_numpy()]
    own = own[own.notna().to_numpy()]
    verdict = rows["verdict"].to_numpy()
    code = np.select([rows["reason"].eq("anchor_frame").to_numpy(), verdict == "flagged",
                      verdict == "abstained"], [1, 4, 3], 2)
    starts = rows["reason"].eq("track_start").to_numpy()
    code = np.where(starts, 2, code)  # a later track's start: on the identity's place
    anchor = rows.loc[rows["reason"].eq("anchor_frame").to_numpy(), "frame"]
    guides = ((int(anchor.min()), f"anchor frame {int(anchor.min())}", BLUE),) if len(anchor) \
        else ()
    return build_timeline(f"{recording}: identity timeline", "anchor identity",
                          own.to_numpy(dtype=object), rows["frame"].to_numpy(), code,
                          states=LEGEND, colours=COLOURS,
                          marker_rows=own.to_numpy(dtype=object)[starts],
                          marker_frames=rows["frame"].to_numpy()[starts],
                          marker_label="a later track starts on it", guides=guides)


def fragment_summary(observations: pd.DataFrame) -> str:
    """One sentence on the tracks beside the anchor identities' own: how many started later,
    how many of those on an anchor identity's place (drawn on its row), how many on no
    identity's place and their judged observations by verdict (empty without later tracks)."""
    from trackverify.audit.result import audited

    if "start_identity" not in observations.columns:
        return ""
    later = observations["reason"].eq("track_start").to_numpy()
    if not later.any():
        return ""
    on_identity = int((later & observations["start_identity"].notna().to_numpy()).sum())
    unnamed = observations["start_identity"].isna().to_numpy() & audited(observations) \
        & observations["start_frame"].notna().to_numpy()
    verdicts = observations.loc[unnamed, "verdict"].value_counts()
    counts = ", ".join(f"{int(verdicts.get(v, 0))} {v}" for v in ("certified", "flagged",
                                                                  "abstained"))
    return (f"<p>{int(later.sum())} tracks start after the anchor frame: {on_identity} on an "
            f"anchor identity's place (drawn on its row, a marker where each starts; "
            f"<code>joins.csv</code> proposes which continue it) and "
            f"{int(later.sum()) - on_identity} on no identity's place (not drawn; their "
            f"{int(unnamed.sum())} judged observations: {counts}; every track is in "
            f"<code>tracks.csv</code>).</p>")


def _score_plot(observations: pd.DataFrame, threshold: dict) -> str:
    """Scores of certified and flagged judged rows against the threshold they were judged by:
    under the default rule (half of each identity's own spacing) the relative score against
    :data:`DEFAULT_THRESHOLD_SPACINGS`, else the score in um against each recording's value;
    stacked bars, certified under flagged, scores above the 99.5th percentile in the last
    bin, a threshold beyond twice that named instead of drawn."""
    from trackverify.audit.result import DEFAULT_THRESHOLD_SPACINGS

    rows = observations[observations["verdict"].isin(["certified", "flagged"]).to_numpy()]
    per_identity = threshold["source"] == "default"
    column, lines, label = (("relative_score", [DEFAULT_THRESHOLD_SPACINGS],
                             "score / the identity's anchor spacing") if per_identity else
                            ("score", list(threshold["per_recording_um"].values()), "score (µm)"))
    scores = rows[column].to_numpy(dtype=np.float64) if column in rows.columns \
        else np.zeros(0)
    finite = np.isfinite(scores)  # no relative score where an identity has no spacing
    scores, verdicts = scores[finite], rows["verdict"].to_numpy(dtype=object)[finite]
    top = (float(np.quantile(scores, 0.995)) or 1.0) if len(scores) else 1.0
    edges = np.linspace(0, top, 61)
    counts = [np.histogram(np.minimum(scores[verdicts == v], top), bins=edges)[0]
              for v in ("certified", "flagged")]
    tallest = max(int((counts[0] + counts[1]).max()), 1)
    left, top_px, width, height = 64.0, 40.0, 820.0, 170.0
    x_of = lambda v: left + float(v) / top * width  # noqa: E731
    y_of = lambda n: top_px + height - n / tallest * height  # noqa: E731
    body = [text(4, 16, "Scores of judged observations (dashed: threshold; scores above the "
                 "99.5th percentile in the last bin)", 12, extra='font-weight="600"')]
    base = np.zeros(60)
    for count, colour in zip(counts, (GREEN, RED)):
        for k in np.flatnonzero(count):
            y0, y1 = y_of(base[k] + count[k]), y_of(base[k])
            body.append(f'<rect x="{px(x_of(edges[k]))}" y="{px(y0)}" '
                        f'width="{px(x_of(edges[k + 1]) - x_of(edges[k]))}" '
                        f'height="{px(y1 - y0)}" fill="{hex_colour(colour)}"/>')
        base = base + count
    beyond = [value for value in lines if value > 2 * top]  # a line there would squash the axis
    for value in sorted({v for v in lines if v <= 2 * top}):
        x = x_of(min(value, top))
        body.append(f'<line x1="{px(x)}" x2="{px(x)}" y1="{px(top_px)}" '
                    f'y2="{px(top_px + height)}" stroke="{INK}" stroke-dasharray="4 3"/>')
    if beyond:
        body.append(text(left + width, top_px - 4, "threshold " + ", ".join(
            fmt(v) for v in beyond) + " beyond the axis \u2192", 10, "end"))
    body.append(f'<path d="M{px(left)} {px(top_px)}V{px(top_px + height)}H{px(left + width)}" '
                f'fill="none" stroke="{RULE}"/>')
    for value in ticks(0, top, 8):
        body.append(text(x_of(value), top_px + height + 14, fmt(float(value)), 10, "middle"))
    for value in ticks(0, tallest, 4):
        body.append(text(left - 6, y_of(value) + 3, f"{int(value):,}", 10, "end"))
    body.append(text(left + width / 2, top_px + height + 32, label, 10, "middle", MUTED))
    body.append(text(14, top_px + height / 2, "observations", 10, "middle", MUTED,
                     extra=f'transform="rotate(-90 14 {px(top_px + height / 2)})"'))
    body.append(legend_row([(GREEN, "certified"), (RED, "flagged")], left + width - 170, 22,
                           size=10))
    return figure(left + width + 16, top_px + height + 40, "".join(body),
                  "scores of judged observations")


#: Where ``trackverify audit estimate`` puts its sections (:func:`with_error_rate`): the
#: first screen's sentence and, lower down, the review in detail.
RATE_START, RATE_END = "<!-- error rate answer -->", "<!-- /error rate answer -->"
ERROR_RATE_START, ERROR_RATE_END = "<!-- error rate -->", "<!-- /error rate -->"


def _between(report: str, start: str, end: str, content: str) -> str | None:
    first, last = report.find(start), report.find(end)
    if first < 0 or last < first:
        return None
    return report[:first + len(start)] + content + report[last:]


def with_error_rate(report: str, estimate: dict) -> str | None:
    """``report`` (an audit's ``report.html``) with the error rate of ``estimate``
    (``estimate.json``) between its markers, replacing an earlier one: the first screen's
    sentence and the section in detail; None without markers."""
    def interval(block: dict | None) -> str:
        return "" if block is None else f"{cell(block['low'], '.1%')}–{cell(block['high'], '.1%')}"

    rows = [[html.escape(name), cell(block["estimate"], ".1%"), interval(block),
             cell(block.get("upper_one_sided"), ".1%") if "upper_one_sided" in block else "",
             interval(block["fixed_n"]), f"{block['n_decided']} of {block['n_rows']}",
             cell(block["n_unsure"], "d"), cell(block["N"], "d")]
            for name, block in (("all", estimate["all"]), ("certified", estimate["certified"]))
            if block is not None]
    section = (f"<h2 id='error-rate'>Error rate from the human review</h2><p>Share of the "
               f"judged observations whose identity is wrong, estimated from the decisions of "
               f"<code>review.csv</code> (stratified sample of <code>sample.json</code>, seed "
               f"{html.escape(str(estimate['seed']))}); 95 % intervals over the finite "
               f"population of judged observations, {html.escape(estimate['interval'])}; the "
               f"fixed-N interval once every row is decided; <i>unsure</i> counts as correct "
               f"for the low end and as wrong for the high end (<code>estimate.json</code> per "
               f"recording).</p>"
               + table(["observations", "wrong", "95 % interval", "at most (one-sided 95 %)",
                        "fixed-N interval", "decided", "unsure", "population"], rows))
    updated = _between(report, ERROR_RATE_START, ERROR_RATE_END, section)
    answered = _between(updated if updated is not None else report, RATE_START, RATE_END,
                        answer.error_rate_sentence(estimate))
    return answered if answered is not None else updated


#: The identity timelines drawn: the recordings with the most flagged observations first.
MAX_TIMELINES = 12


def _timelines_html(observations: pd.DataFrame) -> str:
    """Up to :data:`MAX_TIMELINES` identity timelines (most flagged observations first, ties
    in input order), and a sentence saying how many recordings are not drawn (10,000 one-row
    recordings drew 10,000 figures)."""
    groups = observations.groupby("recording", sort=False)
    flagged = groups["verdict"].agg(lambda v: int((v == "flagged").sum()))
    names = flagged.sort_values(ascending=False, kind="stable").index[:MAX_TIMELINES]
    note = (f"<p>The {MAX_TIMELINES} recordings with the most flagged observations of "
            f"{len(flagged)} are drawn.</p>") if len(flagged) > MAX_TIMELINES else ""
    return note + "".join(timeline_svg(identity_timeline(str(name), groups.get_group(name)))
                          + fragment_summary(groups.get_group(name)) for name in names)


def _events_html(result) -> str:
    """The top :data:`EVENT_ROWS` events, each with its sentence, its picture and a sentence
    on the pictured frame."""
    from trackverify.audit.pictures import event_picture

    events = result.events
    if not len(events):
        return "<p>No events: nothing flagged beyond scattered single observations.</p>"
    from trackverify.tables import coordinate_columns

    observations = result.observations
    axes = coordinate_columns(observations)
    wanted = ["recording", "frame", "pred_id", "pred_valid", "reason", "verdict", "score",
              "lookalike_id", "lookalike_um", "start_identity", *axes,
              *(f"{prefix}_{c}" for prefix in ("expected", "lookalike") for c in axes)]
    observations = observations[[c for c in wanted if c in observations.columns]]
    by_recording = observations.groupby("recording", sort=False)
    items = []
    for e in events.head(EVENT_ROWS).to_dict("records"):  # at most EVENT_ROWS pictures
        picture, note = event_picture(pd.Series(e), by_recording.get_group(e["recording"]))
        items.append(f"<figure class='event' id='event-{e['rank']}'><figcaption><b>{e['rank']}. "
                     f"{html.escape(e['kind'])}</b> ({html.escape(str(e['recording']))}): "
                     f"{html.escape(e['evidence'])}; {e['observations']} observations. "
                     f"{html.escape(note)}</figcaption>{picture}</figure>")
    kinds = ", ".join(f"{v} {k}" for k, v in result.summary["counts"]["events_by_kind"].items() if v)
    return (f"<p>{len(events)} events ({kinds}). Each is one thing to check once; ranked by "
            "the observations on another identity's place (the wrong observations a look is "
            "expected to settle), then flagged observations. Left: the anchor frame; right: "
            "the frame to open, <code>pictured_frame</code> in <code>events.csv</code>, at the "
            "same scale. The full list is <code>events.csv</code>; every observation's event "
            "is the <code>event</code> column of <code>audit.parquet</code>.</p>" + "".join(items))


def _ids_html(result) -> str:
    """Per predicted id, worst first (share flagged, then flagged events), at most
    :data:`ID_ROWS` rows."""
    tracks = result.tracks
    if not len(tracks):
        return "<p>No audited identities.</p>"
    later = ""
    if "start_identity" in tracks.columns:  # the anchor identities; later tracks counted
        own = tracks["start_identity"].astype(str).to_numpy() == tracks["pred_id"].astype(str).to_numpy()
        if not own.all():
            later = (f"<p>{int((~own).sum())} tracks that start after the anchor frame are "
                     "not listed: each is in <code>tracks.csv</code>, its mistakes in the "
                     "events, and <code>joins.csv</code> says which continue an anchor "
                     "identity.</p>")
        tracks = tracks[own]
    events = result.observations.dropna(subset=["event"]).groupby(
        ["recording", "pred_id"], sort=False)["event"].agg(["nunique", "min"])
    merged = tracks.join(events, on=["recording", "pred_id"])
    order = merged.assign(_flagged=merged["share_flagged"].fillna(-1),
                          _events=merged["nunique"].fillna(0)).sort_values(
        ["_flagged", "_events", "recording", "pred_id"], ascending=[False, False, True, True],
        kind="stable")
    rows = [[html.escape(str(t.recording)), html.escape(str(t.pred_id)), str(t.frames_observed),
             cell(t.share_certified, ".1%"), cell(t.share_flagged, ".1%"),
             cell(t.share_abstained, ".1%"),
             "" if pd.isna(t.first_flagged_frame) else str(t.first_flagged_frame),
             "0" if pd.isna(t.nunique) else str(int(t.nunique)),
             "" if pd.isna(t.min) else str(int(t.min))]
            for t in order.head(ID_ROWS).itertuples()]
    note = (f"<p>The {ID_ROWS} worst of {len(order)} ids are shown; all are in "
            "<code>tracks.csv</code>.</p>") if len(order) > ID_ROWS else ""
    return later + note + table(["recording", "predicted id", "observations", "certified", "flagged",
                         "abstained", "first flagged frame", "events", "best event rank"], rows)


#: Anchor identities listed in the continuity table (most pieces first).
CONTINUITY_ROWS = 20


def _continuity_html(result) -> str:
    """How many pieces each anchor identity's trace is in (its own track and the later tracks
    joined to it), the most split first; nothing when no later track continues one."""
    pieces = result.continuity
    summary = result.summary.get("continuity") or {}
    if not len(pieces) or not summary.get("joins"):
        return ""
    worst = pieces.assign(_r=pieces["recording"].astype(str),
                          _i=pieces["identity"].astype(str)).sort_values(
        ["pieces", "_r", "_i"], ascending=[False, True, True], kind="stable").head(CONTINUITY_ROWS)
    rows = [[html.escape(str(p.recording)), html.escape(str(p.identity)), str(p.pieces),
             html.escape(p.ids if len(p.ids) <= 120 else p.ids[:117] + "...")]
            for p in worst.itertuples()]
    return (f"<h2>Continuity: pieces per anchor identity</h2><p>{summary['joins']} later tracks "
            f"continue an anchor identity (<code>joins.csv</code>, with the evidence of each); "
            f"{summary['in_one_piece']} of {summary['anchor_identities']} anchor identities are "
            f"in one piece, the median in {fmt(summary['median_pieces'])}, the most split in "
            f"{summary['max_pieces']}. A trace in many pieces is a loss even when every piece is "
            "right: stitch the pieces with <code>joins.csv</code>.</p>"
            + table(["recording", "anchor identity", "pieces", "ids"], rows))


def render_audit_report(result) -> str:
    """The whole audit report as one HTML string (deterministic bytes, whatever folder it is
    written to)."""
    summary, counts = result.summary, result.summary["counts"]
    timelines = _timelines_html(result.observations)
    inputs = [str(v) for v in summary.get("inputs", {}).values() if v is not None]
    tracks = (summary.get("inputs") or {}).get("tracks")
    name = f" of {html.escape(str(tracks).replace(chr(92), '/').rsplit('/', 1)[-1])}" \
        if tracks else ""
    return page("trackverify audit", inputs=inputs, body=f"""<h1>trackverify audit{name}</h1>
{answer.first_screen(result, RATE_START, RATE_END)}
{answer.verdict_table(result.observations, counts)}
{answer.rows_table(counts)}
{answer.evaluate_sentence(counts)}
<h2>The threshold</h2>{answer.threshold_words(summary)}
<p>Verifier <b>{html.escape(summary['verifier'])}</b>; anchor frame:
{html.escape(str(summary['anchor_frame']))}, whose identities are trusted as a person checked
them, so the audit cannot see errors already present there; every detection of each frame
used as evidence: {'yes' if summary['detections_table'] else 'no, only the tracker rows'}.
An <i>event</i> is one mistake to check once: an id on another identity's place, a track that
leaves its place for another's for good (switch), two ids swapped or crossing, a frame where
most ids are flagged, a drift, or an id with no single start; <code>segments.csv</code> keeps
every run of one id's non-certified frames as the detail.</p>
{ERROR_RATE_START}{ERROR_RATE_END}
<h2>Identity timeline</h2>{timelines}
<h2>Scores</h2>{_score_plot(result.observations, summary['threshold'])}
<h2 id="events">Events to review (top {min(EVENT_ROWS, len(result.events))} of {len(result.events)})</h2>
{_events_html(result)}
{_continuity_html(result)}
<h2>Identities, worst first</h2>{_ids_html(result)}""")
