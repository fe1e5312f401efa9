"""The scoring program's rules called directly (``codalab.score``, ``run_single_task``,
``run_ensemble_task``) on small hand-scorable folders: the average over experiments
weighted by their number of trajectories, FOVs pooled and matched by (FOV, traj_idx), the
VIP selection of track 1, the ensemble means and names, and the maximum-error rules."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from trackverify.andi import codalab

ENS = "model: single_state; num_state: 1\n{}\n"
EXACT = "0.5;0.01;1.0;0.1;1"
MAX_SINGLE = {"cp": 10, "JI": 0, "alpha": 2, "D": 1e5, "state": 0}


def _write(folder: Path, name: str, lines) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(line + "\n" for line in lines))


def _experiment(root: Path, track: int, exp: int, fovs, ens_true=EXACT, ens_pred=EXACT):
    """``fovs``: a list of (reference lines, predicted lines or None for no file)."""
    ref = root / "ref" / f"track_{track}" / f"exp_{exp}"
    res = root / "res" / f"track_{track}" / f"exp_{exp}"
    for fov, (true, pred) in enumerate(fovs):
        _write(ref, f"traj_labs_fov_{fov}.txt", true)
        if pred is not None:
            _write(res, f"fov_{fov}.txt", pred)
    _write(ref, "ensemble_labels.txt", ENS.format(ens_true).splitlines())
    _write(res, "ensemble_labels.txt", ENS.format(ens_pred).splitlines())
    return ref, res


def _single_task(root: Path, track: int = 2):
    """``_run_single`` on experiment 0 of ``root``'s folders: (averages, problems)."""
    problems = []
    avg, _ = codalab._run_single([0], track, str(root / "res"), str(root / "ref"), False,
                                 problems)
    return avg, problems


def _scores(rep) -> dict:
    return dict(rep.scores)


def test_experiments_are_averaged_by_their_number_of_trajectories(tmp_path):
    # exp 0: two exact trajectories; exp 1: one with alpha 1.5 for 1.0 (error 0.5), D 3 for 1
    # (squared log error (log 4 - log 2)^2) and the wrong state (accuracy 0)
    two = ["0,1.0,0.5,2,200", "1,2.0,1.5,1,200"]
    _experiment(tmp_path, 2, 0, [(two, two)])
    _experiment(tmp_path, 2, 1, [(["0,1.0,1.0,2,200"], ["0,3.0,1.5,1,200"])])
    avg, frame = codalab.run_single_task([0, 1], 2, tmp_path / "res", tmp_path / "ref")
    assert frame.num_trajs.tolist() == [2, 1] and frame.Exp.tolist() == [0, 1]
    cp, ji, alpha, d, state = avg
    assert (cp, ji) == (0, 1)
    assert alpha == pytest.approx(0.5 / 3, rel=1e-12)
    assert d == pytest.approx(math.log(2) ** 2 / 3, rel=1e-12)
    assert state == pytest.approx(2 / 3, rel=1e-12)
    assert frame.alpha.tolist() == pytest.approx([0.0, 0.5], abs=1e-15)


def test_fovs_are_pooled_and_matched_by_fov_and_index(tmp_path):
    # the same traj_idx 0 in both FOVs; only FOV 1 is off (alpha 1.4 for 1.0)
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one), (one, ["0,1.0,1.4,2,200"])])
    avg, frame = codalab.run_single_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert frame.num_trajs.tolist() == [2]
    assert avg[2] == pytest.approx(0.2, rel=1e-12) and avg[4] == 1.0


def test_a_missing_fov_file_gives_the_task_maximum(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one), (one, None)])
    avg, frame = codalab.run_single_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert tuple(avg) == (10, 0, 2, 1e5, 0)
    assert list(frame.columns) == codalab.SINGLE_COLUMNS and frame.iloc[0].isna().all()
    with pytest.warns(UserWarning, match="^boom$"):
        again = codalab.when_error_single("boom")
    assert again[0] == (10, 0, 2, 1e5, 0) and again[1].shape == (1, 7)


