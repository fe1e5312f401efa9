"""Intervals by animal (trackverify.benchmark.intervals) on cases small enough to follow by hand.

The replicate draws are the ones the module docstring defines (``I =
Generator(PCG64(seed)).integers(0, K, size=(B, K))``); here they are drawn with numpy
directly and the rates and quantiles written out from them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import ConfigError, InputError
from trackverify.benchmark.intervals import (DEFAULT_LEVEL, DEFAULT_REPLICATES, DEFAULT_SEED, METHOD,
                                   MIN_ANIMALS, animal_bootstrap_interval,
                                   rate_interval_by_animal)


def draws(seed, replicates, k):
    return np.random.Generator(np.random.PCG64(seed)).integers(0, k, size=(replicates, k))


def test_defaults():
    assert (DEFAULT_REPLICATES, DEFAULT_LEVEL, MIN_ANIMALS, DEFAULT_SEED) == (2000, 0.95, 5, 20261007)
    assert METHOD == "cluster bootstrap over animals (percentile)"


def test_three_replicates_written_out():
    # 5 animals: numerators 0..4, denominators 1, 2, 3, 4, 5 (rate of animal j: j / (j + 1)).
    n, d = [0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0]
    out = animal_bootstrap_interval(n, d, seed=7, replicates=3, level=0.5)
    drawn = draws(7, 3, 5)
    rates = sorted(drawn[b].sum() / (drawn[b] + 1).sum() for b in range(3))
    # level 0.5: the 0.25 and 0.75 quantiles of three sorted values r0 <= r1 <= r2, linear
    # interpolation at positions 0.25 * 2 = 0.5 and 0.75 * 2 = 1.5.
    lo = rates[0] + 0.5 * (rates[1] - rates[0])
    hi = rates[1] + 0.5 * (rates[2] - rates[1])
    assert out["ci"] == pytest.approx([lo, hi], abs=1e-15)
    assert out == {"estimate": 10 / 15, "ci": out["ci"], "level": 0.5, "method": METHOD,
                   "animals": 5, "replicates": 3, "undefined_replicates": 0, "seed": 7,
                   "reason": None}
    assert isinstance(out["ci"][0], float) and isinstance(out["undefined_replicates"], int)


def test_one_replicate_is_a_point_and_the_default_seed_is_used():
    n, d = [1.0, 0.0, 2.0, 0.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]
    drawn = draws(DEFAULT_SEED, 1, 5)[0]
    rate = np.take(n, drawn).sum() / np.take(d, drawn).sum()
    out = animal_bootstrap_interval(n, d, replicates=1)
    assert out["ci"] == [rate, rate] and out["seed"] == DEFAULT_SEED
    assert out["level"] == 0.95 and out["replicates"] == 1


def test_undefined_replicates_are_dropped_and_counted():
    # Only animal 2 has rows (rate 3 / 4); a replicate that never draws it has 0 / 0.
    n, d = [0.0, 0.0, 3.0, 0.0, 0.0], [0.0, 0.0, 4.0, 0.0, 0.0]
    out = animal_bootstrap_interval(n, d, seed=3, replicates=50)
    missing = int((~(draws(3, 50, 5) == 2).any(axis=1)).sum())
    assert 0 < missing < 50  # (4/5)^5 = 0.33 of the replicates miss it
    assert out["undefined_replicates"] == missing
    assert out["ci"] == [0.75, 0.75] and out["estimate"] == 0.75


def test_no_defined_replicate_and_no_estimate():
    out = animal_bootstrap_interval([0.0] * 5, [0.0] * 5, seed=1, replicates=4)
    assert out["estimate"] is None and out["ci"] is None
    assert out["undefined_replicates"] == 4
    assert out["reason"] == "every bootstrap replicate has a zero denominator"


@pytest.mark.parametrize("animals, has_ci", [(4, False), (5, True), (6, True)])
def test_min_animals_boundary(animals, has_ci):
    out = animal_bootstrap_interval([1.0] * animals, [2.0] * animals, replicates=10)
    assert (out["ci"] is not None) == has_ci
    if has_ci:
        assert out["ci"] == [0.5, 0.5] and out["reason"] is None
        assert out["undefined_replicates"] == 0
    else:
        assert out["undefined_replicates"] is None
        assert out["reason"] == ("4 animal(s) in the evaluated set; intervals by experimental "
                                 "unit need at least 5 animals (frames are never resampled)")


def test_min_animals_is_an_option():
    out = animal_bootstrap_interval([1.0, 3.0], [2.0, 4.0], min_animals=2, replicates=5)
    assert out["ci"] is not None and out["estimate"] == pytest.approx(4 / 6)
    refused = animal_bootstrap_interval([1.0] * 5, [2.0] * 5, min_animals=6)
    assert refused["ci"] is None and "need at least 6 animals" in refused["reason"]


@pytest.mark.parametrize("level, ok", [(0.0, False), (1.0, False), (1e-9, True),
                                       (1 - 1e-9, True), (-0.5, False)])
def test_level_is_open_at_both_ends(level, ok):
    args = ([1.0] * 5, [2.0] * 5)
    if ok:
        assert animal_bootstrap_interval(*args, level=level, replicates=2)["level"] == level
    else:
        with pytest.raises(ConfigError, match=f"^interval level {level} must be in \\(0, 1\\)$"):
            animal_bootstrap_interval(*args, level=level)


def test_replicates_at_least_one():
    with pytest.raises(ConfigError, match=r"^bootstrap replicates 0 must be >= 1$"):
        animal_bootstrap_interval([1.0] * 5, [2.0] * 5, replicates=0)


@pytest.mark.parametrize("n, d", [([1.0, np.nan], [1.0, 1.0]), ([1.0, 1.0], [np.inf, 1.0]),
                                  ([-1.0, 1.0], [1.0, 1.0]), ([1.0, 1.0], [1.0, -0.5])])
def test_counts_must_be_finite_and_not_negative(n, d):
    with pytest.raises(InputError, match="^numerators and denominators must be finite and >= 0$"):
        animal_bootstrap_interval(n, d)


def test_lengths_must_agree():
    with pytest.raises(InputError, match=r"differ in length: \(2,\) vs \(3,\)"):
        animal_bootstrap_interval([1.0, 2.0], [1.0, 2.0, 3.0])


def test_zero_counts_are_allowed():
    out = animal_bootstrap_interval([0.0] * 5, [1.0] * 5, replicates=3)
    assert out["estimate"] == 0.0 and out["ci"] == [0.0, 0.0]


def test_rows_are_summed_per_animal_in_sorted_animal_order():
    # Rows of animals listed out of order; the bootstrap sees the animals sorted by id
    # (a, b, c, d, e), each with its summed numerator and its summed denominator column.
    rows = pd.DataFrame({
        "animal_id": ["c", "a", "e", "b", "d", "a", "c", "e"],
        "n": [1.0, 2.0, 0.0, 1.0, 3.0, 1.0, np.nan, 1.0],
        "w": [2.0, 3.0, 1.0, 2.0, 4.0, 2.0, 9.0, 1.0],
    })
    # a: n 2 + 1 = 3, w 3 + 2 = 5; b: 1, 2; c: 1, 2 (the NaN row counts nowhere);
    # d: 3, 4; e: 0 + 1 = 1, 1 + 1 = 2
    expected = animal_bootstrap_interval([3, 1, 1, 3, 1], [5, 2, 2, 4, 2], seed=5, replicates=7)
    got = rate_interval_by_animal(rows, "n", "w", seed=5, replicates=7)
    assert got == expected and got["estimate"] == 9 / 15
    # without a denominator column each counted row weighs 1: a 2 rows, b 1, c 1, d 1, e 2
    expected = animal_bootstrap_interval([3, 1, 1, 3, 1], [2, 1, 1, 1, 2], seed=5, replicates=7)
    assert rate_interval_by_animal(rows, "n", seed=5, replicates=7) == expected
    # another animal column name
    renamed = rows.rename(columns={"animal_id": "mouse"})
    assert rate_interval_by_animal(renamed, "n", animal="mouse", seed=5, replicates=7) == expected


def test_rate_interval_errors_name_the_column_and_row():
    rows = pd.DataFrame({"animal_id": ["a", None, "b"], "n": [1.0, 0.0, 1.0]})
    with pytest.raises(InputError) as raised:
        rate_interval_by_animal(rows, "n")
    assert (raised.value.column, raised.value.row) == ("animal_id", 2)
    assert str(raised.value) == "column 'animal_id', row 2: missing animal id"
    for missing in ("animal_id", "n", "w"):
        table = rows.drop(columns=[missing]) if missing in rows else rows
        with pytest.raises(InputError, match=f"the table has no '{missing}' column") as raised:
            rate_interval_by_animal(table, "n", "w" if missing == "w" else None)
        assert raised.value.column == missing


def test_no_rows_no_animals():
    out = rate_interval_by_animal(pd.DataFrame({"animal_id": [], "n": []}), "n")
    assert (out["animals"], out["estimate"], out["ci"]) == (0, None, None)


def test_a_none_count_is_refused_as_not_finite():
    with pytest.raises(InputError, match="^numerators and denominators must be finite and >= 0$"):
        animal_bootstrap_interval([1, None, 2, 3, 4], [1, 1, 1, 1, 1])
    with pytest.raises(InputError, match="^numerators and denominators must be finite and >= 0$"):
        animal_bootstrap_interval([1, 1, 2, 3, 4], [1, 1, None, 1, 1])


def test_integer_counts_are_counts():
    out = animal_bootstrap_interval([1, 0, 2, 0, 1], [2, 1, 4, 3, 5], seed=2, replicates=9)
    assert out == animal_bootstrap_interval([1.0, 0.0, 2.0, 0.0, 1.0], [2.0, 1.0, 4.0, 3.0, 5.0],
                                            seed=2, replicates=9)
    assert out["estimate"] == 4 / 15


def test_denominators_below_one_are_defined():
    # the pooled denominator 1 (> 0) has an estimate; fractional denominators are rates too
    one = animal_bootstrap_interval([1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0],
                                    seed=3, replicates=50)
    assert one["estimate"] == 1.0
    # a replicate is defined when its drawn denominators sum above 0: drawing animal 0 once
    # (denominator 1) is enough
    missing = int((~(draws(3, 50, 5) == 0).any(axis=1)).sum())
    assert one["undefined_replicates"] == missing and one["ci"] == [1.0, 1.0]
    half = animal_bootstrap_interval([0.25] * 5, [0.5] * 5, replicates=4)
    assert half["estimate"] == 0.5 and half["ci"] == [0.5, 0.5]


def test_an_animal_with_no_counted_row_is_still_an_animal():
    # e's only row has no numerator: e is the fifth animal, with 0 / 0 (sorted last)
    rows = pd.DataFrame({"animal_id": ["a", "b", "c", "d", "e"],
                         "n": [1.0, 0.0, 1.0, 1.0, np.nan]})
    out = rate_interval_by_animal(rows, "n", seed=4, replicates=6)
    assert out == animal_bootstrap_interval([1, 0, 1, 1, 0], [1, 1, 1, 1, 0], seed=4, replicates=6)
    assert out["animals"] == 5 and out["ci"] is not None


def test_text_and_nullable_flags_are_read_as_numbers():
    # "n/a" text and pandas' missing boolean are not counted; True is 1, False 0
    rows = pd.DataFrame({"animal_id": list("aabcde"),
                         "n": pd.array([True, None, False, True, True, False], dtype="boolean"),
                         "text": ["1", "n/a", "0", "1", "1", "0"],
                         "w": ["2", "x", "1", "1", "1", "1"]})
    expected = animal_bootstrap_interval([1, 0, 1, 1, 0], [1, 1, 1, 1, 1], seed=1, replicates=5)
    assert rate_interval_by_animal(rows, "n", seed=1, replicates=5) == expected
    assert rate_interval_by_animal(rows, "text", seed=1, replicates=5) == expected
    weighted = animal_bootstrap_interval([1, 0, 1, 1, 0], [2, 1, 1, 1, 1], seed=1, replicates=5)
    assert rate_interval_by_animal(rows, "text", "w", seed=1, replicates=5) == weighted
    # a nullable flag as the denominator, missing on a counted row: not finite, refused
    rows["flag"] = pd.array([True, True, None, True, True, True], dtype="boolean")
    with pytest.raises(InputError) as raised:
        rate_interval_by_animal(rows, "text", "flag")
    # row 3 ("0", animal b) is counted and its flag is missing
    assert str(raised.value) == "column 'flag', row 3: '<NA>' is not a finite count >= 0"


@pytest.mark.parametrize("n, w, column, row, shown", [
    ([1.0, -1.0, 1.0], None, "n", 2, "-1.0"),
    ([1.0, 1.0, np.inf], None, "n", 3, "inf"),
    ([1.0, 1.0, 1.0], [1.0, 2.0, -0.5], "w", 3, "-0.5"),
    ([1.0, 1.0, 1.0], [1.0, np.nan, 1.0], "w", 2, "nan"),
])
def test_bad_counts_are_an_input_error_naming_the_column_and_row(n, w, column, row, shown):
    rows = pd.DataFrame({"animal_id": ["a", "b", "c"], "n": n})
    if w is not None:
        rows["w"] = w
    with pytest.raises(InputError) as raised:
        rate_interval_by_animal(rows, "n", "w" if w is not None else None)
    assert str(raised.value) == f"column '{column}', row {row}: '{shown}' is not a finite count >= 0"


def test_a_bad_denominator_on_an_uncounted_row_is_not_read():
    # row 2 has no numerator, so its negative weight counts nowhere: a, c are 1 / 1 each
    rows = pd.DataFrame({"animal_id": ["a", "b", "c"], "n": [1.0, np.nan, 1.0],
                         "w": [1.0, -3.0, 1.0]})
    out = rate_interval_by_animal(rows, "n", "w", min_animals=1, replicates=2)
    assert out["estimate"] == 2 / 2
