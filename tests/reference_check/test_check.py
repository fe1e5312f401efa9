"""Hand cases of the reference check: one of each kind, and a close pair that must stay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.cli.app import main
from trackverify.reference_check import CheckSettings, check_reference
from trackverify.reference_check.core import evidence_sentence, robust_z

FRAMES = 20


def scene(seed: int = 7):
    """30 neurons on an 8-um grid (4 x 4 x 2, 2 removed), drifting and turning slowly, with
    0.3 um noise; neuron 100 sits 3 um from neuron 0 (a correct close pair)."""
    rng = np.random.default_rng(seed)
    grid = np.array([(x, y, z) for x in range(4) for y in range(4) for z in range(2)], float)[:30] * 8.0
    base = np.vstack([grid, grid[0] + [3.0, 0.0, 0.0]])
    ids = np.r_[np.arange(30), 100]
    rows = []
    for t in range(FRAMES):
        angle = 0.02 * t
        turn = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]])
        points = base @ turn.T + [1.5 * t, 0.5 * t, 0.0] + rng.normal(0, 0.3, base.shape)
        for k, p in zip(ids, points):
            rows.append((t, int(k), *p))
    obs = pd.DataFrame(rows, columns=["frame", "track", "x_um", "y_um", "z_um"])
    obs.insert(0, "recording", "hand")
    obs["detection"] = obs.groupby("frame").cumcount()
    return obs


def position(obs, frame, track):
    return obs.loc[(obs["frame"] == frame) & (obs["track"] == track), ["x_um", "y_um", "z_um"]].to_numpy()[0]


def move(obs, frame, track, to):
    obs.loc[(obs["frame"] == frame) & (obs["track"] == track), ["x_um", "y_um", "z_um"]] = to


def drop(obs, frame, track):
    return obs[~((obs["frame"] == frame) & (obs["track"] == track))]


def with_errors():
    """The clean scene's detections, and its labels with one error of each kind."""
    clean = scene()
    detections = clean[["recording", "frame", "detection", "x_um", "y_um", "z_um"]].copy()
    obs = clean.copy()
    # one-sided jump: frame 10, label 5 on neuron 6's detection; 6 unlabelled there
    move(obs, 10, 5, position(clean, 10, 6))
    obs = drop(obs, 10, 6)
    # duplicate: frame 12, label 9 on a second detection of neuron 10 (1 um beside it)
    second = position(clean, 12, 10) + [0.0, 1.0, 0.0]
    detections.loc[len(detections)] = ["hand", 12, 999, *second]
    move(obs, 12, 9, second)
    # crossed pair: frame 14, labels 17 and 19 exchanged
    p17, p19 = position(clean, 14, 17), position(clean, 14, 19)
    move(obs, 14, 17, p19)
    move(obs, 14, 19, p17)
    # anchor frame: frame 0, label 25 on neuron 27's detection; 27 unlabelled there
    move(obs, 0, 25, position(clean, 0, 27))
    obs = drop(obs, 0, 27)
    # displaced: frame 6, label 12 on an unlabelled detection in the middle of a grid cell (6.9 um
    # from every neuron: on no neuron's place)
    stray = position(clean, 6, 12) + [4.0, 4.0, 4.0]
    detections.loc[len(detections)] = ["hand", 6, 998, *stray]
    move(obs, 6, 12, stray)
    return obs.reset_index(drop=True), detections


def test_clean_scene_has_no_finding_and_close_pair_stays():
    obs = scene()
    result = check_reference(obs, obs.drop(columns="track"))
    assert len(result.findings) == 0
    assert result.summary()["rows_questioned"] == 0
    assert result.summary()["rows_kept"] == len(obs)


