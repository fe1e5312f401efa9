"""Synthetic tracking scenes shared by the parity tests and ``benchmarks/bench_mot.py``.

A scene is a dict of arrays: ``gt_frame, gt_id, gt_xyz`` (reference detections) and
``pred_frame, pred_id, pred_xyz`` (predicted detections), plus ``gt_det``/``pred_det``
(detection ids: a prediction near its own reference point sits on that point's detection).
"""

from __future__ import annotations

import numpy as np


def random_scene(seed: int, n_ids: int = 20, n_frames: int = 60, dim: int = 3,
                 box: float = 60.0, step: float = 0.6, noise: float = 1.2,
                 dropout: float = 0.05, fp_per_frame: int = 1, swaps: int = 2,
                 vanish: int = 2, empty_pred_frames: int = 0, empty_gt_frames: int = 0,
                 fragments: int = 1) -> dict:
    """Random walks with localisation noise, dropout, id swaps, fragments, false positives,
    ids that vanish and return, and optionally whole frames without predictions / reference."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, box, (n_ids, dim))
    walk = np.cumsum(rng.normal(0, step, (n_frames, n_ids, dim)), axis=0)
    walk[0] = 0
    pos = start[None] + walk                                  # (T, N, dim)
    present = np.ones((n_frames, n_ids), dtype=bool)
    for _ in range(vanish):                                   # vanish and return
        i = rng.integers(n_ids)
        a = rng.integers(n_frames)
        present[a:a + rng.integers(1, max(2, n_frames // 5)), i] = False
    for t in rng.choice(n_frames, size=min(empty_gt_frames, n_frames), replace=False):
        present[t] = False
    pred_ids = np.tile(np.arange(n_ids) + 1000, (n_frames, 1))
    for _ in range(swaps):                                    # swaps over an interval
        i, j = rng.choice(n_ids, size=2, replace=False)
        a = rng.integers(n_frames)
        b = a + rng.integers(1, max(2, n_frames // 3))
        pred_ids[a:b, [i, j]] = pred_ids[a:b, [j, i]]
    for k in range(fragments):                                # brand-new id to the end
        i = rng.integers(n_ids)
        pred_ids[rng.integers(n_frames):, i] = 5000 + k
    predicted = present & (rng.random((n_frames, n_ids)) >= dropout)
    for t in rng.choice(n_frames, size=min(empty_pred_frames, n_frames), replace=False):
        predicted[t] = False
    t_idx, i_idx = np.nonzero(present)
    det = np.arange(len(t_idx))
    gt = {"gt_frame": t_idx, "gt_id": i_idx, "gt_xyz": pos[t_idx, i_idx], "gt_det": det}
    keep = predicted[t_idx, i_idx]
    p_xyz = gt["gt_xyz"][keep] + rng.normal(0, noise, (int(keep.sum()), dim))
    p_frame, p_id, p_det = t_idx[keep], pred_ids[t_idx[keep], i_idx[keep]], det[keep]
    fp_frames = np.repeat(np.flatnonzero(predicted.any(axis=1)), fp_per_frame)
    fp_xyz = rng.uniform(0, box, (len(fp_frames), dim))
    fp_id = 9000 + rng.integers(0, 50, len(fp_frames))
    # False positives sit on detections of their own (no reference observation).
    fp_det = len(det) + np.arange(len(fp_frames))
    # One false-positive id per frame at most (an id is one object per frame).
    fp_id = 9000 + np.arange(len(fp_frames)) % max(1, fp_per_frame) * 100 + rng.integers(0, 3)
    scene = dict(gt)
    scene.update({
        "pred_frame": np.concatenate([p_frame, fp_frames]),
        "pred_id": np.concatenate([p_id, fp_id]),
        "pred_xyz": np.concatenate([p_xyz, fp_xyz]),
        "pred_det": np.concatenate([p_det, fp_det]),
    })
    order = rng.permutation(len(scene["pred_frame"]))         # file order is arbitrary
    for k in ("pred_frame", "pred_id", "pred_xyz", "pred_det"):
        scene[k] = scene[k][order]
    return scene


def save_npz(path, scenes: dict, zero_distance: float) -> None:
    """Write scenes in the input format of ``mot_reference.py`` (zero_distance 0 = detections)."""
    arrays = {"zero_distance": np.float64(zero_distance), "names": np.array(list(scenes))}
    for name, s in scenes.items():
        for side in ("gt", "pred"):
            arrays[f"{name}/{side}_frame"] = s[f"{side}_frame"]
            arrays[f"{name}/{side}_id"] = s[f"{side}_id"]
            arrays[f"{name}/{side}_xyz"] = s[f"{side}_xyz"]
            arrays[f"{name}/{side}_det"] = s[f"{side}_det"]
    np.savez(path, **arrays)


def scene_tables(scenes: dict):
    """The public API's input tables (reference, predictions) holding ``scenes`` as
    recordings named by their keys (coordinates x_um, y_um and, in 3-D, z_um)."""
    import pandas as pd

    refs, preds = [], []
    for name, s in scenes.items():
        for side, rows, id_column in (("gt", refs, "track"), ("pred", preds, "pred_id")):
            xyz = s[f"{side}_xyz"]
            columns = {"recording": name, "frame": s[f"{side}_frame"], id_column: s[f"{side}_id"]}
            columns.update({c: xyz[:, k] for k, c in enumerate(("x_um", "y_um", "z_um")[:xyz.shape[1]])})
            rows.append(pd.DataFrame(columns))
    return pd.concat(refs, ignore_index=True), pd.concat(preds, ignore_index=True)
