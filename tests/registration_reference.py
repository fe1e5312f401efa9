"""The registration of ``registered_distance`` as it was before it was made fast (commit
60c053d), kept callable: the float64 CPD E-step forming the dense posterior (``_posterior``),
the M-step of that commit (``_register_frame``), the start choice by k-d tree
(``_better_start``), the pose vote's cells by ``np.unique(axis=0)`` (``_offset_candidates``)
and the assignment's distances by ``np.linalg.norm`` of the broadcast differences, copied
unchanged. It is the reference the fast code is compared with
(tests/test_registration_reference.py, benchmarks/bench_registration.py).

:func:`fit_registration` and :func:`assign_detections` run the library's own sequencing
(``registered_distance._fit``: starts, scales, gaps, units; ``assign_detections``: frames,
Hungarian, the cap), which this change left as it was, with these kernels in place of the
new ones for the call (not thread-safe: tests and benchmarks only).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

import trackverify.verifiers.registered_distance as rd

# the library's functions as imported, before any test swaps them for these
_LIBRARY_FIT, _LIBRARY_ASSIGN = rd._fit, rd.assign_detections


def fit_registration(anchor, detections, n_frames=None, settings=None, on_frame=None):
    """``registered_distance.fit_registration`` computed with the kernels below."""
    with threadpool_limits(1), _kernels(_register_frame=_register_frame,
                                        _better_start=_better_start,
                                        _offset_candidates=_offset_candidates):
        return _LIBRARY_FIT(anchor, detections, n_frames, settings or rd.RegistrationSettings(),
                            on_frame)


def assign_detections(registered, frames, points, cap):
    """``registered_distance.assign_detections`` with each frame's distances as
    ``np.linalg.norm(R[:, None, :] - x[None, :, :], axis=2)``."""
    with _kernels(cdist=_norm_distances):
        return _LIBRARY_ASSIGN(registered, frames, points, cap)


class _kernels:
    """Module attributes of registered_distance replaced for a ``with`` block."""

    def __init__(self, **replacements):
        self.replacements, self.saved = replacements, {}

    def __enter__(self):
        for name, value in self.replacements.items():
            self.saved[name] = getattr(rd, name)
            setattr(rd, name, value)

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            setattr(rd, name, value)


def _norm_distances(registered: np.ndarray, points: np.ndarray) -> np.ndarray:
    return np.linalg.norm(registered[:, None, :] - points[None, :, :], axis=2)


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
    """The EM loop of commit 60c053d: the dense posterior, the Woodbury solve through
    ``Q^T R``, ``sigma^2`` from the (n, D) arrays (the library's docstring states the model)."""
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
