"""The anytime-valid confidence sequence of a review stopped early, on the real tracker's
audit and on a synthetic population of known rates, beside the fixed-N design.

    PYTHONPATH=src .venv/bin/python benchmarks/error_rate_sequence.py [--draws 1000]
        [--seed 1] [--rows 600] [--n 200] [--target 0.03] [--at 100,200,220,400]
        [--horizons 200,400] [--no-real]

Population and reviewer of the real tracker: as ``benchmarks/error_rate_coverage.py`` (the
audit of ``examples/real-tracker/tracker_cpd.parquet`` as the guide advises; ``wrong`` = the
tracker's ``pred_id`` differs from the reference track of
``../shared/data/fdnc-nerve-freely-moving/observations.parquet`` joined on recording, frame,
detection). The synthetic population: two recordings with strata and error rates fixed here
(:data:`SYNTHETIC`), so its rates are known exactly.

Each of ``--draws`` simulated reviews follows the order of ``trackverify audit sample --n N``
(shares ``n_h / n`` of the design's allocation at ``--n``; each row's stratum drawn among the
strata not exhausted, each stratum's rows without replacement;
``trackverify.review.simulation.draw_reviews``) for ``--rows`` rows, the reference as
the reviewer. Per population (``all``, ``certified``, each recording) and tuning horizon:

* ``ever excludes``: the share of reviews whose 95 % sequence excludes the true rate at some
  row of the ``--rows`` (the guarantee: at most 5 %);
* the mean half-width after 100, 200, 220 and 400 rows (``--at``);
* for ``all``: the rows a review needs until its half-width is at most ``--target`` (mean,
  median; reviews that do not reach it within ``--rows`` counted at ``--rows`` and reported).

The fixed-N design beside it: the Korn-Graubard interval of ``trackverify audit estimate`` on
a complete review of N rows drawn with the fixed allocation (``simulation.simulate``), its
coverage and half-width, the smallest N (in steps of 10) whose mean half-width is at most the
target, and how often the same interval, looked at after every row of the sequence's reviews,
excludes the true rate at some row (why a fixed-N interval cannot decide when to stop).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from error_rate_coverage import audited_truth  # noqa: E402

from trackverify.review.design import PLANNING_RATE, allocate  # noqa: E402
from trackverify.review.estimate import stratified_interval  # noqa: E402
from trackverify.review.sequence import ever_excludes, sequence_bounds  # noqa: E402
from trackverify.review.simulation import draw_reviews, simulate  # noqa: E402

#: The synthetic population: (stratum, size, error rate); 39,300 observations, 9.57 % wrong.
SYNTHETIC = [("a/certified", 20000, 0.015), ("a/flagged", 2500, 0.10),
             ("a/flagged_on_other", 2000, 0.85), ("b/certified", 12000, 0.03),
             ("b/flagged", 1500, 0.20), ("b/abstained", 800, 0.50), ("b/flagged_on_other", 500, 0.9)]


def strata_of(rows: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Stratum names, sizes and wrong counts of an audited population with ``wrong``."""
    table = rows.groupby("stratum", sort=True)["wrong"].agg(["size", "sum"])
    return list(table.index), table["size"].to_numpy(), table["sum"].to_numpy()


def synthetic() -> tuple[list[str], np.ndarray, np.ndarray]:
    names = [s for s, _, _ in SYNTHETIC]
    N = np.array([n for _, n, _ in SYNTHETIC])
    K = np.array([round(n * r) for _, n, r in SYNTHETIC])
    return names, N, K


def half_widths(codes, values, N, share, rates, member, horizon, until) -> np.ndarray:
    b = sequence_bounds(codes, values, np.zeros_like(values), N, share, rates, member, horizon,
                        until=until)
    return (b["high"] - b["low"]) / 2


def rows_to_reach(codes, values, N, share, rates, member, horizon, target) -> np.ndarray:
    """Per review, the first row count whose half-width is at most ``target`` (the half-width
    never grows: bisection over rows); ``rows + 1`` where it is not reached."""
    draws, rows = codes.shape
    low, high = np.zeros(draws, dtype=np.int64), np.full(draws, rows - 1)
    reached = half_widths(codes, values, N, share, rates, member, horizon, high) <= target
    while np.any(low < high):
        mid = (low + high) // 2
        ok = half_widths(codes, values, N, share, rates, member, horizon, mid) <= target
        high, low = np.where(ok, mid, high), np.where(ok, low, mid + 1)
    return np.where(reached, high + 1, rows + 1)


