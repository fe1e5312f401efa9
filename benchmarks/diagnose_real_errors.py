"""Where registered_distance certifies a real tracker's mistakes, and why (issue 14, item 4).

    .venv/bin/python benchmarks/diagnose_real_errors.py [--data ../shared/data/fdnc-nerve-freely-moving]
        [--lowest 80] [--check-reference]

The recording's CPD tracker (``tracker_cpd.parquet``) is joined onto the observations and
scored by ``registered_distance`` (its defaults). The ``--lowest`` lowest-scored tracker errors
(a few times the 1 % false-certification budget) are compared with the correct rows:

1. **Frames.** Are they where the registration itself failed? Per frame, identity-free:
   ``sigma[t]``, the share of anchor points with no detection within half an anchor spacing,
   the number of detections, and the median distance of a registered anchor point to its
   nearest detection -- each as its median over the low-scored errors' frames against its
   median over the correct rows' frames.
2. **The row.** ``d``, ``alt`` (as the verifier), the claimed anchor point's nearest *other*
   detection, and the true identity's registered point's distance to its nearest detection.
3. **The reference itself.** For a low-scored error (claim ``p`` on a detection labelled
   ``q``), ``v`` = (the detection nearest ``R[t, q]``) - (the row's detection), against
   ``ref`` = pos(q) - pos(p), averaged over the nearest frames (at most five away) where both
   are labelled. The scene matches the *claim* (this detection is p, the other is q) when
   ``|v - ref| < |v + ref|``, the *label* otherwise. Labels are read here only to diagnose,
   never by the verifier.

``--check-reference`` keeps only the rows the reference check does not question
(docs/guide/reference-check.md): what remains is where the registration agrees with a wrong tracker
on a reference the check does not doubt.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from bench_real_verifier import SHARED
from check_reference_real import real_recording, reference_cube
from trackverify.anchors import anchor_identities
from trackverify.verifiers import run_verifier
from trackverify.verifiers.registered_distance import RegisteredDistance, anchor_spacing

COORDS = ["x_um", "y_um", "z_um"]


def frame_statistics(positions: np.ndarray, det_frames: np.ndarray, det_points: np.ndarray,
                     spacing: float) -> pd.DataFrame:
    """Per registered frame: unmatched share, detections, median nearest-detection distance."""
    out = []
    for t in np.unique(det_frames):
        if not np.isfinite(positions[t]).all():
            continue
        nearest = cKDTree(det_points[det_frames == t]).query(positions[t])[0]
        out.append({"frame": t, "unmatched": float((nearest > spacing / 2).mean()),
                    "detections": int((det_frames == t).sum()), "residual": float(np.median(nearest))})
    return pd.DataFrame(out).set_index("frame")


def reference_test(table: pd.DataFrame, rows: np.ndarray, positions: np.ndarray, true_index: np.ndarray,
                   claimed_track: np.ndarray, det_frames: np.ndarray, det_points: np.ndarray) -> pd.Series:
    """Per row: 'claim' or 'label' (which the scene's geometry matches), None without a reference."""
    by_track = {k: g.set_index("frame")[COORDS] for k, g in table.groupby("track")}
    verdict = []
    for r in rows:
        t, q, p = int(table["frame"].iat[r]), int(table["track"].iat[r]), claimed_track[r]
        here = table[COORDS].iloc[r].to_numpy(dtype=np.float64)
        frame_points = det_points[det_frames == t]
        other = frame_points[cKDTree(frame_points).query(positions[t, true_index[r]], k=2)[1]]
        other = other[0] if np.linalg.norm(other[0] - here) > 1e-9 else other[1]
        if p is None or p not in by_track or q not in by_track:
            verdict.append(None)
            continue
        both = by_track[q].index.intersection(by_track[p].index)
        near = both[np.argsort(np.abs(both - t), kind="stable")][:2]
        near = near[np.abs(near - t) <= 5]
        if not len(near):
            verdict.append(None)
            continue
        ref = (by_track[q].loc[near].to_numpy() - by_track[p].loc[near].to_numpy()).mean(axis=0)
        v = other - here
        verdict.append("claim" if np.linalg.norm(v - ref) < np.linalg.norm(v + ref) else "label")
    return pd.Series(verdict, index=rows, dtype=object)


def run_lengths(table: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per row: how many consecutive frames (present in the table) its predicted id sits on
    the same labelled track, the row's frame included."""
    order = np.lexsort((table["frame"].to_numpy(), table["pred_id"].astype(str).to_numpy()))
    pid = table["pred_id"].astype(str).to_numpy()[order]
    track = table["track"].to_numpy()[order]
    frame = table["frame"].to_numpy()[order]
    same = (pid[1:] == pid[:-1]) & (track[1:] == track[:-1]) & (np.diff(frame) == 1)
    run = np.cumsum(np.r_[True, ~same])  # a new run starts where the id, track or frame breaks
    lengths = np.bincount(run)[run]
    out = np.empty(len(table), dtype=np.int64)
    out[order] = lengths
    return out[rows]


def predicted_nearer(observations: pd.DataFrame, table: pd.DataFrame,
                     claimed_track: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, from the reference check's predicted places (each neuron's place from its
    neighbours' labelled motion in the frames around): whether the claimed neuron's lies nearer
    the row's detection than the labelled neuron's, and whether any other neuron's does (False
    where a prediction is missing)."""
    from trackverify.reference_check.core import CheckSettings, residuals

    frames, tracks, P = reference_cube(observations)
    prediction = residuals(P, CheckSettings())[1]
    a = np.searchsorted(frames, table["frame"].to_numpy())
    label = np.searchsorted(tracks, table["track"].to_numpy())
    here = table[COORDS].to_numpy(dtype=np.float64)
    gap = np.linalg.norm(prediction[a] - here[:, None], axis=2)  # rows x neurons
    rows = np.arange(len(table))
    to_label = gap[rows, label]
    known = np.isin(claimed_track, tracks)
    claim = np.searchsorted(tracks, np.where(known, claimed_track, tracks[0]).astype(tracks.dtype))
    claimed = known & (gap[rows, claim] < to_label)  # NaN compares False
    gap[rows, label] = np.inf
    return claimed, np.nanmin(np.where(np.isnan(gap), np.inf, gap), axis=1) < to_label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "fdnc-nerve-freely-moving")
    parser.add_argument("--lowest", type=int, default=80)
    parser.add_argument("--check-reference", action="store_true")
    args = parser.parse_args()
    observations, detections, table, error = real_recording(args.data)
    anchors = anchor_identities(table)
    verifier = RegisteredDistance()
    score = run_verifier(verifier, table, detections)
    ids, registration = verifier.register(table, detections)
    positions, sigma = registration.positions, registration.sigma
    frames = table["frame"].to_numpy()
    det_frames = detections["frame"].to_numpy()
    det_points = detections[COORDS].to_numpy(dtype=np.float64)
    spacing = anchor_spacing(positions[0])
    stats = frame_statistics(positions, det_frames, det_points, spacing)
    wrong, right = error == 1, error == 0
    strength = None
    if args.check_reference:
        from trackverify.reference_check import check_reference

        check = check_reference(observations, detections)
        kept, strength = check.kept, check.rows["strength"].to_numpy()
        wrong, right = wrong & kept, right & kept
    scored_wrong = np.flatnonzero(wrong & np.isfinite(score))
    low = scored_wrong[np.argsort(score[scored_wrong], kind="stable")[:args.lowest]]
    print(f"tracker rows {int((~np.isnan(error)).sum())}, errors {int(wrong.sum())}; the "
          f"{len(low)} lowest-scored errors score {score[low].min():.2f}-{score[low].max():.2f} um; "
          f"correct rows below {score[low].max():.2f}: {np.mean(score[right] <= score[low].max()):.3f}")
    print(f"  in {len(np.unique(frames[low]))} frames of {len(stats)}")
    print("\n1. frame statistics (median over rows' frames): low-scored errors | correct rows")
    for name, values in (("sigma", sigma), *((c, stats[c].reindex(np.arange(len(sigma))).to_numpy())
                                            for c in stats.columns)):
        print(f"  {name:11s} {np.nanmedian(values[frames[low]]):8.3f} | {np.nanmedian(values[frames[right]]):8.3f}")
    true_index = ids.get_indexer(anchors.reindex(table["track"].to_numpy()).to_numpy())
    claimed = ids.get_indexer(table["pred_id"])
    rows = np.concatenate([low, np.flatnonzero(right)])
    point = table[COORDS].to_numpy(dtype=np.float64)
    d = np.linalg.norm(point[rows] - positions[frames[rows], claimed[rows]], axis=1)
    alt = d + verifier.last_margin[rows]
    own_true = np.full(len(rows), np.nan)
    next_detection = np.full(len(rows), np.nan)
    for t in np.unique(frames[rows]):
        g = np.flatnonzero(frames[rows] == t)
        tree = cKDTree(det_points[det_frames == t])
        own_true[g] = tree.query(positions[t, true_index[rows[g]]])[0]
        next_detection[g] = tree.query(positions[t, claimed[rows[g]]], k=2)[0][:, 1]
    print("\n2. the row (median): low-scored errors | correct rows")
    n = len(low)
    for name, values in (("d", d), ("alt", alt), ("p's 2nd det", next_detection),
                         ("R[true]->det", own_true)):
        print(f"  {name:12s} {np.median(values[:n]):8.3f} | {np.median(values[n:]):8.3f}")
    track_of = pd.Series(anchors.index.to_numpy(), index=anchors.to_numpy())
    claimed_track = np.array([track_of.get(p) for p in table["pred_id"].to_numpy()], dtype=object)
    present = observations.groupby("frame")["track"].apply(set)
    absent = np.mean([claimed_track[r] not in present[frames[r]] for r in low])
    verdict = reference_test(observations, low, positions, true_index, claimed_track, det_frames,
                             det_points)
    counts = verdict.value_counts()
    print(f"\n3. the claimed neuron carries no label in the frame: {absent:.2f} of the low-scored errors")
    print(f"   the scene's geometry matches the claim: {int(counts.get('claim', 0))}, the label: "
          f"{int(counts.get('label', 0))}, no reference frame: {int(verdict.isna().sum())}")
    runs = run_lengths(table, low)
    print(f"\n4. run of the id on the labelled track around each (frames): median {np.median(runs):.0f}, "
          f"90th percentile {np.percentile(runs, 90):.0f}; one frame long: {np.mean(runs == 1):.2f}")
    if strength is not None:
        print(f"   the check's strength of the label there: median {np.nanmedian(strength[low]):.2f}, "
              f"90th percentile {np.nanpercentile(strength[low], 90):.2f} (correct rows' 90th "
              f"percentile {np.nanpercentile(strength[right], 90):.2f})")
        claimed, other = predicted_nearer(observations, table, claimed_track)
        rest = np.setdiff1d(np.flatnonzero(wrong & np.isfinite(score)), low)
        print(f"\n5. the reference's own motion (the check's predicted places from the frames around) "
              f"puts the claimed neuron nearer the row's detection than the labelled one in "
              f"{claimed[low].mean():.2f} of the low-scored errors and {claimed[rest].mean():.3f} of the "
              f"other errors; some other neuron nearer than the labelled one: "
              f"{other[low].mean():.2f} of the low-scored errors, "
              f"{other[right & np.isfinite(score)].mean():.3f} of the correct rows")


if __name__ == "__main__":
    main()
