"""``trackverify evidence --recordings`` and its corruption window (issue 14 item 6): given
(``--start`` / ``--recovery-end``), SPEC's, or scaled to a short recording; its hints name
only its own options. Every expected window and message is worked out by hand in the comments.
"""

from __future__ import annotations

import json

import numpy as np

from tests.conftest import gapped_table, run_cli
from trackverify.benchmark.evidence import evidence_window


def test_evidence_window_rules_by_hand():
    long = np.repeat(np.arange(1000), 2)  # T = 1000 > 700
    assert evidence_window(long) == {"start": 300, "recovery_end": 700, "rule": "spec"}
    no_300 = long[long != 300]  # SPEC's start in a gap: the next frame holding two tracks
    assert evidence_window(no_300) == {"start": 301, "recovery_end": 700,
                                       "rule": "spec, start moved"}
    short = np.repeat(np.arange(512), 2)  # the ZephIR demo's 512 frames: 153, 358
    assert evidence_window(short) == {"start": 153, "recovery_end": 358, "rule": "scaled"}
    assert evidence_window(short, 100) == {"start": 100, "recovery_end": 700, "rule": "given"}
    assert evidence_window(short, 100, 200) == {"start": 100, "recovery_end": 200,
                                                "rule": "given"}


def short_folder(tmp_path, frames=12, missing=(3,)):
    """A data folder with one 4-track recording of ``frames`` frames without ``missing``."""
    folder = tmp_path / "data"
    folder.mkdir()
    gapped_table(frames, missing).to_csv(folder / "observations.csv", index=False)
    return folder


def test_evidence_takes_start_and_recovery_end_and_records_them(tmp_path):
    folder = short_folder(tmp_path)
    result = run_cli("evidence", "--out", tmp_path / "out", "--levels", "", "--draws", 1,
                     "--recordings", folder, "--start", 4, "--recovery-end", 8)
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "out" / "evidence.json").read_text())["recordings"]
    assert [r["window"] for r in rows] == [
        {"start": 4, "recovery_end": 8, "rule": "given", "first_frame": 0}] * 2
    html = (tmp_path / "out" / "evidence.html").read_text()
    assert "window start" in html and "window recovery_end" in html


def test_evidence_scales_the_window_of_a_short_recording(tmp_path):
    # T = 12, frame 3 missing: floor(3.6) = 3 is in the gap -> 4; floor(8.4) = 8
    folder = short_folder(tmp_path)
    result = run_cli("evidence", "--out", tmp_path / "out", "--levels", "", "--draws", 1,
                     "--recordings", folder)
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "out" / "evidence.json").read_text())["recordings"]
    assert [r["window"] for r in rows] == [
        {"start": 4, "recovery_end": 8, "rule": "scaled", "first_frame": 0}] * 2


def test_evidence_hints_name_only_its_own_options(tmp_path):
    folder = short_folder(tmp_path)
    out = tmp_path / "out"
    short = run_cli("evidence", "--out", out, "--levels", "", "--draws", 1, "--recordings",
                    folder, "--start", 5)  # recovery_end 700 > T = 12; window 4, 8 as above
    assert short.returncode == 2 and "Traceback" not in short.stderr
    assert short.stderr == (
        f"trackverify: error: {folder}: recording 'r' spans 12 frame numbers (0-11; 11 of them "
        "present), too short for "
        "'swap_and_recovery' (needs more than recovery_end = 700); try --start 4 --recovery-end 8\n")
    gap = run_cli("evidence", "--out", out, "--levels", "", "--draws", 1, "--recordings",
                  folder, "--start", 3, "--recovery-end", 8)
    assert gap.returncode == 2
    assert gap.stderr == (
        f"trackverify: error: {folder}: recording 'r': 'single_frame_swap' draws among the "
        "tracks observed at frame 3, which holds no observation (a gap in the recording's frame "
        "numbers); the nearest frames with 2 or more observed tracks are 2 and 4; try --start 4\n")
    for result in (short, gap):
        assert "--conditions" not in result.stderr and "--config" not in result.stderr


def test_evidence_refuses_a_bad_window_as_run_does(tmp_path):
    folder = short_folder(tmp_path)
    for flags, message in ((("--start", 0), "start must be >= 1 (frame 0 is the anchor), got 0"),
                           (("--start", 8, "--recovery-end", 8),
                            "recovery_end (8) must be > start (8)")):
        both = [run_cli(command, *args, *map(str, flags), "--out", tmp_path / command)
                for command, args in (("run", ("--data", folder)),
                                      ("evidence", ("--levels", "", "--recordings", folder)))]
        assert [r.returncode for r in both] == [2, 2]
        assert [r.stderr for r in both] == [f"trackverify: error: command line: {message}\n"] * 2


def test_evidence_recordings_given_a_file_names_its_folder(tmp_path):
    """--recordings takes data folders: a file (observations.parquet itself) is refused
    with exit 2, saying what it takes and the folder to give; nothing is written."""
    folder = tmp_path / "data"
    folder.mkdir()
    file = folder / "observations.parquet"
    file.write_bytes(b"not read")
    result = run_cli("evidence", "--recordings", file, "--out", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (f"'{file}' is a file; --recordings takes a data folder holding "
            f"observations.parquet [+ detections.parquet] (the folder of this file: "
            f"'{folder}')") in result.stderr
    assert not (tmp_path / "out").exists()
    help_text = run_cli("evidence", "--help").stdout
    assert "a folder (not a file)" in " ".join(help_text.split())
