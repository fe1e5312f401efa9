"""The review sample and the error-rate estimate: hand cases, seeded coverage, the commands."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import betainc

from trackverify.review.design import allocate, draw_sample
from trackverify.review.estimate import estimate_error_rate, stratified_interval
from trackverify.review.simulation import simulate
from trackverify.errors import InputError
from tests.audit.test_audit import six_neurons
from tests.conftest import run_cli


# -- allocation ------------------------------------------------------------------------------

def test_allocation_by_hand():
    # weights 800 x sqrt(.05 x .95) = 174.36 and 200 x .5 = 100: 50 x 174.36 / 274.36 = 31.78
    assert allocate(np.array([800, 200]), np.array([0.05, 0.5]), 50).tolist() == [32, 18]
    # the floor of 10 binds for the small stratum; a stratum smaller than the floor is censused
    assert allocate(np.array([10_000, 30]), np.array([0.05, 0.5]), 40).tolist() == [30, 10]
    assert allocate(np.array([10_000, 4]), np.array([0.05, 0.5]), 40).tolist() == [36, 4]


def test_allocation_refuses_too_small_and_too_large_samples():
    with pytest.raises(InputError, match="less than the 20"):
        allocate(np.array([100, 100]), np.array([0.05, 0.5]), 15)
    with pytest.raises(InputError, match="more than the 200"):
        allocate(np.array([100, 100]), np.array([0.05, 0.5]), 201)


# -- the interval by hand --------------------------------------------------------------------

def test_one_stratum_no_error_by_hand():
    # N = 1000, n = 20, x = 0: q = 1/22, v = (1 - 0.02) q (1 - q) / 20, so m = 20 / 0.98 and
    # the Beta(1, m) quantile is 1 - (1 - u)^(1/m) in closed form.
    out = stratified_interval([1000], [20], [0])
    m = 20 / 0.98
    assert out["estimate"] == 0 and out["low"] == 0
    assert out["high"] == pytest.approx(1 - 0.025 ** (1 / m), rel=1e-9)
    assert out["upper"] == pytest.approx(1 - 0.05 ** (1 / m), rel=1e-9)


def test_two_strata_by_hand():
    # W = (0.8, 0.2); p = 0.8 x 0/32 + 0.2 x 9/18 = 0.1; q_h = (1/34, 10/20)
    out = stratified_interval([800, 200], [32, 18], [0, 9])
    q1, q2 = 1 / 34, 0.5
    v = 0.64 * (1 - 32 / 800) * q1 * (1 - q1) / 32 + 0.04 * (1 - 18 / 200) * q2 * (1 - q2) / 18
    q = 0.8 * q1 + 0.2 * q2
    m = q * (1 - q) / v
    k = 0.1 * m
    assert out["estimate"] == pytest.approx(0.1)
    # Clopper-Pearson ends: P(Beta(k, m-k+1) <= low) = 0.025, P(Beta(k+1, m-k) <= high) = 0.975
    assert betainc(k, m - k + 1, out["low"]) == pytest.approx(0.025, abs=1e-9)
    assert betainc(k + 1, m - k, out["high"]) == pytest.approx(0.975, abs=1e-9)
    assert betainc(k + 1, m - k, out["upper"]) == pytest.approx(0.95, abs=1e-9)
    assert out["low"] < 0.1 < out["upper"] < out["high"]


def test_a_census_is_exact_and_a_stratum_without_sample_is_undefined():
    out = stratified_interval([100, 50], [100, 50], [7, 5])
    assert out["low"] == out["high"] == out["estimate"] == pytest.approx(12 / 150)
    assert np.isnan(stratified_interval([100, 50], [10, 0], [1, 0])["estimate"])


# -- coverage --------------------------------------------------------------------------------

POPULATIONS = [  # (N_h, wrong K_h, n_h): small strata, zero and few errors
    ([800, 200], [0, 3], [10, 10]),
    ([800, 200], [4, 30], [10, 10]),
    ([800, 200], [16, 100], [20, 10]),
    ([50, 20], [1, 5], [10, 10]),
    ([5000], [25], [40]),
    ([2000, 500, 100], [10, 150, 50], [30, 15, 10]),
]


@pytest.mark.parametrize("population", POPULATIONS, ids=str)
def test_seeded_coverage_is_at_least_95_percent(population):
    result = simulate(*population, draws=4000, seed=7)
    assert result["coverage"] >= 0.95, result
    assert result["upper_coverage"] >= 0.95, result


def test_the_coverage_test_fails_a_normal_approximation():
    # the same draws as test_seeded_coverage_... for the rare-error population, scored by the
    # stratified Wald interval p +- 1.96 sqrt(v): with zero errors in a stratum v misses it
    N, K, n = (np.array(a) for a in POPULATIONS[4])
    rng = np.random.Generator(np.random.PCG64(7))
    x = rng.hypergeometric(K, N - K, n, size=(4000, len(N)))
    W = N / N.sum()
    p_h = x / n
    p = (W * p_h).sum(axis=1)
    half = 1.96 * np.sqrt((W**2 * (1 - n / N) * p_h * (1 - p_h) / n).sum(axis=1))
    truth = K.sum() / N.sum()
    wald = np.mean((p - half <= truth) & (truth <= p + half))
    assert wald < 0.90
    assert simulate(N, K, n, draws=4000, seed=7)["coverage"] >= 0.95


# -- the commands ----------------------------------------------------------------------------

@pytest.fixture
def audited(tmp_path):
    tracks = tmp_path / "tracks.csv"
    six_neurons().to_csv(tracks, index=False)
    out = tmp_path / "audit"
    done = run_cli("audit", tracks, "--out", out)  # the audit's form from before the group
    assert done.returncode == 0, done.stderr
    return out


def row_strata(audit_dir) -> np.ndarray:
    """Each review.csv row's stratum, from sample.json (review.csv does not show it)."""
    design = json.loads((audit_dir / "sample.json").read_text())
    names = np.array([s["stratum"] for s in design["strata"]])
    return names[design["order"]["stratum"]]


