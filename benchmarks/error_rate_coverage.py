"""Coverage of the review's error-rate intervals on the real CPD tracker's audit and on the
specimen's, beside simple random sampling and prediction-powered inference.

    PYTHONPATH=src .venv/bin/python benchmarks/error_rate_coverage.py [--draws 1000] [--seed 1]
        [--sizes 100,200,400] [--detections] [--specimen LEVEL ...] [--no-real]
        [--ppi] [--ppi-prediction on_other|not_certified]

The real tracker's audit: ``trackverify audit examples/real-tracker/tracker_cpd.parquet`` (as
the audit guide advises; ``--detections`` adds ``--detections
examples/real-tracker/detections.parquet``). Its reviewer: the reference of
``../shared/data/fdnc-nerve-freely-moving/observations.parquet`` joined on (recording, frame,
detection); an audited observation is ``wrong`` when the tracker's ``pred_id`` differs from
the reference ``track`` (a detection the reference does not hold is wrong too: the tracker
names it a neuron the reference does not).

``--specimen LEVEL`` (repeatable) adds a tracker made from the development specimen at that
motion level (``SpecimenConfig(motion=LEVEL)``: one animal, 1,000 frames): every condition of
the corruption suite at once on its clean predictions
(:func:`trackverify.benchmark.corrupt.compose_corruptions`, seed 20261007, SPEC's window 300-700), the
invalid rows left out, audited by ``trackverify.audit`` (anchor frame = the first frame, no
detections table, as the guide advises). Its reviewer: ``wrong`` = the ``pred_id`` differs
from the clean prediction of the row's reference track (the specimen's fixed relabelling of
the track).

Per sample size N in 100, 200, 400: the design of ``trackverify audit sample`` (strata
recording x verdict with the flagged split by ``flagged_on_other``, the allocation rule fixed
in ``trackverify.review.design``) drawn ``--draws`` times (hypergeometric errors per
stratum, ``trackverify.review.simulation``); for ``all`` and ``certified``: the true
rate, the coverage of the 95 % interval, the mean half-width, the coverage and mean of the
one-sided 95 % bound; beside simple random sampling of the same N scored by the same
interval (one stratum).

``--ppi`` adds prediction-powered inference (Angelopoulos et al., Science 2023; ``ppi_py``
0.2.3 in its own environment, ``make .venv-ppi``, mk/ppi.mk): per draw a simple random sample of N audited observations (labelled:
Y = wrong), the audit's prediction Yhat = 1 for ``flagged_on_other`` (the audit's statement
that the observation sits on another identity's place), 0 otherwise, and the unlabelled
rest (``--ppi-prediction not_certified``: Yhat = 1 for every row not certified, flagged or
abstained); ``ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05)`` (its default power
tuning). For
``certified``: the certified rows of the same sample, the unlabelled certified rest. Y and
Yhat are 0/1, so the interval depends on a sample only through its counts of the (Y, Yhat)
cells: the samples are drawn as those counts (multivariate hypergeometric) and each distinct
one is computed once. ppi_py 0.2.3 ignores ``alternative`` under its default power tuning,
so the one-sided 95 % bound is its z interval's centre plus ``z_0.95`` standard errors (the
standard error read from the two-sided interval). A draw whose labelled Y and Yhat are both
constant, or whose Yhat alone is (every certified sample: its power tuning divides 0 by 0),
may have no interval from ppi_py (NaN): counted as not covering, and reported, with the
coverage over the draws that have one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from trackverify.review.design import PLANNING_RATE, allocate, audited_population
from trackverify.review.simulation import simulate

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "real-tracker"
REFERENCE = REPO.parent / "shared" / "data" / "fdnc-nerve-freely-moving" / "observations.parquet"
KEYS = ["recording", "frame", "detection"]
PPI_VENV = ".venv-ppi"  # ppi_py's own environment (mk/ppi.mk)
#: The corruption suite's seed and SPEC's window for the specimen tracker.
SPECIMEN_SEED, START, RECOVERY_END = 20261007, 300, 700


def audited_truth(folder: Path, detections: bool = False) -> pd.DataFrame:
    """The audited rows of the real tracker's audit with ``wrong`` from the reference."""
    extra = ["--detections", EXAMPLE / "detections.parquet"] if detections else []
    subprocess.run([sys.executable, "-m", "trackverify", "audit", EXAMPLE / "tracker_cpd.parquet",
                    *extra, "--out", folder], check=True, capture_output=True)
    rows = audited_population(folder)
    reference = pd.read_parquet(REFERENCE, columns=[*KEYS, "track"])
    rows = rows.merge(reference, on=KEYS, how="left", validate="one_to_one")
    return rows.assign(wrong=rows["track"].isna() | (rows["pred_id"] != rows["track"]))