def test_an_experiment_without_reference_trajectories_gives_the_maximum(tmp_path):
    ref = tmp_path / "ref" / "track_2" / "exp_0"
    ref.mkdir(parents=True)
    (tmp_path / "res" / "track_2" / "exp_0").mkdir(parents=True)
    problems = []
    avg, _ = codalab._run_single([0], 2, str(tmp_path / "res"), str(tmp_path / "ref"), False,
                                 problems)
    assert tuple(avg) == (10, 0, 2, 1e5, 0)
    assert [p.message.split(";")[0] for p in problems] == ["no reference trajectories"]
    assert problems[0].source == str(tmp_path / "ref" / "track_2")


def test_track_1_scores_only_the_vip_trajectories(tmp_path):
    true = ["0,1.0,1.0,2,200", "1,1.0,1.0,2,200", "2,1.0,1.0,2,200"]
    # the VIP are 2 and 0 (any order); trajectory 1 is not predicted and not scored
    ref, _ = _experiment(tmp_path, 1, 0, [(true, ["2,1.0,1.2,2,200", "0,1.0,1.0,2,200"])])
    (ref / "vip_idx_fov_0.txt").write_text("2\n0\n")
    avg, frame = codalab.run_single_task([0], 1, tmp_path / "res", tmp_path / "ref")
    assert frame.num_trajs.tolist() == [2]
    assert avg[2] == pytest.approx(0.1, rel=1e-12) and avg[1] == 1.0
    # one VIP more than predicted, or another index: the task maximum
    for vip in ("2\n0\n1\n", "2\n1\n"):
        (ref / "vip_idx_fov_0.txt").write_text(vip)
        avg, _ = codalab.run_single_task([0], 1, tmp_path / "res", tmp_path / "ref")
        assert tuple(avg) == (10, 0, 2, 1e5, 0), vip



def test_a_non_integer_vip_index_is_truncated_as_the_reference_does(tmp_path):
    """andi-datasets' run_single_task compares ``traj_idx.values.astype(int)`` with the VIP
    file: 2.5 passes the check as VIP 2, then matches no reference trajectory (trajectory 2
    gets the maximum errors) -- not the task maximum. Expected values recorded from
    andi-datasets 2.1.13 (.venv-andi) on this folder."""
    true = ["0,1.0,1.0,2,200", "1,1.0,1.0,2,200", "2,1.0,1.0,2,200"]
    ref, _ = _experiment(tmp_path, 1, 0, [(true, ["2.5,1.0,1.2,2,200", "0,1.0,1.0,2,200"])])
    (ref / "vip_idx_fov_0.txt").write_text("2\n0\n")
    avg, frame = codalab.run_single_task([0], 1, tmp_path / "res", tmp_path / "ref")
    assert frame.num_trajs.tolist() == [2]
    assert list(avg) == pytest.approx([0.0, 1 / 3, 1.0, 58.53401745549993, 0.5], rel=1e-12)

def _ensemble_case(root: Path) -> None:
    # exp 0 exact; exp 3: predicted alpha mean 0.7 for 0.5 (sd 0.01, D the same)
    one = ["0,1.0,1.0,2,200"]
    _experiment(root, 2, 0, [(one, one)])
    _experiment(root, 2, 3, [(one, one)], ens_pred="0.7;0.01;1.0;0.1;1")


def test_ensemble_means_over_experiments_corrected(tmp_path):
    _ensemble_case(tmp_path)
    # corrected: sigma is a standard deviation and W1 is the shift 0.2; mean over the two
    (alpha, d), frame = codalab.run_ensemble_task([0, 3], 2, tmp_path / "res", tmp_path / "ref",
                                                  corrected=True)
    assert alpha == pytest.approx(0.1, abs=1e-7) and d == pytest.approx(0.0, abs=1e-12)
    assert list(frame.columns) == ["Exp", "alpha", "K"] and frame.Exp.tolist() == [0, 3]
    assert frame.alpha.tolist() == pytest.approx([0.0, 0.2], abs=1e-7)
    assert frame.K.tolist() == pytest.approx([0.0, 0.0], abs=1e-12)
    scores = _scores(codalab.score(tmp_path, corrected=True))
    assert scores["tr2.ta2.alpha"] == pytest.approx(0.1, abs=1e-7)
    assert scores["tr2.ta2.D"] == pytest.approx(0.0, abs=1e-12)
    assert scores["tr2.ta1.alpha"] == 0 and scores["tr2.ta1.JI"] == 1


