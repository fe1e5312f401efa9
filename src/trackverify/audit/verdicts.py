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
    """One recording's rows with their verdicts (the rules: :mod:`trackverify.audit.core`)
    and the recording's typical threshold."""
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
    claim = _claims(scorer, shifted, dets, identities)
    scores, reasons, lookalike, lookalike_um, expected, look_place = _scores(scorer, shifted,
                                                                              dets, claim)
    spacing = claim.spacing
    if threshold.value_um is None:  # the default rule: half of each claim's own spacing
        value = identities.default_threshold()
        limit = DEFAULT_THRESHOLD_SPACINGS * spacing
        # spacing 0: another identity shares the claimed place, so no distance tells them
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
    valid = shifted["pred_valid"].to_numpy(dtype=bool)
    trusted = (shifted["frame"].to_numpy() == 0) & valid
    later_start = claim.start & ~trusted  # a track's own start: what it is judged against
    # not judged (NOT_JUDGED): no verdict, the reason says which kind of row it is
    verdict[~valid], reasons[~valid] = None, "no_prediction"
    verdict[trusted], reasons[trusted] = None, "anchor_frame"
    verdict[later_start], reasons[later_start] = None, "track_start"
    scores = np.where(later_start, np.nan, scores)
    rows["score"] = np.nan
    rows["verdict"] = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    rows["reason"] = np.where(rows["pred_valid"].to_numpy(dtype=bool), "before_anchor",
                              "no_prediction").astype(object)
    rows["lookalike_id"] = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    rows["lookalike_um"] = np.nan
    rows["threshold_um"] = np.nan
    rows["relative_score"] = np.nan
    axes = coordinate_columns(shifted)
    places = [f"expected_{c}" for c in axes]
    looks = [f"lookalike_{c}" for c in axes]
    rows[places + looks] = np.nan
    columns = ["score", "verdict", "reason", "lookalike_id", "lookalike_um", "threshold_um",
               "relative_score", *places, *looks]
    with np.errstate(divide="ignore", invalid="ignore"):  # spacing 0: no relative score
        relative = np.where(spacing > 0, scores / spacing, np.nan)
    rows.loc[audited.index, columns] = pd.DataFrame(
        {"score": scores, "verdict": verdict, "reason": reasons, "lookalike_id": lookalike,
         "lookalike_um": lookalike_um, "threshold_um": limit,
         "relative_score": relative, **dict(zip(places, expected.T)),
         **dict(zip(looks, look_place.T))}, index=audited.index)
    rows["verdict"] = rows["verdict"].astype(object).where(rows["verdict"].notna(), None)
    start_frame = pd.array(np.where(claim.start_frame >= 0, claim.start_frame + anchor, 0),
                           dtype="Int64")
    start_frame[claim.start_frame < 0] = pd.NA
    rows["start_frame"] = pd.Series(start_frame, index=audited.index).reindex(rows.index)
    rows["start_identity"] = pd.Series(claim.start_identity, index=audited.index,
                                       dtype=object).reindex(rows.index)
    return rows, float(value)


@dataclass(frozen=True)
class Claims:
    """What each row of one recording (anchor frame = frame 0) is judged against.

    Per row: ``which``, the anchor index of the identity its track started on (-1: none);
    ``places`` (rows, D), for a track that started on a place no anchor identity holds,
    where the registration carries that start to the row's frame (NaN elsewhere);
    ``spacing``, the claim's spacing (``s_p`` of the identity, or the start's distance to
    the nearest registered anchor identity at its frame; the median ``s_p`` where none);
    ``start``, the row is its track's start; ``start_frame`` (-1: no start) and
    ``start_identity`` (the anchor identity the start holds; None: none) of its track;
    ``uncovered``, the abstention reason of a row whose track has no start to be judged
    against (``not_in_anchor_frame``, ``no_anchor_identity``, ``frame_not_registered``;
    None elsewhere); ``judged``, the row's track has a start it is judged against.
    ``registration``: the verifier's, when it registers."""

    which: np.ndarray
    places: np.ndarray
    spacing: np.ndarray
    start: np.ndarray
    start_frame: np.ndarray
    start_identity: np.ndarray
    uncovered: np.ndarray
    judged: np.ndarray
    registration: object = None
    anchor_ids: pd.Index | None = None


