"""Run py-ctcmetrics 1.3.3 (in .venv-ctcmetrics) on CTC case folders; print JSON.

Usage: ``ctcmetrics_reference.py GT_DIR RES_DIR [GT_DIR RES_DIR ...]``. Each ``GT_DIR`` holds
``TRA/`` (and optionally ``SEG/``), the layout the Challenge's evaluation reads. Prints one
JSON list, one object per case: the measures py-ctcmetrics reports (and ``seconds``, the
time of its ``load_data`` + ``calculate_metrics``, one thread) (``Valid`` 0 for a
result it refuses), or ``{"error": ...}`` when it raises. When only its CHOTA raises (it
does on a reference frame without cells) or only its LNK (a reference without links
divides by zero), the others are reported, with ``CHOTA_error`` / ``LNK_error``.
Its own printing goes to stderr.
"""

import contextlib
import json
import math
import sys
import time
import warnings
from pathlib import Path

from ctc_metrics.scripts.evaluate import calculate_metrics, load_data

METRICS = ["Valid", "CHOTA", "BC", "CT", "CCA", "TF", "TRA", "DET", "LNK"]


def clean(value):
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def one(gt: str, res: str) -> dict:
    seg = (Path(gt) / "SEG").is_dir()
    metrics = METRICS + (["SEG"] if seg else [])
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp, ref, traj, segm, _, valid = load_data(res, gt, True, seg, threads=1)
            extra = {}
            try:
                out = calculate_metrics(comp, ref, traj, segm, list(metrics), valid)
            except Exception:  # noqa: BLE001 - each of CHOTA and LNK on its own, below
                out = calculate_metrics(comp, ref, traj, segm,
                                        [m for m in metrics if m not in ("CHOTA", "LNK")],
                                        valid)
                for name, alone in (("CHOTA", ["CHOTA"]), ("LNK", ["DET", "LNK"])):
                    try:
                        out[name] = calculate_metrics(comp, ref, traj, segm, alone,
                                                      valid)[name]
                    except Exception as exc:  # noqa: BLE001 - reported
                        extra[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - reported, compared by the tests
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {**{k: clean(v) for k, v in out.items()}, **extra,
            "seconds": time.perf_counter() - t0}


def main(args: list[str]) -> None:
    results = []
    with contextlib.redirect_stdout(sys.stderr):
        for gt, res in zip(args[::2], args[1::2]):
            results.append(one(gt, res))
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