def test_round_trip_sample_fill_estimate(audited):
    done = run_cli("audit", "sample", audited, "--n", "40", "--seed", "3")
    assert done.returncode == 0, done.stderr
    design = json.loads((audited / "sample.json").read_text())
    strata = {s["stratum"]: s for s in design["strata"]}
    # 6 ids x 49 frames audited; the 30 swapped rows are flagged, each on the other's place
    assert {k.split("/")[1]: s["N"] for k, s in strata.items()} == {"certified": 264,
                                                                  "flagged_on_other": 30}
    assert sum(s["n"] for s in strata.values()) == 40 and design["seed"] == 3
    for s in strata.values():
        assert s["inclusion_probability"] == s["n"] / s["N"]
        assert s["share"] == s["planned"] / 40
    review = pd.read_csv(audited / "review.csv")
    assert len(review) == 40 and review["decision"].isna().all()
    # blind: no stratum, verdict or score in the sheet; where to find each row elsewhere, then
    # the decision and its record
    assert list(review.columns) == ["recording", "frame", "pred_id", "detection", "row", "x_um",
                                    "y_um", "z_um", "x_file", "y_file", "z_file", "start_frame",
                                    "decision",
                                    "reviewer", "mode", "shown", "seconds", "decided_at"]
    review["stratum"] = row_strata(audited)
    assert review["frame"].tolist() == design["order"]["frame"]
    # truth of the six-neuron worm: ids 0 and 1 are swapped on frames 25-39
    wrong = review["pred_id"].isin([0, 1]) & review["frame"].between(25, 39)
    review["decision"] = np.where(wrong, "wrong", "correct")
    review.drop(columns="stratum").to_csv(audited / "review.csv", index=False)
    done = run_cli("audit", "estimate", audited)
    assert done.returncode == 0, done.stderr
    result = json.loads((audited / "estimate.json").read_text())
    counts = review.assign(w=wrong).groupby("stratum")["w"].agg(["sum", "size"])
    expected = sum(strata[h]["N"] * counts.loc[h, "sum"] / counts.loc[h, "size"]
                   for h in counts.index) / sum(s["N"] for s in strata.values())
    assert result["all"]["estimate"] == pytest.approx(expected)
    for interval in (result["all"], result["all"]["fixed_n"]):
        assert interval["low"] <= expected <= interval["high"]
    assert result["all"]["n_decided"] == result["all"]["n_rows"] == 40 and result["complete"]
    assert result["per_recording"]["worm"]["all"] == result["all"]
    assert "all:" in done.stdout and "certified:" in done.stdout and "fixed-N" in done.stdout
    report = (audited / "report.html").read_text()
    assert report.count("Error rate from the human review") == 1
    assert f"{result['all']['estimate']:.1%}" in report
    # the first screen: the estimate in place of the command that gives it, above the events
    answer = report[report.index("<section class='answer'"):report.index("Start here")]
    assert (f"Error rate from your review: {100 * result['all']['estimate']:.1f} % wrong, 95 % "
            f"interval {100 * result['all']['low']:.1f} to {100 * result['all']['high']:.1f} %"
            in answer)
    assert "trackverify audit sample" not in answer and "40 of 40 sampled" in answer
    # the same draw again from the same seed is refused now that decisions exist
    again = run_cli("audit", "sample", audited, "--n", "40", "--seed", "3")
    assert again.returncode == 2 and "holds decisions" in again.stderr
    assert "Traceback" not in again.stderr


