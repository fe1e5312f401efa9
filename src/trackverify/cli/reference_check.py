"""``trackverify check-reference``: the command; the work is :func:`check_reference`."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import echo_warnings, input_options
from trackverify.errors import naming_argument


@click.command("check-reference")
@click.argument("tracks", type=click.Path(exists=True, path_type=Path))
@input_options
@click.option("--detections", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Every detection of each frame (recording, frame, x_um, "
              "y_um[, z_um]), labelled or not: where an unlabelled neuron may be.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder (created if needed; files are replaced atomically).")
@naming_argument("tracks")  # a refusal about a recording names TRACKS
def check_reference_command(tracks, detections, out, **options):
    """Find likely label errors in reference tracks, from the tracks alone.

    TRACKS holds recording, frame, track, x_um, y_um[, z_um][, detection], or is any tracker
    file the readers take. Writes reference_issues.csv (ranked findings), check.json and
    report.html to --out (docs/guide/reference-check.md).
    """
    from trackverify.io.paths import check_out_dir
    from trackverify.io.tracks import read_detections, read_tracks
    from trackverify.reference_check.core import check_reference
    from trackverify.reference_check.write import write_outputs

    check_out_dir(out, [tracks, detections])
    loaded = read_tracks(tracks, "reference", **options)
    echo_warnings(loaded.warnings)
    dets = None if detections is None else read_detections(detections, loaded.table)
    result = check_reference(loaded.table, dets)
    write_outputs(result, loaded.table, dets, out,
                  {"tracks": loaded.record, "detections": None if detections is None else str(detections)})
    s = result.summary()
    click.echo(f"{s['findings']} findings on {s['rows_questioned']} of {s['rows']} rows; wrote {out}")
