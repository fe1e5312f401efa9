"""Protocol ``tracking_gt``: predictions scored against reference tracks.

Two families of numbers, side by side (SPEC sections 3 and 7):

- the oracle-association diagnostics of :mod:`trackverify.metrics.association`
  (``correct_observation_rate``, ``identity_switches``, ``fragmentations``,
  ``extra_predicted_observations``), defined by the benchmark;
- the canonical metrics of :mod:`trackverify.metrics.mot` (HOTA, CLEAR / MOTA, Identity / IDF1),
  with TrackEval's definitions.

Linking predictions to reference observations:

- When both tables carry ``detection``, a prediction belongs to the reference observation on
  the same (recording, frame, detection) (:func:`trackverify.metrics.association.link_predictions`);
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
import functools

import numpy as np
import pandas as pd

from trackverify.metrics import mot
from trackverify.metrics.association import (IdentityReport, identity_report, link_smallest,
                                   pool_diagnostics, same_key)
from trackverify.errors import ConfigError, InputError
from trackverify.tables import (column_codes, coordinate_columns, first_repeat, joint_codes,
                                plain, single_value, sorted_codes, validate_pair)
from trackverify.values import is_real

POOLED = "pooled"
#: Most (reference tracks x predicted ids) of one recording scored: the identity alignments
#: (SPEC's maximum-overlap alignment, TrackEval's IDF1) solve a dense assignment of that many
#: cells, so a file of 37,009 one-point tracks would ask for 11 GB per matrix and never end.
MAX_IDENTITY_CELLS = 5 * 10**7


class TrackingResults(dict):
    """``{recording: metrics, ..., "pooled": metrics}`` plus which tracks and frames are wrong:
    ``tracks`` (one row per reference track: ``recording`` and
    :data:`trackverify.metrics.association.TRACK_COLUMNS`), ``events`` (every identity switch:
    ``recording`` and :data:`trackverify.metrics.association.EVENT_COLUMNS`) and ``observations`` (one
    row per reference observation: ``recording`` and
    :data:`trackverify.metrics.association.OBSERVATION_COLUMNS`, whether a valid prediction is on it
    and whether its id is aligned to the observation's track).

    The three tables are given, or built when first read from ``reports``, the
    ``(recording, IdentityReport)`` of each recording (then stacked by
    :func:`stack_by_recording`): the metrics cost nothing of them."""

    def __init__(self, metrics: dict, tracks: pd.DataFrame | None = None,
                 events: pd.DataFrame | None = None, observations: pd.DataFrame | None = None,
                 *, reports: list[tuple[object, IdentityReport]] = ()):
        super().__init__(metrics)
        self._reports = list(reports)
        for key, table in (("tracks", tracks), ("events", events),
                           ("observations", observations)):
            if table is not None:  # given: the cached value of the property
                self.__dict__[key] = table

    def _stacked(self, key: str) -> pd.DataFrame:
        # the reports' tables are ours: a single one may take the recording column itself
        return stack_by_recording([(name, getattr(report, key)) for name, report in self._reports],
                                  copy=False)

    @functools.cached_property
    def tracks(self) -> pd.DataFrame:
        return self._stacked("tracks")

    @functools.cached_property
    def events(self) -> pd.DataFrame:
        return self._stacked("events")

    @functools.cached_property
    def observations(self) -> pd.DataFrame:
        return self._stacked("observations")

    def wrong_tracks(self) -> pd.DataFrame:
        """The reference tracks not followed correctly throughout, the most wrong observations
        (``observations - correct``) first, ties in table order."""
        tracks = self.tracks
        if not len(tracks):
            return tracks
        wrong = tracks[(tracks["correct"] < tracks["observations"]).to_numpy()]
        most = (wrong["correct"] - wrong["observations"]).sort_values(kind="stable").index
        return wrong.loc[most]


@dataclasses.dataclass(frozen=True)
class RecordingScore:
    """One recording scored (:func:`score_recording`): ``metrics`` (diagnostics and canonical
    metrics), ``counts`` (the canonical sufficient statistics, for :func:`pool_recordings`)
    and ``identity`` (:class:`trackverify.metrics.association.IdentityReport`: the per-track breakdown,
    the switch events and each observation's state)."""

    metrics: dict
    counts: mot.SequenceCounts
    identity: IdentityReport


def evaluate_tracking(reference_df: pd.DataFrame, predictions_df: pd.DataFrame,
                      zero_distance_um: float = 5.0, *, reference_source: str = "<reference>",
                      predictions_source: str = "<predictions>") -> TrackingResults:
    """Score predictions against reference tracks, per recording and pooled.

    Returns ``{recording: metrics, ..., "pooled": metrics}`` (a :class:`TrackingResults`,
    whose ``tracks`` and ``events`` say which reference tracks are wrong, from which frame,
    and every identity switch). Each ``metrics`` holds the
    oracle diagnostics (``reference_observations, correct_observations,
    correct_observation_rate, identity_switches, fragmentations,
    extra_predicted_observations``) and the canonical metrics (``hota, deta, assa, loca,
    detre, detpr, assre, asspr, mota, motp, idsw, frag, idf1, idp, idr`` and the counts
    ``clr_tp, clr_fn, clr_fp, idtp, idfn, idfp``, and MT / PT / ML: ``mt, pt, ml`` by
    TrackEval's definition, ``mt_pymotmetrics, pt_pymotmetrics, ml_pymotmetrics`` by
    py-motmetrics'); undefined values are ``None``. Pooled
    diagnostics are sums of counts with the rate recomputed; pooled canonical metrics are
    TrackEval's combined-sequence results (see :func:`trackverify.metrics.mot.combine`).
    Inputs are never modified. Example::

        result = trackverify.evaluate_tracking(reference, predictions)
        result["pooled"]["idf1"], result.tracks.query("correct < observations")
    """
    # a real number (not text such as "5", not a bool), finite and within the float range
    if not is_real(zero_distance_um, low=0, strict=True, float_range=True):
        raise ConfigError(f"zero_distance_um must be a positive number, got {zero_distance_um!r}")
    zero_distance = float(zero_distance_um)
    ref, pred, by_detection = validate_pair(reference_df, predictions_df, reference_source,
                                            predictions_source)
    codes = recording_codes(ref, pred)
    check_predictions(ref, pred, predictions_source, reference_source, codes)
    recordings = list(_by_recording(ref, pred, codes))
    names = [recording for recording, _, _ in recordings]
    scored = [score_recording(ref_rec, pred_rec, zero_distance, by_detection, predictions_source)
              for _, ref_rec, pred_rec in recordings]
    results = {name: score.metrics for name, score in zip(names, scored)}
    results[POOLED] = pool_recordings([(score.metrics, score.counts) for score in scored])
    return TrackingResults(results, reports=[(name, score.identity)
                                             for name, score in zip(names, scored)])


def stack_by_recording(tables: list[tuple[object, pd.DataFrame]], copy: bool = True
                       ) -> pd.DataFrame:
    """``(recording, table)`` pairs, one table below the other, behind a ``recording`` column.
    ``copy=False``: a single table may take the column itself (the caller's to give)."""
    if not tables:
        return pd.DataFrame()
    if len(tables) == 1:  # one recording: the table behind its name, no concatenation
        recording, table = tables[0]
        if copy:
            table = table.copy()
        table.insert(0, "recording", _repeated(recording, len(table)))
        return table
    return pd.concat([t.assign(recording=r)[["recording", *t.columns]] for r, t in tables],
                     ignore_index=True)


def _repeated(value, n: int):
    """A column of ``n`` copies of ``value``, of the type pandas gives the value (text built
    in Arrow at once rather than value by value); other values as they are (pandas repeats
    them)."""
    dtype = pd.Series([value]).dtype
    if isinstance(value, str) and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        import pyarrow as pa

        # the Arrow buffers written at once: the text n times and the offsets k * len(text)
        text = np.frombuffer(value.encode("utf-8"), dtype=np.uint8)
        offsets = np.arange(n + 1, dtype=np.int64)
        offsets *= len(text)
        array = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets),
                                                 pa.py_buffer(np.tile(text, n)))
        return pd.array(array, dtype=dtype)
    return value


