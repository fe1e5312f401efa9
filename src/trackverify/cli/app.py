"""The ``trackverify`` command line.

Every command validates its inputs at the edge. Bad input prints one line naming the
file, column and row and exits with status 2 (never a traceback); outputs are written
atomically; inputs are never modified.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from pathlib import Path

import click

from trackverify import __version__, stop
from trackverify.cli.options import SEED, echo_warnings, input_options, jobs_options, window_options
from trackverify.errors import TrackverifyError, one_line
from trackverify.io.atomic import remove_pending
from trackverify.cli.evidence import LEVELS as MOTION_LEVELS


DEBUG_VARIABLE = "TRACKVERIFY_DEBUG"


def describe_invocation(argv: list[str]) -> str:
    """``trackverify <command words>`` and the paths among the arguments (for the net)."""
    words, group = [], cli
    args = [str(a) for a in argv]
    while args and isinstance(group, click.Group) and args[0] in group.commands:
        group = group.commands[args[0]]
        words.append(args.pop(0))
    inputs = [a for a in args if not a.startswith("-") and os.path.exists(a)]
    where = f" on {', '.join(inputs)}" if inputs else ""
    return f"trackverify {' '.join(words)}".rstrip() + where


def click_problem(exc: click.exceptions.ClickException) -> str:
    """A click error (a bad option value, a missing argument) as one line: click's message
    (naming the option) and, for a usage error, where the command's help is
    (``Try 'trackverify run --help' for help.``), with long numbers cut (``--draws
    999...(401 digits)``)."""
    problem = one_line(exc.format_message())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.exceptions.UsageError) and ctx is not None:
        names = ctx.command.get_help_option_names(ctx)
        if names:
            problem += f" Try '{ctx.command_path} {max(names, key=len)}' for help."
    return problem


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the click group, map errors to exit codes.

    Any exception that is not a :class:`TrackverifyError` is a bug, but a user still gets
    one line and exit 2 naming the command and its input paths; ``TRACKVERIFY_DEBUG=1``
    shows the traceback instead (for developers).
    """
    signal.signal(signal.SIGTERM, stop.on_sigterm)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        stop.raise_if_requested()  # one that arrived during start-up
        code = cli.main(args=argv, prog_name="trackverify", standalone_mode=False)
        stop.raise_if_requested()  # one whose exception a library swallowed
    except TrackverifyError as exc:  # one line, even when a library's message it quotes has several
        click.echo(f"trackverify: error: {one_line(str(exc))}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("trackverify: aborted", err=True)
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as exc:  # a group without a command: its help
        exc.show()
        sys.exit(2)
    except click.exceptions.ClickException as exc:  # one line too, not click's usage block
        click.echo(f"trackverify: error: {click_problem(exc)}", err=True)
        sys.exit(2)
    except stop.Terminated:
        remove_pending()
        click.echo("trackverify: terminated; no partial output was left", err=True)
        sys.exit(143)
    except KeyboardInterrupt:
        remove_pending()
        click.echo("trackverify: interrupted; no partial output was left", err=True)
        sys.exit(130)
    except Exception as exc:  # the net: every known cause is fixed where it arises
        if os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"):
            raise
        problem = one_line(str(exc)) or "no message"
        click.echo(f"trackverify: error: {describe_invocation(argv)}: unexpected "
                   f"{type(exc).__name__}: {problem} (a defect of trackverify; rerun with "
                   f"{DEBUG_VARIABLE}=1 for the traceback)", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


# Command families that live in their own modules: name -> (module, attribute, short help).
# A module is imported only when its command runs or prints its help, so `trackverify -h`
# imports no numpy / scipy / pandas (tests/test_cli_imports.py checks the help texts match).
FAMILIES = {
    "evaluate": ("trackverify.cli.evaluate", "evaluate",
                 "Score predictions against reference tracks (protocol tracking_gt)."),
    "stage": ("trackverify.cli.stages", "stage",
              "Score one stage of the fly behaviour pipeline against its reference."),
    "split": ("trackverify.cli.hygiene", "split",
              "Split recordings into frozen partitions by animal or provenance group."),
    "convert": ("trackverify.cli.hygiene", "convert",
                "Convert tracker files, NWB and observation tables (Parquet / NWB)."),
    "andi": ("trackverify.cli.andi", "andi",
             "AnDi 2 anomalous-diffusion challenge scoring (andi-datasets 2.1.13 numbers)."),
    "conversion": ("trackverify.cli.conversion", "conversion",
                   "Verify a dataset converted into the common decoding format (converted_data.pkl)."),
    "evidence": ("trackverify.cli.evidence", "evidence",
                 "Score fixed_distance and registered_distance side by side (specimen and real pairs)."),
    "audit": ("trackverify.cli.audit", "audit",
              "Audit a tracker's output with no reference tracks: which identities can be trusted."),
    "check-reference": ("trackverify.cli.reference_check", "check_reference_command",
                        "Find likely label errors in reference tracks, from the tracks alone."),
    "volume": ("trackverify.cli.volume", "volume",
               "Read a lab's raw volume and say how it is read: axes, voxel size, channel, "
               "frames."),
    "review": ("trackverify.cli.review", "review",
               "Check the observations sampled in AUDIT_DIR/review.csv, one at a time, in a local "
               "page."),
}


class LazyGroup(click.Group):
    """A click group whose FAMILIES commands are imported on first use."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *FAMILIES})

    def get_command(self, ctx, name):
        if name in FAMILIES and name not in self.commands:
            module, attribute, _ = FAMILIES[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        rows = []
        for name in self.list_commands(ctx):
            if name in FAMILIES and name not in self.commands:
                limit = formatter.width - 6 - len(name)
                # the same short help click gives a loaded command, without importing it
                rows.append((name, click.Command(name, help=FAMILIES[name][2]).get_short_help_str(limit)))
            else:
                command = self.commands[name]
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="trackverify")
def cli() -> None:
    """Can these tracking results be trusted?

    trackverify audits a tracker's output without reference tracks, scores a tracker's
    identities against reference tracks, and benchmarks verifiers by corrupting clean
    predictions in known ways.

    \b
    Start here:
      trackverify audit TRACKS --out DIR  audit your tracker's output (no reference needed)
      trackverify audit sample DIR --n N  draw observations to check by hand
      trackverify review DIR              check them in a local page (or in any tool); then
      trackverify audit estimate DIR      the error rate with 95 % intervals
      trackverify check-reference -h      check hand-made reference tracks for label errors
      trackverify evaluate -h             score predictions against reference tracks
      trackverify run                     the whole benchmark on the built-in specimen
      trackverify synth --out DIR         write a synthetic specimen to DIR

    Every command prints its own help with -h. Bad input exits with status 2.
    """


OUT_HELP = "Output folder (created if needed; files are replaced atomically)."


def _parse_conditions(ctx, param, value):
    if value is None:
        return None
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    if not names:
        raise click.BadParameter("give at least one condition, e.g. control", param_hint="--conditions")
    return names


def run_settings(command):
    """The run settings shared by `run` and `verify` (each overrides the config file)."""
    options = [
        click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help="TOML file of run settings ([run] and [specimen] tables)."),
        click.option("--seed", type=int, default=None, help="Corruption seed [20261007]."),
        click.option("--threshold-um", type=float, default=None,
                     help="Verifier acceptance threshold in um [5; a demonstration value]."),
        click.option("--zero-distance-um", type=float, default=None,
                     help="Distance at which canonical-metric similarity reaches 0 [5]."),
        click.option("--verifier", default=None,
                     help="Verifier name or module:Class [fixed_distance]."),
        click.option("--conditions", default=None, callback=_parse_conditions,
                     metavar="NAME,...", help="Conditions to run, comma-separated [the seven "
                     "of SPEC section 4; 'control' alone fits any recording length]."),
        click.option("--repeats", type=int, default=None,
                     help="Draws of the corruption suite (seeds seed, seed+1, ...) [1]; at most "
                          "50 (about 0.35 s of CPU each on a 40-frame recording of 189 neurons)."),
    ]
    for option in reversed(options[2:]):
        command = option(command)
    command = window_options()(command)  # after --seed, as before
    for option in reversed(options[:2]):
        command = option(command)
    return command


@cli.command()
@click.option("--animals", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of animals (one recording each).")
@click.option("--groups", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of provenance groups (labs); animals are dealt to them in turn.")
@click.option("--frames", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Frames per recording.")
@click.option("--motion", type=click.Choice(MOTION_LEVELS),
              default="moderate", show_default=True,
              help="Motion level, defined by displacement from frame 0 (see docs).")
@click.option("--neurons", type=click.IntRange(min=2, max=189), default=189, show_default=True,
              help="Head-ganglion neurons per animal (most anterior first).")
@click.option("--seed", type=SEED, default=20261007, show_default=True, help="Random seed.")
@click.option("--volume", type=click.Choice(["tiff", "zarr", "hdf5", "nwb"]), default=None,
              help="Also render the first animal as a microscope volume (each neuron a blob; "
                   "0.3 x 0.3 x 1.5 um voxels; at most 20 frames) written in this format as "
                   "volume.*, with its positions in volume_tracks.parquet.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for observations.parquet, recordings.csv and provenance.json.")
def synth(animals, groups, frames, motion, neurons, seed, volume, out):
    """Write a synthetic development specimen (reference tracks, detections, clean predictions).

    The anatomy is the 189 head-ganglion neurons of the OpenWorm/c302 model, with
    per-animal jitter and a minimum spacing; over time the animal drifts, rotates, bends
    and compresses, and each neuron jitters and is localised with noise.
    """
    from trackverify.io.paths import check_out_dir
    from trackverify.synth.write import write_specimen
    from trackverify.synth.specimen import SpecimenConfig

    check_out_dir(out, [])

    config = SpecimenConfig(animals=animals, groups=groups, frames=frames, motion=motion,
                            neurons=neurons, seed=seed)
    rows = write_specimen(config, out)
    click.echo(f"wrote {rows} observations of {animals} animal(s) to {out}")
    if volume is not None:
        from trackverify.synth.volume import write_specimen_volume

        image, tracks = write_specimen_volume(config, out, volume)
        click.echo(f"wrote {image} and its positions {tracks}")


@cli.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), default=None,
              help="Observation table (CSV/Parquet), a folder with observations.parquet "
                   "and recordings.csv, or a tracker's file (any format --format names; "
                   "docs/reference/formats.md). Without it, the built-in specimen.")
@input_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("trackverify-results"), show_default=True, help=OUT_HELP)
@run_settings
@click.option("--motion", type=click.Choice(MOTION_LEVELS), default=None,
              help="Motion level of the built-in specimen [moderate].")
@click.option("--frames", type=click.IntRange(min=1), default=None,
              help="Frames of the built-in specimen [1000].")
@click.option("--animals", type=click.IntRange(min=1), default=None,
              help="Animals of the built-in specimen [1].")
@click.option("--partitions", "partitions_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Frozen partitions.json (trackverify split). Evaluates the test "
              "partition; without it every recording is development data.")
@click.option("--calibrate", default=None,
              metavar="target_false_certification_rate=A[,delta=D][,method=crc|ltt]",
              help="Fit the verifier threshold on train/calibration animals so that at most a "
                   "share A of a new animal's wrong identities is certified (crc: in expectation; "
                   "ltt: with probability 1-D), then report the test partition and write "
                   "calibration.json. target_selective_risk=R is kept (no guarantee). "
                   "See docs/reference/certification.md.")
@click.option("--fit-ambiguity-k", "fit_ambiguity_k", is_flag=True, default=None,
              help="With --calibrate: also fit registered_distance's ambiguity band k (median "
                   "clean d/sigma of the fit recordings) instead of keeping ambiguity_k.")
@click.option("--check-reference", "check_reference", is_flag=True, default=None,
              help="Check the reference for likely label errors and give every condition's "
                   "verification metrics also on the rows the check does not question "
                   "(docs/guide/reference-check.md).")
@jobs_options()
@click.option("--rows/--no-rows", default=True, show_default=True,
              help="Write observations.parquet (every scored row).")
def run(data, fmt, columns, pixel_size, units, recording, out, config_file, motion, frames,
        animals, partitions_path, calibrate, jobs, executor, rows, **settings):
    """Run the benchmark: tracking_gt, anatomical_verification, anatomical_consistency.

    Writes results.json, manifest.json, report.html, tracks.csv, events.csv and
    observations.parquet to --out.
    Same inputs and seed give a byte-identical results.json.
    """
    from trackverify.benchmark.certify import parse_target
    from trackverify.benchmark.config import build_config
    from trackverify.benchmark.run import Execution, run_job

    config = build_config({**settings, "specimen.motion": motion, "specimen.frames": frames,
                           "specimen.animals": animals}, config_file=config_file)
    summary = run_job(config, out, data=data, partitions_path=partitions_path,
                      target=parse_target(calibrate),
                      execution=Execution(jobs=jobs, executor=executor, write_rows=rows),
                      data_options={"fmt": fmt, "columns": columns, "pixel_size": pixel_size,
                                    "units": units, "recording": recording},
                      on_warnings=echo_warnings, other_inputs=(config_file,))
    click.echo(summary)


@cli.command()
@click.option("--observations", type=click.Path(exists=True, path_type=Path),
              required=True, help="Observation table with clean predictions (CSV/Parquet): "
              "recording, frame, track, detection, x_um, y_um[, z_um], pred_id, pred_valid; "
              "or a tracker's file (docs/reference/formats.md).")
@input_options
@run_settings
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help=OUT_HELP)
def verify(observations, fmt, columns, pixel_size, units, recording, out, config_file,
           **settings):
    """Corrupt clean predictions, run a verifier on every condition and score it.

    The same job as `run --data FILE`: the corruption suite, the verifier's certification
    metrics per condition, the consistency diagnostic, and tracking_gt on the clean input.
    """
    from trackverify.benchmark.config import build_config
    from trackverify.benchmark.run import run_job

    config = build_config(settings, config_file=config_file)
    click.echo(run_job(config, out, data=observations, on_warnings=echo_warnings,
                       data_options={"fmt": fmt, "columns": columns, "pixel_size": pixel_size,
                                     "units": units, "recording": recording},
                       other_inputs=(config_file,)))


if __name__ == "__main__":  # pragma: no cover
    main()