def specimen_truth(folder: Path, level: str) -> pd.DataFrame:
    """The audited rows of the specimen tracker at motion ``level`` with ``wrong``."""
    from trackverify.audit.core import audit
    from trackverify.benchmark.corrupt import DRAW_ORDER, compose_corruptions, equal_ids
    from trackverify.synth.specimen import SpecimenConfig, animal_observations

    clean = animal_observations(SpecimenConfig(motion=level), 0)
    tracker, _ = compose_corruptions(clean, DRAW_ORDER, SPECIMEN_SEED, START, RECOVERY_END)
    valid = tracker["pred_valid"].to_numpy(dtype=bool)
    truth = clean.loc[valid, KEYS].assign(
        wrong=~equal_ids(tracker.loc[valid, "pred_id"].to_numpy(), clean.loc[valid, "pred_id"]))
    audit(tracker.loc[valid, [*KEYS, "pred_id", "x_um", "y_um", "z_um"]], out=folder)
    return audited_population(folder).merge(truth, on=KEYS, how="left", validate="one_to_one")


def kinds(rows: pd.DataFrame) -> np.ndarray:
    """Each row's stratum kind (``certified``, ``flagged``, ``flagged_on_other``, ...)."""
    return rows["stratum"].str.rsplit("/", n=1).str[1].to_numpy(dtype=str)


def design_table(rows: pd.DataFrame, sizes: list[int], draws: int, seed: int) -> list[dict]:
    """The stratified design and SRS, both scored by Korn-Graubard intervals."""
    strata = rows.groupby("stratum", sort=True)["wrong"].agg(["size", "sum"])
    N, K = strata["size"].to_numpy(), strata["sum"].to_numpy()
    rates = np.array([PLANNING_RATE[s.rsplit("/", 1)[1]] for s in strata.index])
    certified = np.array([s.endswith("/certified") for s in strata.index])
    print(f"  audited {N.sum()} observations; strata {dict(zip(strata.index, N.tolist()))}; "
          f"wrong {dict(zip(strata.index, K.tolist()))}")
    table = []
    for n in sizes:
        n_h = allocate(N, rates, n)
        for name, keep in (("all", np.ones(len(N), bool)), ("certified", certified)):
            design = simulate(N[keep], K[keep], n_h[keep], draws, seed)
            srs_n = n if name == "all" else int(round(n * N[keep].sum() / N.sum()))
            srs = simulate([N[keep].sum()], [K[keep].sum()], [srs_n], draws, seed)
            table.append({"N": n, "population": name, "n_reviewed": int(n_h[keep].sum()),
                          "true_rate": design["true_rate"], "coverage": design["coverage"],
                          "half_width": design["mean_half_width"],
                          "srs_n": srs_n, "srs_half_width": srs["mean_half_width"],
                          "srs_coverage": srs["coverage"],
                          "upper_coverage": design["upper_coverage"],
                          "mean_upper": design["mean_upper"],
                          "upper_over_true": (design["mean_upper"] / design["true_rate"]
                                              if design["true_rate"] > 0 else None)})
    return table


#: The audit's prediction of ``wrong`` (Yhat) for PPI, from a row's stratum kind.
PREDICTIONS = {"on_other": lambda kind: kind == "flagged_on_other",
               "not_certified": lambda kind: kind != "certified"}


