"""The command-line options several commands share (light: click only).

``--format``, ``--columns``, ``--pixel-size``, ``--units`` and ``--recording`` (every
command that reads tracking files) reach the one reader of tracks,
:func:`trackverify.io.tracks.read_tracks`; warnings about units go to stderr (and, by the
commands, into their reports). ``--start`` / ``--recovery-end`` are those of ``run``,
``verify`` and ``evidence``.
"""

from __future__ import annotations

import click

from trackverify.values import INT64_MAX

from trackverify.io.formats import FORMATS  # the registry only: no reader is imported

#: Every ``--seed`` outside ``run`` / ``verify`` (whose seed RunConfig checks): numpy takes
#: seeds >= 0, and a seed is recorded as int64.
SEED = click.IntRange(min=0, max=INT64_MAX)

FORMAT_NAMES = tuple(FORMATS)
FORMAT_HELP = ("Input format, one of " + ", ".join(FORMAT_NAMES) +
               " [detected from the extension and content; see docs/reference/formats.md].")
COLUMNS_HELP = ("Rename a CSV / Parquet table's columns to the project's names, "
                "PROJECT=FILE pairs, e.g. frame=t,pred_id=id,x_um=x,y_um=y.")
PIXEL_HELP = ("um per pixel (or voxel) X[,Y[,Z]] for inputs whose file has no calibration "
              "(CTC, btrack, napari, trackpy, laptrack, ultrack, ZephIR, MOT, pixel TrackMate/GEFF, "
              "mapped tables).")
UNITS_HELP = ("um: the coordinates --columns maps from names without a unit are micrometres "
              "(else give --pixel-size; docs/guide/formats.md).")
RECORDING_HELP = "Name of the one recording of a table without a 'recording' column [recording]."
#: The keyword names :func:`input_options` gives (with a prefix: ``reference_fmt`` ...).
READING = ("fmt", "columns", "pixel_size", "units", "recording")


def input_options(command=None, *, prefix: str = ""):
    """``--format``, ``--columns``, ``--pixel-size``, ``--units``, ``--recording`` as
    :data:`READING` (``fmt``, ``columns``, ...); with ``prefix`` (``--reference-format`` ...) as
    ``reference_fmt`` ..., for one input only."""
    def decorate(command):
        dash = f"--{prefix}-" if prefix else "--"
        key = f"{prefix}_" if prefix else ""
        options = [
            click.option(f"{dash}format", f"{key}fmt", metavar="NAME", default=None,
                         help=f"Format of --{prefix} only." if prefix else FORMAT_HELP),
            click.option(f"{dash}columns", f"{key}columns", default=None, metavar="PROJECT=FILE,...",
                         help=f"--columns for --{prefix} only." if prefix else COLUMNS_HELP),
            click.option(f"{dash}pixel-size", f"{key}pixel_size", default=None, metavar="X[,Y[,Z]]",
                         help=f"--pixel-size for --{prefix} only." if prefix else PIXEL_HELP),
            click.option(f"{dash}units", f"{key}units", type=click.Choice(["um"]), default=None,
                         help=f"--units for --{prefix} only." if prefix else UNITS_HELP),
            click.option(f"{dash}recording", f"{key}recording", default=None, metavar="NAME",
                         help=f"--recording for --{prefix} only." if prefix else RECORDING_HELP),
        ]
        for option in reversed(options):
            command = option(command)
        return command
    return decorate(command) if command is not None else decorate


def jobs_options(what: str = "Recordings processed in parallel."):
    """``--jobs`` (1 to :data:`trackverify.execute.MAX_JOBS`) and ``--executor`` (``local``,
    ``process``, ``ray``) as ``jobs`` and ``executor``; ``what`` is ``--jobs``' help."""
    from trackverify.execute import EXECUTORS, MAX_JOBS

    def decorate(command):
        for option in reversed((
                click.option("--jobs", type=click.IntRange(min=1, max=MAX_JOBS), default=1,
                             show_default=True, help=what),
                click.option("--executor", type=click.Choice(EXECUTORS), default="process",
                             show_default=True,
                             help="Where parallel work runs (ray needs the 'ray' extra)."))):
            command = option(command)
        return command
    return decorate


def window_options(start: str = "300", recovery_end: str = "700"):
    """``--start`` and ``--recovery-end`` (the corruption window; checked with the other run
    settings by :func:`trackverify.benchmark.config.build_config`), as ``start`` and ``recovery_end``;
    ``start`` / ``recovery_end`` say what the command uses when they are not given."""
    def decorate(command):
        for option in reversed((
                click.option("--start", type=int, default=None,
                             help=f"First corrupted frame, counted from each recording's first "
                                  f"[{start}]."),
                click.option("--recovery-end", type=int, default=None,
                             help="End (exclusive) of the recovery and nearby swaps, counted "
                                  f"likewise [{recovery_end}]."))):
            command = option(command)
        return command
    return decorate


def echo_warnings(warnings: list[str]) -> None:
    for text in warnings:
        click.echo(f"trackverify: warning: {text}", err=True)
