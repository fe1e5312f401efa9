"""trackverify review: token check, decision round trip, bad review.csv refused."""

from __future__ import annotations

import json
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


def test_a_decision_rewrites_only_its_cell(served, audit_dir):
    path = audit_dir / "review.csv"
    before = path.read_bytes().splitlines(keepends=True)
    base, token = served.base, served.token
    status, _ = _call(f"{base}/api/decision", {"index": 3, "decision": "wrong"}, {"X-Token": token})
    assert status == 200
    after = path.read_bytes().splitlines(keepends=True)
    assert after[:4] == before[:4] and after[5:] == before[5:]
    assert after[4] == before[4].rstrip(b"\n") + b"wrong\n"  # decision is the last column
    status, body = _call(f"{base}/api/items?token={token}")
    assert json.loads(body)["start"] == 0 and json.loads(body)["items"][3]["decision"] == "wrong"
    for bad in ({"index": 20, "decision": "wrong"}, {"index": -1, "decision": "wrong"},
                {"index": 0, "decision": "maybe"}, {"index": "0", "decision": "wrong"}):
        assert _call(f"{base}/api/decision", bad, {"X-Token": token})[0] == 400
    assert path.read_bytes().splitlines(keepends=True) == after


def test_items_carry_the_anchor_and_observed_frames(audit_dir):
    write_review_csv(audit_dir, 3)
    from trackverify.review.items import load_items

    items = load_items(audit_dir, read_sheet(audit_dir / "review.csv"))
    assert [item["anchor_frame"] for item in items] == [0, 0, 0]
    for item in items:
        assert item["dims"] == ["x", "y", "z"] and item["observed_source"].startswith("detections")
        assert all(abs(p["label"] and int(p["label"]) - item["frame"]) <= 5 for p in item["track"])
    # the registered place of the claimed id in the observed frame, as audit.parquet has it
    import pandas as pd

    audit = pd.read_parquet(audit_dir / "audit.parquet")
    for item in items:
        row = audit[(audit["frame"] == item["frame"])
                    & (audit["pred_id"] == float(item["pred_id"]))].iloc[0]
        assert item["expected"] == {a: row[f"expected_{a}_um"] for a in ("x", "y", "z")}
        assert item["note"] == "where the registration puts the claimed id in this frame"
        # the claimed id's track: its own rows (positions as audit.parquet has them)
        own = audit[audit["pred_id"] == float(item["pred_id"])].set_index("frame")
        assert item["track"] and all(
            (p["x"], p["y"], p["z"]) == tuple(own.loc[int(p["label"]), ["x_um", "y_um", "z_um"]])
            for p in item["track"])


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
