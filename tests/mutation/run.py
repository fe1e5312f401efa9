"""Mutation testing of the definition modules with mutmut; prints the score per module.

    python tests/mutation/run.py [MODULE ...] [--jobs N] [--work DIR] [--recheck | --report-only]
    python tests/mutation/run.py MODULE --names NAME [NAME ...]

Each module is mutated on its own, in a scratch copy of ``src/`` and ``tests/`` under
``--work`` (default ``build/mutmut/``), with only the tests that exercise it (``MODULES``), so one
module takes minutes rather than the whole suite per mutant. Each run starts afresh (the
tests may have changed); ``--report-only`` prints the scores of the last run; ``--recheck``
runs the current tests against that run's survivors (``recheck``). A mutant listed in
``tests/mutation/equivalent.txt`` (``mutant-name  reason``) behaves exactly like the original
on every valid input; it is counted apart, and the score is ``killed / (mutants -
equivalent)`` (a timeout counts as killed; "no tests", a mutant that no selected test
reaches, as survived). Not part of ``make test``.

``--names`` asks mutmut to run again only the given mutants of one module (mutmut names or
patterns, e.g. the survivors printed on stderr), against fresh copies of ``src/`` and
``tests/``, keeping the verdicts of the module's last run for every other mutant.
``--recheck`` instead re-runs every survivor *and timeout* of the last run outside mutmut, with
a generous time limit: on a loaded machine mutmut's tight limit can call a surviving mutant a
timeout (see ``recheck``).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MUTMUT = [sys.executable, "-m", "mutmut"]

# The unit and scoring-program tests of andi/ (the parity harness runs the reference library,
# far too slow per mutant); the stage framework with each stage's tests; conversion/ without
# the two tests that load a real sentence-embedding model (14 s each).
ANDI = ["tests/andi/test_units.py", "tests/andi/test_core_hand.py",
        "tests/andi/test_ensemble_hand.py", "tests/andi/test_codalab_hand.py",
        "tests/andi/test_single_hand.py", "tests/andi/test_scoring_program.py"]
STAGES = ["tests/stages/test_stage_framework.py"]
REAL_EMBEDDINGS = [
    "--deselect",
    "tests/conversion/test_checks_cli.py::test_renamed_variables_match_with_real_embeddings",
    "--deselect",
    "tests/conversion/test_summary_matching.py::test_real_embeddings_pair_names_by_meaning"]
CONVERSION = ["tests/conversion", *REAL_EMBEDDINGS]
GRAPH = ["tests/graph/test_graph_hand.py", "tests/graph/test_graph_boundaries.py",
         "tests/graph/test_graph_evaluate.py"]

# module (path under src/trackverify) -> the tests that exercise it
MODULES: dict[str, list[str]] = {
    "benchmark/selective.py": ["tests/test_selective.py", "tests/test_pooled.py"],
    "scoring.py": ["tests/stages/test_stage_framework.py"],
    "anchors.py": ["tests/test_verifiers.py", "tests/test_corrupt.py"],
    "metrics/association.py": ["tests/mot/test_associate.py"],
    "benchmark/corrupt.py": ["tests/test_corrupt.py", "tests/test_corrupt_harder.py",
                   "tests/test_corruption_window.py"],
    "benchmark/pooled.py": ["tests/test_pooled.py", "tests/test_selective.py"],
    "metrics/mot.py": ["tests/mot/test_mot_hand.py", "tests/mot/test_mot_recorded.py",
               "tests/mot/test_associate.py"],
    "andi/core.py": ["tests/andi/test_core_hand.py", "tests/andi/test_single_hand.py",
                     "tests/andi/test_units.py", "tests/andi/test_scoring_program.py"],
    "verifiers/fixed_distance.py": ["tests/test_verifiers.py"],
    "verifiers/registered_distance.py": ["tests/test_registration_by_hand.py",
                                         "tests/test_registered_distance.py",
                                         "tests/test_track_pooling_verifier.py",
                                         "tests/test_verifiers.py"],
    "verifiers/pooling.py": ["tests/test_track_pooling.py"],
    "andi/_engine.py": ANDI,
    # each with the tests that call it directly, hand-computed ones first (the
    # scoring-program tests run every module; the ensemble distance on its default
    # million-point grid is slow per mutant)
    "andi/single.py": ["tests/andi/test_single_hand.py", "tests/andi/test_units.py",
                       "tests/andi/test_scoring_program.py"],
    "andi/ensemble.py": ["tests/andi/test_ensemble_hand.py", "tests/andi/test_units.py",
                         "tests/andi/test_scoring_program.py"],
    "andi/codalab.py": ["tests/andi/test_codalab_hand.py", "tests/andi/test_scoring_program.py"],
    **{f"stages/{name}.py": [f"tests/stages/test_stage_{name}.py", *STAGES]
       for name in ("body_tracking", "features", "gait", "keypoints", "registration",
                    "walking")},
    "stages/stats.py": ["tests/stages/test_stats_hand.py", "tests/stages/test_stage_stats.py",
                        *STAGES],
    "stages/common.py": ["tests/stages"],
    **{f"conversion/{name}.py": CONVERSION for name in ("judge", "summary")},
    # the matching and the verdicts called directly; the checks' end-to-end tests run
    # in-process on a small data set (a 5-epoch decoder)
    "conversion/matching.py": ["tests/conversion/test_matching_hand.py",
                               "tests/conversion/test_summary_matching.py", *REAL_EMBEDDINGS],
    "conversion/checks.py": ["tests/conversion/test_checks.py",
                             "tests/conversion/test_checks_cli.py", *REAL_EMBEDDINGS],
    # the format check (rules F1-..., codes and messages) and the verifier plumbing's
    # definitions (abstention counts, None-propagating sums, score normalisation)
    "conversion/format.py": ["tests/conversion/test_format.py"],
    # the certification: losses, CRC / LTT thresholds and p-values, target parsing, the fit
    # per target and its check on evaluated animals (hand-computed cases, no CLI runs)
    "benchmark/certify/guarantees.py": ["tests/certify/test_guarantees.py"],
    "assignment.py": ["tests/test_assignment.py"],
    "benchmark/certify/fit.py": ["tests/certify/test_fit_hand.py", "tests/certify/test_summary.py"],
    "benchmark/certify/targets.py": ["tests/certify/test_targets.py", "tests/certify/test_guarantees.py"],
    "benchmark/intervals.py": ["tests/test_intervals_hand.py", "tests/hygiene/test_hygiene_intervals.py"],
    # the protocol's plumbing by hand first; test_api.py (a full audit per test) reaches it
    # too, but costs about a minute a mutant
    "verifiers/__init__.py": ["tests/test_verifier_protocol.py", "tests/test_verifiers.py"],
    # the decoder's pieces by hand first, then the trained model (5-epoch runs; the
    # 200-epoch and torch comparisons last)
    "conversion/decoder.py": ["tests/conversion/test_decoder_hand.py",
                              "tests/conversion/test_decoder.py"],
    # the graph metrics on hand-computed lineages (the traccuracy parity tests take
    # minutes per run: not per mutant)
    "metrics/graph/metrics.py": GRAPH,
    "metrics/graph/matching.py": GRAPH,
    "metrics/graph/tracks.py": GRAPH,
    # the protocols' definitions by hand (the property tests draw random tables: not
    # the same tests on every mutant)
    "benchmark/protocols/anatomical_verification.py": ["tests/test_protocols_hand.py"],
    "benchmark/protocols/anatomical_consistency.py": ["tests/test_protocols_hand.py",
                                            "tests/test_verifiers.py"],
    "benchmark/protocols/tracking_gt.py": ["tests/test_protocols_hand.py"],
    # the tracking scores on hand-computed scenes and recordings, and the evaluate command
    # in-process
    "metrics/tracking.py": ["tests/mot/test_tracking_gt_hand.py", "tests/mot/test_mot_hand.py",
                       "tests/mot/test_mot_evaluate_cli.py"],
    # the run's summaries over corruption draws
    "run.py": ["tests/test_protocols_hand.py"],
    # the one definition of an integer and of a real value (settings, files, arguments)
    "values.py": ["tests/test_values.py"],
    # the table checks by hand first, then the ids as read (not the writers' round trips:
    # seconds a mutant, and the writers are not what is mutated)
    "tables.py": ["tests/test_tables_checks.py", "tests/test_tables.py", "tests/test_ids.py",
                  "--deselect", "tests/test_ids.py::test_nwb_round_trips_its_ids",
                  "--deselect", "tests/test_ids.py::test_every_written_table_round_trips_its_ids"],
}
# Modules measured on some of their functions only (mutmut name patterns): the rest of the
# module is not counted, and the table says so.
FUNCTIONS: dict[str, list[str]] = {}
# The definition functions of the stages (scores, tolerance ratios, pass rules; not the file
# readers and checks), of andi/single.py (scoring, not parsing), andi/codalab.py and
# conversion/checks.py.
DEFINITIONS = {
    "stages/common.py": ["summarise_ratios", "ratio_entry", "wrapped", "align_trajectories",
                         "dense", "total_frames"],
    "stages/body_tracking.py": ["tips", "tip_error", "clear_counts", "mota"],
    "stages/features.py": ["corfrac_loss", "_standard_ratio", "score_experiment"],
    "stages/gait.py": ["_mean_bout_error", "bout_balanced_accuracy"],
    "stages/keypoints.py": ["keypoint_errors", "mean_percentile_error"],
    "stages/registration.py": ["_geometry", "_range_rel", "score_experiment"],
    "stages/stats.py": ["read_stats_csv", "cell_correct", "evaluate"],
    "stages/walking.py": ["expand_bouts", "collect"],
    "andi/single.py": ["first_match", "_regular", "_int_cp", "score_tables", "_drop_last_unless",
                       "check_prediction_length", "error_SingleTraj_dataset"],
    # the scoring program's scores, maxima and averages; not the reference checks, the
    # VIP-file reader, the problem messages or the HTML / Markdown / file writers
    "andi/codalab.py": ["when_error_single", "_max_single", "_run_single", "run_single_task",
                        "_run_ensemble", "run_ensemble_task", "score"],
    # the B1-B6 rules and the verdict; not the file search, the pickle loading and the
    # unsupervised record (no threshold)
    "conversion/checks.py": ["_file_state", "_check", "check_required_files", "check_format",
                             "_matching", "_pairing_missing", "_output_classes",
                             "_decoder_comparison", "run_checks", "verdict",
                             "_statistics_check"],
    # the scoring of one recording, its pieces and the pooling; not the API's argument
    # checks (evaluate_tracking) or the refusals of check_predictions
    "metrics/tracking.py": ["compact_frames", "check_identity_size", "score_recording",
                       "pool_recordings", "recording_codes", "_repeated", "_by_recording",
                       "stack_by_recording"],
    # the mean and minimum over corruption draws of the headline numbers
    "run.py": ["over_draws"],
    # the table checks: required columns, each column's type, ids, duplicate rows and the
    # schema's rules (validate); not the key coding or the ordering helpers
    "tables.py": ["validate", "_check_columns", "id_column", "_check_text_ids",
                  "_frame_column", "_check_coordinate_set", "_coordinate_column",
                  "_bool_column", "_check_unique"],
}
# registered_distance.py: its scoring, abstention, one-to-one assignment and helper
# functions, the identity-free registration (the fit, the global pose, CPD's E- and M-steps)
# and the calibration of the ambiguity band.
FUNCTIONS["verifiers/registered_distance.py"] = [
    *(f"trackverify.verifiers.registered_distance.xǁRegisteredDistanceǁ{name}__mutmut_*"
      for name in ("__init__", "register", "score")),
    *(f"trackverify.verifiers.registered_distance.x_{name}__mutmut_*" for name in (
        "_distance_and_margin", "nearest_other", "constant_velocity", "fitted_outlier_weight",
        "ambiguity_k_from_ratios", "assign_detections", "contradicted_claims",
        "detection_of_points", "nearest_smallest_index", "frame_groups", "anchor_spacing",
        "identity_spacings", "spacing_factors",
        "_unique_detections", "fit_registration", "_fit", "_better_start", "_low_rank_kernel",
        "_detection_terms", "_exponents", "_expectation", "global_pose", "_rotation",
        "_offset_candidates", "_cell_keys", "_register_frame", "_solve",
        "ambiguity_ratios", "calibrate_ambiguity_k"))]
# metrics/graph/tracks.py: the graph (its edges, degrees, successors) and the key lookup; not the
# table reader graph_from_table.
FUNCTIONS["metrics/graph/tracks.py"] = [
    "trackverify.metrics.graph.tracks.xǁTrackGraphǁ*",
    *(f"trackverify.metrics.graph.tracks.x_{name}__mutmut_*" for name in (
        "build_track_graph", "_null", "lookup", "points"))]
for _module, _names in DEFINITIONS.items():
    _dotted = "trackverify." + _module.removesuffix(".py").replace("/", ".")
    FUNCTIONS[_module] = [f"{_dotted}.x_{name}__mutmut_*" for name in _names]

# A mutant whose tests run longer than TIMEOUT times (their unmutated time + one second)
# is stopped and counted as killed (a mutated loop bound that never ends): mutmut's
# timeout_multiplier (its default, 15, let one hanging mutant of the slow CLI tests run for
# ten minutes). Low enough that a hang costs seconds; high enough that a loaded machine
# does not turn a slow surviving mutant into a false kill.
TIMEOUT = 5.0

KILLED = {"killed", "timeout", "segfault", "suspicious"}


def function_name(pattern: str) -> str:
    """``trackverify.m.x_name__mutmut_*`` -> ``name``; ``...xǁClassǁname*`` -> ``Class.name``."""
    name = pattern.rsplit(".", 1)[-1].removesuffix("__mutmut_*").rstrip("*")
    return name[2:].replace("ǁ", ".") if name.startswith("xǁ") else name.removeprefix("x_")


def equivalents() -> dict[str, str]:
    path = Path(__file__).with_name("equivalent.txt")
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            out[name] = reason.strip()
    return out


def forget_rechecks(scratch: Path, patterns: list[str]) -> None:
    """Drop the ``recheck.json`` verdicts of the mutants mutmut is about to run again (every
    mutant on a fresh run): else a stale recheck verdict would override mutmut's new one."""
    path = scratch / "recheck.json"
    if path.exists():
        kept = {name: verdict for name, verdict in json.loads(path.read_text()).items()
                if not any(fnmatch.fnmatch(name, p) for p in patterns)}
        path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")


