"""``trackverify evaluate``: the tracking_gt protocol on any supported files (light module:
the work is imported when the command runs, so ``-h`` stays fast)."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import echo_warnings, input_options

COLUMNS = (("reference_observations", "obs"), ("correct_observation_rate", "correct"),
           ("identity_switches", "switches"), ("fragmentations", "frags"),
           ("extra_predicted_observations", "extra"), ("hota", "HOTA"), ("deta", "DetA"),
           ("assa", "AssA"), ("mota", "MOTA"), ("idf1", "IDF1"), ("idsw", "IDSW"))
#: Wrong reference tracks listed on the terminal (the most wrong observations first; every
#: track is in tracks.csv).
LISTED_TRACKS = 10


def _cell(value) -> str:
    from trackverify.report.numbers import fmt

    return fmt(value, undefined="-")


def graph_table(graph: dict, frame_buffer: int):
    """The printed table of the graph metrics (one row per recording, pooled last)."""
    from rich.table import Table

    table = Table(title="graph metrics: Cell Tracking Challenge | CHOTA | divisions "
                        f"(frame buffer {frame_buffer})")
    for label in ("recording", "DET", "TRA", "LNK", "AOGM", "CHOTA", "div R", "div P",
                  "div F1"):
        table.add_column(label, justify="left" if label == "recording" else "right",
                         no_wrap=True)
    for recording, ctc in graph["ctc"].items():
        div = graph["divisions"][recording]
        div = div[f"frame_buffer_{frame_buffer}"] if div else {}
        table.add_row(str(recording), *(_cell(ctc[k]) for k in ("det", "tra", "lnk", "aogm")),
                      _cell(graph["chota"][recording]),
                      *(_cell(div.get(k)) for k in ("division_recall", "division_precision",
                                                    "division_f1")))
    return table


def metrics_table(results, title: str):
    """The printed table of the tracking_gt metrics (one row per recording, pooled last)."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("recording", no_wrap=True)
    for _, label in COLUMNS:
        table.add_column(label, justify="right", no_wrap=True)
    for recording, row in results.items():
        table.add_row(str(recording), *(_cell(row[key]) for key, _ in COLUMNS),
                      end_section=recording == list(results)[-2] if len(results) > 1 else False)
    return table


@click.command("evaluate")
@click.option("--reference", required=True, type=click.Path(path_type=Path),
              help="Reference tracks: a table (recording, frame, track, x_um, y_um[, z_um]"
                   "[, detection]) or any supported tracker file (docs/reference/formats.md).")
@click.option("--predictions", required=True, type=click.Path(path_type=Path),
              help="Predictions: a table (recording, frame, pred_id[, detection][, x_um, y_um"
                   "[, z_um]][, pred_valid]) or any supported tracker file.")
@input_options
@input_options(prefix="reference")
@input_options(prefix="predictions")
@click.option("--zero-distance-um", type=float, default=5.0, show_default=True,
              help="Distance at which the canonical-metric similarity reaches 0.")
@click.option("--match-distance-um", type=float, default=None,
              help="Graph metrics (CTC, divisions, CHOTA): match points within this distance "
                   "(default: half the zero distance, where the similarity is 0.5). CTC "
                   "folders are matched by their masks instead.")
@click.option("--definition", type=click.Choice(["ctc", "traccuracy"]), default=None,
              help="AOGM counts as the Cell Tracking Challenge computes them (ctc: non-split "
                   "k-1, parent-link semantics) or as traccuracy does. Default: ctc for CTC "
                   "folders (matched by the mask rule), traccuracy for point data.")
@click.option("--sparse-reference", is_flag=True, default=False,
              help="The reference annotates only some cells: unmatched predictions are not "
                   "errors (the Challenge's penalize_extra_detections = 0 for DET / TRA); "
                   "measures that count them (CHOTA, division precision / F1, BC, CT, CCA) "
                   "are null, with the reason in results.json.")
@click.option("--protocol", "protocols", type=click.Choice(["wormnd"]), multiple=True,
              help="Also score by a benchmark's protocol: wormnd = WormND's TRA and DET at 3 "
                   "and 6 um (Hungarian centroid matching, then the cut; coordinates in um, "
                   "anisotropic voxels through --pixel-size X,Y,Z).")
@click.option("--division-frame-buffer", type=int, default=1, show_default=True,
              help="Division metrics: also report frame buffers 1..N.")
@click.option("--check-reference", is_flag=True, default=False,
              help="Check the reference for likely label errors first (docs/guide/reference-check.md) "
                   "and give the tracking metrics on all rows and on the rows it does not question.")