def recording_codes(ref: pd.DataFrame, pred: pd.DataFrame
                    ) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """The reference's recordings (sorted), the code of each reference row's recording and
    of each prediction row's (``-1``: a recording the reference does not have); read-only
    arrays (one recording: a single zero seen by every row)."""
    r, p = ref["recording"], pred["recording"]
    if single_value(r) and (len(p) == 0 or (single_value(p) and p.iloc[0] == r.iloc[0])):
        zero = np.zeros(1, np.int64)
        return (pd.Index([r.iloc[0]]), np.broadcast_to(zero, (len(r),)),
                np.broadcast_to(zero, (len(p),)))
    codes, names = pd.factorize(r, sort=True)
    names = pd.Index(names)
    return names, codes.astype(np.int64, copy=False), names.get_indexer(p)


def _by_recording(ref: pd.DataFrame, pred: pd.DataFrame, recordings=None):
    """``(recording, reference rows, prediction rows)`` in sorted recording order, rows in
    table order (predictions of recordings the reference lacks: refused before);
    ``recordings``: :func:`recording_codes`, when known."""
    names, codes, pred_codes = recordings or recording_codes(ref, pred)
    if len(names) == 1:
        yield plain(names[0]), ref, pred
        return
    ref_order = np.argsort(codes, kind="stable")
    pred_order = np.argsort(pred_codes, kind="stable")
    ref_cut = np.searchsorted(codes[ref_order], np.arange(len(names) + 1))
    pred_cut = np.searchsorted(pred_codes[pred_order], np.arange(len(names) + 1))
    for k, name in enumerate(names):
        yield (plain(name), ref.iloc[ref_order[ref_cut[k]:ref_cut[k + 1]]],
               pred.iloc[pred_order[pred_cut[k]:pred_cut[k + 1]]])


