"""The detection table, real frame numbers with gaps, and repeated draws (hand-made cases)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED, run_cli
from trackverify.benchmark.dataset import load_dataset
from trackverify.errors import InputError
from trackverify.benchmark.run import _repeats_lines, over_draws
from trackverify.verifiers import run_verifier
from trackverify.verifiers.registered_distance import (
    RegisteredDistance, constant_velocity, fit_registration)

# An irregular 2-D anchor cloud (um); no symmetry, so a translation is unambiguous.
ANCHOR = np.array([[0.0, 0.0], [10.0, 1.0], [3.0, 9.0], [12.0, 12.0], [-6.0, 5.0]])


def _table(frames_and_shifts, labelled=(0, 1, 2, 3, 4)):
    """Observation rows (tracks = detections = anchor indices in ``labelled``) and the
    detection table (every anchor point), the cloud translated by ``shift`` in each frame."""
    obs, det = [], []
    for frame, shift in frames_and_shifts:
        for i, p in enumerate(ANCHOR + np.asarray(shift)):
            det.append({"recording": "r", "frame": frame, "detection": i,
                        "x_um": p[0], "y_um": p[1], "kind": "any"})
            if i in labelled or frame == 0:
                obs.append({"recording": "r", "frame": frame, "track": i, "detection": i,
                            "x_um": p[0], "y_um": p[1], "pred_id": i, "pred_valid": True})
    return pd.DataFrame(obs), pd.DataFrame(det)


# --- real frame numbers -------------------------------------------------------------------

def test_constant_velocity_extrapolates_over_the_real_frame_difference():
    # registered frames 1 (x = 1) and 3 (x = 3; frame 2 missing): 1 um per frame.
    previous, before = np.array([[3.0, 0.0]]), np.array([[1.0, 0.0]])
    # frame 4 is one frame ahead: 3 + 1 * (3 - 1) / 2 = 4
    assert constant_velocity(previous, before, ahead=1, behind=2).tolist() == [[4.0, 0.0]]
    # frame 6 (frames 4, 5 missing) is three ahead: 3 + 3 * 2 / 2 = 6
    assert constant_velocity(previous, before, ahead=3, behind=2).tolist() == [[6.0, 0.0]]
    # momentum 0.5 halves the step: 3 + 0.5 * 1 = 3.5
    assert constant_velocity(previous, before, 1, 2, momentum=0.5).tolist() == [[3.5, 0.0]]


def test_a_gap_frame_is_unregistered_and_the_frames_after_it_are_registered():
    # 1 um per frame along x; frames 3 and 4 are missing (no detection at all).
    shifts = [(f, (1.0 * f, 0.0)) for f in (0, 1, 2, 5, 6)]
    _, det = _table(shifts)
    registration = fit_registration(ANCHOR, det)
    assert registration.positions.shape == (7, 5, 2)  # real frame numbers 0..6
    assert np.isnan(registration.positions[3]).all() and np.isnan(registration.positions[4]).all()
    for frame in (1, 2, 5, 6):
        np.testing.assert_allclose(registration.positions[frame], ANCHOR + [frame, 0.0], atol=1e-3)


# --- the detection table ------------------------------------------------------------------

def test_registration_uses_a_detection_without_a_reference_row():
    # Frame 1 (cloud moved by (0.5, 0)) has only two labelled rows: too few to register a 2-D
    # frame (needs 3), unless the three unlabelled detections of the detection table count.
    obs, det = _table([(0, (0, 0)), (1, (0.5, 0.0))], labelled=(0, 1))
    frame1 = obs["frame"].to_numpy() == 1
    alone = RegisteredDistance(ambiguity_k=0.0).score(obs)
    assert np.isnan(alone[frame1]).all()  # missing evidence: frame 1 unregistered
    with_all = RegisteredDistance(ambiguity_k=0.0).score(obs, detections=det)
    # each labelled row sits on its own registered anchor point: distance ~ 0
    np.testing.assert_allclose(with_all[frame1], 0.0, atol=1e-3)


class _Spy:
    name, evidence = "spy", "independent"

    def score(self, table, detections=None):
        self.seen = detections
        return np.zeros(len(table))


def test_run_verifier_hands_detections_with_the_detection_columns_only():
    obs, det = _table([(0, (0, 0)), (1, (0.5, 0.0))], labelled=(0, 1))
    spy = _Spy()
    run_verifier(spy, obs, det)
    assert list(spy.seen.columns) == ["frame", "detection", "x_um", "y_um"]  # no kind, recording
    assert len(spy.seen) == 10 and len(obs) == 7  # three detections without an observation


def _write(folder, obs, det):
    folder.mkdir()
    obs.to_parquet(folder / "observations.parquet", index=False)
    det.to_parquet(folder / "detections.parquet", index=False)
    return folder


def test_dataset_reads_detections_beside_the_observations(tmp_path):
    obs, det = _table([(0, (0, 0)), (1, (0.5, 0.0))], labelled=(0, 1))
    folder = _write(tmp_path / "d", obs, det)
    for path in (folder, folder / "observations.parquet"):
        (name, source), = load_dataset(path).sources()
        assert name == "r" and len(source.load_detections()) == 10
        assert "kind" in source.load_detections().columns  # extra columns kept


def test_an_observation_that_is_not_a_detection_is_a_clear_error(tmp_path):
    obs, det = _table([(0, (0, 0)), (1, (0.5, 0.0))], labelled=(0, 1))
    det = det.drop(index=6)  # frame 1, detection 1: the 7th observation row
    folder = _write(tmp_path / "d", obs, det)
    with pytest.raises(InputError, match=r"detections.parquet, column 'detection': observation "
                                         r"row 7 \(recording='r', frame=1, detection=1\)"):
        load_dataset(folder)


def test_an_observation_off_its_detection_position_is_a_clear_error(tmp_path):
    obs, det = _table([(0, (0, 0)), (1, (0.5, 0.0))], labelled=(0, 1))
    det.loc[5, "x_um"] += 0.25  # frame 1, detection 0: the 6th observation row
    folder = _write(tmp_path / "d", obs, det)
    with pytest.raises(InputError, match=r"observation row 6 .* not at its detection's position"):
        load_dataset(folder)


def test_a_detection_table_of_other_dimensionality_is_refused(tmp_path):
    obs, det = _table([(0, (0, 0))])
    det["z_um"] = 0.0
    folder = _write(tmp_path / "d", obs, det)
    with pytest.raises(InputError, match="3-D but the observations are 2-D"):
        load_dataset(folder)


# --- repeated draws -----------------------------------------------------------------------

def test_over_draws_mean_and_minimum_skip_undefined_values():
    assert over_draws([0.5, 1.0]) == {"per_draw": [0.5, 1.0], "mean": 0.75, "min": 0.5}
    assert over_draws([None, 0.25]) == {"per_draw": [None, 0.25], "mean": 0.25, "min": 0.25}
    assert over_draws([None]) == {"per_draw": [None], "mean": None, "min": None}


@pytest.fixture(scope="module")
def small_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synth")
    assert run_cli("synth", "--frames", 40, "--neurons", 20, "--out", folder).returncode == 0
    return folder


def _run(folder, out, *extra):
    result = run_cli("run", "--data", folder, "--start", 10, "--recovery-end", 20,
                     "--verifier", "registered_distance", "--no-rows", "--out", out, *extra)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "results.json").read_text())


def test_two_draws_report_each_draw_and_their_mean_and_minimum(small_folder, tmp_path):
    seed = 5
    first = _run(small_folder, tmp_path / "a", "--seed", seed)
    second = _run(small_folder, tmp_path / "b", "--seed", seed + 1)
    both = _run(small_folder, tmp_path / "ab", "--seed", seed, "--repeats", 2)
    assert both["repeats"]["seeds"] == [5, 6]
    assert both["settings"]["repeats"] == 2
    for verifier in ("fixed_distance", "registered_distance"):
        for population in ("six_corruptions", "nearby_swap"):
            for key in ("auroc", "auroc_abstain_as_error", "auprc", "correct_coverage_at_fcr"):
                a = first["verifier_comparison"][verifier]["populations"][population][key]
                b = second["verifier_comparison"][verifier]["populations"][population][key]
                got = both["repeats"]["verifier_comparison"][verifier]["populations"][population][key]
                assert got["per_draw"] == [a, b]
                assert got["mean"] == pytest.approx((a + b) / 2) and got["min"] == min(a, b)
    # the rest of results.json is the first draw's
    assert both["verifier_comparison"] == first["verifier_comparison"]
    manifest = json.loads((tmp_path / "ab" / "manifest.json").read_text())
    single = [json.loads((tmp_path / d / "manifest.json").read_text())["corruptions"] for d in "ab"]
    assert manifest["repeats"] == [{"seed": 5, "corruptions": single[0]},
                                   {"seed": 6, "corruptions": single[1]}]


def test_repeats_lines_by_hand():
    repeats = {"seeds": [7, 8, 9], "verifier_comparison": {"registered_distance": {
        "populations": {"six_corruptions": {
            "auroc_abstain_as_error": {"per_draw": [0.99, 0.97, None], "mean": 0.98, "min": 0.97},
            "correct_coverage_at_fcr": {"per_draw": [0.5, 0.25, 0.75], "mean": 0.5,
                                        "min": 0.25}}}}}}
    assert _repeats_lines(repeats) == [
        "The line above is the first draw's (seed 7); over 3 draws (seeds 7..9; results.json "
        "-> repeats), six corruptions pooled:",
        "  registered_distance: AUROC* mean 0.98, min 0.97; coverage at FCR <= 1 % mean 0.5, "
        "min 0.25"]


def test_the_terminal_says_which_draw_it_shows(small_folder, tmp_path):
    args = ("run", "--data", small_folder, "--start", 10, "--recovery-end", 20, "--no-rows")
    two = run_cli(*args, "--repeats", 2, "--out", tmp_path / "two")
    one = run_cli(*args, "--out", tmp_path / "one")
    assert two.returncode == 0 and one.returncode == 0
    assert "over 2 draws (seeds 20261007..20261008" in two.stdout
    assert "fixed_distance: AUROC* mean" in two.stdout
    assert "draws" not in one.stdout


def test_one_draw_is_byte_identical_to_a_run_without_repeats(small_folder, tmp_path):
    _run(small_folder, tmp_path / "plain")
    config = tmp_path / "one.toml"
    config.write_text("[run]\nrepeats = 1\n")
    _run(small_folder, tmp_path / "one", "--config", config)
    assert (tmp_path / "one" / "results.json").read_bytes() == \
        (tmp_path / "plain" / "results.json").read_bytes()
    assert "repeats" not in json.loads((tmp_path / "one" / "results.json").read_text())


def test_repeats_below_one_exit_2(small_folder, tmp_path):
    result = run_cli("run", "--data", small_folder, "--repeats", 0, "--out", tmp_path / "o")
    assert result.returncode == 2 and "repeats must be between 1 and 50, got 0" in result.stderr


REAL = SHARED / "data" / "fdnc-nerve-freely-moving"


@pytest.mark.skipif(not (REAL / "detections.parquet").exists(),
                    reason="../shared/data/fdnc-nerve-freely-moving is not present")
def test_the_real_recording_loads_with_every_detection_and_its_gaps():
    (name, source), = load_dataset(REAL).sources()
    observations, detections = source.load(), source.load_detections()
    # SOURCE.md: 47,907 labelled rows, 81,653 detections, 686 frames present, last frame 755
    assert (len(observations), len(detections)) == (47_907, 81_653)
    frames = np.unique(detections["frame"])
    assert len(frames) == 686 and frames[-1] == 755
    assert (np.diff(frames) > 1).any()  # gaps
