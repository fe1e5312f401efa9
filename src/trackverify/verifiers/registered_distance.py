"""The deformation-aware verifier ``registered_distance`` (SPEC section 9; evidence: independent).

The anchor frame's reference positions (frame 0, keyed by their frame-0 predicted ids, which
are trusted) are registered onto every later frame's *detections* without reading any
predicted identity; a row is then scored by the distance from its position to the registered
anchor position of its predicted id.

Two steps, kept apart so the warp cannot see identities:

1. :func:`fit_registration` receives coordinates only -- the anchor point set ``A`` (n, D)
   and a table of detections of which it reads ``frame`` and the coordinate columns -- and
   returns the registered anchor positions ``R[t]`` (T, n, D) and the registration's own noise
   scale ``sigma[t]``.
2. :meth:`RegisteredDistance.score` maps each row's predicted id to its anchor index (frame
   0 ids only) and scores it against ``R``.

Registration of frame ``t`` (sequential: it starts from the last registered frame's
*registered* anchor, never from raw detections of an earlier frame, and never from ids):

- start ``Y0``: the better (:func:`_better_start`, identity-free) of ``R[t1]`` (zero velocity)
  and ``R[t1] + (t - t1) / (t1 - t2) * (R[t1] - R[t2])`` (constant velocity over the real frame
  numbers, :func:`constant_velocity`; ``t1``, ``t2`` = the last two registered frames,
  ``R[0] = A``). A *gap* -- a frame number with no detections (a missing volume) -- is
  left unregistered (NaN; its rows abstain for missing evidence) and the next frame's
  prediction extrapolates over the whole gap; for the
  first registered frame, which has no earlier frame to predict from, ``Y0`` is the anchor
  moved by the identity-free *global pose* (:func:`global_pose`: the in-plane rotation and
  translation that lay the most detections within half a neuron spacing of a moved anchor
  point -- a largest-common-point-set vote);
- affine coherent point drift (CPD; Myronenko & Song 2010, Fig. 3) of ``Y0`` onto the frame's
  detections ``X``: a Gaussian mixture centred on the moved anchor points with a uniform
  outlier component ``w`` (:func:`fitted_outlier_weight`: from detection counts); the
  mixture scale ``sigma`` starts at ``frame_sigma`` anchor spacings (after the global pose:
  ``first_frame_sigma`` spacings, at most :data:`MAX_FIRST_SIGMA` anchor RMS radii), is
  re-estimated by every M-step, and EM stops once it settles (``tolerance``);
- non-rigid CPD (Fig. 4) from the affine result: ``T = Y + G W`` with the Gaussian kernel
  ``G_ij = exp(-|a_i - a_j|^2 / (2 beta^2))`` over the *anchor* positions (smoothness along
  the anatomy), regularisation ``lambda``; M-step ``(diag(P1) G + lambda sigma^2 I) W =
  P X - diag(P1) Y``.

Coordinates are centred on the anchor centroid and divided by the anchor's RMS radius, so
``beta`` and ``lambda`` are unit-free (the same defaults serve micrometres and voxels).

Scores and abstention, for a row at frame ``t`` with valid predicted id ``p``:

- ``d`` = distance from the row's position to ``R[t, anchor(p)]``;
- ``alt`` = distance to the nearest *other* registered anchor position;
- **one-to-one assignment** (:func:`assign_detections`, identity-free): per frame, the
  registered anchor points are assigned to the frame's detections (all of them) one to one,
  minimising ``sum min(|R[t, i] - x_j|, c)`` with ``c`` = the anchor's median
  nearest-neighbour spacing (a point left without a detection costs ``c``); the row's
  detection is the frame's detection it sits on. The claim is **contradicted** when the
  assignment gives that detection to another anchor point ``q`` and strictly prefers that
  (:func:`contradicted_claims`: exchanging the two points' detections costs more; an exact
  tie contradicts nothing) -- two anchor points cannot both be the same detection, and the
  assignment says which one fits the whole frame;
- the score is ``d + max(0, d - alt) + c * [contradicted]``: the distance, plus by how much
  another registered anchor is nearer than the claimed one, plus, for a contradicted claim,
  the assignment's own price of the point it would leave without a detection (``c``; no
  free constant);
- that score is in um (``score="distance"``, the default :data:`DEFAULT_SCORE`); with
  ``score="relative"`` it is multiplied by ``c / s_p`` (:func:`spacing_factors`): ``s_p`` =
  the distance from ``p``'s anchor position to the nearest other anchor position
  (:func:`identity_spacings`, anchor coordinates only, never the candidate tracks), ``c`` =
  the median ``s_p``. A swap onto a neighbour costs about the pair's spacing, so
  ``score / s_p`` is the dimensionless evidence; times ``c`` it stays in "um at the
  recording's median spacing" (an identity at the median spacing keeps its score in um);
- the row abstains for **ambiguity** when ``|alt - d| < k * sigma[t]`` (the margin lies inside
  the registration's calibrated uncertainty; ``k`` = ``ambiguity_k``), and for **missing
  evidence** when the prediction is invalid, ``p`` has no anchor, frame ``t`` could not be
  registered, or (relative score) ``s_p = 0``. A row much nearer another anchor
  (``alt - d <= -k sigma``) is not ambiguous: it keeps its (large) score.
  ``one_to_one=False`` drops the assignment term.
- **merged anchors** (``merge_k=m``, :func:`merged_anchors`; 0 = off, the default
  :data:`DEFAULT_MERGE_K`): identity ``p`` is *merged* in frame ``t`` when another identity
  ``q`` has ``|R[t, p] - R[t, q]| < m sigma[t]``; a row whose claimed id is merged at its
  frame abstains for ambiguity, counted under its own reason (``merged``; a row the band
  above already abstains on stays ``ambiguous``). With ``m = 2`` the rule is the mixture's
  own: an equal-weight mixture of two isotropic Gaussians of scale ``sigma`` is unimodal
  exactly when their centres are closer than ``2 sigma``, so the frame cannot tell the two
  anchors apart and neither claim is checkable there. It reads ``R`` and ``sigma`` only.
- **track pooling** (``track_window=h``, :mod:`trackverify.verifiers.pooling`; 0 = off;
  default :data:`DEFAULT_TRACK_WINDOW` = 1): last, each scored row's score becomes
  ``max(s_i, median of the finite scores within +-h rows of its (recording, pred_id) track
  ordered by frame)``; abstained rows stay abstained. It regroups the scores of the claim
  under test by that claim; the fit still reads coordinates only.

``ambiguity_k`` defaults to :data:`DEFAULT_AMBIGUITY_K` (0: with the assignment no band is
needed; the rule that chose it is at the constant); ``calibrate_ambiguity_k`` fits a band on
clean calibration rows when one is wanted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.linalg.lapack import dgesv
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist
from threadpoolctl import threadpool_limits  # installed with scikit-learn

from trackverify.anchors import ANCHOR_FRAME, anchor_positions
from trackverify.assignment import assign
from trackverify.errors import ConfigError
from trackverify.io.bounded import check_frame_layout, check_pair_layout
from trackverify.tables import coordinate_columns
from trackverify.values import is_integer, is_real
from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks

#: ``k`` of the ambiguity rule: the smallest of 0, 0.5, 1, 1.5 with which no motion level of
#: the development specimen loses more than 0.01 against the previous verifier (pooled and
#: nearby AUROC* and coverage at FCR <= 1 %); chosen on the specimen, never on real data
#: (docs/reference/verifiers.md). It was 0.5 before the one-to-one assignment: without the assignment,
#: ``fast`` lost nearby-swap coverage at 0; with it, 0 gains on every level.
DEFAULT_AMBIGUITY_K = 0.0


#: The scores :class:`RegisteredDistance` can give (``score=``): ``"distance"`` = the score
#: below in um; ``"relative"`` = that score times ``c / s_p`` (``s_p`` = the claimed id's own
#: anchor spacing, ``c`` = the median ``s_p``), "um at the recording's median spacing".
SCORES = ("relative", "distance")

#: The default score. Rule, stated before it was measured: a swap onto a neighbour moves a
#: row by about the pair's spacing, so ``d / s_p`` is the natural evidence; it is the default
#: unless it loses more than 0.01 against ``"distance"`` on the development specimen (any
#: motion level), the targettrack pairs or the ZephIR demo (docs/reference/verifiers.md). Measured:
#: it loses nowhere on the specimen or ZephIR and gains on the real recording, but on the
#: targettrack pairs single examples lose up to 0.07 (coverage, nearby swaps) under the
#: leave-one-out table and 0.011-0.013 random-swap AUROC* at the default settings, so
#: ``"distance"`` stays the default and ``"relative"`` is a setting.
DEFAULT_SCORE = "distance"


#: ``h`` of the track pooling (``track_window=``, :mod:`trackverify.verifiers.pooling`): each
#: scored row's score becomes ``max(s, median of the finite scores within +-h rows of its
#: predicted track, ordered by frame)``; 0 = off. Rule, stated before it was measured: ``h``
#: is the smallest of 1, 2, 4, 8 whose pooled six-corruption coverage at FCR <= 1 % on the
#: ``freely_moving`` specimen is within 0.005 of the best of the four (never chosen on real
#: data); it is the default only if no number loses more than 0.01 against 0 on every
#: specimen motion level, the targettrack pairs and the ZephIR demo (docs/reference/verifiers.md).
#: Measured (``benchmarks/bench_track_window.py``): on ``freely_moving`` h = 1, 2, 4, 8 give
#: coverage 0.9369, 0.9369, 0.9373, 0.9380 (0 gives 0.9333), so h = 1; against 0 it loses
#: nothing anywhere (specimen levels equal or higher to four decimals, single_frame_swap
#: AUROC* 1.0000 throughout; the two-frame pairs keep their frame-1 scores exactly; ZephIR
#: equal), so it is the default.
DEFAULT_TRACK_WINDOW = 1


#: ``m`` of the merged-anchor rule (``merge_k=``, :func:`merged_anchors`): identity ``p`` is
#: merged in frame ``t`` when another registered anchor lies within ``m sigma[t]`` of its own,
#: and its rows there abstain (reason ``merged``); 0 = off. Rule, stated before it was
#: measured: ``m = 2`` (two equal isotropic Gaussians of scale sigma form a unimodal mixture
#: exactly below 2 sigma) becomes the default only if, against 0, no number loses more than
#: 0.01 on any specimen motion level, the targettrack pairs or the ZephIR demo
#: (docs/reference/verifiers.md, "Merged anchors").
DEFAULT_MERGE_K = 0.0


#: Cap of the first frame's starting mixture scale, in anchor RMS radii: a mixture wider
#: than a quarter of the cloud no longer sees its shape (a small cloud collapses).
MAX_FIRST_SIGMA = 0.25


@dataclass(frozen=True)
class RegistrationSettings:
    """Every setting of the identity-free registration (unit-free, see the module docstring)."""

    beta: float = 2.0  # kernel width, in anchor RMS radii (leave-one-out on the real pairs)
    lam: float = 8.0  # smoothness regularisation (leave-one-out on the real pairs)
    outlier_weight: float = 0.1  # w of the uniform component
    iterations: int = 20  # EM iterations per frame, warm-started from the previous frame
    first_frame_iterations: int = 60  # EM iterations after the global pose (no earlier frame)
    first_frame_sigma: float = 3.0  # starting mixture scale after the global pose, in anchor
    # spacings (at most MAX_FIRST_SIGMA anchor RMS radii)
    pose_max_angle: float = 90.0  # global pose: in-plane rotations searched, -max..+max degrees
    pose_angle_step: float = 10.0  # ... in steps of this many degrees
    pose_radius: float = 0.5  # a detection counts for a pose within this many anchor spacings
    affine: bool = True  # fit an affine part beside the smooth field (else the field alone)
    momentum: float = 1.0  # constant-velocity prediction from the two previous frames
    kernel_trace: float = 0.9999  # share of the kernel's trace kept by its low-rank form
    min_sigma: float = 0.1  # floor of the mixture scale, in anchor median nearest-neighbour spacings
    frame_sigma: float | None = 1.0  # starting mixture scale of a later frame, in anchor
    # spacings (None: the mean squared nearest-detection distance of the prediction)
    fit_outlier_weight: bool = True  # w = max(outlier_weight, 1 - n / median detections per
    # frame): the share of a frame's detections the anchor cannot explain (identity-free)
    tolerance: float = 3e-3  # a later frame's EM stops once sigma^2 moves by at most this share
    choose_start: bool = True  # start each frame from the better of the zero- and the
    # constant-velocity prediction (lower robust nearest-detection distance)


@dataclass
class Registration:
    """Registered anchor positions ``positions[t, i]`` and the per-frame scale ``sigma[t]``."""

    positions: np.ndarray  # (T, n, D), original units; NaN where frame t had no detections
    sigma: np.ndarray  # (T,), original units; 0 at the anchor frame
    settings: RegistrationSettings = field(default_factory=RegistrationSettings)


def fit_registration(anchor: np.ndarray, detections, n_frames: int | None = None,
                     settings: RegistrationSettings | None = None,
                     on_frame=None) -> Registration:
    """Register ``anchor`` (n, D) onto every frame's detections; reads no identity.

    ``detections`` is a table of which only ``frame`` and the coordinate columns
    (``x_um, y_um[, z_um]``) are read. ``on_frame(done, total)``, when given, is called as
    frames are registered (a progress bar; every 25 frames and at the end).
    """
    with threadpool_limits(1):  # many small matrices: one BLAS thread is fastest
        return _fit(anchor, detections, n_frames, settings or RegistrationSettings(), on_frame)


def _fit(anchor, detections, n_frames: int | None, settings: RegistrationSettings,
         on_frame=None) -> Registration:
    anchor = np.asarray(anchor, dtype=np.float64)
    frames = np.asarray(detections["frame"], dtype=np.int64)
    points = np.column_stack([np.asarray(detections[c], dtype=np.float64)
                              for c in ("x_um", "y_um", "z_um")[:anchor.shape[1]]])
    n_frames = int(frames.max()) + 1 if n_frames is None else n_frames
    centre = anchor.mean(axis=0)
    radius = float(np.sqrt(((anchor - centre) ** 2).sum(axis=1).mean())) or 1.0
    a = (anchor - centre) / radius
    x_all = (points - centre) / radius
    order = np.argsort(frames, kind="stable")
    # each frame's detections by the frames present (not by the frame span: frames 0 and
    # 2**31 - 1 are two groups, not 2**31 slots)
    present, first, counts = np.unique(frames[order], return_index=True, return_counts=True)
    kept = (present >= 0) & (present < n_frames)
    present, first, counts = present[kept], first[kept], counts[kept]
    spacing = anchor_spacing(a) if len(a) > 1 else 1.0
    floor = max((settings.min_sigma * spacing) ** 2, 1e-12)  # coincident anchors: spacing 0
    gram = _low_rank_kernel(a, settings.beta, settings.kernel_trace)
    w = settings.outlier_weight
    if settings.fit_outlier_weight and len(frames):
        w = fitted_outlier_weight(len(a), counts, w)
    out = np.full((n_frames,) + a.shape, np.nan)
    sigma = np.full(n_frames, np.nan)
    out[ANCHOR_FRAME], sigma[ANCHOR_FRAME] = a, 0.0
    previous, before = a, a
    t_previous, t_before = ANCHOR_FRAME, ANCHOR_FRAME
    reported = 0
    # sequential by construction; each step is vectorised. A frame with too few detections
    # (or a missing frame) is not visited: it stays unregistered (NaN)
    for t, begin, count in zip(present.tolist(), first.tolist(), counts.tolist()):
        if t < 1 or count < a.shape[1] + 1:
            continue
        if on_frame is not None and t // 25 > reported // 25:  # every 25 frames
            on_frame(t + 1, n_frames)
            reported = t
        x = x_all[order[begin:begin + count]]
        if previous is a:  # no earlier registered frame: start from the global pose
            y0 = global_pose(a, x, spacing, settings)
            sigma2 = min(settings.first_frame_sigma * spacing, MAX_FIRST_SIGMA) ** 2
            iterations = settings.first_frame_iterations
        else:
            y0 = constant_velocity(previous, before, t - t_previous, t_previous - t_before,
                                   settings.momentum)
            if settings.choose_start:
                y0 = _better_start((previous, y0), x, spacing)
            if settings.frame_sigma is None:
                sigma2 = float((cKDTree(x).query(y0)[0] ** 2).mean()) / a.shape[1]
            else:
                sigma2 = (settings.frame_sigma * spacing) ** 2
            iterations = settings.iterations
        y, sigma2 = _register_frame(a, gram, x, y0, max(sigma2, floor), iterations,
                                    settings.lam, w, floor, settings.affine,
                                    0.0 if previous is a else settings.tolerance)
        out[t], sigma[t] = y, np.sqrt(sigma2)
        before, previous = previous, y
        t_before, t_previous = t_previous, t
    if on_frame is not None and n_frames > 1 and reported != n_frames - 1:  # and at the end
        on_frame(n_frames, n_frames)
    return Registration(out * radius + centre, sigma * radius, settings)


def fitted_outlier_weight(n_anchor: int, detections_per_frame: np.ndarray,
                          floor: float = 0.1) -> float:
    """CPD's uniform share ``w = max(floor, 1 - n_anchor / median detections per frame)``.

    The share of a typical frame's detections that no anchor point explains (unlabelled
    neurons, spurious detections), from counts alone; at most 0.9.
    """
    if not len(detections_per_frame):
        return floor
    return float(min(max(floor, 1.0 - n_anchor / float(np.median(detections_per_frame))), 0.9))


def _better_start(starts: tuple[np.ndarray, ...], x: np.ndarray, spacing: float) -> np.ndarray:
    """The start whose points lie nearest the detections: lowest mean of
    ``min(d_i, spacing)^2`` (``d_i`` = distance of point i to its nearest detection; capped
    so that a few lost points do not decide); ties keep the first."""
    # exponents at sigma^2 = 1/2 are -d^2: a row's max is minus its squared nearest distance
    nearest = -_exponents(np.concatenate(starts), _detection_terms(x), 0.5).max(axis=1)
    cost = np.minimum(nearest, spacing ** 2).reshape(len(starts), -1).mean(axis=1)
    return starts[int(np.argmin(cost))]


def constant_velocity(previous: np.ndarray, before: np.ndarray, ahead: int, behind: int,
                      momentum: float = 1.0) -> np.ndarray:
    """``previous + momentum * (ahead / behind) * (previous - before)``.

    ``previous`` and ``before`` are the last two registered frames, ``behind`` frames apart;
    the frame to predict lies ``ahead`` frames after ``previous``. Frame numbers are the real
    ones: over a gap (missing frames) the velocity per frame is extrapolated over the whole
    gap, and a velocity measured across a gap is divided by its length.
    """
    if behind <= 0:
        return previous
    return previous + (momentum * ahead / behind) * (previous - before)


def _low_rank_kernel(a: np.ndarray, beta: float, keep: float) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors ``Q`` and eigenvalues ``L`` of ``G`` keeping ``keep`` of its trace."""
    gram = np.exp(-((a[:, None, :] - a[None, :, :]) ** 2).sum(-1) / (2 * beta ** 2))
    values, vectors = np.linalg.eigh(gram)
    values, vectors = values[::-1], vectors[:, ::-1]
    rank = int(np.searchsorted(np.cumsum(values) / values.sum(), keep)) + 1
    return vectors[:, :rank], np.maximum(values[:rank], 1e-12)


