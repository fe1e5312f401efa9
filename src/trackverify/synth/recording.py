"""How a real recording sees the specimen: shape, visibility, extra points, gaps, re-centring.

The motion levels ``still`` .. ``fast`` observe every neuron in every frame, in a lab frame,
and their detections are the observation rows. A *recording model*
(:data:`RECORDING_MODELS`, so far only for ``freely_moving``) adds what a real volumetric
recording of a freely moving worm does to the same moving anatomy, in this order:

The level's motion moves the body (:mod:`trackverify.synth.motion`); the per-neuron jitter
there (each neuron's slow wander relative to the body) has the model's
``neuron_jitter_um``, ``jitter_correlation`` and spatial ``jitter_length_um``: the real head
deforms in ways no quadratic map of the anchor explains, while neighbours stay apart.

1. **Body shape.** The anatomy is laid on its principal axes (first = body axis -> y, second
   -> x, third -> z, centred on its centroid) and each axis is scaled by ``axis_scale``
   (the real frame 0's principal standard deviation over the model's).
2. **Which neurons are seen.** Per animal, ``detected_share`` of the anatomy's neurons are
   ever detected, drawn in random order with a hard core: a neuron within
   ``detected_spacing_um`` of one already drawn is skipped (a detector merges close nuclei);
   of those, ``labelled_share`` carry a reference identity (``track``), drawn the same way
   with ``labelled_spacing_um`` (annotators label the neurons they can tell apart) and, where
   ``labelled_axis_width_um`` is set, weighted towards the middle of the body: neuron ``i``
   has weight ``w_i = exp(-|u_i / W|^p / 2)`` (``W`` the width, ``p`` =
   ``labelled_axis_power``: 2 Gaussian, larger a flatter middle with sharper ends), ``u_i`` its frame-0 body-axis coordinate minus
   the detected neurons' median, and the drawn order sorts ``-log(U_i) / w_i`` ascending
   (``U_i`` uniform: weighted sampling without replacement; annotators label the crowded
   middle of the head more completely than its ends). Where ``labelled_spacing_tilt`` =
   ``beta`` is non-zero the weight is also multiplied by ``exp(-beta c_i)``, ``c_i =
   (2 F_s(s_i) - 1) (2 F_r(r_i) - 1)``: ``s_i`` the neuron's frame-0 nearest-neighbour
   distance among the detected neurons, ``r_i`` its distance from their centroid, ``F`` the
   mid-rank ``(rank - 1/2) / n`` (ranks 1..n, ties averaged). ``c`` is the summand of the
   Spearman correlation of spacing with radius, so ``beta > 0`` is the exponential tilt of
   uniform labelling that lowers it (fewer close neighbours crowded in the middle, more
   far out: the real recording's labelled neurons have a weaker spacing-radius
   correlation than the anatomy's). The rest are *unlabelled* detections
   (persistent, identity-free). Where the hard core leaves too
   few, the skipped neurons fill up in their drawn order.
3. **Mislocalised detections.** A random ``outlier_share`` of (neuron, frame) positions
   gets an extra isotropic Gaussian error of ``outlier_noise_um`` per axis (never in frame
   0): the heavy tail of the real frame-to-frame residual.
4. **Merged detections.** In every frame after the anchor, of two neurons' detections closer
   than ``merge_distance_um`` the detector reports one (chosen at random): nuclei do not
   overlap and a detector cannot split them.
5. **Missed detections.** Each (neuron, frame) is missed with probability ``miss_rate``
   (never in frame 0, the curated anchor); a random ``anchor_absent_share`` of the labelled
   neurons is missed in frame 0 only (identities first labelled later: no anchor).
6. **Spurious detections.** Each frame gets ``Poisson(spurious_per_frame)`` points, each at a
   random detected neuron's position plus an isotropic Gaussian offset of
   ``spurious_offset_um`` per axis (short-lived: no identity, not in the next frame).
7. **Missing frames.** Each frame number ``t >= 1`` starts a gap with probability
   ``gap_rate``; the gap's length is drawn from ``gap_lengths`` (probabilities of 1, 2, ...
   frames). The frames of a gap have no rows at all (they are skipped, as in the source).
   Frame 0 and every frame number divisible by 10 are never missing: the corruption suite
   starts and recovers at given frames (SPEC 300 / 700, the evidence's 30 % / 70 %, the
   certification simulation's 90 / 210), which must be present.
8. **Per-volume re-centring.** Every frame's coordinates are re-centred on the median of that
   frame's detections (each axis): the source data carry no lab frame.

The fitted values and how they were measured: ``docs/reference/specimen.md`` and
``benchmarks/real_motion_stats.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from scipy.stats import rankdata


@dataclass(frozen=True)
class RecordingModel:
    """What a real recording does to the moving anatomy (module docstring, steps 1-8)."""

    axis_scale: tuple[float, float, float]  # body axis (y), second (x), third (z)
    detected_share: float
    labelled_share: float
    detected_spacing_um: float
    labelled_spacing_um: float
    miss_rate: float
    merge_distance_um: float
    anchor_absent_share: float
    spurious_per_frame: float
    spurious_offset_um: float
    gap_rate: float
    gap_lengths: tuple[float, ...]  # P(gap of 1 frame), P(2 frames), ...
    localisation_noise_um: float  # replaces SpecimenConfig.localisation_noise_um
    neuron_jitter_um: float  # replaces SpecimenConfig.neuron_jitter_um
    jitter_correlation: float  # rho of the per-neuron AR(1) jitter (others: 0.9)
    jitter_length_um: float  # spatial smoothing of the jitter (0: independent per neuron)
    outlier_share: float
    outlier_noise_um: float
    source: str  # where the values were measured
    labelled_axis_width_um: float | None = None  # W of step 2 (None: labelled drawn uniformly)
    labelled_axis_power: float = 2.0  # p of step 2
    labelled_spacing_tilt: float = 0.0  # beta of step 2 (0: no spacing-radius tilt)


#: Fitted to the development recording ``fdnc-nerve-freely-moving`` (nerve_moving_a) by
#: ``benchmarks/real_motion_stats.py --fit`` (the rule of each value: docs/reference/specimen.md).
RECORDING_MODELS: dict[str, RecordingModel] = {
    "freely_moving": RecordingModel(
        axis_scale=(1.62, 1.54, 1.44), detected_share=0.555, labelled_share=0.708,
        detected_spacing_um=7.0, labelled_spacing_um=3.5, outlier_share=0.0,
        outlier_noise_um=0.0, merge_distance_um=2.5, miss_rate=0.057,
        anchor_absent_share=0.057, spurious_per_frame=19.1, spurious_offset_um=3.3,
        gap_rate=0.101, gap_lengths=(57 / 63, 5 / 63, 1 / 63), localisation_noise_um=0.64,
        neuron_jitter_um=1.25, jitter_correlation=0.997, jitter_length_um=3.0,
        # uniform labelling: the fitted weighting (45 um, power 8) matches the labelled
        # neurons' reach along the body, the fitted spacing-radius tilt (beta 52) their
        # spacing-radius correlation, neither the verifiers (docs/reference/specimen.md)
        labelled_axis_width_um=None, labelled_spacing_tilt=0.0,
        source="fdnc-nerve-freely-moving (NeRVE/fDNC), recording nerve_moving_a"),
}


def principal_body(anatomy: np.ndarray, axis_scale) -> np.ndarray:
    """The anatomy centred on its centroid, on its principal axes (1st -> y, 2nd -> x, 3rd -> z),
    each scaled by ``axis_scale`` (ordered 1st, 2nd, 3rd). Axis signs: each principal
    direction points where its largest-magnitude component is positive (deterministic)."""
    centred = anatomy - anatomy.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    vt = vt * np.sign(vt[np.arange(3), np.abs(vt).argmax(axis=1)])[:, None]
    principal = (centred @ vt.T) * np.asarray(axis_scale, dtype=np.float64)
    return principal[:, [1, 0, 2]]


def missing_frames(rng: np.random.Generator, frames: int, model: RecordingModel) -> np.ndarray:
    """Boolean (frames,): True where the frame number is missing (a gap); never frame 0 nor a
    multiple of 10 (module docstring)."""
    starts = np.flatnonzero(rng.random(frames) < model.gap_rate)
    lengths = 1 + rng.choice(len(model.gap_lengths), size=len(starts),
                             p=np.asarray(model.gap_lengths) / np.sum(model.gap_lengths))
    missing = np.zeros(frames + int(lengths.max(initial=0)), dtype=bool)
    for offset in range(int(lengths.max(initial=0))):  # at most len(gap_lengths) passes
        missing[(starts + offset)[offset < lengths]] = True
    missing = missing[:frames]
    missing[::10] = False
    return missing


def record(positions: np.ndarray, model: RecordingModel, rng: np.random.Generator,
           recording: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(observations, detections)`` of one animal from its moving anatomy (steps 2-8).

    ``positions``: (frames, neurons, 3) in um (already deformed, with localisation noise).
    Observations are the labelled rows (``track`` 0..L-1 in anatomy order, ``pred_id`` a
    fixed relabelling); detections are every point of each present frame with ``kind``
    (``labelled`` / ``unlabelled``); detection ids are a random permutation within a frame.
    """
    frames, neurons = positions.shape[:2]
    detected = hard_core_subset(positions[0], rng.permutation(neurons),
                                model.detected_spacing_um,
                                max(2, round(model.detected_share * neurons)))
    n_labelled = max(2, round(model.labelled_share * len(detected)))
    labelled = hard_core_subset(positions[0, detected],
                                labelling_order(positions[0, detected], model, rng),
                                model.labelled_spacing_um, n_labelled)
    is_labelled = np.zeros(len(detected), dtype=bool)
    is_labelled[labelled] = True
    seen = positions[:, detected].copy()
    n = len(detected)
    mislocalised = rng.random(seen.shape[:2]) < model.outlier_share
    mislocalised[0] = False
    seen[mislocalised] += rng.normal(0.0, model.outlier_noise_um, size=(int(mislocalised.sum()), 3))
    frame = np.repeat(np.arange(frames), n)
    point = np.tile(np.arange(n), frames)
    keep = rng.random(frames * n) >= model.miss_rate
    keep[frame == 0] = True
    absent = labelled[rng.permutation(n_labelled)[:round(model.anchor_absent_share * n_labelled)]]
    keep[absent] = False  # frame 0's rows come first: row = point
    coords = seen.reshape(-1, 3)
    keep &= ~merged(frame, coords, model.merge_distance_um, rng, keep)
    spurious = rng.poisson(model.spurious_per_frame, size=frames)
    spurious_frame = np.repeat(np.arange(frames), spurious)
    host = rng.integers(n, size=len(spurious_frame))
    spurious_xyz = (seen[spurious_frame, host]
                    + rng.normal(0.0, model.spurious_offset_um, size=(len(spurious_frame), 3)))
    gone = missing_frames(rng, frames, model)
    frame = np.concatenate([frame[keep], spurious_frame])
    point = np.concatenate([point[keep], np.full(len(spurious_frame), -1)])
    coords = np.concatenate([coords[keep], spurious_xyz])
    present = ~gone[frame]
    frame, point, coords = frame[present], point[present], coords[present]
    order = np.argsort(frame, kind="stable")
    frame, point, coords = frame[order], point[order], coords[order]
    coords = coords - _median_per_frame(frame, coords)
    detection = shuffled_rank_within(frame, rng)
    label = np.where(point >= 0, is_labelled[np.maximum(point, 0)], False)
    detections = pd.DataFrame({
        "recording": recording, "frame": frame.astype(np.int64),
        "detection": detection, "x_um": coords[:, 0], "y_um": coords[:, 1], "z_um": coords[:, 2],
        "kind": np.where(label, "labelled", "unlabelled")})
    track_of_point = np.full(n, -1, dtype=np.int64)
    track_of_point[labelled] = np.arange(n_labelled)
    rows = np.flatnonzero(label)
    rows = rows[np.lexsort((track_of_point[point[rows]], frame[rows]))]
    track = track_of_point[point[rows]]
    pred_of_track = 1000 + rng.permutation(n_labelled)
    observations = pd.DataFrame({
        "recording": recording, "frame": frame[rows].astype(np.int64), "track": track,
        "detection": detection[rows], "x_um": coords[rows, 0], "y_um": coords[rows, 1],
        "z_um": coords[rows, 2], "pred_id": pred_of_track[track].astype(np.int64),
        "pred_valid": True})
    return observations, detections