def test_ensemble_official_numbers_and_swapped_names(tmp_path):
    _ensemble_case(tmp_path)
    # official: sigma 0.01 is a variance (sd 0.1): the shift is still 0.2 (the bounds are 5
    # and 15 sd away); experiments numbered 0..n-1; alpha written under "D" and D under "alpha"
    (alpha, d), frame = codalab.run_ensemble_task([0, 3], 2, tmp_path / "res", tmp_path / "ref")
    assert alpha == pytest.approx(0.1, abs=1e-5) and d == 0.0
    assert frame.Exp.tolist() == [0, 1]
    scores = _scores(codalab.score(tmp_path))
    assert scores["tr2.ta2.D"] == pytest.approx(0.1, abs=1e-5) and scores["tr2.ta2.alpha"] == 0


def test_a_non_finite_ensemble_distance_gives_the_maximum(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one)], ens_pred="nan;0.01;1.0;0.1;1")
    problems = []
    (alpha, d), frame = codalab._run_ensemble([0], 2, str(tmp_path / "res"),
                                              str(tmp_path / "ref"), True, problems)
    assert (alpha, d) == (1.999, 1e6 - 1e-12)
    assert list(frame.columns) == ["Exp", "alpha", "K"] and frame.iloc[0].isna().all()
    assert problems[0].message == (
        "cannot score the ensemble prediction (ValueError: the distance is not finite); the "
        "ensemble task of this track gets the maximum errors (official rule)")
    assert problems[0].source == str(tmp_path / "res" / "track_2" / "exp_0" /
                                     "ensemble_labels.txt")


def test_missing_tracks(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one)])
    # a submitted track 1 without a reference is not scored; a reference track without a
    # submission gets both tasks' maxima under their names
    (tmp_path / "res" / "track_1").mkdir()
    rep = codalab.score(tmp_path)
    assert [k for k, _ in rep.scores] == ["tr2.ta2.D", "tr2.ta2.alpha", "tr2.ta1.cp",
                                          "tr2.ta1.JI", "tr2.ta1.alpha", "tr2.ta1.D",
                                          "tr2.ta1.state"]
    assert "no reference for this track" in rep.problems[0].message
    assert set(rep.tables) == {2}
    (tmp_path / "res" / "track_1").rmdir()
    _experiment(tmp_path / "b", 1, 0, [(one, one)])
    (tmp_path / "b" / "ref" / "track_1" / "exp_0" / "vip_idx_fov_0.txt").write_text("0\n")
    shutil.rmtree(tmp_path / "b" / "res" / "track_1")
    (tmp_path / "b" / "res").mkdir(exist_ok=True)
    for corrected, names in ((False, ["D", "alpha"]), (True, ["alpha", "D"])):
        rep = codalab.score(tmp_path / "b", corrected=corrected)
        assert rep.scores == [(f"tr1.ta2.{names[0]}", 1.999),
                              (f"tr1.ta2.{names[1]}", 1e6 - 1e-12),
                              *((f"tr1.ta1.{k}", v) for k, v in MAX_SINGLE.items())]
        assert rep.tables == {}
        assert "no submission for this track" in rep.problems[0].message


def test_public_tasks_official_by_default_and_their_maxima(tmp_path):
    # a negative predicted D: official |D| (exact), corrected invalid (truth + 1e5)
    _experiment(tmp_path, 2, 0, [(["0,1.0,1.0,2,200"], ["0,-1.0,1.0,2,200"])],
                ens_pred="nan;0.01;1.0;0.1;1")
    avg, _ = codalab.run_single_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert avg[3] == 0.0
    avg, _ = codalab.run_single_task([0], 2, tmp_path / "res", tmp_path / "ref", corrected=True)
    assert avg[3] == pytest.approx((math.log(2 + 1e5) - math.log(2)) ** 2, rel=1e-12)
    # the public ensemble task reports a failure by its maxima too
    (alpha, d), _ = codalab.run_ensemble_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert (alpha, d) == (1.999, 1e6 - 1e-12)


