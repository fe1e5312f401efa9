"""calibration.json records which registered_distance score its threshold is of."""

from __future__ import annotations

import sys

import pytest

from trackverify.benchmark.certify.calibration_file import (CALIBRATION_FORMAT, calibration_content,
                                                  load_calibration, write_calibration)
from trackverify.benchmark.certify.targets import CalibrationTarget
from trackverify.errors import InputError

TARGET = CalibrationTarget("target_selective_risk", 0.01, None, None)
RECORD = {"threshold": 2.5, "guarantee": "No guarantee: selective risk"}


def _content(verifier: str, options: dict) -> dict:
    return {"format": CALIBRATION_FORMAT, "trackverify_version": "test",
            "verifier": {"name": verifier, "evidence": "independent", "options": options},
            "threshold_um": 2.5, "target": TARGET.to_json(), "guarantee": "none",
            "assumption": None, "calibration_animals": None,
            "smallest_reachable_target": None, "fit": {}, "partitions_sha256": None}


def test_the_score_kind_is_written_only_when_given():
    common = dict(version="t", verifier="registered_distance", evidence="independent",
                  ambiguity_k=0.0, record=RECORD, target=TARGET, partitions_sha256=None)
    assert calibration_content(**common, score="relative")["verifier"]["options"] == {
        "ambiguity_k": 0.0, "score": "relative"}
    assert calibration_content(**common)["verifier"]["options"] == {"ambiguity_k": 0.0}


@pytest.mark.parametrize("verifier, options, expected", [
    ("registered_distance", {"ambiguity_k": 0.0, "score": "relative"}, "relative"),
    ("registered_distance", {"ambiguity_k": 0.0, "score": "distance"}, "distance"),
    # written before the relative score existed: its threshold is of the plain distance
    ("registered_distance", {"ambiguity_k": 0.0}, "distance"),
    ("fixed_distance", {"ambiguity_k": None}, None),
])
def test_the_score_kind_is_read_back(tmp_path, verifier, options, expected):
    write_calibration(tmp_path / "c.json", _content(verifier, options))
    assert load_calibration(tmp_path / "c.json").score == expected


def test_an_unknown_score_kind_is_refused(tmp_path):
    write_calibration(tmp_path / "c.json", _content("registered_distance", {"score": "ratio"}))
    with pytest.raises(InputError, match="verifier.options.score"):
        load_calibration(tmp_path / "c.json")


def test_the_track_window_is_written_only_when_given():
    common = dict(version="t", verifier="registered_distance", evidence="independent",
                  ambiguity_k=0.0, record=RECORD, target=TARGET, partitions_sha256=None)
    assert calibration_content(**common, score="distance", track_window=2)["verifier"][
        "options"] == {"ambiguity_k": 0.0, "score": "distance", "track_window": 2}
    assert "track_window" not in calibration_content(**common)["verifier"]["options"]


@pytest.mark.parametrize("verifier, options, expected", [
    ("registered_distance", {"ambiguity_k": 0.0, "track_window": 4}, 4),
    ("registered_distance", {"ambiguity_k": 0.0, "track_window": 0}, 0),
    # written before the pooling existed: its threshold is of unpooled scores
    ("registered_distance", {"ambiguity_k": 0.0}, 0),
    ("fixed_distance", {"ambiguity_k": None}, None),
])
def test_the_track_window_is_read_back(tmp_path, verifier, options, expected):
    write_calibration(tmp_path / "c.json", _content(verifier, options))
    assert load_calibration(tmp_path / "c.json").track_window == expected


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_a_bad_track_window_is_refused(tmp_path, bad):
    write_calibration(tmp_path / "c.json", _content("registered_distance", {"track_window": bad}))
    with pytest.raises(InputError, match="verifier.options.track_window"):
        load_calibration(tmp_path / "c.json")


def test_audit_applies_the_threshold_with_the_window_it_was_fitted_with(tmp_path):
    from trackverify.audit.verdicts import choose_threshold as _choose

    write_calibration(tmp_path / "c.json", _content("registered_distance",
                                                    {"ambiguity_k": 0.0, "track_window": 2}))
    _, verifier = _choose(None, tmp_path / "c.json", None)
    assert verifier.track_window == 2


def test_the_merge_k_is_written_only_when_given():
    common = dict(version="t", verifier="registered_distance", evidence="independent",
                  ambiguity_k=0.0, record=RECORD, target=TARGET, partitions_sha256=None)
    assert calibration_content(**common, track_window=1, merge_k=2)["verifier"][
        "options"] == {"ambiguity_k": 0.0, "track_window": 1, "merge_k": 2.0}
    assert "merge_k" not in calibration_content(**common, track_window=1)["verifier"]["options"]