def test_each_kind_is_found_once_and_nothing_else():
    obs, detections = with_errors()
    before = obs.copy()
    result = check_reference(obs, detections)
    pd.testing.assert_frame_equal(obs, before)  # the input is not modified
    found = {(r.kind, r.pattern, tuple(r.frames), tuple(r.tracks)): r for r in result.findings.itertuples()}
    assert set(found) == {
        ("one_sided", "one_sided", (10,), (5,)),
        ("duplicate", "duplicate", (12,), (9,)),
        ("crossed", "crossed", (14,), (17, 19)),
        ("anchor", "one_sided", (0,), (25,)),
        ("displaced", "displaced", (6,), (12,)),
    }
    assert found[("one_sided", "one_sided", (10,), (5,))].partner == 6
    assert found[("duplicate", "duplicate", (12,), (9,))].partner == 10
    assert found[("anchor", "one_sided", (0,), (25,))].partner == 27
    # the questioned rows are exactly the wrong labels: 5 in 10, 9 in 12, 17 and 19 in 14, 25 in 0, 12 in 6
    questioned = obs.loc[result.rows["questioned"].to_numpy(), ["frame", "track"]]
    assert sorted(map(tuple, questioned.to_numpy())) == [(0, 25), (6, 12), (10, 5), (12, 9), (14, 17), (14, 19)]
    # neurons 5 and 6 sit at grid cells (0, 2, 1) and (0, 3, 0): 8 * sqrt(2) = 11.3 um apart
    one_sided = found[("one_sided", "one_sided", (10,), (5,))]
    assert 10.0 < one_sided.label_to_prediction_um < 12.7
    assert one_sided.alternative_to_prediction_um < 1.5


def test_without_detections_a_one_sided_jump_has_no_alternative():
    """With the labelled points only, neuron 6's place (unlabelled in frame 10) holds nothing:
    the one-sided jump is not questioned; the crossed pair still is."""
    obs, _ = with_errors()
    kinds = set(check_reference(obs).findings["kind"])
    assert "crossed" in kinds and "one_sided" not in kinds


def test_robust_z_by_hand():
    r = np.array([1.0, 2.0, 3.0, 4.0, 100.0, np.nan])
    # median 3, MAD 1 -> scale 1.4826
    z = robust_z(r)
    assert z[4] == pytest.approx(97 / 1.4826)
    assert z[0] == pytest.approx(-2 / 1.4826)
    assert np.isnan(z[5])


def test_pair_reading_by_hand():
    """One track at the origin moving +1 um in x per frame; the label in frame index 2 sits on
    the detection at x = (2, 0, 0) + (4, 0, 0), the alternative y at (2, 0, 0): the hypothesis
    "the label belongs on y" puts the labelled detection's neuron at x_i(s) + (4, 0, 0), the
    other at x_i(s) - (4, 0, 0)."""
    from trackverify.reference_check.core import pair_reading

    frames = np.arange(5)
    P = np.zeros((5, 1, 3))
    P[:, 0, 0] = frames  # x_i(s) = (s, 0, 0)
    x, y = np.array([6.0, 0, 0]), np.array([2.0, 0, 0])
    own = {s: np.array([[s, 0, 0]], float) for s in frames}
    # a neighbour 4 um along +x in every frame: every frame read agrees
    plus = {s: np.vstack([own[s], [s + 4.0, 0, 0]]) for s in frames}
    assert pair_reading(P, 2, 0, x, y, plus, frames, window=2) == (4, 4)
    # a neighbour 4 um along -x: none agrees
    minus = {s: np.vstack([own[s], [s - 4.0, 0, 0]]) for s in frames}
    assert pair_reading(P, 2, 0, x, y, minus, frames, window=2) == (0, 4)
    # frames where the track is unlabelled (index 0) or that have no detections (index 4) are not read
    P[0] = np.nan
    del plus[4]
    assert pair_reading(P, 2, 0, x, y, plus, frames, window=2) == (2, 2)


