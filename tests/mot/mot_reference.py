"""Canonical metrics from the reference libraries, run in the separate ``.venv-mot``.

Usage: ``.venv-mot/bin/python mot_reference.py INPUT.npz [--no-motmetrics] [--no-trackeval]
[--repeat N]``. Prints one JSON object: per sequence and combined, the TrackEval HOTA / CLEAR /
Identity results and the py-motmetrics results, plus seconds (best of N runs; every run's
time in ``runs``, its CPU time in ``cpu_runs``): each library's own work, and apart from it
``similarity``, this harness building their per-frame input.

INPUT.npz holds ``zero_distance`` (0 = compare ``det`` ids instead of positions),
``names`` (sequence names) and per sequence ``NAME/gt_frame``, ``NAME/gt_id``,
``NAME/gt_xyz`` or ``NAME/gt_det``, and the same with ``pred``. Similarity is computed here,
independently: ``max(0, 1 - d / zero_distance)`` per frame, or 1 for the same detection.
This file deliberately does not import trackverify.
"""

import json
import sys
import time

import numpy as np

EPS = np.finfo(float).eps


def load(path):
    z = np.load(path, allow_pickle=False)
    zd = float(z["zero_distance"])
    seqs = {}
    for name in [str(n) for n in z["names"]]:
        seq = {}
        for side in ("gt", "pred"):
            seq[side + "_frame"] = z[f"{name}/{side}_frame"]
            seq[side + "_id"] = z[f"{name}/{side}_id"]
            key = f"{name}/{side}_xyz" if zd > 0 else f"{name}/{side}_det"
            seq[side + "_loc"] = z[key]
        seqs[name] = seq
    return zd, seqs


def per_frame(seq, zd):
    """TrackEval's data dict: contiguous ids, one similarity matrix per timestep."""
    gt_u, gt_ids = np.unique(seq["gt_id"], return_inverse=True)
    pr_u, pr_ids = np.unique(seq["pred_id"], return_inverse=True)
    frames = np.concatenate([seq["gt_frame"], seq["pred_frame"]])
    n_t = int(frames.max()) + 1 if len(frames) else 0
    g_order = np.argsort(seq["gt_frame"], kind="stable")
    p_order = np.argsort(seq["pred_frame"], kind="stable")
    g_cut = np.searchsorted(seq["gt_frame"][g_order], np.arange(n_t + 1))
    p_cut = np.searchsorted(seq["pred_frame"][p_order], np.arange(n_t + 1))
    data = {"gt_ids": [], "tracker_ids": [], "similarity_scores": [], "num_timesteps": n_t,
            "num_gt_ids": len(gt_u), "num_tracker_ids": len(pr_u),
            "num_gt_dets": len(gt_ids), "num_tracker_dets": len(pr_ids)}
    for t in range(n_t):
        gi = g_order[g_cut[t]:g_cut[t + 1]]
        pi = p_order[p_cut[t]:p_cut[t + 1]]
        a, b = seq["gt_loc"][gi], seq["pred_loc"][pi]
        if zd > 0:
            d = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
            sim = np.maximum(0.0, 1.0 - d / zd)
        else:
            sim = (a[:, None] == b[None, :]).astype(float)
        data["gt_ids"].append(gt_ids[gi].astype(int))
        data["tracker_ids"].append(pr_ids[pi].astype(int))
        data["similarity_scores"].append(sim.reshape(len(gi), len(pi)))
    return data


def plain(res):
    out = {}
    for k, v in res.items():
        v = np.asarray(v, dtype=float)
        out[k] = float(v) if v.ndim == 0 else [float(x) for x in v]
    return out


def run_trackeval(datas):
    from trackeval.metrics import CLEAR, HOTA, Identity

    cfg = {"THRESHOLD": 0.5, "PRINT_CONFIG": False}
    metrics = {"HOTA": HOTA(), "CLEAR": CLEAR(cfg), "Identity": Identity(cfg)}
    out = {}
    per = {m: {} for m in metrics}
    for name, data in datas.items():
        out[name] = {}
        for m, metric in metrics.items():
            per[m][name] = metric.eval_sequence(data)
            out[name][m] = plain(per[m][name])
    out["COMBINED_SEQ"] = {m: plain(metric.combine_sequences(per[m]))
                           for m, metric in metrics.items()}
    return out


def run_motmetrics(datas):
    import motmetrics as mm

    accs = []
    for data in datas.values():
        acc = mm.MOTAccumulator(auto_id=False)
        for t in range(data["num_timesteps"]):
            sim = data["similarity_scores"][t]
            dist = np.where(sim >= 0.5 - EPS, 1.0 - sim, np.nan)
            acc.update(data["gt_ids"][t], data["tracker_ids"][t], dist, frameid=t)
        accs.append(acc)
    fields = ["num_objects", "num_predictions", "num_detections", "num_misses",
              "num_false_positives", "num_switches", "num_fragmentations", "mota", "motp",
              "idf1", "idp", "idr", "idtp", "idfn", "idfp", "mostly_tracked",
              "partially_tracked", "mostly_lost"]
    mh = mm.metrics.create()
    summary = mh.compute_many(accs, metrics=fields, names=list(datas), generate_overall=True)
    return {str(row): {f: float(summary.loc[row, f]) for f in fields} for row in summary.index}


RUNS = {}  # every run's wall-clock seconds, per step (printed as "runs")
CPU_RUNS = {}  # and its CPU seconds (this process; printed as "cpu_runs")


def best_of(repeat, fn, *args, step=None):
    """(result, the fastest of ``repeat`` wall-clock runs in seconds); each run's time is
    kept in ``RUNS[step]``, its CPU time in ``CPU_RUNS[step]``."""
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    RUNS[step] = times
    CPU_RUNS[step] = cpu
    return out, min(times)


def main():
    zd, seqs = load(sys.argv[1])
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    # "similarity" is this harness building TrackEval's per-frame input, not TrackEval.
    datas, t_data = best_of(repeat, lambda: {name: per_frame(seq, zd)
                                             for name, seq in seqs.items()}, step="similarity")
    result = {"seconds": {"similarity": t_data}}
    if "--no-trackeval" not in sys.argv:
        result["trackeval"], result["seconds"]["trackeval"] = best_of(
            repeat, run_trackeval, datas, step="trackeval")
    if "--no-motmetrics" not in sys.argv:
        result["motmetrics"], result["seconds"]["motmetrics"] = best_of(
            repeat, run_motmetrics, datas, step="motmetrics")
    result["runs"] = RUNS
    result["cpu_runs"] = CPU_RUNS
    json.dump(result, sys.stdout, allow_nan=True)


if __name__ == "__main__":
    main()
