"""The verdict rules of the converted-dataset verifier, called directly with hand-built
inputs: the decoder fraction (agent BA >= 0.95 x reference BA), the output-class
comparison, the missing-pairing rules, the required-files rule and the overall verdict."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.conversion import checks as C
from trackverify.conversion.decoder import DecoderResult


def _decoded(names, ba):
    return DecoderResult(output_names=list(names), balanced_accuracy=list(ba),
                         chance=[0.5] * len(names), chance_normalised=[None] * len(names),
                         n_classes=[2] * len(names), n_train_trials=8, n_test_trials=2)


def test_decoder_fraction_boundary_is_inclusive():
    # reference output i is paired with agent output j: {0: 1, 1: 0, 2: 2, 3: 3}
    ref = _decoded(["a", "b", "c", "d"], [1.0, 0.5, 0.8, None])
    agent = _decoded(["B", "A", "C", "D"], [0.475, 0.95, None, 0.9])
    out = C._decoder_comparison(agent, ref, {0: 1, 1: 0, 2: 2, 3: 3}, {"passed": True})
    rows = out["details"]["outputs"]
    assert [(r["reference"], r["agent"]) for r in rows] == [("a", "A"), ("b", "B"), ("c", "C"),
                                                            ("d", "D")]
    # 0.95 = 0.95 x 1.0 and 0.475 = 0.95 x 0.5 pass (>=); undefined BA on either side fails
    assert [r["passed"] for r in rows] == [True, True, False, False]
    assert [r["agent_ba"] for r in rows] == [0.95, 0.475, None, 0.9]
    assert [r["reference_ba"] for r in rows] == [1.0, 0.5, 0.8, None]
    assert rows[0]["ratio"] == 0.95 and rows[1]["ratio"] == 0.95
    assert rows[2]["ratio"] is None and rows[3]["ratio"] is None
    assert [r["band"] for r in rows] == ["agreement", "agreement", None, None]
    assert out["passed"] is False and out["required"] is True
    assert out["summary"] == ("BA agent/reference: A 0.95/1, B 0.475/0.5, C undefined, "
                              "D undefined")
    assert out["details"]["threshold"] == 0.95
    assert out["details"]["agent"] == agent.to_dict()
    assert out["details"]["reference"] == ref.to_dict()


def test_decoder_fraction_just_below_fails():
    ref = _decoded(["a"], [1.0])
    below = C._decoder_comparison(_decoded(["a"], [0.9499]), ref, {0: 0}, {"passed": True})
    assert below["passed"] is False and below["details"]["outputs"][0]["passed"] is False
    above = C._decoder_comparison(_decoded(["a"], [1.2]), ref, {0: 0}, {"passed": True})
    assert above["passed"] is True and above["details"]["outputs"][0]["band"] == "blue"
    assert above["summary"] == "BA agent/reference: a 1.2/1"


@pytest.mark.parametrize("matching, passed, summary", [
    (None, None, "unavailable: needs the output matching (B4)"),
    (False, False, "no one-to-one output pairing (B4)"),
])
def test_missing_pairing(matching, passed, summary):
    ref, agent = _decoded(["a"], [1.0]), _decoded(["a"], [1.0])
    out = C._decoder_comparison(agent, ref, None, {"passed": matching})
    assert (out["passed"], out["summary"], out["required"]) == (passed, summary, True)
    assert out["details"] == {"agent": agent.to_dict(), "reference": ref.to_dict()}
    classes = C._output_classes({}, {}, None, {"passed": matching})
    assert (classes["passed"], classes["summary"], classes["details"]) == (passed, summary, {})


def _outputs(names, rows):
    """One session of one trial whose output variables take the values ``rows``."""
    return {"output_names": list(names), "output": [[np.array(rows, dtype=float)]]}


def test_output_classes_compare_paired_class_counts():
    # reference: "x" 0..2 (3 classes), "y" 0..1 (2); agent: "Y" 0..1 (2), "X" 1..2 (2)
    ref = _outputs(["x", "y"], [[0, 1, 2], [0, 1, 1]])
    agent = _outputs(["Y", "X"], [[0, 1, 0], [1, 2, 2]])
    out = C._output_classes(agent, ref, {0: 1, 1: 0}, {"passed": True})
    rows = out["details"]["outputs"]
    assert rows == [
        {"reference": "x", "agent": "X", "reference_classes": 3, "agent_classes": 2,
         "passed": False},
        {"reference": "y", "agent": "Y", "reference_classes": 2, "agent_classes": 2,
         "passed": True}]
    assert out["passed"] is False and out["summary"] == "differ: X"
    same = C._output_classes(agent, _outputs(["y", "x"], [[0, 1, 1], [2, 2, 1]]),
                             {0: 0, 1: 1}, {"passed": True})
    assert same["passed"] is True and same["summary"] == "equal for every output"


def _check(passed, required=True):
    return {"passed": passed, "required": required, "summary": "", "details": {}}


@pytest.mark.parametrize("states, want", [
    ([True, True], True),
    ([True, None], None),
    ([None, False], False),
    ([False, True], False),
    ([], True),
])
def test_verdict_of_required_checks(states, want):
    checks = {f"c{k}": _check(p) for k, p in enumerate(states)}
    assert C.verdict(checks) is want
    # a check that is not required never changes the verdict
    for extra in (False, None, True):
        assert C.verdict({**checks, "recorded": _check(extra, required=False)}) is want


def test_required_files_present_and_non_empty(tmp_path):
    for name in C.REQUIRED_FILES:
        (tmp_path / name).write_text("x")
    out = C.check_required_files(tmp_path)
    assert out["passed"] is True and out["summary"] == "all 5 present and non-empty"
    assert out["details"]["files"]["README.md"] == {"path": "README.md", "present": True,
                                                    "non_empty": True}
    # the logs are recorded, never required
    assert out["details"]["expected_logs"]["conversion_full_out.txt"] == {
        "path": None, "present": False, "non_empty": False}
    (tmp_path / "README.md").write_text("")
    (tmp_path / "convert_data.py").unlink()
    out = C.check_required_files(tmp_path)
    assert out["passed"] is False
    assert out["summary"] == "missing or empty: convert_data.py, README.md"
    assert out["details"]["files"]["README.md"] == {"path": "README.md", "present": True,
                                                    "non_empty": False}


def _data(in_names, out_names, inputs, outputs, n_trials=2, neurons=3):
    """One session of ``n_trials`` trials of 4 bins; every trial has the same inputs and
    outputs (rows = variables)."""
    trial = lambda rows, d: np.array(rows, dtype=float).reshape(d, 4)  # noqa: E731
    return {"neural": [[np.zeros((neurons, 4)) for _ in range(n_trials)]],
            "input": [[trial(inputs, len(in_names)) for _ in range(n_trials)]],
            "output": [[trial(outputs, len(out_names)) for _ in range(n_trials)]],
            "input_names": list(in_names), "output_names": list(out_names),
            "subjects": ["m1"]}


def _no_embed(names):
    raise AssertionError(f"identical names need no embedding ({names})")


def test_matching_identical_names():
    ref = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2])
    inp, out, pairing = C._matching(ref, ref, _no_embed)
    assert (inp["passed"], inp["summary"]) == (True, "mean cost 0 (< 1.0)")
    assert set(inp["details"]) == {"mean_cost", "threshold", "pairs", "n_reference", "n_agent"}
    assert inp["details"]["pairs"][0]["reference"] == "speed"
    assert (out["passed"], out["summary"]) == (True, "mean cost 0 (< 1.0)")
    assert pairing == {0: 0}


def test_matching_passes_the_embedding_on():
    calls = []

    def embed(names):
        calls.append(list(names))
        return np.array([[1.0, 0.0]] * len(names))  # every cosine 1

    ref = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2])
    agent = _data(["velocity"], ["decision"], [0, 1, 2, 3], [0, 1, 1, 2])
    inp, out, pairing = C._matching(agent, ref, embed)
    assert calls == [["speed", "velocity"], ["choice", "decision"]]
    assert inp["passed"] is True and out["passed"] is True and pairing == {0: 0}


def test_matching_unavailable_and_incomplete():
    def unavailable(names):
        raise C.EmbeddingsUnavailable("no model here")

    ref = _data(["speed"], ["choice", "lick"], [0, 1, 2, 3], [[0, 1, 1, 2], [0, 1, 0, 1]])
    agent = _data(["velocity"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2])
    inp, out, pairing = C._matching(agent, ref, unavailable)
    assert inp == {"passed": None, "required": True, "summary": "unavailable: no model here",
                   "details": {"available": False, "reason": "no model here"}}
    # one agent output for two reference outputs: no pairing, the reason as summary
    assert out["passed"] is False and pairing is None
    assert out["summary"] == "1 output variables, the reference has 2"
    # an input pairing is never taken as the output pairing
    same_inputs = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2])
    _, out, pairing = C._matching(same_inputs, ref, _no_embed)
    assert pairing is None and out["passed"] is False


def test_matching_summaries():
    # outputs recoded 0..2 -> 0..4: paired by name at cost 0, but the ranges differ
    ref = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2])
    agent = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 2, 2, 4])
    _, out, pairing = C._matching(agent, ref, _no_embed)
    assert out["summary"] == "mean cost 0 (< 1.0); output ranges differ"
    assert out["passed"] is False and pairing == {0: 0}
    # no input variable on either side: nothing to pair
    empty = _data([], ["choice"], [], [0, 1, 1, 2])
    inp, _, _ = C._matching(empty, empty, _no_embed)
    assert (inp["passed"], inp["summary"]) == (True, "no variables")


def test_statistics_check_summaries():
    ref = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2], n_trials=10)
    same = C._statistics_check(ref, ref)
    assert (same["passed"], same["summary"]) == (True, "all within tolerance")
    assert same["details"]["n_trials_total"]["ratio"] == 1.0
    # 8 of 10 trials (ratio 0.8) and 2 of 3 neurons (0.667): both out of [0.9, 1.1]
    fewer = _data(["speed"], ["choice"], [0, 1, 2, 3], [0, 1, 1, 2], n_trials=8, neurons=2)
    out = C._statistics_check(fewer, ref)
    assert out["passed"] is False
    assert out["summary"] == "out of tolerance: n_trials_total, n_neurons_total"
    assert out["details"]["n_trials_total"]["ratio"] == 0.8


def test_output_classes_name_every_differing_output():
    ref = _outputs(["x", "y"], [[0, 1, 2], [0, 1, 1]])
    agent = _outputs(["X", "Y"], [[0, 1, 1], [0, 1, 2]])
    out = C._output_classes(agent, ref, {0: 0, 1: 1}, {"passed": True})
    assert out["summary"] == "differ: X, Y" and out["passed"] is False


def _submission(folder, data=None, sample=None):
    """A submission folder of the synthetic dataset; ``sample`` replaces sample_data.pkl
    (bytes), or removes it (False)."""
    from trackverify.conversion.synthetic import SyntheticSpec, make_dataset, write_submission

    data = make_dataset(SyntheticSpec(n_sessions=3, n_trials=4, n_neurons=6, n_bins=5)) \
        if data is None else data
    write_submission(folder, data)
    if sample is False:
        (folder / "sample_data.pkl").unlink()
    elif sample is not None:
        (folder / "sample_data.pkl").write_bytes(sample)
    return folder


def _spec_data():
    from trackverify.conversion.synthetic import SyntheticSpec, make_dataset

    return make_dataset(SyntheticSpec(n_sessions=3, n_trials=4, n_neurons=6, n_bins=5))


def test_check_format_valid_missing_and_unloadable(tmp_path):
    check, data, warnings = C.check_format(_submission(tmp_path / "ok"))
    assert (check["passed"], check["summary"], warnings) == (True, "valid", [])
    assert data is not None and check["details"]["sample_data.pkl"]["n_errors"] == 0
    # the sample is optional
    check, _, _ = C.check_format(_submission(tmp_path / "nosample", sample=False))
    assert (check["passed"], check["summary"]) == (True, "valid")
    assert check["details"]["sample_data.pkl"] == {"present": False}
    folder = _submission(tmp_path / "nodata")
    (folder / "converted_data.pkl").unlink()
    check, data, _ = C.check_format(folder)
    assert (check["passed"], check["summary"], data) == (False, "converted_data.pkl missing",
                                                         None)
    folder = _submission(tmp_path / "garbage")
    (folder / "converted_data.pkl").write_bytes(b"not a pickle")
    check, _, _ = C.check_format(folder)
    assert check["passed"] is False
    assert check["summary"].startswith("converted_data.pkl not loadable: ")
    assert check["summary"] == "converted_data.pkl not loadable: " + \
        check["details"]["converted_data.pkl"]["error"]


def test_check_format_counts_errors_of_both_files(tmp_path):
    from trackverify.conversion.synthetic import malformed_variants

    bad = malformed_variants(_spec_data())
    # converted_data.pkl with errors, no sample: only its errors are counted
    check, data, _ = C.check_format(_submission(tmp_path / "a", bad["time_mismatch"],
                                                sample=False))
    n = check["details"]["converted_data.pkl"]["n_errors"]
    assert n >= 1 and data is None
    assert check["summary"] == f"{n} error(s): time_mismatch"
    # a valid dataset with an invalid sample: the sample's errors fail the check
    sample = _submission(tmp_path / "s", bad["non_finite"])
    check, data, _ = C.check_format(
        _submission(tmp_path / "b", sample=(sample / "sample_data.pkl").read_bytes()))
    m = check["details"]["sample_data.pkl"]["n_errors"]
    assert check["passed"] is False and data is not None
    assert check["summary"] == f"{m} error(s): non_finite"
    # an unloadable sample fails the check and says so
    check, _, _ = C.check_format(_submission(tmp_path / "c", sample=b"not a pickle"))
    assert check["passed"] is False
    assert check["summary"] == "sample_data.pkl not loadable: " + \
        check["details"]["sample_data.pkl"]["error"]


def test_check_format_warnings_name_file_count_and_first_message(tmp_path):
    from trackverify.conversion.synthetic import warning_variants

    data = warning_variants(_spec_data())["neural_not_float"]
    check, _, warnings = C.check_format(_submission(tmp_path, data, sample=False))
    entry = check["details"]["converted_data.pkl"]["warnings"]["neural_not_float"]
    assert check["passed"] is True
    assert warnings == [f"converted_data.pkl: {entry['count']} x neural_not_float (e.g. "
                        f"{entry['messages'][0]})"]


def _fake_decoder(monkeypatch, ba, cn):
    """run_checks with a decoder that returns fixed balanced accuracies (and records the
    configuration it was given)."""
    seen = []

    def run_decoder(data, config):
        seen.append(config)
        names = list(data["output_names"])
        return DecoderResult(output_names=names, balanced_accuracy=list(ba[:len(names)]),
                             chance=[0.5] * len(names),
                             chance_normalised=list(cn[:len(names)]),
                             n_classes=[2] * len(names), n_train_trials=8, n_test_trials=2)

    monkeypatch.setattr(C, "run_decoder", run_decoder)
    return seen


def test_run_checks_unsupervised_report(tmp_path, monkeypatch):
    from trackverify.conversion.decoder import DecoderConfig

    seen = _fake_decoder(monkeypatch, [0.9, 0.6], [None, 0.5])
    config = DecoderConfig(epochs=3)
    report = C.run_checks(_submission(tmp_path), None, config)
    assert seen == [config]
    checks = report["checks"]
    assert report["mode"] == "unsupervised" and report["passed"] is True
    assert list(checks) == ["required_files", "format", "variables", "decoder"]
    assert {k: checks["variables"][k] for k in ("passed", "required", "summary")} == \
        {"passed": None, "required": False, "summary": "recorded (no threshold)"}
    assert set(checks["variables"]["details"]) == {"input_ranges", "output_ranges",
                                                   "output_class_counts",
                                                   "output_class_fractions"}
    names = checks["decoder"]["details"]["outputs"]
    first, second = list(names)
    assert checks["decoder"]["summary"] == \
        f"chance-normalised BA (no threshold): {first} undefined, {second} 0.5"
    assert (checks["decoder"]["passed"], checks["decoder"]["required"]) == (None, False)
    assert report["warnings"] == ["expected logs missing or empty: " + ", ".join(C.EXPECTED_LOGS)]


def test_run_checks_skips_the_rest_after_a_format_error(tmp_path, monkeypatch):
    from trackverify.conversion.synthetic import malformed_variants

    _fake_decoder(monkeypatch, [1.0, 1.0], [1.0, 1.0])
    sub = _submission(tmp_path / "bad", malformed_variants(_spec_data())["time_mismatch"])
    ref = _submission(tmp_path / "ref")
    for reference, names in ((None, ["variables", "decoder"]),
                             (ref, ["summary_statistics", "input_matching", "output_matching",
                                    "output_classes", "decoder"])):
        report = C.run_checks(sub, reference)
        assert list(report["checks"]) == ["required_files", "format", *names]
        for name in names:
            assert report["checks"][name] == {
                "passed": None, "required": reference is not None, "details": {},
                "summary": "skipped: converted_data.pkl failed format validation"}
        assert report["passed"] is False
        assert not any("skipped" in w for w in report["warnings"])


def test_run_checks_supervised_warns_about_undecided_checks(tmp_path, monkeypatch):
    _fake_decoder(monkeypatch, [0.9, 0.9], [0.8, 0.8])
    folder = _submission(tmp_path / "sub")
    for name in C.EXPECTED_LOGS:
        (folder / name).write_text("log")

    def unavailable(names):
        raise C.EmbeddingsUnavailable("no model")

    data = _spec_data()
    data["input_names"] = [n + "_renamed" for n in data["input_names"]]
    sub = _submission(tmp_path / "renamed", data)
    for name in C.EXPECTED_LOGS:
        (sub / name).write_text("log")
    report = C.run_checks(sub, _submission(tmp_path / "ref"), embed=unavailable)
    assert report["mode"] == "supervised" and report["passed"] is None
    assert report["checks"]["input_matching"]["passed"] is None
    assert report["warnings"] == ["input_matching: unavailable: no model"]
    # the same decoder accuracy on both sides passes the decoder check
    assert report["checks"]["decoder"]["passed"] is True
    report = C.run_checks(folder, _submission(tmp_path / "ref2"), embed=unavailable)
    assert report["passed"] is True and report["warnings"] == []


def test_run_checks_refuses_a_missing_folder_or_a_file(tmp_path):
    with pytest.raises(C.InputError) as exc:
        C.run_checks(tmp_path / "nope")
    assert (exc.value.problem, exc.value.source) == ("folder not found", str(tmp_path / "nope"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(C.InputError) as exc:
        C.run_checks(tmp_path / "file")
    assert (exc.value.problem, exc.value.source) == ("not a folder", str(tmp_path / "file"))


def test_check_format_summary_lists_codes_and_parts(tmp_path):
    from trackverify.conversion.synthetic import malformed_variants

    bad = malformed_variants(_spec_data())
    sample = _submission(tmp_path / "s", bad["non_finite"])
    # errors in both files: the codes of both, sorted
    check, _, _ = C.check_format(_submission(tmp_path / "a", bad["time_mismatch"],
                                             sample=(sample / "sample_data.pkl").read_bytes()))
    n = sum(check["details"][f]["n_errors"] for f in ("converted_data.pkl", "sample_data.pkl"))
    assert check["summary"] == f"{n} error(s): non_finite, time_mismatch"
    # errors in the data and an unloadable sample: both parts
    check, _, _ = C.check_format(_submission(tmp_path / "b", bad["time_mismatch"],
                                             sample=b"not a pickle"))
    m = check["details"]["converted_data.pkl"]["n_errors"]
    assert check["summary"] == (f"{m} error(s): time_mismatch; sample_data.pkl not loadable: "
                                + check["details"]["sample_data.pkl"]["error"])
