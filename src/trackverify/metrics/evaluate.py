"""``trackverify evaluate`` as a library call: predictions scored against reference tracks by
every family, from files or tables read by the one reader of tracks.

:func:`evaluate` reads both sides (:func:`trackverify.io.tracks.read_pair`), then gives the
oracle diagnostics beside HOTA / CLEAR / Identity (:func:`~trackverify.metrics.tracking.evaluate_tracking`),
the graph measures (two CTC folders: the Challenge's own evaluation,
:func:`~trackverify.metrics.graph.ctc.evaluate_ctc`; else points matched within the match
distance, :func:`~trackverify.metrics.graph.evaluate.evaluate_graph`), WormND's protocol when
asked, and with ``check_reference`` the reference check and the metrics on the rows it does
not question. :class:`Evaluation` holds it all and writes ``results.json``, ``tracks.csv``,
``events.csv`` and ``report.html``.

Inputs that do not meet: when the predictions are matched to the reference by position and
in most frames (more than :data:`APART_SHARE`) no prediction lies within the zero distance
of any reference point, the numbers are about files that do not share one coordinate frame
(units, origin, axes), not about the tracker: a warning says so (``warnings``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError, naming_argument
from trackverify.tables import column_codes, coordinate_columns, joint_codes
from trackverify.values import is_real

#: Share of the reference's frames with no prediction within the zero distance above which
#: the two inputs are said not to meet.
APART_SHARE = 0.5


@dataclass
class Evaluation:
    """What :func:`evaluate` found: ``tracking`` (a :class:`~trackverify.metrics.tracking.TrackingResults`),
    ``graph`` (the graph measures), ``protocols`` (WormND's, when asked), ``checked`` (the
    reference check and the metrics on the rows it leaves, or None), ``settings``,
    ``inputs`` (how each file was read) and ``warnings``."""

    tracking: object
    graph: dict
    settings: dict
    inputs: dict
    warnings: list[str] = field(default_factory=list)
    protocols: dict = field(default_factory=dict)
    checked: dict | None = None

    def results(self) -> dict:
        """``results.json``'s content."""
        checked = self.checked
        return {
            "tracking_gt": self.tracking,
            "graph_metrics": self.graph,
            **self.protocols,
            "settings": self.settings,
            "inputs": self.inputs,
            "warnings": self.warnings,
            **({"reference_check": {"detections": self.inputs.get("detections"),
                                    "summary": checked["summary"], "note": checked["note"],
                                    "findings": checked["findings"],
                                    "tracking_gt_unquestioned": checked["results"]}}
               if checked else {}),
            "identity": {"tracks": self.tracking.tracks.to_dict("records"),
                         "events": self.tracking.events.to_dict("records")},
        }

    def write(self, out: str | os.PathLike) -> Path:
        """``results.json``, ``tracks.csv`` (per reference track), ``events.csv`` (every
        identity switch) and ``report.html`` in ``out``, each atomically; the path of
        ``results.json``."""
        from trackverify.io.atomic import write_json_atomic, write_text_atomic
        from trackverify.io.tabular import write_table
        from trackverify.report.tracking import render_tracking_report

        out = Path(out)
        write_table(self.tracking.tracks, out / "tracks.csv")
        write_table(self.tracking.events, out / "events.csv")
        files = {side: self.inputs[side]["source"] for side in ("reference", "predictions")}
        if self.inputs.get("detections"):
            files["detections"] = self.inputs["detections"]["path"]
        write_text_atomic(out / "report.html", render_tracking_report(
            self.tracking, self.settings, files, self.checked))
        return write_json_atomic(out / "results.json", self.results())


def check_distances(**distances) -> None:
    """Each distance given (not None) a positive finite number, else a ConfigError naming
    its flag (before any file is read; ``1e400`` reads as inf)."""
    for name, value in distances.items():
        if value is not None and not is_real(value, 0, strict=True):
            raise ConfigError(f"--{name.replace('_', '-')}: {name} must be a positive number, "
                              f"got {value!r}")


