"""``trackverify conversion``: verify converted neural datasets (check, decode, judge-agreement)."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import SEED
from trackverify.conversion import MAX_EPOCHS
from trackverify.report.numbers import fmt

_RESULT = {True: "[green]PASS[/]", False: "[red]FAIL[/]", None: "[yellow]-[/]"}


def _console():
    from rich.console import Console

    return Console(highlight=False)


def _decoder_options(func):
    options = [
        click.option("--epochs", type=click.IntRange(min=1, max=MAX_EPOCHS), default=200,
                     show_default=True,
                     help=f"Adam steps (full batch, one per epoch), at most {MAX_EPOCHS}."),
        click.option("--seed", type=SEED, default=0, show_default=True,
                     help="Seed of the 70/30 trial split and the initialisation."),
        click.option("--engine", type=click.Choice(["numpy", "torch"]), default="numpy",
                     show_default=True, help="torch needs the 'decoder' extra."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group("conversion")
def conversion() -> None:
    """Verify a dataset converted into the common decoding format (converted_data.pkl)."""


@conversion.command("check")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option("--reference", type=click.Path(path_type=Path), default=None,
              help="Reference conversion (folder or converted_data.pkl). Without it, the "
                   "unsupervised checks only.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("trackverify-results"), show_default=True,
              help="Folder for conversion.json (the submission folder is never written to).")
@_decoder_options
def check(submission, reference, out, epochs, seed, engine):
    """Run every verifier check on SUBMISSION_DIR and write conversion.json.

    Exit status: 0 if every required check passed, 1 if one failed or could not be
    decided, 2 if the input cannot be read.
    """
    from rich.table import Table

    from trackverify.io.atomic import write_json_atomic
    from trackverify.conversion.checks import run_checks
    from trackverify.conversion.decoder import DecoderConfig
    from trackverify.io.paths import check_out_dir

    check_out_dir(out, [submission, reference])
    report = run_checks(submission, reference,
                        DecoderConfig(epochs=epochs, seed=seed, engine=engine))
    path = write_json_atomic(out / "conversion.json", report)
    table = Table(title=f"conversion checks ({report['mode']})")
    for col in ("check", "required", "result", "summary"):
        table.add_column(col)
    for name, entry in report["checks"].items():
        table.add_row(name, "yes" if entry["required"] else "no", _RESULT[entry["passed"]],
                      entry["summary"])
    console = _console()
    console.print(table)
    for line in report["warnings"]:
        console.print(f"[yellow]warning:[/] {line}")
    console.print(f"verdict: {_RESULT[report['passed']]}  ({path})")
    return 0 if report["passed"] is True else 1


@conversion.command("decode")
@click.argument("data", type=click.Path(path_type=Path))
@_decoder_options
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the result as JSON to this file.")
def decode(data, epochs, seed, engine, out):
    """Train the linear decoder on DATA.pkl and report per-output balanced accuracy."""
    from rich.table import Table

    from trackverify.io.atomic import write_json_atomic
    from trackverify.conversion.decoder import DecoderConfig, run_decoder
    from trackverify.conversion.format import load_valid
    from trackverify.io.paths import check_out_file

    if out is not None:
        check_out_file(out, [data])
    dataset = load_valid(data)
    result = run_decoder(dataset, DecoderConfig(epochs=epochs, seed=seed, engine=engine))
    table = Table(title=f"decoder: {result.n_train_trials} train / {result.n_test_trials} "
                        "test trials")
    for col in ("output", "classes", "balanced accuracy", "chance", "chance-normalised"):
        table.add_column(col)
    for name, c, ba, ch, cn in zip(result.output_names, result.n_classes,
                                   result.balanced_accuracy, result.chance,
                                   result.chance_normalised):
        table.add_row(name, str(c), fmt(ba, undefined="undefined"), fmt(ch),
                      fmt(cn, undefined="undefined"))
    _console().print(table)
    if out is not None:
        write_json_atomic(out, result.to_dict())
    return 0


@conversion.command("judge-agreement")
@click.argument("ratings", type=click.Path(path_type=Path))
@click.option("--judge-column", default="judge_rating", show_default=True)
@click.option("--manual-column", default="manual_rating", show_default=True)
@click.option("--by", multiple=True, help="Break down by this column (repeatable), e.g. "
                                          "--by judge --by target.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the rows as JSON to this file.")
def judge_agreement_command(ratings, judge_column, manual_column, by, out):
    """Agreement of judge ratings with manual ratings in RATINGS.csv.

    Ratings are incorrect, concerning, ok, match or better; incorrect and concerning are
    the positive class ("a mistake"), the manual rating is the truth.
    """
    from rich.table import Table

    from trackverify.io.atomic import write_json_atomic
    from trackverify.conversion.judge import agreement_table
    from trackverify.io.paths import check_out_file
    from trackverify.io.tabular import read_table

    if out is not None:
        check_out_file(out, [ratings])
    rows = agreement_table(read_table(ratings), judge_column, manual_column, tuple(by),
                           source=str(ratings))
    table = Table(title="judge agreement (positive = incorrect or concerning)")
    metrics = ("balanced_accuracy", "d_prime", "recall", "precision", "f1")
    for col in (*by, "TP", "FP", "FN", "TN", *metrics):
        table.add_column(col)
    for row in rows:
        table.add_row(*[str(row[c]) for c in by],
                      *[str(row[c]) for c in ("tp", "fp", "fn", "tn")],
                      *[fmt(row[m], undefined="undefined") for m in metrics])
    _console().print(table)
    if out is not None:
        write_json_atomic(out, rows)
    return 0
