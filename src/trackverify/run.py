"""The main job: the three protocols over every recording, then the outputs.

``run_job`` streams recordings one at a time (in this process, a process pool or Ray; see
:mod:`trackverify.execute`): for each, ``tracking_gt`` on the clean predictions,
``anatomical_verification`` (corrupt, verify, score every condition) and
``anatomical_consistency`` on the control rows; the scored rows are appended to
``observations.parquet`` as they arrive, in recording order. Then it pools over
recordings and writes ``results.json``, ``manifest.json`` and ``report.html``. Every file
is written to a temporary name and renamed into place; ``results.json`` is written last.

With a partition file, the evaluated recordings are the ``test`` partition (or, when it is
empty, ``development``); with ``target_selective_risk`` the verifier threshold is first
fitted on the ``train`` / ``calibration`` recordings through
:class:`~trackverify.partitions.FitData`, which cannot hand out test labels.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify import __version__
from trackverify.associate import pool_diagnostics
from trackverify.config import RunConfig
from trackverify.dataset import Dataset, load_dataset, specimen_dataset
from trackverify.errors import ConfigError
from trackverify.execute import ordered_map
from trackverify.intervals import animal_bootstrap_interval
from trackverify.io.atomic import write_json_atomic, write_text_atomic
from trackverify.io.tabular import ParquetStream
from trackverify.manifest import build_manifest, input_hashes
from trackverify.pooled import CohortPool, chunk_path, detection_curves, spill_chunk
from trackverify.partitions import FIT_PARTITIONS, FitData, Partitions, development_only, load_partitions
from trackverify.progress import progress_bar
from trackverify.protocols import tracking_gt as tracking_gt_protocol
from trackverify.protocols.anatomical_consistency import consistency
from trackverify.protocols.anatomical_verification import (
    ALL, SIX_CORRUPTIONS, condition_metrics, error_array, score_conditions, score_stacked)
from trackverify.report.html import render_report
from trackverify.verifiers import load_verifier
from trackverify.verifiers.registered_distance import (
    RegisteredDistance, ambiguity_k_from_ratios, ambiguity_ratios)

REGISTERED = RegisteredDistance.name

MAX_FCR = 0.01
CAVEATS = (
    "The verifier threshold is a demonstration value, not a calibrated false-acceptance guarantee, "
    "unless results.json shows it was fitted on calibration recordings.",
    "fixed_distance measures displacement from the anchor frame: it penalises real tissue motion, "
    "so it is a consistency diagnostic, not an independent certificate of deformation.",
    "No confidence intervals or pooled generalisation claims are made from one specimen; with "
    "five or more animals, intervals are by animal (cluster bootstrap), never by frame.",
    "tracking_gt diagnostics are defined by this benchmark; they are not HOTA or IDF1.",
)
# rate -> (numerator count, denominator count) in a certification block
RATES = {
    "prevalence": ("n_errors", "n_labelled"),
    "certified_coverage": ("n_accepted", "n_rows"),
    "selective_risk": ("n_accepted_errors", "n_accepted"),
    "false_certification_rate": ("n_accepted_errors", "n_errors"),
    "correct_certified_coverage": ("n_accepted_correct", "n_rows"),
}


@dataclass(frozen=True)
class Execution:
    """How the work runs; never changes a result byte."""

    jobs: int = 1
    executor: str = "process"
    write_rows: bool = True


def recording_summary(observations: pd.DataFrame) -> dict:
    """Counts that describe one recording's observation table."""
    return {
        "observations": int(len(observations)),
        "frames": int(observations["frame"].max()) + 1,
        "tracks": int(observations["track"].nunique()),
        "dimensions": 3 if "z_um" in observations.columns else 2,
        "valid_predictions": int(observations["pred_valid"].sum()),
    }


