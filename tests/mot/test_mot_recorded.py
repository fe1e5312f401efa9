"""Canonical metrics equal TrackEval's recorded results (data/trackeval_recorded.json, made by
TrackEval itself; test_mot_parity.py checks the recording is current) to 1e-9, per sequence,
per alpha and combined. Runs without the reference environment."""

from __future__ import annotations

import pytest
from mot_helpers import assert_per_alpha, trackeval_summary
from mot_recorded import SCENES, ZERO_DISTANCE, recorded, scenes

from trackverify.metrics import mot

TOL = 1e-9


@pytest.fixture(scope="module")
def case():
    return scenes(), recorded()


def counts(scene: dict) -> mot.SequenceCounts:
    pairs = mot.similarity_pairs(scene["gt_frame"], scene["gt_xyz"], scene["pred_frame"],
                                 scene["pred_xyz"], ZERO_DISTANCE)
    return mot.sequence_counts(scene["gt_frame"], scene["gt_id"], scene["pred_frame"],
                               scene["pred_id"], *pairs)


def assert_same(mine: dict, theirs: dict, label: str) -> None:
    for key, value in theirs.items():
        assert mine[key] is not None, f"{label} {key}: ours undefined, TrackEval {value}"
        assert abs(mine[key] - value) <= TOL, f"{label} {key}: {mine[key]} vs {value}"


@pytest.mark.parametrize("name", [*SCENES, "one_predicted_id"])
def test_sequence_equals_recorded_trackeval(case, name):
    scenes_, ref = case
    c = counts(scenes_[name])
    assert_same(mot.finish(c), trackeval_summary(ref[name]), name)
    assert_per_alpha(c, ref[name], TOL, label=name)


def test_combined_equals_recorded_trackeval(case):
    scenes_, ref = case
    c = mot.combine([counts(s) for s in scenes_.values()])
    assert_same(mot.finish(c), trackeval_summary(ref["COMBINED_SEQ"]), "combined")
    assert_per_alpha(c, ref["COMBINED_SEQ"], TOL, label="combined")
