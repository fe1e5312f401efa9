"""The audit report: the answer on the first screen, one set of counts in every output, and
event pictures that draw what their sentence says (ids, places, one scale, the frame to
open)."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import trackverify
from tests.audit.test_audit import six_neurons
from tests.audit.test_events import _real_audit
from tests.audit.test_linked_tracks import linked, tracker
from tests.conftest import CHROMIUM, built_once, chromium_first_screen, run_cli
from trackverify.audit.write import write_audit

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def real_audit(tmp_path_factory) -> Path:
    """The audit of the shipped real tracker output, run once for the suite (read only)."""
    return built_once(tmp_path_factory, "real-audit", _real_audit)


@pytest.fixture(scope="module")
def linked_audit(tmp_path_factory) -> Path:
    """The linking tracker of tests/audit/test_linked_tracks.py (a crossing of 200 and 201
    from frame 20, a switch of 100 from 2's place to 3's at frame 25, frame 35 failing
    whole), written."""
    out = tmp_path_factory.mktemp("linked") / "out"
    write_audit(trackverify.audit(tracker(linked)), out)
    return out


# -- one set of counts --------------------------------------------------------------------

def counted_case() -> pd.DataFrame:
    """Six neurons over frames 0-9, ids 0 and 1 swapped on frames 6-7; three rows without
    an id (frames 1, 4, 7); id 9 from frame 5 on, on a place no anchor identity holds."""
    tracks = six_neurons(frames=10, swap=(6, 7)).astype({"pred_id": "Int64"})
    blank = pd.DataFrame({"recording": "worm", "frame": [1, 4, 7], "detection": 6,
                          "pred_id": pd.array([None] * 3, dtype="Int64"),
                          "x_um": -30.0, "y_um": 40.0})
    late = pd.DataFrame({"recording": "worm", "frame": range(5, 10), "detection": 7,
                         "pred_id": pd.array([9] * 5, dtype="Int64"),
                         "x_um": 40.0 + 0.3 * np.arange(5, 10), "y_um": 0.0})
    return pd.concat([tracks, blank, late], ignore_index=True)


#: By hand, with the anchor frame 2 (68 rows): 3 without an id (whatever their frame); 12
#: before the anchor frame (ids 0-5 on frames 0-1); 6 in it; id 9's first row (frame 5); and
#: 46 judged: ids 0-5 on frames 3-9 (42) and id 9 on frames 6-9 (4), of which the swapped
#: rows of ids 0 and 1 on frames 6 and 7 (4) are flagged, every other certified.
EXPECTED = {"rows": 68, "no_prediction": 3, "before_anchor": 12, "anchor_frame": 6,
            "track_starts": 1, "audited": 46, "certified": 42, "flagged": 4, "abstained": 0}


def report_rows(report: str) -> dict:
    """The report's table of every row: label -> count."""
    body = report[report.index("<table class='rows'>"):]
    body = body[:body.index("</table>")]
    cells = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", body)
    return {label: int(count.replace(",", "")) for label, count in cells}