#: Exponents of the E-step's kernel below this are raised to it: ``exp(-700)`` (1e-304)
#: stands for a value that would be subnormal or 0. Next to the outlier term ``c`` (every
#: column sum is at least ``c``, above 1e-6 even at the floor of sigma with unit-free
#: coordinates) it changes no sum, and it keeps ``exp`` off its slow subnormal path (several
#: times slower).
EXPONENT_FLOOR = -700.0


def _detection_terms(x: np.ndarray) -> np.ndarray:
    """``[x, 1, |x|^2]`` per detection ((m, D + 2)), built once per frame: the right factor of
    :func:`_exponents` (transposed) and of :func:`_expectation`'s sums."""
    return np.concatenate([x, np.ones((len(x), 1)), (x * x).sum(axis=1, keepdims=True)], axis=1)


def _exponents(y: np.ndarray, terms: np.ndarray, sigma2: float) -> np.ndarray:
    """``-|y_i - x_j|^2 / (2 sigma^2)`` (n, m), clipped to ``[EXPONENT_FLOOR, 0]``, as one
    product ``[y / s, -|y|^2 / (2 s), -1 / (2 s)] [x, 1, |x|^2]^T`` (``s = sigma^2``,
    ``terms`` = :func:`_detection_terms`); a rounding error of the expansion above 0 is 0."""
    half = -0.5 / sigma2  # scaled on the (n, D + 2) side, not on the (n, m) product
    left = np.concatenate([y * (1.0 / sigma2), np.add.reduce(y * y, axis=1, keepdims=True) * half,
                           np.full((len(y), 1), half)], axis=1)
    out = left @ terms.T
    return np.clip(out, EXPONENT_FLOOR, 0.0, out=out)


