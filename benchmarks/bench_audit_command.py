"""``trackverify audit`` as a user runs it: the whole process, wall and CPU time and peak memory.

Input: the development specimen as ``trackverify synth --frames 1000 --motion moderate``
writes it (189 ids x 1,000 frames), positions only (``recording, frame, pred_id, x_um, y_um,
z_um``, as a tracker that reports no detection ids writes them), or ``--input FILE`` (e.g. the
shipped ``examples/real-tracker/tracker_cpd.parquet``). Each run is a fresh process
``python -m trackverify audit FILE --out DIR`` (``os.wait4`` gives its CPU time and peak
resident size); with several ``--src`` trees (``PYTHONPATH``, e.g. the main checkout's
``src`` for "before"), the trees run alternately, so a change of load meets all of them, and
the ratios are taken in one run. ``--stages`` also times, in one process per tree, the
import, ``trackverify.audit`` and ``write_outputs`` (the tables and the report) apart, then
the report alone once more (``render_audit_report``, its imports already made). Goal
(issue): at most 8 s wall on 2 cores and 0.5 GB.

    .venv/bin/python benchmarks/bench_audit_command.py [--frames 1000] [--repeat 3]
        [--src /work/main/src --src src] [--input FILE] [--stages]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

STAGES = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
from trackverify.audit.core import audit
from trackverify.audit.write import write_outputs
out = {"import": (time.perf_counter() - wall, time.process_time() - cpu)}
wall, cpu = time.perf_counter(), time.process_time()
result = audit(sys.argv[1])
out["audit"] = (time.perf_counter() - wall, time.process_time() - cpu)
wall, cpu = time.perf_counter(), time.process_time()
write_outputs(result, sys.argv[2])
out["write"] = (time.perf_counter() - wall, time.process_time() - cpu)
from trackverify.audit.report import render_audit_report
wall, cpu = time.perf_counter(), time.process_time()
render_audit_report(result)
out["report again"] = (time.perf_counter() - wall, time.process_time() - cpu)
print(json.dumps(out))
"""


def specimen_file(folder: Path, frames: int) -> Path:
    subprocess.run([sys.executable, "-m", "trackverify", "synth", "--frames", str(frames),
                    "--motion", "moderate", "--out", str(folder / "specimen")], check=True,
                   capture_output=True)
    table = pd.read_parquet(folder / "specimen" / "observations.parquet")
    path = folder / "positions.parquet"
    table[["recording", "frame", "pred_id", "x_um", "y_um", "z_um"]].to_parquet(path)
    return path


def run_once(src: Path, path: Path, out: Path) -> tuple[float, float, float]:
    """(wall s, CPU s (user + system), peak resident GB) of one audit process."""
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "trackverify", "audit", str(path),
                                "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status:
        sys.exit(f"audit failed under {src}: {process.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2 ** 20


def stages(src: Path, path: Path, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run([sys.executable, "-c", STAGES, str(path), str(out)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", type=Path, action="append",
                        help="source tree(s) to run (PYTHONPATH) [this checkout's src]")
    parser.add_argument("--input", type=Path, help="audit this file instead of the specimen")
    parser.add_argument("--stages", action="store_true")
    args = parser.parse_args()
    trees = [p.resolve() for p in (args.src or [ROOT / "src"])]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = args.input.resolve() if args.input else specimen_file(tmp, args.frames)
        rows = len(pd.read_parquet(path))
        runs = {tree: [] for tree in trees}
        for _ in range(args.repeat):
            for k, tree in enumerate(trees):
                runs[tree].append(run_once(tree, path, tmp / f"out{k}"))
        print(f"trackverify audit {path.name} ({rows:,} rows): whole process, best of "
              f"{args.repeat} (load average {os.getloadavg()[0]:.1f})")
        first = None
        for tree, results in runs.items():
            wall = min(r[0] for r in results)
            cpu = min(r[1] for r in results)
            peak = max(r[2] for r in results)
            ratio = "" if first is None else \
                f"   ({first[0] / wall:.2f}x wall, {first[1] / cpu:.2f}x CPU against the first)"
            first = first or (wall, cpu)
            print(f"  {tree}: wall {wall:6.2f} s (runs: {', '.join(f'{r[0]:.2f}' for r in results)})"
                  f"  CPU {cpu:6.2f} s  peak resident {peak:.2f} GB{ratio}")
            if args.stages:
                parts = stages(tree, path, tmp / "stages")
                print("    in one process, wall / CPU s: " + ", ".join(
                    f"{k} {w:.2f} / {c:.2f}" for k, (w, c) in parts.items()))


if __name__ == "__main__":
    main()
