"""Protocol ``tracking_gt``: predictions scored against reference tracks.

Two families of numbers, side by side (SPEC sections 3 and 7):

- the oracle-association diagnostics of :mod:`trackverify.associate`
  (``correct_observation_rate``, ``identity_switches``, ``fragmentations``,
  ``extra_predicted_observations``), defined by the benchmark;
- the canonical metrics of :mod:`trackverify.mot` (HOTA, CLEAR / MOTA, Identity / IDF1),
  with TrackEval's definitions.

Linking predictions to reference observations:

- When both tables carry ``detection``, a prediction belongs to the reference observation on
  the same (recording, frame, detection) (:func:`trackverify.associate.link_predictions`);
  for the canonical metrics two observations on the same detection have similarity 1 and
  all others 0.
- Otherwise predictions need coordinates. Similarity is ``max(0, 1 - d / zero_distance_um)``
  and the oracle diagnostics use the per-frame one-to-one matching that CLEAR uses
  (similarity >= 0.5, continuing matches preferred): a matched prediction is the
  observation's prediction, an unmatched valid prediction is an extra predicted
  observation (the CLEAR false positives).

Only valid predictions (``pred_valid``) take part. A valid ``pred_id`` may appear once per
(recording, frame) (an identity is one object per frame); several predictions may sit on one
detection (the second and later count as extra, and as canonical false positives).
Predictions of a recording that the reference does not have are an input error.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from trackverify import mot
from trackverify.associate import association_diagnostics, link_predictions, pool_diagnostics
from trackverify.errors import ConfigError, InputError
from trackverify.tables import (PREDICTIONS, REFERENCE, check_same_dimensionality, plain,
                                coordinate_columns, validate)

POOLED = "pooled"


def evaluate_tracking(reference_df: pd.DataFrame, predictions_df: pd.DataFrame,
                      zero_distance_um: float = 5.0, *, reference_source: str = "<reference>",
                      predictions_source: str = "<predictions>") -> dict:
    """Score predictions against reference tracks, per recording and pooled.

    Returns ``{recording: metrics, ..., "pooled": metrics}``. Each ``metrics`` holds the
    oracle diagnostics (``reference_observations, correct_observations,
    correct_observation_rate, identity_switches, fragmentations,
    extra_predicted_observations``) and the canonical metrics (``hota, deta, assa, loca,
    detre, detpr, assre, asspr, mota, motp, idsw, frag, idf1, idp, idr`` and the counts
    ``clr_tp, clr_fn, clr_fp, idtp, idfn, idfp``); undefined values are ``None``. Pooled
    diagnostics are sums of counts with the rate recomputed; pooled canonical metrics are
    TrackEval's combined-sequence results (see :func:`trackverify.mot.combine`).
    Inputs are never modified.
    """
    try:
        zero_distance = float(zero_distance_um)
    except (TypeError, ValueError):
        zero_distance = math.nan
    if isinstance(zero_distance_um, bool) or not (math.isfinite(zero_distance)
                                                  and zero_distance > 0):
        raise ConfigError(f"zero_distance_um must be a positive number, got {zero_distance_um!r}")
    ref = validate(reference_df, REFERENCE, reference_source)
    pred = validate(predictions_df, PREDICTIONS, predictions_source)
    check_same_dimensionality(ref, pred, predictions_source)
    by_detection = "detection" in ref.columns and "detection" in pred.columns
    if not by_detection and not coordinate_columns(pred):
        raise InputError("predictions need either a 'detection' column (with one in the "
                         "reference too) or coordinates x_um, y_um[, z_um]",
                         source=predictions_source, column="detection")
    check_predictions(ref, pred, predictions_source, reference_source)
    preds = dict(tuple(pred.groupby("recording", sort=False)))
    scored = [score_recording(ref_rec, preds.get(recording, pred.iloc[:0]), zero_distance,
                              by_detection, predictions_source)
              for recording, ref_rec in ref.groupby("recording", sort=True)]
    results = {recording: metrics for recording, (metrics, _) in
               zip(sorted(pd.unique(ref["recording"])), scored)}
    results[POOLED] = pool_recordings(scored)
    return results


def score_recording(ref_rec: pd.DataFrame, pred_rec: pd.DataFrame, zero_distance: float,
                    by_detection: bool, predictions_source: str = "<predictions>"
                    ) -> tuple[dict, mot.SequenceCounts]:
    """Diagnostics and canonical metrics of one recording (validated tables), and the
    canonical sufficient statistics for pooling (:func:`pool_recordings`)."""
    valid = pred_rec[pred_rec["pred_valid"].to_numpy(dtype=bool)]
    seq = _sequence_counts(ref_rec, valid, by_detection, zero_distance)
    if by_detection:
        table, extra = link_predictions(ref_rec, pred_rec, source=predictions_source)
    else:
        table, extra = _link_by_clear_matching(ref_rec, valid, seq.clear_matches)
    diagnostics = association_diagnostics(table, extra)
    seq = dataclasses.replace(seq, clear_matches=None)  # not needed to pool; keep it light
    return {**diagnostics, **mot.finish(seq)}, seq


def pool_recordings(scored: list[tuple[dict, mot.SequenceCounts]]) -> dict:
    """Pooled diagnostics (sums, rate recomputed) and TrackEval's combined canonical metrics."""
    diagnostics = [metrics for metrics, _ in scored]
    return {**pool_diagnostics(diagnostics), **mot.finish(mot.combine([seq for _, seq in scored]))}


