"""The main job end to end: four outputs, determinism, config precedence, the report renders."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import (CHROMIUM, SMALL, built_once, chromium_dom, chromium_layout, observation_table, run_cli,
                            verify_control, verify_file)
from trackverify.benchmark.config import build_config
from trackverify.errors import ConfigError
from trackverify.report.numbers import fmt

OUTPUTS = ("results.json", "manifest.json", "report.html", "observations.parquet", "tracks.csv",
           "events.csv")


def _default_run(folder):
    out = folder / "trackverify-results"
    result = run_cli("run", "--out", out)
    assert result.returncode == 0, result.stderr
    return out, result


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """``trackverify run --out ...`` with every default, run once for the suite (read only)."""
    return built_once(tmp_path_factory, "default-run", _default_run)


def test_default_run_writes_the_four_outputs(default_run):
    out, result = default_run
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)
    assert "AUROC" in result.stdout


def test_the_terminal_states_the_reports_numbers_and_what_falsified_means(default_run):
    """The terminal's verifier lines are the report's answer sentence (AUROC* of the six
    corruptions, not the all-condition AUROC), the deformation verdict says what it means, and
    the run ends with the next step."""
    out, result = default_run
    results = json.loads((out / "results.json").read_text())
    report = (out / "report.html").read_text()
    for name, block in results["verifier_comparison"].items():
        six = block["populations"]["six_corruptions"]
        star = fmt(six["auroc_abstain_as_error"])
        assert f"{name} ({block['evidence']} evidence) ranks them with AUROC* {star}" in result.stdout
        assert f"AUROC* {star}" in report
    assert "Made by trackverify " in report and "the built-in development specimen" in report
    assert "Small deformation (neurons near their anchor-frame place): falsified in 1 of 1" \
        in result.stdout and "falsified for a recording when more than 5%" in result.stdout
    assert result.stdout.splitlines()[-1] == (f"Next: open {out}/report.html; to audit your own "
                                              "tracker's output, trackverify audit TRACKS "
                                              "--out DIR (README.md)")
    results = json.loads((out / "results.json").read_text())
    for block in ("tracking_gt", "anatomical_verification", "anatomical_consistency"):
        assert "rec000" in results[block]
    assert results["tracking_gt"]["rec000"]["correct_observation_rate"] == 1.0
    conditions = results["anatomical_verification"]["rec000"]
    assert set(conditions) == {"control", "single_frame_swap", "persistent_swap", "swap_and_recovery",
                               "nearby_swap", "fragmentation", "dropout", "all_conditions"}
    assert conditions["control"]["n_errors"] == 0
    assert conditions["control"]["false_certification_rate"] is None  # undefined, not 0
    assert results["partitions"]["members"]["development"] == ["rec000"]
    assert results["partitions"]["members"]["test"] == [] and results["partitions"]["evaluated"] == "development"
    assert results["calibration"] is None
    comparison = results["verifier_comparison"]
    assert {name: block["evidence"] for name, block in comparison.items()} == {
        "fixed_distance": "consistency", "registered_distance": "independent"}
    six = comparison["registered_distance"]["populations"]["six_corruptions"]
    assert six["n_errors"] == sum(conditions[c]["n_errors"] for c in conditions
                                  if c not in ("control", "all_conditions"))
    assert set(six["abstentions"]) == {"ambiguous", "missing_evidence", "contradicted", "merged"}
    # nearby_swap is one of the six: its counts cannot exceed theirs.
    nearby = comparison["registered_distance"]["populations"]["nearby_swap"]["abstentions"]
    assert all(nearby[key] <= six["abstentions"][key] for key in six["abstentions"])
    assert comparison["fixed_distance"]["populations"]["six_corruptions"]["abstentions"] is None
    # The specimen moves (motion "moderate"): most clean observations drift farther than the
    # 5 um threshold from their anchor-frame position, so the hypothesis is falsified. The
    # share is recomputed from the written positions (frame-0 position of each track).
    consistency = results["anatomical_consistency"]["rec000"]
    rows = pd.read_parquet(out / "observations.parquet")
    clean = rows[rows["condition"] == "control"]
    xyz = ["x_um", "y_um", "z_um"]
    anchor = clean[clean["frame"] == 0].set_index("track")[xyz]
    offset = clean[xyz].to_numpy() - anchor.loc[clean["track"]].to_numpy()
    share = float(((offset ** 2).sum(1) ** 0.5 > 5.0).mean())
    assert consistency["share_exceeding_threshold"] == pytest.approx(share, rel=1e-12)
    assert share > 0.05 and consistency["deformation_hypothesis"] == "falsified"


def test_observation_rows_carry_labels_and_scores(default_run):
    out, _ = default_run
    rows = pd.read_parquet(out / "observations.parquet")
    for column in ("condition", "is_control", "error", "score", "abstained"):
        assert column in rows.columns
    assert rows["condition"].nunique() == 7
    assert (rows["abstained"] == rows["score"].isna()).all()
    assert (rows.loc[rows["is_control"], "error"].to_numpy(float) == 0).all()  # NA fails too


def test_manifest_records_choices_config_and_version(default_run):
    out, _ = default_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["seed"] == 20261007 and manifest["config"]["start"] == 300
    swap = manifest["corruptions"]["rec000"]["persistent_swap"]
    assert swap["frames"] == [300, 1000] and len(swap["tracks"]) == 2
    assert "created_utc" in manifest and manifest["trackverify_version"]


def test_two_runs_are_byte_identical(default_run, tmp_path):
    out, _ = default_run
    again = tmp_path / "again"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "trackverify", "run", "--out", str(again)], check=True,
                   capture_output=True, env=env)
    for name in ("results.json", "report.html", "observations.parquet"):
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_verify_command_on_a_file(tmp_path):
    result, out = verify_file(observation_table(frames=12), tmp_path, "--start", 4,
                              "--recovery-end", 8)
    assert result.returncode == 0, result.stderr
    results = json.loads((out / "results.json").read_text())
    persistent = results["anatomical_verification"]["r"]["persistent_swap"]
    assert persistent["n_errors"] == 16  # two tracks x frames 4..11
    assert results["verifier"] == {"name": "fixed_distance", "evidence": "consistency",
                                   "threshold_um": 5.0}


def test_too_short_recording_exits_2(tmp_path):
    path = tmp_path / "obs.csv"
    observation_table(frames=12).to_csv(path, index=False)
    result = run_cli("verify", "--observations", path, "--out", tmp_path / "out")
    assert result.returncode == 2 and "too short" in result.stderr and "Traceback" not in result.stderr


def test_config_precedence_and_errors(tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text("[run]\nstart = 10\nrecovery_end = 20\n[specimen]\nframes = 50\n")
    config = build_config({"recovery_end": 30}, config_file=toml)
    assert (config.start, config.recovery_end, config.specimen.frames) == (10, 30, 50)
    for text, message in [("[run]\nstrat = 3\n", "unknown key"),
                          ("[run]\nthreshold_um = 'five'\n", "must be a number"),
                          ("[run]\nthreshold_um = -1.0\n", "must be > 0"),
                          ("[run]\nstart = 800\n", "recovery_end"),
                          ("[extra]\na = 1\n", "unknown section"),
                          ("[run\n", "not valid TOML")]:
        toml.write_text(text)
        with pytest.raises(ConfigError, match=message):
            build_config({}, config_file=toml)


@pytest.mark.parametrize("given, read", [(2, 2.0), (2.5, 2.5), (np.int64(3), 3.0),
                                         (np.float32(2.5), 2.5)])
def test_a_number_setting_takes_any_real_number_as_a_float(given, read):
    threshold = build_config({"threshold_um": given}).threshold_um
    assert threshold == read and type(threshold) is float


@pytest.mark.parametrize("given, message", [
    (True, "command line: --threshold-um must be a number, got True"),
    ("2", "command line: --threshold-um must be a number, got '2'"),
    # NaN and infinities are numbers to the type check; the setting's own range refuses them
    (float("nan"), "command line: threshold_um must be > 0 and finite, got nan"),
    (float("-inf"), "command line: threshold_um must be > 0 and finite, got -inf"),
])
def test_a_number_setting_refuses_bools_text_and_non_finite_values(given, message):
    with pytest.raises(ConfigError) as caught:
        build_config({"threshold_um": given})
    assert str(caught.value) == message


def test_bad_config_file_exits_2(tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text("[run]\nseed = 'x'\n")
    result = run_cli("run", "--config", toml, "--out", tmp_path / "out")
    assert result.returncode == 2 and "seed" in result.stderr and "Traceback" not in result.stderr


def test_help_is_readable():
    result = run_cli("--help")
    assert result.returncode == 0 and "trackverify run" in result.stdout
    # "Start here" in a lab's order: its own tracker's output first, the benchmark after.
    start = result.stdout[result.stdout.index("Start here"):]
    assert start.index("trackverify audit") < start.index("trackverify evaluate") < start.index("trackverify run")
    for command in ("run", "verify", "synth"):
        assert run_cli(command, "--help").returncode == 0


def test_synth_then_run_on_the_folder(tmp_path):
    data = tmp_path / "spec"
    assert run_cli("synth", "--animals", 2, "--groups", 2, "--frames", 40, "--neurons", 20,
                   "--motion", "still", "--out", data).returncode == 0
    recordings = pd.read_csv(data / "recordings.csv")
    assert list(recordings["provenance_group"]) == ["synthetic-0", "synthetic-1"]
    result = run_cli("run", "--data", data, "--start", 10, "--recovery-end", 20, "--out", tmp_path / "o")
    assert result.returncode == 0, result.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert set(results["tracking_gt"]) == {"rec000", "rec001", "pooled"}
    assert results["tracking_gt"]["pooled"]["reference_observations"] == sum(
        results["tracking_gt"][r]["reference_observations"] for r in ("rec000", "rec001"))


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian package 'chromium')")
def test_report_renders_in_headless_chromium_without_console_errors(default_run, tmp_path):
    out, _ = default_run
    report = (out / "report.html").resolve()
    html = report.read_text()
    # Self-contained: no scripts, no remote resources (XML namespace names are not fetched).
    for remote in ("<script", 'src="http', "href=\"http", "@import", "url(http"):
        assert remote not in html
    dom = chromium_dom(report, tmp_path / "profile")
    assert "anatomical_verification" in dom and dom.count("<svg") >= 3
    assert "rec000: per-track timeline (control condition)" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian package 'chromium')")
@pytest.mark.parametrize("width", [900, 1400])
def test_no_report_table_overflows_at_900_or_1400_px(default_run, tmp_path, width):
    out, _ = default_run
    layout = chromium_layout(out / "report.html", width, tmp_path)
    assert layout["tables"] >= 5
    assert layout["wide"] == [] and layout["page"] <= layout["view"], layout
    assert (tmp_path / f"{width}.png").stat().st_size > 10_000


def test_report_opens_with_the_answer_and_explains_its_numbers(default_run):
    out, _ = default_run
    html = (out / "report.html").read_text()
    results = json.loads((out / "results.json").read_text())
    answer = html[html.index('<section class="answer">'):html.index("</section>")]
    assert html.index('<section class="answer">') < html.index("Read this first")
    # The specimen's clean predictions are perfect, and the answer says so first.
    assert results["tracking_gt"]["pooled"]["correct_observation_rate"] == 1
    assert "right in every one of the 188,617 reference observations" in answer
    # Both verifiers, side by side, with the numbers of the comparison table.
    six = {name: block["populations"]["six_corruptions"]
           for name, block in results["verifier_comparison"].items()}
    assert list(six) == ["fixed_distance", "registered_distance"]
    assert answer.index("fixed_distance") < answer.index("registered_distance")
    assert "SPEC&#x27;s declared pilot verifier" in answer
    for block in six.values():
        assert f"{block['correct_coverage_at_fcr']:.1%} of all rows" in answer
    assert results["certification"]["guarantee"].split(":")[0] in answer
    # Every metric header carries its meaning; the glossary lists them.
    assert '<abbr title="false-certification rate (FCR): certified errors / all errors">false certification</abbr>' in html
    assert '<dt>AUROC*</dt>' in html and 'id="glossary"' in html


def test_run_says_loudly_when_the_clean_predictions_already_hold_errors(tmp_path):
    # Six tracks over 50 frames whose "clean" predictions swap tracks 0 and 1 on frames 25-39.
    rows = [("w", t, i, i, 8.0 * i, 0.0, i if not (25 <= t <= 39 and i < 2) else 1 - i, True)
            for t in range(50) for i in range(6)]
    table = pd.DataFrame(rows, columns=["recording", "frame", "track", "detection", "x_um",
                                        "y_um", "pred_id", "pred_valid"])
    done, _ = verify_control(table, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "already carry 30 wrong identities" in done.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["clean_prediction_errors"] == {"w": [
        {"track": 0, "first_frame": 25, "last_frame": 39, "rows": 15},
        {"track": 1, "first_frame": 25, "last_frame": 39, "rows": 15}]}
    assert "track 0 (frames 25-39, 15 rows)" in (tmp_path / "out" / "report.html").read_text()


def test_contradicted_claims_are_counted_in_results(tmp_path):
    """The 3 x 3 x 2 grid, 10 um apart, translated 1 um per frame; in frame 2 the "clean"
    predictions of detections 0 and 1 exchange ids. Each sits on the other's registered
    anchor, and the one-to-one assignment gives each detection to the other identity: 2
    contradicted claims, no abstention (tests/test_registered_distance.py, by hand)."""
    from tests.test_registered_distance import grid_table

    table = grid_table(shift=1.0)
    table["track"] = table["pred_id"]
    swapped = (table["frame"] == 2) & table["detection"].isin([0, 1])
    table.loc[swapped, "pred_id"] = [101, 100]
    result, out = verify_file(table, tmp_path, "--verifier", "registered_distance",
                              "--conditions", "control")
    assert result.returncode == 0, result.stderr
    results = json.loads((out / "results.json").read_text())
    control = results["anatomical_verification"]["r"]["control"]
    assert control["n_errors"] == 2
    assert control["abstentions"] == {"ambiguous": 0, "missing_evidence": 0, "contradicted": 2,
                                      "merged": 0}
    assert "claims contradicted" in (out / "report.html").read_text()


def test_abstention_counts_sum_over_a_population_and_stay_undefined_when_unknown():
    from trackverify.benchmark.run import _sum_reasons

    counts = {"single_frame_swap": {"ambiguous": 1, "missing_evidence": 2, "contradicted": 3,
                                    "merged": 7},
              "nearby_swap": {"ambiguous": 4, "missing_evidence": 5, "contradicted": 6,
                              "merged": 8},
              "control": {"ambiguous": 100, "missing_evidence": 100, "contradicted": 100,
                          "merged": 100}}
    assert _sum_reasons(counts) == {
        "six_corruptions": {"ambiguous": 5, "missing_evidence": 7, "contradicted": 9,
                            "merged": 15},
        "nearby_swap": {"ambiguous": 4, "missing_evidence": 5, "contradicted": 6, "merged": 8}}
    counts["nearby_swap"]["contradicted"] = None  # a verifier record without that count
    assert _sum_reasons(counts)["six_corruptions"]["contradicted"] is None


def test_run_shows_progress_by_recording_and_condition_on_a_terminal(tmp_path):
    # FORCE_COLOR makes rich treat the pipe as a terminal; each step refreshes the bar, so
    # the texts are in the stream whatever the timing.
    table = observation_table(tracks=tuple("ABCDEF"), frames=60)
    path = tmp_path / "obs.csv"
    table.to_csv(path, index=False)
    done = subprocess.run([sys.executable, "-m", "trackverify", "verify", "--observations", path,
                           *SMALL, "--out", tmp_path / "out"], capture_output=True, text=True,
                          env={**os.environ, "FORCE_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    steps = ["r: reading", "r: fixed_distance on control (1/7)", "r: fixed_distance on dropout (7/7)",
             "r: registered_distance on nearby_swap (5/7)", "r: tracking_gt"]
    positions = [done.stderr.find(text) for text in steps]
    assert -1 not in positions and positions == sorted(positions), done.stderr[-3000:]
    assert done.stdout.splitlines()[-2].startswith(f"Wrote {tmp_path / 'out'}/results.json")
    assert done.stdout.splitlines()[-1].startswith(f"Next: open {tmp_path / 'out'}/report.html")
    # Not a terminal: no bar, nothing on stderr.
    quiet = subprocess.run([sys.executable, "-m", "trackverify", "verify", "--observations", path,
                            *SMALL, "--out", tmp_path / "quiet"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")})
    assert quiet.returncode == 0 and "reading" not in quiet.stderr
