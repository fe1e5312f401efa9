"""Property tests (hypothesis) on the core definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trackverify.metrics.association import association_diagnostics
from trackverify.benchmark.config import build_config
from trackverify.io.atomic import dumps_json
from trackverify.benchmark.protocols.anatomical_verification import condition_metrics, score_conditions
from trackverify.benchmark.selective import certification_metrics
from trackverify.verifiers import load_verifier

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tracked_tables(draw):
    """A small recording: tracks x frames, noisy ids, some invalid, some missing rows."""
    n_tracks = draw(st.integers(2, 6))
    n_frames = draw(st.integers(6, 14))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    frame = np.repeat(np.arange(n_frames), n_tracks)
    track = np.tile(np.arange(n_tracks), n_frames)
    pred = track + 50
    noisy = rng.random(len(track)) < draw(st.floats(0, 0.4))
    pred = np.where(noisy, rng.integers(50, 50 + n_tracks + 2, len(track)), pred)
    keep = (rng.random(len(track)) > draw(st.floats(0, 0.2))) | (frame == 0) | (frame == 2)
    xyz = rng.normal(scale=5.0, size=(len(track), 3)) + track[:, None] * 4.0
    table = pd.DataFrame({"recording": "r", "frame": frame, "track": track, "detection": track,
                          "x_um": xyz[:, 0], "y_um": xyz[:, 1], "z_um": xyz[:, 2],
                          "pred_id": pred, "pred_valid": rng.random(len(track)) > 0.1})
    table.loc[table["frame"] == 0, "pred_valid"] = True
    table.loc[table["frame"] == 0, "pred_id"] = table.loc[table["frame"] == 0, "track"] + 50
    return table[keep].reset_index(drop=True), seed


CONFIG = build_config({"start": 2, "recovery_end": 4})


@SETTINGS
@given(tracked_tables(), st.data())
def test_relabelling_predicted_ids_changes_no_diagnostic(case, data):
    table, _ = case
    ids = np.unique(table["pred_id"])
    new = data.draw(st.permutations(list(range(1000, 1000 + len(ids)))))
    mapping = dict(zip(ids.tolist(), new))
    relabelled = table.assign(pred_id=table["pred_id"].map(mapping))
    assert association_diagnostics(relabelled) == association_diagnostics(table)
    as_strings = table.assign(pred_id=table["pred_id"].map(lambda p: f"id-{mapping[p]}"))
    assert association_diagnostics(as_strings) == association_diagnostics(table)


@SETTINGS
@given(tracked_tables())
def test_control_condition_never_has_errors_on_clean_predictions(case):
    table, _ = case
    table = table.assign(pred_id=table["track"] + 50)  # the tracker is right (some invalid rows)
    scored, _, _ = score_conditions(table, CONFIG, load_verifier("fixed_distance"))
    control = scored[scored["condition"] == "control"]
    assert not (control["error"] == 1).any()


@SETTINGS
@given(tracked_tables(), st.integers(0, 2 ** 32 - 1))
def test_shuffling_rows_changes_no_result(case, shuffle_seed):
    table, _ = case
    shuffled = table.sample(frac=1.0, random_state=shuffle_seed % (2 ** 31)).reset_index(drop=True)
    verifier = load_verifier("fixed_distance")
    a = condition_metrics(score_conditions(table, CONFIG, verifier)[0], CONFIG)
    b = condition_metrics(score_conditions(shuffled, CONFIG, verifier)[0], CONFIG)
    assert dumps_json(a) == dumps_json(b)
    assert association_diagnostics(shuffled) == association_diagnostics(table)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, np.nan]),
                          st.one_of(st.floats(0, 20), st.just(np.nan))), min_size=1, max_size=60),
       st.floats(0, 20))
def test_coverage_and_risk_stay_in_unit_interval(rows, threshold):
    error, score = map(np.array, zip(*rows))
    m = certification_metrics(error, score, threshold)
    for key in ("certified_coverage", "selective_risk", "false_certification_rate",
                "correct_certified_coverage", "prevalence", "correct_coverage_at_fcr"):
        assert m[key] is None or 0.0 <= m[key] <= 1.0, key
    assert m["correct_certified_coverage"] <= m["certified_coverage"]


class AbstainEverywhere:
    name = "abstain"
    evidence = "independent"

    def score(self, table):
        return np.full(len(table), np.nan)


@SETTINGS
@given(tracked_tables())
def test_a_verifier_that_abstains_everywhere_certifies_nothing(case):
    table, _ = case
    metrics = condition_metrics(score_conditions(table, CONFIG, AbstainEverywhere())[0], CONFIG)
    for block in metrics.values():
        assert block["certified_coverage"] == 0.0 and block["selective_risk"] is None
        assert block["n_abstained"] == block["n_rows"]
        assert block["false_certification_rate"] in (0.0, None)
