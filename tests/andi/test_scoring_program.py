"""``trackverify andi score`` on a corpus of malformed submissions.

The base case is tiny and hand-scorable: one experiment, one FOV, two single-segment
trajectories predicted exactly. Every defect is reported by file (and line) and scored by
the documented rule; the program never crashes.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from trackverify.cli.app import main

TRUE = ["0,1.0,0.5,2,200", "1,2.0,1.5,1,200"]
ENS = "model: single_state; num_state: 1 \n0.8;0.05;1.0;0.1;1\n"
PERFECT = {"tr2.ta2.D": 0.0, "tr2.ta2.alpha": 0.0, "tr2.ta1.cp": 0.0, "tr2.ta1.JI": 1.0,
           "tr2.ta1.alpha": 0.0, "tr2.ta1.D": 0.0, "tr2.ta1.state": 1.0}
# Trajectory 1 missing: its pair is (alpha 2 vs 0, D 1 + 1e5 vs 1, state 10 vs 0) and its
# changepoints [20] vs [10] (one FP, one FN); trajectory 0 has no changepoint on either side
# (one TP of the empty case). JI = 1 / 3, RMSE 0 (no TP pair).
ONE_MISSING = dict(PERFECT, **{
    "tr2.ta1.JI": 1 / 3, "tr2.ta1.alpha": 1.0,
    "tr2.ta1.D": (math.log1p(1 + 1e5) - math.log1p(1.0)) ** 2 / 2, "tr2.ta1.state": 0.5})
TASK_MAX = {"tr2.ta1.cp": 10, "tr2.ta1.JI": 0, "tr2.ta1.alpha": 2, "tr2.ta1.D": 1e5,
            "tr2.ta1.state": 0}


def build(root: Path, pred_lines=None, *, raw: bytes | None = None) -> Path:
    ref = root / "ref" / "track_2" / "exp_0"
    res = root / "res" / "track_2" / "exp_0"
    ref.mkdir(parents=True)
    res.mkdir(parents=True)
    (ref / "traj_labs_fov_0.txt").write_text("\n".join(TRUE) + "\n")
    (ref / "ensemble_labels.txt").write_text(ENS)
    (res / "ensemble_labels.txt").write_text(ENS)
    if raw is not None:
        (res / "fov_0.txt").write_bytes(raw)
    else:
        (res / "fov_0.txt").write_text("".join(ln + "\n" for ln in (TRUE if pred_lines is None else pred_lines)))
    return root


def run(root: Path, *extra) -> tuple[int, dict, str]:
    out = root / "out"
    try:
        main(["andi", "score", str(root), str(out), *extra])
        code = 0
    except SystemExit as exc:
        code = exc.code
    scores = {}
    if (out / "scores.txt").exists():
        for line in (out / "scores.txt").read_text().splitlines():
            key, value = line.split(": ")
            scores[key] = float(value)
    summary = (out / "summary.md").read_text() if (out / "summary.md").exists() else ""
    return code, scores, summary


def assert_scores(scores, expected):
    assert set(scores) == set(expected)
    for k, v in expected.items():
        assert scores[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k


def test_valid_submission(tmp_path):
    code, scores, summary = run(build(tmp_path))
    assert code == 0
    assert_scores(scores, PERFECT)
    assert "Problems (0 errors, 0 warnings)" in summary
    assert (tmp_path / "out" / "html" / "scores.html").read_text().startswith("<h1>")


def test_non_numeric_field(tmp_path):
    code, scores, summary = run(build(tmp_path, [TRUE[0], "1,2.0,abc,1,200"]))
    assert code == 0
    assert_scores(scores, ONE_MISSING)
    assert "res/track_2/exp_0/fov_0.txt:2: field 3 ('abc') is not a number" in summary
    assert "trajectory 1 has no valid prediction" in summary


def test_wrong_number_of_fields(tmp_path):
    code, scores, summary = run(build(tmp_path, [TRUE[0], "1,2.0,1.5,1,200,3"]))
    assert_scores(scores, ONE_MISSING)
    assert "fov_0.txt:2: 6 fields" in summary


def test_missing_trajectory(tmp_path):
    code, scores, summary = run(build(tmp_path, [TRUE[0]]))
    assert_scores(scores, ONE_MISSING)
    assert "fov_0.txt: trajectory 1 has no valid prediction; scored with the maximum errors" in summary


def test_missing_fov_file(tmp_path):
    root = build(tmp_path)
    (root / "res" / "track_2" / "exp_0" / "fov_0.txt").unlink()
    code, scores, summary = run(root)
    assert code == 0
    assert_scores(scores, dict(PERFECT, **TASK_MAX))
    assert "fov_0.txt: missing file" in summary


def test_missing_experiment(tmp_path):
    root = build(tmp_path)
    shutil.rmtree(root / "res" / "track_2" / "exp_0")
    (root / "res" / "track_2").mkdir(exist_ok=True)
    code, scores, summary = run(root)
    assert_scores(scores, dict(TASK_MAX, **{"tr2.ta2.D": 1.999, "tr2.ta2.alpha": 1e6 - 1e-12}))
    assert "exp_0/ensemble_labels.txt: cannot score the ensemble prediction" in summary
    assert "exp_0/fov_0.txt: missing file" in summary


def test_malformed_ensemble_file(tmp_path):
    root = build(tmp_path)
    (root / "res" / "track_2" / "exp_0" / "ensemble_labels.txt").write_text("header\n1;x;3\n")
    code, scores, summary = run(root)
    assert_scores(scores, dict(PERFECT, **{"tr2.ta2.D": 1.999, "tr2.ta2.alpha": 1e6 - 1e-12}))
    assert "cannot score the ensemble prediction (ValueError" in summary


def test_blank_line_is_reported_and_ignored(tmp_path):
    code, scores, summary = run(build(tmp_path, [TRUE[0], "", TRUE[1]]))
    assert_scores(scores, PERFECT)
    assert "fov_0.txt:2: blank line ignored" in summary


def test_multiple_of_four_fields(tmp_path):
    line = "1,2.0,1.5,1,200,9.0,0.1,3"  # 8 fields: official reading keeps D, alpha, state 1
    code, scores, summary = run(build(tmp_path, [TRUE[0], line]))
    assert_scores(scores, PERFECT)
    assert "fov_0.txt:2: 8 fields (a multiple of 4)" in summary
    code, scores, summary = run(build(tmp_path / "c", [TRUE[0], line]), "--corrected")
    assert_scores(scores, dict(ONE_MISSING, **{"tr2.ta2.alpha": 0.0, "tr2.ta2.D": 0.0}))
    assert "fov_0.txt:2: 8 fields; a line must have 1 + 4k" in summary


@pytest.mark.parametrize("line,message", [
    ("1,2.0,1.5,1,nan", "a changepoint is not finite"),
    ("1,2.0,1.5,1,0", "trajectory length 0 < 1"),
    ("nan,2.0,1.5,1,200", "trajectory index is not finite"),
])
def test_unscorable_values(tmp_path, line, message):
    code, scores, summary = run(build(tmp_path, [TRUE[0], line]))
    assert code == 0
    assert_scores(scores, ONE_MISSING)
    assert f"fov_0.txt:2: {message}; line rejected" in summary


def test_duplicate_and_unknown_trajectories(tmp_path):
    lines = TRUE + ["1,9.0,0.1,3,200", "7,1.0,1.0,1,200"]
    code, scores, summary = run(build(tmp_path, lines))
    assert_scores(scores, PERFECT)  # the first line of trajectory 1 is used
    assert "fov_0.txt:3: trajectory 1 predicted again; the first line is used" in summary
    assert "fov_0.txt:4: trajectory 7 is not in the reference; ignored" in summary


def test_nan_alpha_scored_by_the_official_rule(tmp_path):
    code, scores, summary = run(build(tmp_path, [TRUE[0], "1,2.0,nan,1,200"]))
    # NaN alpha -> truth + 2: errors 0 and 2, mean 1; everything else exact
    assert_scores(scores, dict(PERFECT, **{"tr2.ta1.alpha": 1.0}))


def test_empty_and_binary_files(tmp_path):
    code, scores, summary = run(build(tmp_path / "empty", []))
    two_missing = {"tr2.ta1.cp": 0, "tr2.ta1.JI": 0.0, "tr2.ta1.alpha": 1.999,  # cap
                   "tr2.ta1.D": (math.log1p(1 + 1e5) - math.log1p(1.0)) ** 2, "tr2.ta1.state": 0.0}
    assert_scores(scores, dict(PERFECT, **two_missing))
    code, scores, summary = run(build(tmp_path / "bin", raw=b"\xff\xfe\x00garbage\n"))
    assert code == 0
    assert_scores(scores, dict(PERFECT, **two_missing))
    assert "fov_0.txt:1: field 1" in summary


def test_missing_reference_folder_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "res").mkdir()
    code, scores, _ = run(tmp_path)
    assert code == 2 and scores == {}
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"trackverify: error: {tmp_path}: no reference folder 'ref'"]


def test_track_1_wrong_vip_indices(tmp_path):
    root = build(tmp_path)
    shutil.copytree(root / "ref" / "track_2", root / "ref" / "track_1")
    shutil.copytree(root / "res" / "track_2", root / "res" / "track_1")
    (root / "ref" / "track_1" / "exp_0" / "vip_idx_fov_0.txt").write_text("0\n")
    code, scores, summary = run(root)
    assert scores["tr1.ta1.alpha"] == 2 and scores["tr1.ta1.JI"] == 0
    assert "predicted VIP indices differ from vip_idx_fov_0.txt" in summary
    assert_scores({k: v for k, v in scores.items() if k.startswith("tr2")}, PERFECT)


@pytest.mark.parametrize("stray", ["exp_1_old", "exp_1.bak", "old_exp_1", "exp_-1"])
def test_only_folders_named_exp_n_are_experiments(tmp_path, stray):
    # The official program counts a reference folder by the first number in its name, so a
    # stray exp_1_old scored experiment 1 a second time and moved the averages.
    def two_experiments(root: Path) -> Path:
        build(root, [TRUE[0]])  # exp_0: trajectory 1 missing
        shutil.copytree(root / "ref/track_2/exp_0", root / "ref/track_2/exp_1")
        shutil.copytree(root / "ref/track_2/exp_0", root / "res/track_2/exp_1")
        (root / "res/track_2/exp_1/fov_0.txt").write_text("\n".join(TRUE) + "\n")
        return root

    code, clean, _ = run(two_experiments(tmp_path / "clean"))
    assert code == 0  # JI: the mean of exp_0's 1 / 3 (ONE_MISSING) and exp_1's 1
    assert clean["tr2.ta1.JI"] == pytest.approx((1 / 3 + 1) / 2, rel=1e-12)
    root = two_experiments(tmp_path / "stray")
    shutil.copytree(root / "ref/track_2/exp_1", root / "ref/track_2" / stray)
    code, scores, summary = run(root)
    assert code == 0
    assert_scores(scores, clean)
    assert f"{root / 'ref/track_2' / stray}: not an experiment folder; ignored" in summary


@pytest.mark.parametrize("stray", ["traj_labs_fov_0.txt.bak", "traj_labs_fov_0_old.txt"])
def test_only_traj_labs_fov_m_files_are_fovs(tmp_path, stray):
    # The official program counts the files starting with 'traj_labs_': a stray copy added
    # a FOV 1 that the submission cannot have, and the single task took the maximum errors.
    root = build(tmp_path)
    exp = root / "ref/track_2/exp_0"
    shutil.copy(exp / "traj_labs_fov_0.txt", exp / stray)
    code, scores, _ = run(root)
    assert code == 0
    assert_scores(scores, PERFECT)
