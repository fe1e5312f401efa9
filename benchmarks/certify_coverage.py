"""Do the certification guarantees hold? Synthetic cohorts, calibrated and scored (docs/reference/certification.md).

    .venv/bin/python benchmarks/certify_coverage.py [--cohorts 50] [--sizes 10,20,40]
        [--levels still,moderate,free,fast,freely_moving] [--target 0.25] [--delta 0.1] [--pool 60]
        [--frames 300] [--neurons 30] [--json FILE]

Each motion level's population is a pool of development-specimen animals run through the
corruption suite and scored by fixed_distance; cohorts draw train / calibration / test animals
from it (see :mod:`trackverify.benchmark.certify.simulation`). Prints one markdown row per
(level, calibration animals, method).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from trackverify.benchmark.certify.simulation import coverage_benchmark

COLUMNS = ("motion", "n_cal", "method", "unreachable", "mean_risk", "mean_risk_se", "violation",
           "violation_se", "test_violation", "mean_test_fcr", "coverage", "oracle_coverage")


def cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=50, help="cohorts per (level, size)")
    parser.add_argument("--sizes", default="10,20,40", help="calibration animals per cohort")
    parser.add_argument("--levels", default="still,moderate,free,fast,freely_moving")
    parser.add_argument("--target", type=float, default=0.25)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--pool", type=int, default=60, help="animals per motion level's population")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--neurons", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    levels = tuple(x for x in args.levels.split(",") if x)
    sizes = tuple(int(x) for x in args.sizes.split(",") if x)
    start = time.perf_counter()
    rows = coverage_benchmark(levels, sizes, args.cohorts, args.target, args.delta, args.pool,
                              args.frames, args.neurons)
    print(f"{len(levels) * len(sizes) * args.cohorts} cohorts, target A = {args.target:g}, "
          f"delta = {args.delta:g}, {args.pool} animals per level ({args.frames} frames, "
          f"{args.neurons} neurons), {time.perf_counter() - start:.0f} s\n")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(cell(row[c]) for c in COLUMNS) + " |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
