"""The tracking scores of WormND (focolab/WormND, NeurIPS 2024), the benchmark of
whole-brain neuron trackers: TRA and DET at 3 um and 6 um on neuron centroids.

Its protocol, as its evaluation code defines it (``CTC_Centroid_Matcher`` with traccuracy's
``CTCMetrics``):

- coordinates are scaled per axis to micrometres (anisotropic voxels: ``scale``, um per
  unit of ``x, y, z``; 1 when the tables are already in um);
- in each frame of the reference, *all* reference and predicted centroids enter one
  Hungarian assignment minimising the summed Euclidean distance, and the assigned pairs
  farther apart than the threshold are then dropped (so a pair can be lost to a cheaper
  total elsewhere; unlike :func:`trackverify.metrics.graph.matching.match_points`, which only
  considers pairs within the threshold);
- AOGM counts, TRA and DET as traccuracy computes them
  (:func:`trackverify.metrics.graph.metrics.ctc_metrics`, ``definition="traccuracy"``), once per
  threshold (3 and 6 um), per recording; the benchmark reports their mean over recordings
  (``mean``, ignoring undefined values as its ``nanmean`` does).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from trackverify.errors import ConfigError
from trackverify.metrics.graph.metrics import ctc_metrics
from trackverify.metrics.graph.tracks import graph_from_table
from trackverify.tables import coordinate_columns, validate_pair
from trackverify.values import is_real

THRESHOLDS_UM = (3.0, 6.0)


def match_hungarian_then_cut(gt_frame, gt_xyz, pred_frame, pred_xyz, threshold: float
                             ) -> tuple[np.ndarray, np.ndarray]:
    """WormND's matching: one Hungarian assignment per frame on the full distance matrix,
    then pairs with distance > ``threshold`` dropped. ``(gt nodes, pred nodes)``."""
    gt_frame, pred_frame = np.asarray(gt_frame), np.asarray(pred_frame)
    g_order = np.argsort(gt_frame, kind="stable")
    p_order = np.argsort(pred_frame, kind="stable")
    frames = np.unique(gt_frame)
    g_cut = np.searchsorted(gt_frame[g_order], frames, side="left"), \
        np.searchsorted(gt_frame[g_order], frames, side="right")
    p_cut = np.searchsorted(pred_frame[p_order], frames, side="left"), \
        np.searchsorted(pred_frame[p_order], frames, side="right")
    out_g, out_p = [], []
    for k in range(len(frames)):  # one dense solve per frame
        gi = g_order[g_cut[0][k]:g_cut[1][k]]
        pj = p_order[p_cut[0][k]:p_cut[1][k]]
        if not len(pj):
            continue
        d = np.sqrt(((gt_xyz[gi][:, None, :] - pred_xyz[pj][None, :, :]) ** 2).sum(axis=2))
        rows, cols = linear_sum_assignment(d)
        keep = d[rows, cols] <= threshold
        out_g.append(gi[rows[keep]])
        out_p.append(pj[cols[keep]])
    if not out_g:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    mg, mp = np.concatenate(out_g).astype(np.int64), np.concatenate(out_p).astype(np.int64)
    order = np.argsort(mg, kind="stable")
    return mg[order], mp[order]


def evaluate_wormnd(ref: pd.DataFrame, pred: pd.DataFrame, scale=(1.0, 1.0, 1.0),
                    thresholds=THRESHOLDS_UM) -> dict:
    """WormND's scores per recording and their ``mean``: ``{recording: {"tra_3um": ...,
    "det_3um": ..., "tra_6um": ..., "det_6um": ..., "counts_3um": {...}, ...}}``.

    Example::

        >>> import pandas as pd
        >>> ref = pd.DataFrame({"recording": "w", "frame": [0, 0], "track": [1, 2],
        ...                     "x_um": [0.0, 3.2], "y_um": 0.0, "z_um": 0.0})
        >>> pred = pd.DataFrame({"recording": "w", "frame": [0, 0], "pred_id": [1, 2],
        ...                      "x_um": [2.8, 6.3], "y_um": 0.0, "z_um": 0.0})
        >>> scores = evaluate_wormnd(ref, pred)["mean"]
        >>> round(scores["det_3um"], 12), scores["det_6um"]
        (0.45, 1.0)
    """
    scale = np.asarray(scale, dtype=np.float64).ravel()
    if not all(is_real(float(s), 0, strict=True) for s in scale):
        raise ConfigError(f"scale must be positive numbers (um per unit), got {scale.tolist()}")
    ref, pred, _ = validate_pair(ref, pred, "<reference>", "<predictions>")
    coords = coordinate_columns(ref)
    if len(scale) not in (1, len(coords)):
        raise ConfigError(f"scale has {len(scale)} values for {len(coords)} axes")
    valid = pred[pred["pred_valid"].to_numpy(dtype=bool)]
    preds = dict(tuple(valid.groupby("recording", sort=False)))
    out: dict = {}
    for recording, ref_rec in ref.groupby("recording", sort=True):
        pred_rec = preds.get(recording, valid.iloc[:0])
        g = graph_from_table(ref_rec, "track", coords)
        p = graph_from_table(pred_rec, "pred_id", coords)
        row: dict = {}
        for threshold in thresholds:
            mg, mp = match_hungarian_then_cut(g.frame, g.xyz * scale, p.frame, p.xyz * scale,
                                              threshold)
            counts = ctc_metrics(g, p, mg, mp, "traccuracy")
            tag = f"{threshold:g}um"
            row[f"tra_{tag}"], row[f"det_{tag}"] = counts["tra"], counts["det"]
            row[f"counts_{tag}"] = counts
        out[recording] = row
    out["mean"] = {key: _nanmean([out[r][key] for r in out]) for key in next(iter(out.values()))
                   if not key.startswith("counts_")}
    return out


def _nanmean(values: list):
    finite = [v for v in values if v is not None]
    return float(np.mean(finite)) if finite else None