@dataclass
class RecordingResult:
    name: str
    summary: dict
    tracking: dict
    tracking_counts: object  # mot.SequenceCounts, for the pooled canonical metrics
    verification: dict
    consistency: dict
    choices: dict
    chunk: tuple  # (spilled path, populations, pass-1 summaries) for the pooled metrics
    error: np.ndarray | None  # each row's label (1, 0, NaN), kept only for calibration
    scores: dict | None  # verifier name -> each row's score, kept only for calibration
    abstention_reasons: dict  # verifier -> population -> {ambiguous, missing_evidence} or None
    scored: pd.DataFrame | None  # every scored row, when observations.parquet is written


def verifier_options(config: RunConfig) -> dict:
    """Run settings a verifier may take in its constructor."""
    return {"ambiguity_k": config.ambiguity_k}


def process_recording(task: tuple) -> RecordingResult:
    """All three protocols on one recording (runs in a worker; arguments are picklable)."""
    name, source, config, keep_rows, work = task
    observations = source.load()
    verifier = load_verifier(config.verifier, verifier_options(config))
    scored, choices, own_reasons = score_conditions(observations, config, verifier, name)
    control = scored[scored["is_control"].to_numpy()]
    scores = {verifier.name: scored["score"].to_numpy()}
    reasons = {verifier.name: _sum_reasons(own_reasons)}
    for spec in config.compare_verifiers:
        other = load_verifier(spec, verifier_options(config))
        if other.name not in scores:
            scores[other.name], per_condition = score_stacked(scored, other)
            reasons[other.name] = _sum_reasons(per_condition)
    tracking, tracking_counts = tracking_gt_protocol.tracking_gt(observations, config.zero_distance_um, name)
    conditions = list(scored["condition"].cat.categories)
    codes = scored["condition"].cat.codes.to_numpy().astype(np.int8)
    error = error_array(scored)
    chunk = None
    if work is not None:
        path, populations = chunk_path(*work), _populations(conditions, verifier.name, list(scores))
        chunk = (path, populations, spill_chunk(path, error, scores, codes, populations,
                                                config.threshold_um))
    return RecordingResult(
        name=name,
        summary=recording_summary(observations),
        tracking=tracking,
        tracking_counts=tracking_counts,
        verification=_with_abstentions(condition_metrics(scored, config, MAX_FCR), own_reasons),
        consistency=consistency(control, config.threshold_um, config.falsification_share),
        choices=choices,
        chunk=chunk,
        error=None if work is not None else error,
        scores=None if work is not None else scores,
        abstention_reasons=reasons,
        scored=scored if keep_rows else None,
    )


def _with_abstentions(metrics: dict, reasons: dict) -> dict:
    """Add, per condition, why the verifier abstained, when the verifier says."""
    for condition, reason in reasons.items():
        if reason is not None:
            metrics[condition]["abstentions"] = reason
    return metrics


def _sum_reasons(per_condition: dict) -> dict | None:
    """Abstention reasons summed over each evidence population's conditions."""
    if any(v is None for v in per_condition.values()):
        return None
    groups = {"six_corruptions": SIX_CORRUPTIONS, "nearby_swap": ("nearby_swap",)}
    return {population: {key: int(sum(per_condition[c][key] for c in members if c in per_condition))
                          for key in ("ambiguous", "missing_evidence")}
            for population, members in groups.items()}