def labelling_order(anchor: np.ndarray, model: RecordingModel,
                    rng: np.random.Generator) -> np.ndarray:
    """The order in which the detected neurons (frame-0 positions ``anchor``, body axis = y)
    are offered for a reference identity (module docstring, step 2): a uniform permutation,
    or with ``labelled_axis_width_um`` = W and / or ``labelled_spacing_tilt`` = beta the
    weighted one, ``argsort(-log(U) / w)``, ``log w = -|(y - median y) / W|^p / 2 - beta c``
    (``p`` = ``labelled_axis_power``; ``c`` = :func:`spacing_radius_concordance`)."""
    if model.labelled_axis_width_um is None and model.labelled_spacing_tilt == 0:
        return rng.permutation(len(anchor))
    log_weight = -model.labelled_spacing_tilt * spacing_radius_concordance(anchor)
    if model.labelled_axis_width_um is not None:
        u = anchor[:, 1] - np.median(anchor[:, 1])
        log_weight = log_weight - (np.abs(u / model.labelled_axis_width_um)
                                   ** model.labelled_axis_power / 2)
    # -log(U) / w in log space (w underflows far from the middle): log(-log U) - log w
    key = np.log(-np.log(rng.random(len(anchor)))) - log_weight
    return np.argsort(key, kind="stable")


