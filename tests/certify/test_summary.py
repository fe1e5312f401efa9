"""The check on evaluated animals, the alerts and the shift warning, on hand-made blocks."""

from __future__ import annotations

import pytest

from trackverify.benchmark.certify.fit import check_on_evaluated
from trackverify.benchmark.certify.summary import certification_block


def block(accepted_errors, errors, accepted, rows, fcr=None):
    return {"n_accepted_errors": accepted_errors, "n_errors": errors, "n_accepted": accepted,
            "n_rows": rows, "false_certification_rate": fcr}


RECORD = {"target": {"kind": "target_false_certification_rate", "level": 0.2, "method": "crc",
                     "delta": None}, "method": "crc", "guarantee": "G", "assumption": "exchangeable",
          "smallest_reachable_target": 0.15, "warnings": [],
          "calibration_animal_coverage": {"min": 0.8, "max": 0.9, "animals": 6},
          "kind": "target_false_certification_rate", "fit_partitions": ["calibration"]}
# animal A has two recordings: (1 + 3) / (10 + 10) = 0.2 certified errors, coverage 170/200;
# animal B: 5/10 = 0.5, coverage 50/100 (outside [0.8, 0.9]); animal C has no errors.
BLOCKS = {"r1": block(1, 10, 80, 100), "r2": block(3, 10, 90, 100), "r3": block(5, 10, 50, 100),
          "r4": block(0, 0, 85, 100)}
ANIMALS = {"r1": "A", "r2": "A", "r3": "B", "r4": "C"}


def test_check_on_evaluated_by_hand():
    check = check_on_evaluated(RECORD, BLOCKS, ANIMALS)
    assert check["per_animal_fcr"] == pytest.approx({"A": 0.2, "B": 0.5})
    assert check["mean_fcr"] == pytest.approx(0.35) and check["above_target"] is True
    assert check["animals_without_errors"] == 1
    assert check["coverage_outside_calibration_range"] == pytest.approx({"B": 0.5})


def test_alerts_and_shift_warning():
    pooled = {"nearby_swap": block(6, 10, 0, 0, fcr=0.6), "control": block(0, 0, 0, 0, fcr=None),
              "all_conditions": block(9, 30, 0, 0, fcr=0.3)}
    out = certification_block(RECORD, 5.0, 2.5, pooled, BLOCKS, ANIMALS, "all_conditions")
    assert any("mean false-certification rate is 0.35, above the target 0.2" in a for a in out["alerts"])
    assert any(a.startswith("nearby_swap: 60.0%") for a in out["alerts"])
    assert not any(a.startswith("all_conditions") for a in out["alerts"])
    # 1 of 3 outside with p = 2/(6+1): P(Bin(3, 2/7) >= 1) = 1 - (5/7)^3 = 0.64, no warning.
    assert not any("distribution shift" in w for w in out["warnings"])
    # 2 of 2 outside a range of 60 calibration animals: p = 2/61, (2/61)^2 = 0.0011 < 0.05.
    record = {**RECORD, "calibration_animal_coverage": {"min": 0.86, "max": 0.9, "animals": 60}}
    two = {"r1": BLOCKS["r1"], "r3": BLOCKS["r3"]}
    out = certification_block(record, 5.0, 2.5, pooled, two, ANIMALS, "all_conditions")
    assert any("Possible distribution shift: 2 of 2" in w and "probability 0.033" in w
               and "has probability 0.0011" in w for w in out["warnings"])
    unfitted = certification_block(None, 5.0, 5.0, {"all_conditions": pooled["all_conditions"]},
                                   BLOCKS, ANIMALS, "all_conditions")
    assert unfitted["guarantee"].startswith("No guarantee") and unfitted["alerts"] == []
