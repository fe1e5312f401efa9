"""AnDi 2 single-trajectory scoring: trackverify.andi vs andi-datasets 2.1.13.

Parsing + scoring of one truth file and one prediction file of N trajectories of length
200 (0-3 changepoints each, 5 % of predictions missing). Both sides are timed the same way:
the public call ``error_SingleTraj_dataset(load_file_to_df(pred), load_file_to_df(true))``,
wall clock, the best of ``--repeat`` runs, each side inside its own process (ours here, the
reference in .venv-andi via subprocess; interpreter start-up and imports are outside the
timing on both sides). The five scores must agree to 1e-9 (same count asserted, not zipped
short). Not part of the test suite. Usage:
.venv/bin/python benchmarks/bench_andi.py [--sizes 1000 10000 100000] [--reference-max 10000]
[--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trackverify.andi import error_SingleTraj_dataset, load_file_to_df
from trackverify.andi.single import read_table_file, score_tables
from trackverify.andi.synthetic import make_labels, perturb, write_lines

ROOT = Path(__file__).resolve().parents[1]
REF_PYTHON = ROOT / ".venv-andi" / "bin" / "python"
REF_CODE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from andi_datasets.utils_challenge import load_file_to_df, error_SingleTraj_dataset
best = float("inf")
for _ in range(int(sys.argv[3])):  # best of --repeat, as for ours
    t0 = time.perf_counter()
    out = error_SingleTraj_dataset(load_file_to_df(sys.argv[1]), load_file_to_df(sys.argv[2]),
                                   prints=False, disable_tqdm=True)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "scores": [float(v) for v in out]}))
"""


def same_scores(a: list[float], b: list[float]) -> bool:
    """Equal to 1e-9 (relative above 1), and the same number of scores."""
    assert len(a) == len(b) == 5, (len(a), len(b))
    return all(abs(x - y) <= 1e-9 * max(1, abs(x)) for x, y in zip(a, b, strict=True))


def ours_public(pred, true):
    t0 = time.perf_counter()
    out = error_SingleTraj_dataset(load_file_to_df(pred), load_file_to_df(true), prints=False)
    return time.perf_counter() - t0, [float(v) for v in out]


def ours_tables(pred, true):
    t0 = time.perf_counter()
    res = score_tables(read_table_file(true)[0], read_table_file(pred)[0])
    return time.perf_counter() - t0, [float(v) for v in res.as_tuple()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--reference-max", type=int, default=10000,
                    help="largest N run with andi-datasets (it grows quadratically)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side; the best is shown")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_andi_"))
    print(f"best of {args.repeat} run(s) per side; 'ratio' = andi-datasets / ours (API)")
    print(f"{'N':>7} {'ours (API)':>11} {'ours (tables)':>14} {'andi-datasets':>14} "
          f"{'ratio':>7}  equal")
    differ = []
    for n in args.sizes:
        true, pred = tmp / f"true_{n}.txt", tmp / f"pred_{n}.txt"
        labels = make_labels(n, 200, seed=n)
        write_lines(true, labels)
        write_lines(pred, perturb(labels, seed=n + 1, drop=0.05))
        runs = range(args.repeat)
        t_api, s_api = min((ours_public(pred, true) for _ in runs), key=lambda r: r[0])
        t_tab, s_tab = min((ours_tables(pred, true) for _ in runs), key=lambda r: r[0])
        assert same_scores(s_api, s_tab), (s_api, s_tab)
        if n <= args.reference_max and REF_PYTHON.exists():
            proc = subprocess.run([str(REF_PYTHON), "-c", REF_CODE, str(pred), str(true),
                                   str(args.repeat)], capture_output=True, text=True, check=True)
            ref = json.loads(proc.stdout)
            equal = same_scores(ref["scores"], s_api)
            print(f"{n:>7} {t_api:>10.3f}s {t_tab:>13.3f}s {ref['seconds']:>13.2f}s "
                  f"{ref['seconds'] / t_api:>6.0f}x  {equal}")
            if not equal:
                differ.append(n)
        else:
            print(f"{n:>7} {t_api:>10.3f}s {t_tab:>13.3f}s {'skipped':>14} {'-':>7}  -")
    if differ:
        sys.exit(f"scores differ from andi-datasets at N = {differ}")


if __name__ == "__main__":
    main()