def _expectation(y: np.ndarray, terms: np.ndarray, sigma2: float, w: float) -> np.ndarray:
    """CPD's E-step, summed: ``[P X, P 1, P |X|^2]`` ((n, D + 2): per anchor point its
    posterior-weighted detections, its posterior mass and its weighted squared norms) of the
    posterior ``P[i, j] = e_ij / (sum_k e_kj + c)`` that detection j belongs to anchor point
    i, with ``e_ij = exp(-|y_i - x_j|^2 / (2 sigma^2))`` and ``c = (2 pi sigma^2)^(D/2) w /
    (1 - w) n / m`` (the uniform outlier share ``w``); ``terms`` = :func:`_detection_terms`
    of X. ``P`` itself is never formed: the sums are ``e (terms / s)`` with ``s_j = sum_k
    e_kj + c``; the total of the last column is ``sum_j (P^T 1)_j |x_j|^2``."""
    n, dims = y.shape
    kernel = _exponents(y, terms, sigma2)
    np.exp(kernel, out=kernel)
    column = np.add.reduce(kernel, axis=0)
    column += (2 * np.pi * sigma2) ** (dims / 2) * w / (1 - w) * n / len(terms)
    return kernel @ (terms / column[:, None])


def global_pose(a: np.ndarray, x: np.ndarray, spacing: float,
                settings: RegistrationSettings) -> np.ndarray:
    """The anchor ``a`` (centred) moved by the pose that best lays it onto detections ``x``.

    Identity-free largest-common-point-set vote over rigid in-plane poses: for every angle
    ``theta`` in ``-pose_max_angle .. +pose_max_angle`` (step ``pose_angle_step``; rotation
    about the last axis -- the imaging axis -- through the anchor centroid) the candidate
    translations are the offsets ``x_j - R_theta a_i`` of all (detection, anchor) pairs,
    binned in cells of side ``r = pose_radius * spacing``; the offsets in the eight most
    populated cells are the candidates. A candidate pose scores
    ``#{j : min_i |x_j - (R_theta a_i + o)| < r}`` (detections it lays on an anchor point),
    ties broken by ``sum_j exp(-min_i |.|^2 / (2 r^2))``, then by the smaller ``|theta|``.
    The winning pose only places CPD's first E-step.
    """
    radius = settings.pose_radius * spacing
    if radius <= 0:
        return a
    limit, step = settings.pose_max_angle, settings.pose_angle_step
    turns = np.arange(0.0, limit + 1e-9, step) if step > 0 else np.zeros(1)
    angles = np.column_stack([turns, -turns]).ravel()[1:]  # 0, +s, -s, +2s, ...: ties keep the smaller turn
    best, best_key = a, (-1, -np.inf)
    for theta in np.radians(angles):  # one vectorised vote per angle
        rotated = a @ _rotation(theta, a.shape[1]).T
        candidates = _offset_candidates(x, rotated, radius)
        distance = cKDTree(rotated).query((x[None, :, :] - candidates[:, None, :])
                                          .reshape(-1, a.shape[1]))[0].reshape(len(candidates), len(x))
        count = (distance < radius).sum(axis=1)
        # rounded, so that symmetric poses tie exactly and the smaller turn (met first) stays
        closeness = np.round(np.exp(-distance ** 2 / (2 * radius ** 2)).sum(axis=1), 9)
        k = int(np.lexsort((-closeness, -count))[0])
        if (count[k], closeness[k]) > best_key:
            best, best_key = rotated + candidates[k], (count[k], closeness[k])
    return best


