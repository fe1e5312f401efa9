"""``trackverify audit``: the commands; the work is :func:`trackverify.audit.audit` and
``trackverify.review`` (``audit sample``, ``audit estimate``).

``audit`` is a group whose default command audits a tracker's output, so
``trackverify audit TRACKS --out DIR`` (and ``audit -h``) works as before the group existed.
"""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import SEED, echo_warnings, input_options, jobs_options


#: The default command's name: what ``audit`` runs unless its first word names a subcommand.
DEFAULT = "tracks"


class DefaultGroup(click.Group):
    """A group that runs :data:`DEFAULT` unless the first argument names another command."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands or args[0] == DEFAULT:
            args = [DEFAULT, *args[args[:1] == [DEFAULT]:]]
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        return ("" if name == DEFAULT else name), command, rest


class _DefaultContext(click.Context):
    """The default command's context: named ``trackverify audit`` in usage and error hints."""

    @property
    def command_path(self) -> str:
        return super().command_path.rstrip()


class _DefaultCommand(click.Command):
    context_class = _DefaultContext


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
def audit():
    """Audit a tracker's output with no reference tracks: which identities can be trusted.

    \b
    trackverify audit TRACKS --out DIR           the audit (trackverify audit -h)
    trackverify audit sample DIR --n N [--seed]  draw observations for a person to check
    trackverify audit estimate DIR [--target H]  the error rate from review.csv's decisions
    """


@audit.command(DEFAULT, cls=_DefaultCommand, hidden=True)
@click.argument("tracks", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@input_options
@click.option("--detections", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Every detection of each frame (recording, frame, detection, "
              "x_um, y_um[, z_um]): the positions of TRACKS rows that name their detection and "
              "have none (a row is the detection its 'detection' names, else the one at its "
              "position).")
@click.option("--detections-evidence", "detections_as_evidence", is_flag=True, default=False,
              help="Also give the registration every detection of --detections, labelled or "
                   "not, as identity-free evidence [off: on the real recording it flagged more "
                   "correct observations than wrong ones; docs/guide/audit.md].")
@jobs_options("Recordings (with several TRACKS files: files) audited at once.")
@click.option("--anchor-frame", type=click.IntRange(min=0), default=None,
              help="The frame a person checked (its identities are trusted) [each recording's first].")
@click.option("--verifier", default=None,
              help="Verifier name or module:Class [the calibration's, else registered_distance].")
@click.option("--calibration", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="calibration.json from `trackverify run --calibrate`: its "
              "threshold and stated guarantee apply.")
@click.option("--threshold-um", type=float, default=None,
              help="Acceptance threshold in um for every identity (uncalibrated) [per identity: "
                   "0.5 x its anchor-frame distance to its nearest other identity].")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder (created if needed; files are replaced atomically).")
def audit_tracks(tracks, detections, anchor_frame, verifier, calibration, threshold_um, out,
                 jobs, executor, **options):
    """Audit a tracker's output with no reference tracks: which identities can be trusted.

    TRACKS holds recording, frame, pred_id (blank: no identity), positions x_um, y_um[,
    z_um] and/or detection (positions then from --detections)[, pred_valid] (recording is
    optional for one recording), or is any tracker file the readers take (the names
    --format takes; docs/reference/formats.md); audit.json's input block says how it was read. Writes
    events.csv (the review list: each mistake once), audit.parquet (every observation's
    verdict), segments.csv (every suspect run), tracks.csv, joins.csv, audit.json and
    report.html to --out; several TRACKS files: each into --out/<name>/ and a list of them in
    --out/audits.csv. Then `trackverify review DIR` or `trackverify audit sample DIR --n N`
    draws observations to check, and `trackverify audit estimate DIR` gives the error rate
    (docs/guide/error-rate.md).
    """
    from trackverify.audit.core import audit as run_audit
    from trackverify.audit.write import one_line, write_outputs
    from trackverify.io.paths import check_out_dir
    from trackverify.progress import progress_bar

    settings = dict(anchor_frame=anchor_frame, verifier=verifier, threshold_um=threshold_um,
                    calibration=calibration, jobs=jobs, executor=executor, **options)
    with progress_bar() as bar:
        task = bar.add_task("auditing", total=None)

        def report(what: str, done: int, total: int) -> None:  # files or recordings, frames
            bar.update(task, description=f"auditing {what}", completed=done, total=total)

        if len(tracks) > 1:
            from trackverify.audit.batch import audit_files

            table = audit_files(list(tracks), out, detections=detections, progress=report,
                                **settings)
            click.echo(f"audited {len(table)} files: {int(table['audited'].sum())} observations, "
                       f"{int(table['flagged'].sum())} flagged, {int(table['events'].sum())} "
                       f"events; wrote {out}/audits.csv and a folder per file")
            return
        check_out_dir(out, [tracks[0], detections, calibration])
        result = run_audit(tracks[0], detections, progress=report,
                           warn=lambda text: echo_warnings([text]), **settings)
    write_outputs(result, out)  # --out checked above, before any work
    click.echo(f"{one_line(result)}; wrote {out}")


@audit.command("sample")
@click.argument("audit_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), required=True,
              help="Observations to review (strata: recording x verdict; docs/guide/error-rate.md).")
@click.option("--seed", type=SEED, default=None,
              help="Seed of the draw (numpy PCG64) [20261205].")
def sample(audit_dir, n, seed):
    """Draw audited observations for a person to check: AUDIT_DIR/review.csv, sample.json.

    Fill review.csv's decision column with correct, wrong or unsure in any tool or in the
    local review page (`trackverify review AUDIT_DIR`), in the order of its rows (stop when
    the interval is narrow enough), then run `trackverify audit estimate AUDIT_DIR`. review.csv does not show the stratum (sample.json holds it). A
    review.csv holding decisions is never replaced.
    """
    from trackverify.review.design import DEFAULT_SEED, draw_sample

    review, design = draw_sample(audit_dir, n, DEFAULT_SEED if seed is None else seed)
    strata = ", ".join(f"{s['stratum']} {s['n']} of {s['N']}" for s in design["strata"])
    click.echo(f"sampled {n} observations ({strata}); decide the rows of {review} in order")


@audit.command("estimate")
@click.argument("audit_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--target", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=None, help="Half-width to reach (0.03: 3 points): says whether the "
              "interval of all and certified observations is that narrow yet.")
def estimate(audit_dir, target):
    """The error rate of the audited observations from AUDIT_DIR/review.csv, whole or
    stopped early.

    The rows are decided in order; the 95 % intervals are anytime-valid (they hold wherever
    the review stops), and a complete review also gives the fixed-N Korn-Graubard interval.
    Writes AUDIT_DIR/estimate.json (all and certified observations, a one-sided 95 % upper
    bound for certified, per recording), prints it and adds it to AUDIT_DIR/report.html.
    """
    from trackverify.review.estimate import estimate_error_rate, summary_lines

    click.echo("\n".join(summary_lines(estimate_error_rate(audit_dir, target))))
