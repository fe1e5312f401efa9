"""Every output names the trackverify version that made it and what it read: the JSON outputs
(audit.json's input record, sample.json, estimate.json, check.json, evaluate's results.json),
each HTML report's footer and each Parquet file's metadata."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq

import trackverify
from tests.conftest import run_cli

VERSION = trackverify.__version__
FOOTER = f"Made by trackverify {VERSION} from"


def grid_tracks(frames: int = 8) -> pd.DataFrame:
    grid = [(x, y) for x in range(0, 40, 8) for y in range(0, 40, 8)]
    rows = [(t, i, x + 0.2 * t, float(y)) for t in range(frames) for i, (x, y) in enumerate(grid)]
    return pd.DataFrame(rows, columns=["frame", "pred_id", "x_um", "y_um"])


def test_the_audit_and_its_review_name_the_version_and_the_input(tmp_path):
    tracks = tmp_path / "tracks.csv"
    grid_tracks().to_csv(tracks, index=False)
    out = tmp_path / "audit"
    trackverify.audit(tracks, out=out)
    assert json.loads((out / "audit.json").read_text())["input"]["trackverify"] == VERSION
    assert f"{FOOTER} <code>{tracks}</code>" in (out / "report.html").read_text()
    metadata = pq.read_schema(out / "audit.parquet").metadata
    assert metadata[b"trackverify"] == VERSION.encode()
    trackverify.sample_review(out, 10)
    sample = json.loads((out / "sample.json").read_text())
    assert sample["trackverify"] == VERSION and sample["audit"] == str(out)
    review = pd.read_csv(out / "review.csv").assign(decision="correct")
    review.to_csv(out / "review.csv", index=False)
    trackverify.estimate_error_rate(out)
    estimate = json.loads((out / "estimate.json").read_text())
    assert estimate["trackverify"] == VERSION and estimate["audit"] == str(out)


def test_evaluate_and_check_reference_name_the_version_and_their_inputs(tmp_path):
    reference = grid_tracks().rename(columns={"pred_id": "track"})
    ref_path, pred_path = tmp_path / "ref.csv", tmp_path / "pred.csv"
    reference.to_csv(ref_path, index=False)
    grid_tracks().to_csv(pred_path, index=False)
    done = run_cli("evaluate", "--reference", str(ref_path), "--predictions", str(pred_path),
                   "--out", str(tmp_path / "eval"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert results["inputs"]["reference"]["path"] == str(ref_path)
    assert results["inputs"]["predictions"]["trackverify"] == VERSION
    report = (tmp_path / "eval" / "report.html").read_text()
    assert f"{FOOTER} <code>{ref_path}</code> <code>{pred_path}</code>" in report
    done = run_cli("check-reference", str(ref_path), "--out", str(tmp_path / "check"))
    assert done.returncode == 0, done.stderr
    check = json.loads((tmp_path / "check" / "check.json").read_text())
    assert check["trackverify"] == VERSION and check["inputs"]["tracks"]["path"] == str(ref_path)
    assert f"{FOOTER} <code>{ref_path}</code>" in (tmp_path / "check" / "report.html").read_text()
