"""The motion statistics of a real recording, the targets a synthetic motion level must match.

    .venv/bin/python benchmarks/real_motion_stats.py [--data ../shared/data/fdnc-nerve-freely-moving]

Prints, from ``observations.parquet`` (+ ``detections.parquet``) of a data folder, per
recording: the anchor's median nearest-neighbour spacing; the median and p90 frame-to-frame
step of a labelled neuron between consecutive frame numbers, raw, with the frame's mean
translation removed, and after the best affine map of the previous frame (least squares on
the labelled neurons: what a smooth warp cannot explain); the median and p90 displacement
from the anchor; the median in-plane turn between consecutive frames (from the affine map's
polar part); the frame numbers missing (gaps); detections per frame and the labelled share;
the share of anchor neurons missing per frame (missed detections or out of view).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

from trackverify.dataset import load_dataset
from trackverify.tables import coordinate_columns

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fdnc-nerve-freely-moving"


def stats(observations, detections) -> dict:
    coords = coordinate_columns(observations)
    cube = np.stack([observations.pivot(index="frame", columns="track", values=c).to_numpy()
                     for c in coords], -1)  # (frames present, tracks, D)
    frames = np.unique(observations["frame"])
    anchor = cube[0][~np.isnan(cube[0]).any(1)]
    spacing = float(np.median(cKDTree(anchor).query(anchor, k=2)[0][:, 1]))
    raw, centred, affine, turns = [], [], [], []
    for i in np.flatnonzero(np.diff(frames) == 1):  # consecutive frame numbers only
        a, b = cube[i], cube[i + 1]
        both = ~np.isnan(a).any(1) & ~np.isnan(b).any(1)
        if both.sum() <= len(coords) + 1:
            continue
        step = b[both] - a[both]
        raw.append(np.linalg.norm(step, axis=1))
        centred.append(np.linalg.norm(step - step.mean(0), axis=1))
        design = np.c_[a[both], np.ones(both.sum())]
        coef = np.linalg.lstsq(design, b[both], rcond=None)[0]
        affine.append(np.linalg.norm(b[both] - design @ coef, axis=1))
        u, _, vt = np.linalg.svd(coef[:2, :2])
        rotation = u @ vt
        turns.append(abs(np.degrees(np.arctan2(rotation[0, 1], rotation[0, 0]))))
    present = ~np.isnan(cube).any(-1)
    anchored = present[0]
    displacement = np.linalg.norm(cube[:, anchored] - cube[0, anchored][None], axis=-1)
    per_frame = (detections.groupby("frame").size().to_numpy() if detections is not None
                 else observations.groupby("frame").size().to_numpy())
    labelled = observations.groupby("frame").size().to_numpy()
    q = lambda v: (float(np.median(np.concatenate(v))), float(np.quantile(np.concatenate(v), 0.9)))  # noqa: E731
    return {
        "anchor_neurons": int(len(anchor)), "spacing_um": spacing,
        "step_median_p90_um": q(raw), "step_translation_removed_median_p90_um": q(centred),
        "step_affine_residual_median_p90_um": q(affine),
        "step_over_spacing": q(raw)[0] / spacing,
        "turn_per_frame_median_p90_deg": (float(np.median(turns)), float(np.quantile(turns, 0.9))),
        "displacement_from_anchor_median_p90_um": (float(np.nanmedian(displacement[1:])),
                                                   float(np.nanquantile(displacement[1:], 0.9))),
        "frames_present": int(len(frames)), "last_frame": int(frames[-1]),
        "gaps": {int(k): int(v) for k, v in zip(*np.unique(np.diff(frames) - 1, return_counts=True))
                 if k > 0},
        "detections_per_frame_min_median_max": (int(per_frame.min()), float(np.median(per_frame)),
                                                int(per_frame.max())),
        "labelled_share_median": float(np.median(labelled / per_frame)),
        "anchor_neurons_missing_share_median": float(np.median(1 - present[:, anchored].mean(1))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    for name, source in load_dataset(args.data).sources():
        print(name)
        for key, value in stats(source.load(), source.load_detections()).items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
