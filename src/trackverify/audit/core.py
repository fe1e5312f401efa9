"""Audit a tracker's output with no reference tracks (``trackverify audit``; docs/guide/audit.md).

Input: a tracker's output, one row per detection it identified, ``recording, frame, pred_id,
x_um, y_um[, z_um][, detection][, pred_valid]`` (``recording`` optional for one recording),
and optionally every detection of each frame (``recording, frame, detection, x_um, y_um[,
z_um]``). The *anchor frame* (default: each recording's first frame) is the frame a person
checked: its identities are trusted and everything after it is audited.

**What is judged** (the definition, the same for every id). A *track* is the rows of one
valid predicted id from the anchor frame on. Its *start* is its first observation in a
registered frame: for an id in the anchor frame, its anchor-frame row (the anchor frame is
its start); for an id that appears later, its own first observation. Every other
observation of the track answers one question: **is it on the neuron the track started
on?** The neuron is named by where the start sits, identity-free: an *anchor identity*
(an id the anchor frame holds once, on a valid row) starts on its own anchor place; a later
start on the anchor identity ``i`` whose registered place the registration's one-to-one
assignment gives the start's detection (``start_identity = i``), and is then judged like
``i`` itself, against ``i``'s registered place in each frame; a later start on a detection
no anchor identity holds is judged against that start carried by the registration to each
frame (:func:`trackverify.verifiers.registered_distance.carry_points`: the locally affine
motion of the registered anchor points around it; ``start_identity`` null). The start
itself is the one observation not judged (reason ``anchor_frame``, trusted as a person
checked it, or ``track_start``), and the counts say how many (``counts.track_starts``).
A verifier that does not register the anchor judges anchor identities only.

Per judged observation:

- ``score`` = the verifier's score (``registered_distance``: distance in um from the row's
  position to the registered place of the neuron its track started on, plus the margin
  excess and the one-to-one assignment's penalty, pooled along the track);
- ``threshold_um`` = the threshold the row is judged by (below); ``relative_score`` =
  ``score / s`` with ``s`` the *spacing* of that neuron (for an anchor identity ``p``, the
  anchor-frame distance from ``p`` to its nearest other identity, :class:`AnchorIdentities`;
  for a start on no identity's place, its distance to the nearest registered anchor
  identity at its frame);
- ``verdict`` = ``certified`` when ``score <= threshold_um``, ``flagged`` when ``score >
  threshold_um``, ``abstained`` when the verifier gave no score (NaN); null on a row that is
  not judged, whose ``reason`` says which of the four kinds it is: ``no_prediction`` (no
  valid predicted id, in any frame), ``before_anchor`` (a frame before the anchor),
  ``anchor_frame`` (the anchor frame's own rows: trusted, as a person checked them) and
  ``track_start`` (a later track's first observation: what the track is judged against).
  Every row is one of these four or judged, and ``audit.json``'s counts say how many of
  each (``no_prediction``, ``before_anchor``, ``anchor_frame``, ``track_starts``,
  ``audited``; the report and the terminal give the same counts);
- ``reason`` (abstained rows) = ``no_anchor_identity`` (the id names several rows of the
  frame it starts in: no single start), ``not_in_anchor_frame`` (a verifier that does not
  register the anchor, and an id not in the anchor frame), ``frame_not_registered``,
  ``ambiguous`` (the margin to the nearest other identity is inside the registration's
  uncertainty), ``merged`` (registered_distance's ``merge_k``: the claimed identity's
  registered anchor lies within ``merge_k sigma`` of another's at that frame, so the frame
  cannot tell the two apart), ``no_spacing`` (default threshold only: another identity
  shares the claimed place, spacing 0), or ``verifier_abstained`` for a verifier that does
  not say why;
- ``start_frame`` / ``start_identity`` = the frame of the row's track's start and the anchor
  identity whose place it holds (null: none);
- ``lookalike_id`` / ``lookalike_um`` = the identity, other than the row's own, whose
  registered anchor position is nearest to the row, and that distance (verifiers that
  register the anchor only; null otherwise), and ``lookalike_x_um, lookalike_y_um[,
  lookalike_z_um]`` where the registration puts that identity in the row's frame;
- ``expected_x_um, expected_y_um[, expected_z_um]`` = where the registration puts the neuron
  the row's track started on in the row's frame (from which ``score`` measures before its
  margin excess and track pooling); null for verifiers that do not register and where it
  says nothing;
- ``event`` = the rank of the event (:mod:`trackverify.audit.events`) covering the row, null
  when none.

Suspect segments: per predicted id, its audited observations in frame order; a segment is a
maximal run of consecutive observations none of which is certified (missing frames of that
id do not break a run); each observation's ``segment`` column holds its segment's rank.
A segment's ``reason`` is the abstention reason all of its observations share (else null).
Segments whose ``reason`` is ``not_in_anchor_frame`` or ``no_anchor_identity`` (an uncovered
id: no start to judge it against, but an identity to check by hand at its ``first_frame``) come
last; the others are ranked by the mean relative score of their scored rows (descending;
a run with none scored after every scored one), then by the number of flagged observations
(descending), then by the largest relative score, then the largest score (all rounded to
1e-6), then by length, then by recording, id and first frame: the review budget is counted
in observations, so the list leads with the most evidence per observation reviewed (the
key chosen on the synthetic specimen by ``benchmarks/bench_review_ranking.py``).

Events (each mistake once: :mod:`trackverify.audit.events`), joins (a later track that
continues an anchor identity) and each anchor identity's continuity (its pieces:
:mod:`trackverify.audit.joins`) are read from the verdicts.

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

import pandas as pd

from trackverify.audit.result import (DEFAULT_THRESHOLD_SPACINGS, AuditResult, Threshold,
                                      audited, row_counts)
from trackverify.audit.segments import segments_and_membership, track_summary
from trackverify.audit.verdicts import choose_threshold, judge_recording
from trackverify.errors import InputError, naming_input
from trackverify.values import is_integer

#: Most recordings one audit takes. Each recording is registered and scored on its own, at a
#: fixed cost of about 20 ms of CPU (40 ms of wall time on a loaded 2-core machine) even when
#: it holds one row; the bound keeps that cost under 30 s of CPU (docs/evidence/robustness.md:
#: 10^5 one-row recordings ran past an hour). Larger cohorts are audited in parts.
MAX_RECORDINGS = 1000

#: What every judged observation answers (``audit.json``'s ``question``; the module
#: docstring's definition).
QUESTION = ("Is the observation on the neuron its track started on? A track is one "
            "predicted id; its start is its first observation in a registered frame (the "
            "anchor frame for an id there, trusted as a person checked it; an id's own first "
            "observation otherwise), which is not judged. A start names its neuron by where "
            "it sits: the anchor identity whose registered place the one-to-one assignment "
            "gives its detection (start_identity), else its own place carried by the "
            "registration. Every other observation with an id is certified, flagged or "
            "abstained (with a reason).")


def audit(tracks: pd.DataFrame | str | os.PathLike,
          detections: pd.DataFrame | str | os.PathLike | None = None, *,
          anchor_frame: int | None = None, verifier=None,
          threshold_um: float | None = None, calibration: str | os.PathLike | None = None,
          out: str | os.PathLike | None = None,
          source: str = "<tracks>", detections_source: str = "<detections>",
          fmt: str | None = None, columns: str | dict | None = None,
          pixel_size: str | tuple | None = None, units: str | None = None,
          recording: str | None = None, detections_as_evidence: bool = False,
          jobs: int = 1, executor: str = "process",
          progress: Callable[[str, int, int], None] | None = None,
          warn: Callable[[str], None] | None = None) -> AuditResult:
    """Which identities of a tracker's output can be trusted, with no reference tracks.

    ``tracks`` is the tracker's output (see the module docstring), a table or a file any
    reader takes (``fmt``: the format's name, detected when None); ``detections`` optionally
    every detection of each frame (a table or a CSV / Parquet file): the positions of a
    tracker output that names its detections but has none, and, with
    ``detections_as_evidence``, identity-free evidence for the registration too (every
    detection, labelled or not; off by default: on the real recording it flags more correct
    rows than wrong ones, docs/guide/audit.md). ``jobs`` recordings are judged at once on
    ``executor`` (:func:`trackverify.execute.ordered_map`: the same result for any number). A
    file and a table are read alike, by the one reader of tracks
    (:func:`trackverify.io.tracks.read_tracks`: ``columns`` renames, ``pixel_size`` converts
    pixels, ``units="um"`` says mapped coordinates are micrometres, ``recording`` names a
    table's one recording); ``warn`` receives each units warning, also kept in
    ``summary["input"]``. ``verifier`` is a name, ``module:Class`` or a verifier object
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
        >>> sorted(result.observations["verdict"].dropna().unique())  # frame 0: not judged
        ['certified']
        >>> result.summary["counts"]["anchor_frame"], result.summary["counts"]["audited"]
        (25, 125)
        >>> len(result.segments)
        0
        >>> pixels = tracks.rename(columns={"frame": "t", "x_um": "x_px", "y_um": "y_px"})
        >>> read = trackverify.audit(pixels, columns="frame=t,x_um=x_px,y_um=y_px",
        ...                          pixel_size="1").summary["input"]
        >>> read["columns"], read["calibration"]["source"]
        ({'frame': 't', 'x_um': 'x_px', 'y_um': 'y_px'}, '--pixel-size')
    """
    from trackverify.io.tracks import read_tracks

    if isinstance(tracks, (str, os.PathLike)):
        source = str(tracks)
    if isinstance(detections, (str, os.PathLike)):
        detections_source = str(detections)
    inputs = {"tracks": source, "detections": None if detections is None else detections_source,
              "calibration": None if calibration is None else str(calibration)}
    if out is not None:
        from trackverify.io.paths import check_out_overlap

        check_out_overlap(out, inputs)
    if anchor_frame is not None and not is_integer(anchor_frame):  # not 1.5, "1" nor True
        raise InputError(f"anchor_frame must be an integer frame number, got {anchor_frame!r}",
                         source="--anchor-frame")
    threshold, scorer = choose_threshold(threshold_um, calibration, verifier)
    given = read_tracks(tracks, "predictions", detections=detections, fmt=fmt, columns=columns,
                        pixel_size=pixel_size, units=units, recording=recording, source=source,
                        detections_source=detections_source, one_per_detection=True)
    for text in given.warnings if warn is not None else ():
        warn(text)
    table, dets = _audited_table(given.table, source), given.detections
    parts, thresholds = [], {}
    recordings = pd.unique(table["recording"])
    _check_recordings(len(recordings), source)
    from trackverify.reference_check.core import check_anchor_layout
    with naming_input(source):  # before any verifier: a frame too crowded to check its labels
        check_anchor_layout(table, "pred_id", anchor_frame)
    evidence = dets if detections_as_evidence else None
    by_frame = progress is not None and hasattr(scorer, "on_frame") and jobs == 1

    def tasks():  # drawn one at a time: in this process, frames are reported while registering
        for recording, rows in table.groupby("recording", sort=False):
            if by_frame:
                scorer.on_frame = (lambda done, total, name=str(recording):
                                   progress(f"{name}: frames", done, total))
            yield (rows, None if evidence is None else
                   evidence[evidence["recording"] == recording],
                   scorer, anchor_frame, threshold, source)
    from trackverify.execute import ordered_map

    with naming_input(source):  # a refusal about a recording names the tracks file
        for i, (scored, used) in enumerate(ordered_map(_judged, tasks(), jobs, executor)):
            recording = str(scored["recording"].iat[0])
            if progress is not None:
                progress(recording, i + 1, len(recordings))
            parts.append(scored)
            thresholds[recording] = used
    if hasattr(scorer, "on_frame"):
        scorer.on_frame = None
    observations = pd.concat(parts).sort_index(kind="stable")
    segments, observations["segment"] = segments_and_membership(observations)
    from trackverify.audit.events import KINDS, find_events

    events, observations["event"] = find_events(observations)
    from trackverify.audit.joins import continuity, continuity_summary, find_joins

    joins = find_joins(observations, events)
    pieces = continuity(observations, joins)
    per_track = track_summary(observations)
    summary = _summary(observations, segments, scorer, threshold, thresholds, anchor_frame,
                       None if detections is None else
                       "positions and evidence" if detections_as_evidence else "positions")
    summary["counts"]["events"] = int(len(events))
    summary["counts"]["events_by_kind"] = {k: int(events["kind"].eq(k).sum()) for k in KINDS}
    summary["continuity"] = continuity_summary(pieces)
    summary["inputs"] = inputs
    summary["input"] = given.record  # how the tracks were read: reader, mapping, units
    from trackverify.reference_check import anchor_contradictions  # labels the next frames contradict
    summary["anchor_contradictions"] = anchor_contradictions(  # the detections' positions, as given
        table, dets, id_column="pred_id", anchor_frame=anchor_frame).to_dict("records")
    result = AuditResult(observations.reset_index(drop=True), segments, per_track, summary,
                         events, joins, pieces)
    if out is not None:  # checked above, before any work
        from trackverify.audit.write import write_outputs

        write_outputs(result, out)
    return result


def _judged(task: tuple):
    """One recording judged (:func:`judge_recording` of the task's arguments): a module-level
    function, so a process pool or Ray can run it."""
    return judge_recording(*task)


def _audited_table(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """The tracker output as the audit judges it: with positions (refused otherwise), without
    a reference's ``track`` column, each row one detection (numbered within its frame when
    the output names none: for the audit's own use only)."""
    from trackverify.io.tracks import require_positions

    if "track" in table.columns:
        raise InputError("the tracker output has a 'track' column: audit takes no reference "
                         "(use `trackverify evaluate` or `run` when reference tracks exist)",
                         source=source, column="track")
    require_positions(table, source)
    if "detection" in table.columns:
        return table
    return table.assign(detection=table.groupby(["recording", "frame"], sort=False).cumcount())


def _check_recordings(count: int, source: str) -> None:
    """Refuse more than :data:`MAX_RECORDINGS` recordings before any of them is scored."""
    if count > MAX_RECORDINGS:
        raise InputError(f"{count} recordings, more than the {MAX_RECORDINGS} one audit takes "
                         "(each is scored on its own, about 40 ms each even for one row): "
                         "audit the recordings in parts", source=source, column="recording")


def _summary(observations, segments, scorer, threshold: Threshold, used: dict, anchor_frame,
             detections_use: str | None) -> dict:
    from trackverify.verifiers import recorded_options

    judged = observations[audited(observations)]
    reasons = judged.loc[judged["verdict"].eq("abstained"), "reason"].value_counts()
    return {
        "verifier": getattr(scorer, "name", type(scorer).__name__),
        "evidence": getattr(scorer, "evidence", None),
        "verifier_options": recorded_options(scorer),
        "anchor_frame": "first frame of each recording" if anchor_frame is None else int(anchor_frame),
        "question": QUESTION,
        "detections_table": detections_use == "positions and evidence",  # as evidence
        "detections": detections_use,  # None, "positions" or "positions and evidence"
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
        "counts": {**row_counts(observations),
                   "abstained_by_reason": {str(k): int(v) for k, v in reasons.items()},
                   "suspect_segments": int(len(segments))},
    }
