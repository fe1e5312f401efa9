"""``trackverify split`` and ``trackverify convert`` (docs/reference/hygiene.md).

Kept apart from :mod:`trackverify.benchmark.partitions` and :mod:`trackverify.io.nwb` so that
registering them costs the command line no pandas or pynwb import; the work is imported
when a command runs.
"""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import SEED, input_options

SPLIT_BY = ("animal", "provenance_group")  # trackverify.benchmark.partitions.SPLIT_BY
DEFAULT_SEED = 20261007  # trackverify.benchmark.partitions.DEFAULT_SEED


@click.command()
@click.option("--recordings", "recordings_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Recording table (recording, animal_id, provenance_group[, source_folds]).")
@click.option("--by", type=click.Choice(SPLIT_BY), default="animal", show_default=True,
              help="Split unit: each animal, or each whole provenance group.")
@click.option("--fractions", default=None,
              help="Fractions of units per partition, e.g. train=0.5,calibration=0.2,test=0.3 "
                   "[default: everything development].")
@click.option("--same-animal-candidates", "pairs_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="CSV of recording_a, recording_b that may be the same animal (quarantined).")
@click.option("--seed", type=SEED, default=DEFAULT_SEED, show_default=True,
              help="Seed of the shuffle of units.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Partitions file (JSON). An existing different file is never replaced.")
def split(recordings_path, by, fractions, pairs_path, seed, out):
    """Split recordings into frozen partitions by animal or provenance group.

    Every recording of an animal (or group) lands in the same partition; recordings that
    may be the same animal are quarantined and listed. The file records its own SHA-256
    and is refused by every reader once edited.
    """
    from trackverify.io.paths import check_out_file
    from trackverify.io.tabular import read_table
    from trackverify.benchmark.partitions import PARTITION_NAMES, make_partitions, write_partitions

    check_out_file(out, [recordings_path, pairs_path])
    pairs = read_table(pairs_path) if pairs_path is not None else None
    result = make_partitions(read_table(recordings_path), by=by, fractions=fractions,
                             same_animal_candidates=pairs, seed=seed,
                             source=str(recordings_path), candidates_source=str(pairs_path))
    write_partitions(result, out)
    summary = result.summary()
    counts = ", ".join(f"{name} {summary[name]['recordings']}" for name in PARTITION_NAMES)
    click.echo(f"wrote {out}: {counts}, quarantined {summary['quarantined']} "
               f"(sha256 {result.sha256[:12]})")


@click.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@input_options
@click.option("--to", "to", type=click.Choice(["parquet", "nwb"]), required=True,
              help="Target format.")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="parquet: folder for observations.parquet and recordings.csv; nwb: a .nwb "
                   "file (one recording) or a folder of <recording>.nwb.")
@click.option("--layout", type=click.Choice(["rois", "labels"]), default="rois",
              show_default=True, help="NWB layout to write: per-frame ROIs or a label volume.")
@click.option("--voxel-um", type=float, default=None,
              help="Voxel spacing the NWB writer records [0.001 for rois, 1 for labels].")
def convert(source, fmt, columns, pixel_size, units, recording, to, out, layout, voxel_um):
    """Convert tracker files, NWB and observation tables (Parquet / NWB).

    SOURCE is an NWB file, a folder of NWB files, a folder with observations.parquet (and
    recordings.csv), an observation table, or a tracker's file (TrackMate, CTC, GEFF,
    btrack, napari, ZephIR, MOT; docs/reference/formats.md): its tracks become the observation
    table's reference tracks and clean predictions.
    """
    from trackverify.benchmark.convert import convert as run_convert
    from trackverify.io.paths import check_out_dir, check_out_file

    if to == "nwb" and out.suffix.lower() == ".nwb":
        check_out_file(out, [source])
    else:
        check_out_dir(out, [source])
    written = run_convert(source, to, out, layout=layout, voxel_um=voxel_um, fmt=fmt,
                          columns=columns, pixel_size=pixel_size, units=units,
                          recording=recording)
    click.echo(f"wrote {len(written)} file(s) to {out}")