def test_every_row_is_counted_once_and_alike_in_every_output(tmp_path):
    path = tmp_path / "tracks.csv"
    counted_case().to_csv(path, index=False)
    done = run_cli("audit", path, "--anchor-frame", "2", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    counts = json.loads((tmp_path / "out" / "audit.json").read_text())["counts"]
    assert {k: counts[k] for k in EXPECTED} == EXPECTED
    # the terminal
    assert done.stdout.startswith(
        "68 rows: 3 rows without an id, 12 rows before the anchor frame, 6 rows in the anchor "
        "frame (trusted), 1 later tracks' first observations; 46 judged: 42 certified (91.3%), "
        "4 flagged (8.7%), 0 abstained (0.0%);")
    # the report
    report = (tmp_path / "out" / "report.html").read_text()
    assert report_rows(report) == {
        "rows without an id": 3, "rows before the anchor frame": 12,
        "rows in the anchor frame (trusted)": 6, "later tracks' first observations": 1,
        "judged": 46, "judged: certified": 42, "judged: flagged": 4, "judged: abstained": 0,
        "all rows": 68}
    assert "4 of the 46 judged observations (8.7 %) look wrong" in report
    # audit.parquet: a row not judged has no verdict and its reason names its kind
    rows = pd.read_parquet(tmp_path / "out" / "audit.parquet")
    unjudged = rows[rows["verdict"].isna()]
    assert unjudged["reason"].value_counts().to_dict() == {
        "before_anchor": 12, "anchor_frame": 6, "no_prediction": 3, "track_start": 1}
    assert rows["verdict"].value_counts().to_dict() == {"certified": 42, "flagged": 4}
    assert rows.loc[rows["pred_id"].isna(), "reason"].eq("no_prediction").all()
    flagged = rows[rows["verdict"].eq("flagged")]
    assert sorted(zip(flagged["pred_id"], flagged["frame"])) == [(0, 6), (0, 7), (1, 6), (1, 7)]


def test_the_real_tracker_counts_agree_with_the_evidence(real_audit):
    """The shipped output (docs/evidence/audit.md, examples/real-tracker/SOURCE.md): 47,907
    rows, 8,617 without an id, the anchor frame's 70 identities, 39,220 judged of which 5,938
    flagged; the same in audit.json, audit.parquet and the report."""
    counts = json.loads((real_audit / "audit.json").read_text())["counts"]
    expected = {"rows": 47907, "no_prediction": 8617, "before_anchor": 0, "anchor_frame": 70,
                "track_starts": 0, "audited": 39220, "certified": 33282, "flagged": 5938,
                "abstained": 0}
    assert {k: counts[k] for k in expected} == expected
    rows = pd.read_parquet(real_audit / "audit.parquet")
    assert rows.loc[rows["verdict"].isna(), "reason"].value_counts().to_dict() == {
        "no_prediction": 8617, "anchor_frame": 70}
    assert rows["verdict"].value_counts().to_dict() == {"certified": 33282, "flagged": 5938}
    table = report_rows((real_audit / "report.html").read_text())
    assert (table["rows without an id"], table["rows in the anchor frame (trusted)"],
            table["judged"], table["judged: flagged"], table["all rows"]) == (
        8617, 70, 39220, 5938, 47907)


# -- the first screen -----------------------------------------------------------------------

@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian package 'chromium')")
def test_the_first_screen_answers(real_audit, tmp_path):
    """Within 900 px of a 1280 px window: the answer sentence with the counts of the evidence
    page, the command that gives the error rate, and where to start (the first events'
    sentences, the frame to open)."""
    seen = chromium_first_screen(real_audit / "report.html", tmp_path)
    assert ("5,938 of the 39,220 judged observations (15.1 %) look wrong" in seen
            and "Not judged: 8,617 rows without an id; 70 rows in the anchor frame (trusted)."
            in seen), seen
    assert "trackverify audit sample" in seen and "trackverify audit estimate" in seen
    events = pd.read_csv(real_audit / "events.csv")
    assert "Start here" in seen
    for event in events.head(3).itertuples():
        assert " ".join(event.evidence.split()) in seen
        assert f"open frame {event.pictured_frame}" in seen
    # the threshold's details are lower down, in words
    assert "Threshold" not in seen.split("Start here")[0] and "per_recording_um" not in seen


def test_the_report_says_the_threshold_in_words_and_no_calibration_a_lab_cannot_run(real_audit):
    report = (real_audit / "report.html").read_text()
    assert "run --calibrate" not in report and "per_recording_um" not in report
    assert ("The threshold is half the distance from each identity to its nearest other "
            "identity in the anchor frame, a median of 3.602 µm in nerve_moving_a.") in report
    assert "not calibrated</b>: the audit states no error guarantee" in report


