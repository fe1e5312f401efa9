"""Canonical tracking metrics: trackverify.mot against TrackEval and py-motmetrics.

    .venv/bin/python benchmarks/bench_mot.py [--sizes 50x1000,150x3000,300x3000]
                                             [--motmetrics-max 150x3000] [--repeat 3]

Scenes: random walks (3-D, density kept constant), localisation noise, 5 % dropout, id
swaps over intervals, fragments, ids that vanish and return, one false positive per frame.
The reference libraries run in ``.venv-mot`` (``make test`` builds it) through
``tests/mot/mot_reference.py``, which also times them. Times are wall-clock seconds of one
run; "similarity" is building the per-frame similarities from the points (for us: the
candidate pairs), "metrics" is HOTA + CLEAR + Identity from those. The numbers must agree
to 1e-9 with TrackEval on every metric, and with py-motmetrics on the Identity metrics (its
CLEAR matching keeps old pairings first; docs/metrics.md). It also times
``evaluate_tracking`` end to end, from the two data frames to the results (validation,
similarities, the CLEAR linking, the oracle diagnostics and the canonical metrics), against
TrackEval's similarity + metrics total: medians over ``--repeat`` runs of TrackEval (the
reference libraries run again each time) and three times as many of ours, with the absolute times beside the ratio, and
the memory: the peak ``evaluate_tracking`` allocates (tracemalloc) and the peak resident
memory of a fresh process that reads the two tables from Parquet and runs it once. Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "mot"))

from mot_helpers import motmetrics_summary, trackeval_summary  # noqa: E402
from mot_scenes import random_scene, save_npz  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

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
    t2 = time.perf_counter()
    return mot.finish(counts), t1 - t0, t2 - t1


def frames(scene: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The scene as the two data frames ``evaluate_tracking`` takes (one recording)."""
    axes = ["x_um", "y_um", "z_um"]
    ref = pd.DataFrame({"recording": "s", "frame": scene["gt_frame"], "track": scene["gt_id"],
                        **{a: scene["gt_xyz"][:, k] for k, a in enumerate(axes)}})
    pred = pd.DataFrame({"recording": "s", "frame": scene["pred_frame"],
                         "pred_id": scene["pred_id"],
                         **{a: scene["pred_xyz"][:, k] for k, a in enumerate(axes)}})
    return ref, pred


def end_to_end(scene: dict) -> tuple[dict, float]:
    """``evaluate_tracking`` from the two data frames (validation, similarities, CLEAR
    linking, oracle diagnostics, canonical metrics): its recording's results and seconds."""
    ref, pred = frames(scene)
    t0 = time.perf_counter()
    res = evaluate_tracking(ref, pred, ZD)
    return res["s"], time.perf_counter() - t0


def scene_of(n_ids: int, n_frames: int) -> dict:
    return random_scene(20261007, n_ids=n_ids, n_frames=n_frames,
                        box=80.0 * (n_ids / 150) ** (1 / 3), noise=0.5, dropout=0.05,
                        swaps=5, vanish=5, fragments=3, fp_per_frame=1)


def process_memory(scene: dict) -> tuple[float, float]:
    """Resident memory (GiB) of a fresh process that has read the two data frames (from
    Parquet, libraries loaded), and its peak during ``evaluate_tracking`` on them."""
    with tempfile.TemporaryDirectory() as tmp:
        ref, pred = frames(scene)
        ref.to_parquet(Path(tmp) / "ref.parquet")
        pred.to_parquet(Path(tmp) / "pred.parquet")
        done = subprocess.run([sys.executable, __file__, "--memory-of", tmp],
                              capture_output=True, text=True, check=True)
    inputs, peak = map(float, done.stdout.split())
    return inputs, peak


