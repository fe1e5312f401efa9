"""The one definition of an integer setting or file value (trackverify.values.is_integer),
by hand: which values are integers, and the bounds, each inclusive, at and one past them."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.values import is_integer


@pytest.mark.parametrize("value", [0, 7, -3, 2**70, np.int64(4), np.int8(-1), np.uint8(255)])
def test_ints_and_numpy_integers_are_integers(value):
    assert is_integer(value) is True


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False), 2.0,
                                   np.float64(3.0), "2", b"2", None, [1], 1 + 0j])
def test_bools_floats_text_and_others_are_not(value):
    assert is_integer(value) is False


@pytest.mark.parametrize("value, low, high, expected", [
    (0, 0, None, True),     # low is inclusive
    (-1, 0, None, False),
    (5, 0, None, True),
    (1, 1, None, True),
    (0, 1, None, False),
    (9, None, 9, True),     # high is inclusive
    (10, None, 9, False),
    (-10**6, None, 9, True),  # no low bound
    (3, 1, 3, True),
    (4, 1, 3, False),
    (0, 1, 3, False),
    (np.int64(-1), 0, None, False),
    (np.int64(2), 0, 2, True),
])
def test_bounds(value, low, high, expected):
    assert is_integer(value, low, high) is expected


def test_a_bool_is_refused_whatever_the_bounds():
    # True == 1 and False == 0 compare inside any bound that holds 0 and 1
    assert not is_integer(True, 0, 1) and not is_integer(False, 0, 1)
    assert not is_integer(True, low=1) and not is_integer(False, high=0)