def evaluate(reference, predictions, *, zero_distance_um: float = 5.0,
             match_distance_um: float | None = None, definition: str | None = None,
             sparse_reference: bool = False, protocols=(), division_frame_buffer: int = 1,
             check_reference: bool = False, detections=None, out=None, warn=None,
             **reading) -> Evaluation:
    """Score ``predictions`` against ``reference`` (paths or DataFrames) by every family
    (module docstring); ``reading``: how to read them (``fmt``, ``columns``, ``pixel_size``,
    ``units``, ``recording`` and their ``reference_`` / ``predictions_`` forms,
    :func:`trackverify.io.tracks.read_pair`). ``out``: also write the outputs there (refused
    before any work when it is, holds or lies in an input); ``warn`` receives each warning as
    it arises (all are also in ``Evaluation.warnings``). Example::

        >>> import pandas as pd, trackverify
        >>> ref = pd.DataFrame({"frame": [0, 1, 0, 1], "track": [1, 1, 2, 2],
        ...                     "x_um": [0.0, 1.0, 20.0, 21.0], "y_um": 0.0})
        >>> pred = ref.rename(columns={"track": "pred_id"})
        >>> found = trackverify.evaluate(ref, pred)
        >>> found.tracking["pooled"]["idf1"], found.inputs["predictions"]["recording"]["name"]
        (1.0, 'recording')
    """
    from trackverify.io.tracks import read_detections, read_pair
    from trackverify.metrics.tracking import evaluate_tracking

    check_distances(zero_distance_um=zero_distance_um, match_distance_um=match_distance_um)
    if detections is not None and not check_reference:
        raise ConfigError("--detections is read by the reference check only: add --check-reference")
    if out is not None:
        from trackverify.io.paths import check_out_overlap

        check_out_overlap(out, {"reference": reference, "predictions": predictions,
                                "detections": detections})
    ref, pred, warnings = read_pair(reference, predictions, **reading)
    for text in warnings if warn is not None else ():  # before anything can refuse the pair
        warn(text)
    ref_source, pred_source = ref.record["source"], pred.record["source"]
    dets = None if detections is None else read_detections(detections, ref.table)
    inputs = {"reference": ref.record, "predictions": pred.record}
    if dets is not None:
        inputs["detections"] = {"path": dets.attrs["source"], "rows": len(dets)}
    tracking = evaluate_tracking(ref.table, pred.table, zero_distance_um,
                                 reference_source=ref_source, predictions_source=pred_source)
    by_detection = "detection" in ref.table.columns and "detection" in pred.table.columns
    if not by_detection:
        apart = apart_warning(ref.table, pred.table, float(zero_distance_um), pred_source)
        for text in apart if warn is not None else ():
            warn(text)
        warnings += apart
    masks = ref.record["format"] == "ctc" and pred.record["format"] == "ctc"
    definition = definition or ("ctc" if masks else "traccuracy")
    match_distance = zero_distance_um / 2 if match_distance_um is None else match_distance_um
    graph = _graph(ref, pred, masks, definition, match_distance, division_frame_buffer,
                   sparse_reference)
    if sparse_reference:
        from trackverify.metrics.graph.evaluate import null_tracking_for_sparse

        null_tracking_for_sparse(tracking)
    extra = {}
    if "wormnd" in protocols:
        from trackverify.metrics.graph.wormnd import evaluate_wormnd

        extra["wormnd"] = evaluate_wormnd(ref.table, pred.table)
    checked = None
    if check_reference:
        checked = reference_populations(ref.table, pred.table, tracking, zero_distance_um,
                                        ref_source, pred_source, dets)
    settings = {"zero_distance_um": float(zero_distance_um),
                "linked_by": "detection" if by_detection else "position",
                "match_distance_um": float(match_distance) if not masks else None,
                "definition": definition, "sparse_reference": bool(sparse_reference),
                "protocols": sorted(protocols),
                "graph_matching": "mask" if masks else
                ("detection" if by_detection else "points"),
                "division_frame_buffer": int(division_frame_buffer)}
    found = Evaluation(tracking, graph, settings, inputs, warnings, extra, checked)
    if out is not None:
        found.write(out)
    return found