def _rotation(theta: float, dims: int) -> np.ndarray:
    """Rotation by ``theta`` in the plane of the first two axes (about the last axis in 3-D)."""
    out = np.eye(dims)
    out[:2, :2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
    return out


def _offset_candidates(x: np.ndarray, rotated: np.ndarray, radius: float,
                       cells: int = 8) -> np.ndarray:
    """The (detection - anchor) offsets that fall in the ``cells`` most populated offset cells."""
    offsets = (x[:, None, :] - rotated[None, :, :]).reshape(-1, x.shape[1])
    _, inverse, counts = np.unique(_cell_keys(np.floor(offsets / radius).astype(np.int64)),
                                   return_inverse=True, return_counts=True)
    top = np.argsort(-counts, kind="stable")[:cells]
    return offsets[np.isin(inverse.ravel(), top)]


def _cell_keys(cells: np.ndarray) -> np.ndarray:
    """One integer per row of ``cells`` (k, D), ordered as the rows are lexicographically
    (the order of ``np.unique(cells, axis=0)``, several times faster on one column); the
    rows themselves when the span of the cells does not fit in int64."""
    low = cells.min(axis=0)
    span = cells.max(axis=0).astype(object) - low + 1  # Python integers: no overflow
    if int(np.prod(span)) >= 2 ** 62:
        return np.unique(cells, axis=0, return_inverse=True)[1].ravel()
    return np.ravel_multi_index((cells - low).T, tuple(int(v) for v in span))


def _register_frame(a: np.ndarray, gram: tuple[np.ndarray, np.ndarray], x: np.ndarray, start: np.ndarray,
                    sigma2: float, iterations: int, lam: float, w: float,
                    floor: float, fit_affine: bool = True,
                    tolerance: float = 0.0) -> tuple[np.ndarray, float]:
    """CPD with the model ``T = a B^T + t + G W`` fitted to detections ``x``.

    At most ``iterations`` EM steps; it stops early once an M-step changes ``sigma^2`` by at
    most ``tolerance`` of its value (0: never early).

    ``start`` (the prediction from earlier frames) only places the first E-step; every
    M-step refits the affine part ``(B, t)`` by weighted least squares of the posterior
    means on the anchor ``a`` (given ``G W``), then the non-rigid part by
    ``(diag(P1) G + lambda sigma^2 I) W = P X - diag(P1) (a B^T + t)``, then ``sigma^2``.
    The warp is always a function of the anchor, so an error of one frame does not drift.
    Without ``fit_affine`` the affine part stays the identity (plain non-rigid CPD).
    ``G = Q diag(L) Q^T`` (low rank), so the solve goes through the Woodbury identity:
    ``W = (R - D Q (s L^-1 + Q^T D Q)^-1 Q^T R) / s`` with ``D = diag(P1)``,
    ``s = lambda sigma^2``, ``R = P X - D (a B^T + t)``, whence the field
    ``G W = Q (s L^-1 + Q^T D Q)^-1 Q^T R`` (substitute and use ``Q^T Q = I``).

    Every sum over anchor points goes through one basis ``Z = [a, 1, Q]`` (n, D + 1 + r):
    ``Z^T D Z`` and ``Z^T P X`` give both solves' matrices, ``T = Z H`` with ``H = [B^T; t;
    F]``, ``F = (s L^-1 + Q^T D Q)^-1 Q^T R``, and ``sigma^2 = (sum_j (P^T 1)_j |x_j|^2 - 2
    tr((Z^T P X)^T H) + tr(H^T Z^T D Z H)) / (N_P D)``.
    """
    n, dims = a.shape
    q, values = gram
    k = dims + 1  # affine columns of the basis
    basis = np.concatenate([a, np.ones((n, 1)), q], axis=1)
    basis_t = basis.T.copy()
    terms = _detection_terms(x)
    ridge = 1e-9 * np.eye(k)
    inverse_values = np.diag(lam / values)  # (lambda sigma^2) L^-1 = sigma^2 * this
    weights = np.eye(basis.shape[1], dims)  # H: the identity affine part, no field
    moved = start
    for _ in range(iterations):
        sums = _expectation(moved, terms, sigma2, w)
        p1 = sums[:, dims]
        totals = np.add.reduce(sums, axis=0)  # [., N_P, sum_j (P^T 1)_j |x_j|^2]
        n_p = float(totals[dims])
        if n_p < 1e-9:
            break
        normal = (basis_t * p1) @ basis  # Z^T D Z
        means = basis_t @ sums[:, :dims]  # Z^T P X
        if fit_affine:  # minimise sum_i p1_i |px_i / p1_i - field_i - (B a_i + t)|^2
            weights[:k] = _solve(normal[:k, :k] + ridge, means[:k] - normal[:k, k:] @ weights[k:])
        weights[k:] = _solve(normal[k:, k:] + sigma2 * inverse_values,
                             means[k:] - normal[k:, :k] @ weights[:k])
        moved = basis @ weights
        previous_sigma2 = sigma2
        sigma2 = max((float(totals[dims + 1]) - 2 * float(np.vdot(means, weights))
                      + float(np.vdot(weights, normal @ weights))) / (n_p * dims), floor)
        if abs(previous_sigma2 - sigma2) <= tolerance * previous_sigma2:
            break  # converged: the mixture scale no longer moves
    return moved, sigma2


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs`` by LU (LAPACK gesv, as ``np.linalg.solve``, without its checks on
    small matrices); a singular matrix raises ``np.linalg.LinAlgError`` as it does."""
    _, _, out, info = dgesv(matrix, rhs)
    if info > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return out


@dataclass
class Abstentions:
    """How many rows one ``score`` call abstained on, and why."""

    rows: int
    ambiguous: int
    missing_evidence: int
    ambiguity_k: float
    contradicted: int = 0  # scored rows whose detection the assignment gives another anchor
    merged: int = 0  # rows abstained because their claimed anchor is merged (merge_k)


class RegisteredDistance:
    """Distance to the identity-free registered anchor position, with uniqueness abstention."""

    name = "registered_distance"
    evidence = "independent"

    def __init__(self, ambiguity_k: float = DEFAULT_AMBIGUITY_K,
                 settings: RegistrationSettings | None = None,
                 one_to_one: bool = True, score: str = DEFAULT_SCORE,
                 track_window: int = DEFAULT_TRACK_WINDOW,
                 merge_k: float = DEFAULT_MERGE_K) -> None:
        if score not in SCORES:
            raise ConfigError(f"registered_distance: score must be one of {list(SCORES)}, "
                              f"got {score!r}")
        if not is_integer(track_window, 0):
            raise ConfigError(f"registered_distance: track_window must be an integer >= 0, "
                              f"got {track_window!r}")
        if not is_real(merge_k, 0.0, float_range=True):
            raise ConfigError(f"registered_distance: merge_k must be a finite number >= 0, "
                              f"got {merge_k!r}")
        self.track_window = int(track_window)  # h of the track pooling (0: off)
        self.merge_k = float(merge_k)  # m of the merged-anchor rule (0: off)
        self.score_kind = score
        self.ambiguity_k = float(ambiguity_k)
        self.settings = settings or RegistrationSettings()
        self.one_to_one = bool(one_to_one)
        self.abstentions: list[Abstentions] = []  # one entry per score() call
        self.last_margin: np.ndarray | None = None  # alt - d of the last call (NaN = none)
        self.last_factor: np.ndarray | None = None  # the last call's c / s_p per row (1:
        # distance score; NaN: not scored)
        self.last_claimant: np.ndarray | None = None  # assignment's anchor index per row
        self.last_merged: np.ndarray | None = None  # rows of the last call abstained as merged
        self._cache: tuple[bytes, Registration] | None = None
        self._owners: tuple | None = None  # (key, frames, points, ids, c, owner, held)
        self._merged: tuple | None = None  # (registration, merge_k, merged_anchors)
        self.on_frame = None  # optional progress callback(done, total) of the registration
        self.spacing_factor = np.zeros(0)  # c / s_p per anchor index of the last register()

    def register(self, table: pd.DataFrame,
                 detections: pd.DataFrame | None = None) -> tuple[pd.Index, Registration]:
        """Anchor ids (frame 0, valid, unique) and the registration of the whole recording.

        Only the anchor frame's ids are read; the fit sees coordinates and frames alone: of
        ``detections`` (every detection of the recording) when given, else of the table's
        own rows. The fit depends only on coordinates, so every condition reuses it.
        """
        coords = coordinate_columns(table)
        frames = table["frame"].to_numpy()
        anchor_ids, anchor_xyz = anchor_positions(table)  # an id on two anchor rows: none
        check_pair_layout(len(anchor_xyz), len(coords), recording=_recording_of(table),
                          what="the registration of registered_distance (its deformation kernel)")
        self.spacing_factor = spacing_factors(anchor_xyz)  # anchor coordinates only
        if detections is None:
            detections = _unique_detections(table, coords)
        key = (np.ascontiguousarray(anchor_xyz).tobytes()
               + np.ascontiguousarray(detections[["frame", *coords]].to_numpy()).tobytes())
        n_frames = int(max(frames.max() if len(frames) else 0,
                           detections["frame"].max() if len(detections) else 0)) + 1
        check_frame_layout(n_frames, len(anchor_xyz) * len(coords),
                           what="the registration of registered_distance (anchor identities x axes)",
                           recording=_recording_of(table))
        if not len(anchor_xyz):  # nothing trusted in the anchor frame: nothing to register
            empty = Registration(np.full((n_frames, 0, len(coords)), np.nan),
                                 np.full(n_frames, np.nan), self.settings)
            return anchor_ids, empty
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, fit_registration(anchor_xyz, detections[["frame", *coords]],
                                                 n_frames, self.settings, self.on_frame))
            self._owners = None
        if self.one_to_one and (self._owners is None or self._owners[0] != key):
            det_frames = detections["frame"].to_numpy(dtype=np.int64)
            det_points = detections[coords].to_numpy(dtype=np.float64)
            det_ids = detections["detection"].to_numpy() if "detection" in detections.columns else None
            cap = anchor_spacing(anchor_xyz)
            self._owners = (key, det_frames, det_points, det_ids, cap,
                            *assign_detections(self._cache[1].positions, det_frames, det_points,
                                               cap))
        return anchor_ids, self._cache[1]

    def merged(self, registration: Registration) -> np.ndarray:
        """:func:`merged_anchors` of ``registration`` at this verifier's ``merge_k`` (kept
        for the registration last asked about: every condition reuses one fit)."""
        cached = self._merged
        if cached is None or cached[0] is not registration or cached[1] != self.merge_k:
            cached = (registration, self.merge_k,
                      merged_anchors(registration.positions, registration.sigma, self.merge_k))
            self._merged = cached
        return cached[2]

    def claimants(self, table: pd.DataFrame, detections: pd.DataFrame | None,
                  rows: np.ndarray) -> np.ndarray:
        """Per row of ``table`` in ``rows`` (indices), the anchor index whose registered
        position holds the row's detection at its frame: the one-to-one assignment's
        (:func:`assign_detections`), or, with ``one_to_one=False``, the nearest registered
        anchor point when it lies within the anchor spacing ``c``; -1: none (or a frame not
        registered). Reads frames, coordinates and detection ids only, never an identity
        after the anchor frame."""
        return self.holders(table, self.register(table, detections)[1], rows)

    def _detections_of(self, rows: pd.DataFrame, frames: np.ndarray,
                       points: np.ndarray) -> np.ndarray:
        """Per row of ``rows`` (its ``frames`` and ``points``), the index of the detection it is
        among the recording's detections :meth:`register` kept (-1: none), by its
        ``detection`` column when it has one, else by position (:func:`detection_of_points`)."""
        _, det_frames, det_points, det_ids, _, _, _ = self._owners
        return detection_of_points(
            det_frames, det_points, frames, points, det_ids,
            rows["detection"].to_numpy() if "detection" in rows.columns else None)

    def holders(self, table: pd.DataFrame, registration: Registration,
                rows: np.ndarray) -> np.ndarray:
        """:meth:`claimants` with the ``registration`` :meth:`register` returned for
        ``table``'s recording (no second registration)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full(len(rows), -1, dtype=np.int64)
        if not len(rows) or not registration.positions.shape[1]:
            return out
        part = table.iloc[rows]
        frames = part["frame"].to_numpy()
        points = part[coordinate_columns(table)].to_numpy(dtype=np.float64)
        if self.one_to_one and self._owners is not None:
            owner = self._owners[5]
            detection = self._detections_of(part, frames, points)
            return np.where(detection >= 0, owner[np.maximum(detection, 0)], -1)
        known = np.flatnonzero(np.isfinite(registration.positions[frames, 0, 0]))
        index, distance = nearest_other(registration.positions, frames[known], points[known],
                                        np.full(len(known), -1))
        cap = anchor_spacing(registration.positions[0])
        out[known] = np.where(distance < cap, index, -1)
        return out

    def score_places(self, table: pd.DataFrame, registration: Registration,
                     places: np.ndarray, spacing: np.ndarray) -> np.ndarray:
        """Scores of claims on places that are no anchor point (the audit's tracks that start
        on a detection no anchor identity holds; ``places`` (rows, D): where the registration
        carries that start to each row's frame, :func:`carry_points`; NaN rows: no claim).

        The claim of :meth:`score` with that place as the claimed position and no anchor
        point of its own: ``d + max(0, d - alt) + c [contradicted]``, ``d`` the distance to
        the place, ``alt`` to the nearest registered anchor point, contradicted when the
        assignment gives the row's detection to an anchor point (that point claims it, the
        place has no claim on the assignment); the ambiguity band and ``merge_k`` with
        ``alt`` and the place's own nearest anchor point; ``score="relative"`` times ``c /
        spacing`` (``spacing``: per row, the start's distance to the nearest registered
        anchor point at its frame); pooled along predicted tracks. ``registration`` is the
        one :meth:`register` returned for ``table``'s recording."""
        positions = table[coordinate_columns(table)].to_numpy(dtype=np.float64)
        frames = table["frame"].to_numpy()
        places = np.asarray(places, dtype=np.float64)
        usable = table["pred_valid"].to_numpy(dtype=bool) & np.isfinite(places).all(axis=1)
        scores = np.full(len(table), np.nan)
        rows = np.flatnonzero(usable)
        if not len(rows) or not registration.positions.shape[1]:
            return scores
        none = np.full(len(rows), -1)
        distance = np.linalg.norm(positions[rows] - places[rows], axis=1)
        alt = nearest_other(registration.positions, frames[rows], positions[rows], none)[1]
        margin = alt - distance
        sigma = registration.sigma[frames[rows]]
        keep = ~(np.abs(margin) < self.ambiguity_k * sigma)
        if self.merge_k > 0:
            crowded = nearest_other(registration.positions, frames[rows], places[rows], none)[1]
            keep &= ~(crowded < self.merge_k * sigma)
        value = distance + np.maximum(-margin, 0.0)
        cap = anchor_spacing(registration.positions[0])
        if self.one_to_one and self._owners is not None:
            value = np.where(self.holders(table, registration, rows) >= 0, value + cap, value)
        if self.score_kind == "relative":
            with np.errstate(divide="ignore", invalid="ignore"):
                value = value * np.where(spacing[rows] > 0, cap / spacing[rows], np.nan)
        scores[rows] = np.where(keep, value, np.nan)
        if self.track_window:
            scores = pool_along_tracks(scores, *claimed_tracks(table), self.track_window)
        return scores

    def score(self, table: pd.DataFrame, detections: pd.DataFrame | None = None,
              claims: np.ndarray | None = None) -> np.ndarray:
        """Scores of ``table``'s rows (module docstring). ``claims``, when given: per row, the
        anchor index whose registered position the row is judged against (-1: none, the row
        abstains), instead of the index of its own predicted id (the audit's track starts,
        :mod:`trackverify.audit.verdicts`); tracks are still pooled by predicted id."""
        anchor_ids, registration = self.register(table, detections)
        positions = table[coordinate_columns(table)].to_numpy(dtype=np.float64)
        frames = table["frame"].to_numpy()
        which = (anchor_ids.get_indexer(table["pred_id"]) if claims is None
                 else np.asarray(claims, dtype=np.int64))
        usable = table["pred_valid"].to_numpy(dtype=bool) & (which >= 0)
        if registration.positions.shape[1]:
            usable &= np.isfinite(registration.positions[frames, 0, 0])
        distance, margin = _distance_and_margin(registration.positions, frames, positions,
                                                which, usable)
        tolerance = self.ambiguity_k * registration.sigma[frames]
        ambiguous = usable & (np.abs(margin) < tolerance)
        merged = usable & ~ambiguous & merged_rows(self.merged(registration), frames, which)
        ambiguous_or_merged = ambiguous | merged
        # d, plus by how much another registered anchor is nearer than the claimed one
        scores = np.where(usable & ~ambiguous_or_merged, distance + np.maximum(-margin, 0.0),
                          np.nan)
        contradicted = np.zeros(len(table), dtype=bool)
        self.last_claimant = None
        if self.one_to_one and self._owners is not None:
            _, _, det_points, _, cap, owner, held = self._owners
            detection = self._detections_of(table, frames, positions)
            contradicted = usable & ~ambiguous_or_merged & contradicted_claims(
                registration.positions, det_points, owner, held, cap, frames,
                np.where(usable, which, -1), detection)
            scores = np.where(contradicted, scores + cap, scores)
            self.last_claimant = np.where(detection >= 0, owner[np.maximum(detection, 0)], -1)
        factor = np.ones(len(table))
        if self.score_kind == "relative":
            if len(self.spacing_factor):
                factor = np.where(usable, self.spacing_factor[np.maximum(which, 0)], np.nan)
            spaced = np.isfinite(factor)  # an identity on another's anchor position: no s_p
            missing = usable & ~spaced
            usable &= spaced
            ambiguous &= spaced
            merged &= spaced
            contradicted &= spaced
            scores = np.where(missing, np.nan, scores * factor)
        self.last_factor = factor
        self.last_margin = margin
        self.last_merged = merged
        self.abstentions.append(Abstentions(len(table), int(ambiguous.sum()),
                                            int((~usable).sum()), self.ambiguity_k,
                                            int(contradicted.sum()), int(merged.sum())))
        if self.track_window:  # pooled along each predicted track (abstentions unchanged)
            scores = pool_along_tracks(scores, *claimed_tracks(table), self.track_window)
        return scores


