"""The review order and the anytime-valid confidence sequence: hand cases, an independent
scalar rewrite of the docstring's formulas, seeded coverage at every stopping time."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from trackverify.review.design import allocate, draw_sample, review_rows
from trackverify.review.estimate import (estimate_error_rate, interval_so_far,
                                               stratified_interval)
from trackverify.review.sequence import (log_capital, sequence_bounds, step_terms,
                                               stratum_sequence)
from trackverify.review.simulation import draw_reviews, simulate_sequence
from tests.audit.test_error_rate import audited  # noqa: F401 (fixture)


# -- the order -------------------------------------------------------------------------------

def test_a_rows_position_says_nothing_of_its_stratum():
    # over 3,000 seeded orders, every row is of stratum 1 with probability 0.3 (the share),
    # at the first row as at the last: the order is not sorted by stratum
    rng = np.random.Generator(np.random.PCG64(5))
    orders = np.stack([stratum_sequence([500, 500], [0.7, 0.3], 20, rng) for _ in range(3000)])
    share = (orders == 1).mean(axis=0)
    assert np.all(np.abs(share - 0.3) < 0.03), share  # 4.2 standard errors


def test_an_exhausted_stratum_leaves_the_draw_and_a_census_holds_every_row():
    rng = np.random.Generator(np.random.PCG64(1))
    order = stratum_sequence([2, 50], [0.9, 0.1], 30, rng)
    assert (order == 0).sum() == 2  # stratum 0 has two rows; the rest are stratum 1
    census = stratum_sequence([3, 4, 5], [0.2, 0.3, 0.5], 12, rng)
    assert np.bincount(census).tolist() == [3, 4, 5]
    with pytest.raises(ValueError):
        stratum_sequence([3, 4], [0.5, 0.5], 8, rng)


def test_each_strata_rows_come_in_a_uniform_order():
    # stratum 0 holds population rows 0, 2, 4, 6 (codes interleaved); its first review row is
    # each of them in a quarter of 4,000 seeded draws
    codes = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    rng = np.random.Generator(np.random.PCG64(2))
    first = [review_rows(codes, np.array([4, 4]), np.array([0, 1, 0]), rng)[0] for _ in range(4000)]
    counts = np.bincount(first, minlength=8)
    assert counts[1::2].sum() == 0
    assert np.all(np.abs(counts[::2] / 4000 - 0.25) < 0.03), counts


# -- the sequence by hand --------------------------------------------------------------------

def test_one_stratum_of_four_two_wrong_rows_by_hand():
    # N = 4, planning rate 0.5, horizon 2, rows wrong, wrong. Row 1: c = 0.5, w = 1, Y = 1,
    # L = 0, U = 1, v = 0.25, lambda = sqrt(2 ln 40 / (0.25 x 2)). Row 2: c = 1.5 / 2 = 0.75,
    # w = 3/4, Y = 0.5625 + 0.75 x 0.25 = 0.75, L = 0, U = 0.75, v = 0.5625 x 0.1875,
    # lambda = sqrt(2 ln 40 / (v x 2)), S / N = 1/4.
    terms = step_terms([0, 0], [1, 1], [4], [1.0], [0.5], [True], 2)
    lam1 = math.sqrt(2 * math.log(40) / 0.5)
    lam2 = math.sqrt(2 * math.log(40) / (0.5625 * 0.1875 * 2))
    assert terms["Y"].tolist() == [1.0, 0.75]
    assert terms["L"].tolist() == [0.0, 0.0] and terms["U"].tolist() == [1.0, 0.75]
    assert terms["lam"] == pytest.approx([lam1, lam2], rel=1e-12)
    assert terms["m0"].tolist() == [0.0, 0.25]
    # at mu = 0.1: row 1 bets min(lam1, 0.75 / 0.1) = lam1 on Y - m = 0.9; row 2's m = -0.15
    # lies below L, so it bets lam2 on 0.75 + 0.15 = 0.9
    expected = math.log((1 + lam1 * 0.9) * (1 + lam2 * 0.9))
    assert float(log_capital(terms, 0.1, +1)) == pytest.approx(expected, rel=1e-12)
    # at mu = 0.5 the truncation binds: row 1 bets 0.75 / 0.5 = 1.5, row 2 0.75 / 0.25 = 3
    assert float(log_capital(terms, 0.5, +1)) == pytest.approx(
        math.log((1 + 1.5 * 0.5) * (1 + 3 * 0.5)), rel=1e-12)
    # K- at mu = 0.9: row 1 bets min(lam1, 0.75 / 0.1) = 3.84 on -(1 - 0.9): falls below 1,
    # so the running maximum of log K- stays 0 (the starting capital)
    assert float(log_capital(terms, 0.9, -1)) == 0.0
    # capital 28.2 < 40 at mu = 0.1 (and less above): no rate is excluded by the bets; the
    # interval is what two wrong rows of four settle: at least 2/4, at most 4/4
    b = sequence_bounds([0, 0], [1, 1], [0, 0], [4], [1.0], [0.5], [True], 2)
    assert (float(b["low"]), float(b["high"])) == (0.5, 1.0)


def test_a_census_gives_the_exact_rate():
    rng = np.random.Generator(np.random.PCG64(3))
    sizes, wrong_rows = np.array([6, 3, 2]), np.array([1, 2, 0])
    order = stratum_sequence(sizes, [0.5, 0.3, 0.2], 11, rng)
    values = np.zeros(11)
    for h in range(3):  # the first wrong_rows[h] rows of stratum h are wrong
        values[np.flatnonzero(order == h)[:wrong_rows[h]]] = 1
    b = sequence_bounds(order, values, np.zeros(11), sizes, [0.5, 0.3, 0.2],
                        [0.05, 0.5, 0.5], [True] * 3, 11)
    assert float(b["low"]) == float(b["high"]) == float(b["upper"]) == 3 / 11
    certified = sequence_bounds(order, values, np.zeros(11), sizes, [0.5, 0.3, 0.2],
                                [0.05, 0.5, 0.5], [True, False, False], 11)
    assert float(certified["low"]) == float(certified["high"]) == 1 / 6


def reference_bounds(codes, x, sizes, share, rates, member, horizon, alpha=0.05):
    """The docstring's sequence written again row by row in plain Python (scalar floats,
    a fine grid instead of bisection): (low, high) before the settled bounds."""
    H, total = len(sizes), sum(s for s, m in zip(sizes, member) if m)
    rows = [t for t, h in enumerate(codes) if member[h]]

    def capital(mu, side):
        seen, found, best, log_k = [0] * H, [0] * H, 0.0, 0.0
        for t, h in enumerate(codes):
            if member[h]:
                left = [sizes[g] - seen[g] for g in range(H)]
                alive = [member[g] and left[g] > 0 for g in range(H)]
                z = sum(share[g] for g in range(H) if alive[g])
                pi = [share[g] / z if alive[g] else 0 for g in range(H)]
                c = [(found[g] + rates[g]) / (seen[g] + 1) for g in range(H)]
                w = [left[g] / total if member[g] else 0 for g in range(H)]
                base = sum(w[g] * c[g] for g in range(H))
                y = base + w[h] * (x[t] - c[h]) / pi[h]
                low = min(base - w[g] * c[g] / pi[g] for g in range(H) if alive[g])
                high = max(base + w[g] * (1 - c[g]) / pi[g] for g in range(H) if alive[g])
                v = sum(w[g] ** 2 * c[g] * (1 - c[g]) / pi[g] for g in range(H) if alive[g])
                lam = math.sqrt(2 * math.log(2 / alpha) / (v * horizon * sum(
                    share[g] for g in range(H) if member[g]) / sum(share)))
                m = mu - sum(found[g] for g in range(H) if member[g]) / total
                gap = (m - low) if side > 0 else (high - m)
                bet = min(lam, 0.75 / gap) if gap > 0 else lam
                log_k += math.log1p(side * bet * (y - m))
                best = max(best, log_k)
            seen[h] += 1
            found[h] += x[t]
        return best

    grid = np.linspace(0, 1, 2001)
    rejected_low = [mu for mu in grid if capital(mu, +1) >= math.log(2 / alpha)]
    rejected_high = [mu for mu in grid if capital(mu, -1) >= math.log(2 / alpha)]
    return (max(rejected_low, default=0.0), min(rejected_high, default=1.0))


def test_the_sequence_matches_a_row_by_row_rewrite_of_its_definition():
    sizes, K, share = np.array([300, 40, 20]), np.array([6, 8, 15]), np.array([0.6, 0.2, 0.2])
    codes, values = draw_reviews(sizes, K, share, 45, 1, seed=11)
    rates = [0.05, 0.5, 0.5]
    for member in ([True, True, True], [True, False, False]):
        b = sequence_bounds(codes[0], values[0], np.zeros(45), sizes, share, rates, member, 45)
        low, high = reference_bounds(codes[0].tolist(), values[0].tolist(), sizes.tolist(),
                                     share.tolist(), rates, member, 45)
        rows = np.asarray(member)[codes[0]]
        settled_low = values[0][rows].sum() / sizes[member].sum()
        # the grid brackets the bisection's bound within one step (1/2000)
        assert max(low, settled_low) <= float(b["low"]) <= max(low + 1 / 2000, settled_low)
        assert min(high - 1 / 2000, 1.0) <= float(b["high"]) <= high
        assert 0 < float(b["low"]) < float(b["high"]) < 1


# -- coverage at every stopping time ---------------------------------------------------------

POPULATIONS = [  # (N_h, wrong K_h, rows): the real tracker's shape, rare errors, a census
    ([3300, 300, 300], [70, 26, 270], 150),
    ([800, 200], [0, 3], 40),
    ([2000, 500, 100], [10, 150, 50], 80),
    ([30, 10], [2, 6], 40),
]


@pytest.mark.parametrize("population", POPULATIONS, ids=str)
def test_seeded_reviews_rarely_ever_exclude_the_true_rate(population):
    N, K, rows = (np.asarray(a) for a in population)
    rates = np.where(np.arange(len(N)) == 0, 0.05, 0.5)
    share = allocate(N, rates, int(rows), floor=min(10, int(rows) // len(N))) / rows
    out = simulate_sequence(N, K, share, rates, np.ones(len(N), bool), int(rows), draws=2000,
                            seed=7, at=(int(rows),))
    assert out["ever_excludes"] <= 0.05, out
    if rows == N.sum():  # a census: the interval is the rate itself
        assert out["at"][int(rows)]["half_width"] == 0


def test_the_coverage_test_fails_a_fixed_n_interval_looked_at_after_every_row():
    # the same reviews scored by the Korn-Graubard interval at every prefix (what a reviewer
    # who stops once it is narrow enough would quote): it excludes the true rate at some row
    # in far more than 5 % of reviews (16 %; 4 % at the last row alone), so the test above
    # can fail
    N, K, rows = np.array([3300, 300, 300]), np.array([70, 26, 270]), 400
    rates = np.array([0.05, 0.5, 0.5])
    share = allocate(N, rates, rows) / rows
    codes, values = draw_reviews(N, K, share, rows, 2000, seed=7)
    onehot = codes[..., None] == np.arange(3)
    n = np.cumsum(onehot, axis=1)
    x = np.cumsum(onehot * values[..., None], axis=1)
    kg = stratified_interval(np.broadcast_to(N, n.shape), n, x)
    truth = K.sum() / N.sum()
    with np.errstate(invalid="ignore"):
        outside = (kg["low"] > truth) | (kg["high"] < truth)
    assert outside.any(axis=1).mean() > 0.10 and outside[:, -1].mean() <= 0.05
    out = simulate_sequence(N, K, share, rates, np.ones(3, bool), rows, draws=2000, seed=7)
    assert out["ever_excludes"] <= 0.05


def test_the_interval_narrows_row_by_row():
    N, K, share = np.array([3300, 300, 300]), np.array([70, 26, 270]), np.array([0.7, 0.15, 0.15])
    codes, values = draw_reviews(N, K, share, 120, 1, seed=4)
    until = np.arange(120)
    args = (np.broadcast_to(codes, (120, 120)), np.broadcast_to(values, (120, 120)),
            np.zeros((120, 120)), N, share, [0.05, 0.5, 0.5], [True] * 3, 120)
    b = sequence_bounds(*args, until=until)
    assert np.all(np.diff(b["low"]) >= 0) and np.all(np.diff(b["high"]) <= 0)
    assert b["high"][-1] - b["low"][-1] < b["high"][10] - b["low"][10]


# -- the library function the review page calls ------------------------------------------------

def test_interval_so_far_is_the_estimates_interval(audited):
    draw_sample(audited, 30, seed=2)
    review = pd.read_csv(audited / "review.csv")
    review["decision"] = None
    review.loc[:14, "decision"] = "correct"
    review.to_csv(audited / "review.csv", index=False)
    design = json.loads((audited / "sample.json").read_text())
    decisions = review["decision"].fillna("").tolist()
    now = interval_so_far(design, decisions, target=0.2)
    result = estimate_error_rate(audited, target=0.2)
    for name in ("all", "certified"):
        for key in ("low", "high", "half_width", "target_met", "n_decided", "n_rows"):
            assert now[name][key] == result[name][key]
    assert now["all"]["n_decided"] == 15 and now["all"]["target_met"] == (
        now["all"]["half_width"] <= 0.2)
    with pytest.raises(ValueError, match="29 decisions for the 30 rows"):
        interval_so_far(design, decisions[:-1])
