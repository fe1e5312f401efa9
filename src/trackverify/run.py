"""The main job: the three protocols over every recording, then the outputs.

``run_job`` streams recordings one at a time: for each, ``tracking_gt`` on the clean
predictions, ``anatomical_verification`` (corrupt, verify, score every condition) and
``anatomical_consistency`` on the control rows; the scored rows are appended to
``observations.parquet`` as they are made. Then it pools over recordings and writes
``results.json``, ``manifest.json`` and ``report.html``. Every file is written to a
temporary name and renamed into place; ``results.json`` is written last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify import __version__
from trackverify.associate import pool_diagnostics
from trackverify.config import RunConfig
from trackverify.dataset import load_dataset, specimen_dataset
from trackverify.io.atomic import write_json_atomic, write_text_atomic
from trackverify.io.tabular import ParquetStream
from trackverify.manifest import build_manifest, input_hashes
from trackverify.progress import progress_bar
from trackverify.protocols import tracking_gt as tracking_gt_protocol
from trackverify.protocols.anatomical_consistency import consistency
from trackverify.protocols.anatomical_verification import (
    ALL, condition_metrics, error_array, metrics_block, score_conditions)
from trackverify.report.curves import detection_curves
from trackverify.report.html import render_report
from trackverify.verifiers import load_verifier

PARTITIONS = ("train", "calibration", "validation", "test", "development")
MAX_FCR = 0.01
CAVEATS = (
    "The verifier threshold is a demonstration value, not a calibrated false-acceptance guarantee.",
    "fixed_distance measures displacement from the anchor frame: it penalises real tissue motion, "
    "so it is a consistency diagnostic, not an independent certificate of deformation.",
    "No confidence intervals or pooled generalisation claims are made from one specimen; with "
    "several animals, intervals are by animal, never by frame.",
    "tracking_gt diagnostics are defined by this benchmark; they are not HOTA or IDF1.",
)


def recording_summary(observations: pd.DataFrame) -> dict:
    """Counts that describe one recording's observation table."""
    return {
        "observations": int(len(observations)),
        "frames": int(observations["frame"].max()) + 1,
        "tracks": int(observations["track"].nunique()),
        "dimensions": 3 if "z_um" in observations.columns else 2,
        "valid_predictions": int(observations["pred_valid"].sum()),
    }


@dataclass
class _Pool:
    """Per-condition error and score arrays of every recording, for the pooled metrics."""

    error: dict[str, list[np.ndarray]] = field(default_factory=dict)
    score: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def add(self, scored: pd.DataFrame) -> None:
        error, score = error_array(scored), scored["score"].to_numpy()
        codes = scored["condition"].cat.codes.to_numpy()
        for code, condition in enumerate(scored["condition"].cat.categories):
            rows = codes == code
            self.error.setdefault(condition, []).append(error[rows])
            self.score.setdefault(condition, []).append(score[rows])

    def arrays(self, condition: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        keys = [condition] if condition else list(self.error)
        return (np.concatenate([a for k in keys for a in self.error[k]]),
                np.concatenate([a for k in keys for a in self.score[k]]))


def run_job(config: RunConfig, out: str | Path, data: str | Path | None = None) -> str:
    """Run everything and write the four outputs; return a short summary for the terminal."""
    out = Path(out)
    dataset = load_dataset(data) if data is not None else specimen_dataset(config.specimen)
    verifier = load_verifier(config.verifier)
    summaries, tracking, verification, consistency_blocks, choices = {}, {}, {}, {}, {}
    pool = _Pool()
    with progress_bar() as bar, ParquetStream(out / "observations.parquet") as rows_out:
        task = bar.add_task("recordings", total=len(dataset.recordings))
        for name, observations in dataset:
            summaries[name] = recording_summary(observations)
            tracking[name] = tracking_gt_protocol.tracking_gt(observations)
            scored, choices[name] = score_conditions(observations, config, verifier, name)
            verification[name] = condition_metrics(scored, config, MAX_FCR)
            control = scored[scored["is_control"].to_numpy()]
            consistency_blocks[name] = consistency(control, config.threshold_um,
                                                   config.falsification_share)
            pool.add(scored)
            rows_out.write(scored)
            bar.advance(task)
    tracking["pooled"] = tracking_gt_protocol.pool({k: v for k, v in tracking.items()})
    verification["pooled"] = _pooled_verification(pool, config, verification)
    results = {
        "trackverify_version": __version__,
        "settings": config.to_dict(),
        "recordings": summaries,
        "partitions": {p: (list(dataset.recordings["recording"]) if p == "development" else [])
                       for p in PARTITIONS},
        "verifier": {"name": verifier.name, "evidence": verifier.evidence,
                     "threshold_um": config.threshold_um},
        "tracking_gt": tracking,
        "anatomical_verification": verification,
        "anatomical_consistency": consistency_blocks,
        "caveats": list(CAVEATS),
    }
    manifest = build_manifest(config.to_dict(), dataset.source, input_hashes(data), choices)
    write_json_atomic(out / "manifest.json", manifest)
    curves = {c: detection_curves(*pool.arrays(c)) for c in pool.error}
    write_text_atomic(out / "report.html", render_report(results, curves))
    write_json_atomic(out / "results.json", results)
    return _terminal_summary(results, out)


def _pooled_verification(pool: _Pool, config: RunConfig, per_recording: dict) -> dict:
    """Metrics over all recordings' rows; association = sums of the recordings' counts."""
    out = {}
    for condition in pool.error:
        out[condition] = metrics_block(*pool.arrays(condition), config.threshold_um, MAX_FCR)
        out[condition]["association"] = pool_diagnostics(
            [blocks[condition]["association"] for blocks in per_recording.values()])
    out[ALL] = metrics_block(*pool.arrays(), config.threshold_um, MAX_FCR)
    return out


def _terminal_summary(results: dict, out: Path) -> str:
    pooled = results["anatomical_verification"]["pooled"][ALL]
    verdicts = {name: block["deformation_hypothesis"]
                for name, block in results["anatomical_consistency"].items()}
    fmt = lambda v: "null" if v is None else f"{v:.3f}"  # noqa: E731
    return (f"{len(results['recordings'])} recording(s); verifier {results['verifier']['name']}: "
            f"AUROC {fmt(pooled['auroc'])}, certified coverage {fmt(pooled['certified_coverage'])}, "
            f"selective risk {fmt(pooled['selective_risk'])}, false certification "
            f"{fmt(pooled['false_certification_rate'])}; deformation hypothesis: "
            f"{', '.join(f'{k} {v}' for k, v in verdicts.items())}.\nWrote {out}/results.json, "
            f"manifest.json, report.html, observations.parquet")
