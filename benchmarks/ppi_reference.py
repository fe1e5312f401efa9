"""ppi_py's ``ppi_mean_ci`` on count sets, run in its own environment (``.venv-ppi``,
mk/ppi.mk; ppi-python ships a top-level ``tests`` package that would hide this project's
``tests/``, so it never enters ``.venv``). Reads JSON from stdin: ``{"y": [...], "yhat": [...],
"totals": [...], "counts": [[...], ...]}`` (per cell its Y and Yhat, the population's count
and each sample's counts); writes ``[[low, high], ...]`` (null where ppi_py gives NaN).

    .venv-ppi/bin/python benchmarks/ppi_reference.py < sets.json
"""

import json
import math
import sys

import numpy as np
from ppi_py import ppi_mean_ci


def main() -> None:
    job = json.load(sys.stdin)
    y, yhat, totals = (np.asarray(job[k]) for k in ("y", "yhat", "totals"))
    out = []
    for counts in job["counts"]:
        counts = np.asarray(counts)
        low, high = ppi_mean_ci(np.repeat(y, counts).astype(float),
                                np.repeat(yhat, counts).astype(float),
                                np.repeat(yhat, totals - counts).astype(float), alpha=0.05)
        out.append([None if math.isnan(v) else float(v) for v in (low[0], high[0])])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