def test_unsure_widens_both_ends(audited):
    draw_sample(audited, 30, seed=1)
    review = pd.read_csv(audited / "review.csv")
    review["decision"] = "correct"
    review.loc[:4, "decision"] = "wrong"
    base = review.copy()
    base.to_csv(audited / "review.csv", index=False)
    sure = estimate_error_rate(audited)["all"]
    review.loc[5, "decision"] = "unsure"
    review.to_csv(audited / "review.csv", index=False)
    as_wrong = base.copy()
    as_wrong.loc[5, "decision"] = "wrong"
    unsure = estimate_error_rate(audited)["all"]
    assert (audited / "report.html").read_text().count("Error rate from the human review") == 1
    as_wrong.to_csv(audited / "review.csv", index=False)
    high = estimate_error_rate(audited)["all"]
    # both intervals: low as if the unsure row were correct, high as if it were wrong
    for key in ("fixed_n", None):
        pick = (lambda b: b[key]) if key else (lambda b: b)
        assert pick(unsure)["low"] == pick(sure)["low"]
        assert pick(unsure)["high"] == pick(high)["high"]
    assert unsure["n_unsure"] == 1


def test_a_partial_review_gives_the_sequence_and_a_gap_counts_as_unsure(audited):
    draw_sample(audited, 30, seed=1)
    review = pd.read_csv(audited / "review.csv")
    review["decision"] = None
    review.loc[:9, "decision"] = "correct"
    review.loc[2, "decision"] = "wrong"
    review.to_csv(audited / "review.csv", index=False)
    done = run_cli("audit", "estimate", audited, "--target", "0.5")
    assert done.returncode == 0, done.stderr
    assert "10 of 30 rows decided" in done.stdout and "anytime-valid" in done.stdout
    result = json.loads((audited / "estimate.json").read_text())
    partial = result["all"]
    assert partial["fixed_n"] is None and not result["complete"] and result["target"] == 0.5
    assert partial["n_decided"] == 10 and partial["target_met"] in (True, False)
    assert partial["target_met"] == (partial["half_width"] <= 0.5)
    # row 6 left undecided before the last decided row (10): counted unsure, both ends
    gap = review.copy()
    gap.loc[5, "decision"] = None
    gap.to_csv(audited / "review.csv", index=False)
    with_gap = estimate_error_rate(audited)["all"]
    for value, end in (("correct", "low"), ("wrong", "high")):
        filled = review.copy()
        filled.loc[5, "decision"] = value
        filled.to_csv(audited / "review.csv", index=False)
        assert with_gap[end] == estimate_error_rate(audited)["all"][end]
    assert with_gap["n_decided"] == 9


