"""``trackverify volume``: the command; the work is :func:`trackverify.io.volumes.open_volume`
and :func:`~trackverify.io.volumes.check_alignment`."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import echo_warnings, input_options, volume_options


@click.command("volume")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@volume_options
@click.option("--tracks", type=click.Path(exists=True, path_type=Path), default=None,
              help="Tracks or detections (any format the readers take) to check against the "
                   "image: do they sit on bright blobs?")
@click.option("--frame", type=int, default=None,
              help="The frame checked [the tracks' first frame, the anchor].")
@input_options
def volume(source, dataset, axes, voxel_um, channel, first_frame, tracks, frame, **options):
    """Read a lab's raw volume and say how it is read: axes, voxel size, channel, frames.

    SOURCE: a TIFF file (ImageJ hyperstack, OME-TIFF, multi-page), a folder of TIFF files (one
    a frame), a zarr array or OME-Zarr image, an HDF5 file (--dataset) or an NWB file. With
    --tracks, checks that the tracks' micrometres land on bright blobs of the image in
    --frame; exit 1 when they do not, with what is suspected (docs/guide/volumes.md).
    """
    from trackverify.errors import InputError
    from trackverify.io.tracks import read_tracks
    from trackverify.io.volumes import check_alignment, open_volume

    with open_volume(source, axes=axes, channel=channel, voxel_um=voxel_um, dataset=dataset,
                     frames=first_frame) as opened:
        info = opened.describe()
        shape = " x ".join(f"{n} {a}" for a, n in info["shape"].items())
        click.echo(f"{source}: {shape} ({info['dtype']}, axes {info['axes']} from "
                   f"{info['found']['axes']})")
        click.echo("voxel size: " + ", ".join(
            f"{a} {info['voxel_um'][a]:.4g} um ({info['found'].get(f'voxel_{a}', '-')})"
            for a in "xyz" if a in info["axes"]))
        if info["channel"] is not None:
            click.echo(f"channel: {info['channel']} of {info['shape']['c']}")
        click.echo(f"frames: {info['frames'][0]}..{info['frames'][1]}")
        if tracks is None:
            return
        loaded = read_tracks(tracks, "predictions", **options)
        echo_warnings(loaded.warnings)
        table = loaded.table
        if table["recording"].nunique() > 1:
            raise InputError(f"holds {table['recording'].nunique()} recordings; a volume is one "
                             "recording: give the tracks of one", source=str(tracks))
        checked = check_alignment(opened, table, int(table["frame"].min())
                                  if frame is None else frame)
    click.echo(checked.sentence)
    if not checked.aligned:
        raise SystemExit(1)
