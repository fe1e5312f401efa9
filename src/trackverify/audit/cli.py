"""``trackverify audit``: the command; the work is :func:`trackverify.audit.audit`."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli_inputs import echo_warnings, input_options


@click.command()
@click.argument("tracks", type=click.Path(exists=True, path_type=Path))
@input_options
@click.option("--detections", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Every detection of each frame (recording, frame, detection, "
              "x_um, y_um[, z_um]): identity-free evidence for the registration.")
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
def audit(tracks, detections, anchor_frame, verifier, calibration, threshold_um, out, **options):
    """Audit a tracker's output with no reference tracks: which identities can be trusted.

    TRACKS holds recording, frame, pred_id, x_um, y_um[, z_um][, detection][, pred_valid]
    (recording is optional for one recording), or is any tracker file the readers take
    (the names --format takes; docs/formats.md). Writes audit.parquet, segments.csv (the
    ranked review list), tracks.csv, audit.json and report.html to --out.
    """
    from trackverify.audit.core import audit as run_audit
    from trackverify.audit.write import one_line, write_outputs
    from trackverify.io.formats import load
    from trackverify.io.paths import check_out_dir
    from trackverify.io.tabular import read_table
    from trackverify.progress import progress_bar

    check_out_dir(out, [tracks, detections, calibration])
    loaded = load(tracks, "predictions", **options)
    echo_warnings(loaded.warnings)
    table = loaded.table
    dets = None if detections is None else read_table(detections)
    with progress_bar() as bar:
        task = bar.add_task("auditing", total=None)

        def report(what: str, done: int, total: int) -> None:  # recordings, then frames
            bar.update(task, description=f"auditing {what}", completed=done, total=total)

        result = run_audit(table, dets, anchor_frame=anchor_frame, verifier=verifier,
                           threshold_um=threshold_um, calibration=calibration,
                           source=str(tracks), detections_source=str(detections),
                           progress=report)
    write_outputs(result, out)  # --out checked above, before any work
    click.echo(f"{one_line(result)}; wrote {out}")
