"""The main job: the three protocols over every recording, then the outputs.

``run_job`` streams recordings one at a time (in this process, a process pool or Ray; see
:mod:`trackverify.execute`): for each, ``tracking_gt`` on the clean predictions,
``anatomical_verification`` (corrupt, verify, score every condition) and
``anatomical_consistency`` on the control rows; the scored rows are appended to
``observations.parquet`` as they arrive, in recording order. Then it pools over
recordings and writes ``results.json``, ``manifest.json``, ``report.html`` and
tracking_gt's ``tracks.csv`` (per reference track) and ``events.csv`` (every identity switch
of the clean predictions; frames in the input's numbering). Every file
is written to a temporary name and renamed into place; ``results.json`` is written last.

With a partition file, the evaluated recordings are the ``test`` partition (or, when it is
empty, ``development``); with ``target_selective_risk`` the verifier threshold is first
fitted on the ``train`` / ``calibration`` recordings through
:class:`~trackverify.benchmark.partitions.FitData`, which cannot hand out test labels.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify import __version__
from trackverify.metrics.association import pool_diagnostics
from trackverify.benchmark.certify import SELECTIVE_RISK_TARGET, CalibrationTarget, write_calibration
from trackverify.benchmark.certify.calibration_file import calibration_content
from trackverify.benchmark.certify.fit import calibrate_threshold, fit_roles, precheck_target
from trackverify.benchmark.certify.summary import caveats, certification_block
from trackverify.benchmark.config import RunConfig, verifier_options
from trackverify.benchmark.corrupt import window_errors
from trackverify.benchmark.dataset import Dataset, load_dataset, specimen_dataset
from trackverify.errors import ConfigError, naming_input
from trackverify.execute import ordered_map
from trackverify.benchmark.intervals import animal_bootstrap_interval
from trackverify.io.atomic import write_json_atomic, write_text_atomic
from trackverify.io.paths import check_out_dir
from trackverify.report.numbers import fmt
from trackverify.tables import plain
from trackverify.io.tabular import ParquetStream, write_table
from trackverify.benchmark.manifest import build_manifest, input_hashes
from trackverify.benchmark.pooled import CohortPool, chunk_path, detection_curves, spill_chunk
from trackverify.benchmark.partitions import (FitData, Partitions, check_against_recordings,
                                    development_only, load_partitions)
from trackverify.progress import progress_bar, showing_steps, step
from trackverify.benchmark.protocols import tracking_gt as tracking_gt_protocol
from trackverify.benchmark.protocols.anatomical_consistency import consistency
from trackverify.benchmark.protocols.anatomical_verification import (
    ALL, SIX_CORRUPTIONS, condition_metrics, error_array, score_conditions, score_stacked)
from trackverify.benchmark.report import render_report
from trackverify.benchmark.selective import auroc_abstain_as_error
from trackverify.report.timeline import Timeline, control_states, reference_timeline
from trackverify.metrics.tracking import stack_by_recording
from trackverify.verifiers import ABSTENTION_COUNTS, add_counts, load_verifier, recorded_options
from trackverify.verifiers.registered_distance import (
    RegisteredDistance, ambiguity_k_from_ratios, ambiguity_ratios)

REGISTERED = RegisteredDistance.name

MAX_FCR = 0.01
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


def recording_summary(observations: pd.DataFrame, first_frame: int = 0) -> dict:
    """Counts that describe one recording's observation table (frames counted from its
    first frame, ``first_frame`` in the input's numbering): ``frames`` is SPEC's T, the
    last frame + 1 (gaps included), ``frames_present`` how many frame numbers hold an
    observation."""
    return {
        "observations": int(len(observations)),
        "first_frame": first_frame,
        "frames": int(observations["frame"].max()) + 1,
        "frames_present": int(observations["frame"].nunique()),
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
    abstention_reasons: dict  # verifier -> population -> ABSTENTION_COUNTS or None
    scored: pd.DataFrame | None  # every scored row, when observations.parquet is written
    clean_errors: list  # tracks whose "clean" predictions already differ from the anchor ids
    timeline: Timeline  # the control condition per reference track, for the report
    identity: tuple  # (per-track rows, switch events) of tracking_gt, input frame numbers
    reference_check: dict | None = None  # with check_reference: the check and both populations


def run_verifiers(config: RunConfig) -> list:
    """The run's verifier then each other compared one, built from the run's settings: one
    object per spec (the default compares the run's own verifier too)."""
    return [load_verifier(spec, verifier_options(config))
            for spec in dict.fromkeys((config.verifier, *config.compare_verifiers))]


def process_recording(task: tuple) -> RecordingResult:
    """All three protocols on one recording (runs in a worker; arguments are picklable).
    ``verifiers``: the run's verifier then its compared ones (:func:`run_verifiers`)."""
    name, source, config, verifiers, keep_rows, work = task
    step(f"{name}: reading")
    observations = source.load()
    detections = source.load_detections()
    verifier = verifiers[0]
    with window_errors(source.first_frame):  # frames also in the input's numbering
        scored, choices, own_reasons = score_conditions(observations, config, verifier, name,
                                                        detections)
    control = scored[scored["is_control"].to_numpy()]
    scores = {verifier.name: scored["score"].to_numpy()}
    reasons = {verifier.name: _sum_reasons(own_reasons)}
    for other in verifiers[1:]:
        if other.name not in scores:
            scores[other.name], per_condition = score_stacked(scored, other, detections, name)
            reasons[other.name] = _sum_reasons(per_condition)
    step(f"{name}: tracking_gt")
    tracking = tracking_gt_protocol.tracking_gt(observations, config.zero_distance_um, name)
    conditions = list(scored["condition"].cat.categories)
    codes = scored["condition"].cat.codes.to_numpy().astype(np.int8)
    error = error_array(scored)
    checked = None
    if config.check_reference:
        checked, kept = reference_check_block(observations, detections, scored, config)
        codes = np.where(kept, codes, codes + QUESTIONED).astype(np.int8)
    chunk = None
    if work is not None:
        path, populations = chunk_path(*work), _populations(conditions, verifier.name, list(scores),
                                                         config.check_reference)
        chunk = (path, populations, spill_chunk(path, error, scores, codes, populations,
                                                config.threshold_um))
    return RecordingResult(
        name=name,
        summary=recording_summary(observations, source.first_frame),
        tracking=tracking.metrics,
        tracking_counts=tracking.counts,
        verification=_with_abstentions(condition_metrics(scored, config, MAX_FCR), own_reasons),
        consistency=consistency(control, _consistency_threshold(config), config.falsification_share,
                                config.threshold_um),
        choices=choices,
        chunk=chunk,
        error=None if work is not None else error,
        scores=None if work is not None else scores,
        abstention_reasons=reasons,
        scored=_input_frames(scored, source.first_frame) if keep_rows else None,
        clean_errors=clean_prediction_errors(control, source.first_frame),
        timeline=control_timeline(name, control, tracking.identity.events, source.first_frame),
        identity=_in_input_frames(tracking.identity, source.first_frame),
        reference_check=checked,
    )


#: The verification numbers given for both populations of ``check_reference``.
CHECKED_METRICS = ("n_rows", "n_labelled", "n_errors", "auroc", "auroc_abstain_as_error",
                   "correct_coverage_at_fcr", "false_certification_rate", "certified_coverage")
#: A scored row whose reference label the check questions is spilled with its condition's code
#: plus QUESTIONED, so the pooled populations can hold or leave it (conditions < QUESTIONED).
QUESTIONED = 64
_UNQUESTIONED_KEY = "unquestioned:"  # pool keys of the rows the check does not question


def reference_check_block(observations: pd.DataFrame, detections: pd.DataFrame | None,
                          scored: pd.DataFrame, config: RunConfig) -> tuple[dict, np.ndarray]:
    """The reference check of one recording, and every condition's verification numbers on all
    its rows and on the rows whose reference observation the check does not question; with
    each scored row's mask of not questioned."""
    from trackverify.reference_check import check_reference
    from trackverify.reference_check.populations import rows_note

    check = check_reference(observations, detections)
    questioned = observations.loc[~check.kept, ["frame", "track"]].assign(_questioned=True)
    flag = scored[["frame", "track"]].merge(questioned, on=["frame", "track"], how="left")
    kept = flag["_questioned"].isna().to_numpy()

    def numbers(rows: pd.DataFrame) -> dict:
        error, score = error_array(rows), rows["score"].to_numpy()
        codes = rows["condition"].cat.codes.to_numpy()
        out = {}
        for c, m in condition_metrics(rows, config, MAX_FCR).items():
            at = slice(None) if c == ALL else codes == rows["condition"].cat.categories.get_loc(c)
            m["auroc_abstain_as_error"] = auroc_abstain_as_error(error[at], score[at])
            out[c] = {k: m[k] for k in CHECKED_METRICS}
        return out

    block = {"summary": check.summary(), "note": rows_note(check),
             "all_rows": numbers(scored), "unquestioned_rows": numbers(scored[kept])}
    return block, kept


def pooled_reference_check(populations: dict, primary: str, conditions: list[str],
                           per_recording: dict) -> dict:
    """``run --check-reference`` over every recording: each condition's verification numbers on
    all pooled rows and on the pooled rows the check does not question (the same two-pass pools
    as the run's pooled metrics, not averages of recordings), the rows and errors the second
    leaves out, and the check's counts summed over recordings."""
    def numbers(key: str) -> dict:
        m = populations[primary, key].metrics()
        return {k: m[k] for k in CHECKED_METRICS}

    all_rows = {c: numbers(c) for c in conditions}
    kept = {c: numbers(_UNQUESTIONED_KEY + c) for c in conditions}
    summaries = [b["summary"] for b in per_recording.values()]
    return {
        "summary": {"recordings": len(summaries),
                    **{k: sum(s[k] for s in summaries)
                       for k in ("rows", "rows_questioned", "rows_kept", "findings")}},
        "all_rows": all_rows, "unquestioned_rows": kept,
        "dropped": {c: {"rows": all_rows[c]["n_rows"] - kept[c]["n_rows"],
                        "errors": all_rows[c]["n_errors"] - kept[c]["n_errors"]}
                    for c in conditions},
    }


def _in_input_frames(identity, first_frame: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """tracking_gt's per-track rows and switch events with frames in the input's numbering."""
    tracks, events = identity.tracks, identity.events
    if not first_frame:
        return tracks, events
    return (tracks.assign(first_wrong_frame=tracks["first_wrong_frame"] + first_frame),
            events.assign(frame=events["frame"] + first_frame))


def control_timeline(name: str, control: pd.DataFrame, events: pd.DataFrame,
                     first_frame: int = 0) -> Timeline:
    """The report's per-track timeline of one recording: each reference track's control rows
    by their label against the anchor identities (correct, wrong identity, no valid
    prediction, no anchor identity), the clean predictions' identity switches marked; frames
    in the input's numbering."""
    predicted = control["pred_valid"].to_numpy(dtype=bool) & control["pred_id"].notna().to_numpy()
    frame = control["frame"].to_numpy(np.int64) + first_frame
    last = int(frame.max()) if len(frame) else first_frame
    return reference_timeline(f"{name}: per-track timeline (control condition)",
                              control["track"], frame, control_states(predicted, error_array(control)),
                              events.assign(frame=events["frame"].to_numpy(np.int64) + first_frame),
                              frames=(first_frame, last))


def clean_error_alerts(errors: dict) -> list[str]:
    """One sentence per recording whose predictions, given as clean, already hold errors."""
    out = []
    for name, tracks in errors.items():
        listed = ", ".join(f"track {t['track']} (frames {t['first_frame']}-{t['last_frame']}, "
                           f"{t['rows']} rows)" for t in tracks[:8])
        more = f" and {len(tracks) - 8} more" if len(tracks) > 8 else ""
        out.append(f"The predictions given as clean for recording {name} already carry "
                   f"{sum(t['rows'] for t in tracks)} wrong identities against their own anchor "
                   f"identities: {listed}{more}. Every condition inherits them (the control "
                   "condition counts them as errors); results.json lists them under "
                   "clean_prediction_errors.")
    return out


def clean_prediction_errors(control: pd.DataFrame, first_frame: int = 0) -> list[dict]:
    """Tracks whose clean predictions already carry a wrong identity (the control condition's
    errors: a valid ``pred_id`` other than the track's anchor identity), one entry per track:
    ``track, first_frame, last_frame, rows`` (frames in the input's numbering)."""
    wrong = control[control["error"].eq(1).fillna(False).to_numpy(dtype=bool)]
    if not len(wrong):
        return []
    grouped = wrong.groupby("track", sort=True)["frame"]
    table = pd.DataFrame({"first_frame": grouped.min() + first_frame,
                          "last_frame": grouped.max() + first_frame, "rows": grouped.size()})
    return [{"track": plain(track), **{k: int(v) for k, v in row.items()}}
            for track, row in table.iterrows()]


def _consistency_threshold(config: RunConfig) -> float:
    """The consistency rule's declared threshold, never a fitted verifier threshold."""
    return config.threshold_um if config.consistency_threshold_um is None else config.consistency_threshold_um
def _input_frames(scored: pd.DataFrame, first_frame: int) -> pd.DataFrame:
    """Rows back in the input's frame numbers (a run counts from each recording's first)."""
    return scored.assign(frame=scored["frame"] + first_frame) if first_frame else scored


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
    return {population: {key: add_counts(per_condition[c][key] for c in members if c in per_condition)
                          for key in ABSTENTION_COUNTS}
            for population, members in groups.items()}


def run_job(config: RunConfig, out: str | Path, data: str | Path | None = None,
            partitions_path: str | Path | None = None, target_selective_risk: float | None = None,
            execution: Execution = Execution(), target: CalibrationTarget | None = None,
            data_options: dict | None = None, on_warnings=None,
            other_inputs: tuple = ()) -> str:
    """Run everything and write the outputs; return a short summary for the terminal.

    ``out`` is refused before anything is read or written when it overlaps ``data``,
    ``partitions_path`` or ``other_inputs`` (e.g. the configuration file): it may not be an
    input, lie inside an input folder or contain an input
    (:func:`trackverify.io.paths.check_out_dir`; the command and ``trackverify.verify`` share
    this check).

    ``target`` (or the older ``target_selective_risk``) fits the threshold first (and, with
    ``config.fit_ambiguity_k``, registered_distance's ambiguity band; without a target that
    setting is a :class:`ConfigError`); with a fit, ``calibration.json`` is written too (:mod:`trackverify.benchmark.certify.calibration_file`).
    ``data_options`` (``fmt``, ``columns``, ``pixel_size``) say how to read ``data``
    (:func:`trackverify.benchmark.dataset.load_dataset`); its units warnings go to ``on_warnings``
    (a callable taking the list), into ``results.json`` (``input_warnings``) and the report.
    """
    if target is None and target_selective_risk is not None:
        target = CalibrationTarget(SELECTIVE_RISK_TARGET, float(target_selective_risk))
    if config.fit_ambiguity_k and target is None:
        raise ConfigError("fit_ambiguity_k needs --calibrate: the ambiguity band is fitted "
                          "with the threshold, on the fit partitions")
    out = Path(out)
    check_out_dir(out, [data, partitions_path, *other_inputs])
    dataset = (load_dataset(data, **(data_options or {})) if data is not None
               else specimen_dataset(config.specimen))
    input_warnings = list(dataset.source.get("warnings", []))
    if input_warnings and on_warnings is not None:
        on_warnings(input_warnings)
    # Load every verifier once, before any work: a bad spec fails early, and their names
    # and kinds of evidence (which no run setting changes) serve the whole run; the
    # recordings are scored by these (by new ones only when calibration fits ambiguity_k).
    verifiers = run_verifiers(config)
    kinds = {v.name: v.evidence for v in verifiers}
    partitions = (load_partitions(partitions_path) if partitions_path is not None
                  else development_only(dataset.recordings))
    if partitions_path is not None:
        check_against_recordings(partitions, dataset.recordings, source=str(partitions_path))
    evaluated_partition, evaluated = _evaluated(partitions, dataset)
    fitted = None
    declared_threshold = config.threshold_um
    animal_of = dataset.recordings.set_index("recording")["animal_id"].to_dict()
    with naming_input(data):
        if target is not None:
            config, fitted, verifiers = _calibrate(config, dataset, partitions, target,
                                                   execution, verifiers, animal_of)
        results = _evaluate(config, dataset, evaluated, out, execution, verifiers, kinds)
        draws = _repeated_draws(config, dataset, evaluated, out, execution, verifiers, kinds,
                                results)
    verification = results["anatomical_verification"]
    certification = certification_block(
        fitted, declared_threshold, config.threshold_um, verification["pooled"],
        {name: verification[name][ALL] for name in evaluated}, animal_of, ALL)
    certification["alerts"].extend(clean_error_alerts(results.get("clean_prediction_errors", {})))
    results.update({
        "trackverify_version": __version__,
        "settings": config.to_dict(),
        "partitions": {"evaluated": evaluated_partition, "summary": partitions.summary(),
                       "members": {name: list(members) for name, members in partitions.partitions.items()},
                       "quarantine": list(partitions.quarantine)},
        "calibration": fitted,
        "certification": certification,
        "caveats": caveats(verifiers[0].name, kinds[verifiers[0].name]),
        "input_warnings": input_warnings,
    })
    hashes = input_hashes(data)
    if "detections" in dataset.source:  # beside an observations.* file given alone
        hashes.update(input_hashes(dataset.source["detections"]))
    manifest = build_manifest(config.to_dict(), dataset.source, hashes, results.pop("_choices"))
    manifest["execution"] = dataclasses.asdict(execution)
    if draws is not None:
        manifest["repeats"] = draws.pop("_choices")
        results["repeats"] = draws
    if partitions_path is not None:
        manifest["input_sha256"]["partitions"] = partitions.sha256
    write_json_atomic(out / "manifest.json", manifest)
    identity = results.pop("_identity")
    write_table(identity["tracks"], out / "tracks.csv")
    write_table(identity["events"], out / "events.csv")
    results["identity"] = {key: table.to_dict("records") for key, table in identity.items()}
    if fitted is not None:
        # the fitted verifier's own options, but the band the fit used (fitted or declared)
        options = {**recorded_options(verifiers[0]),
                   "ambiguity_k": config.ambiguity_k if verifiers[0].name == REGISTERED else None}
        write_calibration(out / "calibration.json", calibration_content(
            version=__version__, verifier=verifiers[0].name, evidence=kinds[verifiers[0].name],
            record=fitted, target=target, partitions_sha256=partitions.sha256, **options))
    read = [dataset.source.get("data", "the built-in development specimen")]
    write_text_atomic(out / "report.html", render_report(results, results.pop("_curves"),
                                                         results.pop("_timelines"), read))
    write_json_atomic(out / "results.json", results)
    return _terminal_summary(results, out)


#: The headline numbers of every draw, per verifier and evidence population (``repeats``).
HEADLINE = ("auroc", "auroc_abstain_as_error", "auprc", "correct_coverage_at_fcr")


def _repeated_draws(config: RunConfig, dataset: Dataset, names: list[str], out: Path,
                    execution: Execution, verifiers: list, kinds: dict[str, str],
                    first: dict) -> dict | None:
    """With ``repeats = N > 1``: draws 2..N of the corruption suite (seeds ``seed + 1 ..``).

    ``first`` is draw 1's results (seed ``seed``; the rest of results.json is that draw).
    Returns ``{seeds, verifier_comparison}`` where each verifier's population holds, for every
    headline number, ``per_draw`` (one value per seed, null where undefined), ``mean`` and
    ``min`` over the draws with a value (null if none); plus ``_choices``, each draw's random
    choices for the manifest. Rows are written for draw 1 only.
    """
    if config.repeats == 1:
        return None
    seeds = config.draw_seeds()
    comparisons, choices = [first["verifier_comparison"]], [first["_choices"]]
    quiet = dataclasses.replace(execution, write_rows=False)
    for seed in seeds[1:]:
        draw = _evaluate(dataclasses.replace(config, seed=seed), dataset, names, out, quiet,
                         verifiers, kinds)
        comparisons.append(draw["verifier_comparison"])
        choices.append(draw["_choices"])
    summary: dict = {}
    for verifier, block in comparisons[0].items():
        for population in block["populations"]:
            summary.setdefault(verifier, {"evidence": block["evidence"], "populations": {}})
            summary[verifier]["populations"][population] = {
                key: over_draws([c[verifier]["populations"][population][key] for c in comparisons])
                for key in HEADLINE}
    return {"seeds": seeds, "verifier_comparison": summary,
            "_choices": [{"seed": s, "corruptions": c} for s, c in zip(seeds, choices)]}


def over_draws(values: list) -> dict:
    """``per_draw`` values, and their ``mean`` and ``min`` over the defined ones (null if none)."""
    defined = [float(v) for v in values if v is not None]
    return {"per_draw": list(values),
            "mean": float(np.mean(defined)) if defined else None,
            "min": float(np.min(defined)) if defined else None}


def _evaluated(partitions: Partitions, dataset: Dataset) -> tuple[str, list[str]]:
    """The test partition when it has recordings, otherwise development."""
    for name in ("test", "development"):
        listed = set(partitions.partitions.get(name, ()))
        members = [r for r in dataset.recordings["recording"] if r in listed]
        if members:
            return name, members
    raise ConfigError("no recording to evaluate: the test and development partitions hold none "
                      "of the data's recordings")


def _calibrate(config: RunConfig, dataset: Dataset, partitions: Partitions,
               target: CalibrationTarget, execution: Execution, verifiers: list,
               animal_of: dict) -> tuple[RunConfig, dict, list]:
    """Fit on train/calibration recordings only (never test), through :class:`FitData`.

    First, only with the run setting ``fit_ambiguity_k`` (and when ``registered_distance``
    is used), that verifier's ambiguity band ``k``, on the clean recordings of its fit
    partitions; otherwise the declared ``ambiguity_k`` stays, so calibrating changes the
    threshold and nothing else. Then the threshold of the primary verifier reaching
    ``target`` (:func:`trackverify.benchmark.certify.fit.calibrate_threshold`) on its own
    (:func:`trackverify.benchmark.certify.fit.fit_roles`: for a guarantee, ``k`` on train and the
    threshold on calibration, never the same animals). Returns the fitted config (its
    consistency rule keeps the declared threshold) and the record of what was fitted:
    ``ambiguity_k`` = the band ``registered_distance`` uses (None when it does not run),
    ``ambiguity_k_fitted`` and ``ambiguity_k_recordings`` (the recordings it was fitted on,
    empty when declared).
    """
    config = dataclasses.replace(config, consistency_threshold_um=_consistency_threshold(config))
    k_names, fit_names = (_members(dataset, partitions, roles) for roles in fit_roles(target))
    precheck_target(target, len({animal_of[r] for r in fit_names}))
    registered = REGISTERED in (config.verifier, *config.compare_verifiers)
    fit_k = registered and config.fit_ambiguity_k and (bool(k_names) or fit_names == k_names)
    if fit_k:
        if not k_names:  # FitData names the partitions and their (empty) row counts
            FitData(partitions, pd.DataFrame({"recording": []})).labels_for_fit()
        tasks = [(source, partitions) for _, source in dataset.sources(k_names)]
        ratios = list(ordered_map(_clean_ambiguity_ratios, tasks, execution.jobs, execution.executor))
        try:
            k = ambiguity_k_from_ratios(ratios)
        except ValueError as exc:  # e.g. fit recordings too short to score a clean row
            raise ConfigError(f"calibration failed: {exc} in the fit recordings "
                              f"{fit_names[:5]}{' ...' if len(fit_names) > 5 else ''}") from None
        config = dataclasses.replace(config, ambiguity_k=k)
        verifiers = run_verifiers(config)  # built with the fitted band
    record: dict = {"recordings": fit_names,
                    "ambiguity_k": config.ambiguity_k if registered else None,
                    "ambiguity_k_fitted": fit_k, "ambiguity_k_recordings": k_names if fit_k else []}
    if registered and config.fit_ambiguity_k and not fit_k:
        record["ambiguity_k_note"] = ("no train animals: registered_distance keeps its declared "
                                      "ambiguity_k (fitting it on the calibration animals would "
                                      "void the guarantee)")
    tasks = [(name, source, config, verifiers, False, None)
             for name, source in dataset.sources(fit_names)]
    primary = verifiers[0].name
    parts = [pd.DataFrame({"recording": result.name, "score": result.scores[primary],
                           "error": result.error})
             for result in ordered_map(process_recording, tasks, execution.jobs, execution.executor)]
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        {"recording": [], "score": [], "error": []})
    fitted = calibrate_threshold(target, FitData(partitions, rows), animal_of)
    return (dataclasses.replace(config, threshold_um=fitted["threshold"]), {**fitted, **record},
            verifiers)


def _members(dataset: Dataset, partitions: Partitions, names: tuple[str, ...]) -> list[str]:
    """The data's recordings in the partitions ``names``, in data order."""
    listed = {r for name in names for r in partitions.partitions.get(name, ())}
    return [r for r in dataset.recordings["recording"] if r in listed]


def _clean_ambiguity_ratios(task: tuple) -> np.ndarray:
    """``registered_distance``'s clean ``d / sigma`` of one fit recording (one at a time, so
    a cohort's fit recordings are never all in memory; labels only through FitData)."""
    source, partitions = task
    return ambiguity_ratios(FitData(partitions, source.load()).labels_for_fit(),
                            detections=source.load_detections())


def _evaluate(config: RunConfig, dataset: Dataset, names: list[str], out: Path,
              execution: Execution, verifiers: list, kinds: dict[str, str]) -> dict:
    primary = verifiers[0].name
    summaries, tracking, verification, consistency_blocks, choices = {}, {}, {}, {}, {}
    clean_errors, timelines, identity, checked = {}, [], [], {}
    tracking_counts, reasons = [], {}
    with tempfile.TemporaryDirectory(prefix="trackverify-pool-") as work, progress_bar() as bar, \
            ParquetStream(out / "observations.parquet", enabled=execution.write_rows) as rows_out:
        cohort = CohortPool(config.threshold_um, MAX_FCR, work)
        tasks = ((name, source, config, verifiers, execution.write_rows, (work, index))
                 for index, (name, source) in enumerate(dataset.sources(names)))
        task = bar.add_task("recordings", total=len(names))
        for result in _showing(bar, task, ordered_map(process_recording, tasks, execution.jobs,
                                                      execution.executor)):
            name = result.name
            summaries[name], tracking[name] = result.summary, result.tracking
            tracking_counts.append((result.tracking, result.tracking_counts))
            verification[name], consistency_blocks[name] = result.verification, result.consistency
            choices[name] = result.choices
            if result.clean_errors:
                clean_errors[name] = result.clean_errors
            timelines.append(result.timeline)
            identity.append((name, *result.identity))
            if result.reference_check is not None:
                checked[name] = result.reference_check
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
    conditions = [c for (v, c) in populations if v == primary
                  and not c.startswith((_EVIDENCE_KEY, _UNQUESTIONED_KEY))]
    verification["pooled"] = _pooled_verification(populations, primary, conditions, verification,
                                                  names, animals, config.seed)
    if checked:
        checked["pooled"] = pooled_reference_check(populations, primary, conditions, checked)
    return {
        "recordings": summaries,
        "verifier": {"name": primary, "evidence": kinds[primary],
                     "threshold_um": config.threshold_um},
        "tracking_gt": tracking,
        "anatomical_verification": verification,
        "anatomical_consistency": consistency_blocks,
        "verifier_comparison": _comparison(populations, reasons, kinds),
        **({"clean_prediction_errors": clean_errors} if clean_errors else {}),
        **({"reference_check": checked} if checked else {}),
        "_choices": choices,
        "_curves": {c: detection_curves(populations[primary, c]) for c in conditions if c != ALL},
        "_timelines": timelines,
        "_identity": {key: stack_by_recording([(name, tables[k]) for name, *tables in identity])
                      for k, key in enumerate(("tracks", "events"))},
    }


def _showing(bar, task, results):
    """``results`` with the bar showing each step of the work done in this process."""
    with showing_steps(bar, task):
        yield from results


EVIDENCE = ("six_corruptions", "nearby_swap")  # populations of the side-by-side table
_EVIDENCE_KEY = "evidence:"  # their pool keys, apart from the conditions' (nearby_swap is both)


def _populations(conditions: list[str], primary: str, verifiers: list[str],
                 check_reference: bool = False) -> dict:
    """(verifier, population) -> the spilled codes it pools: every condition and all of them
    for the run's verifier, on all rows (its code and its code + QUESTIONED), and with
    ``check_reference`` also on the rows the check does not question (its code alone); the
    evidence populations, on all rows, for every verifier."""
    if len(conditions) > QUESTIONED:
        raise ValueError(f"at most {QUESTIONED} conditions, not {len(conditions)}")
    codes = {c: k for k, c in enumerate(conditions)}

    def all_rows(kept: tuple[int, ...]) -> tuple[int, ...]:
        return kept + tuple(k + QUESTIONED for k in kept)

    out = {(primary, c): all_rows((k,)) for c, k in codes.items()}
    out[primary, ALL] = all_rows(tuple(codes.values()))
    if check_reference:
        out.update({(primary, _UNQUESTIONED_KEY + c): (k,) for c, k in codes.items()})
        out[primary, _UNQUESTIONED_KEY + ALL] = tuple(codes.values())
    for verifier in verifiers:
        out[verifier, _EVIDENCE_KEY + "six_corruptions"] = all_rows(tuple(
            codes[c] for c in SIX_CORRUPTIONS if c in codes))
        out[verifier, _EVIDENCE_KEY + "nearby_swap"] = (
            all_rows((codes["nearby_swap"],)) if "nearby_swap" in codes else ())
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
            key: add_counts(r[population][key] for r in per_recording)
            for key in ABSTENTION_COUNTS}
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


