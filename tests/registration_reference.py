"""The registration of ``registered_distance`` as it was before it was made fast (commit
60c053d): the float64 CPD with its dense E-step (``_posterior``), the per-frame M-step and the
per-frame distance matrices of the one-to-one assignment, copied unchanged. It is the
reference the fast code is compared with (tests/test_registration_reference.py,
benchmarks/bench_registration.py): the same registration, computed the old way.

Only the functions of the fit and the assignment are copied; the settings and the small
public helpers (spacing, velocity, outlier weight, frame groups) are the library's own.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from trackverify.anchors import ANCHOR_FRAME
from trackverify.assignment import assign
from trackverify.verifiers.registered_distance import (
    MAX_FIRST_SIGMA, Registration, RegistrationSettings, anchor_spacing, constant_velocity,
    fitted_outlier_weight, frame_groups)


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




def _better_start(starts: tuple[np.ndarray, ...], x: np.ndarray, spacing: float) -> np.ndarray:
    """The start whose points lie nearest the detections: lowest mean of
    ``min(d_i, spacing)^2`` (``d_i`` = distance of point i to its nearest detection; capped
    so that a few lost points do not decide); ties keep the first."""
    tree = cKDTree(x)
    cost = [float((np.minimum(tree.query(y)[0], spacing) ** 2).mean()) for y in starts]
    return starts[int(np.argmin(cost))]




def _posterior(y: np.ndarray, x: np.ndarray, sigma2: float, w: float) -> np.ndarray:
    """CPD E-step: ``P[i, j]`` = posterior that detection j belongs to anchor point i."""
    n, dims = y.shape
    kernel = y @ x.T  # in place from here: -|y_i - x_j|^2 / (2 sigma^2), then its exp
    kernel *= 2.0
    kernel -= (y * y).sum(1)[:, None]
    kernel -= (x * x).sum(1)[None, :]
    np.minimum(kernel, 0.0, out=kernel)
    kernel *= 0.5 / sigma2
    np.exp(kernel, out=kernel)
    c = (2 * np.pi * sigma2) ** (dims / 2) * w / (1 - w) * n / len(x)
    kernel /= kernel.sum(axis=0, keepdims=True) + c
    return kernel


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




def _offset_candidates(x: np.ndarray, rotated: np.ndarray, radius: float,
                       cells: int = 8) -> np.ndarray:
    """The (detection - anchor) offsets that fall in the ``cells`` most populated offset cells."""
    offsets = (x[:, None, :] - rotated[None, :, :]).reshape(-1, x.shape[1])
    _, inverse, counts = np.unique(np.floor(offsets / radius).astype(np.int64), axis=0,
                                   return_inverse=True, return_counts=True)
    top = np.argsort(-counts, kind="stable")[:cells]
    return offsets[np.isin(inverse.ravel(), top)]


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
    ``s = lambda sigma^2``; the field is ``G W = Q diag(L) Q^T W``.
    """
    n, dims = a.shape
    q, values = gram
    design = np.c_[a, np.ones(n)]
    field = np.zeros_like(a)
    affine = a
    moved = start
    for _ in range(iterations):
        p = _posterior(moved, x, sigma2, w)
        p1, pt1 = p.sum(axis=1), p.sum(axis=0)
        n_p = p1.sum()
        if n_p < 1e-9:
            break
        px = p @ x
        if fit_affine:  # minimise sum_i p1_i |px_i / p1_i - field_i - (B a_i + t)|^2
            weighted = design * p1[:, None]
            coef = np.linalg.solve(design.T @ weighted + 1e-9 * np.eye(dims + 1),
                                   design.T @ (px - p1[:, None] * field))
            affine = design @ coef
        rhs = px - p1[:, None] * affine
        shift = lam * sigma2
        dq = q * p1[:, None]
        small = np.diag(shift / values) + q.T @ dq
        weights = (rhs - dq @ np.linalg.solve(small, q.T @ rhs)) / shift
        field = q @ (values[:, None] * (q.T @ weights))
        moved = affine + field
        previous_sigma2 = sigma2
        sigma2 = max((float((pt1 * (x ** 2).sum(1)).sum()) - 2 * float((px * moved).sum())
                      + float((p1 * (moved ** 2).sum(1)).sum())) / (n_p * dims), floor)
        if abs(previous_sigma2 - sigma2) <= tolerance * previous_sigma2:
            break  # converged: the mixture scale no longer moves
    return moved, sigma2



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
        distance = np.linalg.norm(registered[t][:, None, :] - points[group][None, :, :], axis=2)
        rows, cols = assign(np.minimum(distance, cap))
        keep = distance[rows, cols] < cap
        owner[group[cols[keep]]] = rows[keep]
        held[t, rows[keep]] = group[cols[keep]]
    return owner, held



def _low_rank_kernel(a: np.ndarray, beta: float, keep: float) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors ``Q`` and eigenvalues ``L`` of ``G`` keeping ``keep`` of its trace."""
    gram = np.exp(-((a[:, None, :] - a[None, :, :]) ** 2).sum(-1) / (2 * beta ** 2))
    values, vectors = np.linalg.eigh(gram)
    values, vectors = values[::-1], vectors[:, ::-1]
    rank = int(np.searchsorted(np.cumsum(values) / values.sum(), keep)) + 1
    return vectors[:, :rank], np.maximum(values[:rank], 1e-12)



def _rotation(theta: float, dims: int) -> np.ndarray:
    """Rotation by ``theta`` in the plane of the first two axes (about the last axis in 3-D)."""
    out = np.eye(dims)
    out[:2, :2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
    return out

