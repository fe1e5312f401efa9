"""The protocols' definitions on hand-computed cases: the per-condition scoring and metrics of
``anatomical_verification``, the displacement verdict of ``anatomical_consistency``, the
observation-table entry of ``tracking_gt``, and the summary over corruption draws."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from trackverify.metrics import tracking as tracking_gt_module
from trackverify.benchmark.config import build_config
from trackverify.benchmark.corrupt import corrupt_recording
from trackverify.errors import InputError
from trackverify.benchmark.protocols.anatomical_consistency import consistency, falsification_rule
from trackverify.benchmark.protocols.anatomical_verification import (ALL, condition_metrics, error_array,
                                                           metrics_block, score_conditions,
                                                           score_stacked)
from trackverify.benchmark.protocols.tracking_gt import pool, tracking_gt
from trackverify.benchmark.run import over_draws

CONFIG = build_config({"start": 2, "recovery_end": 4})


def recording(n_tracks: int = 6, n_frames: int = 8) -> pd.DataFrame:
    """Tracks 30 um apart on x, still; every prediction right and valid."""
    frame = np.repeat(np.arange(n_frames), n_tracks)
    track = np.tile(np.arange(n_tracks), n_frames)
    return pd.DataFrame({"recording": "r", "frame": frame, "track": track,
                         "detection": np.arange(len(frame)), "x_um": track * 30.0, "y_um": 0.0,
                         "z_um": 0.0, "pred_id": track + 50, "pred_valid": True})


@dataclasses.dataclass
class Record:
    ambiguous: int
    missing_evidence: int | None
    contradicted: int


class FrameScore:
    """Scores each row by its frame number (abstains in frame 0); records, per call, the
    rows it saw and the detection table it was given."""

    name = "frame_score"
    evidence = "independent"

    def __init__(self):
        self.abstentions, self.calls = [], []

    def score(self, table, detections=None):
        self.calls.append((len(table), detections))
        self.abstentions.append(Record(len(table), None, 2))
        frame = table["frame"].to_numpy(np.float64)
        return np.where(frame == 0, np.nan, frame)


# --- anatomical_verification ------------------------------------------------------------

def test_error_array_is_float64_with_nan_for_unlabelled_rows_never_zero():
    scored = pd.DataFrame({"error": pd.array([0, 1, pd.NA, 1], dtype="Int8")})
    error = error_array(scored)
    assert error.dtype == np.float64
    assert error[:2].tolist() == [0.0, 1.0] and error[3] == 1.0
    assert np.isnan(error[2])


def test_metrics_block_by_hand_with_a_score_exactly_at_the_threshold():
    """error 0, 1, 0, unlabelled, 1; scores 1, 5 (= threshold: accepted), 7, 2, NaN."""
    error = np.array([0.0, 1.0, 0.0, np.nan, 1.0])
    score = np.array([1.0, 5.0, 7.0, 2.0, np.nan])
    block = metrics_block(error, score, threshold=5.0, max_fcr=0.25)
    assert block["threshold"] == 5.0 and block["max_false_certification_rate"] == 0.25
    assert (block["n_rows"], block["n_labelled"], block["n_errors"]) == (5, 4, 2)
    accepted = (block["n_accepted"], block["n_accepted_errors"], block["n_accepted_correct"])
    assert accepted == (3, 1, 1)
    assert block["n_abstained"] == 1 and block["n_labelled_abstained"] == 1
    assert block["certified_coverage"] == 3 / 5 and block["selective_risk"] == 1 / 3
    assert block["false_certification_rate"] == 1 / 2
    # the curve: scores 1, 2, 5, 7 enter in turn (the unlabelled row counts in coverage)
    assert block["risk_coverage"] == {
        "threshold": [1.0, 2.0, 5.0, 7.0],
        "coverage": [1 / 5, 2 / 5, 3 / 5, 4 / 5],
        "selective_risk": [0.0, 0.0, 1 / 3, 1 / 4],
        "false_certification_rate": [0.0, 0.0, 1 / 2, 1 / 2],
        "correct_coverage": [1 / 5, 1 / 5, 1 / 5, 2 / 5]}
    # FCR <= 0.25 only before the error at 5 enters: correct coverage 1/5 there
    assert block["correct_coverage_at_fcr"] == 1 / 5


def scored_table() -> pd.DataFrame:
    """Two conditions of one recording (2 tracks x 2 frames each) and an empty third one.

    ``a``: ids right, errors 0, 0, 0, unlabelled; scores 1, 2, 9, 3.
    ``b``: the ids swapped in frame 1, errors 0, 0, 1, 1; scores 4, 6, 5, NaN."""
    conditions = pd.Categorical(["a"] * 4 + ["b"] * 4, categories=["a", "b", "empty"])
    return pd.DataFrame({
        "recording": "r", "frame": [0, 0, 1, 1] * 2, "track": [0, 1, 0, 1] * 2,
        "pred_id": [5, 6, 5, 6, 5, 6, 6, 5], "pred_valid": True, "condition": conditions,
        "error": pd.array([0, 0, 0, pd.NA, 0, 0, 1, 1], dtype="Int8"),
        "score": [1.0, 2.0, 9.0, 3.0, 4.0, 6.0, 5.0, np.nan]})


def test_condition_metrics_per_condition_and_pooled_by_hand():
    out = condition_metrics(scored_table(), CONFIG)  # threshold 5 um, max FCR 0.01
    assert list(out) == ["a", "b", "empty", ALL] and ALL == "all_conditions"
    a, b, empty, pooled = out["a"], out["b"], out["empty"], out[ALL]
    assert (a["n_rows"], a["n_labelled"], a["n_errors"], a["n_accepted"]) == (4, 3, 0, 3)
    assert a["prevalence"] == 0.0 and a["false_certification_rate"] is None
    assert a["correct_coverage_at_fcr"] is None  # no error: undefined
    assert (b["n_rows"], b["n_errors"], b["n_accepted"], b["n_accepted_errors"]) == (4, 2, 2, 1)
    assert b["n_abstained"] == 1 and b["threshold"] == 5.0
    assert b["max_false_certification_rate"] == 0.01
    assert b["risk_coverage"]["threshold"] == [4.0, 5.0, 6.0]
    assert empty["n_rows"] == 0 and empty["certified_coverage"] is None
    assert (pooled["n_rows"], pooled["n_errors"], pooled["n_accepted"]) == (8, 2, 5)
    assert pooled["n_accepted_errors"] == 1 and pooled["n_abstained"] == 1
    assert pooled["risk_coverage"]["threshold"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 9.0]
    # the association block of each condition: a all correct; b swapped in frame 1
    assert a["association"]["correct_observations"] == 4
    assert a["association"]["identity_switches"] == 0
    assert b["association"]["reference_observations"] == 4
    assert b["association"]["correct_observations"] == 2
    assert b["association"]["identity_switches"] == 2
    assert empty["association"]["reference_observations"] == 0
    assert "association" not in pooled


def test_condition_metrics_takes_max_fcr():
    out = condition_metrics(scored_table(), CONFIG, max_fcr=0.5)
    assert out["b"]["max_false_certification_rate"] == 0.5
    assert out[ALL]["max_false_certification_rate"] == 0.5
    # b's curve: 4 (correct) FCR 0, 5 (error) FCR 1/2, 6 (correct) FCR 1/2 with correct
    # coverage 2/4: the largest at FCR <= 0.5; at the default 0.01 only the first point, 1/4
    assert out["b"]["correct_coverage_at_fcr"] == 1 / 2
    assert condition_metrics(scored_table(), CONFIG)["b"]["correct_coverage_at_fcr"] == 1 / 4


def test_score_stacked_scores_each_condition_on_its_own():
    stacked = scored_table().drop(columns=["score"])
    stacked = stacked.iloc[[4, 0, 5, 1, 6, 2, 7, 3]]  # conditions interleaved
    verifier = FrameScore()
    detections = pd.DataFrame({"frame": [0], "detection": [0], "x_um": [0.0], "y_um": [0.0],
                               "z_um": [0.0], "extra": [1]})
    scores, reasons = score_stacked(stacked, verifier, detections)
    assert np.array_equal(scores, [np.nan, np.nan, np.nan, np.nan, 1, 1, 1, 1], equal_nan=True)
    # one call per condition, the empty one too, each with the detection columns only
    assert [n for n, _ in verifier.calls] == [4, 4, 0]
    assert all(list(d.columns) == ["frame", "detection", "x_um", "y_um", "z_um"]
               for _, d in verifier.calls)
    assert reasons == {c: {"ambiguous": n, "missing_evidence": None, "contradicted": 2,
                           "merged": None}
                       for c, n in (("a", 4), ("b", 4), ("empty", 0))}


def test_score_stacked_without_detections_and_without_a_record():
    class Constant:
        name, evidence = "constant", "independent"

        def score(self, table):
            return np.full(len(table), 3.0)

    scores, reasons = score_stacked(scored_table(), Constant())
    assert scores.tolist() == [3.0] * 8
    assert reasons == {"a": None, "b": None, "empty": None}
    verifier = FrameScore()
    score_stacked(scored_table(), verifier)
    assert [d for _, d in verifier.calls] == [None, None, None]


def test_score_conditions_labels_scores_and_abstentions():
    table = recording()
    verifier = FrameScore()
    stacked, choices, reasons = score_conditions(table, CONFIG, verifier, "r")
    expected, expected_choices = corrupt_recording(table, CONFIG.conditions, CONFIG.seed,
                                                   CONFIG.start, CONFIG.recovery_end, "r")
    assert choices == expected_choices
    pd.testing.assert_frame_equal(stacked.drop(columns=["score", "abstained"]), expected)
    frame = stacked["frame"].to_numpy(np.float64)
    assert np.array_equal(stacked["score"].to_numpy(), np.where(frame == 0, np.nan, frame),
                          equal_nan=True)
    assert stacked["abstained"].tolist() == (frame == 0).tolist()
    assert list(reasons) == list(CONFIG.conditions)
    assert reasons["control"]["ambiguous"] == len(table)


def test_score_conditions_seed_chooses_the_draw():
    table = recording()
    for seed in (7, None):
        _, choices, _ = score_conditions(table, CONFIG, FrameScore(), "r", seed=seed)
        drawn = CONFIG.seed if seed is None else seed
        assert choices == corrupt_recording(table, CONFIG.conditions, drawn, CONFIG.start,
                                            CONFIG.recovery_end, "r")[1]
    # the draws differ (else the checks above could not tell the seeds apart)
    assert (score_conditions(table, CONFIG, FrameScore(), "r", seed=7)[1]
            != score_conditions(table, CONFIG, FrameScore(), "r")[1])
    # the recording's name reaches the corruption's messages
    with pytest.raises(InputError, match=r"recording 'r2' spans 2 frame numbers \(0-1; 2 of them present\), too short"):
        score_conditions(recording(n_frames=2), CONFIG, FrameScore(), "r2")
    with pytest.raises(InputError, match="^recording spans 2 frame numbers"):  # unnamed
        score_conditions(recording(n_frames=2), CONFIG, FrameScore())


def test_score_conditions_passes_the_detections():
    table = recording()
    detections = table[["frame", "detection", "x_um", "y_um", "z_um"]]
    verifier = FrameScore()
    score_conditions(table, CONFIG, verifier, "r", detections)
    assert all(d is not None and len(d) == len(table) for _, d in verifier.calls)


# --- anatomical_consistency -------------------------------------------------------------

def consistency_table() -> pd.DataFrame:
    """Tracks 0-3 at the origin in frame 0; in frame 1 they are 1, 2, 3, 10 um away on x;
    track 4 only in frame 1 (no anchor: not measured). Scores: 0 in frame 0; 5 (= the
    threshold: not rejected), 6, NaN, 10, NaN in frame 1."""
    return pd.DataFrame({"frame": [0, 0, 0, 0, 1, 1, 1, 1, 1],
                         "track": [0, 1, 2, 3, 0, 1, 2, 3, 4],
                         "x_um": [0, 0, 0, 0, 1, 2, 3, 10, 0.0], "y_um": 0.0, "z_um": 0.0,
                         "score": [0, 0, 0, 0, 5, 6, np.nan, 10, np.nan]})


def test_consistency_by_hand():
    """Measured displacements 0, 0, 0, 0, 1, 2, 3, 10: one of eight beyond 5 um (12.5 % > 5 %).
    Linear quantiles of the eight: q50 at index 3.5 -> 0.5; q90 at 6.3 -> 3 + 0.3 x 7 = 5.1;
    q95 at 6.65 -> 7.55; q99 at 6.93 -> 9.51; q100 10. Frame 1 (1, 2, 3, 10): median 2.5,
    q95 at index 2.85 -> 3 + 0.85 x 7 = 8.95."""
    out = consistency(consistency_table(), threshold=5.0, share=0.05)
    assert out["clean_observations"] == 9 and out["measured_observations"] == 8
    assert out["share_exceeding_threshold"] == 1 / 8
    assert out["deformation_hypothesis"] == "falsified"
    assert out["displacement_quantiles_um"] == pytest.approx(
        {"q50": 0.5, "q90": 5.1, "q95": 7.55, "q99": 9.51, "q100": 10.0})
    assert out["per_frame_displacement_um"]["frame"] == [0, 1]
    assert out["per_frame_displacement_um"]["median"] == [0.0, 2.5]
    assert out["per_frame_displacement_um"]["q95"] == pytest.approx([0.0, 8.95])
    assert out["per_frame_displacement_um"]["max"] == [0.0, 10.0]
    assert out["threshold_um"] == 5.0 and out["falsification_share"] == 0.05
    assert out["verifier_threshold"] == 5.0
    assert out["verifier_rejected_share"] == 2 / 9  # 6 and 10; 5 is not beyond 5
    assert out["verifier_abstained_share"] == 2 / 9
    assert out["rule"] == falsification_rule(5.0, 0.05) == (
        "The small-deformation hypothesis is falsified for a recording when more than 5% of "
        "its clean observations lie farther than 5 µm from their anchor-frame position; "
        "otherwise it is supported.")


def test_consistency_verifier_threshold_and_share():
    out = consistency(consistency_table(), threshold=5.0, share=0.125, verifier_threshold=6.0)
    assert out["deformation_hypothesis"] == "supported"  # 1/8 is not more than 12.5 %
    assert out["verifier_threshold"] == 6.0 and out["threshold_um"] == 5.0
    assert out["verifier_rejected_share"] == 1 / 9  # only 10 is beyond 6
    assert out["share_exceeding_threshold"] == 1 / 8  # the verdict keeps the declared 5 um


def test_consistency_without_scores_or_measured_rows():
    out = consistency(consistency_table().drop(columns=["score"]), threshold=5.0, share=0.05)
    assert out["verifier_rejected_share"] == 0.0 and out["verifier_abstained_share"] == 1.0
    unmeasured = consistency_table().query("frame == 1 and track == 4")
    out = consistency(unmeasured, threshold=5.0, share=0.05)
    assert out["measured_observations"] == 0 and out["clean_observations"] == 1
    assert out["share_exceeding_threshold"] is None
    assert out["displacement_quantiles_um"] is None
    assert out["deformation_hypothesis"] is None
    assert out["per_frame_displacement_um"] == {"frame": [], "median": [], "q95": [], "max": []}
    assert out["verifier_abstained_share"] == 1.0
    empty = consistency(consistency_table().iloc[:0], threshold=5.0, share=0.05)
    assert empty["clean_observations"] == 0 and empty["verifier_rejected_share"] is None
    assert empty["verifier_abstained_share"] is None


# --- tracking_gt on an observation table --------------------------------------------------

def observations() -> pd.DataFrame:
    """Tracks 1, 2 over frames 0-2; the tracker swaps their ids from frame 2 on; an invalid
    prediction with a third id on track 1 in frame 1 (not scored: that observation has no
    prediction)."""
    return pd.DataFrame({
        "recording": "r", "frame": [0, 0, 1, 1, 2, 2], "track": [1, 2, 1, 2, 1, 2],
        "detection": [0, 1, 2, 3, 4, 5], "x_um": [0, 30, 0, 30, 0, 30.0], "y_um": 0.0,
        "z_um": 0.0, "pred_id": [7, 8, 9, 8, 8, 7],
        "pred_valid": [True, True, False, True, True, True]})


def test_tracking_gt_on_an_observation_table_by_hand():
    """Track 1: ids 7, none, 8 (id 7 aligned: 1 correct); track 2: 8, 8, 7 (id 8 aligned: 2
    correct): 3 of 6 correct. IDF1: IDTP 3 (7-1 once, 8-2 twice); IDFP = 5 - 3 = 2,
    IDFN = 6 - 3 = 3 -> 2 x 3 / (2 x 3 + 2 + 3) = 6/11."""
    score = tracking_gt(observations(), zero_distance_um=5.0)
    m = score.metrics
    assert m["reference_observations"] == 6 and m["correct_observations"] == 3
    assert m["correct_observation_rate"] == 0.5
    assert m["extra_predicted_observations"] == 0
    assert (m["idtp"], m["idfp"], m["idfn"]) == (3, 2, 3)
    assert m["idf1"] == pytest.approx(6 / 11)
    assert m["clr_tp"] == 5 and m["clr_fn"] == 1 and m["clr_fp"] == 0
    pooled = pool([(score.metrics, score.counts), (score.metrics, score.counts)])
    assert pooled["reference_observations"] == 12 and pooled["correct_observations"] == 6
    assert pooled["idf1"] == pytest.approx(6 / 11) and pooled["clr_tp"] == 10


def test_tracking_gt_sizes_the_identity_alignment_by_valid_ids(monkeypatch):
    """2 tracks x 2 valid ids = 4 cells: allowed at a limit of 4, though 3 ids are given."""
    monkeypatch.setattr(tracking_gt_module, "MAX_IDENTITY_CELLS", 4)
    assert tracking_gt(observations(), 5.0).metrics["reference_observations"] == 6
    monkeypatch.setattr(tracking_gt_module, "MAX_IDENTITY_CELLS", 3)
    with pytest.raises(InputError, match="2 reference tracks and 2 predicted ids") as caught:
        tracking_gt(observations(), 5.0, source="obs.csv")
    assert caught.value.source is None  # unnamed: the run names the data file it came from


def test_tracking_gt_refuses_an_id_twice_in_a_frame():
    table = observations()
    table.loc[3, "pred_id"] = 9
    table.loc[2, "pred_valid"] = True  # id 9 twice in frame 1
    with pytest.raises(InputError, match="pred_id 9 is given to two predictions in frame 1"
                       ) as caught:
        tracking_gt(table, 5.0, source="obs.csv")
    assert caught.value.source == "obs.csv"
    with pytest.raises(InputError) as caught:
        tracking_gt(table, 5.0)
    assert caught.value.source == "<observations>"


def test_tracking_gt_links_by_detection_not_by_distance():
    """Tracks 1 and 2 only 0.4 um apart, the ids swapped in frame 1. By detection: 2 of 4
    correct and 2 switches. (Matched by distance within 5 um, CLEAR would keep the
    continuing matches and see no switch.) An empty source changes nothing."""
    table = pd.DataFrame({
        "recording": "r", "frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
        "detection": [0, 1, 2, 3], "x_um": [0, 0.4, 0, 0.4], "y_um": 0.0, "z_um": 0.0,
        "pred_id": [7, 8, 8, 7], "pred_valid": True})
    for source in ("", "obs.csv"):
        m = tracking_gt(table, zero_distance_um=5.0, source=source).metrics
        assert m["correct_observations"] == 2 and m["identity_switches"] == 2
        assert m["idsw"] == 2 and m["idtp"] == 2


# --- the summary over corruption draws ----------------------------------------------------

def test_over_draws_of_a_draw_without_a_value():
    """[0.9, None, 0.8]: the undefined draw is kept in ``per_draw`` and left out of the mean
    and minimum: mean (0.9 + 0.8) / 2 = 0.85, min 0.8."""
    out = over_draws([0.9, None, 0.8])
    assert out["per_draw"] == [0.9, None, 0.8]
    assert out["mean"] == pytest.approx(0.85) and out["min"] == 0.8
    assert type(out["mean"]) is float and type(out["min"]) is float
    out = over_draws((1, 0))  # ints and a tuple: floats and a list
    assert out == {"per_draw": [1, 0], "mean": 0.5, "min": 0.0}
    assert type(out["per_draw"]) is list and type(out["min"]) is float
    assert over_draws([]) == {"per_draw": [], "mean": None, "min": None}
    assert over_draws([None, None]) == {"per_draw": [None, None], "mean": None, "min": None}
