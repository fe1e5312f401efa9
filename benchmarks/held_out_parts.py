"""Held-out parts of a real recording folder (docs/reference/verifiers.md, *Held-out parts of the
recording*), built reproducibly.

    .venv/bin/python benchmarks/held_out_parts.py PART OUT
        [--data ../shared/data/fdnc-nerve-freely-moving] [--share 0.2] [--seed 20261202]

PART is one of

- ``labels-removed``: every labelled row of ``observations.parquet`` is removed on its own
  with probability ``share`` (``numpy.random.Generator(PCG64(seed)).random(n) < share``, one
  number per row in the file's order); ``detections.parquet`` is copied as it is (the removed
  rows' detections are kept, unlabelled) and ``tracker_cpd.parquet`` loses the rows of the
  removed observations (joined on recording, frame, detection; the benchmarks join it onto
  the observations, so those rows were unread anyway);
- ``first-half`` / ``second-half``: the first / last half of the present frames (686 -> 343
  each; the second half kept in the input's frame numbers), every table cut to them;
- ``thirds-dropped``: every third present frame dropped (the present frames' positions
  ``i % 3 == 2`` in frame order, so the first frame, the anchor, stays: 686 -> 458), every
  table cut to the rest, frame numbers kept (gaps of one more missing frame).

``recordings.csv`` is copied. OUT must not exist; the input folder is only read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
KEYS = ["recording", "frame", "detection"]
TABLES = ("observations", "detections", "tracker_cpd")


def _tables(data: Path) -> dict[str, pd.DataFrame]:
    return {name: pd.read_parquet(data / f"{name}.parquet") for name in TABLES
            if (data / f"{name}.parquet").exists()}


def _write(data: Path, out: Path, tables: dict[str, pd.DataFrame]) -> None:
    out.mkdir(parents=True, exist_ok=False)
    for name, table in tables.items():
        table.to_parquet(out / f"{name}.parquet", index=False)
    (out / "recordings.csv").write_bytes((data / "recordings.csv").read_bytes())


def labels_removed(data: Path, out: Path, share: float = 0.2, seed: int = 20261202) -> str:
    tables = _tables(data)
    observations = tables["observations"]
    removed = np.random.Generator(np.random.PCG64(seed)).random(len(observations)) < share
    tables["observations"] = observations[~removed]
    if "tracker_cpd" in tables:
        tracker = tables["tracker_cpd"]
        gone = pd.MultiIndex.from_frame(observations.loc[removed, KEYS])
        tables["tracker_cpd"] = tracker[~pd.MultiIndex.from_frame(tracker[KEYS]).isin(gone)]
    _write(data, out, tables)
    return f"{int((~removed).sum())} labelled rows kept, {int(removed.sum())} removed"


def frames_kept(data: Path, out: Path, part: str) -> str:
    """Every table cut to the present frames ``part`` keeps (first / second half, or all
    but every third)."""
    tables = _tables(data)
    frames = np.unique(tables["observations"]["frame"].to_numpy())
    keep = {"first-half": frames[:len(frames) // 2], "second-half": frames[len(frames) // 2:],
            "thirds-dropped": frames[np.arange(len(frames)) % 3 != 2]}[part]
    _write(data, out, {name: t[t["frame"].isin(keep)] for name, t in tables.items()})
    return f"input frames {keep[0]}-{keep[-1]} ({len(keep)} of {len(frames)} present)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["labels-removed", "first-half", "second-half",
                                             "thirds-dropped"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=SHARED / "fdnc-nerve-freely-moving")
    parser.add_argument("--share", type=float, default=0.2, help="labels-removed [0.2]")
    parser.add_argument("--seed", type=int, default=20261202, help="labels-removed [20261202]")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists; give a new folder")
    if args.part == "labels-removed":
        said = labels_removed(args.data, args.out, args.share, args.seed)
    else:
        said = frames_kept(args.data, args.out, args.part)
    print(f"{args.out}: {said}")


if __name__ == "__main__":
    main()