def prepare(module: str, work: Path, keep_results: bool = False) -> Path:
    """A scratch copy of the sources and tests, with a setup.cfg for this module only;
    ``mutants/`` (mutmut's mutants and verdicts) is removed unless ``keep_results``."""
    scratch = work / module.replace("/", "_").removesuffix(".py")
    scratch.mkdir(parents=True, exist_ok=True)
    # "mutants": a fresh run, tests may have changed
    for folder in ("src", "tests") if keep_results else ("src", "tests", "mutants"):
        if (scratch / folder).exists():
            shutil.rmtree(scratch / folder)
        if folder != "mutants":
            shutil.copytree(REPO / folder, scratch / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    tests = "\n    ".join(MODULES[module])
    (scratch / "setup.cfg").write_text(
        "[mutmut]\nsource_paths=src\n"
        f"only_mutate=src/trackverify/{module}\n"
        f"pytest_add_cli_args_test_selection={tests}\n"
        f"timeout_multiplier={TIMEOUT}\n"
        "pytest_add_cli_args=-x\n    -q\n    -p\n    no:cacheprovider\n")
    return scratch


def statuses(scratch: Path) -> dict[str, str]:
    out = subprocess.run([*MUTMUT, "results", "--all", "true"], cwd=scratch, text=True,
                         capture_output=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("trackverify."):
            result[name] = status
    return result


def recheck(module: str, scratch: Path, names: list[str]) -> dict[str, str]:
    """Run the module's current tests against each named mutant of an earlier run (its
    survivors, and its timeouts: on a loaded machine a mutant that fails at once can
    still miss mutmut's tight time limit).

    mutmut itself re-runs a mutant only by resetting the whole module's results, so after
    new tests are written the survivors are checked here the way mutmut checks a mutant:
    the selected tests, with ``MUTANT_UNDER_TEST`` naming it, against the mutated copy in
    ``mutants/src`` (a failing test kills it; a run longer than TIMEOUT times the
    unmutated run, plus a minute, counts as a timeout). The module's source must be the
    one that was mutated. Verdicts are kept in ``recheck.json`` and override mutmut's.
    """
    source = f"src/trackverify/{module}"
    if (REPO / source).read_bytes() != (scratch / source).read_bytes():
        raise SystemExit(f"{module} changed since it was mutated: run it again")
    shutil.rmtree(scratch / "tests")
    shutil.copytree(REPO / "tests", scratch / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in (REPO / "src").rglob("*.py"):  # the other modules as they are now
        relative = path.relative_to(REPO)
        if relative != Path(source):
            (scratch / "mutants" / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, scratch / "mutants" / relative)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               *MODULES[module]]
    scratch = scratch.resolve()  # the tests run inside it
    env = {**os.environ, "PYTHONPATH": str(scratch / "mutants" / "src")}

    def run_tests(name: str, timeout: float | None, tests=None):
        return subprocess.run(command if tests is None else [*command[:7], *tests], cwd=scratch,
                              env={**env, "MUTANT_UNDER_TEST": name},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False).returncode

    start = time.monotonic()
    if run_tests("", None) != 0:
        raise SystemExit(f"the tests of {module} fail without a mutant")
    limit = TIMEOUT * (time.monotonic() - start) + 60
    path = scratch / "recheck.json"
    verdicts = json.loads(path.read_text()) if path.exists() else {}
    for name in names:
        if name in verdicts:  # checked by an earlier, interrupted recheck
            continue
        try:  # the first test file alone first: most mutants fail there, quickly
            failed = (run_tests(name, limit, MODULES[module][:1]) != 0
                      or run_tests(name, limit) != 0)
            verdicts[name] = "killed" if failed else "survived"
        except subprocess.TimeoutExpired:
            verdicts[name] = "timeout"
        path.write_text(json.dumps(verdicts, indent=1, sort_keys=True))
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--work", type=Path, default=REPO / "build" / "mutmut")
    parser.add_argument("--names", nargs="+", default=[], metavar="NAME",
                        help="run again only these mutants (names or patterns) of one module")
    parser.add_argument("--recheck", action="store_true",
                        help="run the current tests against the survivors of the last run "
                             "(see recheck) and print the scores")
    parser.add_argument("--report-only", action="store_true",
                        help="print the scores of earlier runs without running mutmut")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules) - set(MODULES))
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {sorted(MODULES)}")
    if args.names and (len(args.modules) != 1 or args.recheck):
        parser.error("--names needs exactly one module (and no --recheck)")
    equivalent = equivalents()
    rows = []
    for module in args.modules:
        scratch = args.work / module.replace("/", "_").removesuffix(".py")
        if not (args.report_only or args.recheck):
            keep = bool(args.names) and (scratch / "mutants").exists()
            scratch = prepare(module, args.work, keep_results=keep)
            forget_rechecks(scratch, args.names if keep else ["*"])
            subprocess.run([*MUTMUT, "run", "--max-children", str(args.jobs),
                            *(args.names or FUNCTIONS.get(module, []))], cwd=scratch,
                           stdout=subprocess.DEVNULL, check=False)
        if not (scratch / "mutants").exists():
            rows.append((module, None))
            continue
        found = statuses(scratch)
        if args.recheck:
            recheck(module, scratch, sorted(
                n for n, st in found.items() if st in ("survived", "no tests", "timeout")
                and n not in equivalent and any(fnmatch.fnmatch(n, p) for p in
                                                FUNCTIONS.get(module, ["*"]))))
        if (scratch / "recheck.json").exists():
            found.update(json.loads((scratch / "recheck.json").read_text()))
        if module in FUNCTIONS:
            found = {n: s for n, s in found.items()
                     if any(fnmatch.fnmatch(n, p) for p in FUNCTIONS[module])}
        pending = sum(s == "not checked" for s in found.values())
        survived = sorted(n for n, s in found.items()
                          if s not in KILLED and s != "not checked" and n not in equivalent)
        # A listed mutant that mutmut kills is a stale entry (the function changed since it
        # was argued): counted as killed only, and named below.
        stale = sorted(n for n, s in found.items() if s in KILLED and n in equivalent)
        rows.append((module, (len(found) - pending, sum(s in KILLED for s in found.values()),
                              sum(n in equivalent for n, s in found.items()
                                  if s != "not checked" and s not in KILLED),
                              survived, pending, stale)))
    print("| module | mutants | killed | equivalent | survived | score |")
    print("|---|---:|---:|---:|---:|---:|")
    for module, counts in rows:
        if counts is None:
            print(f"| {module} | not run | | | | |")
            continue
        if module in FUNCTIONS:
            module += " (" + ", ".join(map(function_name, FUNCTIONS[module])) + ")"
        total, killed, eq, survived, pending, _ = counts
        score = killed / (total - eq) if total > eq else float("nan")
        note = f" ({pending} not yet run)" if pending else ""
        print(f"| {module}{note} | {total} | {killed} | {eq} | {len(survived)} | {score:.1%} |")
    for module, counts in rows:
        for name in counts[3] if counts else []:
            print(f"survived: {name}", file=sys.stderr)
        for name in counts[5] if counts else []:
            print(f"stale equivalent entry (mutmut kills it): {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
