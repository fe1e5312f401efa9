"""The main job: every protocol over every recording, then the outputs.

``run_job`` streams recordings one at a time through the protocols, pools what is
pooled, and writes ``results.json``, ``manifest.json``, ``observations.parquet`` and
``report.html`` to the output folder (each file atomically).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.config import RunConfig
from trackverify.dataset import Dataset, load_dataset, specimen_dataset
from trackverify.io.atomic import write_json_atomic, write_text_atomic
from trackverify.io.tabular import write_table
from trackverify.manifest import build_manifest, input_hashes
from trackverify.progress import progress_bar
from trackverify.report.html import render_report


def recording_summary(observations: pd.DataFrame) -> dict:
    """Counts that describe one recording's observation table."""
    return {
        "observations": int(len(observations)),
        "frames": int(observations["frame"].max()) + 1,
        "tracks": int(observations["track"].nunique()),
        "dimensions": 3 if "z_um" in observations.columns else 2,
        "valid_predictions": int(observations["pred_valid"].sum()),
    }


def run_job(config: RunConfig, out: str | Path, data: str | Path | None = None) -> str:
    """Run everything and write the four outputs; return a one-paragraph summary."""
    out = Path(out)
    dataset = load_dataset(data) if data is not None else specimen_dataset(config.specimen)
    results: dict = {"recordings": {}}
    tables = []
    with progress_bar() as bar:
        task = bar.add_task("recordings", total=len(dataset.recordings))
        for name, observations in dataset:
            results["recordings"][name] = recording_summary(observations)
            tables.append(observations)
            bar.advance(task)
    results["trackverify"] = {"version": __import__("trackverify").__version__}
    write_table(pd.concat(tables, ignore_index=True), out / "observations.parquet")
    manifest = build_manifest(config.to_dict(), dataset.source, input_hashes(data), {})
    write_json_atomic(out / "manifest.json", manifest)
    write_text_atomic(out / "report.html", render_report(results, manifest))
    write_json_atomic(out / "results.json", results)
    return f"wrote results for {len(results['recordings'])} recording(s) to {out}"