def test_the_verdicts_are_described_by_the_measured_numbers(real_audit):
    """The evidence page's per-verdict numbers (docs/evidence/audit.md), in the report."""
    report = (real_audit / "report.html").read_text()
    evidence = (Path(__file__).resolve().parents[2] / "docs" / "evidence" / "audit.md").read_text()
    for wrong, n, share in ((698, 33282, "2.1 %"), (2702, 2998, "90.1 %"), (259, 2940, "8.8 %")):
        assert f"{share} wrong, {wrong:,} of {n:,}" in report
        assert f"{wrong:,} of {n:,}" in evidence
    assert "49.9 % of the flagged observations" in report and "2,961 of 5,938" in evidence
    assert "flagged (the identity looks wrong)" not in report
    # how evaluate counts otherwise: its 25.2 % not correct beside the audit's 9.3 % wrong
    assert "evaluate says 25.2 % not correct where 9.3 % of the judged observations" in report
    assert "25.2 % not correct" in evidence and "3,659 of 39,220" in evidence


# -- the event pictures ---------------------------------------------------------------------

def named_in(sentence: str) -> set[str]:
    """The ids an event's sentence names (the sentence templates of audit/events.py)."""
    patterns = (r"\bid ([^\s,;:()]+)", r"\bids ([^\s,;:()]+) and ([^\s,;:()]+)",
                r"where ([^\s,;:()]+) should be", r"follows ([^\s,;:()']+)'s place",
                r"started on ([^\s,;:()']+)'s place", r"nearest other identity: ([^\s,;:()]+)")
    return {i for p in patterns for m in re.findall(p, sentence)
            for i in (m if isinstance(m, tuple) else (m,))}


def pictures(report: str) -> dict[int, tuple[str, ET.Element]]:
    """Per event rank: its caption's text and its picture's SVG root."""
    out = {}
    for rank, caption, svg in re.findall(
            r"<figure class='event' id='event-(\d+)'><figcaption>(.*?)</figcaption>(<svg.*?</svg>)"
            r"</figure>", report, flags=re.S):
        out[int(rank)] = (html.unescape(re.sub(r"<[^>]+>", "", caption)), ET.fromstring(svg))
    return out


def circles(panel: ET.Element, kind: str) -> list[dict]:
    return [c.attrib for c in panel.iter(f"{SVG}circle") if c.get("class") == kind]


def check_picture(event: dict, svg: ET.Element) -> None:
    """Every id the sentence names is drawn in the pictured frame's panel; each of the
    event's own ids where the tracker puts it and where its neuron should be; its
    look-alike's place; one scale in both panels; a legend."""
    panels = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "panel"]
    assert len(panels) == 2
    frame = panels[1]
    assert frame.get("data-frame") == str(event["pictured_frame"])
    observed = {c["data-id"] for c in circles(frame, "obs")}
    places = circles(frame, "place")
    drawn = observed | {c["data-id"] for c in places} | {c["data-neuron"] for c in places}
    named = named_in(event["evidence"])
    assert named <= drawn, (event["rank"], named - drawn)
    for own in str(event["ids"]).split(";"):
        assert own in observed and own in {c["data-id"] for c in places}, (event["rank"], own)
    if pd.notna(event["lookalike_id"]):
        assert str(event["lookalike_id"]) in {c["data-neuron"] for c in places}
    bars = [(line.get("x1"), line.get("x2")) for g in panels for line in g.iter(f"{SVG}line")
            if line.get("stroke-width") == "2"]
    labels = [t.text for g in panels for t in g.iter(f"{SVG}text") if t.text.endswith("µm")
              and t.get("text-anchor") == "middle"]
    lengths = [float(b) - float(a) for a, b in bars]
    assert len(lengths) == 2 and lengths[0] == pytest.approx(lengths[1], abs=0.11)
    assert len(labels) == 2 and labels[0] == labels[1]  # one scale across the two panels
    assert any(g.get("class") == "legend" for g in svg.iter(f"{SVG}g"))


