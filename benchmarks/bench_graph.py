"""Graph tracking metrics: trackverify.metrics.graph against traccuracy, end to end.

    .venv/bin/python benchmarks/bench_graph.py [--tracks 300] [--frames 500] [--seed 0]

Scene: a 3-D lineage forest of ``--tracks`` tracks (branches) over ``--frames`` frames:
roots in frame 0, each branch lives 20-120 frames and then divides in two, until the
forest has the requested number of tracks; the last branches run to the final frame.
Positions are random walks. The prediction is a perturbed copy (jitter, 5 % dropped
observations, cut parent links, false divisions, 3 % extra observations;
``tests/graph/graph_helpers.perturb``).

Timed end to end from the public call, one run each: ours is
:func:`trackverify.metrics.graph.evaluate.evaluate_graph` on the two data frames (validation, graph
building, point matching, CTC + divisions (buffer 2) + CHOTA); traccuracy is building its
networkx graphs from the same columns, ``PointMatcher`` and ``CTCMetrics`` +
``DivisionMetrics(max_frame_buffer=2)`` + ``CHOTAMetric`` in ``.venv-traccuracy`` (timed
inside that process, without its import time). The numbers are checked equal to 1e-9
(MBC at buffer 0; docs/reference/metrics.md). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "graph"))

from graph_helpers import assert_same, perturb, run_points, table, traccuracy_names  # noqa: E402

from trackverify.metrics.graph.evaluate import evaluate_graph  # noqa: E402

THRESHOLD = 3.0
FRAME_BUFFER = 2


def lineage(n_tracks: int, n_frames: int, seed: int, dim: int = 3):
    rng = np.random.default_rng(seed)
    n_roots = max(1, n_tracks // 5)
    # (track, start, parent, start position); branches are made breadth-first.
    queue = [(t, 0, -1, rng.uniform(0, 400, dim)) for t in range(n_roots)]
    frames, tracks, parents, xyz = [], [], [], []
    made = n_roots
    while queue:
        track, start, parent, pos = queue.pop(0)
        life = int(rng.integers(20, 121))
        divides = made + 2 <= n_tracks and start + life < n_frames - 1
        end = start + life if divides else n_frames - 1
        steps = np.cumsum(rng.normal(0, 0.6, (end - start + 1, dim)), axis=0) + pos
        frames.append(np.arange(start, end + 1))
        tracks.append(np.full(end - start + 1, track))
        parents.append(np.full(end - start + 1, parent))
        xyz.append(steps)
        if divides:
            for _ in range(2):
                queue.append((made, end + 1, track, steps[-1] + rng.normal(0, 4, dim)))
                made += 1
    return table(np.concatenate(frames), np.concatenate(tracks), np.concatenate(parents),
                 np.concatenate(xyz))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracks", type=int, default=300)
    ap.add_argument("--frames", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gt = lineage(args.tracks, args.frames, args.seed)
    pred = perturb(gt, args.seed + 1, jitter=0.4, false_divisions=15, missed_divisions=15)
    n_div = int(gt.groupby("track")["parent_track"].first().notna().sum()) // 2
    print(f"lineage: {gt['track'].nunique()} tracks, {args.frames} frames, {len(gt)} "
          f"observations, {n_div} divisions; prediction {len(pred)} observations")
    ref_df = gt.assign(recording="r")
    pred_df = pred.rename(columns={"track": "pred_id"}).assign(recording="r")
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        res = evaluate_graph(ref_df, pred_df, THRESHOLD, FRAME_BUFFER)
        times.append(time.perf_counter() - t0)
    ours_s = float(np.median(times))
    with tempfile.TemporaryDirectory() as tmp:
        ref = run_points(Path(tmp), {"bench": (gt, pred, THRESHOLD)}, FRAME_BUFFER)["bench"]
    theirs_s = ref["seconds_build"] + ref["seconds"]
    mine = {**res["ctc"]["r"], "chota": res["chota"]["r"], **res["divisions"]["r"]}
    names = traccuracy_names(ref)
    for fb in range(1, FRAME_BUFFER + 1):
        assert_same(mine.pop(f"frame_buffer_{fb}"), names.pop(f"frame_buffer_{fb}"),
                    skip=("mitotic_branching_correctness",))
    assert_same(mine, names)
    print(f"same numbers (1e-9): TRA {mine['tra']:.6f}  DET {mine['det']:.6f}  "
          f"LNK {mine['lnk']:.6f}  CHOTA {mine['chota']:.6f}  "
          f"division F1 (buffer 0) {mine['frame_buffer_0']['division_f1']:.6f}")
    print(f"trackverify evaluate_graph: {ours_s:.3f} s (median of 3)")
    print(f"traccuracy: {theirs_s:.3f} s (graphs {ref['seconds_build']:.3f} s, matching + "
          f"metrics {ref['seconds']:.3f} s)")
    print(f"ratio: {theirs_s / ours_s:.1f}x faster")


if __name__ == "__main__":
    main()