def _repeats_lines(repeats: dict) -> list[str]:
    """With ``repeats > 1``: the line above is the first draw's; per compared verifier the
    mean and min over the draws of the six corruptions' AUROC* and cov@1% (``repeats``)."""
    seeds = repeats["seeds"]
    lines = [f"The line above is the first draw's (seed {seeds[0]}); over {len(seeds)} draws "
             f"(seeds {seeds[0]}..{seeds[-1]}; results.json -> repeats), six corruptions pooled:"]
    for name, block in repeats["verifier_comparison"].items():
        six = block["populations"]["six_corruptions"]
        star, cov = six["auroc_abstain_as_error"], six["correct_coverage_at_fcr"]
        lines.append(f"  {name}: AUROC* mean {fmt(star['mean'])}, min {fmt(star['min'])}; "
                     f"coverage at FCR <= 1 % mean {fmt(cov['mean'])}, min {fmt(cov['min'])}")
    return lines


def _terminal_summary(results: dict, out: Path) -> str:
    """What the run found, in the report's own numbers (:func:`.report.verifier_rows`), what
    the deformation check means, and where to go next."""
    from trackverify.benchmark.report import ranking_words, share, verifier_rows

    verdicts = [block["deformation_hypothesis"]
                for block in results["anatomical_consistency"].values()]
    falsified = sum(v == "falsified" for v in verdicts)
    certification = results["certification"]
    rows = verifier_rows(results)
    lines = [f"{len(results['recordings'])} recording(s) ({results['partitions']['evaluated']}); "
             f"{rows[0][2]['n_errors']:,} errors injected into copies of the predictions:"]
    lines += [f"  {name} ({evidence} evidence) ranks them with {ranking_words(block)}; letting at "
              f"most 1 % through, it certifies correct rows making up "
              f"{share(block['correct_coverage_at_fcr'])} of all rows"
              for name, evidence, block in rows]
    if verdicts:
        rule = next(iter(results["anatomical_consistency"].values()))["rule"]
        lines.append(f"Small deformation (neurons near their anchor-frame place): "
                     f"{'falsified' if falsified else 'supported'} in "
                     f"{falsified if falsified else len(verdicts) - falsified} of {len(verdicts)} "
                     f"recording(s), so "
                     + ("a fixed distance from the anchor frame cannot tell right from wrong "
                        "there" if falsified else "a fixed distance can serve") + f" ({rule})")
    if "repeats" in results:
        lines.extend(_repeats_lines(results["repeats"]))
    if certification["smallest_reachable_target"] is not None:
        lines.append(f"Calibration animals with errors: {results['calibration']['animals_with_errors']}; "
                     f"smallest reachable target: {fmt(certification['smallest_reachable_target'])}.")
    lines.append(certification["guarantee"])
    lines.extend(f"WARNING: {w}" for w in certification["warnings"] + certification["alerts"])
    written = ["results.json", "manifest.json", "report.html", "tracks.csv", "events.csv"]
    written += [f for f in ("calibration.json", "observations.parquet") if (out / f).exists()]
    lines.append(f"Wrote {out}/" + ", ".join(written))
    lines.append(f"Next: open {out}/report.html; to audit your own tracker's output, "
                 "trackverify audit TRACKS --out DIR (README.md)")
    return "\n".join(lines)
