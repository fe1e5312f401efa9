"""`run --calibrate target_false_certification_rate=...` end to end: the guarantee in
results.json and the report, calibration.json, refusals with the smallest reachable target."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SMALL, built_once, make_cohort, run_cli
from trackverify.benchmark.certify import load_calibration
from trackverify.errors import InputError


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """12 animals: 1 train, 5 calibration (the guarantee's animals), 6 test; made once for
    the suite (read only)."""
    return built_once(tmp_path_factory, "certify-cohort",
                      lambda root: make_cohort(root, "train=0.1,calibration=0.4,test=0.5"))


def _run(cohort, out, target, *options):
    root, data = cohort
    result = run_cli("run", "--data", data, "--partitions", root / "partitions.json",
                     "--calibrate", target, *SMALL, *options, "--out", out)
    return result, out


@pytest.fixture(scope="module")
def crc_run(cohort, tmp_path_factory):
    """The guarantee's run (read only), once for the suite."""
    def build(folder):
        result, out = _run(cohort, folder / "crc", "target_false_certification_rate=0.2",
                           "--fit-ambiguity-k")
        assert result.returncode == 0, result.stderr
        return result, out
    return built_once(tmp_path_factory, "certify-crc", build)


def test_crc_run_states_the_guarantee_and_checks_it_on_test_animals(cohort, crc_run):
    result, out = crc_run
    results = json.loads((out / "results.json").read_text())
    certification = results["certification"]
    assert certification["fitted"] and certification["method"] == "crc"
    assert "exchangeable" in certification["assumption"]
    assert "at most 0.2" in certification["guarantee"]
    # 5 calibration animals, each with errors: 1/(5+1) = 0.1667 rounded up to two digits.
    assert certification["smallest_reachable_target"] == 0.17
    assert "smallest reachable target: 0.17" in result.stdout
    partitions = json.loads((cohort[0] / "partitions.json").read_text())["partitions"]
    assert results["calibration"]["recordings"] == sorted(partitions["calibration"])
    # asked to fit k (--fit-ambiguity-k): on the train animal only, never the guarantee's
    assert results["calibration"]["ambiguity_k_recordings"] == partitions["train"]
    assert results["calibration"]["ambiguity_k_fitted"] is True
    threshold = results["verifier"]["threshold_um"]
    assert threshold == certification["threshold_um"] != 5.0
    # The evaluated per-animal FCR, recomputed from the written rows (one recording per animal).
    rows = pd.read_parquet(out / "observations.parquet")
    errors = rows[rows["error"] == 1]
    certified = np.isfinite(errors["score"]) & (errors["score"] <= threshold)
    expected = certified.groupby(errors["recording"]).mean()
    animals = pd.read_csv(cohort[1] / "recordings.csv").set_index("recording")["animal_id"]
    got = certification["evaluated"]["per_animal_fcr"]
    assert got == pytest.approx({animals[r]: v for r, v in expected.items()})
    assert certification["evaluated"]["mean_fcr"] == pytest.approx(expected.mean())
    # The consistency verdict keeps its declared 5 um rule, never the fitted threshold.
    for block in results["anatomical_consistency"].values():
        assert block["threshold_um"] == 5.0 and block["verifier_threshold"] == threshold


def test_calibration_file_round_trip_and_tamper(crc_run, tmp_path):
    _, out = crc_run
    results = json.loads((out / "results.json").read_text())
    calibration = load_calibration(out / "calibration.json")
    assert calibration.threshold_um == results["verifier"]["threshold_um"]
    assert calibration.verifier == results["verifier"]["name"]
    assert calibration.guarantee == results["certification"]["guarantee"]
    assert calibration.assumption == results["certification"]["assumption"]
    assert calibration.calibration_animals == 5
    edited = json.loads((out / "calibration.json").read_text())
    edited["threshold_um"] = 50.0
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(InputError, match="sha256"):
        load_calibration(tmp_path / "edited.json")


def test_report_is_built_from_the_run(crc_run):
    _, out = crc_run
    results = json.loads((out / "results.json").read_text())
    report = (out / "report.html").read_text()
    start = report.index("Read this first")
    box = report[start:report.index("</section>", start)]
    assert f"Verifier: {results['verifier']['name']}" in box
    assert "fitted on the calibration animals" in box and "exchangeable" in box
    assert " um " not in report and "µm" in report
    # Red exactly when the run raised alerts.
    assert ('class="caveats alert"' in report) == bool(results["certification"]["alerts"])
    for condition, block in results["anatomical_verification"]["pooled"].items():
        fcr = block["false_certification_rate"]
        if condition != "all_conditions" and fcr is not None and fcr > 0.5:
            assert any(a.startswith(condition + ":") for a in results["certification"]["alerts"])


@pytest.mark.parametrize("target, smallest", [
    ("target_false_certification_rate=0.1", "0.17"),             # crc: 1/6 = 0.1667
    ("target_false_certification_rate=0.3,delta=0.1", "0.37"),   # ltt: 1 - 0.1**(1/5) = 0.3690
])
def test_unreachable_target_is_exit_2_with_the_smallest(cohort, target, smallest, tmp_path):
    result, out = _run(cohort, tmp_path / "refused", target)
    assert result.returncode == 2
    assert "with 5 calibration animal(s) no threshold can guarantee" in result.stderr
    assert f"the smallest is {smallest}" in result.stderr
    assert not (out / "results.json").exists()


def test_trivial_selective_risk_target_warns_in_words(cohort, tmp_path):
    # Prevalence here is far below 0.5: certifying everything meets the target.
    result, out = _run(cohort, tmp_path / "selective", "target_selective_risk=0.5")
    assert result.returncode == 0, result.stderr
    certification = json.loads((out / "results.json").read_text())["certification"]
    assert certification["guarantee"].startswith("No guarantee")
    assert any("at or below the selective-risk target" in w for w in certification["warnings"])
    assert "WARNING: The calibration rows' error prevalence" in result.stdout
    # Not asked to fit k: registered_distance keeps its declared band, 0.
    fit = json.loads((out / "results.json").read_text())["calibration"]
    assert (fit["ambiguity_k"], fit["ambiguity_k_fitted"], fit["ambiguity_k_recordings"]) == (0.0, False, [])


def test_fitting_k_without_train_animals_keeps_the_declared_band(cohort, tmp_path):
    """Asked to fit k for a guarantee, with every fit animal in calibration: k would have to
    come from the guarantee's own animals, so the declared 0.7 stays and a note says why."""
    root, data = cohort
    split = run_cli("split", "--recordings", data / "recordings.csv", "--fractions",
                    "calibration=0.5,test=0.5", "--seed", 3, "--out", tmp_path / "partitions.json")
    assert split.returncode == 0, split.stderr
    config = tmp_path / "run.toml"
    config.write_text("[run]\nambiguity_k = 0.7\nfit_ambiguity_k = true\n")
    out = tmp_path / "out"
    result = run_cli("run", "--data", data, "--partitions", tmp_path / "partitions.json",
                     "--calibrate", "target_false_certification_rate=0.2", *SMALL,
                     "--config", config, "--no-rows", "--out", out)
    assert result.returncode == 0, result.stderr
    results = json.loads((out / "results.json").read_text())
    fit = results["calibration"]
    assert (fit["ambiguity_k"], fit["ambiguity_k_fitted"], fit["ambiguity_k_recordings"]) == (0.7, False, [])
    assert "no train animals" in fit["ambiguity_k_note"] and results["settings"]["ambiguity_k"] == 0.7
    # The file's threshold is fixed_distance's (the primary verifier), which has no band: null,
    # so applying the file sets no option of another verifier.
    written = json.loads((out / "calibration.json").read_text())["verifier"]
    assert written["name"] == "fixed_distance" and written["options"] == {"ambiguity_k": None}
    assert load_calibration(out / "calibration.json").ambiguity_k is None

