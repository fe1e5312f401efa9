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
