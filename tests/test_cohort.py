"""Cohorts: partitions and calibration through `run`, intervals by animal, executors agree."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import SMALL, built_once, run_cli


def run_json(out):
    return json.loads((out / "results.json").read_text())


def test_calibrate_fits_on_calibration_and_reports_test(cohort, tmp_path):
    root, data = cohort
    out = tmp_path / "calibrated"
    result = run_cli("run", "--data", data, "--partitions", root / "partitions.json",
                     "--calibrate", "target_selective_risk=0.01", *SMALL, "--out", out)
    assert result.returncode == 0, result.stderr
    results = run_json(out)
    partitions = json.loads((root / "partitions.json").read_text())["partitions"]
    assert results["partitions"]["evaluated"] == "test"
    assert sorted(results["recordings"]) == sorted(partitions["test"])
    fit = results["calibration"]
    assert sorted(fit["recordings"]) == sorted(partitions["train"] + partitions["calibration"])
    assert not set(fit["recordings"]) & set(partitions["test"])
    assert fit["selective_risk"] <= 0.01 and results["verifier"]["threshold_um"] == fit["threshold"]
    # registered_distance (compared side by side) keeps its declared band: without
    # fit_ambiguity_k calibrating changes the threshold only.
    assert (fit["ambiguity_k"], fit["ambiguity_k_fitted"], fit["ambiguity_k_recordings"]) == (0.0, False, [])
    assert results["settings"]["ambiguity_k"] == 0.0 and "fit_ambiguity_k" not in results["settings"]
    # the file's threshold is fixed_distance's (the primary verifier), which has no band
    options = json.loads((out / "calibration.json").read_text())["verifier"]["options"]
    assert options == {"ambiguity_k": None}
    # 6 test animals: intervals by animal exist and bracket the pooled estimate.
    interval = results["anatomical_verification"]["pooled"]["all_conditions"]["intervals"]["certified_coverage"]
    coverage = results["anatomical_verification"]["pooled"]["all_conditions"]["certified_coverage"]
    assert interval["animals"] == 6 and interval["ci"][0] <= coverage <= interval["ci"][1]


def test_ambiguity_k_is_the_median_over_the_fit_recordings_whatever_the_jobs(cohort, tmp_path):
    """k is fitted one fit recording at a time (in parallel with --jobs); it must equal the
    median of clean d / sigma[frame] pooled over every row of the train + calibration
    recordings (frames after the anchor frame 0), computed here from the verifier's distance
    and registration scale, not from the fitting functions. The pooled median differs from
    the median of per-recording medians on this cohort, so pooling per recording is caught."""
    from trackverify.benchmark.dataset import load_dataset
    from trackverify.verifiers.registered_distance import RegisteredDistance

    root, data = cohort
    partitions = json.loads((root / "partitions.json").read_text())["partitions"]
    fit_names = partitions["train"] + partitions["calibration"]
    dataset = load_dataset(data)
    ratios = []
    for _, source in dataset.sources(fit_names):
        clean = source.load()
        verifier = RegisteredDistance(ambiguity_k=0.0, score="distance",
                                      track_window=0)  # the plain d in um, not pooled
        distance = verifier.score(clean)
        sigma = verifier.register(clean)[1].sigma[clean["frame"].to_numpy()]
        keep = (clean["frame"].to_numpy() > 0) & np.isfinite(distance) & (sigma > 0)
        ratios.append(distance[keep] / sigma[keep])
    expected = float(np.median(np.concatenate(ratios)))
    assert expected != pytest.approx(float(np.median([np.median(r) for r in ratios])), rel=1e-9)
    out = tmp_path / "jobs2"
    config = tmp_path / "fit.toml"
    config.write_text("[run]\nfit_ambiguity_k = true\n")
    result = run_cli("run", "--data", data, "--partitions", root / "partitions.json",
                     "--calibrate", "target_selective_risk=0.01", *SMALL, "--jobs", 2,
                     "--no-rows", "--config", config, "--out", out)
    assert result.returncode == 0, result.stderr
    results = run_json(out)
    fit = results["calibration"]
    assert fit["ambiguity_k"] == expected and fit["ambiguity_k_fitted"] is True
    assert sorted(fit["ambiguity_k_recordings"]) == sorted(fit_names)
    assert results["settings"]["ambiguity_k"] == expected and results["settings"]["fit_ambiguity_k"]
    # fitted for registered_distance (compared side by side); the file's threshold is
    # fixed_distance's (the primary verifier), which has no band
    options = json.loads((out / "calibration.json").read_text())["verifier"]["options"]
    assert options == {"ambiguity_k": None}


def test_fit_ambiguity_k_without_calibrate_is_refused(cohort, tmp_path):
    _, data = cohort
    result = run_cli("run", "--data", data, "--fit-ambiguity-k", *SMALL, "--out", tmp_path / "o")
    assert result.returncode == 2 and "fit_ambiguity_k needs --calibrate" in result.stderr
    assert not (tmp_path / "o").exists()


def test_calibrate_without_partitions_is_refused(cohort, tmp_path):
    _, data = cohort
    result = run_cli("run", "--data", data, "--calibrate", "target_selective_risk=0.01", *SMALL,
                     "--out", tmp_path / "o")
    assert result.returncode == 2 and "nothing to fit on" in result.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_calibrate_argument_is_checked(cohort, tmp_path):
    _, data = cohort
    result = run_cli("run", "--data", data, "--calibrate", "risk=high", "--out", tmp_path / "o")
    assert result.returncode == 2 and "target_selective_risk" in result.stderr


def test_fewer_than_five_animals_have_no_interval(tmp_path):
    out = tmp_path / "o"
    assert run_cli("run", "--frames", 60, "--animals", 2, *SMALL, "--no-rows", "--out", out).returncode == 0
    interval = run_json(out)["tracking_gt"]["pooled"]["intervals"]["correct_observation_rate"]
    assert interval["ci"] is None and "2 animal(s)" in interval["reason"]
    assert not (out / "observations.parquet").exists()


@pytest.fixture(scope="module")
def reference_run(cohort, tmp_path_factory):
    """The cohort run with one process (``--jobs 1``), made once for the executor tests."""
    def build(folder):
        reference = folder / "reference-run"
        assert run_cli("run", "--data", cohort[1], *SMALL, "--jobs", 1, "--out", reference).returncode == 0
        return reference
    return built_once(tmp_path_factory, "cohort-reference-run", build)


@pytest.mark.parametrize("executor, jobs", [("process", 2), ("local", 1)])
def test_executors_and_job_counts_give_identical_bytes(cohort, reference_run, executor, jobs,
                                                       tmp_path):
    root, data = cohort
    reference = reference_run
    out = tmp_path / executor
    result = run_cli("run", "--data", data, *SMALL, "--jobs", jobs, "--executor", executor, "--out", out)
    assert result.returncode == 0, result.stderr
    for name in ("results.json", "observations.parquet", "report.html"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def test_ray_executor_gives_identical_bytes(cohort, reference_run, tmp_path):
    pytest.importorskip("ray", reason="the 'ray' extra is not installed")
    root, data = cohort
    reference = reference_run  # one process: what --executor local gives
    out = tmp_path / "ray"
    result = run_cli("run", "--data", data, *SMALL, "--executor", "ray", "--jobs", 2, "--out", out)
    assert result.returncode == 0, result.stderr
    assert (out / "results.json").read_bytes() == (reference / "results.json").read_bytes()


@pytest.mark.parametrize("fit_k", [False, True])
def test_each_verifier_is_built_once_per_run_and_once_more_for_a_fitted_band(
        cohort, fit_k, tmp_path, monkeypatch):
    # 12 recordings, 6 of them scored for the fit: the run builds fixed_distance (the run's
    # verifier, also first of the default compared ones) and registered_distance once each
    # (2), and again once fit_ambiguity_k has fitted the band they are built with (4), not
    # once per recording
    import trackverify.benchmark.run as run
    from trackverify.benchmark.config import build_config

    root, data = cohort
    built = []
    real = run.load_verifier
    monkeypatch.setattr(run, "load_verifier", lambda spec, options: built.append(spec)
                        or real(spec, options))
    config = build_config({"start": 10, "recovery_end": 30, "fit_ambiguity_k": fit_k})
    assert config.compare_verifiers == ("fixed_distance", "registered_distance")
    run.run_job(config, tmp_path / "out", data, root / "partitions.json",
                target_selective_risk=0.01)
    assert built == ["fixed_distance", "registered_distance"] * (2 if fit_k else 1)
    assert run_json(tmp_path / "out")["calibration"]["ambiguity_k_fitted"] is fit_k
