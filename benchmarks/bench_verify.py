"""Speed of anatomical_verification: corruption + verification + metrics.

189 neurons x 1,000 frames x 7 conditions (~1.3 M rows) on the built-in specimen, wall time
of the whole step, the peak resident memory of the process, and, beside it, the time
scikit-learn alone needs for the AUROCs on the same rows (per condition and pooled).

    .venv/bin/python benchmarks/bench_verify.py [--motion moderate] [--repeats 3]
        [--verifier registered_distance] [--neurons 150] [--track-window H] [--merge-k M]

With ``--verifier registered_distance`` it also times the identity-free registration alone
(one fit per recording; every condition reuses it; goal < 15 s on ``moderate``). The goal of
the whole verification with ``registered_distance`` on 1,000 frames x 150 detections
(``--neurons 150``) is < 15 s. ``--track-window H`` gives a verifier that takes it (e.g.
registered_distance) that track pooling window (default: its default); the pooling's own time
on one condition's rows is printed beside. ``--merge-k M`` likewise gives registered_distance
that merged-anchor factor (0 = off).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from trackverify.benchmark.config import build_config
from trackverify.benchmark.protocols.anatomical_verification import (
    condition_metrics, error_array, score_conditions)
from trackverify.synth.specimen import animal_observations
from trackverify.verifiers import load_verifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--motion", default="moderate")
    parser.add_argument("--verifier", default="fixed_distance")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--neurons", type=int, default=189)
    parser.add_argument("--track-window", type=int, default=None)
    parser.add_argument("--merge-k", type=float, default=None)
    args = parser.parse_args()
    options = {key: value for key, value in (("track_window", args.track_window),
                                             ("merge_k", args.merge_k)) if value is not None}
    config = build_config({"specimen.motion": args.motion, "verifier": args.verifier,
                           "specimen.neurons": args.neurons})
    table = animal_observations(config.specimen, 0)
    verifier = load_verifier(config.verifier, options)
    if hasattr(verifier, "register"):
        fits = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            type(verifier)().register(table)
            fits.append(time.perf_counter() - t0)
        print(f"registration alone ({table['frame'].nunique()} frames, "
              f"{table['track'].nunique()} neurons, motion {args.motion}): min {min(fits):.2f} s, "
              f"median {np.median(fits):.2f} s over {args.repeats} runs (goal < 15 s on moderate)")
    times, sk_times = [], []
    for _ in range(args.repeats):
        verifier = load_verifier(config.verifier, options)  # fresh: no registration cached from a repeat
        t0 = time.perf_counter()
        scored, _, _ = score_conditions(table, config, verifier, "rec000")
        condition_metrics(scored, config)
        times.append(time.perf_counter() - t0)
        error, score = error_array(scored), scored["score"].to_numpy()
        codes = scored["condition"].cat.codes.to_numpy()
        t0 = time.perf_counter()
        for population in [codes == c for c in np.unique(codes)] + [np.ones(len(codes), bool)]:
            ranked = population & ~np.isnan(error) & np.isfinite(score)
            y = error[ranked] == 1
            if 0 < y.sum() < len(y):
                roc_auc_score(y, score[ranked])
        sk_times.append(time.perf_counter() - t0)
    if getattr(verifier, "track_window", 0):
        from trackverify.verifiers.pooling import claimed_tracks, pool_along_tracks

        one = scored[codes == codes[0]]
        t0 = time.perf_counter()
        pool_along_tracks(one["score"].to_numpy(), *claimed_tracks(one), verifier.track_window)
        print(f"track pooling alone (h = {verifier.track_window}, {len(one):,} rows of one "
              f"condition): {time.perf_counter() - t0:.3f} s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows: {len(scored):,} ({len(table):,} per condition x {len(config.conditions)}), "
          f"motion {args.motion}, "
          f"verifier {args.verifier}")
    print(f"corruption + verification + metrics: min {min(times):.2f} s, median "
          f"{np.median(times):.2f} s over {args.repeats} runs (goal < 10 s)")
    print(f"scikit-learn roc_auc_score alone on the same populations: min {min(sk_times):.2f} s")
    print(f"peak resident memory of the process: {peak_mb:.0f} MB (goal < 1500 MB)")


if __name__ == "__main__":
    main()
