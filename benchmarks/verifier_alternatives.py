"""Other identity-free evidence on the real tracker errors the reference check leaves (issue 38).

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/verifier_alternatives.py

The CPD tracker's identities on the real freely moving recording (errors against the frame-0
identity), on the rows the reference check does not question, per half (frames 0-373 and the
rest), scored by ``registered_distance`` and by five other identity-free readings of the same
registration. Each reads the registration, the detections and the row's claimed id only (never
the candidate tracks' other rows, except through the verifier's own track pooling, ``h = 1``,
applied to every score alike):

1. ``default``: the verifier as shipped (``score = "distance"``);
2. ``relative``: its declared setting ``score = "relative"`` (times ``c / s_p``, the claimed
   identity's anchor-frame spacing);
3. ``relative at t``: the same with ``s_p`` taken in the row's own frame (the registered
   anchor's nearest other registered anchor);
4. ``posterior``: ``-log`` of the mixture's responsibility of the claimed anchor for the row,
   ``exp(-|x - R_p|^2 / 2 sigma_t^2) / sum_i exp(-|x - R_i|^2 / 2 sigma_t^2)`` (the
   registration's own scale ``sigma_t``): a detection between two registered anchors scores high;
5. ``assignment completed``: a claim on a detection the assignment gives nobody is also refused
   (``+ c``) when the claimed anchor holds a nearer detection;
6. ``temporal residual``: each registered anchor point moved by the median, over the two frames
   before and after (its own frame left out, at least two), of its offset to the detection the
   assignment gives it, then scored as the verifier;
7. ``local motion``: the reference check's own prediction (a robust local affine fit of six
   neighbours' motion from the two frames before and after, :func:`residuals`) run on the
   detections the assignment gives each anchor point instead of on labels; ``e`` = the row's
   distance to its claimed anchor's predicted place, ``alt`` = to the nearest other predicted
   place, scored ``e + max(0, e - alt)`` (non-causal and local, where the registration is one
   smooth warp); and ``larger of 1 and 7``.

These were looked at on this recording, so none is a verifier setting: the table states how far
evidence of this kind goes on these rows (docs/evidence/reference-check.md).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp

import check_reference_real as bench
from trackverify.reference_check.core import CheckSettings, residuals
from trackverify.verifiers import registered_distance as rd
from trackverify.verifiers import run_verifier
from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks


def temporal_residual(positions: np.ndarray, held: np.ndarray, points: np.ndarray,
                      window: int = 2, least: int = 2) -> np.ndarray:
    """Each registered point moved by the median of its offset to its assigned detection over
    the ``window`` frames each side (its own frame excluded; at least ``least`` of them)."""
    offset = np.where((held >= 0)[..., None], points[np.maximum(held, 0)] - positions, np.nan)
    shifted = []
    for o in [k for k in range(-window, window + 1) if k]:
        s = np.full_like(offset, np.nan)
        if o > 0:
            s[:-o] = offset[o:]
        else:
            s[-o:] = offset[:o]
        shifted.append(s)
    shifted = np.stack(shifted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN windows
        median = np.nanmedian(shifted, axis=0)
    use = (np.isfinite(shifted[..., 0]).sum(axis=0) >= least) & np.isfinite(positions[..., 0])
    use[0] = False  # the anchor frame is the anchor
    out = positions.copy()
    out[use] += median[use]
    return out


class TemporalResidual(rd.RegisteredDistance):
    """``registered_distance`` on the registration corrected by :func:`temporal_residual`."""

    def register(self, table, detections=None):
        ids, registration = super().register(table, detections)
        if not getattr(self, "corrected", False):
            key, frames, points, det_ids, cap, _, held = self._owners
            moved = rd.Registration(temporal_residual(registration.positions, held, points),
                                    registration.sigma, registration.settings)
            self._cache = (self._cache[0], moved)
            self._owners = (key, frames, points, det_ids, cap,
                            *rd.assign_detections(moved.positions, frames, points, cap))
            self.corrected = True
        return ids, self._cache[1]


def per_frame(table, ids, registration, coords) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: ``d`` to the claimed registered anchor, ``-log`` responsibility, and the
    claimed anchor's distance to its nearest other registered anchor (NaN where not scored)."""
    xyz, frames = table[coords].to_numpy(dtype=np.float64), table["frame"].to_numpy()
    which = ids.get_indexer(table["pred_id"])
    R, sigma = registration.positions, registration.sigma
    d, neg_log, spacing = (np.full(len(table), np.nan) for _ in range(3))
    for t in np.unique(frames):
        g = np.flatnonzero((frames == t) & (which >= 0))
        if t == 0 or not len(g) or not np.isfinite(R[t]).all():
            continue
        energy = ((xyz[g][:, None] - R[t][None]) ** 2).sum(axis=2) / (2 * sigma[t] ** 2)
        own = energy[np.arange(len(g)), which[g]]
        neg_log[g] = own + logsumexp(-energy, axis=1)
        d[g] = np.linalg.norm(xyz[g] - R[t, which[g]], axis=1)
        spacing[g] = rd.identity_spacings(R[t])[which[g]]
    return d, neg_log, spacing


