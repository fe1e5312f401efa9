"""``run_cli`` through the pre-imported server (tests/cli_server.py) is the command as a user
runs it: the same exit codes, standard output and standard error as ``python -m trackverify``
in a plain subprocess, the same files written, in the caller's folder and environment."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import _cli_server, run_cli

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the server needs os.fork")


def plain(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trackverify", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def test_the_server_is_used():
    assert os.environ.get("TRACKVERIFY_TEST_FORK") == "0" or _cli_server() is not None


@pytest.mark.parametrize("args", [
    ["--version"],
    ["synth", "--help"],
    ["verify"],  # a usage error: exit 2, one line
    ["nonsense"],
    ["verify", "--observations", "missing.csv", "--out", "o"],  # a refused input
])
def test_same_codes_and_streams_as_a_plain_subprocess(args, tmp_path):
    served, alone = run_cli(*args, cwd=tmp_path), plain(*args, cwd=tmp_path)
    assert (served.returncode, served.stdout, served.stderr) == (
        alone.returncode, alone.stdout, alone.stderr)
    assert served.args == alone.args[:3] + args


def test_a_command_writes_in_the_callers_folder_and_reads_its_environment(tmp_path, monkeypatch):
    # the working folder: a relative --out lands in cwd; the environment (the terminal width
    # the help wraps at) is the caller's at the time of the call, not the server's
    monkeypatch.setenv("COLUMNS", "61")
    served = run_cli("synth", "--animals", 1, "--frames", 5, "--neurons", 4, "--out", "s",
                     cwd=tmp_path)
    assert served.returncode == 0, served.stderr
    alone = plain("synth", "--animals", 1, "--frames", 5, "--neurons", 4, "--out", "p",
                  cwd=tmp_path, env=dict(os.environ))
    assert alone.returncode == 0, alone.stderr
    written = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "p").iterdir()) and written
    for name in written:
        if (tmp_path / "s" / name).is_file():
            assert (tmp_path / "s" / name).read_bytes() == (tmp_path / "p" / name).read_bytes(), name
    helped = run_cli("run", "--help")
    assert helped.stdout == plain("run", "--help", env=dict(os.environ)).stdout
    monkeypatch.setenv("COLUMNS", "200")  # help wraps at the terminal's width: it changes
    wider = run_cli("run", "--help")
    assert wider.stdout != helped.stdout
    assert wider.stdout == plain("run", "--help", env=dict(os.environ)).stdout