def spacing_radius_concordance(points: np.ndarray) -> np.ndarray:
    """Per point, ``c_i = (2 F_s(s_i) - 1) (2 F_r(r_i) - 1)`` in (-1, 1): ``s_i`` its distance to
    the nearest other point, ``r_i`` its distance from the points' centroid, ``F(x_i) =
    (rank(x_i) - 1/2) / n`` (ranks 1..n, ties averaged). ``mean(c) * 3 n^2 / (n^2 - 1)`` is the
    Spearman correlation of ``s`` with ``r`` up to ties (the two of a mutual nearest pair share
    ``s``); positive where a neuron is close to its neighbour near the centre or far from it far
    out."""
    n = len(points)
    spacing = cKDTree(points).query(points, k=2)[0][:, 1]
    radius = np.linalg.norm(points - points.mean(axis=0), axis=1)
    centred = [2 * (rankdata(x) - 0.5) / n - 1 for x in (spacing, radius)]
    return centred[0] * centred[1]


def merged(frame: np.ndarray, coords: np.ndarray, radius: float, rng: np.random.Generator,
           candidates: np.ndarray) -> np.ndarray:
    """Boolean: the candidate rows (frame > 0) whose nearest candidate of the same frame is
    closer than ``radius`` and has the higher random priority (one of each close pair goes)."""
    priority = rng.random(len(frame))
    out = np.zeros(len(frame), dtype=bool)
    rows = np.flatnonzero(candidates & (frame > 0))
    if radius <= 0 or len(rows) < 2:
        return out
    span = np.ptp(coords[rows], axis=0).max() + 2 * radius + 1.0  # frames far apart in x
    points = coords[rows] + np.c_[frame[rows] * span, np.zeros((len(rows), 2))]
    distance, nearest = cKDTree(points).query(points, k=2)
    close = distance[:, 1] < radius
    out[rows[close & (priority[rows] < priority[rows[nearest[:, 1]]])]] = True
    return out