def follows_starts(scorer) -> bool:
    """Whether the verifier can judge a track from its own start: it registers the anchor
    and scores claims on any anchor identity and on carried places (registered_distance)."""
    return all(callable(getattr(scorer, name, None))
               for name in ("register", "holders", "score_places"))


def _claims(scorer, table: pd.DataFrame, dets, identities: AnchorIdentities) -> Claims:
    """Each track's start and what its rows are judged against (:class:`Claims`).

    A track is the rows of one valid predicted id. Its *start* is its first observation in
    a registered frame (the anchor frame counts: an anchor identity starts there), when that
    frame holds the id once. The start's *identity*: its own id for an anchor identity;
    for a later start, the anchor identity whose registered place holds the start's
    detection (``scorer.holders``: the one-to-one assignment), else none, and the track is
    judged against its start carried by the registration (:func:`carry_points`). A verifier
    that cannot (no registration) judges anchor identities only; later ids are uncovered.
    """
    from trackverify.verifiers import takes_detections

    n = len(table)
    frames = table["frame"].to_numpy()
    valid = table["pred_valid"].to_numpy(dtype=bool)
    coords = coordinate_columns(table)
    xyz = table[coords].to_numpy(dtype=np.float64)
    code = np.full(n, -1, dtype=np.int64)
    code[valid] = pd.factorize(table["pred_id"][valid])[0]
    tracks = int(code.max()) + 1 if n else 0
    which = identities.ids.get_indexer(table["pred_id"]).astype(np.int64)
    which[~valid] = -1
    registration = anchor_ids = None
    following = follows_starts(scorer)
    if following:
        anchor_ids, registration = (scorer.register(table, dets) if takes_detections(scorer)
                                    else scorer.register(table))
        positions = registration.positions
        registered = (np.isfinite(positions[:, 0, 0]) if positions.shape[1]
                      else np.zeros(len(positions), dtype=bool))
    else:
        registered = np.zeros(int(frames.max()) + 1 if n else 1, dtype=bool)
    registered[0] = True  # the anchor frame: an anchor identity starts there
    eligible = valid & registered[np.clip(frames, 0, len(registered) - 1)] & (frames >= 0)
    first = np.full(tracks, np.iinfo(np.int64).max)
    np.minimum.at(first, code[eligible], frames[eligible])
    at_first = eligible & (frames == first[np.maximum(code, 0)])
    count = np.bincount(code[at_first], minlength=tracks)
    start = at_first & (count[np.maximum(code, 0)] == 1)
    start_row = np.full(tracks, -1, dtype=np.int64)
    start_row[code[start]] = np.flatnonzero(start)
    has_start = start_row >= 0
    track_frame = np.where(has_start, first, -1)
    # the identity each start holds: anchor identities their own; later starts the holder
    neuron = np.full(tracks, -1, dtype=np.int64)
    at_anchor = has_start & (track_frame == 0)
    neuron[at_anchor] = which[start_row[at_anchor]]
    later = np.flatnonzero(has_start & (track_frame > 0))
    if following and len(later):
        neuron[later] = scorer.holders(table, registration, start_row[later])
    row_track = np.maximum(code, 0)
    judged = valid & has_start[row_track]
    claimed = np.where(judged, neuron[row_track], -1)
    fallback = (float(np.median(identities.spacing)) if len(identities.spacing) else np.nan)
    spacing = np.where(claimed >= 0, identities.spacing[np.maximum(claimed, 0)]
                       if len(identities.spacing) else np.nan, fallback)
    places = np.full(xyz.shape, np.nan)
    carried = judged & (neuron[row_track] < 0) & (track_frame[row_track] > 0)
    if following and carried.any():
        from trackverify.verifiers.registered_distance import carry_points, nearest_other

        rows = np.flatnonzero(carried)
        origin = start_row[row_track[rows]]
        places[rows] = carry_points(registration.positions, frames[origin], xyz[origin],
                                    frames[rows])
        unnamed = np.flatnonzero((neuron < 0) & (track_frame > 0) & has_start)
        gap = nearest_other(registration.positions, track_frame[unnamed],
                            xyz[start_row[unnamed]], np.full(len(unnamed), -1))[1]
        own_gap = np.full(tracks, np.nan)
        own_gap[unnamed] = gap
        spacing = np.where(carried, own_gap[row_track], spacing)
    # no start to judge a track against: twice in its first (registered) frame, or (a
    # verifier that does not register) not an anchor identity
    uncovered = np.full(n, None, dtype=object)
    twice = (count > 1)[row_track]
    if following:
        lost = valid & (frames > 0) & ~judged
        uncovered[lost & twice] = "no_anchor_identity"
        uncovered[lost & ~twice] = "frame_not_registered"  # in no registered frame at all
    else:
        lost = valid & (frames > 0) & ~(judged & (track_frame[row_track] == 0))
        in_anchor = np.zeros(tracks, dtype=bool)
        in_anchor[code[valid & (frames == 0)]] = True
        uncovered[lost & in_anchor[row_track]] = "no_anchor_identity"
        uncovered[lost & ~in_anchor[row_track]] = "not_in_anchor_frame"
    names = np.asarray(anchor_ids if anchor_ids is not None else identities.ids, dtype=object)
    identity = np.full(tracks, None, dtype=object)
    named = has_start & (neuron >= 0)
    identity[named] = names[neuron[named]] if len(names) else None
    row_frame = np.where(valid, track_frame[row_track], -1)
    row_identity = np.where(valid, identity[row_track], None)
    if not following:
        judged &= track_frame[row_track] == 0
        claimed = np.where(judged, claimed, -1)
        start = start & (frames == 0)
        row_frame = np.where(judged, row_frame, -1)
        row_identity = np.where(judged, row_identity, None)
    return Claims(claimed, places, spacing, start, row_frame, row_identity, uncovered, judged,
                  registration, anchor_ids)


