"""Verifier protocol and the fixed-reference-distance verifier (SPEC section 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import observation_table
from trackverify.errors import ConfigError
from trackverify.verifiers import VERIFIER_COLUMNS, load_verifier, run_verifier
from trackverify.verifiers.fixed_distance import FixedDistance


def test_fixed_distance_hand_computed():
    df = observation_table(frames=3)  # A, B, C, D at x = 0, 10, 20, 30
    df.loc[(df["frame"] == 2) & (df["track"] == "A"), "x_um"] = 3.0  # A moved 3 um
    df.loc[(df["frame"] == 1) & (df["track"] == "B"), "pred_id"] = "pC"  # B carries C's id
    df.loc[(df["frame"] == 1) & (df["track"] == "D"), "pred_valid"] = False
    df.loc[(df["frame"] == 2) & (df["track"] == "C"), "pred_id"] = "new"
    scores = FixedDistance().score(df)
    by = df.assign(score=scores).set_index(["frame", "track"])["score"]
    assert by[(0, "A")] == 0.0
    assert by[(2, "A")] == pytest.approx(3.0)
    assert by[(1, "B")] == pytest.approx(10.0)  # B at x=10, anchor of pC at x=20
    assert np.isnan(by[(1, "D")])  # invalid -> abstain
    assert np.isnan(by[(2, "C")])  # id without anchor -> abstain


def test_fixed_distance_2d():
    df = observation_table(frames=2).drop(columns=["z_um"])
    df.loc[(df["frame"] == 1) & (df["track"] == "A"), ["x_um", "y_um"]] = [3.0, 4.0]
    scores = FixedDistance().score(df)
    assert scores[4] == pytest.approx(5.0)


class SpyVerifier:
    name = "spy"
    evidence = "independent"
    seen: list = []

    def score(self, table):
        SpyVerifier.seen.append(list(table.columns))
        table["x_um"] = -1.0  # must not reach the caller's table
        return np.zeros(len(table))


def test_verifier_sees_no_labels_and_cannot_alter_the_table():
    df = observation_table(frames=2).assign(error=0, condition="control", is_control=True)
    before = df.copy()
    run_verifier(SpyVerifier(), df)
    assert set(SpyVerifier.seen[-1]) <= set(VERIFIER_COLUMNS)
    assert not {"track", "error", "condition", "is_control"} & set(SpyVerifier.seen[-1])
    pd.testing.assert_frame_equal(df, before)


def test_load_plugin_by_module_and_class():
    verifier = load_verifier("tests.test_verifiers:SpyVerifier")
    assert verifier.name == "spy" and verifier.evidence == "independent"


class NoEvidence:
    name = "bad"
    evidence = "vibes"

    def score(self, table):
        return np.zeros(len(table))


class WrongLength:
    name = "short"
    evidence = "consistency"

    def score(self, table):
        return np.zeros(1)


@pytest.mark.parametrize("spec", ["nope", "tests.test_verifiers:Missing", "no.such.module:X",
                                  "tests.test_verifiers:NoEvidence"])
def test_bad_verifier_specs(spec):
    with pytest.raises(ConfigError):
        load_verifier(spec)


def test_wrong_number_of_scores():
    with pytest.raises(ConfigError, match="returned 1 scores"):
        run_verifier(WrongLength(), observation_table(frames=2))


def consistency_table(moved: list[float], still: int) -> pd.DataFrame:
    """Tracks at the origin in frame 0; in frame 1 track i moves moved[i] um along x, and
    ``still`` more tracks do not move."""
    n = len(moved) + still
    shift = np.r_[moved, np.zeros(still)]
    return pd.DataFrame({"frame": np.repeat([0, 1], n), "track": np.tile(np.arange(n), 2),
                         "x_um": np.r_[np.zeros(n), shift], "y_um": 0.0, "z_um": 0.0})


@pytest.mark.parametrize("moved, share, verdict", [
    ([5.0, 5.0, 5.0], None, "supported"),        # exactly at the threshold: not beyond it
    ([5.001, 5.001], 2 / 40, "supported"),       # 2 of 40 rows = 5 % = the share: not more
    ([5.001, 5.001, 5.001], 3 / 40, "falsified"),
    ([4.999, 5.001], 1 / 40, "supported"),
])
def test_deformation_hypothesis_at_its_boundaries(moved, share, verdict):
    """40 rows (20 tracks x 2 frames); threshold 5 um, falsification share 5 %."""
    from trackverify.benchmark.protocols.anatomical_consistency import consistency

    out = consistency(consistency_table(moved, 20 - len(moved)), threshold=5.0, share=0.05)
    assert out["share_exceeding_threshold"] == (share or 0.0)
    assert out["deformation_hypothesis"] == verdict
    assert out["measured_observations"] == 40


def test_fixed_distance_accepts_a_distance_equal_to_the_threshold():
    from trackverify.benchmark.selective import certification_metrics

    df = observation_table(frames=2)
    df.loc[(df["frame"] == 1) & (df["track"] == "A"), "x_um"] = 5.0     # 5 um from its anchor
    df.loc[(df["frame"] == 1) & (df["track"] == "B"), "x_um"] = 15.0001  # just beyond
    score = FixedDistance().score(df)
    assert score[4] == 5.0
    m = certification_metrics(np.zeros(len(df)), score, threshold=5.0)
    assert m["n_accepted"] == 7  # every row but B's in frame 1


def test_distance_to_anchor_by_hand():
    """Keys a, b, c: a has one anchor row, b two (no single anchor position: NaN), c none.
    Without ``rows`` every row takes part; with ``rows`` an excluded anchor row is no anchor."""
    from trackverify.anchors import distance_to_anchor

    table = pd.DataFrame({"frame": [0, 0, 0, 1, 1, 1, 1],
                          "key": ["a", "b", "b", "a", "b", "c", "a"],
                          "x_um": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0],
                          "y_um": [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 1.0],
                          "z_um": 0.0})
    d = distance_to_anchor(table, "key")
    np.testing.assert_array_equal(d, [0.0, np.nan, np.nan, 5.0, np.nan, np.nan, 1.0])
    rows = np.array([True, True, False, True, True, False, False])  # b's second anchor left out
    d = distance_to_anchor(table, "key", rows)
    np.testing.assert_array_equal(d, [0.0, 0.0, np.nan, 5.0, 3.0, np.nan, np.nan])
    no_anchor = np.array([False, True, True, True, True, True, True])
    assert np.isnan(distance_to_anchor(table, "key", no_anchor)[[3, 6]]).all()


def test_anchor_identities_take_only_valid_anchor_frame_predictions():
    from trackverify.anchors import anchor_identities

    table = pd.DataFrame({"frame": [0, 0, 0, 1], "track": ["A", "B", "C", "C"],
                          "pred_id": ["p1", "p2", "p3", "p4"],
                          "pred_valid": np.array([1, 0, 1, 1], dtype=object)})
    assert anchor_identities(table).to_dict() == {"A": "p1", "C": "p3"}