def with_neighbour(frames_present=range(FRAMES), right_side=False):
    """The clean scene and an untracked neuron 4 um from neuron 12 (+x) detected in
    ``frames_present``; in frame 6 label 12 sits on that neuron's detection. With ``right_side``
    every frame but 6 also has a detection 4 um on the other side (-x) of neuron 12."""
    clean = scene()
    detections = clean[["recording", "frame", "detection", "x_um", "y_um", "z_um"]].copy()
    extra = []
    for t in range(FRAMES):
        p12 = position(clean, t, 12)
        if t in frames_present:
            extra.append(["hand", t, 900, *(p12 + [4.0, 0.0, 0.0])])
        if right_side and t != 6:
            extra.append(["hand", t, 901, *(p12 - [4.0, 0.0, 0.0])])
    detections = pd.concat([detections, pd.DataFrame(extra, columns=detections.columns)],
                           ignore_index=True)
    obs = clean.copy()
    move(obs, 6, 12, position(clean, 6, 12) + [4.0, 0.0, 0.0])
    return obs, detections


def test_displaced_label_onto_a_persistent_untracked_neuron_is_read_twice():
    """With the distance-only cut out of reach (displaced_factor 10^6), the label on the untracked
    neighbour is questioned by the second reading alone: all four frames around agree."""
    obs, detections = with_neighbour()
    rule = CheckSettings(displaced_factor=1e6)
    found = check_reference(obs, detections, rule).findings
    assert [(r.kind, tuple(r.frames), tuple(r.tracks), r.pair_agree, r.pair_read)
            for r in found.itertuples()] == [("displaced", (6,), (12,), 4, 4)]
    assert "in 4 of 4 frames around" in evidence_sentence(found.iloc[0])
    # the frames around say the label is right (a detection on the other side, the neighbour
    # seen in frame 6 only): not questioned without the distance-only cut ...
    obs, detections = with_neighbour(frames_present=[6], right_side=True)
    assert len(check_reference(obs, detections, rule).findings) == 0
    # ... and questioned with it (the label is 4 um from where its neighbours put it)
    assert check_reference(obs, detections).findings["kind"].tolist() == ["displaced"]


def test_a_stricter_rule_questions_less():
    obs, detections = with_errors()
    loose = check_reference(obs, detections).summary()["rows_questioned"]
    strict = check_reference(obs, detections, CheckSettings(z_min=1e6)).summary()["rows_questioned"]
    assert strict == 0 < loose


def run(argv: list[str], capsys) -> tuple[int, str]:
    """The command as a user runs it: its exit code and everything it printed."""
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_command_writes_outputs(tmp_path, capsys):
    obs, detections = with_errors()
    obs.to_csv(tmp_path / "tracks.csv", index=False)
    detections.to_csv(tmp_path / "detections.csv", index=False)
    out = tmp_path / "out"
    code, output = run(["check-reference", str(tmp_path / "tracks.csv"), "--detections",
                        str(tmp_path / "detections.csv"), "--out", str(out)], capsys)
    assert code == 0, output
    issues = pd.read_csv(out / "reference_issues.csv")
    assert sorted(issues["kind"]) == ["anchor", "crossed", "displaced", "duplicate", "one_sided"]
    assert issues["rank"].tolist() == [1, 2, 3, 4, 5]
    assert issues["strength"].is_monotonic_decreasing
    assert (out / "check.json").exists() and "<svg" in (out / "report.html").read_text()