def _recording_of(table: pd.DataFrame):
    """The recording ``table`` holds, when it says (a verifier may see no such column)."""
    if "recording" in table.columns and len(table):
        return table["recording"].iloc[0]
    return None


def merged_anchors(registered: np.ndarray, sigma: np.ndarray, merge_k: float) -> np.ndarray:
    """``merged[t, i]``: another registered anchor point lies closer than ``merge_k *
    sigma[t]`` to ``registered[t, i]`` (strictly); reads the registered positions (T, n, D)
    and the per-frame scale (T,) only. False everywhere for ``merge_k = 0``, in frames that
    were not registered (NaN) and for fewer than two anchor points; the anchor frame (sigma
    0) merges nothing. One k-d tree query per registered frame."""
    merged = np.zeros(registered.shape[:2], dtype=bool)
    if merge_k <= 0 or registered.shape[1] < 2:
        return merged
    radius = merge_k * np.asarray(sigma, dtype=np.float64)
    frames = np.flatnonzero(np.isfinite(registered).all(axis=(1, 2)) & (radius > 0))
    for t in frames:
        # the second-nearest point of each is its nearest *other* (itself at 0 comes first,
        # or a coincident one also at 0): that distance decides
        nearest = cKDTree(registered[t]).query(registered[t], k=2)[0][:, 1]
        merged[t] = nearest < radius[t]
    return merged


