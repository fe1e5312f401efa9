"""Protocol ``anatomical_verification``: corrupt, verify every condition, score the verifier.

For one recording: the corruption suite (:mod:`trackverify.benchmark.corrupt`) makes every
condition; the verifier scores each condition's table on its own (it never sees labels);
each condition gets the certification metrics (:mod:`trackverify.benchmark.selective`), its
risk-coverage curve, and the ``association`` block — the oracle diagnostics of that
corrupted condition, which can disagree with the row labels (a persistent swap longer than
the clean part makes the global alignment adopt the swapped naming).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.metrics.association import association_diagnostics
from trackverify.benchmark.config import RunConfig
from trackverify.benchmark.corrupt import corrupt_recording
from trackverify.progress import step
from trackverify.benchmark.selective import certification_metrics, risk_coverage_curve, summarise_curve
from trackverify.verifiers import Verifier, abstention_breakdown, run_verifier

ALL = "all_conditions"


def score_conditions(table: pd.DataFrame, config: RunConfig, verifier: Verifier,
                     recording: str = "", detections: pd.DataFrame | None = None,
                     seed: int | None = None) -> tuple[pd.DataFrame, dict, dict]:
    """Every condition of one recording, labelled and scored; plus the random choices and,
    per condition, why the verifier abstained (see :func:`score_stacked`). ``detections``
    (the recording's detection table, or None) goes to verifiers that take it; ``seed``
    (default ``config.seed``) is the corruption draw's seed."""
    stacked, choices = corrupt_recording(table, config.conditions,
                                         config.seed if seed is None else seed, config.start,
                                         config.recovery_end, recording)
    scores, reasons = score_stacked(stacked, verifier, detections, recording)
    stacked["score"] = scores
    stacked["abstained"] = ~np.isfinite(scores)
    return stacked, choices, reasons


def score_stacked(stacked: pd.DataFrame, verifier: Verifier,
                  detections: pd.DataFrame | None = None,
                  recording: str = "") -> tuple[np.ndarray, dict]:
    """The verifier's scores for every condition (each scored on its own), and, per
    condition, why it abstained when the verifier says (:func:`abstention_breakdown`);
    each condition is a progress step (``recording``: its name there)."""
    scores = np.full(len(stacked), np.nan)
    reasons = {}
    codes = stacked["condition"].cat.codes.to_numpy()
    conditions = stacked["condition"].cat.categories
    for code, condition in enumerate(conditions):
        step(f"{recording}: {verifier.name} on {condition} ({code + 1}/{len(conditions)})")
        rows = np.flatnonzero(codes == code)
        scores[rows] = run_verifier(verifier, stacked.iloc[rows], detections)
        reasons[condition] = abstention_breakdown(verifier)
    return scores, reasons


def error_array(scored: pd.DataFrame) -> np.ndarray:
    """``error`` as float64 with NaN for unlabelled rows."""
    return scored["error"].astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)


def condition_metrics(scored: pd.DataFrame, config: RunConfig, max_fcr: float = 0.01) -> dict:
    """condition -> metrics (with ``association`` and ``risk_coverage``), plus all_conditions."""
    error = error_array(scored)
    score = scored["score"].to_numpy()
    codes = scored["condition"].cat.codes.to_numpy()
    out = {}
    for code, condition in enumerate(scored["condition"].cat.categories):
        rows = codes == code
        out[condition] = metrics_block(error[rows], score[rows], config.threshold_um, max_fcr)
        out[condition]["association"] = association_diagnostics(scored[rows])
    out[ALL] = metrics_block(error, score, config.threshold_um, max_fcr)
    return out


#: The populations of the side-by-side evidence table: the six corruptions of SPEC section 4
#: pooled (controls excluded, so prevalence stays honest) and the hardest one alone.
SIX_CORRUPTIONS = ("single_frame_swap", "persistent_swap", "swap_and_recovery", "nearby_swap",
                   "fragmentation", "dropout")


def metrics_block(error: np.ndarray, score: np.ndarray, threshold: float, max_fcr: float) -> dict:
    block = certification_metrics(error, score, threshold, max_fcr)
    block["risk_coverage"] = summarise_curve(risk_coverage_curve(error, score))
    return block
