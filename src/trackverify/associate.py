"""Oracle association and its identity diagnostics (SPEC section 3, protocol ``tracking_gt``).

These are diagnostics defined by the benchmark, not HOTA / IDF1 (see :mod:`trackverify.mot`
for the canonical metrics, reported beside them).

Input: one row per reference observation of one recording, with the prediction on that
observation's detection: columns ``frame, track, pred_id, pred_valid``. A missing or
invalid prediction is ``pred_valid = False``. Extra predicted observations (valid
predictions on detections without a reference observation, and second predictions on an
already-predicted detection) are counted by :func:`link_predictions` and passed in.

Definitions (per recording; pooled = sums of counts, rates recomputed from the sums):

- alignment: ``O[p, r]`` = number of frames where predicted id ``p`` is valid on the
  detection of reference track ``r``; one maximum-weight one-to-one assignment over the
  whole recording (Hungarian). Ties are broken lexicographically: reference tracks in
  ascending id order each take the smallest predicted id that keeps the total maximal
  (:func:`align_identities`). Pairs with zero overlap are not aligned.
- ``correct_observation_rate`` = (observations whose valid predicted id is aligned to their
  own track) / (all reference observations).
- ``identity_switches`` = over each track's frames in order, keeping only frames with a
  valid prediction: number of times the predicted id differs from the previous kept one
  (a change across a gap counts).
- ``fragmentations`` = sum over tracks of ``max(0, runs - 1)``, where a run is a maximal
  stretch of the track's consecutive observed frames that all carry a valid prediction with
  the same predicted id. "Consecutive" is taken along the track's own observed frames: a
  frame where the reference track itself is not observed does not break a run (the tracker
  had nothing to predict there), while a frame with an invalid or missing prediction does.
- ``extra_predicted_observations`` = as counted by :func:`link_predictions`; never in the
  denominator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.errors import InputError

DIAGNOSTICS = ("reference_observations", "correct_observation_rate", "identity_switches",
               "fragmentations", "extra_predicted_observations")


def align_identities(track_codes: np.ndarray, pred_codes: np.ndarray, n_tracks: int,
                     n_preds: int) -> np.ndarray:
    """Recording-wide maximum-overlap alignment with the SPEC's tie rule.

    ``track_codes`` and ``pred_codes`` are the rank codes (ascending ids) of the valid rows.
    Returns ``aligned_track[p]`` = the track code aligned to predicted code ``p``, or -1.

    One Hungarian solve finds the maximum total overlap ``W``. Ties are then broken
    lexicographically: tracks are taken in ascending id order, and each takes the smallest
    predicted id (with positive overlap) that still allows a total of ``W`` given the
    choices already made; a track with no such id stays unaligned. A re-solve is needed
    only for a track that has a positive-overlap id smaller than its current partner, so
    recordings without ties cost one solve plus a few checks.
    """
    aligned = np.full(n_preds, -1, dtype=np.int64)
    if n_preds == 0 or n_tracks == 0 or len(track_codes) == 0:
        return aligned
    overlap = np.bincount(pred_codes * n_tracks + track_codes,
                          minlength=n_preds * n_tracks).reshape(n_preds, n_tracks).astype(np.float64)
    forbidden = -(overlap.sum() + 1.0)  # one forbidden pair outweighs every overlap together
    partner, best = _solve(overlap, forbidden)
    fixed = overlap.copy()
    for r in range(n_tracks):
        current = partner[r] if partner[r] >= 0 and overlap[partner[r], r] > 0 else n_preds
        for p in np.flatnonzero(overlap[:current, r] > 0):
            trial = _force(fixed, p, r, forbidden)
            trial_partner, total = _solve(trial, forbidden)
            if total == best:
                partner, fixed = trial_partner, trial
                break
        else:
            if current < n_preds:
                fixed = _force(fixed, current, r, forbidden)
            else:  # r stays unaligned: no positive-overlap id may take it
                fixed = fixed.copy()
                fixed[overlap[:, r] > 0, r] = forbidden
    for r in range(n_tracks):
        if partner[r] >= 0 and overlap[partner[r], r] > 0:
            aligned[partner[r]] = r
    return aligned


def _force(weight: np.ndarray, p: int, r: int, forbidden: float) -> np.ndarray:
    """A copy of ``weight`` in which predicted id ``p`` and track ``r`` can only pair together."""
    out = weight.copy()
    keep = out[p, r]
    out[p, :] = forbidden
    out[:, r] = forbidden
    out[p, r] = keep
    return out


def _solve(weight: np.ndarray, forbidden: float) -> tuple[np.ndarray, float]:
    """Maximum-weight assignment: ``partner[r]`` (or -1) and the total of allowed pairs.

    A solution that needs a forbidden pair has total ``-inf``.
    """
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weight, maximize=True)
    chosen = weight[rows, cols]
    partner = np.full(weight.shape[1], -1, dtype=np.int64)
    partner[cols] = rows
    if (chosen == forbidden).any():
        return partner, -np.inf
    return partner, float(chosen.sum())


def association_diagnostics(table: pd.DataFrame, extra_predicted_observations: int = 0) -> dict:
    """The SPEC section 3 diagnostics of one recording (see the module docstring)."""
    per_track = track_breakdown(table)
    return _finish(len(table), int(per_track["correct"].sum()),
                   int(per_track["identity_switches"].sum()),
                   int(per_track["fragmentations"].sum()), extra_predicted_observations)


TRACK_COLUMNS = ("track", "observations", "correct", "identity_switches", "fragmentations",
                 "first_wrong_frame")
EVENT_COLUMNS = ("frame", "track", "from_id", "to_id")


def track_breakdown(table: pd.DataFrame) -> pd.DataFrame:
    """Per reference track of one recording: which tracks are wrong, and from when.

    Columns :data:`TRACK_COLUMNS`: ``observations``; ``correct`` (observations whose valid
    predicted id is aligned to this track); ``identity_switches`` and ``fragmentations`` with
    the module's definitions (they sum to the recording's diagnostics); ``first_wrong_frame``,
    the first frame whose observation is not correct (no valid prediction, or an id aligned
    elsewhere; null when every observation is correct). Tracks in ascending id order.
    """
    s = _sorted_by_track(table)
    n_tracks = len(s["tracks"])
    correct_rows = s["valid"] & (s["aligned"][np.maximum(s["pred"], 0)] == s["track"])
    observations = np.bincount(s["track"], minlength=n_tracks)
    correct = np.bincount(s["track"], weights=correct_rows, minlength=n_tracks).astype(np.int64)
    switches = np.bincount(s["track"][1:][s["switch"]], minlength=n_tracks)
    runs = np.bincount(s["track"][s["run_start"]], minlength=n_tracks)
    wrong = ~correct_rows
    first_wrong = pd.Series(s["frame"][wrong]).groupby(s["track"][wrong]).min()
    return pd.DataFrame({
        "track": s["tracks"],
        "observations": observations,
        "correct": correct,
        "identity_switches": switches,
        "fragmentations": np.clip(runs - 1, 0, None),
        "first_wrong_frame": first_wrong.reindex(np.arange(n_tracks)).astype("Int64").to_numpy(),
    })


def switch_events(table: pd.DataFrame) -> pd.DataFrame:
    """Every identity switch of one recording: ``frame, track, from_id, to_id``.

    A switch is counted where :func:`association_diagnostics` counts one: between a track's
    consecutive valid rows (in frame order) whose predicted ids differ; ``frame`` is the later
    row's. Rows ordered by track id, then frame.
    """
    s = _sorted_by_track(table)
    vt, vp, vf = s["track"][s["valid"]], s["pred"][s["valid"]], s["frame"][s["valid"]]
    at = np.flatnonzero((vt[1:] == vt[:-1]) & (vp[1:] != vp[:-1]))
    preds = np.asarray(s["preds"], dtype=object)
    return pd.DataFrame({"frame": vf[at + 1], "track": np.asarray(s["tracks"], dtype=object)[vt[at + 1]],
                         "from_id": preds[vp[at]], "to_id": preds[vp[at + 1]]})


def _sorted_by_track(table: pd.DataFrame) -> dict:
    """One recording's rows by (track, frame), with codes, alignment, switches and run starts."""
    n = len(table)
    track_codes, tracks = pd.factorize(table["track"], sort=True)
    valid = table["pred_valid"].to_numpy(dtype=bool) & table["pred_id"].notna().to_numpy()
    pred_codes = np.full(n, -1, dtype=np.int64)
    pred_valid_codes, preds = pd.factorize(table["pred_id"][valid], sort=True)
    pred_codes[valid] = pred_valid_codes
    aligned = align_identities(track_codes[valid], pred_valid_codes, len(tracks), len(preds))
    order = np.lexsort((table["frame"].to_numpy(), track_codes))
    t_sorted, p_sorted, v_sorted = track_codes[order], pred_codes[order], valid[order]
    same_track = np.r_[False, t_sorted[1:] == t_sorted[:-1]]
    # Identity switches: compare each valid row with the previous valid row of the track.
    vt, vp = t_sorted[v_sorted], p_sorted[v_sorted]
    switch_rows = np.flatnonzero(v_sorted)[1:][(vt[1:] == vt[:-1]) & (vp[1:] != vp[:-1])]
    switch = np.zeros(max(n - 1, 0), dtype=bool)
    switch[switch_rows - 1] = True  # indexed by the later row, minus one
    # Runs: a valid row starts a run unless the previous row of its track is valid, same id.
    continues = same_track & np.r_[False, v_sorted[:-1]] & np.r_[False, p_sorted[1:] == p_sorted[:-1]]
    return {"tracks": tracks, "preds": preds, "aligned": np.r_[aligned, -1],
            "track": t_sorted, "pred": p_sorted, "valid": v_sorted,
            "frame": table["frame"].to_numpy()[order], "switch": switch,
            "run_start": v_sorted & ~continues}


