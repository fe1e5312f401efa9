"""``trackverify andi``: the AnDi 2 challenge scoring program."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.errors import InputError


@click.group("andi")
def andi() -> None:
    """AnDi 2 anomalous-diffusion challenge scoring (andi-datasets 2.1.13 numbers)."""


@andi.command("score")
@click.argument("input_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("output_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--corrected", is_flag=True, default=False,
              help="Use the corrected definitions (docs/reference/andi.md) instead of the official ones.")
def score_command(input_dir: Path, output_dir: Path, corrected: bool) -> None:
    """Score INPUT_DIR/res against INPUT_DIR/ref (CodaLab layout).

    Writes OUTPUT_DIR/scores.txt, OUTPUT_DIR/html/scores.html and OUTPUT_DIR/summary.md.
    Every malformed line, missing trajectory, file or experiment is listed by file and
    line and scored by the official rule (maximum errors); the submission is still scored.
    """
    from trackverify.andi.codalab import write_scores
    from trackverify.io.paths import check_out_dir

    check_out_dir(output_dir, [input_dir / "ref", input_dir / "res"])
    if not (input_dir / "ref").is_dir():
        raise InputError("no reference folder 'ref'", source=str(input_dir))
    if not (input_dir / "res").is_dir():
        raise InputError("no submission folder 'res'", source=str(input_dir))
    rep = write_scores(str(input_dir), str(output_dir), corrected=corrected)
    click.echo(rep.scores_text(rounded=True), nl=False)
    errors = sum(p.severity == "error" for p in rep.problems)
    click.echo(f"{errors} problem(s) and {len(rep.problems) - errors} warning(s) in the input; "
               f"see {output_dir / 'summary.md'}", err=True)