def merged_rows(merged: np.ndarray, frames: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Per row: its claimed anchor index ``which`` (-1: none) is merged at its frame
    (``merged`` = :func:`merged_anchors`, (T, n)); False where it has none."""
    out = np.zeros(len(frames), dtype=bool)
    rows = np.flatnonzero(which >= 0)
    out[rows] = merged[frames[rows], which[rows]]
    return out


def frame_groups(frames: np.ndarray, rows: np.ndarray | None = None) -> list[np.ndarray]:
    """The indices ``rows`` (default: all) grouped by ``frames[rows]``, frames ascending,
    each group in its original order (a stable sort)."""
    rows = np.arange(len(frames)) if rows is None else rows
    order = rows[np.argsort(frames[rows], kind="stable")]
    return np.split(order, np.flatnonzero(np.diff(frames[order])) + 1)


#: Anchor points whose registered motion carries a point that is no anchor point
#: (:func:`carry_points`): the 3 (D + 1) nearest (12 in 3-D), weighted by a Gaussian of the
#: anchor spacing; fixed in advance, as the reference check's local affine motion is.
CARRY_NEIGHBOURS_PER_AXIS = 3


def carry_points(registered: np.ndarray, start_frames: np.ndarray, starts: np.ndarray,
                 frames: np.ndarray) -> np.ndarray:
    """Where the registration carries each point ``starts[k]`` (seen at ``start_frames[k]``)
    to frame ``frames[k]``: the registration evaluated at a point that is no anchor point.

    The locally affine motion of the registered anchor points around it (moving least
    squares): with ``p_j = R[t0, j]`` the ``m = min(n, 3 (D + 1))`` registered anchor points
    nearest the start ``z`` at its frame ``t0``, Gaussian weights ``g_j = exp(-|z - p_j|^2 /
    (2 c^2))`` (``c`` = the anchor spacing, :func:`anchor_spacing` of ``registered[0]``),
    ``G = sum g_j``, ``zbar = sum g_j p_j / G`` and ``M = sum g_j (p_j - zbar)(p_j -
    zbar)^T + 1e-3 G c^2 I`` (a ridge: a translation where the neighbours span no volume),
    the weights ``phi_j = g_j (1 / G + (p_j - zbar)^T M^-1 (z - zbar))`` (``sum phi_j = 1``;
    an affine motion is carried exactly) move the point as its neighbours move:
    ``x_t = z + sum_j phi_j (R[t, j] - p_j)`` (``x_t = z`` at ``t0``). The weights depend on
    the start only, so a track's place in every frame is one weighted sum. NaN
    where either frame is not registered. ``registered`` is (T, n, D); the rest per point.
    """
    registered = np.asarray(registered, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.float64)
    start_frames, frames = np.asarray(start_frames), np.asarray(frames)
    out = np.full(starts.shape, np.nan)
    n, dims = registered.shape[1:]
    ok = np.isfinite(registered[start_frames, 0, 0]) & np.isfinite(registered[frames, 0, 0]) \
        if n else np.zeros(len(starts), dtype=bool)
    rows = np.flatnonzero(ok & np.isfinite(starts).all(axis=1))
    if not len(rows) or n < 1:
        return out
    c = anchor_spacing(registered[0]) if n > 1 else 1.0
    c = c if np.isfinite(c) and c > 0 else 1.0
    m = min(n, CARRY_NEIGHBOURS_PER_AXIS * (dims + 1))
    # neighbours at the start frame (one k-d tree per distinct start frame)
    nearest = np.empty((len(rows), m), dtype=np.int64)
    for group in frame_groups(start_frames[rows]):
        t = int(start_frames[rows[group[0]]])
        nearest[group] = cKDTree(registered[t]).query(starts[rows[group]], k=m)[1].reshape(-1, m)
    p = registered[start_frames[rows][:, None], nearest]  # (k, m, D)
    z = starts[rows]
    g = np.exp(-((p - z[:, None, :]) ** 2).sum(axis=2) / (2 * c * c))
    g_sum = g.sum(axis=1)
    g = np.where(g_sum[:, None] > 0, g, 1.0)  # far from every anchor point: plain mean
    g_sum = g.sum(axis=1)
    zbar = (g[:, :, None] * p).sum(axis=1) / g_sum[:, None]
    centred = p - zbar[:, None, :]
    moment = np.einsum("km,kmi,kmj->kij", g, centred, centred) \
        + (1e-3 * c * c) * g_sum[:, None, None] * np.eye(dims)
    lever = np.linalg.solve(moment, (z - zbar)[:, :, None])[:, :, 0]
    phi = g * (1.0 / g_sum[:, None] + np.einsum("kmi,ki->km", centred, lever))
    moved = registered[frames[rows][:, None], nearest] - p  # each neighbour's motion
    out[rows] = z + np.einsum("km,kmd->kd", phi, moved)
    return out


def identity_spacings(anchor: np.ndarray) -> np.ndarray:
    """``s_p = min_{q != p} |a_p - a_q|`` per anchor point (n, D): its distance to the
    nearest *other* anchor point; reads coordinates only (inf for fewer than two points)."""
    anchor = np.asarray(anchor, dtype=np.float64)
    if len(anchor) < 2:
        return np.full(len(anchor), np.inf)
    return cKDTree(anchor).query(anchor, k=2)[0][:, 1]


def anchor_spacing(anchor: np.ndarray) -> float:
    """Median nearest-neighbour distance of the anchor points, ``c = median_p s_p``
    (:func:`identity_spacings`; inf for fewer than two)."""
    if len(anchor) < 2:
        return float("inf")
    return float(np.median(identity_spacings(anchor)))


def spacing_factors(anchor: np.ndarray) -> np.ndarray:
    """Per anchor point, the relative score's factor ``c / s_p`` (:func:`identity_spacings`,
    ``c`` their median): a score times it is in "um at the recording's median spacing".

    1 for every point when there are fewer than two (no neighbour: each point is at the
    median), NaN where ``s_p = 0`` (two identities at one anchor position: no spacing, the
    rows abstain for missing evidence). Reads coordinates only.
    """
    own = identity_spacings(anchor)
    if len(anchor) < 2:
        return np.ones(len(anchor))
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 where every s_p = 0
        return np.where(own > 0, np.median(own) / own, np.nan)


def assign_detections(registered: np.ndarray, frames: np.ndarray, points: np.ndarray,
                      cap: float) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one assignment of registered anchor points to detections; reads coordinates and
    frames only.

    Per frame ``t`` (registered, NaN-free), the assignment of the points ``R[t, i]`` to the
    frame's detections ``x_j`` minimising ``sum min(|R[t, i] - x_j|, c)`` (Hungarian;
    ``c`` = ``cap``: a point left without a detection costs ``c``, so a pair at ``c`` or
    farther is never worth making and is not kept). ``registered`` is (T, n, D); ``frames``
    and ``points`` are per detection. Returns ``owner`` (per detection: the anchor index it
    is assigned to, -1 none) and ``held`` (T, n: the detection, as an index into
    ``points``, each anchor point holds; -1 none).
    """
    owner = np.full(len(frames), -1, dtype=np.int64)
    held = np.full(registered.shape[:2], -1, dtype=np.int64)
    if not len(frames) or not registered.shape[1]:
        return owner, held
    for group in frame_groups(frames):
        t = int(frames[group[0]])
        if not 0 <= t < len(registered) or not np.isfinite(registered[t]).all():
            continue
        distance = cdist(registered[t], points[group])  # sqrt of the summed squares, as np.linalg.norm
        rows, cols = assign(np.minimum(distance, cap))
        keep = distance[rows, cols] < cap
        owner[group[cols[keep]]] = rows[keep]
        held[t, rows[keep]] = group[cols[keep]]
    return owner, held


