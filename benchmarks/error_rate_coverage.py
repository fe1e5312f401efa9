"""Coverage of the review's error-rate intervals on the real CPD tracker's audit.

    PYTHONPATH=src .venv/bin/python benchmarks/error_rate_coverage.py [--draws 1000] [--seed 1]
        [--sizes 100,200,400]

The audit: ``trackverify audit examples/real-tracker/tracker_cpd.parquet`` (as the audit
guide advises; ``--detections`` adds ``--detections examples/real-tracker/detections.parquet``). The reviewer: the reference of
``../shared/data/fdnc-nerve-freely-moving/observations.parquet`` joined on (recording, frame,
detection); an audited observation is ``wrong`` when the tracker's ``pred_id`` differs from
the reference ``track`` (a detection the reference does not hold is wrong too: the tracker
names it a neuron the reference does not). Per sample size N in 100, 200, 400: the design of
``trackverify audit sample`` (strata recording x verdict with the flagged split by
``flagged_on_other``, the allocation rule fixed in
``trackverify.audit.review.design``) drawn ``--draws`` times (hypergeometric errors per stratum,
``trackverify.audit.review.simulation``); for ``all`` and ``certified``: the true rate, the
coverage of the 95 % interval, the mean half-width, the coverage and mean of the one-sided
95 % bound; beside simple random sampling of the same N scored by the same interval (one
stratum).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.audit.review.design import PLANNING_RATE, allocate, audited_population
from trackverify.audit.review.simulation import simulate

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "real-tracker"
REFERENCE = REPO.parent / "shared" / "data" / "fdnc-nerve-freely-moving" / "observations.parquet"
KEYS = ["recording", "frame", "detection"]


def audited_truth(folder: Path, detections: bool = False) -> pd.DataFrame:
    """The audited rows of the real tracker's audit with ``wrong`` from the reference."""
    extra = ["--detections", EXAMPLE / "detections.parquet"] if detections else []
    subprocess.run([sys.executable, "-m", "trackverify", "audit", EXAMPLE / "tracker_cpd.parquet",
                    *extra, "--out", folder], check=True, capture_output=True)
    rows = audited_population(folder)
    reference = pd.read_parquet(REFERENCE, columns=[*KEYS, "track"])
    rows = rows.merge(reference, on=KEYS, how="left", validate="one_to_one")
    return rows.assign(wrong=rows["track"].isna() | (rows["pred_id"] != rows["track"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="100,200,400", help="sample sizes N, comma-separated")
    parser.add_argument("--detections", action="store_true", help="audit with every detection")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = audited_truth(Path(folder), args.detections)
    strata = rows.groupby("stratum", sort=True)["wrong"].agg(["size", "sum"])
    N, K = strata["size"].to_numpy(), strata["sum"].to_numpy()
    rates = np.array([PLANNING_RATE[s.rsplit("/", 1)[1]] for s in strata.index])
    certified = np.array([s.endswith("/certified") for s in strata.index])
    print(f"audited {N.sum()} observations; strata {dict(zip(strata.index, N.tolist()))}; "
          f"wrong {dict(zip(strata.index, K.tolist()))}")
    table = []
    for n in map(int, args.sizes.split(",")):
        n_h = allocate(N, rates, n)
        for name, keep in (("all", np.ones(len(N), bool)), ("certified", certified)):
            design = simulate(N[keep], K[keep], n_h[keep], args.draws, args.seed)
            srs_n = n if name == "all" else int(round(n * N[keep].sum() / N.sum()))
            srs = simulate([N[keep].sum()], [K[keep].sum()], [srs_n], args.draws, args.seed)
            table.append({"N": n, "population": name, "n_reviewed": int(n_h[keep].sum()),
                          "true_rate": design["true_rate"], "coverage": design["coverage"],
                          "half_width": design["mean_half_width"],
                          "srs_n": srs_n, "srs_half_width": srs["mean_half_width"],
                          "srs_coverage": srs["coverage"],
                          "upper_coverage": design["upper_coverage"],
                          "mean_upper": design["mean_upper"],
                          "upper_over_true": design["mean_upper"] / design["true_rate"]})
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(table).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
