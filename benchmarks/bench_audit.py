"""Speed of ``trackverify.audit``: 200 identities x 1,000 frames, end to end from the public call.

The tracker output is built here (not timed): 200 neurons spread in a 3-D head-sized cloud
(minimum spacing 4 um), moving by a slow rigid drift and turn plus per-neuron jitter, with one
pair of identities swapped for 100 frames. The timed call is ``trackverify.audit(table)``:
validation, the identity-free registration, scores, verdicts, segments and the per-track
summary. Writing the outputs (``write_audit``: Parquet, CSV, JSON, the HTML report) is timed
separately. Goal (issue): the audit under 20 s on this 2-core machine.

``--fragments N``: the same rows audited twice, as they are and with every neuron's track
cut into pieces of equal length, ``N`` ids in all (each piece after a neuron's first gets a
new id, as a linking tracker's output): fragments should cost what their rows cost (goal:
10,000 ids of a few frames in about the time of the same rows in 200 ids).

    .venv/bin/python benchmarks/bench_audit.py [--ids 200] [--frames 1000] [--repeats 2]
                                              [--fragments 10000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

import numpy as np
import pandas as pd

import trackverify
from trackverify.audit.write import write_audit


def tracker_output(ids: int, frames: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    points = []
    while len(points) < ids:  # rejection sampling with a 4 um minimum spacing
        p = rng.uniform([-60, -20, -10], [60, 20, 10])
        if all(np.linalg.norm(p - q) >= 4.0 for q in points):
            points.append(p)
    anchor = np.array(points)
    t = np.arange(frames)
    angle = 0.3 * np.sin(t / 150.0)
    shift = np.c_[10 * np.sin(t / 90.0), 5 * np.cos(t / 120.0), np.zeros(frames)]
    cos, sin = np.cos(angle), np.sin(angle)
    x = cos[:, None] * anchor[None, :, 0] - sin[:, None] * anchor[None, :, 1] + shift[:, :1]
    y = sin[:, None] * anchor[None, :, 0] + cos[:, None] * anchor[None, :, 1] + shift[:, 1:2]
    z = np.broadcast_to(anchor[None, :, 2], (frames, ids)) + shift[:, 2:3]
    xyz = np.stack([x, y, z], axis=-1) + rng.normal(0, 0.3, (frames, ids, 3))
    pred = np.broadcast_to(np.arange(ids), (frames, ids)).copy()
    pred[400:500, [0, 1]] = pred[400:500, [1, 0]]
    return pd.DataFrame({"recording": "bench", "frame": np.repeat(t, ids),
                         "detection": np.tile(np.arange(ids), frames), "pred_id": pred.ravel(),
                         "x_um": xyz[..., 0].ravel(), "y_um": xyz[..., 1].ravel(),
                         "z_um": xyz[..., 2].ravel()})


def fragmented(table: pd.DataFrame, count: int) -> pd.DataFrame:
    """``table`` with each neuron's track (by ``detection``) cut into pieces of equal length,
    ``count`` ids in all; a neuron's first piece keeps its id."""
    neurons = table["detection"].nunique()
    frames = table["frame"].to_numpy()
    length = max(1, int(np.ceil(table["frame"].nunique() * neurons / count)))
    piece = (frames - frames.min()) // length
    ids = np.where(piece == 0, table["pred_id"].to_numpy(),
                   neurons + (piece - 1) * neurons + table["detection"].to_numpy())
    return table.assign(pred_id=ids)


def timed(table: pd.DataFrame, repeats: int):
    """(fastest audit in s, the result, seconds to write its outputs)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = trackverify.audit(table)
        times.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        write_audit(result, out)
        writing = time.perf_counter() - start
    return min(times), result, writing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=200)
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--fragments", type=int, default=None)
    args = parser.parse_args()
    if args.fragments is not None:
        table = tracker_output(args.ids, args.frames)
        for name, rows in (("as tracked", table), ("in fragments", fragmented(table, args.fragments))):
            seconds, result, writing = timed(rows, args.repeats)
            print(f"{name}: {rows['pred_id'].nunique():,} ids, {len(rows):,} rows: audit "
                  f"{seconds:.2f} s (min of {args.repeats}), writing {writing:.2f} s; {result}")
        return
    table = tracker_output(args.ids, args.frames)
    seconds, result, writing = timed(table, args.repeats)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"audit of {args.ids} ids x {args.frames} frames ({len(table):,} rows): "
          f"min {seconds:.2f} s over {args.repeats} runs (goal < 20 s); writing the outputs "
          f"{writing:.2f} s; peak RSS {peak:.0f} MB")
    print(result)


if __name__ == "__main__":
    main()