@click.option("--detections", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="With --check-reference: every detection of each frame "
              "(recording, frame, x_um, y_um[, z_um]), labelled or not, so the check can see a "
              "label moved onto an unlabelled detection. Used by the check only.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for results.json, tracks.csv, events.csv and report.html (each "
                   "written atomically). Without it, print only.")
def evaluate(reference, predictions, zero_distance_um, match_distance_um, definition,
             sparse_reference, protocols, division_frame_buffer, check_reference, detections, out,
             **options):
    """Score predictions against reference tracks (protocol tracking_gt).

    Prints the oracle-association diagnostics (SPEC section 3; not HOTA/IDF1) and, beside
    them, the canonical HOTA / MOTA / IDF1 (TrackEval definitions), per recording and
    pooled. With detection ids in both files, predictions are linked by detection;
    otherwise by position (similarity max(0, 1 - d / zero-distance), matched at >= 0.5).
    Then the graph metrics (Cell Tracking Challenge DET / TRA / LNK, CHOTA, and division
    metrics when both tables carry parent_track links), per recording and pooled. Two CTC
    folders are validated and matched by their masks as the Challenge does, with its
    biological measures (BC(i), CT, TF, CCA, SEG).
    """
    from rich.console import Console

    from trackverify.metrics.evaluate import check_distances, evaluate as run_evaluate

    check_distances(zero_distance_um=zero_distance_um, match_distance_um=match_distance_um)
    found = run_evaluate(reference, predictions, zero_distance_um=zero_distance_um,
                         match_distance_um=match_distance_um, definition=definition,
                         sparse_reference=sparse_reference, protocols=protocols,
                         division_frame_buffer=division_frame_buffer,
                         check_reference=check_reference, detections=detections, out=out,
                         warn=lambda text: echo_warnings([text]), **options)
    results, graph, extra, checked = found.tracking, found.graph, found.protocols, found.checked
    console = Console()
    if not console.is_terminal:  # piped or captured: do not squeeze the table to 80 columns
        console = Console(width=max(console.width, 140))
    console.print(metrics_table(results, "tracking_gt: oracle diagnostics (SPEC 3) | canonical "
                                         "metrics (SPEC 7)" + (", all rows" if checked else "")))
    if checked:
        console.print(metrics_table(checked["results"], "the same on the rows the reference "
                                                        "check does not question"))
        console.print(checked["note"])
    wrong = results.wrong_tracks()
    if len(wrong):
        listed = "" if len(wrong) <= LISTED_TRACKS else \
            f"; the {LISTED_TRACKS} with the most wrong observations"
        console.print(f"{len(wrong)} of {len(results.tracks)} reference tracks are not followed "
                      f"correctly throughout; {len(results.events)} identity switches "
                      f"(tracks.csv and events.csv with --out){listed}:")
        for row in wrong.head(LISTED_TRACKS).itertuples():
            console.print(f"  {row.recording} track {row.track}: {row.correct} of "
                          f"{row.observations} correct, first wrong frame {row.first_wrong_frame}, "
                          f"{row.identity_switches} switches")
    console.print(graph_table(graph, division_frame_buffer))
    if graph["status"]["reason"]:
        console.print(f"division metrics not reported: {graph['status']['reason']}")
    if "challenge" in graph:
        c = graph["challenge"]["pooled"]
        console.print("Cell Tracking Challenge biological measures: " + ", ".join(
            f"{k} {_cell(c[k])}" for k in ("BC(0)", "BC(1)", "BC(2)", "BC(3)", "ct", "tf",
                                            "cca", "seg")))
    console.print(f"graph matching: {graph['matching']}; AOGM definition: "
                  f"{graph['definition']}")
    if "wormnd" in extra:
        w = extra["wormnd"]["mean"]
        console.print("WormND (mean over recordings): " + ", ".join(
            f"{k} {_cell(w[k])}" for k in ("tra_3um", "det_3um", "tra_6um", "det_6um")))
    if sparse_reference:
        console.print("sparse reference: unmatched predictions weigh 0; CHOTA, division "
                      "precision / F1, BC, CT, CCA, HOTA / DetA / AssA, MOTA, IDF1 and the "
                      "extra observations are null (graph_metrics.sparse_reference)")
    if out is not None:
        path = Path(out) / "results.json"
        click.echo(f"wrote {path}, tracks.csv (per reference track), events.csv (every "
                   "identity switch) and report.html (with a per-track timeline)")
