"""The corruption window on recordings that do not fit SPEC's 300 / 700 (issue 14 items 2, 3):
a start frame in a gap of the frame numbers, frames numbered from 756, the scaled window the
hints suggest.

Every expected message and window is worked out by hand in the comments.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED, gapped_table, observation_table, run_cli
from trackverify.corrupt import WindowError, plan_corruptions, scaled_window

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
        "of --config; docs/configuration.md)")


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
            "of --config; docs/configuration.md)") in result.stderr


def test_the_short_recording_message_gives_its_input_frames(tmp_path):
    # 10 frames numbered 756..765; T = 10 <= start 300; window floor(3), floor(7) = 3, 7
    path = tmp_path / "obs.csv"
    gapped_table(missing=(), first=756).to_csv(path, index=False)
    result = run_cli("verify", "--observations", path, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert ("recording 'r' spans 10 frame numbers (0-9, input frames 756-765; 10 of them present), "
            "too short for "
            "'single_frame_swap' (needs more than 300); try --start 3 --recovery-end 7, or "
            "--conditions control (or set start / recovery_end / conditions in the [run] table "
            "of --config; docs/configuration.md)") in result.stderr


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
                       r"\(needs more than 300\); try start=15 and recovery_end=35, or "
                       r"conditions=\['control'\] \(or set start / recovery_end / conditions "
                       r"in the \[run\] table of config_file; docs/configuration.md\)$"):
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
            "docs/configuration.md)") in result.stderr
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
