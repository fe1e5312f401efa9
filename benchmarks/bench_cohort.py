"""Cohort scaling of `trackverify run`: wall time and peak memory with 1 and 2 jobs.

Synthetic animals x 1,000 frames x 150 neurons (the issue's full size is 200 animals). The
run streams one recording at a time, so memory should not grow with the cohort, and the
time should grow linearly with the number of animals.

    .venv/bin/python benchmarks/bench_cohort.py --animals 20 40 --jobs 1 2 [--rows]

Peak memory is the largest resident set of any one process of the run (the main process
or a worker; with 2 jobs the machine holds the main process and two workers).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from trackverify.benchmark.corrupt import share_window


def run_once(animals: int, jobs: int, frames: int, neurons: int, rows: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "cohort.toml"
        # The cohort job itself: the run's verifier only (no side-by-side comparison verifiers).
        start, recovery_end = share_window(frames)
        config.write_text(f"[run]\nstart = {start}\nrecovery_end = {recovery_end}\n"
                          "compare_verifiers = []\n"
                          f"[specimen]\nanimals = {animals}\nframes = {frames}\nneurons = {neurons}\n")
        script = (
            "import resource, subprocess, sys, time\n"
            "t0 = time.perf_counter()\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "wall = time.perf_counter() - t0\n"
            "print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
        command = [sys.executable, "-m", "trackverify", "run", "--config", str(config),
                   "--jobs", str(jobs), "--out", str(Path(tmp) / "out")]
        if not rows:
            command.append("--no-rows")
        # The wrapper's RUSAGE_CHILDREN holds the largest process among the run and its workers.
        done = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the run failed:\n{done.stderr}")
        output = done.stdout.split()
        return float(output[0]), float(output[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--animals", type=int, nargs="+", default=[20, 40])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--neurons", type=int, default=150)
    parser.add_argument("--rows", action="store_true", help="also write observations.parquet")
    args = parser.parse_args()
    print(f"{'animals':>8} {'jobs':>5} {'wall s':>8} {'s/animal':>9} {'peak MB':>8}")
    walls = {}
    for animals in args.animals:
        for jobs in args.jobs:
            wall, peak = run_once(animals, jobs, args.frames, args.neurons, args.rows)
            walls[animals, jobs] = wall
            print(f"{animals:>8} {jobs:>5} {wall:>8.1f} {wall / animals:>9.2f} {peak:>8.0f}", flush=True)
    for animals in args.animals:
        if (animals, 1) in walls and (animals, 2) in walls:
            print(f"speed-up with 2 jobs at {animals} animals: {walls[animals, 1] / walls[animals, 2]:.2f}x")


if __name__ == "__main__":
    main()
