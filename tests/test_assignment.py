"""The one Hungarian assignment (trackverify.assignment): gates, forbidden pairs, ties."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.assignment import assign


def pairs(rows, cols):
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


@pytest.mark.parametrize("gate, kept", [(2.0, True), (1.9999, False), (2.0001, True)])
def test_gate_is_inclusive_when_minimising(gate, kept):
    assert pairs(*assign(np.array([[2.0]]), gate=gate)) == ([(0, 0)] if kept else [])


@pytest.mark.parametrize("gate, kept", [(2.0, True), (2.0001, False), (1.9999, True)])
def test_gate_is_inclusive_when_maximising(gate, kept):
    assert pairs(*assign(np.array([[2.0]]), gate=gate, maximize=True)) == ([(0, 0)] if kept else [])


def test_forbidden_pairs_are_never_returned_and_more_pairs_win():
    # Without a gate the diagonal 0 + 15 beats 10 + 10. Gate 12 forbids (1, 1): then the
    # two pairs (0,1) + (1,0) = 20 beat the single pair (0,0), since a forbidden pair costs
    # more than any complete assignment can save.
    cost = np.array([[0.0, 10.0], [10.0, 15.0]])
    assert pairs(*assign(cost)) == [(0, 0), (1, 1)]
    assert pairs(*assign(cost, gate=12.0)) == [(0, 1), (1, 0)]
    assert pairs(*assign(cost, gate=15.0)) == [(0, 0), (1, 1)]  # the gate is inclusive
    assert pairs(*assign(np.array([[np.inf, 1.0], [np.nan, np.inf]]))) == [(0, 1)]
    assert pairs(*assign(np.full((2, 2), np.inf))) == []
    assert pairs(*assign(np.zeros((0, 3)))) == []


def test_maximising_with_a_gate():
    # overlaps: (0,0) 5, (0,1) 4, (1,0) 4, (1,1) 0; gate 1 forbids (1,1): 4 + 4 = 8 > 5
    cost = np.array([[5.0, 4.0], [4.0, 0.0]])
    assert pairs(*assign(cost, gate=1.0, maximize=True)) == [(0, 1), (1, 0)]
    assert pairs(*assign(cost, maximize=True)) == [(0, 1), (1, 0)]  # 8 > 5 + 0


def test_real_ties_take_the_first_minimum_and_rows_come_sorted():
    """Equal costs: a 1 x k row takes its first minimum, a k x 1 column its first row, a
    square of equal costs the diagonal (scipy's order; the engine's bulk path relies on it)."""
    assert pairs(*assign(np.array([[3.0, 1.0, 1.0]]))) == [(0, 1)]
    assert pairs(*assign(np.array([[2.0], [1.0], [1.0]]))) == [(1, 0)]
    assert pairs(*assign(np.ones((3, 3)))) == [(0, 0), (1, 1), (2, 2)]
    rows, cols = assign(np.array([[9.0, 0.0, 9.0], [0.0, 9.0, 9.0], [9.0, 9.0, 0.0]]))
    assert rows.tolist() == [0, 1, 2] and cols.tolist() == [1, 0, 2]
    assert rows.dtype == np.int64 and cols.dtype == np.int64


def test_one_row_with_one_forbidden_entry_keeps_the_allowed_one():
    """A single row: the forbidden entry must cost more than the allowed one (a penalty
    equal to it would tie, and the tie would pick the forbidden first column)."""
    assert pairs(*assign(np.array([[np.inf, 5.0]]))) == [(0, 1)]
    assert pairs(*assign(np.array([[1.0, 5.0]]), gate=3.0, maximize=True)) == [(0, 1)]
    assert pairs(*assign(np.array([[9.0], [5.0]]), gate=6.0)) == [(1, 0)]


def test_negative_costs_keep_the_forbidden_pairs_dearest():
    """The gated case above shifted by -100: (0,1) + (1,0) = -180 beat (0,0) alone (-100);
    the penalty is built from the spread max - min, never from max + min."""
    cost = np.array([[0.0, 10.0], [10.0, 15.0]]) - 100.0
    assert pairs(*assign(cost, gate=-88.0)) == [(0, 1), (1, 0)]
    # maximising: overlaps shifted by -100, (1, 1) below the gate
    overlap = np.array([[5.0, 4.0], [4.0, 0.0]]) - 100.0
    assert pairs(*assign(overlap, gate=-99.0, maximize=True)) == [(0, 1), (1, 0)]


def test_infinite_costs_are_forbidden_under_a_gate():
    # -inf passes "cost <= gate" and +inf passes "cost >= gate": both are still forbidden
    assert pairs(*assign(np.array([[-np.inf, 3.0], [2.0, 9.0]]), gate=5.0)) == [(0, 1), (1, 0)]
    assert pairs(*assign(np.array([[np.inf, 3.0], [2.0, 0.0]]), gate=1.0, maximize=True)) == \
        [(0, 1), (1, 0)]


def test_boolean_and_integer_matrices_are_costs():
    # True/False overlaps maximised as 1/0; integer costs minimised
    overlap = np.array([[False, True], [True, True]])
    assert pairs(*assign(overlap, gate=1.0, maximize=True)) == [(0, 1), (1, 0)]
    assert pairs(*assign(np.array([[3, 1], [1, 3]]))) == [(0, 1), (1, 0)]


def test_nothing_kept_is_int64_too():
    for rows, cols in (assign(np.zeros((0, 2))), assign(np.full((2, 2), np.nan)),
                       assign(np.array([[3.0]]), gate=1.0)):
        assert rows.dtype == np.int64 and cols.dtype == np.int64 and rows.size == cols.size == 0
