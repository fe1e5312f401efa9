"""``trackverify evaluate``: the tracking_gt protocol on any supported files (light module:
the work is imported when the command runs, so ``-h`` stays fast)."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli_inputs import echo_warnings, input_options

COLUMNS = (("reference_observations", "obs"), ("correct_observation_rate", "correct"),
           ("identity_switches", "switches"), ("fragmentations", "frags"),
           ("extra_predicted_observations", "extra"), ("hota", "HOTA"), ("deta", "DetA"),
           ("assa", "AssA"), ("mota", "MOTA"), ("idf1", "IDF1"), ("idsw", "IDSW"))


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def load_pair(reference: Path, predictions: Path, options: dict):
    """Reference and predictions from any supported files, and every units warning.

    ``options`` holds ``fmt``, ``columns``, ``pixel_size`` (both files) and the same keys
    prefixed ``reference_`` / ``predictions_`` (one file; they take precedence)."""
    from trackverify.io.formats import load
    from trackverify.io.formats.units import scale_mismatch_warnings

    def read(path, kind, prefix):
        own = {k: options.get(f"{prefix}_{k}") or options.get(k)
               for k in ("fmt", "columns", "pixel_size")}
        return load(path, kind, **own)

    ref = read(reference, "reference", "reference")
    pred = read(predictions, "predictions", "predictions")
    warnings = ref.warnings + pred.warnings
    if {"x_um", "y_um"} <= set(pred.table.columns):
        warnings += scale_mismatch_warnings(ref.table, pred.table, str(reference), str(predictions))
    return ref, pred, warnings


@click.command("evaluate")
@click.option("--reference", required=True, type=click.Path(path_type=Path),
              help="Reference tracks: a table (recording, frame, track, x_um, y_um[, z_um]"
                   "[, detection]) or any supported tracker file (docs/formats.md).")
@click.option("--predictions", required=True, type=click.Path(path_type=Path),
              help="Predictions: a table (recording, frame, pred_id[, detection][, x_um, y_um"
                   "[, z_um]][, pred_valid]) or any supported tracker file.")
@input_options
@input_options(prefix="reference")
@input_options(prefix="predictions")
@click.option("--zero-distance-um", type=float, default=5.0, show_default=True,
              help="Distance at which the canonical-metric similarity reaches 0.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for results.json (written atomically). Without it, print only.")
def evaluate(reference, predictions, zero_distance_um, out, **options):
    """Score predictions against reference tracks (protocol tracking_gt).

    Prints the oracle-association diagnostics (SPEC section 3; not HOTA/IDF1) and, beside
    them, the canonical HOTA / MOTA / IDF1 (TrackEval definitions), per recording and
    pooled. With detection ids in both files, predictions are linked by detection;
    otherwise by position (similarity max(0, 1 - d / zero-distance), matched at >= 0.5).
    """
    from rich.console import Console
    from rich.table import Table

    from trackverify.io.atomic import write_json_atomic
    from trackverify.tracking_gt import evaluate_tracking

    ref, pred, warnings = load_pair(reference, predictions, options)
    echo_warnings(warnings)
    results = evaluate_tracking(ref.table, pred.table, zero_distance_um,
                                reference_source=str(reference), predictions_source=str(predictions))
    by_detection = "detection" in ref.table.columns and "detection" in pred.table.columns
    table = Table(title="tracking_gt: oracle diagnostics (SPEC 3) | canonical metrics (SPEC 7)")
    table.add_column("recording", no_wrap=True)
    for _, label in COLUMNS:
        table.add_column(label, justify="right", no_wrap=True)
    for recording, row in results.items():
        table.add_row(str(recording), *(_cell(row[key]) for key, _ in COLUMNS),
                      end_section=recording == list(results)[-2] if len(results) > 1 else False)
    console = Console()
    if not console.is_terminal:  # piped or captured: do not squeeze the table to 80 columns
        console = Console(width=max(console.width, 140))
    console.print(table)
    if out is not None:
        path = write_json_atomic(Path(out) / "results.json", {
            "tracking_gt": results,
            "settings": {"zero_distance_um": float(zero_distance_um),
                         "linked_by": "detection" if by_detection else "position"},
            "inputs": {"reference": ref.info, "predictions": pred.info},
            "warnings": warnings,
        })
        click.echo(f"wrote {path}")
