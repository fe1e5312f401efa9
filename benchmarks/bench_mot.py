"""Canonical tracking metrics: trackverify.metrics.mot against TrackEval and py-motmetrics.

    .venv/bin/python benchmarks/bench_mot.py [--sizes 50x1000,150x3000,300x3000]
                                             [--motmetrics-max 150x3000] [--repeat 1]
    .venv/bin/python benchmarks/bench_mot.py --stages 150x3000 --repeat 15

Scenes: random walks (3-D, density kept constant), localisation noise, 5 % dropout, id
swaps over intervals, fragments, ids that vanish and return, one false positive per frame.
The reference libraries run in ``.venv-mot`` (``make test`` builds it) through
``tests/mot/mot_reference.py``, which also times them. Every time is wall clock, the best
(and, for the end-to-end ratio, the median) of ``--repeat`` runs on both sides. What is
counted:

- TrackEval / py-motmetrics, "metrics": only the libraries' own work (``eval_sequence`` of
  HOTA, CLEAR, Identity and ``combine_sequences``; the accumulators and ``compute_many``),
  given their per-frame input ready-made; "sim": building that input (per-frame id arrays
  and dense similarity matrices, as TrackEval's dataset classes do; harness code);
- trackverify, "metrics": ``sequence_counts`` + ``finish`` from candidate pairs (the part
  comparable to the libraries' work), "similarity": ``similarity_pairs`` from the points;
- trackverify, "public call": ``evaluate_tracking(reference, predictions)`` on tables, end
  to end (validation, candidate pairs, canonical metrics, oracle diagnostics, pooling).

Ratios: ``metrics`` = library / our metrics; ``end-to-end`` = TrackEval sim + metrics / our
public call (medians), and beside it TrackEval's metrics alone / our public call; the
end-to-end ratio once more in CPU time (each side's own process), which a loaded machine
does not share out unevenly between the two sides as it does wall-clock time, with the
system time and minor page faults of each public call run (the memory it pages in afresh:
glibc gives freed heap back to the system between calls). Memory of
the public call: what it allocates (tracemalloc peak) and the peak resident size of a fresh
process holding the two tables while it runs (with its size before the call). The numbers
must agree to 1e-9 with TrackEval on every metric, and with py-motmetrics on the Identity
metrics (its CLEAR matching keeps old pairings first; docs/reference/metrics.md). Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
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
from mot_scenes import random_scene, save_npz, scene_tables  # noqa: E402

from trackverify import evaluate_tracking  # noqa: E402

from trackverify.metrics import mot

ZD = 5.0
IDENTITY = ("idf1", "idp", "idr", "idtp", "idfn", "idfp")
CPU_RUNS: list[list[float]] = []  # CPU seconds of each public call run, per scene
SYSTEM_RUNS: list[list[tuple[float, int]]] = []  # (system seconds, minor page faults) of each


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


def public_call(scene: dict, repeat: int) -> tuple[dict, list[float], float]:
    """``evaluate_tracking`` on the scene's tables: (metrics of the recording, seconds of
    each run, GiB allocated by one call at its peak)."""
    reference, predictions = scene_tables({"s": scene})
    times, cpu, system = [], [], []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0, c0 = time.perf_counter(), time.process_time()
        result = evaluate_tracking(reference, predictions, zero_distance_um=ZD)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        system.append((r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt))
    CPU_RUNS.append(cpu)
    SYSTEM_RUNS.append(system)
    tracemalloc.start()
    evaluate_tracking(reference, predictions, zero_distance_um=ZD)
    allocated = tracemalloc.get_traced_memory()[1] / 2 ** 30
    tracemalloc.stop()
    return result["s"], times, allocated


def scene_of(n_ids: int, n_frames: int) -> dict:
    return random_scene(20261007, n_ids=n_ids, n_frames=n_frames,
                        box=80.0 * (n_ids / 150) ** (1 / 3), noise=0.5, dropout=0.05,
                        swaps=5, vanish=5, fragments=3, fp_per_frame=1)


def resident(size: str) -> dict:
    """Peak resident GiB of a fresh process holding the two tables of ``size`` while
    ``evaluate_tracking`` runs, and its resident GiB just before the call."""
    done = subprocess.run([sys.executable, __file__, "--resident-child", size],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _resident_child(size: str) -> None:
    n_ids, n_frames = map(int, size.split("x"))
    reference, predictions = scene_tables({"s": scene_of(n_ids, n_frames)})
    evaluate_tracking(reference.iloc[:1000], predictions.iloc[:1000], zero_distance_um=ZD)
    gc.collect()
    status = Path("/proc/self/status")
    try:  # reset the high-water mark to the current size (Linux), so the peak is the call's
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_gib(status, "VmRSS")
    except OSError:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    evaluate_tracking(reference, predictions, zero_distance_um=ZD)
    try:
        peak = _status_gib(status, "VmHWM")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    print(json.dumps({"before": before, "peak": peak}))


def _status_gib(status: Path, field: str) -> float:
    line = next(x for x in status.read_text().splitlines() if x.startswith(field + ":"))
    return int(line.split()[1]) / 2 ** 20


def peak_memory(scene: dict) -> float:
    tracemalloc.start()
    ours(scene)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 30


#: The steps of ``evaluate_tracking`` timed by ``--stages``: (module, function) in call order.
STAGES = (("tracking_gt", "validate_pair"), ("tracking_gt", "recording_codes"),
          ("tracking_gt", "check_predictions"), ("tracking_gt", "score_recording"),
          ("tracking_gt", "sorted_codes"), ("mot", "frame_order"), ("mot", "in_frame_order"),
          ("mot", "similarity_pairs_by_axis"), ("mot", "sequence_counts"), ("mot", "_pair_keys"),
          ("mot", "_alone"), ("mot", "_hota"), ("mot", "stable_order"), ("mot", "_clear"),
          ("mot", "_identity"), ("tracking_gt", "identity_report"),
          ("associate", "_identity_arrays"), ("associate", "align_identities"),
          ("tracking_gt", "pool_recordings"), ("tracking_gt", "stack_by_recording"))


def print_stages(size: str, repeat: int) -> None:
    """CPU ms of each step of ``evaluate_tracking`` on the scene of ``size`` (best of
    ``repeat`` calls; a step's time includes the steps it calls, listed below it)."""
    import functools
    import importlib

    spent: dict[str, float] = {}
    for module_name, name in STAGES:
        module = importlib.import_module(f"trackverify.{module_name}")
        inner = getattr(module, name)

        @functools.wraps(inner)
        def timed(*args, _inner=inner, _key=f"{module_name}.{name}", **kwargs):
            start = time.process_time()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_key] = spent.get(_key, 0.0) + time.process_time() - start
        setattr(module, name, timed)
    import trackverify.metrics.tracking as tracking_gt

    n_ids, n_frames = map(int, size.split("x"))
    reference, predictions = scene_tables({"s": scene_of(n_ids, n_frames)})
    tracking_gt.evaluate_tracking(reference, predictions, zero_distance_um=ZD)  # warm up
    best: dict[str, float] = {}
    for _ in range(repeat):
        spent.clear()
        start = time.process_time()
        tracking_gt.evaluate_tracking(reference, predictions, zero_distance_um=ZD)
        spent["evaluate_tracking (the whole call)"] = time.process_time() - start
        for key, seconds in spent.items():
            best[key] = min(best.get(key, seconds), seconds)
    print(f"{n_ids} ids x {n_frames} frames: CPU ms per step of evaluate_tracking, best of "
          f"{repeat} calls (a step includes the steps it calls)")
    for key in ["evaluate_tracking (the whole call)",
                *(f"{m}.{n}" for m, n in STAGES if f"{m}.{n}" in best)]:
        print(f"  {best[key] * 1e3:8.1f}  {key}")


