"""Speed of the hygiene pieces: the animal bootstrap, and NWB writing / reading.

* ``animal_bootstrap_interval`` (one multinomial draw matrix) against scipy.stats.bootstrap
  (paired, percentile, vectorised) on the same cohort and replicate count.
* WormID NWB: write and read one specimen recording (189 neurons x ``--frames``).

    .venv/bin/python benchmarks/bench_hygiene.py [--animals 50] [--replicates 10000]
        [--frames 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from trackverify.benchmark.intervals import animal_bootstrap_interval


def best_of(repeats: int, job) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        job()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--animals", type=int, default=50)
    parser.add_argument("--replicates", type=int, default=10000)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    num = rng.binomial(1000, rng.beta(2, 18, args.animals)).astype(float)
    den = np.full(args.animals, 1000.0)
    ours = best_of(args.repeats, lambda: animal_bootstrap_interval(
        num, den, replicates=args.replicates))
    ref = best_of(args.repeats, lambda: stats.bootstrap(
        (num, den), lambda n, d, axis=-1: n.sum(axis) / d.sum(axis), paired=True,
        vectorized=True, method="percentile", n_resamples=args.replicates,
        random_state=np.random.default_rng(0)))
    print(f"bootstrap {args.animals} animals x {args.replicates} replicates: "
          f"{ours * 1e3:.1f} ms (scipy.stats.bootstrap {ref * 1e3:.1f} ms, ratio {ref / ours:.1f})")
    try:
        from trackverify.io.nwb import read_nwb, write_nwb
    except ImportError:  # pragma: no cover
        return
    from trackverify.synth.specimen import SpecimenConfig, animal_observations

    table = animal_observations(SpecimenConfig(frames=args.frames), 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rec.nwb"
        write = best_of(1, lambda: write_nwb(table, path))
        read = best_of(args.repeats, lambda: read_nwb(path))
        print(f"NWB {len(table)} observations ({args.frames} frames): write {write:.2f} s, "
              f"read {read:.2f} s, file {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
