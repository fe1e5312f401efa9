"""Intervals by animal: a cluster bootstrap whose coverage is checked on a known cohort."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from trackverify.benchmark.intervals import animal_bootstrap_interval, rate_interval_by_animal

TRUE_RATE = 0.1  # mean of Beta(2, 18)


def synthetic_cohort(rng, animals, frames=200):
    """Animals with their own error probability p_a ~ Beta(2, 18) and Binomial errors.

    Every animal has the same number of frames, so the cohort's true pooled rate is
    E[p_a] = 2 / 20 = 0.1.
    """
    p = rng.beta(2, 18, size=animals)
    errors = rng.binomial(frames, p)
    return errors.astype(float), np.full(animals, float(frames))


def test_fewer_than_five_animals_gives_no_interval():
    out = animal_bootstrap_interval([1, 2, 3, 4], [10, 10, 10, 10])
    assert out["ci"] is None and "4 animal(s)" in out["reason"]
    assert out["estimate"] == pytest.approx(10 / 40)


def test_identical_animals_give_a_degenerate_interval():
    out = animal_bootstrap_interval([3] * 6, [12] * 6, seed=1)
    assert out["ci"] == [0.25, 0.25] and out["estimate"] == 0.25


def test_same_seed_same_interval_and_seed_is_recorded():
    num, den = synthetic_cohort(np.random.default_rng(0), 12)
    a = animal_bootstrap_interval(num, den, seed=11)
    assert a == animal_bootstrap_interval(num, den, seed=11)
    assert a["seed"] == 11 and a["replicates"] == 2000 and a["undefined_replicates"] == 0


def test_coverage_of_the_true_rate_over_repeated_cohorts():
    rng = np.random.default_rng(2026)
    covered = [
        (lambda ci: ci[0] <= TRUE_RATE <= ci[1])(
            animal_bootstrap_interval(*synthetic_cohort(rng, 30), seed=s, replicates=1000)["ci"])
        for s in range(400)]
    # Nominal 95 %; the percentile bootstrap under-covers a little with 30 clusters
    # (scipy.stats.bootstrap covers about 92 % on this cohort). The binomial sd of the
    # coverage over 400 cohorts is about 1.3 %; a bootstrap over rows instead of animals
    # would be far too narrow and cover well under 80 %.
    assert np.mean(covered) >= 0.87


def test_width_shrinks_like_one_over_root_animals():
    rng = np.random.default_rng(7)

    def mean_width(animals):
        widths = []
        for s in range(60):
            ci = animal_bootstrap_interval(*synthetic_cohort(rng, animals), seed=s,
                                           replicates=1000)["ci"]
            widths.append(ci[1] - ci[0])
        return np.mean(widths)

    ratio = mean_width(80) / mean_width(20)
    assert 0.4 < ratio < 0.6  # 1 / sqrt(4) = 0.5


def test_resampling_animals_not_rows():
    # The per-row entry point sums rows per animal first and gives exactly the interval of
    # the per-animal sums: rows inside an animal are never resampled.
    rng = np.random.default_rng(5)
    num, den = synthetic_cohort(rng, 10, frames=50)
    rows = []
    for animal, (n, d) in enumerate(zip(num, den)):
        errs = np.zeros(int(d))
        errs[: int(n)] = 1
        rows.append(pd.DataFrame({"animal_id": f"a{animal}", "error": errs}))
    table = pd.concat(rows, ignore_index=True)
    table.loc[table.index[::7], "error"] = np.nan  # unlabelled rows count nowhere
    by_rows = rate_interval_by_animal(table, "error", seed=3)
    sums = table.dropna().groupby("animal_id")["error"].agg(["sum", "count"])
    assert by_rows == animal_bootstrap_interval(sums["sum"], sums["count"], seed=3)


def test_agrees_with_scipy_paired_percentile_bootstrap():
    num, den = synthetic_cohort(np.random.default_rng(9), 25)
    ours = animal_bootstrap_interval(num, den, seed=4, replicates=40000)["ci"]
    ref = stats.bootstrap((num, den), lambda n, d, axis=-1: n.sum(axis) / d.sum(axis),
                          paired=True, vectorized=True, method="percentile",
                          n_resamples=40000, random_state=np.random.default_rng(4))
    ref_ci = ref.confidence_interval
    # Different random draws: agreement to Monte Carlo error of the quantiles.
    assert ours[0] == pytest.approx(ref_ci.low, abs=0.002)
    assert ours[1] == pytest.approx(ref_ci.high, abs=0.002)
