"""Speed of the stage evaluators' hot paths on realistic sizes.

Body tracking: 10 flies x 30,000 frames (~200 s at 150 fps), a submission with 2 px noise,
NaN gaps and one identity split per fly; registration alignment of 10 trajectories; gait
bout-BA on (10, 30,000, 6). Wall time per step (best of --repeats).

    .venv/bin/python benchmarks/bench_stages.py [--frames 30000] [--flies 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np

from trackverify.stages import synthetic as S
from trackverify.stages.body_tracking import BodyTrackingConfig, mota
from trackverify.stages.common import align_trajectories, check_trx
from trackverify.stages.gait import bout_balanced_accuracy


def _split(trx, i, at):
    """Split target i at local index ``at`` into two targets (a lost identity)."""
    out = copy.deepcopy(trx)
    for key in ("x", "y", "theta", "a", "b"):
        arr = out[key][i]
        out[key][i], tail = arr[:at], arr[at:]
        out[key].append(tail)
    out["dt"][i] = out["dt"][i][:at - 1]
    out["dt"].append(np.full(trx["nframes"][i] - at - 1, 1 / 150))
    ff = int(out["firstframe"][i])
    out["firstframe"] = np.append(out["firstframe"], ff + at)
    out["endframe"] = np.append(out["endframe"], out["endframe"][i])
    out["endframe"][i] = ff + at - 1
    out["nframes"] = np.append(out["nframes"], trx["nframes"][i] - at)
    out["nframes"][i] = at
    out["ntargets"] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30000)
    parser.add_argument("--flies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    t = S.fly_experiment(0, n_flies=args.flies, n_frames=args.frames)
    gt = check_trx(S.file_trx(t, mm=False), "gt")
    rng = np.random.default_rng(1)
    noisy = S.with_nan_gaps(S.file_trx(t, mm=False), seed=2, gaps_per_fly=20)
    noisy["x"] = [x + rng.normal(0, 2, x.size) for x in noisy["x"]]
    for i in range(args.flies):
        noisy = _split(noisy, i, args.frames // 2 + 100 * i)
    sub = check_trx(noisy, "sub")
    ss = S.swing_stance(t, 0)
    steps = {
        "mota": lambda: mota(gt, sub, BodyTrackingConfig()),
        "align_trajectories": lambda: align_trajectories(sub, gt),
        "bout_balanced_accuracy": lambda: bout_balanced_accuracy(ss[:, ::-1], ss),
    }
    print(f"{args.flies} flies x {args.frames} frames, {sub['ntargets']} submitted tracks")
    for name, fn in steps.items():
        best = np.inf
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t0)
        extra = f"  MOTA {out['mota']:.4f}, assigned frames {out['frames_assigned']}" \
            if name == "mota" else ""
        print(f"{name:24s} {best:8.3f} s{extra}")


if __name__ == "__main__":
    main()
