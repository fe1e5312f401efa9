"""Scoring a verifier as an error detector and as a certifier (SPEC section 6).

Inputs, one entry per row of the population (a condition, or all conditions pooled):
``error`` (1 wrong id, 0 right id, NaN unlabelled) and ``score`` (lower = more
trustworthy, NaN = abstained). A row is *accepted* when its score is finite and
``<= threshold``.

- ``prevalence`` = labelled errors / labelled rows
- ``auroc``, ``auprc`` = ``sklearn.metrics.roc_auc_score`` / ``average_precision_score`` over
  labelled rows with a finite score, the score being the error score (undefined when those
  rows hold a single class)
- ``certified_coverage`` = accepted / population
- ``selective_risk`` = accepted errors / accepted (undefined if nothing is accepted)
- ``false_certification_rate`` = accepted errors / labelled errors (undefined without errors)
- ``correct_certified_coverage`` = accepted correct rows / population
- risk-coverage curve: the threshold sweeps the sorted distinct finite scores; rows with
  equal scores enter together; abstained rows stay in the denominator, never accepted.
- ``auroc_abstain_as_error`` = ``roc_auc_score`` over *all* labelled rows, abstained rows
  ranked most suspicious (their score set above every finite score -- the largest finite
  score + 1, which ranks exactly like ``+inf``, which scikit-learn refuses -- so they tie
  with one another above every finite row); undefined when the labelled rows hold a single class
- ``correct_coverage_at_fcr`` = the largest correct certified coverage over the curve's
  thresholds whose false-certification rate is ``<= max_fcr`` (0 when even the strictest
  threshold certifies too many errors; undefined without errors).

Undefined values are ``None``.
"""

from __future__ import annotations

import numpy as np

CURVE_POINTS = 101


def ratio(numerator: float, denominator: float) -> float | None:
    return float(numerator) / float(denominator) if denominator else None


def certification_metrics(error: np.ndarray, score: np.ndarray, threshold: float,
                          max_fcr: float = 0.01) -> dict:
    """Every SPEC section 6 number for one population (see the module docstring)."""
    error = np.asarray(error, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    labelled = ~np.isnan(error)
    is_error = labelled & (error == 1)
    is_correct = labelled & (error == 0)
    finite = np.isfinite(score)
    accepted = finite & (score <= threshold)
    n_rows = len(error)
    n_labelled = int(labelled.sum())
    n_errors = int(is_error.sum())
    n_accepted = int(accepted.sum())
    accepted_errors = int((accepted & is_error).sum())
    ranked = labelled & finite
    auroc = auprc = None
    if ranked.any() and 0 < int(is_error[ranked].sum()) < int(ranked.sum()):
        from sklearn.metrics import average_precision_score, roc_auc_score  # 0.9 s to import

        auroc = float(roc_auc_score(is_error[ranked], score[ranked]))
        auprc = float(average_precision_score(is_error[ranked], score[ranked]))
    curve = risk_coverage_curve(error, score)
    return {
        "n_rows": n_rows,
        "n_labelled": n_labelled,
        "n_errors": n_errors,
        "n_abstained": int((~finite).sum()),
        "n_labelled_abstained": int((labelled & ~finite).sum()),
        "n_accepted": n_accepted,
        "n_accepted_errors": accepted_errors,
        "n_accepted_correct": int((accepted & is_correct).sum()),
        "threshold": float(threshold),
        "prevalence": ratio(n_errors, n_labelled),
        "auroc": auroc,
        "auprc": auprc,
        "certified_coverage": ratio(n_accepted, n_rows),
        "selective_risk": ratio(accepted_errors, n_accepted),
        "false_certification_rate": ratio(accepted_errors, n_errors),
        "correct_certified_coverage": ratio(int((accepted & is_correct).sum()), n_rows),
        "max_false_certification_rate": max_fcr,
        "correct_coverage_at_fcr": _coverage_at_fcr(curve, n_errors, max_fcr),
    }


def auroc_abstain_as_error(error: np.ndarray, score: np.ndarray) -> float | None:
    """AUROC over every labelled row, abstained (non-finite) scores ranked most suspicious.

    ``roc_auc_score(error == 1, where(isfinite(score), score, top))`` on the rows whose
    ``error`` is not NaN, ``top`` = (largest finite score) + 1 (the ranking of ``+inf``); ``None`` if those rows hold one class. Unlike ``auroc`` (finite
    scores only), a verifier cannot raise it by abstaining on its hard correct rows.
    """
    error = np.asarray(error, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    labelled = ~np.isnan(error)
    y = error[labelled] == 1
    if not 0 < int(y.sum()) < len(y):
        return None
    ranked = score[labelled]
    finite = np.isfinite(ranked)
    top = (ranked[finite].max() + 1.0) if finite.any() else 0.0
    from sklearn.metrics import roc_auc_score  # imported when needed: 0.9 s

    return float(roc_auc_score(y, np.where(finite, ranked, top)))


def risk_coverage_curve(error: np.ndarray, score: np.ndarray) -> dict[str, np.ndarray]:
    """The full curve: one point per distinct finite score (ties enter together).

    Returns arrays ``threshold, coverage, selective_risk, false_certification_rate,
    correct_coverage`` (population denominators include abstained rows).
    """
    error = np.asarray(error, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    n_rows = len(error)
    finite = np.isfinite(score)
    order = np.argsort(score[finite], kind="stable")  # ties are also grouped below
    s = score[finite][order]
    e = error[finite][order]
    errors_cum = np.cumsum(e == 1)
    correct_cum = np.cumsum(e == 0)
    # Last index of each run of equal scores: ties enter together.
    last = np.flatnonzero(np.r_[s[1:] != s[:-1], True]) if len(s) else np.zeros(0, dtype=int)
    accepted = last + 1
    n_errors = int(np.count_nonzero(error == 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "threshold": s[last],
            "coverage": accepted / n_rows if n_rows else accepted * np.nan,
            "selective_risk": errors_cum[last] / accepted,
            "false_certification_rate": (errors_cum[last] / n_errors if n_errors
                                         else np.full(len(last), np.nan)),
            "correct_coverage": correct_cum[last] / n_rows if n_rows else accepted * np.nan,
        }


def _coverage_at_fcr(curve: dict[str, np.ndarray], n_errors: int, max_fcr: float) -> float | None:
    if n_errors == 0:
        return None
    ok = curve["false_certification_rate"] <= max_fcr
    return float(curve["correct_coverage"][ok].max()) if ok.any() else 0.0


def summarise_curve(curve: dict[str, np.ndarray], points: int = CURVE_POINTS) -> dict[str, list]:
    """At most ``points`` exact points of the curve, evenly spaced in coverage (for JSON/plots).

    Always keeps the first and last points; every kept point is a point of the full curve.
    """
    n = len(curve["threshold"])
    if n <= points:
        keep = np.arange(n)
    else:
        targets = np.linspace(curve["coverage"][0], curve["coverage"][-1], points)
        keep = np.unique(np.clip(np.searchsorted(curve["coverage"], targets), 0, n - 1))
    return {key: values[keep].tolist() for key, values in curve.items()}