def kg_every_row(codes, values, N, member, truth) -> float:
    """Share of reviews whose Korn-Graubard interval, recomputed after every row, excludes
    ``truth`` at some row."""
    onehot = (codes[..., None] == np.arange(len(N)))[..., member]
    n = np.cumsum(onehot, axis=1)
    x = np.cumsum(onehot * values[..., None], axis=1)
    kg = stratified_interval(np.broadcast_to(N[member], n.shape), n, x)
    with np.errstate(invalid="ignore"):
        outside = (kg["low"] > truth) | (kg["high"] < truth)
    return float(outside.any(axis=1).mean())


def fixed_n(N, K, rates, member, target, draws, seed, n_design) -> dict:
    """The fixed-N design: coverage and half-width at ``n_design``, smallest N reaching
    ``target`` (mean half-width, steps of 10)."""
    def at(n):
        n_h = allocate(N, rates, n)
        return simulate(N[member], K[member], n_h[member], draws, seed)

    out = at(n_design)
    needed = None
    for n in range(10 * (len(N) + 1), 2001, 10):
        if at(n)["mean_half_width"] <= target:
            needed = n
            break
    return {"coverage": out["coverage"], "half_width": out["mean_half_width"], "n_for_target": needed}


def study(title: str, names, N, K, args) -> None:
    rates = np.array([PLANNING_RATE[s.rsplit("/", 1)[1]] for s in names])
    share = allocate(N, rates, args.n) / args.n
    codes, values = draw_reviews(N, K, share, args.rows, args.draws, args.seed)
    recordings = sorted({s.rsplit("/", 1)[0] for s in names})
    certified = np.array([s.endswith("/certified") for s in names])
    populations = [("all", np.ones(len(N), bool)), ("certified", certified)]
    if len(recordings) > 1:
        populations += [(r, np.array([s.rsplit("/", 1)[0] == r for s in names]))
                        for r in recordings]
    print(f"{title}: {N.sum()} observations, strata "
          f"{dict(zip(names, zip(N.tolist(), K.tolist())))} (size, wrong)")
    table = []
    for horizon in args.horizons:
        for name, member in populations:
            truth = K[member].sum() / N[member].sum()
            start = time.perf_counter()
            missed = ever_excludes(codes, values, N, share, rates, member, horizon,
                                   np.full(args.draws, truth))
            row = {"horizon": horizon, "population": name, "true_rate": truth,
                   "ever_excludes": missed.mean()}
            for t in args.at:
                if t <= args.rows:
                    row[f"hw_{t}"] = half_widths(codes, values, N, share, rates, member,
                                                 horizon, np.full(args.draws, t - 1)).mean()
            if name == "all":
                reach = rows_to_reach(codes, values, N, share, rates, member, horizon,
                                      args.target)
                row.update(reach_mean=reach.mean(), reach_median=np.median(reach),
                           not_reached=int((reach > args.rows).sum()))
            row["seconds"] = time.perf_counter() - start
            table.append(row)
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(pd.DataFrame(table).round(4).to_string(index=False))
    fixed = []
    for name, member in populations[:2]:
        truth = K[member].sum() / N[member].sum()
        out = fixed_n(N, K, rates, member, args.target, args.draws, args.seed, args.n)
        fixed.append({"population": name, f"kg_coverage_{args.n}": out["coverage"],
                      f"kg_hw_{args.n}": out["half_width"],
                      "kg_n_for_target": out["n_for_target"],
                      "kg_every_row_excludes": kg_every_row(codes, values, N, member, truth)})
    print("  fixed-N design (Korn-Graubard)")
    print(pd.DataFrame(fixed).round(4).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows", type=int, default=600, help="rows of each simulated review")
    parser.add_argument("--n", type=int, default=200, help="the design's n (shares, fixed N)")
    parser.add_argument("--target", type=float, default=0.03, help="half-width to reach")
    parser.add_argument("--at", default="100,200,220,400",
                        help="row counts at which the mean half-width is given")
    parser.add_argument("--horizons", default="200,400",
                        help="the sequence's tuning horizons (sample.json: the sheet's n)")
    parser.add_argument("--no-real", action="store_true", help="leave the real tracker out")
    args = parser.parse_args()
    args.horizons = [int(h) for h in args.horizons.split(",")]
    args.at = [int(t) for t in args.at.split(",")]
    if not args.no_real:
        with tempfile.TemporaryDirectory() as folder:
            rows = audited_truth(Path(folder))
        study("real tracker", *strata_of(rows), args)
    study("synthetic", *synthetic(), args)


if __name__ == "__main__":
    main()
