"""The verifier protocol's plumbing (trackverify.verifiers): loading with options, the view a
verifier sees, the detection table it may take, the check of its scores, and the abstention
counts. Every expected value is written out by hand."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from tests.conftest import observation_table
from trackverify.errors import ConfigError
from trackverify.verifiers import (DETECTION_COLUMNS, RECORDED_OPTIONS, VERIFIER_COLUMNS,
                                   abstention_breakdown, add_counts, builtin_verifiers,
                                   load_verifier, recorded_options, run_verifier,
                                   takes_detections, verifier_class, verifier_view)
from trackverify.verifiers.fixed_distance import FixedDistance
from trackverify.verifiers.registered_distance import RegisteredDistance

HERE = "tests.test_verifier_protocol"


class Fixed:
    """Returns the scores it is given, whatever the table."""

    name = "fixed"
    evidence = "consistency"

    def __init__(self, scores=None):
        self.scores = scores

    def score(self, table):
        return self.scores


class WithOptions:
    name = "with_options"
    evidence = "independent"

    def __init__(self, ambiguity_k=1.0, other=None):
        self.ambiguity_k, self.other = ambiguity_k, other

    def score(self, table):
        return np.zeros(len(table))


class NeedsArgument:
    name = "needs"
    evidence = "independent"

    def __init__(self, required):
        self.required = required

    def score(self, table):
        return np.zeros(len(table))


class NoScore:
    name = "no_score"
    evidence = "independent"


class TakesDetections:
    name = "takes"
    evidence = "independent"

    def __init__(self):
        self.seen = []

    def score(self, table, detections=None):
        self.seen.append(detections)
        if detections is not None:
            detections["x_um"] = -1.0  # must not reach the caller's table
        return np.zeros(len(table))


class Vibes(Fixed):
    evidence = "vibes"


NOT_A_CLASS = 3.5


def test_builtin_verifiers_by_name():
    assert builtin_verifiers() == {"fixed_distance": FixedDistance,
                                   "registered_distance": RegisteredDistance}
    assert isinstance(load_verifier("fixed_distance"), FixedDistance)


def test_options_reach_only_the_parameters_the_constructor_declares():
    verifier = load_verifier(f"{HERE}:WithOptions", {"ambiguity_k": 2.5, "unknown": 1})
    assert (verifier.ambiguity_k, verifier.other) == (2.5, None)
    verifier = load_verifier(f"{HERE}:WithOptions", None)
    assert (verifier.ambiguity_k, verifier.other) == (1.0, None)
    # FixedDistance declares no parameter: the run's options are not passed to it
    assert isinstance(load_verifier("fixed_distance", {"ambiguity_k": 2.5}), FixedDistance)


def test_a_constructor_without_a_signature_gets_no_options():
    # inspect.signature(dict) raises ValueError: no option is passed, dict() is built, and
    # is no verifier
    with pytest.raises(ConfigError, match=r"^verifier 'builtins:dict' must have name, "
                                          r"evidence in \('independent', 'consistency'\) and "
                                          r"a score\(table\) method$"):
        load_verifier("builtins:dict", {"a": 1})


@pytest.mark.parametrize("spec, message", [
    ("nope", "unknown verifier 'nope'; built-in: ['fixed_distance', 'registered_distance'], "
             "or give module:Class"),
    (f"{HERE}:Missing", f"cannot load verifier '{HERE}:Missing': module '{HERE}' has no "
                        "attribute 'Missing'"),
    # module:Class splits at the first colon: the rest names the attribute
    (f"{HERE}:Fixed:x", f"cannot load verifier '{HERE}:Fixed:x': module '{HERE}' has no "
                        "attribute 'Fixed:x'"),
    ("no_such_module_xyz:X", "cannot load verifier 'no_such_module_xyz:X': No module named "
                             "'no_such_module_xyz'"),
    (f"{HERE}:NoScore", f"verifier '{HERE}:NoScore' must have name, evidence in "
                        "('independent', 'consistency') and a score(table) method"),
    (f"{HERE}:NOT_A_CLASS", f"verifier '{HERE}:NOT_A_CLASS' is a float, not a class"),
    (f"{HERE}:NeedsArgument", f"cannot construct verifier '{HERE}:NeedsArgument': "
                              "NeedsArgument.__init__() missing 1 required positional argument: "
                              "'required'"),
])
def test_bad_specs_name_the_spec(spec, message):
    with pytest.raises(ConfigError) as caught:
        load_verifier(spec)
    assert str(caught.value) == message


def test_bad_evidence_kind_is_refused_even_with_a_score_method():
    with pytest.raises(ConfigError, match=r"^verifier '.*:Vibes' must have name, evidence in"):
        load_verifier(f"{HERE}:Vibes")


def test_verifier_view_keeps_the_protocol_columns_in_protocol_order():
    table = observation_table(frames=1).assign(error=0, condition="c")
    table = table[["z_um", "track", "error", "pred_id", "frame", "x_um", "condition", "y_um",
                   "recording", "detection", "pred_valid"]]
    view = verifier_view(table)
    assert list(view.columns) == list(VERIFIER_COLUMNS)
    view.loc[0, "x_um"] = 99.0
    assert table.loc[0, "x_um"] == 0.0
    # a table without some columns: only those present
    assert list(verifier_view(table[["pred_id", "frame"]]).columns) == ["frame", "pred_id"]


def test_takes_detections_reads_the_score_signature():
    assert takes_detections(TakesDetections())
    assert not takes_detections(Fixed())
    assert not takes_detections(types.SimpleNamespace(score=5))  # not callable: no signature


def test_detections_reach_a_verifier_that_takes_them_as_a_copy_of_their_columns():
    table = observation_table(frames=1)
    detections = pd.DataFrame({"track": ["A", "B"], "z_um": [0.0, 0.5], "frame": [0, 0],
                               "x_um": [1.0, 2.0], "label": [1, 2], "detection": [0, 1],
                               "y_um": [3.0, 4.0]})
    before = detections.copy()
    verifier = TakesDetections()
    run_verifier(verifier, table, detections)
    seen = verifier.seen[-1]
    assert list(seen.columns) == list(DETECTION_COLUMNS)
    assert seen["z_um"].tolist() == [0.0, 0.5]
    pd.testing.assert_frame_equal(detections, before)
    run_verifier(verifier, table)
    assert verifier.seen[-1] is None


def test_scores_are_float_and_non_finite_ones_abstain():
    table = observation_table(tracks=("A",), frames=5)
    scores = run_verifier(Fixed([1, np.inf, -np.inf, np.nan, -2]), table)
    assert scores.dtype == np.float64
    np.testing.assert_array_equal(scores, [1.0, np.nan, np.nan, np.nan, -2.0])


@pytest.mark.parametrize("raw, message", [
    (np.zeros(3), "verifier 'fixed' returned 3 scores for 4 rows"),
    (np.zeros(5), "verifier 'fixed' returned 5 scores for 4 rows"),
    (np.zeros((4, 1)), "verifier 'fixed' returned an array of shape (4, 1), not one score per "
                       "row (4 rows)"),
    (0.0, "verifier 'fixed' returned an array of shape (), not one score per row (4 rows)"),
    (["a", "b", "c", "d"], "verifier 'fixed' returned scores that are not numbers (could not "
                           "convert string to float: 'a')"),
])
def test_scores_not_one_number_per_row_are_refused(raw, message):
    with pytest.raises(ConfigError) as caught:
        run_verifier(Fixed(raw), observation_table(frames=1))
    assert str(caught.value) == message


class Record:
    def __init__(self, **counts):
        self.__dict__.update(counts)


def test_abstention_breakdown_reports_the_last_record():
    assert abstention_breakdown(Fixed()) is None  # no abstentions attribute
    verifier = Fixed()
    verifier.abstentions = []
    assert abstention_breakdown(verifier) is None  # no score call yet
    verifier.abstentions = [Record(ambiguous=9, missing_evidence=9, contradicted=9),
                            Record(ambiguous=8, missing_evidence=8, contradicted=8),
                            Record(ambiguous=np.int64(2), missing_evidence=0,
                                   contradicted=np.int32(1), merged=np.int16(4))]
    out = abstention_breakdown(verifier)
    assert out == {"ambiguous": 2, "missing_evidence": 0, "contradicted": 1, "merged": 4}
    assert all(type(v) is int for v in out.values())


def test_abstention_breakdown_leaves_a_count_the_record_does_not_carry_undefined():
    verifier = Fixed()
    verifier.abstentions = [Record(ambiguous=3, missing_evidence=None)]
    assert abstention_breakdown(verifier) == {"ambiguous": 3, "missing_evidence": None,
                                              "contradicted": None, "merged": None}


def test_add_counts_is_undefined_if_any_count_is():
    assert add_counts(iter([1, np.int64(2), 3])) == 6  # a generator, read once
    assert type(add_counts([np.int64(2), np.int64(3)])) is int
    assert add_counts([]) == 0
    assert add_counts(iter([1, None, 2])) is None
    assert add_counts([None]) is None


def test_the_recorded_options_and_the_attributes_that_hold_them():
    assert RECORDED_OPTIONS == {"ambiguity_k": "ambiguity_k", "score": "score_kind",
                                "track_window": "track_window", "merge_k": "merge_k"}


def test_recorded_options_are_those_the_verifier_carries_by_recorded_name():
    assert recorded_options(FixedDistance()) == {}
    assert recorded_options(WithOptions(ambiguity_k=0.5)) == {"ambiguity_k": 0.5}
    carrier = types.SimpleNamespace(score_kind="relative", track_window=3, other=1)
    assert recorded_options(carrier) == {"score": "relative", "track_window": 3}
    # an attribute holding None is carried (recorded as null), not dropped
    assert recorded_options(types.SimpleNamespace(track_window=None)) == {"track_window": None}
    registered = RegisteredDistance(ambiguity_k=0.25, score="relative", track_window=2,
                                    merge_k=1.5)
    assert recorded_options(registered) == {"ambiguity_k": 0.25, "score": "relative",
                                            "track_window": 2, "merge_k": 1.5}


def test_verifier_class_finds_the_class_without_constructing_it():
    assert verifier_class("registered_distance") is RegisteredDistance
    found = verifier_class(f"{HERE}:NeedsArgument")  # a class that cannot be built bare
    assert isinstance(found, type) and (found.__module__, found.__name__) == (HERE, "NeedsArgument")
    with pytest.raises(ConfigError, match=r"^cannot load verifier 'no_such_module_xyz:X': "):
        verifier_class("no_such_module_xyz:X")
    with pytest.raises(ConfigError, match=r"^unknown verifier 'nope'; "):
        verifier_class("nope")
