"""Benchmark of the conversion decoder: 10 sessions x 200 trials x 100 neurons x 50 bins.

Times the data preparation + 200 epochs of full-batch training + evaluation of
``trackverify.conversion.run_decoder`` for each available engine, and reports the peak
traced memory (tracemalloc sees numpy's allocations, not torch's) and the process's peak
RSS.

    .venv/bin/python benchmarks/bench_decoder.py [--engines numpy torch] [--epochs 200]
                                                 [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import time
import tracemalloc
from dataclasses import replace

from trackverify.conversion.decoder import DecoderConfig, run_decoder
from trackverify.conversion.synthetic import SyntheticSpec, make_dataset


def measure(data, config: DecoderConfig) -> dict:
    """Wall time of a full run (after a 1-epoch warm-up that pays the imports), then peak
    traced memory of a separate 5-epoch run: every epoch allocates the same arrays, and
    tracemalloc slows Python-level allocation, so it stays out of the timed run."""
    start = time.perf_counter()
    run_decoder(data, replace(config, epochs=1))
    warm_up = time.perf_counter() - start
    start = time.perf_counter()
    result = run_decoder(data, config)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    run_decoder(data, replace(config, epochs=min(5, config.epochs)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"engine": config.engine, "threads": config.threads, "epochs": config.epochs,
            "seconds": round(seconds, 2), "warm_up_seconds": round(warm_up, 2),
            "peak_traced_mb": round(peak / 2**20, 1),
            "balanced_accuracy": [round(x, 4) for x in result.balanced_accuracy],
            "final_loss": round(result.loss[-1], 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="+", default=["numpy", "torch"])
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--neurons", type=int, default=100)
    parser.add_argument("--bins", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads")
    args = parser.parse_args()
    spec = SyntheticSpec(n_sessions=args.sessions, n_trials=args.trials, n_neurons=args.neurons,
                         n_bins=args.bins, seed=0)
    start = time.perf_counter()
    data = make_dataset(spec)
    made = time.perf_counter() - start
    rows = []
    for engine in args.engines:
        if engine == "torch" and importlib.util.find_spec("torch") is None:
            print("torch not installed (extra 'decoder'); skipped")
            continue
        rows.append(measure(data, DecoderConfig(engine=engine, epochs=args.epochs,
                                                threads=args.threads)))
    print(json.dumps({"sizes": vars(args), "dataset_seconds": round(made, 2), "runs": rows,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                           / 1024, 1)}, indent=2))


if __name__ == "__main__":
    main()