def run_job(config: RunConfig, out: str | Path, data: str | Path | None = None,
            partitions_path: str | Path | None = None, target_selective_risk: float | None = None,
            execution: Execution = Execution(), data_options: dict | None = None,
            on_warnings=None) -> str:
    """Run everything and write the outputs; return a short summary for the terminal.

    ``data_options`` (``fmt``, ``columns``, ``pixel_size``) say how to read ``data``
    (:func:`trackverify.dataset.load_dataset`); its units warnings go to ``on_warnings``
    (a callable taking the list), into ``results.json`` (``input_warnings``) and the report.
    """
    out = Path(out)
    dataset = (load_dataset(data, **(data_options or {})) if data is not None
               else specimen_dataset(config.specimen))
    input_warnings = list(dataset.source.get("warnings", []))
    if input_warnings and on_warnings is not None:
        on_warnings(input_warnings)
    # Load every verifier once, before any work: a bad spec fails early, and their names
    # and kinds of evidence (which no run setting changes) serve the whole run.
    verifiers = [load_verifier(spec, verifier_options(config))
                 for spec in (config.verifier, *config.compare_verifiers)]
    kinds = {v.name: v.evidence for v in verifiers}
    partitions = (load_partitions(partitions_path) if partitions_path is not None
                  else development_only(dataset.recordings))
    evaluated_partition, evaluated = _evaluated(partitions, dataset)
    fitted = None
    if target_selective_risk is not None:
        config, fitted = _calibrate(config, dataset, partitions, target_selective_risk, execution,
                                    verifiers[0].name)
    results = _evaluate(config, dataset, evaluated, out, execution, verifiers[0].name, kinds)
    results.update({
        "trackverify_version": __version__,
        "settings": config.to_dict(),
        "partitions": {"evaluated": evaluated_partition, "summary": partitions.summary(),
                       "members": {name: list(members) for name, members in partitions.partitions.items()},
                       "quarantine": list(partitions.quarantine)},
        "calibration": fitted,
        "caveats": list(CAVEATS),
        "input_warnings": input_warnings,
    })
    manifest = build_manifest(config.to_dict(), dataset.source, input_hashes(data),
                              results.pop("_choices"))
    manifest["execution"] = dataclasses.asdict(execution)
    if partitions_path is not None:
        manifest["input_sha256"]["partitions"] = partitions.sha256
    write_json_atomic(out / "manifest.json", manifest)
    write_text_atomic(out / "report.html", render_report(results, results.pop("_curves")))
    write_json_atomic(out / "results.json", results)
    return _terminal_summary(results, out)


def _evaluated(partitions: Partitions, dataset: Dataset) -> tuple[str, list[str]]:
    """The test partition when it has recordings, otherwise development."""
    for name in ("test", "development"):
        listed = set(partitions.partitions.get(name, ()))
        members = [r for r in dataset.recordings["recording"] if r in listed]
        if members:
            return name, members
    raise ConfigError("no recording to evaluate: the test and development partitions hold none "
                      "of the data's recordings")


def _calibrate(config: RunConfig, dataset: Dataset, partitions: Partitions, target: float,
               execution: Execution, primary: str) -> tuple[RunConfig, dict]:
    """Fit on train/calibration recordings only (never test), through :class:`FitData`.

    First ``registered_distance``'s ambiguity band ``k`` (when that verifier is used), on the
    clean fit recordings; then the threshold of the primary verifier reaching ``target``
    selective risk. Returns the fitted config and the record of what was fitted.
    """
    fit_set = {r for name in FIT_PARTITIONS for r in partitions.partitions.get(name, ())}
    fit_names = [r for r in dataset.recordings["recording"] if r in fit_set]
    record: dict = {"recordings": fit_names, "ambiguity_k": None}
    if REGISTERED in (config.verifier, *config.compare_verifiers):
        if not fit_names:  # FitData names the partitions and their (empty) row counts
            FitData(partitions, pd.DataFrame({"recording": []})).labels_for_fit()
        tasks = [(source, partitions) for _, source in dataset.sources(fit_names)]
        ratios = list(ordered_map(_clean_ambiguity_ratios, tasks, execution.jobs, execution.executor))
        config = dataclasses.replace(config, ambiguity_k=ambiguity_k_from_ratios(ratios))
        record["ambiguity_k"] = config.ambiguity_k
    tasks = [(name, source, config, False, None) for name, source in dataset.sources(fit_names)]
    parts = [pd.DataFrame({"recording": result.name, "score": result.scores[primary],
                           "error": result.error})
             for result in ordered_map(process_recording, tasks, execution.jobs, execution.executor)]
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        {"recording": [], "score": [], "error": []})
    fitted = FitData(partitions, rows).fit_threshold(target)
    if fitted.threshold is None:
        raise ConfigError(f"calibration failed: {fitted.reason}")
    return dataclasses.replace(config, threshold_um=fitted.threshold), {**fitted.to_json(), **record}