def test_every_id_a_sentence_names_is_drawn_on_the_linked_tracker(linked_audit):
    events = pd.read_csv(linked_audit / "events.csv", dtype={"ids": str, "lookalike_id": str})
    drawn = pictures((linked_audit / "report.html").read_text())
    by_kind = events.set_index("kind")
    # the sentences name, by hand: the crossing 200 and 201; the switch 100, 2 (its start)
    # and 3 (whose place it follows); the frame event no id
    assert named_in(by_kind.loc["crossing", "evidence"]) == {"200", "201"}
    assert named_in(by_kind.loc["switch", "evidence"]) == {"100", "2", "3"}
    assert named_in(by_kind.loc["frame", "evidence"]) == set()
    for event in events.to_dict("records"):
        caption, svg = drawn[event["rank"]]
        assert " ".join(event["evidence"].split()) in " ".join(caption.split())
        if event["kind"] != "frame":
            check_picture(event, svg)


def test_a_frame_event_is_a_per_frame_summary_not_lines(linked_audit):
    events = pd.read_csv(linked_audit / "events.csv")
    [rank] = events.loc[events["kind"].eq("frame"), "rank"]
    _, svg = pictures((linked_audit / "report.html").read_text())[rank]
    panels = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "panel"]
    assert panels[1].get("data-frame") == "35"
    assert not [line for line in panels[1].iter(f"{SVG}line") if line.get("stroke-width") != "2"]
    assert len(circles(panels[1], "obs")) == 12  # every observation of frame 35, by verdict
    bars = {int(r.get("data-frame")): r.get("fill") for r in svg.iter(f"{SVG}rect")
            if r.get("class") == "share"}
    assert bars[35] == "#cc292b" and set(bars) == set(range(5, 40))  # frames 5-39 within 30
    assert {fill for frame, fill in bars.items() if frame != 35} == {"#9aa0a6"}


def test_events_csv_names_the_pictured_frame(linked_audit):
    """By hand: the crossing's and the switch's rows all sit on the other's place at the same
    distance (the grid moves rigidly), so the earliest frame is pictured (20, 25; neither
    look-alike's id has a row there to prefer); the frame event pictures its frame."""
    events = pd.read_csv(linked_audit / "events.csv").set_index("kind")
    assert list(pd.read_csv(linked_audit / "events.csv").columns[5:8]) == [
        "first_frame", "last_frame", "pictured_frame"]
    assert events.loc[["crossing", "switch", "frame"], "pictured_frame"].tolist() == [20, 25, 35]


def test_the_pictured_frame_prefers_a_frame_that_holds_the_lookalike(tmp_path):
    """Ids 0 and 1 swapped on frames 25-39, each on the other's place at the same distance;
    the tracker gives id 1 to no observation on frames 25-29 (its detection left unnamed):
    the frames where the look-alike's id has a row to draw come first, so frame 30 is
    pictured, not 25."""
    tracks = six_neurons()
    gone = tracks["pred_id"].eq(1) & tracks["frame"].between(25, 29)
    tracks = tracks[~gone.to_numpy()]
    result = trackverify.audit(tracks)
    [event] = result.events.to_dict("records")
    assert event["first_frame"] == 25 and event["pictured_frame"] == 30


def test_the_real_tracker_pictures_draw_every_named_id(real_audit):
    events = pd.read_csv(real_audit / "events.csv", dtype={"ids": str, "lookalike_id": str})
    drawn = pictures((real_audit / "report.html").read_text())
    assert sorted(drawn) == list(range(1, 21))
    for event in events.head(20).to_dict("records"):
        if event["kind"] != "frame":
            check_picture(event, drawn[event["rank"]][1])
        assert event["first_frame"] <= event["pictured_frame"] <= event["last_frame"]
