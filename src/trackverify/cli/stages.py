"""``trackverify stage STAGE --submission DIR --reference DIR [--ground-truth DIR]``."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.errors import ConfigError, InputError
from trackverify.stages import STAGES, default_config, evaluate_stage, failed_result
from trackverify.stages.common import apply_overrides, check_confined

PASS_EXIT, FAIL_EXIT = 0, 1


def _parse_settings(settings: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _print_table(result) -> None:
    from rich.console import Console
    from rich.table import Table

    from trackverify.report.numbers import fmt

    table = Table(title=f"stage {result.stage}: score "
                        f"{fmt(result.score, undefined='n/a')} "
                        f"- {result.verdict}")
    table.add_column("criterion")
    table.add_column("mean capped ratio / value", justify="right")
    table.add_column("experiments within tolerance", justify="right")
    for name, entry in result.criteria.items():
        if not isinstance(entry, dict):
            continue
        value = entry.get("mean_capped_ratio", entry.get("value", entry.get("mean_coverage")))
        within = entry.get("experiments_within_tolerance")
        table.add_row(name, "" if not isinstance(value, (int, float)) else fmt(value),
                      "" if within is None else f"{within}/{entry.get('experiments')}")
    console = Console()
    console.print(table)
    for problem in result.problems:
        console.print(f"[red]problem:[/red] {problem}", highlight=False)


@click.command("stage")
@click.argument("stage", type=click.Choice(list(STAGES)))
@click.option("--submission", type=click.Path(path_type=Path), required=True,
              help="Folder with the submission's exp_* experiment folders (stats: <line>.csv).")
@click.option("--reference", type=click.Path(path_type=Path), required=True,
              help="Folder with the reference (scientist / baseline) outputs, same layout.")
@click.option("--ground-truth", type=click.Path(path_type=Path), default=None,
              help="Ground truth (body-tracking, keypoints, walking; features: gold trx).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("trackverify-stage"), show_default=True,
              help="Folder for stage.json (written atomically).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Override a stage constant or open-question default (repeatable).")
@click.option("--run-model", is_flag=True, default=False,
              help="keypoints / walking: run the submitted model.py + model.pkl (executes the "
                   "submitter's code in a subprocess) to produce the predictions first.")
@click.option("--timeout", type=click.IntRange(min=1), default=1800, show_default=True,
              help="Seconds allowed for --run-model.")
def stage(stage, submission, reference, ground_truth, out, settings, run_model, timeout):
    """Score one stage of the fly behaviour pipeline against its reference.

    Writes OUT/stage.json ({stage, score, verdict, criteria, per_experiment, config,
    problems}) and prints a table. Exit status: 0 pass, 1 partial or fail, 2 unreadable
    input. See docs/reference/stages.md for formats, formulas and defaults.
    """
    from trackverify.io.atomic import write_json_atomic
    from trackverify.io.paths import check_out_dir

    check_out_dir(out, [submission, reference, ground_truth])
    if not submission.is_dir():
        raise InputError("submission folder not found", source=str(submission))
    check_confined(submission)
    overrides = _parse_settings(settings)
    apply_overrides(default_config(stage), overrides)  # a bad --set, before any model runs
    problems: list[str] = []
    if run_model:
        from trackverify.stages.run_model import run_submitted_model

        submission, problems = run_submitted_model(stage, submission, ground_truth,
                                                   out / "model-outputs", timeout)
    if problems:
        result = failed_result(stage, problems, overrides)
    else:
        result = evaluate_stage(stage, submission, reference, ground_truth, overrides)
    write_json_atomic(out / "stage.json", result.to_dict())
    _print_table(result)
    return PASS_EXIT if result.verdict == "pass" else FAIL_EXIT
