"""Inputs are never modified; a run killed midway leaves the previous results or none."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import observation_table, run_cli
from trackverify import stop
from trackverify.io.atomic import write_text_atomic
from trackverify.io.tabular import ParquetStream


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_commands_never_touch_their_inputs(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    table = observation_table(frames=12)
    table.to_csv(inputs / "obs.csv", index=False)
    table.to_parquet(inputs / "obs.parquet", index=False)
    (inputs / "run.toml").write_text("[run]\nstart = 4\nrecovery_end = 8\n")
    before = digest(inputs)
    commands = [
        ["verify", "--observations", inputs / "obs.csv", "--start", 4, "--recovery-end", 8,
         "--out", tmp_path / "o1"],
        ["run", "--data", inputs / "obs.parquet", "--config", inputs / "run.toml", "--out", tmp_path / "o2"],
    ]
    for command in commands:
        result = run_cli(*command)
        assert result.returncode == 0, result.stderr
        assert digest(inputs) == before, command


def _wait_for(condition, process, seconds: float = 300.0) -> None:
    """Poll until ``condition()`` holds (an event, not a delay); fail if the run ends first."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, "the run ended before it was ready to be stopped"
        assert time.monotonic() < deadline, "the run never got ready"
        time.sleep(0.01)


def test_sigterm_midway_leaves_previous_results_or_none_and_rerun_succeeds(tmp_path):
    out = tmp_path / "results"
    first = run_cli("run", "--frames", 400, "--motion", "still", "--start", 100, "--recovery-end", 200,
                    "--out", out)
    assert first.returncode == 0, first.stderr
    previous = (out / "results.json").read_bytes()
    process = subprocess.Popen([sys.executable, "-m", "trackverify", "run", "--frames", "1000",
                                "--animals", "3", "--motion", "free", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Readiness, not a delay: the rows' temporary file appears when the recordings start
    # (start-up is over, the handler is in place) and is renamed only after all three.
    _wait_for(lambda: any(p.name.endswith(".tmp") for p in out.iterdir()), process)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert "Traceback" not in stderr
    assert process.returncode == 143, stderr
    current = (out / "results.json").read_bytes()
    json.loads(current)  # whole, never truncated
    assert current == previous
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    rerun = run_cli("run", "--frames", 400, "--motion", "still", "--start", 100, "--recovery-end", 200,
                    "--out", out)
    assert rerun.returncode == 0 and (out / "results.json").read_bytes() == previous


SWALLOWING_CHILD = """
import signal, sys
import trackverify.benchmark.run as run

original = run.process_recording

def swallowing(task):  # a library that swallows every exception, the SIGTERM's among them
    try:
        signal.raise_signal(signal.SIGTERM)
    except BaseException:
        pass
    return original(task)

run.process_recording = swallowing
from trackverify.cli.app import main
main(sys.argv[1:])
"""


def test_a_sigterm_whose_exception_is_swallowed_still_commits_nothing_and_exits_143(tmp_path):
    """The handler records the signal: every later rename is refused and the exit is 143."""
    out = tmp_path / "results"
    arguments = ["run", "--frames", "60", "--motion", "still", "--start", "10",
                 "--recovery-end", "30", "--out", str(out)]
    first = run_cli(*arguments)
    assert first.returncode == 0, first.stderr
    previous = digest(out)
    child = subprocess.run([sys.executable, "-c", SWALLOWING_CHILD, *arguments],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 143, (child.returncode, child.stderr)
    assert "terminated" in child.stderr and "Traceback" not in child.stderr
    assert digest(out) == previous  # nothing renamed into place, no temporary file left


def test_after_a_sigterm_no_output_is_renamed_into_place(tmp_path, monkeypatch):
    monkeypatch.setattr(stop, "_requested", False)
    write_text_atomic(tmp_path / "before.txt", "kept")
    stop.record()
    with pytest.raises(stop.Terminated):
        write_text_atomic(tmp_path / "after.txt", "never")
    with pytest.raises(stop.Terminated):
        with ParquetStream(tmp_path / "rows.parquet") as rows:
            rows.write(pd.DataFrame({"a": [1, 2]}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["before.txt"]


STARTING_CHILD = """
import runpy, signal, sys

class SignalDuringImport:  # SIGTERM arrives while the command line is being imported
    def find_spec(self, name, path=None, target=None):
        if name == "trackverify.cli.app":
            signal.raise_signal(signal.SIGTERM)
        return None

sys.meta_path.insert(0, SignalDuringImport())
sys.argv = ["trackverify", "--version"]
runpy.run_module("trackverify", run_name="__main__")
"""


def test_sigterm_during_start_up_exits_143_not_minus_15():
    """``python -m trackverify`` installs its handler before any slow import."""
    child = subprocess.run([sys.executable, "-c", STARTING_CHILD], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 143, (child.returncode, child.stderr)
    assert "Traceback" not in child.stderr
