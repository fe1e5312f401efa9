"""The threshold fit per target (trackverify.benchmark.certify.fit) on a calibration set written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from trackverify.benchmark.certify.fit import (LOSS, ROLES, calibrate_threshold, check_on_evaluated,
                                     fit_certified_threshold, fit_roles, fit_rows_with_animals,
                                     guarantee_text, precheck_target, selective_risk_warnings)
from trackverify.benchmark.certify.targets import ASSUMPTION, CalibrationTarget
from trackverify.errors import ConfigError, LeakageError
from trackverify.benchmark.partitions import FitData, Partitions

FCR = "target_false_certification_rate"
SR = "target_selective_risk"

# Calibration: animals A..E with one labelled error each, at scores 1..5 (E's error in c5,
# its other recording c6 has a correct row); F (c7) has no error. The train recording t1 and
# the test recording x1 hold errors at score 0 that the fit must never see.
ROWS = pd.DataFrame([
    ("c1", 1.0, "1"), ("c1", 0.5, "0"),
    ("c2", 2.0, "1"), ("c2", 0.2, "0"), ("c2", 0.1, "?"),       # "?": unlabelled
    ("c3", 3.0, "1"), ("c3", np.nan, "0"),                      # NaN: abstained
    ("c4", 4.0, "1"),
    ("c5", 5.0, "1"), ("c6", 6.0, "0"),
    ("c7", 0.3, "0"), ("c7", 7.0, "0"),
    ("t1", 0.0, "1"), ("t1", 0.0, "1"),
    ("x1", 0.0, "1"),
], columns=["recording", "score", "error"])
PARTITIONS = Partitions({"train": ("t1",), "calibration": tuple(f"c{i}" for i in range(1, 8)),
                         "test": ("x1",)})
# c5 and c6 are one animal, once written as a number and once as text
ANIMAL_OF = {"c1": "A", "c2": "B", "c3": "C", "c4": "D", "c5": 5, "c6": "5", "c7": "F",
             "t1": "T", "x1": "X"}


def fit_data(rows=ROWS, partitions=PARTITIONS):
    return FitData(partitions, rows)


def test_roles():
    assert ROLES == {FCR: (("train",), ("calibration",)),
                     SR: (("train", "calibration"), ("train", "calibration"))}
    assert fit_roles(CalibrationTarget(FCR, 0.1, "crc")) == (("train",), ("calibration",))
    assert fit_roles(CalibrationTarget(SR, 0.1)) == (("train", "calibration"),) * 2


def test_calibration_rows_only_with_their_animal():
    rows = fit_rows_with_animals(fit_data(), ANIMAL_OF, ["recording", "score"])
    assert rows.columns.tolist() == ["recording", "score", "animal"]
    assert rows["recording"].tolist() == ["c1", "c1", "c2", "c2", "c2", "c3", "c3", "c4", "c5",
                                          "c6", "c7", "c7"]
    assert rows["animal"].tolist() == ["A", "A", "B", "B", "B", "C", "C", "D", "5", "5", "F", "F"]


def test_crc_fit_record_by_hand():
    """n = 5 animals with errors: bound (k + 1)/6 at the k-th error score; A = 0.5 is met
    exactly at k = 2 and refused at k = 3 (score 3), so every score below 3 is certified."""
    record = fit_certified_threshold(fit_data(), ANIMAL_OF, CalibrationTarget(FCR, 0.5, "crc"))
    threshold = np.nextafter(3.0, -np.inf)
    # certified (finite, <= threshold): c1 1.0, 0.5; c2 2.0, 0.2, 0.1; c7 0.3: 6 of 12 rows,
    # 3 of them correct (the unlabelled 0.1 is not). Per animal: A 2/2, B 3/3, C 0/2, D 0/1,
    # E (c5, c6) 0/2, F 1/2.
    assert record == {
        "target": {"kind": FCR, "level": 0.5, "method": "crc", "delta": None},
        "kind": FCR, "method": "crc", "threshold": threshold,
        "accept_rule": "certified when the score is finite and <= threshold",
        "threshold_capped_at_largest_calibration_score": False,
        "first_refused_error_score": 3.0,
        "guarantee": guarantee_text(CalibrationTarget(FCR, 0.5, "crc"), 5),
        "assumption": ASSUMPTION, "loss": LOSS,
        "recordings": ["c1", "c2", "c3", "c4", "c5", "c6", "c7"],
        "animals": 6, "animals_with_errors": 5, "animals_without_errors": 1,
        "smallest_reachable_target": 0.17, "smallest_reachable_target_exact": pytest.approx(1 / 6),
        "calibration_mean_fcr": pytest.approx(0.4), "bound": 0.5,
        "calibration_certified_coverage": 0.5, "calibration_correct_certified_coverage": 0.25,
        "calibration_animal_coverage": {"min": 0.0, "max": 1.0, "animals": 6},
    }
    assert isinstance(record["threshold"], float)


def test_crc_fit_with_nothing_refused_is_capped_at_the_largest_score():
    # A = 1: the bound (k + 1)/6 <= 1 at every jump: threshold +inf, capped at the largest
    # finite calibration score (7.0, a correct row of F): every finite row, 11 of 12.
    record = fit_certified_threshold(fit_data(), ANIMAL_OF, CalibrationTarget(FCR, 1.0, "crc"))
    assert record["threshold"] == 7.0 and record["threshold_capped_at_largest_calibration_score"]
    assert record["first_refused_error_score"] is None
    assert record["calibration_mean_fcr"] == 1.0 and record["bound"] == 1.0
    assert record["calibration_certified_coverage"] == 11 / 12
    # correct rows with a finite score: c1 0.5, c2 0.2, c6 6.0, c7 0.3 and 7.0
    assert record["calibration_correct_certified_coverage"] == 5 / 12
    assert record["calibration_animal_coverage"] == {"min": 0.5, "max": 1.0, "animals": 6}


def test_ltt_fit_record_by_hand():
    """A = 0.5, delta = 0.1: p(-inf) = 0.5^5 = 0.03125 is admitted; the first jump (R = 1/5)
    has Hoeffding exp(-5 (0.2 ln 0.4 + 0.8 ln 1.6)) = 0.381 and Bentkus e * 6/32 = 0.51: p > delta,
    refused. Nothing is certified but the correct rows below 1."""
    target = CalibrationTarget(FCR, 0.5, "ltt", 0.1)
    record = fit_certified_threshold(fit_data(), ANIMAL_OF, target)
    assert record["threshold"] == np.nextafter(1.0, -np.inf)
    assert record["first_refused_error_score"] == 1.0 and record["method"] == "ltt"
    assert record["p_value"] == pytest.approx(0.5 ** 5, rel=1e-12) and "bound" not in record
    assert record["calibration_mean_fcr"] == 0.0
    # 1 - 0.1^(1/5) = 0.36904...
    assert record["smallest_reachable_target"] == 0.37
    assert record["smallest_reachable_target_exact"] == pytest.approx(1 - 0.1 ** 0.2)
    assert record["guarantee"].startswith("Learn-then-Test (Hoeffding-Bentkus p-values, "
                                          "fixed-sequence testing) over 5 calibration animals")
    # certified: c1 0.5, c2 0.2 and 0.1, c7 0.3: 4 of 12 rows, 3 correct
    assert record["calibration_certified_coverage"] == 4 / 12
    assert record["calibration_correct_certified_coverage"] == 3 / 12


def test_unreachable_target_is_refused_by_the_fit():
    with pytest.raises(ConfigError, match=r"with 5 calibration animal\(s\) with errors .* "
                                          r"smallest is 0\.17"):
        fit_certified_threshold(fit_data(), ANIMAL_OF, CalibrationTarget(FCR, 0.16, "crc"))


def test_guarantee_words():
    crc = CalibrationTarget(FCR, 0.2, "crc")
    assert guarantee_text(crc, 7) == (
        "Conformal risk control over 7 calibration animals: the expected false-certification "
        "rate of a new animal (one with at least one wrong identity) is at most 0.2, the "
        "expectation taken over the draw of the calibration animals and the new animal.")
    assert guarantee_text(crc).startswith("Conformal risk control over calibration animals:")
    assert guarantee_text(CalibrationTarget(FCR, 0.3, "ltt", 0.05)) == (
        "Learn-then-Test (Hoeffding-Bentkus p-values, fixed-sequence testing) over calibration "
        "animals: with probability at least 0.95 over the draw of the calibration animals, the "
        "expected false-certification rate of new animals (with at least one wrong identity) at "
        "this threshold is at most 0.3.")
    assert guarantee_text(CalibrationTarget(SR, 0.01)) == (
        "No guarantee: the threshold reaches selective risk <= 0.01 on the fit rows only; it "
        "says nothing about the share of a new animal's errors that is certified.")


# Selective risk over train + calibration: labelled finite rows sorted by score
# 0.5 (0), 1 (0), 2 (0), 3 (1), 4 (1): risk 0, 0, 0, 1/4, 2/5. The prevalence counts every
# labelled row, the abstained error of c1 too: 3 errors of 6.
SR_ROWS = pd.DataFrame({"recording": ["t1", "t1", "t1", "c1", "c1", "c1", "x1"],
                        "score": [1.0, 2.0, 3.0, 4.0, 0.5, np.nan, 0.0],
                        "error": [0, 0, 1, 1, 0, 1, 1]})
SR_PARTITIONS = Partitions({"train": ("t1",), "calibration": ("c1",), "test": ("x1",)})


def test_selective_risk_fit_without_warnings_at_both_boundaries():
    # R = 1/4: threshold 3 (risk exactly 1/4); prevalence 2/5 > 1/4; certified errors 1 of
    # the 3 errors (the abstained one counts): 1/3, not above a half
    fit = FitData(SR_PARTITIONS, SR_ROWS)
    record = calibrate_threshold(CalibrationTarget(SR, 0.25), fit, {})
    assert record == {
        "threshold": 3.0, "target_risk": 0.25, "selective_risk": 0.25, "accepted": 4,
        "labelled": 5, "partitions": ["train", "calibration"], "reason": None,
        "target": {"kind": SR, "level": 0.25, "method": None, "delta": None},
        "kind": SR, "method": None, "guarantee": guarantee_text(CalibrationTarget(SR, 0.25)),
        "assumption": None, "warnings": [], "fit_partitions": ["train", "calibration"]}


def test_selective_risk_warnings_at_their_boundaries():
    fit = FitData(SR_PARTITIONS, SR_ROWS)
    # errors over labelled rows: 3 of 6 (the abstained row is labelled): prevalence 0.5.
    # At R = 0.5 exactly the prevalence warning is given; at threshold 3.0 one error of 3 is
    # certified (no second warning), at 4.0 two of 3 (above a half: the second warning).
    low = selective_risk_warnings({"target_risk": 0.5, "threshold": 3.0}, fit)
    assert low == [
        "The calibration rows' error prevalence (0.5) is at or below the selective-risk target "
        "(0.5): certifying every row already meets the target, so it says nothing about errors. "
        "Use --calibrate target_false_certification_rate=A."]
    assert selective_risk_warnings({"target_risk": np.nextafter(0.5, 0), "threshold": 3.0}, fit) == []
    high = selective_risk_warnings({"target_risk": 0.1, "threshold": 4.0}, fit)
    assert high == ["At the fitted threshold 66.7% of the calibration errors are certified: "
                    "this threshold certifies most wrong identities."]
    assert selective_risk_warnings({"target_risk": 0.1, "threshold": None}, fit) == []
    # exactly half certified is not "most": two recordings, 2 errors, one certified
    half = FitData(SR_PARTITIONS, pd.DataFrame({"recording": ["t1", "c1", "c1"],
                                                "score": [1.0, 5.0, 0.0], "error": [1, 1, 0]}))
    assert selective_risk_warnings({"target_risk": 0.1, "threshold": 1.0}, half) == []
    # no labelled row: no prevalence, no warning
    unlabelled = FitData(SR_PARTITIONS, pd.DataFrame({"recording": ["t1"], "score": [1.0],
                                                      "error": [np.nan]}))
    assert selective_risk_warnings({"target_risk": 1.0, "threshold": 1.0}, unlabelled) == []


def test_selective_risk_fit_that_fails_says_why():
    fit = FitData(SR_PARTITIONS, pd.DataFrame({"recording": ["t1", "c1"], "score": [1.0, 2.0],
                                               "error": [1, 0]}))
    with pytest.raises(ConfigError, match=r"^calibration failed: no threshold reaches selective "
                                          r"risk <= 0\.1 "):
        calibrate_threshold(CalibrationTarget(SR, 0.1), fit, {})


def test_calibrate_threshold_for_the_fcr_target():
    target = CalibrationTarget(FCR, 0.5, "crc")
    record = calibrate_threshold(target, fit_data(), ANIMAL_OF)
    assert record == {**fit_certified_threshold(fit_data(), ANIMAL_OF, target),
                      "warnings": [], "fit_partitions": ["calibration"]}
    # other column names
    renamed = ROWS.rename(columns={"score": "s", "error": "e"})
    assert calibrate_threshold(target, fit_data(renamed), ANIMAL_OF, "s", "e")["threshold"] == \
        record["threshold"]
    assert calibrate_threshold(CalibrationTarget(SR, 0.25), FitData(
        SR_PARTITIONS, SR_ROWS.rename(columns={"score": "s", "error": "e"})), {}, "s",
        "e")["threshold"] == 3.0


def test_precheck_target():
    # crc with 4 animals: 1/5 = 0.2 is the smallest; 0.2 passes, below it is refused
    precheck_target(CalibrationTarget(FCR, 0.2, "crc"), 4)
    with pytest.raises(ConfigError) as raised:
        precheck_target(CalibrationTarget(FCR, 0.19, "crc"), 4)
    assert str(raised.value) == ("with 4 calibration animal(s) no threshold can guarantee "
                                 "FCR <= 0.19 (crc); the smallest is 0.2")
    precheck_target(CalibrationTarget(FCR, 0.01, "crc"), 0)   # no animals known yet: no check
    with pytest.raises(ConfigError, match="with 1 calibration animal"):  # 1/2 with one
        precheck_target(CalibrationTarget(FCR, 0.4, "crc"), 1)
    precheck_target(CalibrationTarget(SR, 0.0), 1)             # no guarantee: no check
    with pytest.raises(ConfigError, match="at delta=0.1"):
        precheck_target(CalibrationTarget(FCR, 0.3, "ltt", 0.1), 5)


def block(accepted_errors, errors, accepted, rows):
    return {"n_accepted_errors": accepted_errors, "n_errors": errors, "n_accepted": accepted,
            "n_rows": rows}


def test_check_on_evaluated_mean_exactly_at_the_target_is_not_above():
    record = {"target": {"level": 0.25}, "method": "ltt",
              "calibration_animal_coverage": {"min": 0.5, "max": 0.8, "animals": 5}}
    # A: (1 + 0)/(2 + 2) = 0.25 over two recordings; B: 1/4; C: no error, no row at all.
    # Coverage: A (5 + 8)/(10 + 10) = 0.65; B 0.5 (at the lower edge: inside); C no rows.
    blocks = {"r1": block(1, 2, 5, 10), "r2": block(0, 2, 8, 10), "r3": block(1, 4, 4, 8),
              "r4": block(0, 0, 0, 0)}
    animals = {"r1": "A", "r2": "A", "r3": "B", "r4": "C"}
    check = check_on_evaluated(record, blocks, animals)
    assert check["per_animal_fcr"] == {"A": 0.25, "B": 0.25}
    assert check["mean_fcr"] == 0.25 and check["above_target"] is False
    assert (check["animals_with_errors"], check["animals_without_errors"]) == (2, 1)
    assert check["per_animal_certified_coverage"] == {"A": 0.65, "B": 0.5}
    assert check["coverage_outside_calibration_range"] == {}
    assert check["target"] == 0.25 and check["note"] == (
        "Learn-then-Test bounds the expected rate with probability 1 - delta; a finite set of "
        "new animals can exceed the target by chance")
    # the upper edge of the band is inside too; a hair above it is outside
    assert check_on_evaluated(record, {"r": block(0, 1, 8, 10)}, {"r": "A"})[
        "coverage_outside_calibration_range"] == {}
    assert check_on_evaluated(record, {"r": block(1, 1, 9, 10)}, {"r": "A"})[
        "coverage_outside_calibration_range"] == {"A": 0.9}
    # a hair above the target is above it
    above = check_on_evaluated({**record, "target": {"level": np.nextafter(0.25, 0)}}, blocks, animals)
    assert above["above_target"] is True


def test_check_on_evaluated_without_errors_or_band():
    record = {"target": {"level": 0.1}, "method": "crc"}
    check = check_on_evaluated(record, {"r": block(0, 0, 3, 4)}, {"r": 7})
    assert check["per_animal_fcr"] == {} and check["mean_fcr"] is None
    assert check["above_target"] is None and check["animals_without_errors"] == 1
    assert check["per_animal_certified_coverage"] == {"7": 0.75}
    assert check["calibration_animal_coverage"] is None
    assert check["coverage_outside_calibration_range"] == {}
    assert check["note"] == (
        "conformal risk control bounds the expectation: one finite set of new animals can exceed "
        "the target by chance, but a mean far above it means the calibration did not transfer")
    assert math.isclose(check_on_evaluated(record, {"r": block(1, 3, 3, 4)}, {"r": 7})["mean_fcr"], 1 / 3)


def test_nullable_boolean_labels_with_a_missing_one():
    # errors read as pandas' nullable boolean: a missing label is unlabelled (not an error)
    rows = ROWS.assign(error=pd.array([{"1": True, "0": False}.get(v) for v in ROWS["error"]],
                                      dtype="boolean"))
    target = CalibrationTarget(FCR, 0.5, "crc")
    assert fit_certified_threshold(fit_data(rows), ANIMAL_OF, target) == \
        fit_certified_threshold(fit_data(), ANIMAL_OF, target)
    flags = SR_ROWS.assign(error=pd.array([False, False, True, True, False, None, True],
                                          dtype="boolean"))
    # now 2 errors of 5 labelled: prevalence 0.4, at R = 0.4 exactly the warning
    warnings = selective_risk_warnings({"target_risk": 0.4, "threshold": 0.0},
                                       FitData(SR_PARTITIONS, flags))
    assert len(warnings) == 1 and "error prevalence (0.4)" in warnings[0]
    text = SR_ROWS.assign(error=["0", "0", "1", "1", "0", "?", "1"])
    assert selective_risk_warnings({"target_risk": 0.4, "threshold": 0.0},
                                   FitData(SR_PARTITIONS, text)) == warnings


def test_recordings_of_mixed_id_types_are_listed_by_their_text():
    rows = pd.DataFrame({"recording": [3, "a", 3], "score": [1.0, 2.0, 0.5],
                         "error": [1, 1, 0]})
    partitions = Partitions({"calibration": (3, "a")})
    record = fit_certified_threshold(FitData(partitions, rows), {3: "A", "a": "B"},
                                     CalibrationTarget(FCR, 0.9, "crc"))
    assert record["recordings"] == [3, "a"] and record["animals"] == 2


def test_no_calibration_rows_is_refused_before_any_fit():
    partitions = Partitions({"train": ("c1",), "calibration": ("none",)})
    with pytest.raises(LeakageError, match="nothing to fit on: no rows in calibration"):
        fit_certified_threshold(FitData(partitions, ROWS), ANIMAL_OF,
                                CalibrationTarget(FCR, 0.5, "crc"))
