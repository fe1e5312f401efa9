"""Wall time of ``trackverify -h`` and of every ``trackverify COMMAND -h`` (target < 0.5 s).

Each help is run ``--repeats`` times in a fresh interpreter (``python -m trackverify``, as
a user runs it); the median and the worst are printed, and the exit status is 1 when a
median is over ``--limit`` seconds. Not part of the test suite (tests/test_cli_imports.py
checks, without timing, that no heavy module is imported).
Usage: .venv/bin/python benchmarks/bench_cli_help.py [--repeats 5] [--limit 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def time_help(args: list[str], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "trackverify", *args, "-h"], check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=float, default=0.5)
    options = parser.parse_args()
    from trackverify.cli.app import FAMILIES, cli

    slow = 0
    print(f"{'command':<12} {'median s':>9} {'worst s':>8}")
    for command in [None, *sorted({*cli.commands, *FAMILIES})]:
        times = time_help([] if command is None else [command], options.repeats)
        median = statistics.median(times)
        slow += median > options.limit
        print(f"{command or '(top)':<12} {median:9.3f} {max(times):8.3f}"
              f"{'  SLOW' if median > options.limit else ''}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
