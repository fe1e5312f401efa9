"""The per-track timeline of the run and evaluate reports, and the shared timeline helper.

The hand-built case: three reference tracks (0, 1, 2) over frames 0-9, linked by detection.
Track 0 carries id 10 throughout; track 1 carries id 11 on frames 0-5, then a new id 13 on
6-9 (one identity switch, at frame 6; 11 keeps track 1 in the alignment, 6 frames against
4, so frames 6-9 are wrong); track 2 carries id 12, is not observed at frame 3 and its
prediction is invalid at frame 8 (no switch: a gap and an invalid row change no id).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import trackverify
from tests.conftest import CHROMIUM, chromium_dom, run_cli, verify_control
from trackverify.report.timeline import (REFERENCE_STATES, binned, control_states, run_segments,
                                         timeline_svg)

SEGMENTS = [(0, 0, 9, "correct"),
            (1, 0, 5, "correct"), (1, 6, 9, "wrong identity"),
            (2, 0, 2, "correct"), (2, 4, 7, "correct"), (2, 8, 8, "no valid prediction"),
            (2, 9, 9, "correct")]
SWITCH = (1, 6)


def hand_case() -> pd.DataFrame:
    """One row per reference observation with the prediction on its detection."""
    rows = []
    for frame in range(10):
        for track in range(3):
            if track == 2 and frame == 3:
                continue
            pred = {0: 10, 1: 11 if frame < 6 else 13, 2: 12}[track]
            rows.append(("r", frame, track, 10 * frame + track, 8.0 * track, 0.0, pred,
                         not (track == 2 and frame == 8)))
    return pd.DataFrame(rows, columns=["recording", "frame", "track", "detection", "x_um",
                                       "y_um", "pred_id", "pred_valid"])


def as_tuples(timeline) -> list[tuple]:
    return [tuple(r) for r in timeline.segment_table().itertuples(index=False)]


def test_run_segments_are_maximal_runs_of_one_state_on_consecutive_frames():
    # row 0: states 1 1 2 2 at frames 0-3, then 1 at 5 (gap at 4); row 1: 1 at 0, repeated
    # cell at frame 1 (states 1 and 3: the severe one stays), 1 at 2; given out of order.
    row = [0, 1, 0, 0, 1, 0, 1, 0, 1]
    frame = [3, 1, 0, 1, 2, 5, 0, 2, 1]
    state = [2, 1, 1, 1, 1, 1, 1, 2, 3]
    got = run_segments(np.array(row), np.array(frame), np.array(state))
    assert [tuple(r) for r in got.itertuples(index=False)] == [
        (0, 0, 1, 1), (0, 2, 3, 2), (0, 5, 5, 1), (1, 0, 0, 1), (1, 1, 1, 3), (1, 2, 2, 1)]


def test_evaluate_timeline_segments_and_switch_of_the_hand_case():
    from trackverify.report.tracking import evaluate_timelines

    table = hand_case()
    results = trackverify.evaluate_tracking(table.drop(columns=["pred_id", "pred_valid"]),
                                            table.drop(columns=["track"]))
    assert results.events[["track", "frame", "from_id", "to_id"]].values.tolist() == [[1, 6, 11, 13]]
    [timeline] = evaluate_timelines(results)
    assert as_tuples(timeline) == SEGMENTS
    assert [tuple(r) for r in timeline.marker_table().itertuples(index=False)] == [SWITCH]
    assert timeline.frames == (0, 9)


def test_run_control_timeline_segments_and_switch_of_the_hand_case():
    from trackverify.benchmark.protocols.tracking_gt import tracking_gt
    from trackverify.benchmark.run import control_timeline

    control = hand_case()
    # Labels against the anchor identities (frame 0: 0 -> 10, 1 -> 11, 2 -> 12), by hand.
    wrong = (control["track"] == 1) & (control["frame"] >= 6)
    control["error"] = pd.array(np.where(wrong, 1, 0), dtype="Int8")
    control.loc[~control["pred_valid"], "error"] = pd.NA
    events = tracking_gt(control, 5.0).identity.events
    timeline = control_timeline("r", control, events)
    assert as_tuples(timeline) == SEGMENTS
    assert [tuple(r) for r in timeline.marker_table().itertuples(index=False)] == [SWITCH]
    # A recording that starts at input frame 100: the same picture, frames shifted.
    shifted = control_timeline("r", control, events, first_frame=100)
    assert as_tuples(shifted) == [(t, a + 100, b + 100, s) for t, a, b, s in SEGMENTS]
    assert shifted.marker_table()["frame"].tolist() == [106] and shifted.frames == (100, 109)


def test_control_states_by_label():
    # error 1 / 0 / null; the null row with a valid id has no anchor identity.
    got = control_states(np.array([True, True, False, True]), np.array([1, 0, np.nan, np.nan]))
    assert [REFERENCE_STATES[c] for c in got] == ["wrong identity", "correct",
                                                  "no valid prediction", "no anchor identity"]


def test_binned_columns_keep_the_worst_state():
    from trackverify.report.tracking import evaluate_timelines

    table = hand_case()
    [timeline] = evaluate_timelines(trackverify.evaluate_tracking(
        table.drop(columns=["pred_id", "pred_valid"]), table.drop(columns=["track"])))
    starts, codes = binned(timeline, max_columns=5)  # two frames a column
    assert starts.tolist() == [0, 2, 4, 6, 8]
    # track 2: frames 2-3 = correct + not observed -> correct; 8-9 = invalid + correct -> invalid
    assert codes.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 4, 4], [1, 1, 1, 1, 3]]


def _ticks(svg: str, axis: str) -> dict[str, float]:
    """Tick label -> its position (x for the frame axis, y for the row labels) in the SVG."""
    kind, coordinate = ("frame", "x") if axis == "x" else ("row", "y")
    out = {}
    for element, label in re.findall(r'(<text [^>]*class="%s"[^>]*>)([^<]*)</text>' % kind, svg):
        out[label.strip()] = float(re.search(rf'\b{coordinate}="([-0-9.]+)"', element).group(1))
    return out


def test_the_switch_marker_is_drawn_at_its_frame_and_track():
    from trackverify.report.tracking import evaluate_timelines

    table = hand_case()
    [timeline] = evaluate_timelines(trackverify.evaluate_tracking(
        table.drop(columns=["pred_id", "pred_valid"]), table.drop(columns=["track"])))
    svg = timeline_svg(timeline)
    group = svg[svg.index('<g id="timeline-markers">'):]
    group = group[:group.index("</g>")]
    [(x, y, length)] = [tuple(map(float, m)) for m in
                        re.findall(r"M([-0-9.]+) ([-0-9.]+)v([-0-9.]+)", group)]
    xs, ys = _ticks(svg, "x"), _ticks(svg, "y")
    frame_of = lambda px: 0 + (px - xs["0"]) * (8 - 0) / (xs["8"] - xs["0"])  # noqa: E731
    assert frame_of(x) == pytest.approx(6, abs=1e-1)  # coordinates written to 0.1 px
    assert y <= ys["1"] <= y + length  # the stroke crosses track 1's row, at its label
    assert not y <= ys["0"] <= y + length and not y <= ys["2"] <= y + length
    assert svg.count("<image") == 1  # the cells are one image, not one element per cell


def test_evaluate_out_writes_a_report_with_the_timeline(tmp_path):
    table = hand_case()
    ref, pred = tmp_path / "ref.csv", tmp_path / "pred.csv"
    table.drop(columns=["pred_id", "pred_valid"]).to_csv(ref, index=False)
    table.drop(columns=["track"]).to_csv(pred, index=False)
    done = run_cli("evaluate", "--reference", ref, "--predictions", pred, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "events.csv", "report.html", "results.json", "tracks.csv"]
    report = (tmp_path / "out" / "report.html").read_text()
    assert "r: per-track timeline" in report and report.count('<g id="timeline-markers">') == 1
    assert "Reference tracks not followed correctly (2 of 3)" in report
    again = tmp_path / "again"
    assert run_cli("evaluate", "--reference", ref, "--predictions", pred, "--out",
                   again).returncode == 0
    assert (again / "report.html").read_text() == report  # deterministic bytes
    if CHROMIUM is not None:
        dom = chromium_dom(tmp_path / "out" / "report.html", tmp_path / "profile")
        assert "r: per-track timeline" in dom and "identity switch (1)" in dom


def test_run_writes_tracks_events_and_the_per_track_timeline(tmp_path):
    table = hand_case().assign(frame=lambda t: t["frame"] + 100)  # input frames 100-109
    done, _ = verify_control(table, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tracks.csv, events.csv" in done.stdout
    tracks = pd.read_csv(tmp_path / "out" / "tracks.csv")
    # By hand: track 1 wrong from its id change (106), track 2 from its invalid row (108).
    assert tracks[["recording", "track", "observations", "correct", "identity_switches",
                   "first_wrong_frame"]].astype(object).where(tracks.notna(), None).values.tolist() == [
        ["r", 0, 10, 10, 0, None], ["r", 1, 10, 6, 1, 106], ["r", 2, 9, 8, 0, 108]]
    events = pd.read_csv(tmp_path / "out" / "events.csv")
    assert events.values.tolist() == [["r", 106, 1, 11, 13]]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["identity"]["events"] == [
        {"recording": "r", "frame": 106, "track": 1, "from_id": 11, "to_id": 13}]
    report = (tmp_path / "out" / "report.html").read_text()
    assert "r: per-track timeline (control condition)" in report
    assert report.count('<g id="timeline-markers">') == 1 and "identity switch (1)" in report
    if CHROMIUM is not None:
        dom = chromium_dom(tmp_path / "out" / "report.html", tmp_path / "profile")
        assert "Per-track timeline" in dom and "r: per-track timeline (control condition)" in dom


def test_report_helpers_are_public_names_of_one_module():
    import trackverify.audit.report as audit_report
    import trackverify.benchmark.report as run_report
    from trackverify.report import plots

    assert plots.figure_svg is run_report.figure_svg
    assert plots.pyplot is run_report.pyplot
    assert audit_report.cell is run_report.cell
    assert not hasattr(audit_report, "pyplot")  # the audit's figures are SVG written directly
    for private in ("_fmt", "_svg", "_pyplot"):
        assert not hasattr(run_report, private)


def test_score_recording_has_one_return_shape():
    from trackverify.metrics.tracking import RecordingScore, score_recording

    table = hand_case()
    score = score_recording(table.drop(columns=["pred_id", "pred_valid"]),
                            table.drop(columns=["track"]), 5.0, True)
    assert isinstance(score, RecordingScore)
    assert score.metrics["identity_switches"] == 1 and score.metrics["correct_observations"] == 24
    assert score.identity.tracks["correct"].tolist() == [10, 6, 8]
    assert len(score.identity.observations) == 29


def test_the_report_draws_at_most_twelve_timelines_most_wrong_first():
    from trackverify.report.timeline import reference_timeline, reference_timelines_html

    none = pd.DataFrame({"track": [], "frame": []})
    # Recording k has k wrong frames (state 4) out of 20 on its one track.
    timelines = [reference_timeline(f"rec{k:02d}", np.zeros(20, dtype=int), np.arange(20),
                                    np.where(np.arange(20) < k, 4, 1), none) for k in range(14)]
    html = reference_timelines_html(timelines)
    assert "The 12 recordings with the most wrong identities of 14 are shown." in html
    shown = re.findall(r">(rec\d\d)<", html)
    assert shown == [f"rec{k:02d}" for k in range(13, 1, -1)]


def test_two_hundred_ids_are_each_labelled_in_numeric_order_and_do_not_overlap():
    from trackverify.audit.report import identity_timeline

    ids = np.arange(1, 201) * 5  # 5, 10, ..., 1000: text order would put 1000 before 105
    obs = pd.DataFrame({"pred_id": np.repeat(ids, 3), "frame": np.tile([0, 1, 2], 200),
                        "pred_valid": True, "verdict": "certified",
                        "reason": np.tile(["anchor_frame", None, None], 200)})
    svg = timeline_svg(identity_timeline("r", obs))
    ticks = _ticks(svg, "y")
    assert len(ticks) == 200
    by_height = sorted(ticks, key=ticks.get)  # top to bottom
    assert by_height == [str(i) for i in ids]
    gaps = np.diff(sorted(ticks.values()))
    assert gaps.min() >= 8.0  # px between labels: an 8 px label fits


def test_the_anchor_frame_is_a_line_in_its_legend_colour_at_two_hundred_ids():
    """The anchor frame is one column of hundreds: the identity timeline draws it as a guide
    line across every row, in the colour its legend gives "anchor frame", labelled."""
    from trackverify.audit.report import identity_timeline

    ids = np.arange(200)
    obs = pd.DataFrame({"pred_id": np.repeat(ids, 700), "frame": np.tile(np.arange(700), 200),
                        "pred_valid": True, "verdict": "certified",
                        "reason": np.where(np.tile(np.arange(700), 200) == 0, "anchor_frame",
                                           None)})
    svg = timeline_svg(identity_timeline("r", obs))
    [guide] = re.findall(r'<line class="guide" ([^>]*)/>', svg)
    colour = re.search(r'stroke="(#[0-9a-f]{6})"', guide).group(1)
    swatch = re.search(r'<rect [^>]*fill="(#[0-9a-f]{6})"[^>]*/></g><text [^>]*>anchor frame</text>',
                       svg).group(1)
    assert colour == swatch == "#738cbf"  # BLUE, (0.45, 0.55, 0.75)
    assert float(re.search(r'stroke-width="([0-9.]+)"', guide).group(1)) >= 3  # visible
    assert ">anchor frame 0</text>" in svg
    rows = _ticks(svg, "y")
    y1, y2 = (float(re.search(rf'{k}="([-0-9.]+)"', guide).group(1)) for k in ("y1", "y2"))
    assert y1 <= min(rows.values()) and max(rows.values()) <= y2  # across every row