def completed(verifier: rd.RegisteredDistance, table, ids, registration, d: np.ndarray) -> np.ndarray:
    """Rows on a detection nobody holds whose claimed anchor holds a nearer one."""
    _, _, points, _, cap, _, held = verifier._owners
    frames, which = table["frame"].to_numpy(), ids.get_indexer(table["pred_id"])
    k = held[frames, np.maximum(which, 0)]
    R = registration.positions
    own = np.linalg.norm(points[np.maximum(k, 0)] - R[frames, np.maximum(which, 0)], axis=1)
    return (verifier.last_claimant < 0) & (which >= 0) & (k >= 0) & (np.minimum(d, cap) > own)


def local_motion(verifier: rd.RegisteredDistance, table, ids) -> np.ndarray:
    """``e + max(0, e - alt)`` per row against the check's prediction on the assigned
    detections (NaN without a claimed anchor or a prediction)."""
    _, _, points, _, _, _, held = verifier._owners
    assigned = np.where((held >= 0)[..., None], points[np.maximum(held, 0)], np.nan)
    return bench.scores_against(residuals(assigned, CheckSettings())[1], table, ids)


def main() -> None:
    observations, detections, table, error = bench.real_recording(
        bench.SHARED / "fdnc-nerve-freely-moving")

    def pooled(score: np.ndarray) -> np.ndarray:
        return pool_along_tracks(score, *claimed_tracks(table), 1)

    verifier = rd.RegisteredDistance(track_window=0)
    raw = run_verifier(verifier, table, detections)
    ids, registration = verifier.register(table, detections)
    d, neg_log, spacing = per_frame(table, ids, registration, bench.COORDS)
    c = rd.anchor_spacing(registration.positions[0])  # the median s_p; also the assignment's cap
    scored = np.isfinite(raw)
    scores = {
        "default": pooled(raw),
        "relative": run_verifier(rd.RegisteredDistance(score="relative"), table, detections),
        "relative at t": pooled(raw * c / spacing),
        "posterior": pooled(np.where(scored, neg_log, np.nan)),
        "assignment completed": pooled(raw + c * completed(verifier, table, ids, registration, d)),
        "temporal residual": run_verifier(TemporalResidual(), table, detections),
    }
    local = np.where(scored, local_motion(verifier, table, ids), np.nan)
    scores["local motion"] = pooled(np.where(np.isnan(local), raw, local))
    scores["larger of 1 and 7"] = pooled(np.fmax(raw, local))
    development = observations["frame"].to_numpy() <= 373
    kept = bench.unquestioned_by_half(observations, detections, 373)
    for half, mask in (("development", development), ("rest", ~development)):
        for name, score in scores.items():
            block = bench.populations(error, score, mask, kept)["unquestioned_rows"]
            print(f"{half:12s} {name:22s} AUROC* {block['auroc_abst']:.3f}  cov@1% "
                  f"{block['cov_at_fcr1']:.3f}  cov@2% {block['cov_at_fcr2']:.3f}  cov@5% {block['cov_at_fcr5']:.3f}")


if __name__ == "__main__":
    main()