def test_a_misspelled_or_reordered_review_is_refused(audited):
    draw_sample(audited, 20, seed=1)
    review = pd.read_csv(audited / "review.csv")
    review["decision"] = "correct"
    review.loc[6, "decision"] = "maybe"
    review.to_csv(audited / "review.csv", index=False)
    done = run_cli("audit", "estimate", audited)
    assert done.returncode == 2 and "column 'decision', row 7" in done.stderr
    assert "'maybe' is not correct" in done.stderr and "Traceback" not in done.stderr
    review.loc[6, "decision"] = "wrong"
    review.sort_values(["frame", "pred_id"]).to_csv(audited / "review.csv", index=False)
    with pytest.raises(InputError, match="keep review.csv's rows in the order written"):
        estimate_error_rate(audited)
    review.drop(index=3).to_csv(audited / "review.csv", index=False)
    with pytest.raises(InputError, match="sample.json drew 20"):
        estimate_error_rate(audited)
    design = json.loads((audited / "sample.json").read_text())
    design["strata"][0]["n"] = design["strata"][0]["N"] + 1
    (audited / "sample.json").write_text(json.dumps(design))
    with pytest.raises(InputError, match=r"sample.json: strata must be .* 0 <= n <= N"):
        estimate_error_rate(audited)
    assert not (audited / "estimate.json").exists()


def test_a_sample_from_before_the_review_order_still_gives_its_fixed_n_interval(audited):
    # the layout of earlier versions: a stratum column, no order in sample.json
    draw_sample(audited, 20, seed=1)
    design = json.loads((audited / "sample.json").read_text())
    review = pd.read_csv(audited / "review.csv").assign(stratum=row_strata(audited))
    del design["order"]
    (audited / "sample.json").write_text(json.dumps(design))
    review["decision"] = "correct"
    review.loc[4, "decision"] = None
    review.to_csv(audited / "review.csv", index=False)
    with pytest.raises(InputError, match="1 of 20 rows have no decision"):
        estimate_error_rate(audited)
    review.loc[4, "decision"] = "wrong"
    review.to_csv(audited / "review.csv", index=False)
    result = estimate_error_rate(audited)
    assert result["interval"].startswith("Korn-Graubard")
    assert result["all"]["low"] == result["all"]["fixed_n"]["low"]


def test_the_audit_help_is_the_audits_and_lists_the_subcommands():
    done = run_cli("audit", "-h")
    assert done.returncode == 0 and "Usage: trackverify audit [OPTIONS] TRACKS" in done.stdout
    assert "audit sample" in done.stdout
    assert "AUDIT_DIR" in run_cli("audit", "sample", "-h").stdout
    missing = run_cli("audit")
    assert missing.returncode == 2 and "Try 'trackverify audit --help'" in missing.stderr


def test_the_docstring_examples_hold():
    import doctest

    import trackverify
    from trackverify.review import design, estimate

    for module in (design, estimate):
        result = doctest.testmod(module)
        assert result.attempted >= 1 and result.failed == 0
    assert trackverify.sample_review is draw_sample
    assert trackverify.estimate_error_rate is estimate_error_rate


def test_estimate_before_sample_says_the_next_step(tmp_path):
    """Before: ``a/sample.json: sample.json not found`` and no next step."""
    (tmp_path / "a").mkdir()
    done = run_cli("audit", "estimate", str(tmp_path / "a"))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"trackverify: error: {tmp_path / 'a'}: no sample.json: draw the observations to "
        f"review first (trackverify audit sample {tmp_path / 'a'} --n 200), decide them "
        f"(trackverify review {tmp_path / 'a'}, or review.csv in any tool), then estimate")


def test_the_help_names_the_review_page():
    """Before: neither ``trackverify -h`` nor ``audit sample -h`` mentioned ``review``."""
    for args in (["-h"], ["audit", "sample", "-h"]):
        done = run_cli(*args)
        assert done.returncode == 0 and "trackverify review" in done.stdout, args
