"""Does a non-causal second registration catch what the causal one shares with the tracker?

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/backward_registration.py

``registered_distance`` registers frame ``t`` from the frames before it, as the CPD tracker
tracks. Here every frame ``t`` is registered a second time from the *next* frame's registration
(the better of ``R[t+1]`` and the constant-velocity step back from ``R[t+2]``; the same
identity-free CPD, settings and detections), and each row scored against it as against ``R``
(``d + max(0, d - alt)``, without the one-to-one term). The CPD tracker's identities on the real
freely moving recording (errors against the frame-0 identity), on the rows the reference check
does not question, per half: the verifier's own score, the backward score alone, and the larger
of the two. An experiment, not a verifier setting (docs/evidence/reference-check.md).
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

import check_reference_real as bench
from trackverify.verifiers import registered_distance as rd
from trackverify.verifiers import run_verifier


def backward(registration: rd.Registration, detections, coords: list[str]) -> np.ndarray:
    """Every frame ``t`` registered again from frame ``t + 1``'s registration (NaN where
    either is missing)."""
    s, anchor = registration.settings, registration.positions[0]
    centre = anchor.mean(axis=0)
    radius = float(np.sqrt(((anchor - centre) ** 2).sum(axis=1).mean()))
    a, R = (anchor - centre) / radius, (registration.positions - centre) / radius
    spacing = rd.anchor_spacing(a)
    floor = max((s.min_sigma * spacing) ** 2, 1e-12)
    gram = rd._low_rank_kernel(a, s.beta, s.kernel_trace)
    frames = detections["frame"].to_numpy()
    points = (detections[coords].to_numpy(dtype=np.float64) - centre) / radius
    counts = np.bincount(frames)
    w = rd.fitted_outlier_weight(len(a), counts[counts > 0], s.outlier_weight)
    out = np.full_like(R, np.nan)
    with threadpool_limits(1):
        for t in range(1, len(R) - 1):
            if np.isnan(R[t, 0, 0]) or np.isnan(R[t + 1, 0, 0]):
                continue
            x = points[frames == t]
            starts = [R[t + 1]]
            if t + 2 < len(R) and not np.isnan(R[t + 2, 0, 0]):
                starts.append(rd.constant_velocity(R[t + 1], R[t + 2], 1, 1, s.momentum))
            start = rd._better_start(tuple(starts), x, spacing)
            out[t] = rd._register_frame(a, gram, x, start, max((s.frame_sigma * spacing) ** 2, floor),
                                        s.iterations, s.lam, w, floor, s.affine, s.tolerance)[0]
    return out * radius + centre


def main() -> None:
    observations, detections, table, error = bench.real_recording(
        bench.SHARED / "fdnc-nerve-freely-moving")
    verifier = rd.RegisteredDistance()
    forward = run_verifier(verifier, table, detections)
    ids, registration = verifier.register(table, detections)
    back = bench.scores_against(backward(registration, detections, bench.COORDS), table, ids)
    back = np.where(np.isnan(forward), np.nan, back)
    development = observations["frame"].to_numpy() <= 373
    kept = bench.unquestioned_by_half(observations, detections, 373)
    for half, mask in (("development", development), ("rest", ~development)):
        for name, score in (("forward (the verifier)", forward), ("backward alone", back),
                            ("larger of the two", np.where(np.isnan(back), forward, np.fmax(forward, back)))):
            block = bench.populations(error, score, mask, kept)["unquestioned_rows"]
            print(f"{half:12s} {name:24s} AUROC* {block['auroc_abst']:.3f}  cov@1% "
                  f"{block['cov_at_fcr1']:.3f}  cov@2% {block['cov_at_fcr2']:.3f}  cov@5% {block['cov_at_fcr5']:.3f}")


if __name__ == "__main__":
    main()
