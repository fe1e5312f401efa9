"""The coding helpers of trackverify.tables against independent references (pandas, numpy)."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from trackverify.tables import _empty_text, dense_ranks, single_value, sorted_codes, unique_inverse


def _arrow_text(*chunks, large=True):
    kind = pa.large_string() if large else pa.string()
    return pd.Series(pd.array(pa.chunked_array([pa.array(c, kind) for c in chunks]),
                              dtype=pd.StringDtype("pyarrow")))


@pytest.mark.parametrize("series, expected", [
    (pd.Series(["s"] * 1000), True),
    (pd.Series(["rec-1"] * 7), True),
    (pd.Series(["é"] * 4), True),  # two bytes per row
    (pd.Series(["", ""]), True),
    (pd.Series(["ab", "ba", "ab"]), False),  # same lengths, other bytes
    (pd.Series(["a", "aa", "a"]), False),  # first and last equal, other lengths
    (pd.Series(["ab", "a", "ba"]), False),  # the bytes "ab" "a" "ba" are not "ab" * 3 either
    (pd.Series(["ab", "a", "b", "ab"]), False),  # bytes "ababab" = "ab" * 3, offsets uneven
    (pd.Series(["x", "y", "x"] * 3).iloc[[0, 2, 3, 5, 6, 8]], True),  # a selection of rows
    (pd.Series(["x"] * 10).iloc[3:], True),  # a slice: the buffers start past the first row
    (_arrow_text(["q", "q"], ["q", "q", "q"]), True),  # two chunks
    (_arrow_text(["q", "q"], ["q", "r", "q"]), False),
    (_arrow_text([], ["q", "r", "q"]), False),  # an empty first chunk: the others still read
    (_arrow_text([], ["q"], [], ["q"]), True),
    (_arrow_text(["xy", "xy"], ["xy"], large=False), True),  # 32-bit offsets
    (_arrow_text(["xy", "x"], ["yx", "xy"], large=False), False),
    (pd.Series(["a", None, "a"]), False),  # nulls: never one value
    (pd.Series(["a", "a"], dtype=object), True),
    (pd.Series(["a", "b"], dtype=object), False),
    (pd.Series(["r", "r"], dtype=pd.StringDtype("python")), True),
    (pd.Series([1, 1]), False),  # not text
])
def test_single_value_is_one_text_value_in_every_row(series, expected):
    assert single_value(series) is expected


@pytest.mark.parametrize("series", [
    pd.Series(["a", "", "bc", ""]),
    pd.Series(["a", None, "", None, "b"]),  # a null is not empty (its offsets are equal too)
    pd.Series(["", "x"] * 5).iloc[3:],  # a slice: the offsets start past the first row
    _arrow_text(["a", ""], [], ["", "b"], large=False),  # chunks, 32-bit offsets, one empty
    _arrow_text([None, ""], ["c"]),
    pd.Series(["a", "", None], dtype=pd.StringDtype("python")),  # not Arrow: by lengths
    pd.Series(["x", "y"]),
])
def test_empty_text_equals_pandas_lengths(series):
    want = (series.astype(object).map(lambda v: isinstance(v, str) and len(v) == 0)).to_numpy(bool)
    np.testing.assert_array_equal(_empty_text(series), want)


@pytest.mark.parametrize("values, counted", [
    (pd.Series([5, 3, 3, 9, 5], dtype=np.int64), True),
    (pd.Series([5, 3, 3, 9], dtype=np.uint8), True),
    (pd.Series([2, 0, 1, 1, 2]), True),  # codes already: every value of 0..2 present
    (pd.Series([-1, 4, 2, 4]), False),  # negative: factorised
    (pd.Series([10 ** 12, 7, 7]), False),  # far beyond the counting range
    (pd.Series(["b", "a", "b"]), False),
    (pd.Series(["b", "a", "b"], dtype=object), False),
    (pd.Series([5, None, 3, 5], dtype="Int64").iloc[[0, 2, 3]], False),
    (np.array([7, 3, 7, 7], dtype=np.uint64), True),  # arrays as well as columns
    (np.array([1, 0, 1]), True),
    ([30, 10, 30], True),
    (["y", "x", "y"], False),
    (np.array([-5, 2, -5]), False),
])
def test_sorted_codes_equal_pandas_factorize_sorted(values, counted):
    codes, uniques, counts = sorted_codes(values)
    want_codes, want_uniques = pd.factorize(values if isinstance(values, pd.Series)
                                            else np.asarray(values), sort=True)
    np.testing.assert_array_equal(codes, want_codes)
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(uniques), np.asarray(want_uniques))
    if isinstance(values, pd.Series):
        assert uniques.equals(want_uniques) and uniques.dtype == want_uniques.dtype
    if counted:  # occurrences of each distinct value, in sorted order
        np.testing.assert_array_equal(counts, np.bincount(want_codes))
    else:
        assert counts is None


def test_sorted_codes_never_write_into_the_values():
    values = np.array([1, 0, 2, 1])  # codes already: the codes may be the values themselves
    before = values.copy()
    codes, _, _ = sorted_codes(values)
    np.testing.assert_array_equal(values, before)
    np.testing.assert_array_equal(codes, [1, 0, 2, 1])


@pytest.mark.parametrize("n, span", [(0, 10), (5, 10), (2000, 300), (3000, 200000)])
def test_unique_inverse_and_dense_ranks_equal_numpy_unique(n, span):
    values = np.random.default_rng(n).integers(0, span, n)
    present, ranks = unique_inverse(values, span)
    want_present, want_ranks = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(present, want_present)
    np.testing.assert_array_equal(ranks, want_ranks)
    assert ranks.dtype == np.int64


def test_dense_ranks_by_hand():
    present = np.array([False, True, True, False, True])
    assert dense_ranks(present, np.array([4, 1, 2, 4])).tolist() == [2, 0, 1, 2]