def _scores(scorer, table: pd.DataFrame, dets, claim: Claims):
    """The verifier's scores of the claims and, per row, why it abstained, its look-alike
    and where the claim puts it (``expected``)."""
    from trackverify.verifiers import run_verifier, verifier_view

    if claim.registration is not None:
        scores = run_verifier(scorer, table, dets, claims=claim.which)
        carried = np.isfinite(claim.places).all(axis=1)
        if carried.any():
            spacing = np.where(carried, claim.spacing, np.nan)
            placed = scorer.score_places(verifier_view(table), claim.registration,
                                         claim.places, spacing)
            scores = np.where(carried, placed, scores)
    else:
        scores = run_verifier(scorer, table, dets)
    reasons, lookalike, lookalike_um, expected, look_place = _explain(scorer, table, dets,
                                                                      scores, claim)
    # A track with no start to judge it against (uncovered): no score, whatever the
    # verifier says (docs/guide/audit.md).
    uncovered = pd.notna(claim.uncovered)
    scores = np.where(uncovered, np.nan, scores)
    reasons = np.where(uncovered, claim.uncovered, reasons)
    return scores, reasons, lookalike, lookalike_um, expected, look_place


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


def _explain(scorer, table: pd.DataFrame, detections: pd.DataFrame | None,
             scores: np.ndarray, claim: Claims):
    """Per row: why it abstained, its look-alike identity and that one's distance, where
    the registration puts the row's claim in its frame and where it puts the look-alike
    there (NaN where it says nothing)."""
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
    look_place = expected.copy()
    register = getattr(scorer, "register", None)
    if register is None:
        return reasons, lookalike, lookalike_um, expected, look_place
    if claim.registration is not None:
        anchor_ids, registration = claim.anchor_ids, claim.registration
    else:
        anchor_ids, registration = (register(table, detections) if takes_detections(scorer)
                                    else register(table))
    which = claim.which
    carried = np.isfinite(claim.places).all(axis=1)
    frames = table["frame"].to_numpy()
    positions = registration.positions
    registered = (np.isfinite(positions[frames, 0, 0]) if positions.shape[1]
                  else np.zeros(n, dtype=bool))
    claimed = claim.judged
    reasons[abstained & valid & claimed & ~registered] = "frame_not_registered"
    reasons[abstained & valid & claimed & registered] = "ambiguous"
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
        if positions.shape[2] == expected.shape[1] and found.any():
            look_place[rows[found]] = positions[frames[rows[found]], idx[found]]
    own = rows[which[rows] >= 0]
    if positions.shape[2] == expected.shape[1] and len(own):
        expected[own] = positions[frames[own], which[own]]
    expected[carried] = claim.places[carried]
    return reasons, lookalike, lookalike_um, expected, look_place
