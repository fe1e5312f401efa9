"""Audit a real tracker's output with the reference hidden, then measure it against the truth.

Data: ``../shared/data/fdnc-nerve-freely-moving`` (a freely moving C. elegans, NeRVE/fDNC):
``tracker_cpd.parquet`` is a real CPD tracker's output (about 9 % wrong identities) on the
labelled detections of ``observations.parquet``; ``detections.parquet`` holds every detection.
The audit sees the tracker's ids, positions and the detections -- never ``track``.

Reported, over audited observations (after the anchor frame, with a valid predicted id):

- AUROC* of the audit score for a wrong identity (abstained rows ranked most suspicious);
- recall: share of wrong observations inside flagged or abstained segments;
- share of certified observations that are wrong, and share of correct ones certified;
- how many top-ranked segments a reviewer works down to see 90 % of the wrong observations,
  and the share of all audited observations those segments hold.

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


def measure(result, truth: pd.DataFrame) -> dict:
    obs = result.observations.merge(truth, on=["recording", "frame", "detection"], how="left")
    audited = obs["pred_valid"].to_numpy(bool) & ~obs["reason"].isin(["anchor_frame", "before_anchor"]).to_numpy()
    rows = obs[audited]
    wrong = (rows["pred_id"].astype("Int64") != rows["track"].astype("Int64")).to_numpy(bool)
    score = rows["score"].to_numpy(float)
    verdict = rows["verdict"].to_numpy()
    certified = verdict == "certified"
    segs = result.segments
    key = rows[["recording", "pred_id", "frame"]].assign(wrong=wrong)
    # which segment each suspect row belongs to
    seg_of = np.full(len(rows), 0, dtype=np.int64)
    rec, pid, fr = (key["recording"].to_numpy(), key["pred_id"].to_numpy(), key["frame"].to_numpy())
    for s in segs.itertuples():  # benchmark only: a few hundred segments
        inside = (rec == s.recording) & (pid == s.pred_id) & (fr >= s.first_frame) & (fr <= s.last_frame) & ~certified
        seg_of[inside] = s.rank
    n_wrong = int(wrong.sum())
    in_segments = wrong & (seg_of > 0)
    order = np.sort(seg_of[wrong & (seg_of > 0)])
    need = int(np.ceil(0.9 * n_wrong))
    if len(order) >= need and need > 0:
        top = int(order[need - 1])
        share_obs = float(segs.loc[segs["rank"] <= top, "frames"].sum() / len(rows))
    else:
        top, share_obs = None, None
    return {
        "audited": int(len(rows)), "wrong": n_wrong, "prevalence": n_wrong / len(rows),
        "auroc_star": auroc_abstain_as_error(wrong.astype(np.int8), score),
        "recall_in_segments": float(in_segments.sum() / n_wrong) if n_wrong else None,
        "certified_wrong_share": float(wrong[certified].mean()) if certified.any() else None,
        "correct_certified_share": float(certified[~wrong].mean()),
        "segments": int(len(segs)), "segments_for_90pct": top,
        "obs_share_for_90pct": share_obs,
    }


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
    print("threshold:", result.summary["threshold"]["per_recording_um"])
    for k, v in measure(result, truth).items():
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