def _clean_ambiguity_ratios(task: tuple) -> np.ndarray:
    """``registered_distance``'s clean ``d / sigma`` of one fit recording (one at a time, so
    a cohort's fit recordings are never all in memory; labels only through FitData)."""
    source, partitions = task
    return ambiguity_ratios(FitData(partitions, source.load()).labels_for_fit())


def _evaluate(config: RunConfig, dataset: Dataset, names: list[str], out: Path,
              execution: Execution, primary: str, kinds: dict[str, str]) -> dict:
    summaries, tracking, verification, consistency_blocks, choices = {}, {}, {}, {}, {}
    tracking_counts, reasons = [], {}
    with tempfile.TemporaryDirectory(prefix="trackverify-pool-") as work, progress_bar() as bar, \
            ParquetStream(out / "observations.parquet", enabled=execution.write_rows) as rows_out:
        cohort = CohortPool(config.threshold_um, MAX_FCR, work)
        tasks = ((name, source, config, execution.write_rows, (work, index))
                 for index, (name, source) in enumerate(dataset.sources(names)))
        task = bar.add_task("recordings", total=len(names))
        for result in ordered_map(process_recording, tasks, execution.jobs, execution.executor):
            name = result.name
            summaries[name], tracking[name] = result.summary, result.tracking
            tracking_counts.append((result.tracking, result.tracking_counts))
            verification[name], consistency_blocks[name] = result.verification, result.consistency
            choices[name] = result.choices
            cohort.merge(*result.chunk)
            for verifier_name, by_population in result.abstention_reasons.items():
                reasons.setdefault(verifier_name, []).append(by_population)
            if result.scored is not None:
                rows_out.write(result.scored)
            bar.advance(task)
        populations = cohort.finish(execution.jobs, execution.executor)
    animals = dataset.recordings.set_index("recording").loc[names, "animal_id"].to_numpy()
    tracking["pooled"] = tracking_gt_protocol.pool(tracking_counts)
    tracking["pooled"]["intervals"] = _intervals(
        {"correct_observation_rate": ("correct_observations", "reference_observations")},
        [tracking[n] for n in names], animals, config.seed)
    conditions = [c for (v, c) in populations if v == primary and not c.startswith(_EVIDENCE_KEY)]
    verification["pooled"] = _pooled_verification(populations, primary, conditions, verification,
                                                  names, animals, config.seed)
    return {
        "recordings": summaries,
        "verifier": {"name": primary, "evidence": kinds[primary],
                     "threshold_um": config.threshold_um},
        "tracking_gt": tracking,
        "anatomical_verification": verification,
        "anatomical_consistency": consistency_blocks,
        "verifier_comparison": _comparison(populations, reasons, kinds),
        "_choices": choices,
        "_curves": {c: detection_curves(populations[primary, c]) for c in conditions if c != ALL},
    }


EVIDENCE = ("six_corruptions", "nearby_swap")  # populations of the side-by-side table
_EVIDENCE_KEY = "evidence:"  # their pool keys, apart from the conditions' (nearby_swap is both)


