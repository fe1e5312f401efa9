"""The command-line options every command that reads tracking files shares (light: click only).

``--format``, ``--columns`` and ``--pixel-size`` reach :func:`trackverify.io.formats.load`;
warnings about units go to stderr (and, by the commands, into their reports).
"""

from __future__ import annotations

import click

FORMAT_NAMES = ("trackmate", "ctc", "geff", "btrack", "napari", "zephir", "mot", "table")
FORMAT_HELP = ("Input format, one of " + ", ".join(FORMAT_NAMES) +
               " [detected from the extension and content; see docs/formats.md].")
COLUMNS_HELP = ("Rename a CSV / Parquet table's columns to the project's names, "
                "PROJECT=FILE pairs, e.g. frame=t,pred_id=id,x_um=x,y_um=y.")
PIXEL_HELP = ("um per pixel (or voxel) X[,Y[,Z]] for inputs whose file has no calibration "
              "(CTC, btrack, napari, ZephIR, MOT, pixel TrackMate/GEFF, mapped tables).")


def input_options(command=None, *, prefix: str = ""):
    """``--format``, ``--columns``, ``--pixel-size`` (with ``prefix``: ``--reference-format`` ...)."""
    def decorate(command):
        dash = f"--{prefix}-" if prefix else "--"
        key = f"{prefix}_" if prefix else ""
        options = [
            click.option(f"{dash}format", f"{key}fmt", metavar="NAME", default=None,
                         help=FORMAT_HELP if not prefix else f"Format of --{prefix} only."),
        ]
        if not prefix:
            options += [
                click.option("--columns", default=None, metavar="PROJECT=FILE,...", help=COLUMNS_HELP),
                click.option("--pixel-size", default=None, metavar="X[,Y[,Z]]", help=PIXEL_HELP),
            ]
        for option in reversed(options):
            command = option(command)
        return command
    return decorate(command) if command is not None else decorate


def echo_warnings(warnings: list[str]) -> None:
    for text in warnings:
        click.echo(f"trackverify: warning: {text}", err=True)
