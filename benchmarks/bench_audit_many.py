"""Many recordings audited on all cores, as a user runs it: whole processes, one run.

20 recordings of 500 frames (the development specimen's ``moderate`` motion, 189 neurons,
each recording's clean predictions as a tracker's output, one file each) audited

* one by one: ``trackverify audit FILE --out DIR`` for each file in turn (20 processes);
* at once: ``trackverify audit FILE ... --jobs J --out DIR`` (one process, J workers).

Prints the wall and CPU time of each (CPU: the children's user + system time, so a ratio of
CPU to wall near J says the cores were used) and the ratio of the two walls; checks that every
file's outputs are byte-identical both ways. Goal (issue 51): ratio <= 0.6 on 2 cores.

    python benchmarks/bench_audit_many.py [--recordings 20] [--frames 500] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

TRACKVERIFY = [sys.executable, "-m", "trackverify"]
OUTPUTS = ("audit.parquet", "events.csv", "segments.csv", "tracks.csv", "joins.csv",
           "audit.json", "report.html")


def timed(commands: list[list[str]]) -> tuple[float, float]:
    """Wall and children's CPU seconds of running ``commands`` one after another."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recordings", type=int, default=20)
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-audit-many-") as work:
        work = Path(work)
        subprocess.run([*TRACKVERIFY, "synth", "--animals", str(args.recordings), "--frames",
                        str(args.frames), "--motion", "moderate", "--out", str(work / "synth")],
                       check=True, capture_output=True)
        table = pd.read_parquet(work / "synth" / "observations.parquet")
        files = []
        for name, rows in table.groupby("recording", sort=True):
            path = work / f"{name}.parquet"
            rows[["recording", "frame", "pred_id", "x_um", "y_um", "z_um"]].to_parquet(path)
            files.append(path)
        one_by_one = [[*TRACKVERIFY, "audit", str(p), "--out", str(work / "one" / p.stem)]
                      for p in files]
        at_once = [[*TRACKVERIFY, "audit", *map(str, files), "--jobs", str(args.jobs),
                    "--out", str(work / "all")]]
        wall_one, cpu_one = timed(one_by_one)
        wall_all, cpu_all = timed(at_once)
        same = all((work / "one" / p.stem / name).read_bytes()
                   == (work / "all" / p.stem / name).read_bytes()
                   for p in files for name in OUTPUTS)
    print(f"{args.recordings} recordings x {args.frames} frames, {len(table)} rows; "
          f"--jobs {args.jobs} on {os.cpu_count()} cores")
    print(f"one by one: wall {wall_one:.1f} s, CPU {cpu_one:.1f} s")
    print(f"at once:    wall {wall_all:.1f} s, CPU {cpu_all:.1f} s "
          f"(CPU / wall {cpu_all / wall_all:.2f})")
    print(f"ratio of walls (at once / one by one): {wall_all / wall_one:.3f}; "
          f"outputs identical: {same}")


if __name__ == "__main__":
    main()
