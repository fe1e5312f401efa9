"""Track pooling's window ``h`` on the development specimen (docs/reference/verifiers.md, issue 14).

    .venv/bin/python benchmarks/bench_track_window.py [--levels freely_moving] [--windows 0,1,2,4,8]
                                                      [--frames 1000] [--merge-k 0,2]

Per motion level, one ``registered_distance`` (its defaults otherwise) scores the specimen's
conditions once per window (the coordinate-only registration is fitted once and reused; the
pooling only regroups its scores): six corruptions pooled (AUROC*, coverage at FCR <= 1 %),
nearby_swap (AUROC*, coverage) and single_frame_swap (AUROC*). The rule that chooses ``h``
(at :data:`~trackverify.verifiers.registered_distance.DEFAULT_TRACK_WINDOW`) reads the
``freely_moving`` line only: the smallest of 1, 2, 4, 8 whose pooled coverage is within
0.005 of the best of the four; it is printed. ``--merge-k`` (comma-separated, default: the
verifier's default) repeats every window with each merged-anchor factor ``m`` (0 = off); the
same fit serves them all.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from trackverify.benchmark.config import CONDITIONS, build_config
from trackverify.benchmark.corrupt import share_window
from trackverify.benchmark.evidence import six_and_nearby
from trackverify.benchmark.protocols.anatomical_verification import error_array, score_conditions
from trackverify.benchmark.selective import auroc_abstain_as_error
from trackverify.synth.specimen import animal_detections, animal_observations
from trackverify.verifiers.registered_distance import DEFAULT_MERGE_K, RegisteredDistance

#: The candidate windows of the rule, and its tolerance.
CANDIDATES = (1, 2, 4, 8)
TOLERANCE = 0.005


def chosen_window(coverage: dict[int, float]) -> int:
    """The smallest candidate whose coverage is within :data:`TOLERANCE` of the best."""
    best = max(coverage[h] for h in CANDIDATES)
    return min(h for h in CANDIDATES if coverage[h] >= best - TOLERANCE)


def level_numbers(level: str, frames: int, windows: list[int],
                  merges: tuple[float, ...] = (DEFAULT_MERGE_K,)) -> dict[tuple, dict]:
    """Per (window h, merge factor m), the table's numbers on ``level``'s animal 0."""
    start, recovery_end = share_window(frames)
    config = build_config({"specimen.motion": level, "specimen.frames": frames,
                           "start": start, "recovery_end": recovery_end,
                           "conditions": list(CONDITIONS)})
    table = animal_observations(config.specimen, 0)
    detections = animal_detections(config.specimen, 0)
    verifier = RegisteredDistance()
    out = {}
    for h, merge in [(h, merge) for merge in merges for h in windows]:
        verifier.track_window, verifier.merge_k = h, merge
        scored, _, _ = score_conditions(table, config, verifier, "rec000", detections)
        m = six_and_nearby(scored)
        single = scored["condition"].astype(str).to_numpy() == "single_frame_swap"
        out[h, merge] = {"six_auroc_abst": m["pooled"]["auroc_abst"],
                  "six_cov1": m["pooled"]["cov_at_fcr1"],
                  "nearby_auroc_abst": m["nearby"]["auroc_abst"],
                  "nearby_cov1": m["nearby"]["cov_at_fcr1"],
                  "single_auroc_abst": auroc_abstain_as_error(
                      error_array(scored)[single], scored["score"].to_numpy()[single])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="freely_moving")
    parser.add_argument("--windows", default="0,1,2,4,8")
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--merge-k", default=str(DEFAULT_MERGE_K))
    args = parser.parse_args()
    windows = [int(h) for h in args.windows.split(",")]
    merges = tuple(float(m) for m in args.merge_k.split(","))
    for level in args.levels.split(","):
        t0 = time.perf_counter()
        numbers = level_numbers(level, args.frames, windows, merges)
        for (h, merge), m in numbers.items():
            print(f"{level:14s} h={h} m={merge:g}: six AUROC* {m['six_auroc_abst']:.4f} cov@1% "
                  f"{m['six_cov1']:.4f} | nearby AUROC* {m['nearby_auroc_abst']:.4f} cov@1% "
                  f"{m['nearby_cov1']:.4f} | single_frame_swap AUROC* "
                  f"{m['single_auroc_abst']:.4f}", flush=True)
        for merge in merges:
            if level == "freely_moving" and set(CANDIDATES) <= set(windows):
                h = chosen_window({h: numbers[h, merge]["six_cov1"] for h in CANDIDATES})
                print(f"rule (m = {merge:g}): h = {h}")
        print(f"  [{time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
