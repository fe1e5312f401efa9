"""Reliability (issue 18): no traceback ever, deterministic order, nothing wrong accepted.

The corpus (tests/corpus/reliability_cases.py) holds the malformed inputs; this module
holds what is not an input case: the top-level net of ``trackverify.cli.main`` and the
stability of orders among ties.
"""

from __future__ import annotations

import pytest

from trackverify import cli


def _explode(*args, **kwargs):
    raise RuntimeError("boom\nsecond line")


def test_an_unexpected_exception_ends_in_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(cli.DEBUG_VARIABLE, raising=False)
    monkeypatch.setattr("trackverify.andi.codalab.write_scores", _explode)
    (tmp_path / "ref").mkdir()
    (tmp_path / "res").mkdir()
    with pytest.raises(SystemExit) as info:
        cli.main(["andi", "score", str(tmp_path), str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"trackverify: error: trackverify andi score on {tmp_path}: "
                          "unexpected RuntimeError: boom second line")
    assert "TRACKVERIFY_DEBUG=1" in err


def test_the_debug_variable_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv(cli.DEBUG_VARIABLE, "1")
    monkeypatch.setattr("trackverify.andi.codalab.write_scores", _explode)
    (tmp_path / "ref").mkdir()
    (tmp_path / "res").mkdir()
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["andi", "score", str(tmp_path), str(tmp_path / "out")])


def test_the_termination_signal_is_not_an_exception_a_reader_could_swallow():
    assert not issubclass(cli._Terminated, Exception)
