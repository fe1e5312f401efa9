"""pycpd's deformable coherent point drift on given frames, run in its own environment
(``.venv-pycpd``, mk/pycpd.mk; a speed anchor for benchmarks/bench_registration.py, never a
dependency of trackverify). Reads an ``.npz`` with, per frame ``k``, ``x_k`` (the frame's
detections, m x D) and ``y_k`` (the points to register onto them, n x D), and the arrays
``sigma2``, ``iterations`` (per frame) and the scalars ``w``, ``beta``, ``lam``. Each frame is
registered by ``DeformableRegistration(X=x_k, Y=y_k, sigma2=sigma2[k], alpha=lam, beta=beta,
w=w, max_iterations=iterations[k], tolerance=0)`` (tolerance 0: exactly that many EM steps).
Writes JSON: wall and CPU seconds of the registrations (best of ``--repeat``), the EM steps
taken, and the registered points' mean distance to their nearest detection (a sanity check).

    .venv-pycpd/bin/python benchmarks/pycpd_reference.py FRAMES.npz [--repeat 1]
"""

import argparse
import json
import time

import numpy as np
from pycpd import DeformableRegistration


def register_all(frames: list, sigma2, iterations, w, beta, lam) -> tuple[int, list]:
    steps, moved = 0, []
    for (x, y), s2, its in zip(frames, sigma2, iterations):
        reg = DeformableRegistration(X=x, Y=y, sigma2=float(s2), alpha=lam, beta=beta, w=w,
                                     max_iterations=int(its), tolerance=0.0)
        ty, _ = reg.register()
        steps += reg.iteration
        moved.append(ty)
    return steps, moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frames")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    data = np.load(args.frames)
    count = len(data["sigma2"])
    frames = [(data[f"x_{k}"], data[f"y_{k}"]) for k in range(count)]
    w, beta, lam = (float(data[k]) for k in ("w", "beta", "lam"))
    walls, cpus = [], []
    for _ in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        steps, moved = register_all(frames, data["sigma2"], data["iterations"], w, beta, lam)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    nearest = np.mean([np.sqrt(((t[:, None, :] - x[None, :, :]) ** 2).sum(-1).min(axis=1)).mean()
                       for t, (x, _) in zip(moved, frames)])
    print(json.dumps({"wall": min(walls), "cpu": min(cpus), "steps": steps, "frames": count,
                      "nearest": float(nearest)}))


if __name__ == "__main__":
    main()