def check_predictions(ref: pd.DataFrame, pred: pd.DataFrame, source: str,
                      reference_source: str = "<reference>") -> None:
    recordings = pd.unique(ref["recording"])
    if any(isinstance(r, str) and r == POOLED for r in recordings):
        raise InputError(f"a recording may not be called '{POOLED}' (the name of the pooled "
                         "results)", source=reference_source, column="recording")
    unknown = ~pred["recording"].isin(recordings).to_numpy()
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        name = plain(pred["recording"].iloc[row])
        raise InputError(f"prediction for recording {name!r}, which the reference does not "
                         "have", source=source, column="recording", row=row + 1)
    valid = pred["pred_valid"].to_numpy(dtype=bool)
    dup = pred.duplicated(["recording", "frame", "pred_id"], keep=False).to_numpy() & valid
    if dup.any():
        again = pred[dup].duplicated(["recording", "frame", "pred_id"], keep="first")
        row = int(again.index[again.to_numpy()][0])
        pid = plain(pred["pred_id"].iloc[row])
        raise InputError(f"pred_id {pid!r} is given to two predictions in frame "
                         f"{int(pred['frame'].iloc[row])} (an identity is one object per frame)",
                         source=source, column="pred_id", row=row + 1)



def _sequence_counts(ref_rec: pd.DataFrame, pred_rec: pd.DataFrame, by_detection: bool,
                     zero_distance: float) -> mot.SequenceCounts:
    gt_frame = ref_rec["frame"].to_numpy()
    pred_frame = pred_rec["frame"].to_numpy()
    if by_detection:
        g = pd.DataFrame({"frame": gt_frame, "detection": ref_rec["detection"].to_numpy(),
                          "gi": np.arange(len(ref_rec))})
        p = pd.DataFrame({"frame": pred_frame, "detection": pred_rec["detection"].to_numpy(),
                          "pj": np.arange(len(pred_rec))})
        both = g.merge(p, on=["frame", "detection"], how="inner")
        pg, pp = both["gi"].to_numpy(np.int64), both["pj"].to_numpy(np.int64)
        ps = np.ones(len(both))
    else:
        cols = coordinate_columns(ref_rec)
        pg, pp, ps = mot.similarity_pairs(gt_frame, ref_rec[cols].to_numpy(np.float64),
                                          pred_frame, pred_rec[cols].to_numpy(np.float64),
                                          zero_distance)
    return mot.sequence_counts(gt_frame, ref_rec["track"].to_numpy(), pred_frame,
                               pred_rec["pred_id"].to_numpy(), pg, pp, ps)


def _link_by_clear_matching(ref_rec: pd.DataFrame, pred_rec: pd.DataFrame,
                            matches: tuple[np.ndarray, np.ndarray]) -> tuple[pd.DataFrame, int]:
    """Reference observations beside the prediction CLEAR matched to them; extras = the rest."""
    m_gt, m_pred = matches
    table = ref_rec.reset_index(drop=True).drop(
        columns=[c for c in ("pred_id", "pred_valid") if c in ref_rec.columns])
    pred_ids = pred_rec["pred_id"].to_numpy()
    column = np.full(len(table), None, dtype=object)
    column[m_gt] = pred_ids[m_pred]
    table["pred_id"] = pd.Series(column, dtype=object)
    valid = np.zeros(len(table), dtype=bool)
    valid[m_gt] = True
    table["pred_valid"] = valid
    return table, int(len(pred_rec) - len(m_gt))


# --------------------------------------------------------------------------- CLI
