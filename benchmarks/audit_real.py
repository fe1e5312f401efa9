"""Audit a real tracker's output with the reference hidden, then measure it against the truth.

Data: ``../shared/data/fdnc-nerve-freely-moving`` (a freely moving C. elegans, NeRVE/fDNC):
``tracker_cpd.parquet`` is a real CPD tracker's output (about 9 % wrong identities) on the
labelled detections of ``observations.parquet``; ``detections.parquet`` holds every detection.
The audit sees the tracker's ids, positions and the detections -- never ``track``.

Reported, over audited observations (after the anchor frame, with a valid predicted id;
wrong = ``pred_id != track``), for all of them, for the neurons labelled in the anchor frame
(the population of ``bench_real_verifier.py``, whose ``label_errors`` leave the other
neurons' rows unlabelled; docs/audit.md, "On the real tracker") and for each half of the
recording:

- AUROC* for a wrong identity (abstained rows ranked most suspicious) of the audit's
  ``relative_score`` (the ranking it uses) and of ``score`` (um);
- recall: share of wrong observations inside suspect segments (the ``segment`` column);
- share of certified observations that are wrong, and share of correct ones certified;
- how many top-ranked segments a reviewer works down to see 90 % of the wrong observations,
  and the share of the observations those segments hold; the share of wrong observations
  inside the top segments that hold at most 20 % of the observations.

Goals (issue): AUROC* >= 0.95; certified <= 1 % wrong while certifying >= 70 % of correct;
90 % of wrong observations inside top segments holding <= 20 % of observations.

ZephIR (``../shared/data/zephir-ift20-demo``): ZephIR's own output read from its native
``annotations-g.h5``, audited; the verdicts of the rows a person annotated (``provenance`` =
``ANTT``, identities correct by construction) are counted: none should be flagged.

    python benchmarks/audit_real.py [--data DIR] [--threshold-um X] [--no-detections]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import trackverify
from trackverify.selective import auroc_abstain_as_error

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATA = SHARED / "fdnc-nerve-freely-moving"
ZEPHIR = SHARED / "zephir-ift20-demo" / "annotations-g.h5"


def load(data: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    observations = pd.read_parquet(data / "observations.parquet")
    tracker = pd.read_parquet(data / "tracker_cpd.parquet")
    keys = ["recording", "frame", "detection"]
    joined = tracker.merge(observations[[*keys, "track", "x_um", "y_um", "z_um"]], on=keys,
                           how="left", validate="one_to_one")
    truth = joined[[*keys, "track"]]
    tracks = joined.drop(columns=["track"])
    detections = pd.read_parquet(data / "detections.parquet")
    return tracks, detections, truth


def measure(result, truth: pd.DataFrame, rows: np.ndarray | None = None) -> dict:
    """The issue's numbers over audited observations (``rows``: a mask over the audited rows,
    in ``result.observations`` order, to measure a subset; segments are still the audit's).

    AUROC* is of ``relative_score`` (the ranking the audit uses: score / the id's anchor
    spacing) and of ``score`` (um). A wrong observation lies in a segment when its
    ``segment`` column is set; the reviewer reads segments in rank order, and
    ``recall_at_20pct_obs`` is the share of wrong observations inside the top segments that
    hold at most 20 % of the measured observations.
    """
    obs = result.observations.merge(truth, on=["recording", "frame", "detection"], how="left",
                                    validate="one_to_one")
    audited = (obs["pred_valid"].to_numpy(bool)
               & ~obs["reason"].isin(["anchor_frame", "before_anchor"]).to_numpy())
    obs = obs[audited]
    if rows is not None:
        obs = obs[rows]
    wrong = (obs["pred_id"].astype("Int64") != obs["track"].astype("Int64")).to_numpy(bool)
    certified = obs["verdict"].to_numpy() == "certified"
    seg = obs["segment"].to_numpy(dtype=np.float64, na_value=np.nan)
    inside = np.isfinite(seg)
    n, n_wrong = len(obs), int(wrong.sum())
    # reviewer's curve: segments in rank order, cumulative wrong rows and rows seen
    ranks = np.sort(np.unique(seg[inside]))
    per_wrong = np.bincount(np.searchsorted(ranks, seg[inside & wrong]), minlength=len(ranks))
    per_rows = np.bincount(np.searchsorted(ranks, seg[inside]), minlength=len(ranks))
    seen_wrong, seen_rows = np.cumsum(per_wrong), np.cumsum(per_rows)
    need = int(np.ceil(0.9 * n_wrong))
    k = int(np.searchsorted(seen_wrong, need)) if n_wrong else len(ranks)
    within = int(np.searchsorted(seen_rows, 0.2 * n, side="right"))
    return {
        "audited": n, "wrong": n_wrong, "prevalence": n_wrong / n if n else None,
        "auroc_star": auroc_abstain_as_error(wrong.astype(np.int8),
                                             obs["relative_score"].to_numpy(float)),
        "auroc_star_um": auroc_abstain_as_error(wrong.astype(np.int8), obs["score"].to_numpy(float)),
        "recall_in_segments": float(inside[wrong].mean()) if n_wrong else None,
        "certified_wrong_share": float(wrong[certified].mean()) if certified.any() else None,
        "correct_certified_share": float(certified[~wrong].mean()),
        "segments": int(len(ranks)), "obs_share_in_segments": float(inside.mean()),
        "segments_for_90pct": int(k + 1) if k < len(ranks) else None,
        "obs_share_for_90pct": float(seen_rows[k] / n) if k < len(ranks) else None,
        "recall_at_20pct_obs": float(seen_wrong[within - 1] / n_wrong) if within and n_wrong else 0.0,
    }


def populations(result, truth: pd.DataFrame) -> dict[str, np.ndarray]:
    """Masks over the audited rows: all; neurons with an anchor identity (the population of
    ``bench_real_verifier.py``'s ``label_errors``: a neuron absent from the anchor frame has
    no anchor id and its rows no label there); the two halves of the recording."""
    obs = result.observations.merge(truth, on=["recording", "frame", "detection"], how="left",
                                    validate="one_to_one")
    audited = (obs["pred_valid"].to_numpy(bool)
               & ~obs["reason"].isin(["anchor_frame", "before_anchor"]).to_numpy())
    anchor_tracks = obs.loc[obs["reason"].eq("anchor_frame").to_numpy(), "track"]
    rows = obs[audited]
    middle = np.median(np.unique(rows["frame"]))
    return {"all": np.ones(len(rows), dtype=bool),
            "anchored neurons": rows["track"].isin(anchor_tracks).to_numpy(),
            "first half": (rows["frame"] <= middle).to_numpy(),
            "second half": (rows["frame"] > middle).to_numpy()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--threshold-um", type=float, default=None)
    parser.add_argument("--no-detections", action="store_true")
    args = parser.parse_args()
    tracks, detections, truth = load(args.data)
    start = time.perf_counter()
    result = trackverify.audit(tracks, None if args.no_detections else detections,
                               threshold_um=args.threshold_um)
    seconds = time.perf_counter() - start
    print(f"audit: {seconds:.1f} s end to end; {result}")
    print("threshold (median over identities):", result.summary["threshold"]["per_recording_um"])
    for name, rows in populations(result, truth).items():
        print(f"{name}:")
        for k, v in measure(result, truth, rows).items():
            print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    if ZEPHIR.is_file():
        zephir = audit_zephir(ZEPHIR)
        print(f"ZephIR demo: {zephir['result']}")
        print("  verdicts of manually annotated rows (ANTT):", zephir["annotated"])
        print("  verdicts of ZephIR's tracked rows (ZEIR):", zephir["tracked"])


def audit_zephir(path: Path) -> dict:
    """ZephIR's output through its native reader, audited; verdicts by provenance."""
    from trackverify.io.formats import load

    tracks = load(path, "predictions").table
    result = trackverify.audit(tracks.drop(columns=["parent_track"]))
    obs = result.observations
    later = obs["reason"].ne("anchor_frame")
    counts = obs[later].groupby(["provenance", "verdict"]).size()
    return {"result": result,
            "annotated": counts.get("ANTT", pd.Series(dtype=int)).to_dict(),
            "tracked": counts.get("ZEIR", pd.Series(dtype=int)).to_dict()}


if __name__ == "__main__":
    main()