def _resident(field: str) -> float:
    """``VmRSS`` or ``VmHWM`` (peak) of this process in GiB, from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 2 ** 20  # kB -> GiB
    raise RuntimeError(f"no {field} in /proc/self/status")


def _memory_of(folder: str) -> None:
    ref = pd.read_parquet(Path(folder) / "ref.parquet")
    pred = pd.read_parquet(Path(folder) / "pred.parquet")
    evaluate_tracking(ref.iloc[:100], pred.iloc[:100], ZD)  # load every module
    Path("/proc/self/clear_refs").write_text("5")  # peak := current resident memory
    inputs = _resident("VmRSS")
    evaluate_tracking(ref, pred, ZD)
    print(inputs, _resident("VmHWM"))


def by_detection_with_identity_noise(scene: dict, rate: float = 0.02) -> float:
    """Seconds of ``evaluate_tracking`` linked by detection when a share ``rate`` of the
    predictions carry a random predicted id: every track then overlaps many ids, smaller
    ones than its partner among them (the case that once cost one Hungarian re-solve per
    such pair in the oracle alignment's tie rule)."""
    ref, pred = frames(scene)
    ref["detection"] = scene["gt_det"]
    pred["detection"] = scene["pred_det"]
    rng = np.random.default_rng(1)
    noisy = rng.random(len(pred)) < rate
    ids = pred["pred_id"].to_numpy().copy()
    ids[noisy] = rng.choice(np.unique(ids), int(noisy.sum()))
    pred["pred_id"] = ids
    pred = pred.drop_duplicates(["frame", "pred_id"])  # an id is one object per frame
    t0 = time.perf_counter()
    evaluate_tracking(ref, pred, ZD)
    return time.perf_counter() - t0


def peak_memory(scene: dict) -> float:
    """Peak of the memory allocated (tracemalloc, GiB) by similarities + metrics."""
    tracemalloc.start()
    ours(scene)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 30


def allocated_end_to_end(scene: dict) -> float:
    """Peak of the memory ``evaluate_tracking`` allocates (tracemalloc, GiB; the two data
    frames it is given not counted)."""
    ref, pred = frames(scene)
    tracemalloc.start()
    evaluate_tracking(ref, pred, ZD)
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
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of the end-to-end comparison (medians are printed)")
    parser.add_argument("--memory-of", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_of:
        return _memory_of(args.memory_of)
    python = ROOT / ".venv-mot" / "bin" / "python"
    if not python.exists():
        sys.exit("build the reference environment first: make .make/mot")
    mm_ids, mm_frames = map(int, args.motmetrics_max.split("x"))
    ours(random_scene(0))  # warm up imports
    disagreements = []
    for size in args.sizes.split(","):
        n_ids, n_frames = map(int, size.split("x"))
        scene = scene_of(n_ids, n_frames)
        flags = [] if (n_ids * n_frames <= mm_ids * mm_frames) else ["--no-motmetrics"]
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "scene.npz"
            save_npz(path, {"s": scene}, ZD)
            for k in range(max(1, args.repeat)):
                done = subprocess.run([str(python), str(ROOT / "tests/mot/mot_reference.py"),
                                       str(path), *(flags if k == 0 else flags + [
                                           "--no-motmetrics"])],
                                      capture_output=True, text=True, check=True)
                runs.append(json.loads(done.stdout))
        ref = runs[0]
        mine, t_sim, t_met = ours(scene)
        sec = ref["seconds"]
        te = trackeval_summary(ref["trackeval"]["s"])
        print(f"\n{n_ids} ids x {n_frames} frames: {len(scene['gt_frame'])} reference and "
              f"{len(scene['pred_frame'])} predicted detections")
        print(f"  trackverify      similarity {t_sim:7.3f} s  metrics {t_met:7.3f} s  "
              f"total {t_sim + t_met:7.3f} s   peak memory {peak_memory(scene):.2f} GiB")
        print(f"  TrackEval        similarity {sec['similarity']:7.3f} s  metrics "
              f"{sec['trackeval']:7.3f} s  total {sec['similarity'] + sec['trackeval']:7.3f} s")
        print(f"    speed-up: metrics {sec['trackeval'] / t_met:6.1f}x   total "
              f"{(sec['similarity'] + sec['trackeval']) / (t_sim + t_met):6.1f}x   "
              f"max |diff| over all metrics {max_diff(mine, te, te):.1e}")
        if max_diff(mine, te, te) > 1e-9:
            disagreements.append(f"{size}: TrackEval")
        theirs = [r["seconds"]["similarity"] + r["seconds"]["trackeval"] for r in runs]
        whole, t_e2e = end_to_end(scene)
        mine_e2e = [t_e2e] + [end_to_end(scene)[1] for _ in range(3 * len(runs) - 1)]
        t_theirs, t_mine = statistics.median(theirs), statistics.median(mine_e2e)
        inputs, peak = process_memory(scene)
        allocated = allocated_end_to_end(scene)
        print(f"  evaluate_tracking end to end (data frames -> results, validation and "
              f"oracle diagnostics included), medians of {len(mine_e2e)} and {len(runs)} runs: "
              f"{t_mine:7.3f} s vs "
              f"TrackEval's similarity + metrics {t_theirs:7.3f} s: {t_theirs / t_mine:6.1f}x   "
              f"max |diff| {max_diff(whole, te, te):.1e}")
        print(f"    runs: ours {', '.join(f'{t:.3f}' for t in mine_e2e)} s; TrackEval "
              f"{', '.join(f'{t:.2f}' for t in theirs)} s")
        print(f"    memory: evaluate_tracking allocates at most {allocated:.2f} GiB; a fresh "
              f"process that read the two tables from Parquet peaks at {peak:.2f} GiB "
              f"resident ({inputs:.2f} GiB before the call: libraries and inputs)")
        if max_diff(whole, te, te) > 1e-9:
            disagreements.append(f"{size}: evaluate_tracking vs TrackEval")
        print(f"  evaluate_tracking by detection, 2 % of predicted ids random: "
              f"{by_detection_with_identity_noise(scene):7.3f} s")
        if "motmetrics" in ref:
            mm = motmetrics_summary(ref["motmetrics"]["s"])
            clear = [k for k in mm if k not in IDENTITY]
            print(f"  py-motmetrics    similarity {sec['similarity']:7.3f} s  metrics "
                  f"{sec['motmetrics']:7.3f} s  total "
                  f"{sec['similarity'] + sec['motmetrics']:7.3f} s")
            print(f"    speed-up: metrics {sec['motmetrics'] / t_met:6.1f}x   total "
                  f"{(sec['similarity'] + sec['motmetrics']) / (t_sim + t_met):6.1f}x   "
                  f"Identity max |diff| {max_diff(mine, mm, IDENTITY):.1e}   CLEAR max |diff| "
                  f"{max_diff(mine, mm, clear):.1e} (documented matching differences)")
            if max_diff(mine, mm, IDENTITY) > 1e-9:
                disagreements.append(f"{size}: py-motmetrics Identity")
    if disagreements:
        sys.exit("numbers differ: " + ", ".join(disagreements))
    print("\nall numbers agree (TrackEval: every metric; py-motmetrics: Identity) to 1e-9")


if __name__ == "__main__":
    main()
