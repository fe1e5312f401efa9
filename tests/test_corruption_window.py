"""The corruption window on recordings that do not fit SPEC's 300 / 700 (issue 14 items 2, 3):
a start frame in a gap of the frame numbers, frames numbered from 756, the scaled window the
hints suggest.

Every expected message and window is worked out by hand in the comments.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED, gapped_table, observation_table, run_cli
from trackverify.benchmark.corrupt import (EVIDENCE_OPTIONS, PYTHON_OPTIONS, RUN_OPTIONS, WindowError,
                                 WindowOptions, WindowProblem, plan_corruptions, scaled_window)

REAL = SHARED / "data" / "fdnc-nerve-freely-moving"
SIX = ("control", "single_frame_swap", "persistent_swap", "swap_and_recovery", "nearby_swap",
       "fragmentation", "dropout")


def test_start_in_a_gap_names_the_nearest_present_frames():
    # frame 3 is missing: frames 2 and 4 hold all four tracks; 4 < recovery_end 6 -> --start 4
    with pytest.raises(WindowError) as info:
        plan_corruptions(gapped_table(), SIX, 1, 3, 6, "r")
    assert str(info.value) == (
        "recording 'r': 'single_frame_swap' draws among the tracks observed at frame 3, which "
        "holds no observation (a gap in the recording's frame numbers); the nearest frames with "
        "2 or more observed tracks are 2 and 4; try --start 4 (or set start in the [run] table "
        "of --config; docs/reference/configuration.md)")


def test_a_start_with_too_few_tracks_names_frames_that_have_enough():
    # frames 3 and 4 hold track A only: the pair swaps need 2 -> frames 2 and 5; --start 5
    table = observation_table(frames=10)
    table = table[~(table["frame"].isin([3, 4]) & (table["track"] != "A"))]
    with pytest.raises(WindowError, match=r"^recording 'r': 'single_frame_swap' needs 2 "
                       r"track\(s\) observed at frame 3, found 1; the nearest frames with 2 or "
                       r"more observed tracks are 2 and 5; try --start 5 \(or set"):
        plan_corruptions(table, SIX, 1, 3, 6, "r")


def test_a_gap_after_the_recovery_end_suggests_the_frame_before():
    # frames 3-6 missing, recovery_end 6: frame 7 is not < 6, so the suggestion is frame 2
    with pytest.raises(WindowError, match="frames with 2 or more observed tracks are 2 and 7; "
                                          "try --start 2 "):
        plan_corruptions(gapped_table(missing=(3, 4, 5, 6)), SIX, 1, 3, 6, "r")


def refused_window(tmp_path, table: pd.DataFrame):
    """``verify --start 3 --recovery-end 6`` on ``table`` (as a CSV): exit 2, no traceback."""
    path = tmp_path / "obs.csv"
    table.to_csv(path, index=False)
    result = run_cli("verify", "--observations", path, "--start", 3, "--recovery-end", 6,
                     "--out", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    return path, result


def test_the_gap_message_gives_the_input_numbers_of_a_recording_starting_at_756(tmp_path):
    # input frames 756..765 without 759: counted frame 3 = input 759; 2, 4 = input 758, 760
    path, result = refused_window(tmp_path, gapped_table(missing=(3,), first=756))
    assert (f"trackverify: error: {path}: recording 'r': 'single_frame_swap' draws among the "
            "tracks observed at frame 3 (input frame 759), which holds no observation (a gap in "
            "the recording's frame numbers); the nearest frames with 2 or more observed tracks "
            "are 2 and 4 (input 758 and 760); try --start 4 (or set start in the [run] table "
            "of --config; docs/reference/configuration.md)") in result.stderr


def test_the_short_recording_message_gives_its_input_frames(tmp_path):
    # 10 frames numbered 756..765; T = 10 <= start 300; window floor(3), floor(7) = 3, 7
    path = tmp_path / "obs.csv"
    gapped_table(missing=(), first=756).to_csv(path, index=False)
    result = run_cli("verify", "--observations", path, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert ("recording 'r' spans 10 frame numbers (0-9, input frames 756-765; 10 of them present), "
            "too short for "
            "'single_frame_swap' (needs more than start = 300); try --start 3 --recovery-end 7, or "
            "--conditions control (or set start / recovery_end / conditions in the [run] table "
            "of --config; docs/reference/configuration.md)") in result.stderr


def test_a_worker_process_keeps_the_reworded_message(tmp_path):
    """--jobs 2: the error crosses a process boundary (pickled) and keeps its wording."""
    folder = tmp_path / "data"
    folder.mkdir()
    two = pd.concat([gapped_table(first=756), gapped_table(first=756).assign(recording="s")])
    two.to_csv(folder / "observations.csv", index=False)
    result = run_cli("run", "--data", folder, "--start", 3, "--recovery-end", 6, "--jobs", 2,
                     "--executor", "process", "--no-rows", "--out", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (f"{folder}: recording 'r': 'single_frame_swap' draws among the tracks observed at "
            "frame 3 (input frame 759)") in result.stderr


def test_scaled_window_by_hand():
    # T = 100 with frame 30 missing: floor(30) -> moved on to 31, floor(70) = 70
    frames = np.repeat(np.setdiff1d(np.arange(100), [30]), 2)
    assert scaled_window(frames) == (31, 70)
    # frame 30 holds one observation only: still moved on (the pair swaps need two)
    assert scaled_window(np.concatenate([frames, [30]])) == (31, 70)
    # T = 3: floor(0.9) = 0 -> start at least 1, end floor(2.1) = 2 < 3
    assert scaled_window(np.repeat(np.arange(3), 2)) == (1, 2)
    # T = 2: end floor(1.4) = 1 is not > start 1: no window
    assert scaled_window(np.repeat(np.arange(2), 2)) is None


@pytest.mark.skipif(not (REAL / "detections.parquet").exists(),
                    reason="../shared/data/fdnc-nerve-freely-moving is not present")
def test_the_real_recording_without_frame_300_names_frames_299_and_301(tmp_path):
    folder = tmp_path / "gap"
    folder.mkdir()
    for name in ("observations", "detections"):
        table = pd.read_parquet(REAL / f"{name}.parquet")
        table[table["frame"] != 300].to_parquet(folder / f"{name}.parquet")
    result = run_cli("run", "--data", folder, "--no-rows", "--out", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # SOURCE.md: frames 299 and 301 are present in the recording
    assert ("'single_frame_swap' draws among the tracks observed at frame 300, which holds no "
            "observation (a gap in the recording's frame numbers); the nearest frames with 2 or "
            "more observed tracks are 299 and 301; try --start 301") in result.stderr


def test_trackverify_verify_hints_name_its_keyword_arguments():
    import trackverify

    # 50 frames from 756 without counted frame 3: floor(15), floor(35); 2 and 4 around the gap
    table = gapped_table(frames=50, first=756)
    with pytest.raises(trackverify.InputError, match=r"too short for 'single_frame_swap' "
                       r"\(needs more than start = 300\); try start=15 and recovery_end=35, or "
                       r"conditions=\['control'\] \(or set start / recovery_end / conditions "
                       r"in the \[run\] table of config_file; docs/reference/configuration.md\)$"):
        trackverify.verify(table)
    with pytest.raises(trackverify.InputError, match=r"frame 3 \(input frame 759\), which holds "
                       r"no observation .* are 2 and 4 \(input 758 and 760\); try start=4 "
                       r"\(or set start in the \[run\] table of config_file; "):
        trackverify.verify(table, start=3, recovery_end=6)


def test_too_few_anchored_tracks_at_start_exit_2(tmp_path):
    # frame 0 holds track A only: B, C, D are observed at frame 3 but have no anchor identity
    table = observation_table(frames=10)
    path, result = refused_window(tmp_path, table[(table["frame"] != 0) | (table["track"] == "A")])
    assert (f"trackverify: error: {path}: recording 'r': 'single_frame_swap' needs 2 track(s) "
            "observed at frame 3 with an identity in the anchor frame (frame 0), found 1 (and 3 "
            "without one: their rows are unlabelled, so a corruption of them injects no error); "
            "try another --start (or set start in the [run] table of --config; "
            "docs/reference/configuration.md)") in result.stderr
    assert not list((tmp_path / "out").glob("*"))  # nothing written (an empty folder at most)


def test_a_refused_window_leaves_no_empty_output_folder(tmp_path):
    # the rows stream created out/a/b for observations.parquet; the window error came before
    # any row: out, out/a and out/a/b are removed, a folder that already held a file is kept
    table = gapped_table(missing=(3,))
    path = tmp_path / "obs.csv"
    table.to_csv(path, index=False)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    for out in (tmp_path / "out" / "a" / "b", tmp_path / "kept" / "run"):
        result = run_cli("verify", "--observations", path, "--start", 3, "--recovery-end", 6,
                         "--out", out)
        assert result.returncode == 2 and "gap in the recording's frame numbers" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "obs.csv"]
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["notes.txt"]


def test_results_give_the_span_and_the_present_frames(tmp_path):
    # input frames 756..765 without 759 and 762: T = 765 - 756 + 1 = 10, 8 of them present
    path = tmp_path / "obs.csv"
    gapped_table(missing=(3, 6), first=756).to_csv(path, index=False)
    result = run_cli("verify", "--observations", path, "--start", 4, "--recovery-end", 7,
                     "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "out" / "results.json").read_text())["recordings"]["r"]
    assert (summary["first_frame"], summary["frames"], summary["frames_present"]) == (756, 10, 8)


def refusal(table: pd.DataFrame, start: int, recovery_end: int) -> WindowError:
    """The WindowError of plan_corruptions on ``table`` with SIX for recording 'r'."""
    with pytest.raises(WindowError) as info:
        plan_corruptions(table, SIX, 1, start, recovery_end, "r")
    return info.value


RUN_NOTE = "in the [run] table of --config; docs/reference/configuration.md)"


def test_a_short_recording_lists_the_conditions_that_fit_in_every_wording():
    # T = 10, start 3, recovery_end 20: the modes on [start, T) fit (10 > 3), those on
    # [start, recovery_end) do not (10 <= 20); swap_and_recovery is the first that fails.
    # Scaled window floor(3), floor(7) = 3, 7 (frame 3 holds four tracks); 10 of 10 present.
    error = refusal(gapped_table(missing=()), 3, 20)
    fits = "control,single_frame_swap,persistent_swap,fragmentation,dropout"
    head = ("recording 'r' spans 10 frame numbers (0-9{}; 10 of them present), too short for "
            "'swap_and_recovery' (needs more than recovery_end = 20); try ")
    assert str(error) == (head.format("") + f"--start 3 --recovery-end 7, or --conditions {fits} "
                          "(or set start / recovery_end / conditions " + RUN_NOTE)
    # frame 0 is input frame 756: counted 0-9 = input 756-765
    assert str(error.reworded(RUN_OPTIONS, 756)) == (
        head.format(", input frames 756-765") + "--start 3 --recovery-end 7, or --conditions "
        f"{fits} (or set start / recovery_end / conditions " + RUN_NOTE)
    # evidence: no --conditions, no config file
    assert str(error.reworded(EVIDENCE_OPTIONS)) == head.format("") + "--start 3 --recovery-end 7"
    # a command with a config file but no --conditions names only the two window keys
    assert str(error.reworded(WindowOptions(conditions=False))) == (
        head.format("") + "--start 3 --recovery-end 7 (or set start / recovery_end " + RUN_NOTE)
    # trackverify.verify: keyword arguments, the list as a Python list
    assert str(error.reworded(PYTHON_OPTIONS)) == (
        head.format("") + "start=3 and recovery_end=7, or conditions=['control', "
        "'single_frame_swap', 'persistent_swap', 'fragmentation', 'dropout'] (or set start / "
        "recovery_end / conditions in the [run] table of config_file; docs/reference/configuration.md)")


def test_a_start_equal_to_the_span_fits_control_only():
    # T = 10 = start: [10, 10) is empty, so no mode fits, not even those on [start, T)
    assert str(refusal(gapped_table(missing=()), 10, 20)) == (
        "recording 'r' spans 10 frame numbers (0-9; 10 of them present), too short for "
        "'single_frame_swap' (needs more than start = 10); try --start 3 --recovery-end 7, or "
        "--conditions control (or set start / recovery_end / conditions " + RUN_NOTE)


def test_a_problem_without_a_count_of_present_frames_says_none():
    # present None (the default): no "; N of them present"; no conditions and no window:
    # only control is suggested, or nothing where the command has no --conditions
    problem = WindowProblem("r", "dropout", 300, 700, 10)
    head = ("recording 'r' spans 10 frame numbers (0-9), too short for 'dropout' (needs more "
            "than start = 300); ")
    assert problem.message() == (head + "try --conditions control (or set start / recovery_end "
                                 "/ conditions " + RUN_NOTE)
    assert problem.message(EVIDENCE_OPTIONS) == (
        head + "no corruption window fits it (a frame after the anchor with 2 observed tracks, "
        "then a recovery end before its last frame)")


def test_no_frame_with_two_tracks_suggests_control_where_the_command_has_conditions():
    # after frame 0 only track A is observed: no frame 1.. holds 2 tracks (nearest: none)
    table = observation_table(frames=10)
    error = refusal(table[(table["frame"] == 0) | (table["track"] == "A")], 3, 6)
    head = ("recording 'r': 'single_frame_swap' needs 2 track(s) observed at frame 3, found 1; "
            "no frame after the anchor has 2 observed track(s)")
    assert str(error) == head + "; try --conditions control"
    assert str(error.reworded(EVIDENCE_OPTIONS)) == head


def test_a_frame_after_the_gap_at_the_recovery_end_is_not_suggested():
    # frames 3-5 missing, recovery_end 6: frame 6 is not < 6, so the suggestion is frame 2
    assert str(refusal(gapped_table(missing=(3, 4, 5)), 3, 6)) == (
        "recording 'r': 'single_frame_swap' draws among the tracks observed at frame 3, which "
        "holds no observation (a gap in the recording's frame numbers); the nearest frames with "
        "2 or more observed tracks are 2 and 6; try --start 2 (or set start " + RUN_NOTE)


def test_only_a_frame_after_the_recovery_end_asks_for_a_later_recovery_end():
    # frames 1-6 missing: nothing usable before 3 (frame 0 is the anchor), 7 is not < 6
    error = refusal(gapped_table(missing=(1, 2, 3, 4, 5, 6)), 3, 6)
    assert str(error) == (
        "recording 'r': 'single_frame_swap' draws among the tracks observed at frame 3, which "
        "holds no observation (a gap in the recording's frame numbers); the nearest frame with "
        "2 or more observed tracks is 7; try --start 7 and a later recovery end (or set start "
        + RUN_NOTE)
    # numbered from 756: counted 3 = input 759, 7 = input 763
    assert str(error.reworded(PYTHON_OPTIONS, 756)) == (
        "recording 'r': 'single_frame_swap' draws among the tracks observed at frame 3 (input "
        "frame 759), which holds no observation (a gap in the recording's frame numbers); the "
        "nearest frame with 2 or more observed tracks is 7 (input 763); try start=7 and a later "
        "recovery end (or set start in the [run] table of config_file; docs/reference/configuration.md)")


def test_too_few_anchored_tracks_in_keyword_wording():
    # frame 0 holds track A only: B, C, D at frame 3 have no anchor identity
    table = observation_table(frames=10)
    error = refusal(table[(table["frame"] != 0) | (table["track"] == "A")], 3, 6)
    assert str(error.reworded(PYTHON_OPTIONS)) == (
        "recording 'r': 'single_frame_swap' needs 2 track(s) observed at frame 3 with an "
        "identity in the anchor frame (frame 0), found 1 (and 3 without one: their rows are "
        "unlabelled, so a corruption of them injects no error); try another start (or set start "
        "in the [run] table of config_file; docs/reference/configuration.md)")


def test_a_window_error_keeps_its_place_when_named_reworded_and_pickled():
    problem = WindowProblem("r", "dropout", 300, 700, 10)
    head = ("recording 'r' spans 10 frame numbers (0-9{}), too short for 'dropout' (needs more "
            "than start = 300); ")
    python = (head.format("") + "try conditions=['control'] (or set start / recovery_end / "
              "conditions in the [run] table of config_file; docs/reference/configuration.md)")
    run = head.format("") + "try --conditions control (or set start / recovery_end / conditions " + RUN_NOTE
    error = WindowError(problem, options=PYTHON_OPTIONS, source="obs.csv", column="frame", row=4)
    assert str(error) == "obs.csv, column 'frame', row 4: " + python
    # named: another file, the same column, row and wording
    assert str(error.named("other.csv")) == "other.csv, column 'frame', row 4: " + python
    assert str(error.reworded()) == "obs.csv, column 'frame', row 4: " + run
    # across a process boundary (pickled), then reworded with the input's numbering
    restored = pickle.loads(pickle.dumps(error))
    assert str(restored) == "obs.csv, column 'frame', row 4: " + python
    assert str(restored.reworded(EVIDENCE_OPTIONS, 756)) == (
        "obs.csv, column 'frame', row 4: " + head.format(", input frames 756-765")
        + "no corruption window fits it (a frame after the anchor with 2 observed tracks, then a "
        "recovery end before its last frame)")
