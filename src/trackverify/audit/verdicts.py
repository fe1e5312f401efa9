"""Each observation's verdict: the threshold and verifier chosen, one recording scored from its
anchor frame, abstention reasons, look-alikes and registered places (the rules:
:mod:`trackverify.audit.core`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.audit.result import DEFAULT_THRESHOLD_SPACINGS, Threshold
from trackverify.errors import ConfigError, InputError
from trackverify.tables import coordinate_columns
from trackverify.values import is_real


def calibration_threshold(path: str | os.PathLike):
    """The threshold, verifier and guarantee of a ``calibration.json`` (``run --calibrate``;
    schema and checks in :mod:`trackverify.benchmark.certify.calibration_file`)."""
    from trackverify.benchmark.certify.calibration_file import load_calibration

    cal = load_calibration(path)
    guarantee = {"statement": cal.guarantee, "assumption": cal.assumption,
                 "target": {"kind": cal.target.kind, "level": cal.target.level,
                            "method": cal.target.method, "delta": cal.target.delta},
                 "calibration_animals": cal.calibration_animals}
    return cal, Threshold(cal.threshold_um, "calibration", True, guarantee, str(path))


def choose_threshold(threshold_um, calibration, verifier) -> tuple[Threshold, object]:
    """The threshold (calibration, user's, or the default rule) and the verifier object."""
    from trackverify.verifiers import load_verifier

    if calibration is not None and threshold_um is not None:
        raise InputError("give either a calibration file or a threshold, not both",
                         source=str(calibration))
    if calibration is not None:
        cal, threshold = calibration_threshold(calibration)
        if verifier is not None and not isinstance(verifier, str):
            raise InputError("with a calibration file, give the verifier by name",
                             source=str(calibration))
        if verifier is not None and verifier != cal.verifier:
            raise InputError(f"the calibration was fitted for verifier '{cal.verifier}', not "
                             f"'{verifier}': its threshold does not apply", source=str(calibration))
        if verifier is None and ":" in cal.verifier:  # module:Class, never a built-in name
            raise InputError(f"it names verifier '{cal.verifier}', not a built-in one; loading "
                             "it imports that module and runs its code, so it is loaded only "
                             f"when you name it too: --verifier {cal.verifier}",
                             source=str(calibration))
        try:
            return threshold, load_verifier(cal.verifier, cal.verifier_options())
        except ConfigError as exc:  # a verifier the file names but that cannot be loaded
            raise InputError(f"its verifier: {exc}", source=str(calibration)) from None
    if verifier is None or isinstance(verifier, str):
        scorer = load_verifier(verifier or "registered_distance")
    else:
        scorer = verifier
    if threshold_um is not None:
        # a real number (not text, not a bool), finite and within the float range
        if not is_real(threshold_um, low=0, float_range=True):
            raise InputError(f"the threshold must be a finite number >= 0, got "
                             f"{threshold_um!r}", source="--threshold-um")
        return Threshold(float(threshold_um), "user", False), scorer
    return Threshold(None, "default", False), scorer


def judge_recording(rows: pd.DataFrame, dets: pd.DataFrame | None, scorer, anchor_frame,
                     threshold: Threshold, source: str) -> tuple[pd.DataFrame, float]:
    from trackverify.verifiers import run_verifier

    rows = rows.copy()
    frames = rows["frame"].to_numpy()
    anchor = int(frames.min()) if anchor_frame is None else int(anchor_frame)
    if not (frames == anchor).any():
        raise InputError(f"recording {rows['recording'].iloc[0]!r} has no rows in the anchor "
                         f"frame {anchor}", source=source, column="frame")
    audited = rows[frames >= anchor]
    shifted = audited.assign(frame=audited["frame"] - anchor)
    if dets is not None:  # counted from the same anchor frame
        dets = dets[dets["frame"].to_numpy() >= anchor]
        dets = dets.assign(frame=dets["frame"] - anchor)
    identities = anchor_identities(shifted)
    if threshold.value_um is None and not len(identities.spacing):  # before the verifier runs
        raise InputError(f"recording {rows['recording'].iloc[0]!r}: the anchor frame {anchor} "
                         "holds fewer than two identities: no default threshold (give "
                         "--threshold-um)", source=source, column="frame")
    scores = run_verifier(scorer, shifted, dets)
    reasons, lookalike, lookalike_um, expected = _explain(scorer, shifted, dets, scores)
    # An id the anchor frame does not hold once is not covered by its trust, whatever the
    # verifier says: no score, abstained with the reason (docs/guide/audit.md).
    uncovered, why = _uncovered(shifted, identities.ids)
    scores = np.where(uncovered, np.nan, scores)
    reasons = np.where(uncovered, why, reasons)
    spacing = identities.spacing_of(shifted["pred_id"])
    if threshold.value_um is None:  # the default rule: half of each identity's own spacing
        value = identities.default_threshold()
        limit = DEFAULT_THRESHOLD_SPACINGS * spacing
        # spacing 0: another identity shares p's anchor position, so no distance tells them
        # apart (a threshold of 0 certified every row of identities stacked on one point)
        shared = ~(spacing > 0) & ~np.isnan(scores)
        scores = np.where(shared, np.nan, scores)
        reasons = np.where(shared, "no_spacing", reasons).astype(object)
    else:
        limit = np.full(len(shifted), threshold.value_um)
        value = threshold.value_um
    verdict = np.where(np.isnan(scores), "abstained",
                       np.where(scores <= limit, "certified", "flagged")).astype(object)
    reasons = np.where(verdict == "abstained", reasons, None).astype(object)
    trusted = (shifted["frame"].to_numpy() == 0) & shifted["pred_valid"].to_numpy(dtype=bool)
    verdict[trusted], reasons[trusted] = "certified", "anchor_frame"
    rows["score"] = np.nan
    rows["verdict"] = "abstained"
    rows["reason"] = "before_anchor"
    rows["lookalike_id"] = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    rows["lookalike_um"] = np.nan
    rows["threshold_um"] = np.nan
    rows["relative_score"] = np.nan
    places = [f"expected_{c}" for c in coordinate_columns(shifted)]
    rows[places] = np.nan
    columns = ["score", "verdict", "reason", "lookalike_id", "lookalike_um", "threshold_um",
               "relative_score", *places]
    with np.errstate(divide="ignore", invalid="ignore"):  # spacing 0: no relative score
        relative = np.where(spacing > 0, scores / spacing, np.nan)
    rows.loc[audited.index, columns] = pd.DataFrame(
        {"score": scores, "verdict": verdict, "reason": reasons, "lookalike_id": lookalike,
         "lookalike_um": lookalike_um, "threshold_um": limit,
         "relative_score": relative, **dict(zip(places, expected.T))}, index=audited.index)
    return rows, float(value)


@dataclass(frozen=True)
class AnchorIdentities:
    """The anchor identities of one recording and each one's spacing.

    ``ids``: the predicted ids of the valid rows of the anchor frame (frame 0 of the table)
    that occur there once; ``spacing``: per id, ``s_p = min_{q != p} |a_p - a_q|``, the
    anchor-frame distance (um) from its position ``a_p`` to the nearest other identity's
    (empty, with ``ids``, when fewer than two)."""

    ids: pd.Index
    spacing: np.ndarray

    def spacing_of(self, pred_id: pd.Series) -> np.ndarray:
        """Per row, ``s_p`` of its predicted id; a row whose id has no anchor position
        (absent, twice, invalid) gets the median of ``s_p`` over the anchor identities (the
        recording's typical spacing); with fewer than two anchor identities, NaN."""
        if not len(self.spacing):
            return np.full(len(pred_id), np.nan)
        which = self.ids.get_indexer(pred_id)
        return np.where(which >= 0, self.spacing[np.maximum(which, 0)],
                        float(np.median(self.spacing)))

    def default_threshold(self) -> float:
        """The recording's typical default threshold (quoted in ``audit.json``):
        :data:`DEFAULT_THRESHOLD_SPACINGS` x the median of ``s_p``, i.e. the median of the
        per-identity thresholds."""
        if not len(self.spacing):
            raise InputError("the anchor frame holds fewer than two identities: no default "
                             "threshold (give --threshold-um)", column="frame")
        return DEFAULT_THRESHOLD_SPACINGS * float(np.median(self.spacing))


def anchor_identities(table: pd.DataFrame) -> AnchorIdentities:
    """:class:`AnchorIdentities` of ``table`` (anchor frame = frame 0:
    :func:`trackverify.anchors.anchor_positions`), one k-d tree query
    (:func:`trackverify.verifiers.registered_distance.identity_spacings`)."""
    from trackverify.anchors import anchor_positions
    from trackverify.verifiers.registered_distance import identity_spacings

    ids, points = anchor_positions(table)
    if len(points) < 2:
        return AnchorIdentities(ids, np.zeros(0))
    return AnchorIdentities(ids, identity_spacings(points))


def _uncovered(table: pd.DataFrame, anchor_ids: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The rows after the anchor frame (frame 0 of ``table``) whose valid id is not one of
    ``anchor_ids``, and per row the reason: ``not_in_anchor_frame`` when the id has no valid
    row in the anchor frame, ``no_anchor_identity`` when it has several there; None
    elsewhere."""
    frames = table["frame"].to_numpy()
    valid = table["pred_valid"].to_numpy(dtype=bool)
    pred = table["pred_id"]
    in_anchor = pred.isin(pd.unique(pred[(frames == 0) & valid])).to_numpy()
    later = (frames > 0) & valid & ~pred.isin(anchor_ids).to_numpy()
    why = np.full(len(table), None, dtype=object)
    why[later & ~in_anchor], why[later & in_anchor] = "not_in_anchor_frame", "no_anchor_identity"
    return later, why


def _explain(scorer, table: pd.DataFrame, detections: pd.DataFrame | None, scores: np.ndarray):
    """Per row: why it abstained, its look-alike identity and that one's distance, and where
    the registration puts the row's own predicted id in its frame (NaN where it says
    nothing)."""
    from trackverify.verifiers import takes_detections
    from trackverify.verifiers.registered_distance import nearest_other

    n = len(table)
    reasons = np.full(n, None, dtype=object)
    abstained = np.isnan(scores)
    valid = table["pred_valid"].to_numpy(dtype=bool)
    reasons[abstained] = "verifier_abstained"
    reasons[abstained & ~valid] = "no_prediction"
    lookalike = np.full(n, None, dtype=object)
    lookalike_um = np.full(n, np.nan)
    expected = np.full((n, len(coordinate_columns(table))), np.nan)
    register = getattr(scorer, "register", None)
    if register is None:
        return reasons, lookalike, lookalike_um, expected
    anchor_ids, registration = (register(table, detections) if takes_detections(scorer)
                                else register(table))
    which = anchor_ids.get_indexer(table["pred_id"])
    frames = table["frame"].to_numpy()
    positions = registration.positions
    registered = (np.isfinite(positions[frames, 0, 0]) if positions.shape[1]
                  else np.zeros(n, dtype=bool))
    reasons[abstained & valid & (which >= 0) & ~registered] = "frame_not_registered"
    reasons[abstained & valid & (which >= 0) & registered] = "ambiguous"
    merged = getattr(scorer, "last_merged", None)  # the call's own rows (merge_k), when it says
    if merged is not None and len(merged) == n:
        reasons[abstained & np.asarray(merged, dtype=bool)] = "merged"
    rows = np.flatnonzero(registered & valid)
    if positions.shape[1] >= 2 and len(rows):
        idx, dist = nearest_other(positions, frames[rows],
                                  table[coordinate_columns(table)].to_numpy(dtype=np.float64)[rows],
                                  which[rows])
        found = idx >= 0
        lookalike[rows[found]] = np.asarray(anchor_ids, dtype=object)[idx[found]]
        lookalike_um[rows[found]] = dist[found]
    own = rows[which[rows] >= 0]
    if positions.shape[2] == expected.shape[1] and len(own):
        expected[own] = positions[frames[own], which[own]]
    return reasons, lookalike, lookalike_um, expected