def check_identity_size(n_tracks: int, n_ids: int, ref_rec: pd.DataFrame,
                        source: str | None) -> None:
    """Refuse one recording whose ``n_tracks x n_ids`` exceeds :data:`MAX_IDENTITY_CELLS`."""
    if n_tracks * n_ids > MAX_IDENTITY_CELLS:
        recording = ref_rec["recording"].iloc[0] if len(ref_rec) else "?"
        raise InputError(f"recording '{recording}' has {n_tracks} reference tracks and "
                         f"{n_ids} predicted ids: an identity alignment of "
                         f"{n_tracks * n_ids:.3g} pairs, more than the {MAX_IDENTITY_CELLS:.0e} "
                         "scored (are the tracks linked?)", source=source)


def compact_frames(gt_frame: np.ndarray, pred_frame: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The frame numbers as the metric kernels take them: as they are when they span at most
    twice the rows, else their ranks among the frames either side holds (order kept).

    The kernels hold arrays as long as the largest frame number, and every metric depends on
    the frames' order only (CLEAR's previous frame is the previous frame with detections on
    both sides, as in TrackEval), so ranks change no number and frames such as
    ``{0, 2**31 - 1}`` cost nothing."""
    n = len(gt_frame) + len(pred_frame)
    if not n or max(int(f.max()) for f in (gt_frame, pred_frame) if len(f)) < 2 * n:
        return gt_frame, pred_frame
    both = np.concatenate((gt_frame, pred_frame))
    ranks = np.unique(both, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return ranks[:len(gt_frame)], ranks[len(gt_frame):]


def score_recording(ref_rec: pd.DataFrame, pred_rec: pd.DataFrame, zero_distance: float,
                    by_detection: bool, predictions_source: str | None = "<predictions>"
                    ) -> RecordingScore:
    """Diagnostics and canonical metrics of one recording (validated tables), the canonical
    sufficient statistics for pooling (:func:`pool_recordings`), and which tracks, frames
    and switches are wrong (one :class:`RecordingScore`, whatever the caller needs).
    ``predictions_source`` names the input in the identity-size refusal (None: unnamed, for
    a caller that names it itself)."""
    valid = pred_rec["pred_valid"].to_numpy(dtype=bool)
    rows = slice(None) if valid.all() else np.flatnonzero(valid)  # the valid predictions
    real_gt_frame = ref_rec["frame"].to_numpy(np.int64)  # for the diagnostics' frame numbers
    gt_frame, pred_frame = compact_frames(real_gt_frame, pred_rec["frame"].to_numpy(np.int64)[rows])
    track_codes, tracks, _ = sorted_codes(ref_rec["track"])
    pred_codes, pred_ids, _ = sorted_codes(pred_rec["pred_id"].iloc[rows])
    check_identity_size(len(tracks), len(pred_ids), ref_rec, predictions_source)
    if not by_detection and len(pred_frame):
        # The valid predictions in frame order (stable) from here on, as the candidate pairs
        # and every matching read them: gathered once, then read in place. Renumbering keeps
        # each frame's predictions in table order, so ties break as before, and the pairs
        # come in the same order (the similarity puts predictions in this order anyway).
        by_frame = mot.frame_order(pred_frame, int(pred_frame.max()) + 1)
        if by_frame is not None:
            rows = by_frame if isinstance(rows, slice) else rows[by_frame]
            pred_frame, (pred_codes,) = mot.in_frame_order(pred_frame, [pred_codes], by_frame)
    if by_detection:
        pg, pp = same_key([gt_frame, ref_rec["detection"].to_numpy()],
                          [pred_frame, pred_rec["detection"].to_numpy()[rows]])
        ps = np.ones(len(pg))
    else:
        cols = coordinate_columns(ref_rec)
        pg, pp, ps = mot.similarity_pairs_by_axis(
            gt_frame, [ref_rec[c].to_numpy(np.float64) for c in cols], pred_frame,
            [pred_rec[c].to_numpy(np.float64)[rows] for c in cols], zero_distance)
    rows = by_frame = None  # spent: freed before the metrics
    # the pairs join detections of one frame with a positive similarity by construction
    seq = mot.sequence_counts(gt_frame, track_codes, pred_frame, pred_codes, pg, pp, ps,
                              checked_pairs=True)
    if by_detection:  # the prediction on an observation's detection (smallest id first)
        linked, extra = link_smallest(len(gt_frame), pg, pred_codes[pp], len(pred_frame))
    else:  # the prediction CLEAR matched to it; extras = the rest
        m_gt, m_pred = seq.clear_matches
        linked = np.full(len(gt_frame), -1, dtype=np.int64)
        linked[m_gt] = pred_codes[m_pred]
        extra = len(pred_frame) - len(m_gt)
        del m_gt, m_pred
    del pg, pp, ps  # the pairs are spent: freed before the diagnostics
    order = seq.gt_order  # the reference rows by (track, frame), shared with the diagnostics
    seq = dataclasses.replace(seq, clear_matches=None, gt_order=None)  # pooled: counts only
    identity = identity_report(real_gt_frame, track_codes, tracks, linked, pred_ids, extra,
                               order=order)
    return RecordingScore({**identity.diagnostics, **mot.finish(seq)}, seq, identity)


def pool_recordings(scored: list[tuple[dict, mot.SequenceCounts]]) -> dict:
    """Pooled diagnostics (sums, rate recomputed) and TrackEval's combined canonical metrics."""
    diagnostics = [metrics for metrics, _ in scored]
    return {**pool_diagnostics(diagnostics), **mot.finish(mot.combine([seq for _, seq in scored]))}


