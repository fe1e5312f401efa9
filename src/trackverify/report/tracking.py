"""The report of ``trackverify evaluate --out``: the tracking_gt numbers, the reference tracks
that are not followed correctly, and a per-track timeline of every recording."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from trackverify.report.html import TIMELINE_WORDS, TRACKING, cell, page, table
from trackverify.report.timeline import Timeline, aligned_states, reference_timeline, \
    reference_timelines_html

WRONG_ROWS = 25


def evaluate_timelines(results) -> list[Timeline]:
    """Each recording's per-track timeline from a :class:`trackverify.metrics.tracking.TrackingResults`:
    an observation is correct when its valid predicted id is aligned to its track (the
    recording-wide alignment of tracking_gt), the identity switches (``events``) marked."""
    if not len(results.observations):
        return []
    events = results.events
    switches = dict(iter(events.groupby("recording", sort=False))) if len(events) else {}
    none = pd.DataFrame({"track": pd.Series(dtype=object), "frame": pd.Series(dtype=np.int64)})
    return [reference_timeline(f"{recording}: per-track timeline", rows["track"],
                               rows["frame"].to_numpy(),
                               aligned_states(rows["predicted"].to_numpy(), rows["correct"].to_numpy()),
                               switches.get(recording, none))
            for recording, rows in results.observations.groupby("recording", sort=False)]


def reference_check_section(checked: dict | None) -> str:
    """With ``evaluate --check-reference``: what the check found, and every tracking_gt number
    on the rows it does not question beside the same on all rows."""
    if not checked:
        return ""
    rows = [[html.escape(str(name))] + [cell(block[k], f) for k, _, f in TRACKING]
            for name, block in checked["results"].items()]
    return f"""<h2>The reference check</h2>
<p><b>{html.escape(checked["note"])}</b> The findings are in <code>results.json</code>
(<code>reference_check.findings</code>); <code>trackverify check-reference</code> draws each
(docs/guide/reference-check.md). The table above is on all rows; this one on the rows the check does
not question. Where they differ, the reference's likely errors change the score.</p>
{table(['recording'] + [label for _, label, _ in TRACKING], rows)}"""


def render_tracking_report(results, settings: dict, inputs: dict[str, str],
                           checked: dict | None = None) -> str:
    """The whole ``evaluate`` report as one HTML string (deterministic bytes)."""
    tracking_rows = [[html.escape(str(name))] + [cell(block[k], f) for k, _, f in TRACKING]
                     for name, block in results.items()]
    tracks, wrong = results.tracks, results.wrong_tracks()
    wrong_rows = [[html.escape(str(r.recording)), html.escape(str(r.track)), str(r.observations),
                   str(r.correct), str(r.identity_switches), str(r.fragmentations),
                   cell(None if pd.isna(r.first_wrong_frame) else int(r.first_wrong_frame), "d")]
                  for r in wrong.head(WRONG_ROWS).itertuples()]
    given = ", ".join(f"{html.escape(k)} <code>{html.escape(str(v))}</code>" for k, v in inputs.items())
    return page("trackverify evaluate", inputs=[str(v) for v in inputs.values()], body=f"""<h1>trackverify evaluate</h1>
<p class="lead">The tracker's identities against the reference tracks: {given}; predictions
linked by {html.escape(str(settings['linked_by']))}.</p>
<h2>tracking_gt</h2>
<p>Diagnostics of the oracle association (one recording-wide maximum-overlap alignment; defined
by this benchmark, not HOTA or IDF1), with the canonical HOTA, MOTA and IDF1 (TrackEval's
definitions) beside them. The graph metrics are in <code>results.json</code>.</p>
{table(['recording'] + [label for _, label, _ in TRACKING], tracking_rows)}
{reference_check_section(checked)}
<h2>Reference tracks not followed correctly ({len(wrong)} of {len(tracks)})</h2>
<p>The {min(WRONG_ROWS, len(wrong))} with the most wrong observations; all of them in
<code>tracks.csv</code>, every identity switch in <code>events.csv</code>.</p>
{table(['recording', 'track', 'observations', 'correct', 'switches', 'fragmentations',
        'first wrong frame'], wrong_rows)}
<h2>Per-track timeline</h2>
{TIMELINE_WORDS.format(extra="")}
<p>An observation is correct when its predicted id is the one aligned to its track by the
recording-wide alignment (the <i>correct observation rate</i>).</p>
{reference_timelines_html(evaluate_timelines(results))}""")
