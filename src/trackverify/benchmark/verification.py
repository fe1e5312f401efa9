"""``trackverify.verify(...)``: the verification benchmark from Python, with typed results.

The same job as ``trackverify verify`` / ``run --data`` (:func:`trackverify.benchmark.run.run_job`): the
corruption suite on clean predictions, the verifier on every condition, the certification
metrics, the consistency diagnostic and tracking_gt; the outputs are written to ``out`` (a
temporary folder when not given) and read back, so Python and the command give the same
numbers byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from trackverify.errors import InputError


#: How errors name an observation table given as a DataFrame.
FRAME_SOURCE = "the observations DataFrame"


@dataclass
class VerificationResult:
    """``results`` (the contents of ``results.json``), ``rows`` (every scored row, one per
    observation and condition: ``condition, is_control, error, score, abstained``) and the
    folder the outputs were written to (``None`` when it was temporary)."""

    results: dict
    rows: pd.DataFrame
    out: Path | None

    def metrics(self, condition: str = "all_conditions") -> dict:
        """Pooled certification metrics of one condition (``all_conditions`` by default)."""
        pooled = self.results["anatomical_verification"]["pooled"]
        if condition not in pooled:
            raise KeyError(f"no condition {condition!r}; conditions: {sorted(pooled)}")
        return pooled[condition]

    def __repr__(self) -> str:
        m = self.metrics()
        return (f"VerificationResult(verifier={self.results['verifier']['name']!r}, "
                f"{m['n_rows']} rows, {m['n_errors']} errors, AUROC={m['auroc']}, "
                f"correct coverage at FCR<=1%={m['correct_coverage_at_fcr']})")


def verify(observations: pd.DataFrame | str | os.PathLike, *, out: str | os.PathLike | None = None,
           config_file: str | os.PathLike | None = None, **settings) -> VerificationResult:
    """Corrupt clean predictions, run a verifier on every condition and score it.

    ``observations`` is an observation table (a DataFrame, or a CSV / Parquet path; schema in
    :mod:`trackverify.tables`); ``settings`` are the run settings (``verifier``, ``seed``,
    ``start``, ``recovery_end``, ``threshold_um``, ...; the ``[run]`` table of the TOML file).
    ``out`` follows the command's ``--out`` policy: an :class:`~trackverify.errors.InputError`
    when it is, lies inside or contains the observations file or the configuration file.
    Example::

        import trackverify
        result = trackverify.verify("observations.parquet", verifier="registered_distance")
        result.metrics("nearby_swap")["auroc"]
        result.rows.query("condition == 'persistent_swap' and error == 1")
    """
    from trackverify.benchmark.config import build_config
    from trackverify.benchmark.corrupt import PYTHON_OPTIONS, window_errors
    from trackverify.io.tabular import read_table, write_table
    from trackverify.benchmark.run import run_job

    config = build_config(settings, config_file=config_file)
    with tempfile.TemporaryDirectory(prefix="trackverify-") as scratch:
        data = observations
        if isinstance(observations, pd.DataFrame):
            data = write_table(observations, Path(scratch) / "observations.parquet")
        target = Path(out) if out is not None else Path(scratch) / "out"
        with window_errors(options=PYTHON_OPTIONS), _naming_frame(observations, scratch):
            run_job(config, target, data=data, other_inputs=(config_file,))
        results = json.loads((target / "results.json").read_text(encoding="utf-8"))
        rows = read_table(target / "observations.parquet")
    return VerificationResult(results, rows, Path(out) if out is not None else None)


@contextlib.contextmanager
def _naming_frame(observations, scratch: str) -> Iterator[None]:
    """An :class:`InputError` about the scratch copy of a DataFrame names the DataFrame and
    the offending row's index label, not a temporary file and its 1-based row."""
    try:
        yield
    except InputError as exc:
        if not isinstance(observations, pd.DataFrame) or not str(exc.source).startswith(scratch):
            raise
        if exc.row is None:
            raise exc.named(FRAME_SOURCE) from None
        label = observations.index[exc.row - 1]
        raise InputError(f"index {label!r}: {exc.problem}", source=FRAME_SOURCE,
                         column=exc.column) from None