@pytest.mark.parametrize("verifier, options, expected", [
    ("registered_distance", {"ambiguity_k": 0.0, "merge_k": 2}, 2.0),
    ("registered_distance", {"ambiguity_k": 0.0, "merge_k": 1.5}, 1.5),
    ("registered_distance", {"ambiguity_k": 0.0, "merge_k": 0}, 0.0),
    # written before the rule existed: its threshold is of scores without it (off)
    ("registered_distance", {"ambiguity_k": 0.0, "track_window": 1}, 0.0),
    ("fixed_distance", {"ambiguity_k": None}, None),
])
def test_the_merge_k_is_read_back(tmp_path, verifier, options, expected):
    write_calibration(tmp_path / "c.json", _content(verifier, options))
    got = load_calibration(tmp_path / "c.json").merge_k
    assert got == expected and (got is None or type(got) is float)


def test_a_run_records_the_merge_k_and_reads_it_back(tmp_path):
    """The run's options (recorded_options of the fitted verifier) into the file and back
    into the verifier audit builds."""
    from trackverify.audit.verdicts import choose_threshold as _choose
    from trackverify.verifiers import recorded_options
    from trackverify.verifiers.registered_distance import RegisteredDistance

    fitted = RegisteredDistance(merge_k=2.0, track_window=1)
    content = calibration_content(version="t", verifier=fitted.name, evidence=fitted.evidence,
                                  record=RECORD, target=TARGET, partitions_sha256=None,
                                  **recorded_options(fitted))
    assert content["verifier"]["options"] == {"ambiguity_k": 0.0, "score": "distance",
                                              "track_window": 1, "merge_k": 2.0}
    write_calibration(tmp_path / "c.json", content)
    _, verifier = _choose(None, tmp_path / "c.json", None)
    assert verifier.merge_k == 2.0 and verifier.track_window == 1
    # a file without the key builds the verifier with the rule off, whatever the default
    write_calibration(tmp_path / "old.json", _content("registered_distance",
                                                      {"ambiguity_k": 0.0, "track_window": 1}))
    _, old = _choose(None, tmp_path / "old.json", None)
    assert old.merge_k == 0.0


@pytest.mark.parametrize("bad", [-1, -0.5, True, "2", [2], 10 ** 400])
def test_a_bad_merge_k_is_refused(tmp_path, bad):
    write_calibration(tmp_path / "c.json", _content("registered_distance", {"merge_k": bad}))
    with pytest.raises(InputError, match="verifier.options.merge_k"):
        load_calibration(tmp_path / "c.json")


# an integer past the float range (JSON writes it out in digits) has no float: refused, not
# an OverflowError
@pytest.mark.parametrize("bad", [True, "2.5", None, [2.5], 10 ** 400, -(10 ** 309)])
def test_a_threshold_that_is_not_a_finite_number_is_refused(tmp_path, bad):
    write_calibration(tmp_path / "c.json", {**_content("fixed_distance", {"ambiguity_k": None}),
                                            "threshold_um": bad})
    with pytest.raises(InputError, match="'threshold_um' must be a finite number$"):
        load_calibration(tmp_path / "c.json")


@pytest.mark.parametrize("good", [0, 2, 2.5, sys.float_info.max, int(sys.float_info.max),
                                  -int(sys.float_info.max)])
def test_a_threshold_that_is_a_finite_number_is_read_as_a_float(tmp_path, good):
    write_calibration(tmp_path / "c.json", {**_content("fixed_distance", {"ambiguity_k": None}),
                                            "threshold_um": good})
    threshold = load_calibration(tmp_path / "c.json").threshold_um
    assert threshold == good and type(threshold) is float


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("sha256"), "its content does not match its sha256 (it was edited after "
                                "it was written)"),
    (lambda d: d.update(sha256=None), "its content does not match its sha256 (it was edited "
                                      "after it was written)"),
    (lambda d: d.update(threshold_um=3.0), "its content does not match its sha256 (it was "
                                           "edited after it was written)"),
    # a missing key is named first, with or without a hash
    (lambda d: (d.pop("guarantee"), d.pop("sha256")), "missing key(s) ['guarantee']"),
    (lambda d: d.pop("fit"), "missing key(s) ['fit']"),
])
def test_a_file_without_its_hash_or_edited_is_refused(tmp_path, edit, message):
    import json

    path = write_calibration(tmp_path / "c.json", _content("fixed_distance", {"ambiguity_k": None}))
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        load_calibration(path)
    assert str(caught.value) == f"{path}: not a valid calibration file: {message}"
