"""The audit's development cases for trackers that link: a linking tracker run on the real
detections, and the shipped template tracker's output cut into fragments.

Data: ``../shared/data/fdnc-nerve-freely-moving`` (``detections.parquet``: every detection of
the real freely moving recording; ``tracker_cpd.parquet``: the CPD template tracker's output).

- ``laptrack.parquet``: laptrack 0.17.1 (PyPI; run in its own environment
  ``.venv-laptrack``, never a dependency of the library: ``make .venv-laptrack``, pins in
  mk/laptrack.mk) on every detection, LAP linking frame to frame with gap closing over two
  frames and its defaults otherwise (no splitting, no merging). Its one setting, the
  largest distance of a link (``cutoff`` = ``gap_closing_cutoff``), is chosen by a rule
  from the detections alone, fixed before any audit was run: the 99th percentile of the
  distance from each detection to the nearest detection of the next present frame (a link
  any longer is needed by fewer than 1 % of detections). Ids are laptrack's ``track_id``;
  each row keeps its ``detection``.
- ``cpd_cut.parquet``: the CPD tracker's output with every id cut at random breaks: each
  link between two consecutive observations of an id is a break with probability 1/60
  (fragments of 60 observations on average, geometric), seed ``--seed``; the first piece
  keeps its id, every later piece gets a new one (the largest id + 1, + 2, ...). Rows
  without an identity stay as they are.

    python benchmarks/linker_cases.py [--data DIR] [--out DIR] [--seed 46]

writes ``OUT/laptrack.parquet``, ``OUT/cpd_cut.parquet`` and ``OUT/settings.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "fdnc-nerve-freely-moving"
OUT = ROOT / "trackverify-results" / "linker-cases"
LAPTRACK_PYTHON = ROOT / ".venv-laptrack" / "bin" / "python"
COORDS = ["x_um", "y_um", "z_um"]
#: The rule's percentile and gap closing (fixed before any audit was run).
CUTOFF_PERCENTILE = 99.0
GAP_FRAMES = 2
#: A link of the CPD output is a break with this probability (fragments of 60 on average).
BREAK_PROBABILITY = 1 / 60

LAPTRACK_SCRIPT = """
import json, sys
import pandas as pd
from laptrack import LapTrack
source, target, cutoff, gap = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
detections = pd.read_parquet(source)
tracker = LapTrack(cutoff=cutoff ** 2, gap_closing_cutoff=cutoff ** 2,
                   gap_closing_max_frame_count=gap, splitting_cutoff=False,
                   merging_cutoff=False)
tracked, _, _ = tracker.predict_dataframe(detections, coordinate_cols=["x_um", "y_um", "z_um"],
                                          frame_col="frame", only_coordinate_cols=False)
tracked.to_parquet(target)
"""


def linking_cutoff(detections: pd.DataFrame, percentile: float = CUTOFF_PERCENTILE) -> float:
    """The rule: the ``percentile`` of the distance from each detection to the nearest
    detection of the next present frame (per recording)."""
    distances = []
    for _, rows in detections.groupby("recording", sort=False):
        by_frame = {t: g[COORDS].to_numpy(float) for t, g in rows.groupby("frame", sort=True)}
        frames = sorted(by_frame)
        for a, b in zip(frames[:-1], frames[1:]):
            distances.append(cKDTree(by_frame[b]).query(by_frame[a])[0])
    return float(np.percentile(np.concatenate(distances), percentile))


def run_laptrack(detections: pd.DataFrame, cutoff: float, gap: int = GAP_FRAMES) -> pd.DataFrame:
    """laptrack's tracks of ``detections`` (one recording): ``recording, frame, detection,
    pred_id, x_um, y_um, z_um``."""
    if not LAPTRACK_PYTHON.is_file():
        raise SystemExit(f"no {LAPTRACK_PYTHON}: create it (module docstring)")
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.parquet", Path(tmp) / "out.parquet"
        detections[["recording", "frame", "detection", *COORDS]].to_parquet(source)
        subprocess.run([str(LAPTRACK_PYTHON), "-c", LAPTRACK_SCRIPT, str(source), str(target),
                        repr(cutoff), str(gap)], check=True)
        tracked = pd.read_parquet(target)
    out = tracked.rename(columns={"track_id": "pred_id"})
    out = out[["recording", "frame", "detection", "pred_id", *COORDS]]
    return out.sort_values(["frame", "detection"], kind="stable").reset_index(drop=True)


def cut_into_fragments(tracks: pd.DataFrame, seed: int,
                       probability: float = BREAK_PROBABILITY) -> pd.DataFrame:
    """``tracks`` with each id renamed after random breaks (module docstring)."""
    out = tracks.copy()
    valid = out["pred_valid"].to_numpy(bool) if "pred_valid" in out else out["pred_id"].notna().to_numpy()
    rows = out[valid].sort_values(["recording", "pred_id", "frame"], kind="stable")
    same = (rows["recording"].to_numpy()[1:] == rows["recording"].to_numpy()[:-1]) \
        & (rows["pred_id"].to_numpy()[1:] == rows["pred_id"].to_numpy()[:-1])
    rng = np.random.Generator(np.random.PCG64(seed))
    breaks = np.r_[False, same & (rng.random(len(rows) - 1) < probability)]
    piece = np.cumsum(breaks | np.r_[True, ~same])  # a new piece at each id and each break
    first_piece = np.r_[True, ~same]
    is_first = pd.Series(first_piece).groupby(piece).transform("max").to_numpy()
    base = int(pd.to_numeric(rows["pred_id"]).max())
    renamed = np.where(is_first, rows["pred_id"].to_numpy(dtype=float),
                       base + pd.factorize(np.where(is_first, 0, piece))[0].astype(float))
    out.loc[rows.index, "pred_id"] = renamed
    out["pred_id"] = out["pred_id"].astype("Int64")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=46)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    detections = pd.read_parquet(args.data / "detections.parquet")
    cutoff = linking_cutoff(detections)
    linked = run_laptrack(detections, cutoff)
    linked.to_parquet(args.out / "laptrack.parquet")
    cpd = pd.read_parquet(args.data / "tracker_cpd.parquet")
    cut = cut_into_fragments(cpd, args.seed)
    cut.to_parquet(args.out / "cpd_cut.parquet")
    lengths = linked.groupby("pred_id").size()
    pieces = cut[cut["pred_valid"]].groupby("pred_id").size()
    settings = {"laptrack": {"version": "0.17.1", "cutoff_um": cutoff,
                             "rule": f"{CUTOFF_PERCENTILE}th percentile of nearest-detection "
                                     "distances between consecutive frames",
                             "gap_closing_max_frame_count": GAP_FRAMES,
                             "ids": int(len(lengths)), "rows": int(len(linked)),
                             "median_length": float(lengths.median())},
                "cpd_cut": {"seed": args.seed, "break_probability": BREAK_PROBABILITY,
                            "ids": int(len(pieces)), "mean_length": float(pieces.mean())}}
    (args.out / "settings.json").write_text(json.dumps(settings, indent=1))
    print(json.dumps(settings, indent=1))


if __name__ == "__main__":
    main()