def test_command_refuses_bad_detections_and_out_over_input(tmp_path, capsys):
    obs, detections = with_errors()
    obs.to_csv(tmp_path / "tracks.csv", index=False)
    detections.drop(columns="y_um").to_csv(tmp_path / "detections.csv", index=False)
    code, output = run(["check-reference", str(tmp_path / "tracks.csv"), "--detections",
                        str(tmp_path / "detections.csv"), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "y_um" in output and "detections.csv" in output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1
    # A detection with no position, or a fractional frame, is refused naming column and row
    # (it was read and silently left out of the neighbourhoods).
    for column, value, words in (("x_um", float("nan"), "column 'x_um', row 3"),
                                 ("frame", 1.5, "column 'frame', row 3")):
        bad = detections.astype({column: float})
        bad.loc[2, column] = value
        bad.to_csv(tmp_path / "bad.csv", index=False)
        code, output = run(["check-reference", str(tmp_path / "tracks.csv"), "--detections",
                            str(tmp_path / "bad.csv"), "--out", str(tmp_path / "o")], capsys)
        assert code == 2 and "bad.csv" in output and words in output, output
    code, output = run(["check-reference", str(tmp_path / "tracks.csv"), "--out", str(tmp_path)], capsys)
    assert code == 2 and "Traceback" not in output
    assert not (tmp_path / "reference_issues.csv").exists()


def test_evaluate_gives_metrics_on_all_and_on_unquestioned_rows(tmp_path, capsys):
    """Predictions that follow every neuron exactly, scored against the labels with the errors.
    The reference alone (no detection table) questions the crossed pair (2 rows, 17 and 19 in
    frame 14): those two rows count as wrong on all rows and are not scored on the others."""
    import json

    obs, _ = with_errors()
    truth = scene()
    obs.drop(columns="detection").to_csv(tmp_path / "reference.csv", index=False)
    truth.drop(columns="detection").rename(columns={"track": "pred_id"}).to_csv(
        tmp_path / "predictions.csv", index=False)
    out = tmp_path / "out"
    code, output = run(["evaluate", "--reference", str(tmp_path / "reference.csv"), "--predictions",
                        str(tmp_path / "predictions.csv"), "--check-reference", "--out", str(out)], capsys)
    assert code == 0, output
    assert "likely label errors" in output
    result = json.loads((out / "results.json").read_text())
    check = result["reference_check"]
    assert check["summary"]["rows_questioned"] == 2
    assert check["summary"]["rows_kept"] == len(obs) - 2
    kept = check["tracking_gt_unquestioned"]["hand"]
    everything = result["tracking_gt"]["hand"]
    assert kept["reference_observations"] == len(obs) - 2
    assert everything["reference_observations"] == len(obs)
    wrong = {k: round(v["reference_observations"] * (1 - v["correct_observation_rate"]))
             for k, v in (("all", everything), ("kept", kept))}
    assert wrong == {"all": 6, "kept": 4}
    report = (out / "report.html").read_text()
    assert "The reference check" in report and "likely label errors" in report

    from trackverify.report.numbers import fmt

    n = len(obs)  # 6 of n rows wrong on all rows; 4 of n - 2 on the unquestioned ones
    assert (f"All rows -> unquestioned rows (pooled): correct observation rate {fmt((n - 6) / n)} -> "
            f"{fmt((n - 6) / (n - 2))}") in check["note"]  # the six planted wrong labels; the crossed pair's two gone


def displaced_case(tmp_path):
    """The clean scene with one label moved for one frame: in frame 6 label 12 sits on an
    unlabelled detection 4 um along each axis from neuron 12 (on no neuron's place), neuron 12's
    own detection left unlabelled. Writes reference.csv (the labels), predictions.csv (the
    true neurons) and detections.csv (every detection, the stray one too)."""
    truth = scene()
    obs = truth.copy()
    stray = position(truth, 6, 12) + [4.0, 4.0, 4.0]
    move(obs, 6, 12, stray)
    detections = truth[["recording", "frame", "detection", "x_um", "y_um", "z_um"]].copy()
    detections.loc[len(detections)] = ["hand", 6, 998, *stray]
    obs.drop(columns="detection").to_csv(tmp_path / "reference.csv", index=False)
    truth.drop(columns="detection").rename(columns={"track": "pred_id"}).to_csv(
        tmp_path / "predictions.csv", index=False)
    detections.to_csv(tmp_path / "detections.csv", index=False)
    return obs, detections


def test_evaluate_detections_let_the_check_find_a_displaced_label(tmp_path, capsys):
    """Only the detection table shows that neuron 12's place in frame 6 holds a detection while
    its label sits elsewhere: the finding appears with --detections and not without."""
    import json

    obs, detections = displaced_case(tmp_path)
    pair = ["evaluate", "--reference", str(tmp_path / "reference.csv"), "--predictions",
            str(tmp_path / "predictions.csv"), "--check-reference"]
    code, output = run(pair + ["--out", str(tmp_path / "alone")], capsys)
    assert code == 0, output
    alone = json.loads((tmp_path / "alone" / "results.json").read_text())["reference_check"]
    assert alone["detections"] is None
    assert alone["summary"]["findings"] == 0 and alone["findings"] == []

    code, output = run(pair + ["--detections", str(tmp_path / "detections.csv"),
                               "--out", str(tmp_path / "with")], capsys)
    assert code == 0, output
    checked = json.loads((tmp_path / "with" / "results.json").read_text())["reference_check"]
    assert checked["detections"] == {"path": str(tmp_path / "detections.csv"), "rows": len(detections)}
    assert [(f["kind"], f["frames"], f["tracks"]) for f in checked["findings"]] == [("displaced", "6", "12")]
    assert checked["summary"]["rows_questioned"] == 1
    kept = checked["tracking_gt_unquestioned"]["hand"]
    assert kept["reference_observations"] == len(obs) - 1
    assert f"detections <code>{tmp_path / 'detections.csv'}</code>" in (tmp_path / "with" / "report.html").read_text()
    # The displaced label is the one wrong row on all rows (the prediction there is 6.9 um away);
    # without it every row is right.
    assert kept["correct_observation_rate"] == 1.0


def test_detections_without_a_recording_column_belong_to_the_one_recording(tmp_path, capsys):
    """A detection table without ``recording`` is the reference's one recording's (it was read
    under the default recording and matched none, so the displaced label went unseen)."""
    _, detections = displaced_case(tmp_path)
    detections.drop(columns="recording").to_csv(tmp_path / "plain.csv", index=False)
    code, output = run(["check-reference", str(tmp_path / "reference.csv"), "--detections",
                        str(tmp_path / "plain.csv"), "--out", str(tmp_path / "o")], capsys)
    assert code == 0, output
    assert pd.read_csv(tmp_path / "o" / "reference_issues.csv")["kind"].tolist() == ["displaced"]


def test_evaluate_refuses_detections_without_the_check_and_bad_detections(tmp_path, capsys):
    _, detections = displaced_case(tmp_path)
    pair = ["evaluate", "--reference", str(tmp_path / "reference.csv"), "--predictions",
            str(tmp_path / "predictions.csv")]
    code, output = run(pair + ["--detections", str(tmp_path / "detections.csv")], capsys)
    assert code == 2 and "Traceback" not in output and len(output.strip().splitlines()) == 1
    assert "--detections" in output and "--check-reference" in output
    cases = [("x_um", float("nan"), "bad.csv, column 'x_um', row 3"),
             ("frame", 1.5, "bad.csv, column 'frame', row 3"),
             ("recording", "elsewhere", "bad.csv, column 'recording', row 3")]
    for column, value, words in cases:
        bad = detections.astype({column: object if column == "recording" else float})
        bad.loc[2, column] = value
        bad.to_csv(tmp_path / "bad.csv", index=False)
        code, output = run(pair + ["--check-reference", "--detections", str(tmp_path / "bad.csv"),
                                   "--out", str(tmp_path / "o")], capsys)
        assert code == 2 and words in output and "Traceback" not in output, output
        assert len(output.strip().splitlines()) == 1 and not (tmp_path / "o" / "results.json").exists()
    # --out may not hold the detection table
    code, output = run(pair + ["--check-reference", "--detections", str(tmp_path / "detections.csv"),
                               "--out", str(tmp_path)], capsys)
    assert code == 2 and "Traceback" not in output


def test_anchor_contradictions_on_a_tracker_output():
    """The audit's view: a tracker's ids whose anchor frame (frame 0) holds id 25 on neuron
    27's detection (27 absent there); frames 1 and 2 place 25 elsewhere."""
    from trackverify.reference_check import anchor_contradictions

    obs, detections = with_errors()
    tracker = obs.rename(columns={"track": "pred_id"}).assign(pred_valid=True)
    found = anchor_contradictions(tracker, detections, id_column="pred_id")
    assert found[["recording", "anchor_frame", "id", "pattern", "partner"]].values.tolist() == [
        ["hand", 0, 25, "one_sided", 27]]
    assert found["contradicting_frames"].iat[0] == [1, 2]
    clean = scene().rename(columns={"track": "pred_id"})
    assert len(anchor_contradictions(clean, clean, id_column="pred_id")) == 0


def test_one_label_on_two_detections_is_a_duplicate():
    obs = scene()
    second = obs[(obs["frame"] == 8) & (obs["track"] == 3)].assign(detection=500, y_um=lambda t: t["y_um"] + 4.0)
    labels = pd.concat([obs, second], ignore_index=True)
    result = check_reference(labels)
    assert result.findings[["kind", "pattern"]].values.tolist() == [["duplicate", "duplicate"]]
    assert result.findings["frames"].iat[0] == [8] and result.findings["tracks"].iat[0] == [3]
    assert result.summary()["rows_questioned"] == 2


def test_row_order_does_not_change_the_findings():
    obs, detections = with_errors()
    shuffled = obs.sample(frac=1.0, random_state=3)
    a = check_reference(obs, detections)
    b = check_reference(shuffled, detections.sample(frac=1.0, random_state=4))
    key = ["kind", "pattern", "frames", "tracks", "strength"]
    pd.testing.assert_frame_equal(a.findings[key], b.findings[key])
    assert (b.rows.loc[obs.index, "questioned"].to_numpy() == a.rows["questioned"].to_numpy()).all()


@pytest.mark.parametrize("rows", [
    {"frame": [0, 0], "track": [1, 2], "x_um": [0.0, 5.0], "y_um": [0.0, 0.0]},  # one frame
    {"frame": [0, 1, 2], "track": [1, 1, 1], "x_um": [0.0, 1.0, 2.0], "y_um": [0.0] * 3},  # one track
    {"frame": [], "track": [], "x_um": [], "y_um": []},  # nothing
])
def test_too_little_to_check_questions_nothing(rows, tmp_path, capsys):
    """Without frames around or neighbours a residual is undefined (null): nothing is questioned."""
    obs = pd.DataFrame(rows).astype({"frame": "int64", "track": "int64"})
    result = check_reference(obs)
    assert result.summary()["rows_questioned"] == 0 and len(result.findings) == 0
    assert result.rows["residual_um"].isna().all()
    obs.to_csv(tmp_path / "tracks.csv", index=False)
    code, output = run(["check-reference", str(tmp_path / "tracks.csv"), "--out", str(tmp_path / "o")], capsys)
    if len(obs):
        assert code == 0, output
        assert pd.read_csv(tmp_path / "o" / "reference_issues.csv").empty
    else:
        assert code == 2 and "Traceback" not in output  # an empty table is refused by the reader


def test_two_dimensional_tracks():
    """A 5 x 5 grid in 2-D (8 um, drifting, 0.3 um noise): label 7 on neuron 8's detection in
    frame 5, 8 unlabelled there."""
    rng = np.random.default_rng(11)
    grid = np.array([(x, y) for x in range(5) for y in range(5)], float) * 8.0
    rows = [(t, k, *(p + [t, 0.5 * t] + rng.normal(0, 0.3, 2))) for t in range(10)
            for k, p in enumerate(grid)]
    truth = pd.DataFrame(rows, columns=["frame", "track", "x_um", "y_um"])
    obs = truth.copy()
    obs.loc[(obs["frame"] == 5) & (obs["track"] == 7), ["x_um", "y_um"]] = \
        truth.loc[(truth["frame"] == 5) & (truth["track"] == 8), ["x_um", "y_um"]].to_numpy()
    obs = obs[~((obs["frame"] == 5) & (obs["track"] == 8))]
    found = check_reference(obs, truth.drop(columns="track")).findings
    assert [(r.kind, r.frames, r.tracks, r.partner) for r in found.itertuples()] == [
        ("one_sided", [5], [7], 8)]


def test_run_gives_verification_on_all_and_on_unquestioned_rows(tmp_path):
    """``run --check-reference`` on the hand scene (clean predictions = its labels; no detection
    table, so the reference alone questions the crossed pair: 2 rows of frame 14)."""
    import json

    from tests.conftest import run_cli

    obs, _ = with_errors()
    obs = obs.assign(pred_id=obs["track"], pred_valid=True)
    path = tmp_path / "observations.csv"
    obs.to_csv(path, index=False)
    out = tmp_path / "out"
    result = run_cli("run", "--data", path, "--start", 4, "--recovery-end", 16, "--check-reference",
                     "--out", out)
    assert result.returncode == 0, result.stderr
    results = json.loads((out / "results.json").read_text())
    checked = results["reference_check"]["hand"]
    assert checked["summary"]["rows_questioned"] == 2
    assert json.loads((out / "manifest.json").read_text())["config"]["check_reference"] is True
    conditions = [c for c in checked["all_rows"] if c != "all_conditions"]
    for condition in conditions:  # each condition holds every reference row once
        gone = checked["all_rows"][condition]["n_rows"] - checked["unquestioned_rows"][condition]["n_rows"]
        assert gone == 2, condition
    pooled = checked["all_rows"]["all_conditions"]["n_rows"] - checked["unquestioned_rows"]["all_conditions"]["n_rows"]
    assert pooled == 2 * len(conditions)
    assert checked["all_rows"]["control"]["n_rows"] == len(obs)
    # The report says it, with both populations side by side for every condition.
    report = (out / "report.html").read_text()
    section = report[report.index("The reference check: what the reference can support"):]
    assert "<h3>hand</h3>" in section and "likely label errors" in section
    for condition in checked["all_rows"]:
        assert f"<td>{condition}</td>" in section, condition
    errors = checked["unquestioned_rows"]["all_conditions"]["n_errors"]
    row = section[section.index("<td>all_conditions</td>"):].split("</tr>")[0]
    assert f"<td>{checked['all_rows']['all_conditions']['n_errors']}</td>" in row and f"<td>{errors}</td>" in row
    answer = report[report.index('<section class="answer">'):report.index("</section>")]
    assert "the check questions 2 of" in answer


def _brute_coverage_at_fcr(error, score, max_fcr=0.01):
    """Largest share of correct rows accepted by a threshold that accepts at most max_fcr of the
    errors, by trying every threshold (accept nothing, or every finite score)."""
    finite = np.isfinite(score)
    n_errors = int((error == 1).sum())
    best = 0.0
    for t in np.r_[-np.inf, np.unique(score[finite])]:
        accepted = finite & (score <= t)
        if (accepted & (error == 1)).sum() / n_errors <= max_fcr:
            best = max(best, (accepted & (error == 0)).sum() / len(error))
    return best


def test_run_pools_both_populations_over_recordings(tmp_path, capsys):
    """``run --check-reference`` on two recordings, each with one crossed pair in its labels
    (hand: 17 and 19 in frame 14; other: 2 and 4 in frame 8) that the clean predictions do not
    follow (they name the true neurons, so the pair's rows are wrong in the control). The pooled
    block is checked against numbers computed here from observations.parquet (every scored
    row), the questioned rows named by construction, sklearn's roc_auc_score and a brute-force
    operating point."""
    import json

    from sklearn.metrics import roc_auc_score

    hand, _ = with_errors()
    other = scene(8).assign(recording="other")
    p2, p4 = position(other, 8, 2), position(other, 8, 4)
    move(other, 8, 2, p4)
    move(other, 8, 4, p2)
    crossed = {("hand", 14, 17): 19, ("hand", 14, 19): 17, ("other", 8, 2): 4, ("other", 8, 4): 2}
    obs = pd.concat([hand, other], ignore_index=True)
    keys = list(zip(obs["recording"], obs["frame"], obs["track"]))
    obs["pred_id"] = [crossed.get(k, k[2]) for k in keys]
    obs["pred_valid"] = True
    path = tmp_path / "observations.csv"
    obs.to_csv(path, index=False)
    out = tmp_path / "out"
    code, output = run(["run", "--data", str(path), "--start", "4", "--recovery-end", "16",
                        "--check-reference", "--out", str(out)], capsys)
    assert code == 0, output
    checked = json.loads((out / "results.json").read_text())["reference_check"]
    assert {n: checked[n]["summary"]["rows_questioned"] for n in ("hand", "other")} == {"hand": 2, "other": 2}
    pooled = checked["pooled"]
    assert pooled["summary"] == {"recordings": 2, "rows": len(obs), "rows_questioned": 4,
                                 "rows_kept": len(obs) - 4, "findings": 2}

    rows = pd.read_parquet(out / "observations.parquet")
    questioned = pd.Series([k in crossed for k in zip(rows["recording"], rows["frame"], rows["track"])])
    error = rows["error"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    score = rows["score"].to_numpy(dtype=float)

    def expected(at: np.ndarray) -> dict:
        e, s = error[at], score[at]
        labelled, finite = ~np.isnan(e), np.isfinite(s)
        n_errors = int((e == 1).sum())
        accepted = finite & (s <= 5.0)  # the run's declared threshold
        y = e[labelled & finite] == 1
        auroc = roc_auc_score(y, s[labelled & finite]) if 0 < y.sum() < len(y) else None
        top = s[finite].max() + 1
        y_all = e[labelled] == 1
        star = (roc_auc_score(y_all, np.where(finite, s, top)[labelled])
                if 0 < y_all.sum() < len(y_all) else None)
        return {"n_rows": int(at.sum()), "n_labelled": int(labelled.sum()), "n_errors": n_errors,
                "auroc": auroc, "auroc_abstain_as_error": star,
                "certified_coverage": accepted.sum() / len(e),
                "false_certification_rate": (accepted & (e == 1)).sum() / n_errors if n_errors else None,
                "correct_coverage_at_fcr": _brute_coverage_at_fcr(e, s) if n_errors else None}

    conditions = list(rows["condition"].astype(str).unique())
    everywhere = np.ones(len(rows), bool)
    for condition in conditions + ["all_conditions"]:
        at = everywhere if condition == "all_conditions" else (rows["condition"] == condition).to_numpy()
        for population, mask in (("all_rows", at), ("unquestioned_rows", at & ~questioned.to_numpy())):
            want, got = expected(mask), pooled[population][condition]
            assert set(got) == set(want), (condition, population)
            for key, value in want.items():
                assert got[key] == (None if value is None else pytest.approx(value)), (condition, population, key)
        gone = at & questioned.to_numpy()
        assert pooled["dropped"][condition] == {"rows": int(gone.sum()),
                                                "errors": int((error[gone] == 1).sum())}
    # The pair's rows are wrong in the control: each recording's two, four pooled, all dropped.
    assert pooled["dropped"]["control"] == {"rows": 4, "errors": 4}
    assert pooled["all_rows"]["control"]["n_errors"] == 4
    assert pooled["unquestioned_rows"]["control"]["n_errors"] == 0
    # The report gives the pooled block first.
    report = (out / "report.html").read_text()
    section = report[report.index("The reference check: what the reference can support"):]
    assert section.index("All recordings, pooled") < section.index("<h3>hand</h3>")
    assert "The check questions 4 of" in section
    answer = report[report.index('<section class="answer">'):report.index("</section>")]
    assert f"the check questions 4 of its {len(obs):,} rows" in answer


def test_audit_reports_the_anchor_frame_contradiction():
    """The audit trusts the anchor frame; its summary names an anchor label the following
    frames contradict (id 25 on neuron 27's detection in frame 0), with those frames."""
    import trackverify

    obs, detections = with_errors()
    tracker = obs.drop(columns=["track", "detection"]).assign(pred_id=obs["track"], pred_valid=True)
    # each moved label now names the detection it sits on
    tracker = tracker.merge(detections, on=["recording", "frame", "x_um", "y_um", "z_um"], how="left")
    assert tracker["detection"].notna().all()
    result = trackverify.audit(tracker, detections)
    found = result.summary["anchor_contradictions"]
    assert [(f["id"], f["pattern"], f["partner"], f["contradicting_frames"]) for f in found] == [
        (25, "one_sided", 27, [1, 2])]