def _graph(ref, pred, masks: bool, definition: str, match_distance: float, frame_buffer: int,
           sparse_reference: bool) -> dict:
    """The graph measures: two CTC folders by the Challenge's mask matching, else points."""
    if masks:
        from trackverify.metrics.graph.ctc import evaluate_ctc

        return evaluate_ctc(ref.record["path"], pred.record["path"], definition, frame_buffer,
                            recording=str(ref.table["recording"].iloc[0]),
                            sparse_reference=sparse_reference)
    from trackverify.metrics.graph.evaluate import evaluate_graph

    return evaluate_graph(ref.table, pred.table, match_distance, frame_buffer,
                          reference_source=ref.record["source"],
                          predictions_source=pred.record["source"], definition=definition,
                          sparse_reference=sparse_reference)


def apart_warning(reference: pd.DataFrame, predictions: pd.DataFrame, distance_um: float,
                  source: str) -> list[str]:
    """A warning when in more than :data:`APART_SHARE` of the reference's frames no valid
    prediction lies within ``distance_um`` of any reference point (one k-d tree query, the
    recording and frame as one more axis spaced beyond any distance), else none."""
    from scipy.spatial import cKDTree

    coords = coordinate_columns(reference)
    valid = predictions[predictions["pred_valid"].to_numpy(dtype=bool)]
    if not len(reference) or coordinate_columns(valid) != coords:
        return []
    both = pd.concat([reference[["recording", "frame"]], valid[["recording", "frame"]]],
                     ignore_index=True)
    key, _ = joint_codes([column_codes(both["recording"]), column_codes(both["frame"])])
    points = np.concatenate([reference[coords].to_numpy(np.float64),
                             valid[coords].to_numpy(np.float64)])
    step = 2.0 * float(np.abs(points).max(initial=0.0)) + 2.0 * distance_um + 1.0
    spread = np.column_stack([points, key.astype(np.float64) * step])
    n = len(reference)
    near = np.zeros(n, dtype=bool)
    if len(valid):
        found, _ = cKDTree(spread[n:]).query(spread[:n], distance_upper_bound=distance_um)
        near = np.isfinite(found)
    frames = key[:n]
    met = np.bincount(frames, weights=near, minlength=frames.max() + 1) > 0
    present = np.bincount(frames, minlength=frames.max() + 1) > 0
    apart = int((present & ~met).sum())
    if apart <= APART_SHARE * int(present.sum()):
        return []
    return [f"{source}: in {apart} of {int(present.sum())} frames no prediction lies within "
            f"{distance_um:g} um of any reference point: the two files may not share one "
            "coordinate frame (units, origin, axes), and the scores say little of the tracker"]


@naming_argument("reference_source")  # a refusal about a recording names the reference file
def reference_populations(reference, predictions, all_rows, zero_distance_um: float,
                          reference_source: str, predictions_source: str,
                          detections=None) -> dict:
    """The reference check (with ``detections``, every detection of each frame, when given),
    the tracking_gt metrics on the rows it does not question, and a note of what it found and
    what leaving those rows out changes (``all_rows``: the metrics on all rows)."""
    from trackverify.metrics.tracking import evaluate_tracking
    from trackverify.reference_check.core import check_reference
    from trackverify.reference_check.populations import changes_note, rows_note, unquestioned
    from trackverify.reference_check.write import issues_table

    check = check_reference(reference, detections)
    ref, pred = unquestioned(reference, predictions, check)
    results = evaluate_tracking(ref, pred, zero_distance_um, reference_source=reference_source,
                                predictions_source=predictions_source)
    note = " ".join(filter(None, [rows_note(check), changes_note(all_rows, results)]))
    return {"summary": check.summary(), "note": note, "results": results,
            "findings": issues_table(check).to_dict("records")}
