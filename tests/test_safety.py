"""Inputs are never modified; a run killed midway leaves the previous results or none."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import observation_table, run_cli


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


def test_sigterm_midway_leaves_previous_results_or_none_and_rerun_succeeds(tmp_path):
    out = tmp_path / "results"
    first = run_cli("run", "--frames", 400, "--motion", "still", "--start", 100, "--recovery-end", 200,
                    "--out", out)
    assert first.returncode == 0, first.stderr
    previous = (out / "results.json").read_bytes()
    process = subprocess.Popen([sys.executable, "-m", "trackverify", "run", "--frames", "1000",
                                "--motion", "free", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert "Traceback" not in stderr
    current = (out / "results.json").read_bytes()
    json.loads(current)  # whole, never truncated
    # The run takes several seconds after start-up, so the signal lands midway.
    assert process.returncode == 143, stderr
    assert current == previous
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    rerun = run_cli("run", "--frames", 400, "--motion", "still", "--start", 100, "--recovery-end", 200,
                    "--out", out)
    assert rerun.returncode == 0 and (out / "results.json").read_bytes() == previous
