"""The review loop from the command line, as a lab runs it: audit, sample, review in the
page's server (decisions over HTTP as the page posts them; the server stopped and started
again), estimate; on a rendered volume with its images and on the shipped real tracker's
positions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli
from tests.review.conftest import ROOT
from trackverify.review.sheet import read_sheet

pytest.importorskip("tifffile")


def _serve(folder: Path, *options: str) -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, "-m", "trackverify", "review", str(folder), *options],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = server.stdout.readline()
    assert line.startswith("review page: http://127.0.0.1:"), server.stderr.read()
    url = line.split()[2]
    return server, url.split("/?token=")[0], url.split("token=")[1]


def _decide(base: str, token: str, index: int, decision: str) -> dict:
    call = urllib.request.Request(f"{base}/api/decision", headers={"X-Token": token},
                                  data=json.dumps({"index": index, "decision": decision,
                                                   "seconds": 1.5}).encode())
    with urllib.request.urlopen(call, timeout=60) as answer:
        return json.loads(answer.read())


def _stop(server: subprocess.Popen) -> str:
    server.send_signal(signal.SIGINT)
    _, err = server.communicate(timeout=60)
    return err


def test_the_loop_on_a_rendered_volume(tmp_path):
    done = run_cli("synth", "--frames", 5, "--neurons", 30, "--volume", "tiff", "--out", tmp_path / "demo")
    assert done.returncode == 0, done.stderr
    demo = tmp_path / "demo"
    pd.read_parquet(demo / "volume_tracks.parquet").drop(columns="track").to_parquet(demo / "tracker.parquet")
    assert run_cli("audit", demo / "tracker.parquet", "--out", demo / "audit").returncode == 0
    done = run_cli("audit", "sample", demo / "audit", "--n", 20, "--images", demo / "volume.tif")
    assert done.returncode == 0, done.stderr
    assert "sit on bright places of the image" in done.stdout
    server, base, token = _serve(demo / "audit", "--images", str(demo / "volume.tif"),
                                 "--reviewer", "ann", "--target", "0.4", "--port", "0")
    try:
        for index in range(8):
            answer = _decide(base, token, index, "correct")
        assert answer["decided"] == 8 and set(answer["interval"]) == {"all"}  # blind: all only
        with urllib.request.urlopen(urllib.request.Request(
                f"{base}/api/image?index=0&panel=anchor&view=plane&low=10&high=995",
                headers={"X-Token": token}), timeout=60) as image:
            assert image.headers["Content-Type"] == "image/png" and image.read().startswith(b"\x89PNG")
    finally:
        err = _stop(server)
    assert "show recording rec000; The positions of frame 0 sit on bright places" in err
    server, base, token = _serve(demo / "audit", "--images", str(demo / "volume.tif"), "--reviewer", "ann")
    try:  # started again: the next rows
        for index in range(8, 20):
            answer = _decide(base, token, index, "correct")
    finally:
        _stop(server)
    assert answer["interval"]["all"]["n_decided"] == 20
    done = run_cli("audit", "estimate", demo / "audit", "--target", "0.4")
    assert done.returncode == 0, done.stderr
    methods = json.loads((demo / "audit" / "estimate.json").read_text())["methods"]
    assert methods.startswith("Identity errors were estimated from a blind human review on the raw "
                              "image volumes (crops around each observation and its anchor place)")
    assert "reviewed in the sample's random order by ann and complete (20 rows)" in methods
    sheet = read_sheet(demo / "audit" / "review.csv")
    assert set(sheet.column("shown")) == {"images"} and set(sheet.column("seconds")) == {"1.5"}


def test_the_loop_on_the_shipped_positions(audit_dir):
    for name in ("review.csv", "estimate.json"):
        (audit_dir / name).unlink(missing_ok=True)
    assert run_cli("audit", "sample", audit_dir, "--n", 200, "--seed", 7).returncode == 0
    server, base, token = _serve(audit_dir, "--reviewer", "ann", "--target", "0.03", "--port", "0")
    try:
        listing = json.loads(urllib.request.urlopen(urllib.request.Request(
            f"{base}/api/items", headers={"X-Token": token}), timeout=60).read())
        assert listing["images"] is None and listing["interval"]["all"]["n_decided"] == 0
        for index in range(12):
            answer = _decide(base, token, index, "unsure" if index == 5 else "correct")
        assert answer["interval"]["all"]["target_met"] is False
    finally:
        _stop(server)
    done = run_cli("audit", "estimate", audit_dir, "--target", "0.03")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("12 of 200 rows decided")
    methods = json.loads((audit_dir / "estimate.json").read_text())["methods"]
    assert "blind human review on positions only (no images)" in methods
    assert "stopped after 12 of 200 rows (target half-width 3.0 points, not reached)" in methods
