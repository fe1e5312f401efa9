"""A missing reference environment skips a parity test locally and fails it under CI."""

from __future__ import annotations

import pytest

from tests.conftest import missing_reference


@pytest.mark.parametrize("value", ["true", "TRUE", "1"])
def test_missing_reference_fails_under_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match=".venv-x is absent under CI"):
        missing_reference(".venv-x")


@pytest.mark.parametrize("value", [None, "", "false"])
def test_missing_reference_skips_elsewhere(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match=".venv-x"):
        missing_reference(".venv-x")


def test_parity_helpers_use_the_guard(monkeypatch, tmp_path):
    """Both reference runners fail, not skip, when their environment is gone under CI."""
    from tests.andi import andi_ref
    from tests.mot import mot_helpers

    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(andi_ref, "REF_PYTHON", tmp_path / "absent" / "bin" / "python")
    monkeypatch.setattr(mot_helpers, "MOT_PYTHON", tmp_path / "absent" / "bin" / "python")
    with pytest.raises(pytest.fail.Exception):
        andi_ref.run_reference([])
    with pytest.raises(pytest.fail.Exception):
        mot_helpers.run_reference(tmp_path, {}, 5.0)


def test_graph_reference_runners_use_the_guard(monkeypatch, tmp_path):
    """The traccuracy and py-ctcmetrics runners fail, not skip, without their environment
    under CI."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "graph"))
    import graph_helpers
    import test_ctc_parity

    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(graph_helpers, "TRACCURACY_PYTHON", tmp_path / "absent" / "python")
    monkeypatch.setattr(test_ctc_parity, "CTCMETRICS_PYTHON", tmp_path / "absent" / "python")
    with pytest.raises(pytest.fail.Exception):
        graph_helpers.run_points(tmp_path, {})
    with pytest.raises(pytest.fail.Exception):
        test_ctc_parity.run_reference([])
