"""Certification metrics of populations too large to hold in memory, computed exactly.

Pooling a cohort (hundreds of recordings x a million rows) cannot keep every row. The
metrics of :mod:`trackverify.benchmark.selective` only need, besides additive counts, the rank of
every *error* among the correct rows, and errors are rare. So a population is scored in
two passes over its chunks (one chunk = one recording):

1. :meth:`PooledPopulation.add` keeps the additive counts and the finite error scores,
   plus a small quantile sketch of all finite scores (to place the curve's points);
2. :meth:`PooledPopulation.count` streams every chunk again and counts, for each distinct
   error score ``e``, the correct rows below and at ``e`` (``searchsorted`` on the chunk's
   sorted correct scores), and the rows at or below each of the curve's thresholds.

From those counts (``C_below(e)``, ``C_at(e)``; ``P`` errors and ``N`` correct rows with a
finite score):

- ``auroc = sum_e n_e * (C_below(e) + C_at(e) / 2) / (P * N)`` (Mann-Whitney U; equals
  ``roc_auc_score``); ``auroc_abstain_as_error`` adds the abstained labelled rows above
  every finite score (equals :func:`trackverify.benchmark.selective.auroc_abstain_as_error`);
- ``auprc = sum_t (tp(t) - tp(t+)) / P * tp(t) / (tp(t) + fp(t))`` over the distinct error
  scores ``t`` in descending order, ``tp(t)`` = errors ``>= t``, ``fp(t) = N - C_below(t)``
  (equals ``average_precision_score``: recall only moves at error scores);
- ``correct_coverage_at_fcr``: at most ``a`` errors (``a / n_errors <= max_fcr``) may be
  accepted, so the best threshold stops just below the ``(a+1)``-th smallest error score
  ``e``: ``C_below(e) / n_rows`` (all correct finite rows when ``a >= P``, counting abstained
  errors as never accepted);
- the risk-coverage summary holds exact curve points at up to 101 thresholds placed at
  quantiles of the pooled scores (from the sketch; coverage is then close to, not exactly,
  evenly spaced).

Every count-based metric at the run threshold is the sum over chunks, as in
:func:`trackverify.benchmark.selective.certification_metrics`. Undefined values are ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackverify.benchmark.selective import CURVE_POINTS, ratio

_COUNTS = ("n_rows", "n_labelled", "n_errors", "n_abstained", "n_labelled_abstained",
           "n_accepted", "n_accepted_errors", "n_accepted_correct", "n_correct_finite",
           "n_abstained_errors", "n_abstained_correct")


@dataclass
class FirstPass:
    """What pass 1 keeps of one chunk of one population: counts, error scores, a sketch."""

    counts: dict
    errors: np.ndarray
    sketch: tuple[np.ndarray, int] | None


def first_pass(error: np.ndarray, score: np.ndarray, threshold: float) -> FirstPass:
    """Pass 1 over one chunk's rows (``error`` 1/0/NaN, ``score`` finite or NaN)."""
    error = np.asarray(error, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    labelled = ~np.isnan(error)
    is_error, is_correct = labelled & (error == 1), labelled & (error == 0)
    finite = np.isfinite(score)
    accepted = finite & (score <= threshold)
    counts = {
        "n_rows": len(error), "n_labelled": int(labelled.sum()), "n_errors": int(is_error.sum()),
        "n_abstained": int((~finite).sum()), "n_labelled_abstained": int((labelled & ~finite).sum()),
        "n_accepted": int(accepted.sum()), "n_accepted_errors": int((accepted & is_error).sum()),
        "n_accepted_correct": int((accepted & is_correct).sum()),
        "n_correct_finite": int((is_correct & finite).sum()),
        "n_abstained_errors": int((is_error & ~finite).sum()),
        "n_abstained_correct": int((is_correct & ~finite).sum()),
    }
    sketch = ((np.quantile(score[finite], np.linspace(0, 1, CURVE_POINTS)), int(finite.sum()))
              if finite.any() else None)
    return FirstPass(counts, score[is_error & finite], sketch)


def second_pass(error: np.ndarray, score: np.ndarray, error_values: np.ndarray,
                thresholds: np.ndarray) -> tuple[np.ndarray, ...]:
    """Pass 2 over one chunk: correct rows below / at each error value, and rows, errors and
    correct rows at or below each curve threshold."""
    error = np.asarray(error, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    finite = np.isfinite(score)
    correct = np.sort(score[finite & (error == 0)])
    below = np.searchsorted(correct, error_values, side="left")
    at = np.searchsorted(correct, error_values, side="right") - below
    rows = np.searchsorted(np.sort(score[finite]), thresholds, side="right")
    errors = np.searchsorted(np.sort(score[finite & (error == 1)]), thresholds, side="right")
    return below, at, rows, errors, np.searchsorted(correct, thresholds, side="right")


class PooledPopulation:
    """One population (e.g. a condition over every recording), scored in two passes."""

    def __init__(self, threshold: float, max_fcr: float = 0.01):
        self.threshold = float(threshold)
        self.max_fcr = float(max_fcr)
        self.counts = dict.fromkeys(_COUNTS, 0)
        self._errors: list[np.ndarray] = []
        self._sketch: list[tuple[np.ndarray, int]] = []
        self._frozen = False

    # ---------------------------------------------------------------- pass 1
    def add(self, error: np.ndarray, score: np.ndarray) -> None:
        """Pass 1: one chunk's rows (``error`` 1/0/NaN, ``score`` finite or NaN)."""
        self.merge_first(first_pass(error, score, self.threshold))

    def merge_first(self, part: FirstPass) -> None:
        """Pass 1 of a chunk computed elsewhere (e.g. in a worker)."""
        for key, value in part.counts.items():
            self.counts[key] += value
        self._errors.append(part.errors)
        if part.sketch is not None:
            self._sketch.append(part.sketch)

    def freeze(self) -> None:
        """End of pass 1: fix the error scores and the curve's thresholds."""
        if self._frozen:
            return
        errors = np.sort(np.concatenate(self._errors)) if self._errors else np.zeros(0)
        self.error_values, self.error_counts = np.unique(errors, return_counts=True)
        self.thresholds = self._curve_thresholds()
        self.correct_below = np.zeros(len(self.error_values), dtype=np.int64)
        self.correct_at = np.zeros(len(self.error_values), dtype=np.int64)
        self.curve_rows = np.zeros(len(self.thresholds), dtype=np.int64)
        self.curve_errors = np.zeros(len(self.thresholds), dtype=np.int64)
        self.curve_correct = np.zeros(len(self.thresholds), dtype=np.int64)
        self._errors, self._frozen = [], True

    def _curve_thresholds(self) -> np.ndarray:
        if not self._sketch:
            return np.zeros(0)
        values = np.concatenate([q for q, _ in self._sketch])
        weights = np.concatenate([np.full(len(q), n / len(q)) for q, n in self._sketch])
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(weights[order]) / weights.sum()
        at = np.searchsorted(cumulative, np.linspace(0, 1, CURVE_POINTS), side="left")
        return np.unique(values[order][np.clip(at, 0, len(values) - 1)])

    # ---------------------------------------------------------------- pass 2
    def count(self, error: np.ndarray, score: np.ndarray) -> None:
        """Pass 2: the same chunk again (chunks in any order)."""
        self.freeze()
        self.merge_second(second_pass(error, score, self.error_values, self.thresholds))

    def merge_second(self, part: tuple[np.ndarray, ...]) -> None:
        below, at, rows, errors, correct = part
        self.correct_below += below
        self.correct_at += at
        self.curve_rows += rows
        self.curve_errors += errors
        self.curve_correct += correct

    # ---------------------------------------------------------------- result
    def metrics(self) -> dict:
        """The keys of :func:`trackverify.benchmark.protocols.anatomical_verification.metrics_block`."""
        self.freeze()
        c = self.counts
        positives = int(self.error_counts.sum())
        negatives = c["n_correct_finite"]
        auroc = auprc = None
        if positives and negatives:
            auroc = float((self.error_counts * (self.correct_below + 0.5 * self.correct_at)).sum()
                          / (positives * negatives))
            tp = np.cumsum(self.error_counts[::-1])  # errors >= t, t descending
            fp = negatives - self.correct_below[::-1]
            recall_step = self.error_counts[::-1] / positives
            auprc = float((recall_step * tp / (tp + fp)).sum())
        return {
            "auroc_abstain_as_error": self._auroc_abstain_as_error(),
            "n_rows": c["n_rows"], "n_labelled": c["n_labelled"], "n_errors": c["n_errors"],
            "n_abstained": c["n_abstained"], "n_labelled_abstained": c["n_labelled_abstained"],
            "n_accepted": c["n_accepted"], "n_accepted_errors": c["n_accepted_errors"],
            "n_accepted_correct": c["n_accepted_correct"],
            "threshold": self.threshold,
            "prevalence": ratio(c["n_errors"], c["n_labelled"]),
            "auroc": auroc, "auprc": auprc,
            "certified_coverage": ratio(c["n_accepted"], c["n_rows"]),
            "selective_risk": ratio(c["n_accepted_errors"], c["n_accepted"]),
            "false_certification_rate": ratio(c["n_accepted_errors"], c["n_errors"]),
            "correct_certified_coverage": ratio(c["n_accepted_correct"], c["n_rows"]),
            "max_false_certification_rate": self.max_fcr,
            "correct_coverage_at_fcr": self._coverage_at_fcr(),
            "risk_coverage": self._curve(),
        }

    def _auroc_abstain_as_error(self) -> float | None:
        """AUROC with abstained labelled rows ranked above every finite score (tied together)."""
        c = self.counts
        positives = c["n_errors"]
        negatives = c["n_correct_finite"] + c["n_abstained_correct"]
        if not positives or not negatives:
            return None
        finite = (self.error_counts * (self.correct_below + 0.5 * self.correct_at)).sum()
        abstained = c["n_abstained_errors"] * (c["n_correct_finite"] + 0.5 * c["n_abstained_correct"])
        return float((finite + abstained) / (positives * negatives))

    def _coverage_at_fcr(self) -> float | None:
        c = self.counts
        if c["n_errors"] == 0:
            return None
        # The most errors k with k / n_errors <= max_fcr, in the float arithmetic selective uses.
        allowed = int(np.count_nonzero(np.arange(c["n_errors"] + 1) / c["n_errors"] <= self.max_fcr)) - 1
        finite_errors = np.cumsum(self.error_counts)
        if allowed >= finite_errors[-1] if len(finite_errors) else True:
            return c["n_correct_finite"] / c["n_rows"]
        stop = int(np.searchsorted(finite_errors, allowed + 1))  # first value exceeding a
        return int(self.correct_below[stop]) / c["n_rows"]

    def _curve(self) -> dict[str, list]:
        c = self.counts
        n = c["n_rows"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return {
                "threshold": self.thresholds.tolist(),
                "coverage": (self.curve_rows / n).tolist() if n else [],
                "selective_risk": (self.curve_errors / self.curve_rows).tolist(),
                "false_certification_rate": ((self.curve_errors / c["n_errors"]).tolist()
                                             if c["n_errors"] else [None] * len(self.thresholds)),
                "correct_coverage": (self.curve_correct / n).tolist() if n else [],
            }


def detection_curves(population: "PooledPopulation", max_points: int = 400) -> dict | None:
    """ROC and precision-recall points of a scored population, from its error ranks.

    The points sit at the distinct error scores (where recall moves): ROC as a staircase
    (false-positive rate moves first, then the true-positive rate), PR as sklearn's points
    at those thresholds. Thinned to about ``max_points`` for plotting; None if undefined.
    """
    positives, negatives = int(population.error_counts.sum()), population.counts["n_correct_finite"]
    if not positives or not negatives:
        return None
    tp = np.cumsum(population.error_counts[::-1])
    fp = negatives - population.correct_below[::-1]
    tpr, fpr = tp / positives, fp / negatives
    keep = np.unique(np.linspace(0, len(tp) - 1, min(len(tp), max_points)).round().astype(int))
    tpr, fpr, precision = tpr[keep], fpr[keep], (tp / (tp + fp))[keep]
    stairs_x = np.r_[0.0, np.repeat(fpr, 2), 1.0]
    stairs_y = np.r_[0.0, 0.0, np.repeat(tpr, 2)[:-1], 1.0]
    return {"fpr": stairs_x.tolist(), "tpr": stairs_y.tolist(), "recall": tpr.tolist(),
            "precision": precision.tolist(), "prevalence": positives / (positives + negatives),
            "positives": positives, "negatives": int(negatives)}


def spill_chunk(path: str, error: np.ndarray, scores: dict[str, np.ndarray], codes: np.ndarray,
                populations: dict[tuple[str, str], tuple[int, ...]], threshold: float
                ) -> dict[tuple[str, str], FirstPass]:
    """Write one recording's chunk to ``path`` and return its pass-1 summaries.

    Runs where the recording was scored (a worker): the main process only merges the small
    summaries. ``populations[(verifier, name)]`` = the condition codes the population pools.
    """
    verifiers = list(scores)
    np.savez(path, error=np.where(np.isnan(error), -1, error).astype(np.int8),
             codes=codes.astype(np.int8), verifiers=np.array(verifiers),
             **{f"score-{i}": scores[v] for i, v in enumerate(verifiers)})
    return {key: first_pass(error[mask], scores[key[0]][mask], threshold)
            for key, mask in _masks(codes, populations).items()}


def chunk_path(work_dir: str, index: int) -> str:
    return f"{work_dir}/chunk-{index:06d}.npz"


def _masks(codes: np.ndarray, populations: dict) -> dict:
    return {key: np.isin(codes, included) for key, included in populations.items()}


def count_chunk(task: tuple) -> dict[tuple[str, str], tuple[np.ndarray, ...]]:
    """Pass 2 of one spilled chunk against the frozen error values and thresholds."""
    path, populations, frozen_path = task
    with np.load(frozen_path) as frozen, np.load(path) as chunk:
        stored = chunk["error"].astype(np.float64)
        error = np.where(stored < 0, np.nan, stored)
        scores = {str(v): chunk[f"score-{i}"] for i, v in enumerate(chunk["verifiers"])}
        out = {}
        for index, (key, mask) in enumerate(_masks(chunk["codes"], populations).items()):
            out[key] = second_pass(error[mask], scores[key[0]][mask],
                                   frozen[f"values-{index}"], frozen[f"thresholds-{index}"])
        return out


class CohortPool:
    """Named populations over every recording, scored exactly in two passes.

    Each recording's chunk (``error`` 1/0/NaN, one score array per verifier, each row's
    condition code) is spilled to ``work_dir`` by :func:`spill_chunk`, which also returns
    its pass-1 summaries; :meth:`finish` runs pass 2 over the spilled chunks (on any
    executor). A population is a (verifier, name) pair with the condition codes it pools.
    Memory holds the error scores and the counts; it does not grow with the cohort's rows.
    """

    def __init__(self, threshold: float, max_fcr: float, work_dir: str):
        self.threshold, self.max_fcr, self.work_dir = threshold, max_fcr, work_dir
        self.populations: dict[tuple[str, str], PooledPopulation] = {}
        self._spilled: list[tuple[str, dict]] = []

    def merge(self, path: str, populations: dict, parts: dict[tuple[str, str], FirstPass]) -> None:
        """Take in one spilled chunk's pass-1 summaries (chunks in recording order)."""
        self._spilled.append((path, dict(populations)))
        for key, part in parts.items():
            if key not in self.populations:
                self.populations[key] = PooledPopulation(self.threshold, self.max_fcr)
            self.populations[key].merge_first(part)

    def add(self, error, scores, codes, populations) -> None:
        """Spill and summarise one recording here (single-process use)."""
        path = chunk_path(self.work_dir, len(self._spilled))
        self.merge(path, populations, spill_chunk(path, error, scores, codes, populations,
                                                  self.threshold))

    def finish(self, jobs: int = 1, executor: str = "local") -> dict[tuple[str, str], PooledPopulation]:
        """Pass 2 over the spilled chunks; the populations are then ready for ``metrics()``."""
        from trackverify.execute import ordered_map

        for population in self.populations.values():
            population.freeze()
        tasks, frozen_paths = [], {}
        for path, populations in self._spilled:
            keys = tuple(populations)
            if keys not in frozen_paths:  # one file per distinct set of populations
                frozen_paths[keys] = f"{self.work_dir}/frozen-{len(frozen_paths):03d}.npz"
                np.savez(frozen_paths[keys],
                         **{f"values-{i}": self.populations[k].error_values for i, k in enumerate(keys)},
                         **{f"thresholds-{i}": self.populations[k].thresholds for i, k in enumerate(keys)})
            tasks.append((path, populations, frozen_paths[keys]))
        for counts in ordered_map(count_chunk, tasks, jobs, executor):
            for key, part in counts.items():
                self.populations[key].merge_second(part)
        return self.populations