def max_diff(mine: dict, theirs: dict, keys) -> float:
    return max(abs(mine[k] - theirs[k]) for k in keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x1000,150x3000,300x3000")
    parser.add_argument("--motmetrics-max", default="300x3000",
                        help="largest size (ids x frames) to run py-motmetrics on")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per side and step; the best (and median) is shown")
    parser.add_argument("--stages", metavar="IDSxFRAMES",
                        help="only time the steps of evaluate_tracking at this size (CPU ms, "
                             "best of --repeat calls) and stop")
    parser.add_argument("--resident-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resident_child:
        return _resident_child(args.resident_child)
    if args.stages:
        return print_stages(args.stages, max(args.repeat, 1))
    python = ROOT / ".venv-mot" / "bin" / "python"
    if not python.exists():
        sys.exit("build the reference environment first: make .make/mot")
    mm_ids, mm_frames = map(int, args.motmetrics_max.split("x"))
    public_call(random_scene(0), 1)  # warm up imports
    disagreements = []
    print(f"wall clock, best (and median) of {args.repeat} run(s) per side")
    for size in args.sizes.split(","):
        n_ids, n_frames = map(int, size.split("x"))
        scene = scene_of(n_ids, n_frames)
        flags = [] if (n_ids * n_frames <= mm_ids * mm_frames) else ["--no-motmetrics"]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "scene.npz"
            save_npz(path, {"s": scene}, ZD)
            done = subprocess.run([str(python), str(ROOT / "tests/mot/mot_reference.py"),
                                   str(path), "--repeat", str(args.repeat), *flags],
                                  capture_output=True, text=True, check=True)
        ref = json.loads(done.stdout)
        mine, t_sim, t_met = best_ours(scene, args.repeat)
        api, api_runs, allocated = public_call(scene, args.repeat)
        t_api, api_median = min(api_runs), statistics.median(api_runs)
        memory = resident(size)
        sec = ref["seconds"]
        runs = ref.get("runs", {})
        te_median = statistics.median(runs.get("similarity", [sec["similarity"]])) + \
            statistics.median(runs.get("trackeval", [sec["trackeval"]]))
        te = trackeval_summary(ref["trackeval"]["s"])
        print(f"\n{n_ids} ids x {n_frames} frames: {len(scene['gt_frame'])} reference and "
              f"{len(scene['pred_frame'])} predicted detections")
        print(f"  trackverify   similarity {t_sim:7.3f} s  metrics {t_met:7.3f} s  "
              f"peak memory {peak_memory(scene):.2f} GiB")
        print(f"    public call (evaluate_tracking) median {api_median:7.3f} s, best "
              f"{t_api:7.3f} s of {len(api_runs)}; allocates {allocated:.2f} GiB; peak resident "
              f"{memory['peak']:.2f} GiB (process with the two tables, {memory['before']:.2f} "
              f"GiB before the call)")
        print(f"  TrackEval     sim {sec['similarity']:7.3f} s (harness building its per-frame "
              f"input)  metrics {sec['trackeval']:7.3f} s  (medians: sim + metrics "
              f"{te_median:.3f} s)")
        print(f"    ratio: metrics {sec['trackeval'] / t_met:6.1f}x   end-to-end (TrackEval sim "
              f"+ metrics / public call, medians) {te_median / api_median:6.1f}x   TrackEval "
              f"metrics alone / public call {sec['trackeval'] / t_api:6.1f}x   max |diff| over "
              f"all metrics {max(max_diff(mine, te, te), max_diff(api, te, te)):.1e}")
        cpu_runs = ref.get("cpu_runs", {})
        if "similarity" in cpu_runs and "trackeval" in cpu_runs:
            te_cpu = statistics.median(cpu_runs["similarity"]) + \
                statistics.median(cpu_runs["trackeval"])
            api_cpu = statistics.median(CPU_RUNS[-1])
            print(f"    CPU time (medians; the load does not share it out): public call "
                  f"{api_cpu:.3f} s, TrackEval sim + metrics {te_cpu:.3f} s, end-to-end "
                  f"{te_cpu / api_cpu:6.1f}x")
            print("      of which system time (page faults of fresh memory) per public call run: "
                  + ", ".join(f"{sys_s * 1e3:.0f} ms ({faults} faults)"
                              for sys_s, faults in SYSTEM_RUNS[-1]))
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
