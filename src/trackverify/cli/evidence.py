"""``trackverify evidence`` (light module: :mod:`trackverify.benchmark.evidence` is imported when the
command runs, so ``evidence -h`` stays fast)."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import window_options

#: trackverify.synth.motion.MOTION_LEVELS, by name (a test keeps the two equal).
LEVELS = ("still", "moderate", "free", "fast", "freely_moving")
#: trackverify.verifiers.registered_distance.SCORES (a test keeps the two equal).
SCORES = ("relative", "distance")
#: trackverify.benchmark.config.MAX_REPEATS, the most draws of the suite (a test keeps the two equal).
MAX_DRAWS = 50


def _data_folder(path: Path) -> Path:
    """``--recordings`` takes folders only: a file given is refused naming its folder."""
    if path.is_file():
        raise click.BadParameter(
            f"'{path}' is a file; --recordings takes a data folder holding "
            f"observations.parquet [+ detections.parquet] (the folder of this file: "
            f"'{path.parent}')", param_hint="'--recordings'")
    return path


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for evidence.json and evidence.html (created if missing).")
@click.option("--levels", default=",".join(LEVELS), show_default=True,
              help="Motion levels of the development specimen, comma-separated ('' = none).")
@click.option("--frames", type=click.IntRange(min=20), default=1000, show_default=True,
              help="Frames of the development specimen.")
@click.option("--pairs", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Folder of example folders, each with pts_gt.npy and pts_tar.npy.")
@click.option("--grid", type=click.Choice(["full", "default"]), default="full", show_default=True,
              help="Leave-one-out candidates for the pairs: the 324-setting grid, or the "
                   "verifier's defaults only.")
@click.option("--recordings", type=click.Path(exists=True, path_type=Path), multiple=True,
              callback=lambda ctx, param, paths: tuple(map(_data_folder, paths)),
              help="Data folder of real recordings: a folder (not a file) holding "
              "observations.parquet [+ detections.parquet]; repeatable.")
@click.option("--draws", type=click.IntRange(min=1, max=MAX_DRAWS), default=8, show_default=True,
              help=f"Draws of the corruption suite on each real recording (at most {MAX_DRAWS}: "
                   "a draw takes about 0.35 s of CPU on a 40-frame recording of 189 neurons).")
@window_options("300; 30 % of the frame numbers of a recording too short for 300 / 700, see "
                "docs/reference/verifiers.md", "700; 70 % likewise")
@click.option("--score", type=click.Choice(SCORES), default=None,
              help="registered_distance's score (docs/reference/verifiers.md) [its default].")
@click.option("--track-window", "track_window", type=click.IntRange(min=0), default=None,
              help="registered_distance's track pooling window h, 0 = off "
                   "(docs/reference/verifiers.md) [its default].")
@click.option("--merge-k", "merge_k", type=click.FloatRange(min=0, max=1e300), default=None,
              help="registered_distance's merged-anchor factor m: a row abstains where its "
                   "identity's registered anchor lies within m sigma of another's, 0 = off "
                   "(docs/reference/verifiers.md) [its default].")
def evidence(out, levels, frames, pairs, grid, recordings, draws, start, recovery_end, score,
             track_window, merge_k):
    """Score fixed_distance and registered_distance side by side (specimen and real pairs).

    On each --recordings folder the corruption window is --start / --recovery-end when given;
    otherwise SPEC's 300 / 700 where a recording is long enough, else 30 % / 70 % of its
    frames (docs/reference/verifiers.md), its start moved on to the next frame with 2 observed tracks.
    """
    from trackverify.benchmark.config import build_config
    from trackverify.io.paths import check_out_dir

    build_config({"start": start, "recovery_end": recovery_end})  # run's bounds and messages
    check_out_dir(out, [pairs, *recordings])
    chosen = [level.strip() for level in levels.split(",") if level.strip()]
    unknown = sorted(set(chosen) - set(LEVELS))
    if unknown:
        raise click.BadParameter(f"unknown motion level(s) {unknown}; choose from {list(LEVELS)}",
                                 param_hint="--levels")
    from trackverify.benchmark.evidence import (DEFAULT_GRID, FULL_GRID, build_evidence, recording_summary,
                                      render_evidence, specimen_summary)
    from trackverify.io.atomic import ensure_folder, write_json_atomic, write_text_atomic

    result = build_evidence(chosen, frames, pairs, FULL_GRID if grid == "full" else DEFAULT_GRID,
                            recordings, draws, score, track_window, start, recovery_end,
                            merge_k)
    ensure_folder(out)
    write_json_atomic(out / "evidence.json", result)
    write_text_atomic(out / "evidence.html", render_evidence(result))
    for line in [*specimen_summary(result["specimen"]), *result["pair_summary"],
                 *recording_summary(result.get("recordings", []))]:
        click.echo(line)
    click.echo(str(out / "evidence.html"))