def test_task_maximum_message(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, None)])
    _, problems = _single_task(tmp_path)
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'res' / 'track_2' / 'exp_0' / 'fov_0.txt'}: missing file; the "
        "single-trajectory task of this track gets the maximum errors (official rule)"]


def test_tracks_are_scored_independently(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    # reference tracks 1 and 2; only track 2 submitted, and a stray file in the reference
    ref1, _ = _experiment(tmp_path, 1, 0, [(one, one)])
    (ref1 / "vip_idx_fov_0.txt").write_text("0\n")
    _experiment(tmp_path, 2, 0, [(one, one)])
    shutil.rmtree(tmp_path / "res" / "track_1")
    (tmp_path / "ref" / "track_2" / "notes.txt").write_text("x")
    rep = codalab.score(tmp_path)
    scores = _scores(rep)
    assert [k for k, _ in rep.scores][:2] == ["tr1.ta2.D", "tr1.ta2.alpha"]
    assert scores["tr1.ta1.alpha"] == 2 and scores["tr2.ta1.alpha"] == 0
    assert scores["tr2.ta1.JI"] == 1 and len(rep.scores) == 14
    assert [(p.source, p.message, p.severity) for p in rep.problems] == [
        (str(tmp_path / "res" / "track_1"), "no submission for this track; both tasks get "
         "the maximum errors", "error"),
        (str(tmp_path / "ref" / "track_2" / "notes.txt"), "not an experiment folder; ignored",
         "warning")]
    # track 1 submitted, track 2 not: track 1's scores are kept
    shutil.copytree(tmp_path / "res" / "track_2", tmp_path / "res" / "track_1")
    shutil.rmtree(tmp_path / "res" / "track_2")
    scores = _scores(codalab.score(tmp_path))
    assert scores["tr1.ta1.alpha"] == 0 and scores["tr2.ta1.alpha"] == 2
    assert len(scores) == 14


def test_no_reference_track_is_reported_by_folder(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one)])
    (tmp_path / "res" / "track_1").mkdir()
    rep = codalab.score(tmp_path)
    assert [(p.source, p.message) for p in rep.problems] == [
        (str(tmp_path / "ref" / "track_1"), "no reference for this track; it is not scored")]


def test_corrected_ensemble_distance_of_d(tmp_path):
    # D means 1 and 2 (sd 0.1, corrected): W1 = 1 (the official log-grid number is 1.216)
    one = ["0,1.0,1.0,2,200"]
    _experiment(tmp_path, 2, 0, [(one, one)], ens_pred="0.5;0.01;2.0;0.1;1")
    scores = _scores(codalab.score(tmp_path, corrected=True))
    assert scores["tr2.ta2.D"] == pytest.approx(1.0, abs=1e-6)
    assert scores["tr2.ta2.alpha"] == pytest.approx(0.0, abs=1e-12)


def test_reference_lines_are_read_strictly_and_reported_as_reference(tmp_path):
    # a blank line (warning) and a line of length 0 (rejected by the strict reader, so
    # trajectory 1 is not in the reference)
    true = ["0,1.0,1.0,2,200", "", "1,1.0,1.0,2,0"]
    ref, _ = _experiment(tmp_path, 2, 0, [(true, ["0,1.0,1.0,2,200"])])
    problems = []
    avg, frame = codalab._run_single([0], 2, str(tmp_path / "res"), str(tmp_path / "ref"), False,
                                     problems)
    assert frame.num_trajs.tolist() == [1] and tuple(avg) == (0, 1, 0, 0, 1)
    source = str(ref / "traj_labs_fov_0.txt")
    assert [(p.source, p.line, p.message, p.severity) for p in problems] == [
        (source, 2, "reference: blank line ignored", "warning"),
        (source, 3, "reference: trajectory length 0 < 1; line rejected", "error")]


