"""trackverify review: token check, decision round trip, bad review.csv refused."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from tests.conftest import run_cli
from tests.review.conftest import write_review_csv
from trackverify.review.sheet import read_sheet


def _call(url: str, body: dict | None = None, headers: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_requests_without_the_token_get_403_and_nothing_else(served):
    base, token = served.base, served.token
    for url in (f"{base}/", f"{base}/?token=wrong", f"{base}/api/items",
                f"{base}/api/items?token={token[:-1]}"):
        assert _call(url) == (403, b"")
    assert _call(f"{base}/api/decision", {"index": 0, "decision": "correct"},
                 {"X-Token": "wrong"}) == (403, b"")
    status, body = _call(served.url)
    assert status == 200 and body.startswith(b"<!doctype html>")
    assert b"http" not in body.split(b"<script>")[1]  # no external asset fetched by the page


def test_a_decision_rewrites_only_its_cell_and_its_record(served, audit_dir):
    path = audit_dir / "review.csv"
    before = path.read_bytes().splitlines(keepends=True)  # the record columns added at start
    assert before[0].endswith(b",decision,reviewer,mode,shown,seconds,decided_at\n")
    base, token = served.base, served.token
    status, _ = _call(f"{base}/api/decision", {"index": 3, "decision": "wrong", "seconds": 12.34},
                      {"X-Token": token})
    assert status == 200
    after = path.read_bytes().splitlines(keepends=True)
    assert after[:4] == before[:4] and after[5:] == before[5:]
    head, record = before[4][: -len(b",,,,,,\n")], after[4][len(before[4]) - len(b",,,,,,\n"):]
    assert after[4].startswith(head)
    assert re.fullmatch(rb",wrong,reviewer,blind,positions,12\.3,20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\n", record)
    status, body = _call(f"{base}/api/items?token={token}")
    assert json.loads(body)["start"] == 0 and json.loads(body)["items"][3]["decision"] == "wrong"
    for bad in ({"index": 20, "decision": "wrong"}, {"index": -1, "decision": "wrong"},
                {"index": 0, "decision": "maybe"}, {"index": "0", "decision": "wrong"},
                {"index": 0, "decision": "wrong", "seconds": -1}, {"index": 0, "decision": "wrong", "seconds": "1"},
                {"index": 0, "decision": "wrong", "seconds": True}, {"index": 0, "decision": "wrong", "seconds": 1e9},
                {"index": 0, "decision": "wrong", "reviewer": "eve"}):
        assert _call(f"{base}/api/decision", bad, {"X-Token": token})[0] == 400, bad
    assert path.read_bytes().splitlines(keepends=True) == after
    # clearing a decision clears its record: the line is as before
    assert _call(f"{base}/api/decision", {"index": 3, "decision": ""}, {"X-Token": token})[0] == 200
    assert path.read_bytes().splitlines(keepends=True) == before


def test_items_carry_the_anchor_the_track_and_nothing_of_the_audit_when_blind(audit_dir):
    import pandas as pd

    from trackverify.review.items import TRACK_FRAMES, ReviewItems

    write_review_csv(audit_dir, 3)
    sheet = read_sheet(audit_dir / "review.csv")
    audit = pd.read_parquet(audit_dir / "audit.parquet")
    blind, triage = ReviewItems(audit_dir, sheet), ReviewItems(audit_dir, sheet, triage=True)
    for index in range(3):
        item = blind.detail(index)
        assert item["anchor"]["frame"] == 0 and item["dims"] == ["x", "y", "z"]
        assert item["points_source"].startswith("the detections")
        assert "verifier" not in item
        # an anchor identity's track starts at its anchor-frame row
        assert item["start"]["frame"] == 0 and item["start"]["place"] == item["anchor"]["place"]
        assert "identity" not in item["start"] and triage.detail(index)["start"]["identity"] == item["pred_id"]
        own = audit[audit["pred_id"] == float(item["pred_id"])].set_index("frame")
        # the track: the id's own rows within 5 frames, in frame order, the observation at "at"
        frames = [s["frame"] for s in item["steps"]]
        assert frames == sorted(f for f in own.index if abs(f - item["frame"]) <= TRACK_FRAMES)
        assert frames[item["at"]] == item["frame"]
        for step in item["steps"]:
            assert tuple(step["place"].values()) == pytest.approx(tuple(own.loc[step["frame"], ["x_um", "y_um", "z_um"]]), abs=1e-4)
        assert tuple(item["anchor"]["place"].values()) == pytest.approx(tuple(own.loc[0, ["x_um", "y_um", "z_um"]]), abs=1e-4)
        # the audit's judgement only in triage: the row's verdict and registered place
        row = own.loc[item["frame"]]
        judged = triage.detail(index)["verifier"]
        assert judged["verdict"] == row["verdict"] and judged["score"] == pytest.approx(row["score"])
        assert judged["expected"] == pytest.approx({a: row[f"expected_{a}_um"] for a in "xyz"}, abs=1e-4)
        assert judged["stratum"] == sheet.rows[index]["stratum"]


@pytest.mark.parametrize("text, line", [
    ("recording,frame,pred_id,x_um,y_um\na,0,1,0,0\n", "column 'decision': missing column(s) decision"),
    ("recording,frame,pred_id,x_um,y_um,decision\na,0,1,0,0,\na,0,1,0,0,ok\n",
     "column 'decision', row 2: decision 'ok' is not one of correct, wrong, unsure (or empty)"),
])
def test_bad_review_csv_is_refused_in_one_line(tmp_path, text, line):
    (tmp_path / "review.csv").write_text(text)
    done = run_cli("review", tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"trackverify: error: {tmp_path / 'review.csv'}, {line}"]


def test_the_interval_is_shown_only_for_the_sheet_sample_json_drew(audit_dir):
    from tests.review.conftest import Served
    from trackverify.review.app import Settings
    from trackverify.review.design import draw_sample

    (audit_dir / "review.csv").unlink(missing_ok=True)
    draw_sample(audit_dir, 30, seed=11)
    served = Served(audit_dir, 0, Settings(target=0.4))
    try:
        listing = json.loads(_call(f"{served.base}/api/items?token={served.token}")[1])
        assert listing["interval"]["all"]["n_rows"] == 30 and listing["interval_note"] is None
        assert listing["interval"]["all"]["target_met"] is False and served.reported == []
    finally:
        served.close()
    write_review_csv(audit_dir, 30)  # other rows than sample.json drew
    served = Served(audit_dir, 0)
    try:
        listing = json.loads(_call(f"{served.base}/api/items?token={served.token}")[1])
        assert listing["interval"] is None and listing["interval_note"].startswith("no interval")
        assert served.reported == [
            f"trackverify review: no interval on the page: {audit_dir / 'review.csv'}, column "
            "'frame', row 1: is not the observation sample.json drew at this row: keep review.csv's "
            "rows in the order written (the order is the design)"]
    finally:
        served.close()
    (audit_dir / "sample.json").unlink()