def contradicted_claims(registered: np.ndarray, points: np.ndarray, owner: np.ndarray,
                        held: np.ndarray, cap: float, frames: np.ndarray, claimed: np.ndarray,
                        detection: np.ndarray) -> np.ndarray:
    """Whether the assignment strictly refuses each claim "anchor point ``claimed`` is
    detection ``detection`` at frame ``frames``" (indices into ``points``; -1 = none).

    A claim on a detection owned by another point ``q`` is refused unless a tie: with ``k``
    the detection ``p`` = ``claimed`` holds, exchanging the two costs
    ``delta = |R_p - x_j| + min(|R_q - x_k|, c) - |R_q - x_j| - |R_p - x_k|`` (``c`` for a
    missing ``k`` in both the ``q`` and the ``p`` term: ``p`` holds nothing, ``q`` would be
    left without a detection), which is never negative (the assignment is optimal); the claim
    is refused when ``delta > 1e-9 c``. A claim on an unowned detection, or on its own, is
    not refused.
    """
    rows = np.flatnonzero((detection >= 0) & (claimed >= 0))
    out = np.zeros(len(frames), dtype=bool)
    q = owner[detection[rows]]
    rows, q = rows[(q >= 0) & (q != claimed[rows])], q[(q >= 0) & (q != claimed[rows])]
    if not len(rows):
        return out
    t, p, j = frames[rows], claimed[rows], detection[rows]
    k = held[t, p]
    x_j, x_k = points[j], points[np.maximum(k, 0)]
    d_pj = np.linalg.norm(registered[t, p] - x_j, axis=1)
    d_qj = np.linalg.norm(registered[t, q] - x_j, axis=1)
    has_k = k >= 0
    d_pk = np.where(has_k, np.linalg.norm(registered[t, p] - x_k, axis=1), cap)
    d_qk = np.where(has_k, np.minimum(np.linalg.norm(registered[t, q] - x_k, axis=1), cap), cap)
    out[rows] = (d_pj + d_qk) - (d_qj + d_pk) > 1e-9 * cap
    return out


