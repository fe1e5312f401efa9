"""Thresholds calibrated on synthetic cohorts, applied to the real freely moving recording.

    .venv/bin/python benchmarks/certify_transfer.py [--data ../shared/data/fdnc-nerve-freely-moving]
        [--level free] [--cohorts 50] [--sizes 10,20,40] [--target 0.25] [--delta 0.1]

See :mod:`trackverify.benchmark.certify.transfer`; results in docs/reference/certification.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trackverify.benchmark.certify.transfer import transfer
from trackverify.errors import TrackverifyError

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fdnc-nerve-freely-moving"
COLUMNS = ("level", "n_cal", "method", "real", "real_errors", "median_threshold_um",
           "synthetic_risk", "real_fcr", "real_above_target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--level", default="free")
    parser.add_argument("--cohorts", type=int, default=50)
    parser.add_argument("--sizes", default="10,20,40")
    parser.add_argument("--target", type=float, default=0.25)
    parser.add_argument("--delta", type=float, default=0.1)
    args = parser.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"real data not found at {args.data}")
    try:
        rows = transfer(args.data, args.level, tuple(int(x) for x in args.sizes.split(",")),
                        args.cohorts, args.target, args.delta)
    except TrackverifyError as error:  # a bad input file: its one-line message, no traceback
        raise SystemExit(f"error: {error}") from None
    print(f"target A = {args.target:g}, delta = {args.delta:g} (ltt), {args.cohorts} calibration "
          f"cohorts per size, synthetic level {args.level}\n")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c])
                                for c in COLUMNS) + " |")


if __name__ == "__main__":
    main()
