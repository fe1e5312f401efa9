"""Inputs at the stated bounds, end to end through the command line: each command's wall
time, CPU time (user + system of the child), peak memory and first line of stderr.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_bounds.py [--only NAME ...]

Cases: ``audit --threshold-um 1`` of 10^5 and of 1,000 (``audit.core.MAX_RECORDINGS``)
one-row recordings; ``audit --verifier fixed_distance`` and ``check-reference`` of two frames
of 10^4 identities; ``run --repeats 50`` and ``evidence --draws 50`` (the stated maxima) on a
40-frame specimen of 189 neurons. About 3 minutes of CPU in all (docs/evidence/robustness.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def one_row_recordings(n: int, path: Path) -> Path:
    pd.DataFrame({"recording": [f"r{i}" for i in range(n)], "frame": 0, "pred_id": 1,
                  "x_um": np.arange(n, dtype=float), "y_um": 0.0}).to_csv(path, index=False)
    return path


def two_crowded_frames(n: int, path: Path, id_column: str) -> Path:
    points = np.random.default_rng(0).uniform(0, 1000, (n, 2))
    pd.DataFrame({"frame": np.repeat([0, 1], n), id_column: np.tile(np.arange(n), 2),
                  "x_um": np.r_[points[:, 0], points[:, 0] + 0.1],
                  "y_um": np.r_[points[:, 1], points[:, 1]]}).to_csv(path, index=False)
    return path


def measure(args: list[str]) -> str:
    """Run ``python -m trackverify ARGS``: wall s, CPU s, peak MiB, exit code, stderr line."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "src")}
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "trackverify", *args],
                                 stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own resources
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        line = (err.read().strip().splitlines() or [""])[-1][:160]
    return (f"wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, peak "
            f"{usage.ru_maxrss / 1024:.0f} MiB, exit {child.returncode}: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="case names to run")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        specimen = root / "specimen"
        cases = {
            "audit_1e5_recordings": lambda: ["audit", str(one_row_recordings(
                10**5, root / "r5.csv")), "--threshold-um", "1", "--out", str(root / "a5")],
            "audit_1000_recordings": lambda: ["audit", str(one_row_recordings(
                1000, root / "r3.csv")), "--threshold-um", "1", "--out", str(root / "a3")],
            "audit_two_frames_1e4_ids": lambda: ["audit", str(two_crowded_frames(
                10**4, root / "c.csv", "pred_id")), "--verifier", "fixed_distance",
                "--threshold-um", "1", "--out", str(root / "ac")],
            "check_reference_two_frames_1e4_ids": lambda: ["check-reference", str(
                two_crowded_frames(10**4, root / "t.csv", "track")), "--out", str(root / "rc")],
            "run_repeats_50": lambda: ["run", "--frames", "40", "--start", "12",
                                       "--recovery-end", "28", "--repeats", "50",
                                       "--out", str(root / "run")],
            "evidence_draws_50": lambda: (subprocess.run(
                [sys.executable, "-m", "trackverify", "synth", "--frames", "40", "--out",
                 str(specimen)], check=True, capture_output=True) and
                ["evidence", "--levels", "", "--recordings", str(specimen), "--draws", "50",
                 "--out", str(root / "ev")]),
        }
        for name, make in cases.items():
            if options.only and name not in options.only:
                continue
            print(f"{name}: {measure(make())}", flush=True)


if __name__ == "__main__":
    main()