def check_predictions(ref: pd.DataFrame, pred: pd.DataFrame, source: str,
                      reference_source: str = "<reference>", recordings=None) -> None:
    """Refuse a recording named like the pooled results, predictions of a recording the
    reference lacks, and a valid ``pred_id`` twice in one frame (``recordings``:
    :func:`recording_codes`, when known)."""
    recordings, _, pred_recording = recordings or recording_codes(ref, pred)
    if any(isinstance(r, str) and r == POOLED for r in recordings):
        raise InputError(f"a recording may not be called '{POOLED}' (the name of the pooled "
                         "results)", source=reference_source, column="recording")
    if (pred_recording < 0).any():
        row = int(np.flatnonzero(pred_recording < 0)[0])
        name = plain(pred["recording"].iloc[row])
        raise InputError(f"prediction for recording {name!r}, which the reference does not "
                         "have", source=source, column="recording", row=row + 1)
    is_valid = pred["pred_valid"].to_numpy(dtype=bool)
    valid = slice(None) if is_valid.all() else np.flatnonzero(is_valid)  # the columns as they are
    keys = [] if len(recordings) == 1 else [(pred_recording[valid], len(recordings))]
    again = first_repeat(*joint_codes([*keys, column_codes(pred["frame"].iloc[valid]),
                                       column_codes(pred["pred_id"].iloc[valid])]))
    if again is not None:
        row = int(again if isinstance(valid, slice) else valid[again])
        pid = plain(pred["pred_id"].iloc[row])
        raise InputError(f"pred_id {pid!r} is given to two predictions in frame "
                         f"{int(pred['frame'].iloc[row])} (an identity is one object per frame)",
                         source=source, column="pred_id", row=row + 1)