def hard_core_subset(points: np.ndarray, order: np.ndarray, radius: float,
                     count: int) -> np.ndarray:
    """``count`` indices of ``points`` (sorted): taken in ``order``, skipping a point closer
    than ``radius`` to one already taken; if fewer than ``count`` remain, the skipped ones
    fill up in ``order``."""
    distance = np.linalg.norm(points[:, None] - points[None], axis=-1)
    taken = np.zeros(len(points), dtype=bool)
    for i in order:  # one pass over the anatomy's neurons (<= 189)
        if taken.sum() == count:
            break
        if not (taken & (distance[i] < radius)).any():
            taken[i] = True
    skipped = order[~taken[order]][:count - int(taken.sum())]
    taken[skipped] = True
    return np.flatnonzero(taken)


def _median_per_frame(frame: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """Per row, the median (each axis) of the rows of its frame (``frame`` sorted)."""
    starts = np.flatnonzero(np.r_[True, frame[1:] != frame[:-1]])
    ends = np.r_[starts[1:], len(frame)]
    medians = np.empty((len(starts), coords.shape[1]))
    for i, (a, b) in enumerate(zip(starts, ends)):  # one per frame, a vectorised median each
        medians[i] = np.median(coords[a:b], axis=0)
    return np.repeat(medians, ends - starts, axis=0)


def shuffled_rank_within(group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``0..n_g-1`` within each group (``group`` sorted ascending)."""
    order = np.lexsort((rng.random(len(group)), group))
    starts = np.searchsorted(group, group[order], side="left")
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = np.arange(len(group)) - starts
    return rank
