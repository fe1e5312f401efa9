"""trackverify lives beside the field's tools: in one environment (.venv-field, built by
mk/field.mk: trackverify with every extra, traccuracy (newest), napari and laptrack, resolved
together and checked by ``pip check``), the traccuracy parity tests, the empty-result cases
and the napari reader's tests pass, with traccuracy run from that same environment."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.conftest import REPO, missing_reference

FIELD_PYTHON = REPO / ".venv-field" / "bin" / "python"
#: The tests run inside .venv-field: every traccuracy comparison, and the napari reader.
FIELD_TESTS = ("tests/graph/test_graph_parity.py",
               "tests/graph/test_ctc_parity.py::test_traccuracy_definition_matches_traccuracy",
               "tests/graph/test_ctc_parity.py::"
               "test_seeded_sweep_traccuracy_definition_matches_traccuracy",
               "tests/graph/test_empty_results.py", "tests/napari_plugin")
TOOLS = ("trackverify", "traccuracy", "geff", "napari", "laptrack", "numpy", "pandas", "zarr")

pytestmark = pytest.mark.parity


def field_python():
    if not FIELD_PYTHON.exists():
        missing_reference("environment .venv-field (make test builds it: mk/field.mk)")
    return str(FIELD_PYTHON)


def test_the_field_environment_holds_every_tool_at_a_shared_geff():
    code = ("import importlib.metadata as m, json; "
            f"print(json.dumps({{p: m.version(p) for p in {TOOLS!r}}}))")
    done = subprocess.run([field_python(), "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    versions = json.loads(done.stdout)
    assert int(versions["geff"].split(".")[0]) >= 1  # traccuracy >= 0.4.3 needs geff >= 1.0
    check = subprocess.run([field_python(), "-m", "pip", "check"], capture_output=True,
                           text=True, timeout=300)
    assert check.returncode == 0, check.stdout


def test_parity_and_napari_tests_pass_in_the_field_environment():
    python = field_python()
    env = {**os.environ, "TRACKVERIFY_TRACCURACY_PYTHON": python,
           "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    done = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "no:xdist", *FIELD_TESTS], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=2400)
    lines = done.stdout.strip().splitlines()
    outcome = "\n".join(line for line in lines if line.startswith(("FAILED", "ERROR")))
    summary = lines[-1] if lines else done.stderr[-2000:]
    assert done.returncode == 0, f"{outcome}\n{summary}"
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 30 and "failed" not in summary and "skipped" not in summary, summary