def _finish(n: int, correct: int, switches: int, fragmentations: int, extra: int) -> dict:
    return {
        "reference_observations": int(n),
        "correct_observations": int(correct),
        "correct_observation_rate": (correct / n) if n else None,
        "identity_switches": int(switches),
        "fragmentations": int(fragmentations),
        "extra_predicted_observations": int(extra),
    }


def pool_diagnostics(per_recording: list[dict]) -> dict:
    """Pooled diagnostics: sums of the counts, the rate recomputed from the sums."""
    n = sum(d["reference_observations"] for d in per_recording)
    return _finish(n, sum(d["correct_observations"] for d in per_recording),
                   sum(d["identity_switches"] for d in per_recording),
                   sum(d["fragmentations"] for d in per_recording),
                   sum(d["extra_predicted_observations"] for d in per_recording))


def link_predictions(reference: pd.DataFrame, predictions: pd.DataFrame,
                     source: str = "<predictions>") -> tuple[pd.DataFrame, int]:
    """Put each reference observation beside the prediction on its detection.

    Both tables must carry ``detection`` (the fixed source detections). Among several
    valid predictions on one detection, the one with the smallest ``pred_id`` is kept and
    the others count as extra; valid predictions on detections without a reference
    observation count as extra too. Invalid predictions count nowhere. Returns the
    reference table with ``pred_id, pred_valid`` added, and the number of extras.
    """
    if "detection" not in reference.columns or "detection" not in predictions.columns:
        raise InputError("linking predictions to reference observations needs a 'detection' "
                         "column in both tables", source=source, column="detection")
    key = ["recording", "frame", "detection"]
    valid = predictions.loc[predictions["pred_valid"].to_numpy(dtype=bool), key + ["pred_id"]]
    valid = valid.sort_values(key + ["pred_id"], kind="stable")
    first = ~valid.duplicated(key, keep="first").to_numpy()
    duplicates = int((~first).sum())
    kept = valid[first]
    merged = reference.drop(columns=[c for c in ("pred_id", "pred_valid") if c in reference.columns])
    merged = merged.merge(kept, on=key, how="left", validate="one_to_one")
    merged["pred_valid"] = merged["pred_id"].notna()
    on_reference = kept.merge(reference[key], on=key, how="left", indicator=True)["_merge"]
    unmatched = int((on_reference == "left_only").sum())
    return merged, duplicates + unmatched
