"""Shared helpers of the AnDi 2 tests: the reference environment and comparisons.

A plain module (not conftest.py) so that it never collides with other conftest files.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[2]
REF_PYTHON = ROOT / ".venv-andi" / "bin" / "python"
sys.path.insert(0, str(HERE))
from ref_runner import plain  # noqa: E402

from tests.conftest import missing_reference  # noqa: E402

TOL = 1e-9


def run_reference(cases: list[dict]) -> list[dict]:
    """Run andi-datasets 2.1.13 (in .venv-andi) on the cases; one subprocess."""
    if not REF_PYTHON.exists():
        missing_reference(f"reference environment {REF_PYTHON.parent.parent} is absent "
                          "(build it with `make .make/andi`; CI always does)")
    proc = subprocess.run([str(REF_PYTHON), str(HERE / "ref_runner.py")],
                          input=json.dumps(cases), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def arr(a, dtype=None) -> dict:
    """An argument that the reference runner turns into a numpy array."""
    return {"__array__": np.asarray(a).tolist(), "dtype": dtype or str(np.asarray(a).dtype)}


def unarg(v):
    """Our side of ``arr``: the same numpy array."""
    if isinstance(v, dict) and "__array__" in v:
        return np.asarray(v["__array__"], dtype=v.get("dtype"))
    if isinstance(v, dict) and "__dict__" in v:
        return {k: unarg(x) for k, x in v["__dict__"].items()}
    if isinstance(v, list):
        return [unarg(x) for x in v]
    return v


def same(a, b, path="result") -> None:
    """Recursive equality of plain values, floats to TOL (absolute and relative)."""
    if isinstance(a, dict) and "__df__" in a:
        a, b = a["__df__"], b["__df__"]
        same(a["columns"], b["columns"], path + ".columns")
        same(a["data"], b["data"], path + ".data")
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for k, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{k}]")
        return
    if isinstance(a, dict):
        assert set(a) == set(b), f"{path}: keys {set(a)} != {set(b)}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
        return
    if isinstance(a, str) or isinstance(b, str):
        assert str(a) == str(b), f"{path}: {a!r} != {b!r}"
        return
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a is not None:
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), f"{path}: {a!r} != {b!r}"
            return
        assert abs(a - b) <= TOL * max(1.0, abs(a), abs(b)), f"{path}: {a!r} != {b!r}"
        return
    assert a == b, f"{path}: {a!r} != {b!r}"


def ours(value):
    return json.loads(json.dumps(plain(value)))


__all__ = ["run_reference", "arr", "unarg", "same", "ours", "plain", "np", "pd"]
