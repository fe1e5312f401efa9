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