def detection_of_points(det_frames: np.ndarray, det_points: np.ndarray, frames: np.ndarray,
                        points: np.ndarray, det_ids: np.ndarray | None = None,
                        ids: np.ndarray | None = None) -> np.ndarray:
    """Index (into ``det_points``) of the detection each point is: the frame's detection
    nearest it; -1 where the frame has none. Among detections exactly as near (two at one
    place, or two at equal distances) the smallest index, i.e. the first in the table's row
    order (``nearest_smallest_index``).

    With detection ids on both sides (``det_ids``, ``ids``) the detection of the same
    (frame, id) is taken first, and kept where it lies exactly at the point; every other
    point goes through a k-d tree of its frame's detections (so ids that do not match the
    coordinates change nothing).
    """
    out = np.full(len(frames), -1, dtype=np.int64)
    if not len(det_frames) or not len(frames):
        return out
    todo = np.ones(len(frames), dtype=bool)
    if det_ids is not None and ids is not None:
        keys = pd.MultiIndex.from_arrays([det_frames, det_ids])
        if keys.is_unique:
            found = keys.get_indexer(pd.MultiIndex.from_arrays([frames, ids]))
            same = (found >= 0) & (det_points[np.maximum(found, 0)] == points).all(axis=1)
            out[same], todo = found[same], ~same
    rows = np.flatnonzero(todo)
    if not len(rows):
        return out
    det_order = np.argsort(det_frames, kind="stable")
    det_sorted = det_frames[det_order]
    for group in frame_groups(frames, rows):
        lo, hi = np.searchsorted(det_sorted, frames[group[0]], side="left"), \
            np.searchsorted(det_sorted, frames[group[0]], side="right")
        if hi > lo:
            members = det_order[lo:hi]
            out[group] = nearest_smallest_index(det_points, members, points[group])
    return out


def nearest_smallest_index(candidates: np.ndarray, members: np.ndarray,
                           points: np.ndarray) -> np.ndarray:
    """Per point, the index ``j`` among ``members`` (indices into ``candidates``) minimising
    ``|candidates[j] - point|``; among indices at exactly the same distance, the smallest.

    A k-d tree's choice between equally near neighbours follows how it was built (the order
    of ``members``), so the tie is settled here: the ``k`` nearest are asked for, ``k``
    doubling for the points whose ``k`` nearest are all tied.
    """
    tree = cKDTree(candidates[members])
    best = np.empty(len(points), dtype=np.int64)
    rows, k = np.arange(len(points)), min(2, len(members))
    while len(rows):
        dist, idx = tree.query(points[rows], k=k)
        dist, idx = dist.reshape(len(rows), k), idx.reshape(len(rows), k)
        tied = dist == dist[:, :1]
        best[rows] = np.where(tied, members[idx], np.iinfo(np.int64).max).min(axis=1)
        more = tied[:, -1] & (k < len(members))
        rows, k = rows[more], min(2 * k, len(members))
    return best


def _unique_detections(table: pd.DataFrame, coords: list[str]) -> pd.DataFrame:
    """One row per detection (two predictions on one detection are one point)."""
    keys = ["frame", "detection"] if "detection" in table.columns else ["frame", *coords]
    return table.drop_duplicates(keys)


def _distance_and_margin(registered: np.ndarray, frames: np.ndarray, positions: np.ndarray,
                         which: np.ndarray, usable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: distance to its own registered anchor, and (nearest other) - (own)."""
    distance = np.full(len(frames), np.nan)
    margin = np.full(len(frames), np.nan)
    rows = np.flatnonzero(usable)
    if not len(rows):
        return distance, margin
    own = registered[frames[rows], which[rows]]
    distance[rows] = np.linalg.norm(positions[rows] - own, axis=1)
    _, other = nearest_other(registered, frames[rows], positions[rows], which[rows])
    margin[rows] = other - distance[rows]
    return distance, margin


def nearest_other(registered: np.ndarray, frames: np.ndarray, points: np.ndarray,
                  own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index and distance of the registered anchor point nearest each point, other than its
    ``own`` index (-1: none of its own), one small k-d tree query per frame.

    ``registered`` is (T, n, D); ``frames``, ``points``, ``own`` are per point.
    """
    index = np.full(len(frames), -1, dtype=np.int64)
    distance = np.full(len(frames), np.nan)
    for group in frame_groups(frames):
        d, k = cKDTree(registered[frames[group[0]]]).query(points[group], k=2)
        first_is_own = k[:, 0] == own[group]
        index[group] = np.where(first_is_own, k[:, 1], k[:, 0])
        distance[group] = np.where(first_is_own, d[:, 1], d[:, 0])
    return index, distance


def ambiguity_ratios(clean: pd.DataFrame, settings: RegistrationSettings | None = None,
                     detections: pd.DataFrame | None = None) -> np.ndarray:
    """``d / sigma[t]`` of every scored clean row beyond the anchor frame (one recording)."""
    verifier = RegisteredDistance(ambiguity_k=0.0, settings=settings, one_to_one=False,
                                  score="distance", track_window=0)  # the plain d
    distance = verifier.score(clean, detections)
    _, registration = verifier.register(clean, detections)
    frames = clean["frame"].to_numpy()
    sigma = registration.sigma[frames]
    ok = (frames != ANCHOR_FRAME) & np.isfinite(distance) & (sigma > 0)
    return distance[ok] / sigma[ok]


def calibrate_ambiguity_k(clean: pd.DataFrame | list[pd.DataFrame], quantile: float = 0.5,
                          settings: RegistrationSettings | None = None) -> float:
    """``k`` = the ``quantile`` of ``d / sigma[t]`` over clean rows (frame > 0, scored).

    ``clean`` holds correct predictions of one recording or several (the control condition
    of calibration recordings, or of clean development data while partitions are empty).
    With the default median, the ambiguity band is one *typical* registration residual,
    measured in the registration's own per-frame scale: a margin smaller than that cannot
    separate the two identities.
    """
    tables = clean if isinstance(clean, list) else [clean]
    return ambiguity_k_from_ratios([ambiguity_ratios(t, settings) for t in tables], quantile)


def ambiguity_k_from_ratios(ratios: list[np.ndarray], quantile: float = 0.5) -> float:
    """The ``quantile`` of clean ``d / sigma`` pooled over recordings (see above)."""
    pooled = np.concatenate(ratios) if ratios else np.zeros(0)
    if not len(pooled):
        raise ValueError("no clean row beyond the anchor frame could be scored")
    return float(np.quantile(pooled, quantile))