def _populations(conditions: list[str], primary: str, verifiers: list[str]) -> dict:
    """(verifier, population) -> the condition codes it pools: every condition and all of them
    for the run's verifier; the evidence populations for every verifier."""
    codes = {c: k for k, c in enumerate(conditions)}
    out = {(primary, c): (k,) for c, k in codes.items()}
    out[primary, ALL] = tuple(codes.values())
    for verifier in verifiers:
        out[verifier, _EVIDENCE_KEY + "six_corruptions"] = tuple(
            codes[c] for c in SIX_CORRUPTIONS if c in codes)
        out[verifier, _EVIDENCE_KEY + "nearby_swap"] = (
            (codes["nearby_swap"],) if "nearby_swap" in codes else ())
    return out


def _comparison(populations: dict, reasons: dict, kinds: dict[str, str]) -> dict:
    """The side-by-side evidence table, pooled over recordings."""
    out = {}
    for (name, key), pooled in populations.items():
        if not key.startswith(_EVIDENCE_KEY):
            continue
        population = key[len(_EVIDENCE_KEY):]
        m = pooled.metrics()
        block = {key: m[key] for key in ("n_rows", "n_errors", "n_abstained", "auroc", "auprc",
                                          "auroc_abstain_as_error", "correct_coverage_at_fcr",
                                          "max_false_certification_rate")}
        per_recording = reasons.get(name, [])
        block["abstentions"] = None if any(r is None for r in per_recording) else {
            key: sum(r[population][key] for r in per_recording)
            for key in ("ambiguous", "missing_evidence")}
        out.setdefault(name, {"evidence": kinds[name], "populations": {}})["populations"][population] = block
    return out


def _pooled_verification(populations: dict, primary: str, conditions: list[str],
                         per_recording: dict, names: list[str], animals: np.ndarray,
                         seed: int) -> dict:
    """Metrics over all recordings' rows; association = sums of the recordings' counts."""
    out = {}
    for condition in conditions:
        out[condition] = populations[primary, condition].metrics()
        out[condition].pop("auroc_abstain_as_error")
        if condition != ALL:
            out[condition]["association"] = pool_diagnostics(
                [per_recording[n][condition]["association"] for n in names])
        out[condition]["intervals"] = _intervals(
            RATES, [per_recording[n][condition] for n in names], animals, seed)
    return out


def _intervals(rates: dict, blocks: list[dict], animals: np.ndarray, seed: int) -> dict:
    """95 % cluster-bootstrap intervals by animal for each rate (ci null under 5 animals)."""
    codes, _ = pd.factorize(pd.Series(animals), sort=True)
    n_animals = int(codes.max()) + 1 if len(codes) else 0
    out = {}
    for rate, (numerator, denominator) in rates.items():
        num = np.bincount(codes, weights=[b[numerator] for b in blocks], minlength=n_animals)
        den = np.bincount(codes, weights=[b[denominator] for b in blocks], minlength=n_animals)
        interval = animal_bootstrap_interval(num, den, seed=seed)
        out[rate] = {"ci": interval["ci"], "level": interval["level"],
                     "animals": interval["animals"], "reason": interval["reason"]}
    return out


def _terminal_summary(results: dict, out: Path) -> str:
    pooled = results["anatomical_verification"]["pooled"][ALL]
    verdicts = [block["deformation_hypothesis"]
                for block in results["anatomical_consistency"].values()]
    falsified = sum(v == "falsified" for v in verdicts)
    fmt = lambda v: "null" if v is None else f"{v:.3f}"  # noqa: E731
    return (f"{len(results['recordings'])} recording(s) ({results['partitions']['evaluated']}); "
            f"verifier {results['verifier']['name']} at {results['verifier']['threshold_um']:g} um: "
            f"AUROC {fmt(pooled['auroc'])}, certified coverage {fmt(pooled['certified_coverage'])}, "
            f"selective risk {fmt(pooled['selective_risk'])}, false certification "
            f"{fmt(pooled['false_certification_rate'])}; small-deformation hypothesis falsified in "
            f"{falsified} of {len(verdicts)} recording(s).\nWrote {out}/results.json, "
            f"manifest.json, report.html" + (", observations.parquet" if (out / "observations.parquet").exists() else ""))
