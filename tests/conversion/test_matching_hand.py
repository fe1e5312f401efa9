"""Variable matching (EVALUATORS B4) by hand: the range cost at the constant-span edge,
the cost matrix with forced, forbidden and free pairs, weights and the fraction term,
the mean-cost threshold (< 1.0) and every field of the result. Embeddings are fixed
unit vectors, so cosines are known exactly."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.conversion.matching import (INPUT_WEIGHTS, OUTPUT_WEIGHTS, cost_matrix,
                                             match_variables, range_cost)

VECTORS = {"x": [1.0, 0.0], "y": [0.0, 1.0], "p": [0.0, 1.0], "q": [1.0, 0.0],
           "r": [-1.0, 0.0], "z": [np.nan, np.nan]}


def _embed(calls=None):
    def embed(names):
        if calls is not None:
            calls.append(list(names))
        return np.array([VECTORS[n] for n in names])
    return embed


def test_range_cost_at_the_constant_span_edge():
    # a span of exactly 1e-6 is not constant: deviation / 1e-6
    assert range_cost(np.array([[0, 1e-6]]), np.array([[0, 0]]))[0, 0] == 1.0
    assert range_cost(np.array([[5, 5]]), np.array([[0, 1e-6]]))[0, 0] == pytest.approx(5e6)
    assert range_cost(np.array([[5, 5]]), np.array([[0, 0]]))[0, 0] == 0.0  # both constant


def test_cost_matrix_forced_forbidden_and_free():
    # "a" is forced (row 0 -> column 1); rows 1, 2 and columns 0, 2 are free
    calls = []
    range_c = np.array([[9.0, 9.0, 9.0], [0.2, 9.0, 0.0], [0.0, 9.0, 0.4]])
    frac_c = np.zeros((3, 3))
    cost = cost_matrix(["a", "x", "y"], ["p", "a", "q"], range_c, frac_c, (1.0, 1.0, 0.0),
                       _embed(calls))
    assert calls == [["x", "y", "p", "q"]]
    inf = np.inf
    # weights normalised to (0.5, 0.5, 0): x-p cos 0, x-q cos 1, y-p cos 1, y-q cos 0
    assert cost.tolist() == [[inf, 0.0, inf], [0.5 + 0.1, inf, 0.0], [0.0, inf, 0.5 + 0.2]]
    # different counts: every pair infinite
    wide = cost_matrix(["a"], ["a", "b"], np.zeros((1, 2)), np.zeros((1, 2)), INPUT_WEIGHTS,
                       _embed())
    assert wide.shape == (1, 2) and np.isinf(wide).all()


def test_cost_matrix_duplicate_names_are_forced_in_order():
    calls = []
    cost = cost_matrix(["a", "a"], ["a", "a"], np.zeros((2, 2)), np.zeros((2, 2)),
                       INPUT_WEIGHTS, _embed(calls))
    assert cost.tolist() == [[0.0, np.inf], [np.inf, 0.0]] and calls == []


def test_output_cost_uses_the_output_weights_and_fractions():
    # x-q: cos 1, range 0.2, fractions [.5 .5] vs [1 0] -> L1 1.0:
    # 0.475 * 0 + 0.5 * 0.2 + 0.025 * 1.0 = 0.125; y-p: cos 1, range 0, same fractions: 0
    ref_r = np.array([[0.0, 1.0], [0.0, 1.0]])
    agent_r = np.array([[0.0, 1.0], [0.0, 1.2]])
    result = match_variables(["x", "y"], ["p", "q"], ref_r, agent_r, kind="output",
                             ref_fractions=[np.array([0.5, 0.5]), np.array([0.3, 0.7])],
                             agent_fractions=[np.array([0.7, 0.3]), np.array([1.0])],
                             embed=_embed())
    assert result["pairing"] == {0: 1, 1: 0}
    first, second = result["pairs"]
    assert set(first) == {"reference", "agent", "cost", "range_error", "reference_range",
                          "agent_range", "fraction_error", "ranges_equal"}
    assert (first["reference"], first["agent"]) == ("x", "q")
    assert first["cost"] == pytest.approx(0.5 * 0.2 + 0.025 * 1.0, rel=1e-12)
    assert first["range_error"] == pytest.approx(0.2) and first["fraction_error"] == 1.0
    assert first["reference_range"].tolist() == [0, 1] and first["agent_range"].tolist() == [0, 1.2]
    assert first["ranges_equal"] is False
    assert (second["agent"], second["cost"], second["fraction_error"]) == ("p", 0.0, 0.0)
    assert second["ranges_equal"] is True
    assert result["mean_cost"] == pytest.approx(0.0625, rel=1e-12)
    assert result["passed"] is False  # the x-q ranges differ
    assert {k: result[k] for k in ("threshold", "n_reference", "n_agent")} == \
        {"threshold": 1.0, "n_reference": 2, "n_agent": 2}
    assert "reason" not in result
    same = match_variables(["x"], ["q"], ref_r[:1], ref_r[:1], kind="output",
                           ref_fractions=[np.array([0.5, 0.5])],
                           agent_fractions=[np.array([0.5, 0.5])], embed=_embed())
    assert same["passed"] is True and same["pairs"][0]["ranges_equal"] is True
    assert same["mean_cost"] == 0.0
    assert OUTPUT_WEIGHTS == (0.475, 0.5, 0.025)


def test_input_pairs_have_no_fraction_fields():
    r = np.array([[0.0, 1.0]])
    result = match_variables(["x"], ["q"], r, r, kind="input", embed=_embed())
    assert set(result["pairs"][0]) == {"reference", "agent", "cost", "range_error",
                                       "reference_range", "agent_range"}


@pytest.mark.parametrize("agent, agent_range, mean, passed", [
    ("p", [0.0, 20.0], 1.0, False),      # cos 0, range 1: 0.95 + 0.05 = 1.0, not < 1.0
    ("p", [0.0, 18.0], 0.95 + 0.05 * 0.8, True),
    ("r", [0.0, 10.0], 0.95 * 2, False),  # cos -1
])
def test_mean_cost_threshold_is_strict(agent, agent_range, mean, passed):
    result = match_variables(["x"], [agent], np.array([[0.0, 10.0]]), np.array([agent_range]),
                             kind="input", embed=_embed())
    assert result["mean_cost"] == pytest.approx(mean, rel=1e-12)
    assert result["passed"] is passed
    assert INPUT_WEIGHTS == (0.95, 0.05, 0.0)


def test_incomplete_assignment_with_equal_counts():
    # the only free pair has a NaN embedding: it cannot be assigned
    r = np.array([[0.0, 1.0], [0.0, 1.0]])
    result = match_variables(["a", "z"], ["a", "p"], r, r, kind="input", embed=_embed())
    assert result["pairing"] == {0: 0}
    assert result["mean_cost"] is None and result["passed"] is False
    assert result["reason"] == "no complete one-to-one assignment"
    fewer = match_variables(["a", "b"], ["a"], r, r[:1], kind="input", embed=_embed())
    assert fewer["reason"] == "1 input variables, the reference has 2"
