"""Canonical tracking metrics: trackverify.mot against TrackEval and py-motmetrics.

    .venv/bin/python benchmarks/bench_mot.py [--sizes 50x1000,150x3000,300x3000]
                                             [--motmetrics-max 150x3000] [--repeat 1]

Scenes: random walks (3-D, density kept constant), localisation noise, 5 % dropout, id
swaps over intervals, fragments, ids that vanish and return, one false positive per frame.
The reference libraries run in ``.venv-mot`` (``make test`` builds it) through
``tests/mot/mot_reference.py``, which also times them. Every time is wall clock, the best of
``--repeat`` runs on both sides. What is counted:

- TrackEval / py-motmetrics: only the libraries' own work (``eval_sequence`` of HOTA, CLEAR,
  Identity and ``combine_sequences``; the accumulators and ``compute_many``), given their
  per-frame input ready-made. Building that input (per-frame id arrays and similarity
  matrices) is harness code, not the library's: it is shown apart, never added to them.
- trackverify, "metrics": ``sequence_counts`` + ``finish`` from candidate pairs (the part
  comparable to the libraries' work), "similarity": ``similarity_pairs`` from the points;
- trackverify, "public call": ``evaluate_tracking(reference, predictions)`` on tables, end
  to end (validation, candidate pairs, canonical metrics, oracle diagnostics, pooling).

Ratios: ``metrics`` = library / our metrics; ``end-to-end`` = library (its own work only,
input free) / our public call, so it understates ours. The numbers must agree to 1e-9 with
TrackEval on every metric, and with py-motmetrics on the Identity metrics (its CLEAR matching
keeps old pairings first; docs/metrics.md). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "mot"))

from mot_helpers import motmetrics_summary, trackeval_summary  # noqa: E402
from mot_scenes import random_scene, save_npz, scene_tables  # noqa: E402

from trackverify import evaluate_tracking, mot  # noqa: E402

ZD = 5.0
IDENTITY = ("idf1", "idp", "idr", "idtp", "idfn", "idfp")


def ours(scene: dict) -> tuple[dict, float, float]:
    t0 = time.perf_counter()
    pairs = mot.similarity_pairs(scene["gt_frame"], scene["gt_xyz"], scene["pred_frame"],
                                 scene["pred_xyz"], ZD)
    t1 = time.perf_counter()
    counts = mot.sequence_counts(scene["gt_frame"], scene["gt_id"], scene["pred_frame"],
                                 scene["pred_id"], *pairs)
    out = mot.finish(counts)
    t2 = time.perf_counter()
    return out, t1 - t0, t2 - t1


def best_ours(scene: dict, repeat: int) -> tuple[dict, float, float]:
    runs = [ours(scene) for _ in range(repeat)]
    return runs[0][0], min(r[1] for r in runs), min(r[2] for r in runs)


def public_call(scene: dict, repeat: int) -> tuple[dict, float]:
    """``evaluate_tracking`` on the scene's tables: (metrics of the recording, best seconds)."""
    reference, predictions = scene_tables({"s": scene})
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = evaluate_tracking(reference, predictions, zero_distance_um=ZD)
        best = min(best, time.perf_counter() - t0)
    return result["s"], best


def peak_memory(scene: dict) -> float:
    tracemalloc.start()
    ours(scene)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 30


def max_diff(mine: dict, theirs: dict, keys) -> float:
    return max(abs(mine[k] - theirs[k]) for k in keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x1000,150x3000,300x3000")
    parser.add_argument("--motmetrics-max", default="300x3000",
                        help="largest size (ids x frames) to run py-motmetrics on")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per side and step; the best is shown")
    args = parser.parse_args()
    python = ROOT / ".venv-mot" / "bin" / "python"
    if not python.exists():
        sys.exit("build the reference environment first: make .make/mot")
    mm_ids, mm_frames = map(int, args.motmetrics_max.split("x"))
    public_call(random_scene(0), 1)  # warm up imports
    disagreements = []
    print(f"wall clock, best of {args.repeat} run(s) per side")
    for size in args.sizes.split(","):
        n_ids, n_frames = map(int, size.split("x"))
        scene = random_scene(20261007, n_ids=n_ids, n_frames=n_frames,
                             box=80.0 * (n_ids / 150) ** (1 / 3), noise=0.5, dropout=0.05,
                             swaps=5, vanish=5, fragments=3, fp_per_frame=1)
        flags = [] if (n_ids * n_frames <= mm_ids * mm_frames) else ["--no-motmetrics"]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "scene.npz"
            save_npz(path, {"s": scene}, ZD)
            done = subprocess.run([str(python), str(ROOT / "tests/mot/mot_reference.py"),
                                   str(path), "--repeat", str(args.repeat), *flags],
                                  capture_output=True, text=True, check=True)
        ref = json.loads(done.stdout)
        mine, t_sim, t_met = best_ours(scene, args.repeat)
        api, t_api = public_call(scene, args.repeat)
        sec = ref["seconds"]
        te = trackeval_summary(ref["trackeval"]["s"])
        print(f"\n{n_ids} ids x {n_frames} frames: {len(scene['gt_frame'])} reference and "
              f"{len(scene['pred_frame'])} predicted detections")
        print(f"  trackverify   similarity {t_sim:7.3f} s  metrics {t_met:7.3f} s  "
              f"public call {t_api:7.3f} s   peak memory {peak_memory(scene):.2f} GiB")
        print(f"  TrackEval     metrics {sec['trackeval']:7.3f} s   (harness building its "
              f"per-frame input, not counted: {sec['similarity']:.3f} s)")
        print(f"    ratio: metrics {sec['trackeval'] / t_met:6.1f}x   end-to-end "
              f"{sec['trackeval'] / t_api:6.1f}x   max |diff| over all metrics "
              f"{max(max_diff(mine, te, te), max_diff(api, te, te)):.1e}")
        if max(max_diff(mine, te, te), max_diff(api, te, te)) > 1e-9:
            disagreements.append(f"{size}: TrackEval")
        if "motmetrics" in ref:
            mm = motmetrics_summary(ref["motmetrics"]["s"])
            clear = [k for k in mm if k not in IDENTITY]
            print(f"  py-motmetrics metrics {sec['motmetrics']:7.3f} s   (same harness input)")
            print(f"    ratio: metrics {sec['motmetrics'] / t_met:6.1f}x   end-to-end "
                  f"{sec['motmetrics'] / t_api:6.1f}x   Identity max |diff| "
                  f"{max_diff(mine, mm, IDENTITY):.1e}   CLEAR max |diff| "
                  f"{max_diff(mine, mm, clear):.1e} (documented matching differences)")
            if max_diff(mine, mm, IDENTITY) > 1e-9:
                disagreements.append(f"{size}: py-motmetrics Identity")
    if disagreements:
        sys.exit("numbers differ: " + ", ".join(disagreements))
    print("\nall numbers agree (TrackEval: every metric; py-motmetrics: Identity) to 1e-9")


if __name__ == "__main__":
    main()
