"""The one definition of an integer and of a real setting or file value
(trackverify.values.is_integer, is_real), by hand: which values are integers / real numbers,
and the bounds, each inclusive (is_real's low exclusive when strict), at and one past them."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from trackverify.values import is_integer, is_real


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


# ----- is_real: a real number (an integer or a float), not a bool -----

@pytest.mark.parametrize("value", [0, -3, 2**70, 10**400, np.int64(4), np.uint8(255), 0.0, -2.5,
                                   5e-324, 1.7976931348623157e308, np.float64(0.5),
                                   np.float32(0.5), np.float16(-1.0)])
def test_ints_floats_and_their_numpy_types_are_real(value):
    # 10 ** 400: an integer is finite, even past the float range
    assert is_real(value) is True


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False), "2.5", b"1",
                                   None, [1.0], 1 + 0j, np.complex128(1), Fraction(1, 2),
                                   Decimal("1.5")])
def test_bools_text_complex_and_other_number_types_are_not_real(value):
    assert is_real(value) is False
    assert is_real(value, finite=False) is False


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), np.float64("nan"),
                                   np.float32("inf"), -np.inf])
def test_nan_and_infinities_are_real_only_when_not_asked_finite(value):
    assert is_real(value) is False
    assert is_real(value, finite=False) is True


@pytest.mark.parametrize("value, low, high, strict, expected", [
    (0.0, 0.0, None, False, True),     # low is inclusive
    (-5e-324, 0.0, None, False, False),  # one float below
    (0.0, 0.0, None, True, False),     # strict: low itself is outside
    (5e-324, 0.0, None, True, True),   # one float above
    (0, 0, None, True, False),
    (1, 0, None, True, True),
    (1.0, None, 1.0, False, True),     # high is inclusive
    (1.0000000000000002, None, 1.0, False, False),
    (1.0, None, 1.0, True, True),      # strict bounds low only
    (-10.0**300, None, 1.0, False, True),  # no low bound
    (10**400, None, 10.0**308, False, False),  # an integer past the float range
    (0.5, 0, 1, False, True),
    (np.float32(1.5), 0, 1, False, False),
    (np.int64(-1), 0, None, False, False),
])
def test_real_bounds(value, low, high, strict, expected):
    assert is_real(value, low, high, strict=strict) is expected


def test_nan_fails_every_bound_and_infinities_the_bound_on_their_side():
    nan, inf = float("nan"), float("inf")
    assert not is_real(nan, low=0, finite=False) and not is_real(nan, high=0, finite=False)
    assert is_real(inf, low=0, finite=False) and not is_real(inf, high=0, finite=False)
    assert is_real(-inf, high=0, finite=False) and not is_real(-inf, low=0, finite=False)


def test_a_bool_is_not_real_whatever_the_bounds():
    assert not is_real(True, 0, 1) and not is_real(False, 0, 1, finite=False)
    assert not is_real(True, low=0, strict=True)


def test_low_is_inclusive_unless_asked_strict():
    assert is_real(0.0, 0.0) is True and is_real(0, low=0) is True
    assert is_real(0.0, 0.0, strict=True) is False


@pytest.mark.parametrize("value, expected", [
    (10**400, False), (-(10**400), False),  # past the float range: float() would overflow
    (2**1023, True), (int(1.7976931348623157e308), True),  # the largest float, as an integer
    (int(1.7976931348623157e308) + 1, False), (1.7976931348623157e308, True), (np.float32(3), True),
])
def test_float_range_refuses_integers_a_float_cannot_hold(value, expected):
    assert is_real(value, float_range=True) is expected
    assert is_real(value) is True  # without it every integer is a finite real
