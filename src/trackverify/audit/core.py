"""Audit a tracker's output with no reference tracks (``trackverify audit``; docs/guide/audit.md).

Input: a tracker's output, one row per detection it identified, ``recording, frame, pred_id,
x_um, y_um[, z_um][, detection][, pred_valid]`` (``recording`` optional for one recording),
and optionally every detection of each frame (``recording, frame, detection, x_um, y_um[,
z_um]``). The *anchor frame* (default: each recording's first frame) is the frame a person
checked: its identities are trusted and everything after it is audited.

Per observation (a row after the anchor frame with a valid predicted id):

- ``score`` = the verifier's score (``registered_distance``: distance in um from the row's
  position to the identity-free registered anchor position of its predicted id);
- ``threshold_um`` = the threshold the row is judged by (below); ``relative_score`` =
  ``score / s_p`` with ``s_p`` the *spacing* of its predicted id ``p`` (anchor-frame
  distance from ``p`` to its nearest other identity, :class:`AnchorIdentities`);
- ``verdict`` = ``certified`` when ``score <= threshold_um``, ``flagged`` when ``score >
  threshold_um``, ``abstained`` when the verifier gave no score (NaN);
- ``reason`` (abstained rows) = ``no_prediction`` (``pred_valid`` false),
  ``not_in_anchor_frame`` (the id has no valid row in the anchor frame: first seen later, or
  missing there), ``no_anchor_identity`` (it has several there), ``frame_not_registered``,
  ``ambiguous`` (the margin to the nearest other identity is inside the registration's
  uncertainty), ``merged`` (registered_distance's ``merge_k``: the claimed identity's
  registered anchor lies within ``merge_k sigma`` of another's at that frame, so the frame
  cannot tell the two apart), ``no_spacing`` (default threshold only: another identity shares
  ``p``'s anchor position, spacing 0), or ``verifier_abstained`` for a verifier that does not
  say why;
  ``anchor_frame`` on the anchor frame's own rows (verdict ``certified``: trusted, not
  audited) and ``before_anchor`` on rows before it (verdict ``abstained``: not audited). An
  id that is not an *anchor identity* (one valid row in the anchor frame) is not covered by
  the anchor's trust: its rows are ``abstained`` with ``not_in_anchor_frame`` /
  ``no_anchor_identity`` and no score, whatever the verifier returns (a certificate says
  "the identity the person checked"; such an id has none to check against);
- ``lookalike_id`` / ``lookalike_um`` = the identity, other than the row's own, whose
  registered anchor position is nearest to the row, and that distance (verifiers that
  register the anchor only; null otherwise);
- ``expected_x_um, expected_y_um[, expected_z_um]`` = where the registration puts the row's
  predicted id in the row's frame (its registered anchor position, from which ``score``
  measures before its margin excess and track pooling); null for verifiers that do not
  register and where it says nothing;
- ``event`` = the rank of the event (:mod:`trackverify.audit.events`) covering the row, null
  when none.

Suspect segments: per predicted id, its audited observations in frame order; a segment is a
maximal run of consecutive observations none of which is certified (missing frames of that
id do not break a run); each observation's ``segment`` column holds its segment's rank.
A segment's ``reason`` is the abstention reason all of its observations share (else null).
Segments whose ``reason`` is ``not_in_anchor_frame`` or ``no_anchor_identity`` (an uncovered
id: no evidence of an error, but an identity to check by hand at its ``first_frame``) come
last; the others are ranked by the mean relative score of their scored rows (descending;
a run with none scored after every scored one), then by the number of flagged observations
(descending), then by the largest relative score, then the largest score (all rounded to
1e-6), then by length, then by recording, id and first frame: the review budget is counted
in observations, so the list leads with the most evidence per observation reviewed (the
key chosen on the synthetic specimen by ``benchmarks/bench_review_ranking.py``).

The threshold is, in order: ``calibration`` (a ``calibration.json`` written by ``trackverify
run --calibrate``; its threshold, verifier options and stated guarantee), ``threshold_um``
(one value for every row), or the default rule, per identity: ``threshold_um =``
:data:`DEFAULT_THRESHOLD_SPACINGS` ``x s_p`` -- a geometric rule (a swap onto its nearest
neighbour moves a row by about ``s_p``; half of that is the midpoint between its own place
and that neighbour's), *not* a calibrated guarantee. One value for all identities (half the
median spacing, the rule before) certifies a crowded identity's row beyond that midpoint.
``audit.json`` quotes the median of the per-identity values per recording.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError, InputError, naming_input
from trackverify.tables import coordinate_columns
from trackverify.values import is_integer, is_real

#: Most recordings one audit takes. Each recording is registered and scored on its own, at a
#: fixed cost of about 20 ms of CPU (40 ms of wall time on a loaded 2-core machine) even when
#: it holds one row; the bound keeps that cost under 30 s of CPU (docs/evidence/robustness.md:
#: 10^5 one-row recordings ran past an hour). Larger cohorts are audited in parts.
MAX_RECORDINGS = 1000
#: Default threshold in units of each identity's own anchor spacing ``s_p`` (uncalibrated).
DEFAULT_THRESHOLD_SPACINGS = 0.5
VERDICTS = ("certified", "flagged", "abstained")


@dataclass
class AuditResult:
    """What :func:`audit` found: data frames plus the summary written to ``audit.json``.

    ``observations``: every input row with ``score, verdict, reason, lookalike_id,
    lookalike_um, threshold_um, relative_score, segment, event``; ``segments``: every suspect
    run of one id's frames (the detail); ``tracks``: one row per (recording, predicted id);
    ``summary``: settings, counts and the threshold with its source; ``events``: the review
    list, one row per thing a person checks once (:mod:`trackverify.audit.events`).
    """

    observations: pd.DataFrame
    segments: pd.DataFrame
    tracks: pd.DataFrame
    summary: dict = field(default_factory=dict)
    events: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        counts = self.summary.get("counts", {})
        return (f"AuditResult({counts.get('audited', 0)} audited observations: "
                f"{counts.get('certified', 0)} certified, {counts.get('flagged', 0)} flagged, "
                f"{counts.get('abstained', 0)} abstained; {len(self.events)} events to review)")


@dataclass(frozen=True)
class Threshold:
    """The acceptance threshold and where it came from."""

    value_um: float | None  # None: the per-recording default rule
    source: str  # "calibration" | "user" | "default"
    calibrated: bool
    guarantee: dict | None = None
    file: str | None = None


def calibration_threshold(path: str | os.PathLike):
    """The threshold, verifier and guarantee of a ``calibration.json`` (``run --calibrate``;
    schema and checks in :mod:`trackverify.certify.calibration_file`)."""
    from trackverify.certify.calibration_file import load_calibration

    cal = load_calibration(path)
    guarantee = {"statement": cal.guarantee, "assumption": cal.assumption,
                 "target": {"kind": cal.target.kind, "level": cal.target.level,
                            "method": cal.target.method, "delta": cal.target.delta},
                 "calibration_animals": cal.calibration_animals}
    return cal, Threshold(cal.threshold_um, "calibration", True, guarantee, str(path))


def audit(tracks: pd.DataFrame | str | os.PathLike,
          detections: pd.DataFrame | str | os.PathLike | None = None, *,
          anchor_frame: int | None = None, verifier=None,
          threshold_um: float | None = None, calibration: str | os.PathLike | None = None,
          out: str | os.PathLike | None = None,
          source: str = "<tracks>", detections_source: str = "<detections>",
          fmt: str | None = None, columns: str | dict | None = None,
          pixel_size: str | tuple | None = None,
          progress: Callable[[str, int, int], None] | None = None,
          warn: Callable[[str], None] | None = None) -> AuditResult:
    """Which identities of a tracker's output can be trusted, with no reference tracks.

    ``tracks`` is the tracker's output (see the module docstring), a table or a file any
    reader takes (``fmt``: the format's name, detected when None); ``detections`` optionally
    every detection of each frame (a table or a CSV / Parquet file; used as identity-free
    evidence by the registration, and the positions of a tracker output that has none). A
    file and a table are read alike (:func:`trackverify.audit.inputs.read_input`:
    ``columns`` renames, ``pixel_size`` converts pixels); ``warn`` receives each units
    warning, also kept in ``summary["input"]``. ``verifier`` is a name, ``module:Class`` or a verifier object
    (default: the calibration's verifier, else ``registered_distance``); with
    ``calibration`` the verifier must be the one the threshold was fitted for, with its
    fitted options. ``out``, when given, receives the outputs (:func:`write_audit`) under
    the command's ``--out`` policy: an :class:`InputError` before any work when it is, lies
    inside or contains an input file (the tracks, detections or calibration file, or a file
    named by ``source`` / ``detections_source``). The caller's frames and files are never
    modified. Example::

        >>> import pandas as pd, trackverify
        >>> grid = [(x, y) for x in range(0, 40, 8) for y in range(0, 40, 8)]
        >>> rows = [(t, i, x + 0.2 * t, y) for t in range(6) for i, (x, y) in enumerate(grid)]
        >>> tracks = pd.DataFrame(rows, columns=["frame", "pred_id", "x_um", "y_um"])
        >>> result = trackverify.audit(tracks)
        >>> sorted(result.observations["verdict"].unique())
        ['certified']
        >>> len(result.segments)
        0
        >>> pixels = tracks.rename(columns={"frame": "t", "x_um": "x_px", "y_um": "y_px"})
        >>> read = trackverify.audit(pixels, columns="frame=t,x_um=x_px,y_um=y_px",
        ...                          pixel_size="1").summary["input"]
        >>> read["columns"], read["units"]["source"]
        ({'frame': 't', 'x_um': 'x_px', 'y_um': 'y_px'}, '--pixel-size')
    """
    from trackverify.audit.inputs import read_input

    if isinstance(tracks, (str, os.PathLike)):
        source = str(tracks)
    if isinstance(detections, (str, os.PathLike)):
        detections_source = str(detections)
    inputs = {"tracks": source, "detections": None if detections is None else detections_source,
              "calibration": None if calibration is None else str(calibration)}
    if out is not None:
        check_out_overlap(out, inputs)
    if anchor_frame is not None and not is_integer(anchor_frame):  # not 1.5, "1" nor True
        raise InputError(f"anchor_frame must be an integer frame number, got {anchor_frame!r}",
                         source="--anchor-frame")
    threshold, scorer = _choose(threshold_um, calibration, verifier)
    given = read_input(tracks, detections, fmt=fmt, columns=columns, pixel_size=pixel_size,
                       source=source, detections_source=detections_source)
    for text in given.warnings if warn is not None else ():
        warn(text)
    table, dets = given.tracks, given.detections
    parts, thresholds = [], {}
    recordings = pd.unique(table["recording"])
    _check_recordings(len(recordings), source)
    from trackverify.reference_check.core import check_anchor_layout
    with naming_input(source):  # before any verifier: a frame too crowded to check its labels
        check_anchor_layout(table, "pred_id", anchor_frame)
    for i, (recording, rows) in enumerate(table.groupby("recording", sort=False)):
        if progress is not None:
            progress(str(recording), i, len(recordings))
        extra = None if dets is None else dets[dets["recording"] == recording]
        if progress is not None and hasattr(scorer, "on_frame"):  # by frame, while registering
            scorer.on_frame = (lambda done, total, name=str(recording):
                               progress(f"{name}: frames", done, total))
        with naming_input(source):  # a refusal about the recording names the tracks file
            scored, used = _audit_recording(rows, extra, scorer, anchor_frame, threshold, source)
        parts.append(scored)
        thresholds[str(recording)] = used
    observations = pd.concat(parts).sort_index(kind="stable")
    segments, observations["segment"] = _segments(observations)
    from trackverify.audit.events import KINDS, find_events

    events, observations["event"] = find_events(observations)
    per_track = track_summary(observations)
    summary = _summary(observations, segments, scorer, threshold, thresholds, anchor_frame,
                       detections is not None)
    summary["counts"]["events"] = int(len(events))
    summary["counts"]["events_by_kind"] = {k: int(events["kind"].eq(k).sum()) for k in KINDS}
    summary["inputs"] = inputs
    summary["input"] = given.record  # how the tracks were read: reader, mapping, units
    from trackverify.reference_check import anchor_contradictions  # labels the next frames contradict
    summary["anchor_contradictions"] = anchor_contradictions(
        table, dets, id_column="pred_id", anchor_frame=anchor_frame).to_dict("records")
    result = AuditResult(observations.reset_index(drop=True), segments, per_track, summary,
                         events)
    if out is not None:  # checked above, before any work
        from trackverify.audit.write import write_outputs

        write_outputs(result, out)
    return result


def check_out_overlap(out: str | os.PathLike, inputs: dict) -> None:
    """Refuse an output folder that is, lies inside or contains one of ``inputs`` (name ->
    path or label): :func:`trackverify.io.paths.check_out_dir` on those that name an existing
    file or folder (a label such as ``<tracks>`` names none)."""
    from trackverify.io.paths import check_out_dir

    check_out_dir(out, [p for p in inputs.values() if p is not None and os.path.exists(p)])


def _choose(threshold_um, calibration, verifier) -> tuple[Threshold, object]:
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


def _audit_recording(rows: pd.DataFrame, dets: pd.DataFrame | None, scorer, anchor_frame,
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


def _check_recordings(count: int, source: str) -> None:
    """Refuse more than :data:`MAX_RECORDINGS` recordings before any of them is scored."""
    if count > MAX_RECORDINGS:
        raise InputError(f"{count} recordings, more than the {MAX_RECORDINGS} one audit takes "
                         "(each is scored on its own, about 40 ms each even for one row): "
                         "audit the recordings in parts", source=source, column="recording")


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


SEGMENT_COLUMNS = ("rank", "recording", "pred_id", "first_frame", "last_frame", "frames",
                   "flagged", "abstained", "max_score", "max_relative_score", "lookalike_id",
                   "reason")
#: Abstention reasons of an id the anchor frame does not cover: nothing to check it against.
UNCOVERED = ("not_in_anchor_frame", "no_anchor_identity")


def suspect_segments(observations: pd.DataFrame) -> pd.DataFrame:
    """Maximal runs of non-certified audited observations of one predicted id, ranked."""
    return _segments(observations)[0]


def _segments(observations: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The ranked segments, and per observation the rank of its segment (``Int64``, null
    outside every segment), on ``observations``' index."""
    rows = observations.assign(_position=np.arange(len(observations)))[_audited(observations)]
    rows = rows.sort_values(["recording", "pred_id", "frame"], kind="stable")
    suspect = (rows["verdict"] != "certified").to_numpy()
    same_id = ((rows["recording"].to_numpy()[1:] == rows["recording"].to_numpy()[:-1])
               & (rows["pred_id"].to_numpy()[1:] == rows["pred_id"].to_numpy()[:-1]))
    starts = np.r_[True, ~same_id | (suspect[1:] != suspect[:-1])][:len(rows)]  # none: empty
    run = np.cumsum(starts)
    relative = (rows["relative_score"] if "relative_score" in rows.columns
                else pd.Series(np.nan, index=rows.index))
    picked = rows.assign(_run=run, _flagged=rows["verdict"].eq("flagged"),
                         _abstained=rows["verdict"].eq("abstained"), _relative=relative)[suspect]
    membership = pd.array(np.full(len(observations), pd.NA), dtype="Int64")
    if not len(picked):
        return (pd.DataFrame({c: pd.Series(dtype=object) for c in SEGMENT_COLUMNS}),
                pd.Series(membership, index=observations.index))
    grouped = picked.groupby("_run", sort=True)
    segments = pd.DataFrame({
        "recording": grouped["recording"].first(),
        "pred_id": grouped["pred_id"].first(),
        "first_frame": grouped["frame"].min(),
        "last_frame": grouped["frame"].max(),
        "frames": grouped.size(),
        "flagged": grouped["_flagged"].sum().astype(np.int64),
        "abstained": grouped["_abstained"].sum().astype(np.int64),
        "max_score": grouped["score"].max(),
        "max_relative_score": grouped["_relative"].max(),
        "lookalike_id": _mode_lookalike(picked),
        "reason": _shared_reason(picked, grouped),
    })
    # Values equal to 1e-6 tie (so floating-point noise of the registration never decides).
    key = segments.assign(_mean=grouped["_relative"].mean().round(6).fillna(-np.inf),
                          _relative=segments["max_relative_score"].round(6).fillna(-np.inf),
                          _score=segments["max_score"].round(6).fillna(-np.inf),
                          _uncovered=segments["reason"].isin(UNCOVERED))
    segments = segments.loc[key.sort_values(
        ["_uncovered", "_mean", "flagged", "_relative", "_score", "frames", "recording",
         "pred_id", "first_frame"],
        ascending=[True, False, False, False, False, False, True, True, True],
        kind="stable").index]
    segments.insert(0, "rank", np.arange(1, len(segments) + 1))
    rank_of_run = pd.Series(segments["rank"].to_numpy(), index=segments.index)
    membership[picked["_position"].to_numpy()] = rank_of_run.reindex(
        picked["_run"].to_numpy()).to_numpy()
    return segments.reset_index(drop=True), pd.Series(membership, index=observations.index)


def _shared_reason(picked: pd.DataFrame, grouped) -> pd.Series:
    """Per run: the abstention reason when every observation of it is abstained for that one
    reason, else None."""
    reason = grouped["reason"]
    one = picked["reason"].notna().groupby(picked["_run"]).all() & reason.nunique().eq(1)
    keep = (one & grouped["_abstained"].all()).to_numpy()
    first = reason.first()
    return pd.Series(np.where(keep, first.to_numpy(dtype=object), None), index=first.index,
                     dtype=object)


def _mode_lookalike(picked: pd.DataFrame) -> pd.Series:
    """Per run: the most frequent look-alike identity (ties: the smallest id), or None."""
    known = picked[picked["lookalike_id"].notna()]
    if not len(known):
        return pd.Series(None, index=pd.unique(picked["_run"]), dtype=object)
    counts = known.groupby(["_run", "lookalike_id"], sort=True).size().rename("n").reset_index()
    counts = counts.sort_values(["_run", "n"], ascending=[True, False], kind="stable")
    best = counts.drop_duplicates("_run").set_index("_run")["lookalike_id"]
    return best.reindex(pd.unique(picked["_run"])).astype(object)


def _audited(observations: pd.DataFrame) -> np.ndarray:
    """Rows after the anchor frame that carry a valid predicted id."""
    reason = observations["reason"]
    return (observations["pred_valid"].to_numpy(dtype=bool)
            & ~reason.isin(["anchor_frame", "before_anchor"]).to_numpy())


def track_summary(observations: pd.DataFrame) -> pd.DataFrame:
    """Per (recording, predicted id): audited observations, shares by verdict, first flagged."""
    rows = observations[_audited(observations)]
    verdict = rows["verdict"]
    frame = rows.assign(certified=verdict.eq("certified"), flagged=verdict.eq("flagged"),
                        abstained=verdict.eq("abstained"),
                        flagged_frame=rows["frame"].where(verdict.eq("flagged")))
    grouped = frame.groupby(["recording", "pred_id"], sort=True)
    out = pd.DataFrame({
        "frames_observed": grouped.size(),
        "share_certified": grouped["certified"].mean(),
        "share_flagged": grouped["flagged"].mean(),
        "share_abstained": grouped["abstained"].mean(),
        "first_flagged_frame": grouped["flagged_frame"].min().astype("Int64"),
    })
    return out.reset_index()


def _summary(observations, segments, scorer, threshold: Threshold, used: dict, anchor_frame,
             with_detections: bool) -> dict:
    from trackverify.verifiers import recorded_options

    audited = observations[_audited(observations)]
    counts = {v: int(audited["verdict"].eq(v).sum()) for v in VERDICTS}
    reasons = audited.loc[audited["verdict"].eq("abstained"), "reason"].value_counts()
    return {
        "verifier": getattr(scorer, "name", type(scorer).__name__),
        "evidence": getattr(scorer, "evidence", None),
        "verifier_options": recorded_options(scorer),
        "anchor_frame": "first frame of each recording" if anchor_frame is None else int(anchor_frame),
        "detections_table": with_detections,
        "threshold": {
            "source": threshold.source,
            "calibrated": threshold.calibrated,
            "rule": (None if threshold.value_um is not None else
                     f"{DEFAULT_THRESHOLD_SPACINGS} x each identity's own spacing (anchor-frame "
                     "distance to its nearest other identity); per_recording_um is the median "
                     "over identities"),
            "file": threshold.file,
            "guarantee": threshold.guarantee,
            "per_recording_um": used,
        },
        "counts": {"rows": int(len(observations)), "audited": int(len(audited)), **counts,
                   "abstained_by_reason": {str(k): int(v) for k, v in reasons.items()},
                   "no_prediction": int((~observations["pred_valid"].to_numpy(dtype=bool)).sum()),
                   "suspect_segments": int(len(segments))},
    }