def test_wrong_vip_indices_are_reported_on_the_prediction_file(tmp_path):
    true = ["0,1.0,1.0,2,200", "1,1.0,1.0,2,200"]
    ref, res = _experiment(tmp_path, 1, 0, [(true, ["0,1.0,1.0,2,200"])])
    (ref / "vip_idx_fov_0.txt").write_text("1\n")
    avg, problems = _single_task(tmp_path, track=1)
    assert tuple(avg) == (10, 0, 2, 1e5, 0)
    assert [(p.source, p.message.split(";")[0]) for p in problems] == [
        (str(res / "fov_0.txt"), "predicted VIP indices differ from vip_idx_fov_0.txt")]


def test_an_experiment_without_fovs_is_skipped_not_the_rest(tmp_path):
    """exp 0 has no reference FOV file (nothing to score); exp 1 one exact trajectory and one
    with alpha 1.4 for 1.0: its mean alpha error 0.2 is the task's, and its frame one row."""
    (tmp_path / "ref" / "track_2" / "exp_0").mkdir(parents=True)
    _experiment(tmp_path, 2, 1, [(["0,1.0,1.0,2,200", "1,1.0,1.0,2,200"],
                                  ["0,1.0,1.0,2,200", "1,1.0,1.4,2,200"])])
    avg, frame = codalab.run_single_task([0, 1], 2, tmp_path / "res", tmp_path / "ref")
    assert frame.Exp.tolist() == [1] and frame.num_trajs.tolist() == [2]
    assert avg[2] == pytest.approx(0.2, rel=1e-12) and avg[1] == 1.0


def test_a_scoring_failure_gives_the_task_maximum_and_names_the_folder(tmp_path, monkeypatch):
    one = ["0,1.0,1.0,2,200"]
    _, res = _experiment(tmp_path, 2, 0, [(one, one)])

    def fails(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(codalab, "score_tables", fails)
    avg, problems = _single_task(tmp_path)
    assert tuple(avg) == (10, 0, 2, 1e5, 0)
    assert [str(p) for p in problems] == [
        f"{res}: cannot score (ValueError: boom); the single-trajectory task of this track "
        "gets the maximum errors (official rule)"]


def test_a_missing_reference_ensemble_file_is_the_scoring_programs_error(tmp_path):
    one = ["0,1.0,1.0,2,200"]
    ref, _ = _experiment(tmp_path, 2, 0, [(one, one)])
    (ref / "ensemble_labels.txt").unlink()
    with pytest.raises(codalab.InputError) as info:
        codalab.run_ensemble_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert info.value.problem == "reference file not found"
    assert info.value.source == str(ref / "ensemble_labels.txt")


def test_only_an_empty_file_warning_fails_the_ensemble_task(tmp_path, monkeypatch):
    """An empty predicted ensemble file (header only): loadtxt's UserWarning is the failure,
    named in the problem. A RuntimeWarning while the distance is computed is no failure:
    the finite distances (0.25, 0.5) stand."""
    import warnings

    _, res = _experiment(tmp_path, 2, 0, [(["0,1.0,1.0,2,200"], ["0,1.0,1.0,2,200"])])
    pred = res / "ensemble_labels.txt"
    pred.write_text("model: single_state; num_state: 1\n")
    problems = []
    (alpha, d), _ = codalab._run_ensemble([0], 2, str(tmp_path / "res"), str(tmp_path / "ref"),
                                          True, problems)
    assert (alpha, d) == (1.999, 1e6 - 1e-12)
    assert problems[0].message.startswith(
        f'cannot score the ensemble prediction (UserWarning: loadtxt: input contained no data: '
        f'"{pred}"); ')
    pred.write_text(ENS.format(EXACT))

    def warns(*args, **kwargs):
        warnings.warn("overflow", RuntimeWarning)
        return 0.25, 0.5

    monkeypatch.setattr(codalab, "error_Ensemble_dataset", warns)
    with pytest.warns(RuntimeWarning, match="overflow"):
        (alpha, d), _ = codalab.run_ensemble_task([0], 2, tmp_path / "res", tmp_path / "ref")
    assert (alpha, d) == (0.25, 0.5)