def ppi_table(rows: pd.DataFrame, sizes: list[int], draws: int, seed: int,
              prediction: str = "on_other") -> list[dict]:
    """Prediction-powered intervals from simple random samples (module docstring), by
    ppi_py in its own environment (:func:`ppi_intervals`)."""
    kind = kinds(rows)
    y = rows["wrong"].to_numpy(dtype=bool)
    yhat = PREDICTIONS[prediction](kind)
    # cells: certified x Y x Yhat, so a draw's counts give both populations' samples
    cell = 4 * (kind == "certified") + 2 * y + yhat
    totals = np.bincount(cell, minlength=8)
    cell_y, cell_yhat = (np.arange(8) // 2) % 2, np.arange(8) % 2
    rng = np.random.Generator(np.random.PCG64(seed))
    z = norm.ppf(0.95) / norm.ppf(0.975)
    table = []
    for n in sizes:
        picked = rng.multivariate_hypergeometric(totals, n, size=draws)
        for name, cells in (("all", np.arange(8)), ("certified", np.arange(4, 8))):
            truth = (totals[cells] * cell_y[cells]).sum() / totals[cells].sum()
            # each distinct sample once (Y and Yhat are 0/1: the counts are the sample)
            distinct, inverse = np.unique(picked[:, cells], axis=0, return_inverse=True)
            found = ppi_intervals(cell_y[cells], cell_yhat[cells], totals[cells], distinct)
            out = found[inverse.ravel()]
            table.append({"N": n, "population": name,
                          "n_labelled": float(picked[:, cells].sum(1).mean()),
                          "true_rate": float(truth), **ppi_summary(out, truth, z)})
    return table


def ppi_intervals(y, yhat, totals, counts) -> np.ndarray:
    """``ppi_mean_ci`` (alpha 0.05) of each row of ``counts``, ``(len(counts), 2)``, NaN where
    ppi_py gives none: ``benchmarks/ppi_reference.py`` run by ``.venv-ppi`` (``make
    .venv-ppi``; mk/ppi.mk)."""
    python = REPO / PPI_VENV / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"--ppi needs ppi_py in {PPI_VENV}: run `make {PPI_VENV}` (mk/ppi.mk)")
    job = {"y": np.asarray(y).tolist(), "yhat": np.asarray(yhat).tolist(),
           "totals": np.asarray(totals).tolist(), "counts": np.asarray(counts).tolist()}
    done = subprocess.run([python, REPO / "benchmarks" / "ppi_reference.py"], input=json.dumps(job),
                          capture_output=True, text=True, check=True)
    return np.array(json.loads(done.stdout), dtype=float)


def ppi_summary(intervals: np.ndarray, truth: float, z: float) -> dict:
    """Coverage, mean half-width and one-sided bound of ``(draws, 2)`` PPI intervals."""
    low, high = intervals[:, 0], intervals[:, 1]
    upper = (low + high) / 2 + z * (high - low) / 2
    defined = ~np.isnan(low)
    covers = defined & (low <= truth) & (truth <= high)

    def mean(values):  # over the draws with an interval; None when none has one
        return float(np.mean(values[defined])) if defined.any() else None

    return {"ppi_coverage": float(np.mean(covers)), "ppi_half_width": mean((high - low) / 2),
            "no_interval": int((~defined).sum()), "coverage_where_defined": mean(covers),
            "ppi_upper_coverage": float(np.mean(defined & (truth <= upper))),
            "ppi_mean_upper": mean(upper)}


def show(title: str, table: list[dict]) -> None:
    print(title)
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(pd.DataFrame(table).round(4).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="100,200,400", help="sample sizes N, comma-separated")
    parser.add_argument("--detections", action="store_true", help="audit with every detection")
    parser.add_argument("--specimen", action="append", default=[], metavar="LEVEL",
                        help="add the specimen tracker at this motion level (repeatable)")
    parser.add_argument("--no-real", action="store_true", help="leave the real tracker out")
    parser.add_argument("--ppi", action="store_true", help="add prediction-powered inference")
    parser.add_argument("--ppi-prediction", choices=sorted(PREDICTIONS), default="on_other",
                        help="Yhat: flagged_on_other (default) or every row not certified")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    trackers = [] if args.no_real else [("real tracker",
                                         lambda f: audited_truth(f, args.detections))]
    trackers += [(f"specimen {level}", lambda f, level=level: specimen_truth(f, level))
                 for level in args.specimen]
    for name, truth in trackers:
        with tempfile.TemporaryDirectory() as folder:
            rows = truth(Path(folder))
        print(f"{name}:")
        show("  stratified design and SRS (Korn-Graubard)",
             design_table(rows, sizes, args.draws, args.seed))
        if args.ppi:
            show(f"  PPI (ppi_mean_ci, SRS, Yhat = {args.ppi_prediction})",
                 ppi_table(rows, sizes, args.draws, args.seed, args.ppi_prediction))


if __name__ == "__main__":
    main()
