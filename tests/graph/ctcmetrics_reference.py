"""Run py-ctcmetrics 1.3.3 (in .venv-ctcmetrics) on CTC case folders; print JSON.

Usage: ``ctcmetrics_reference.py GT_DIR RES_DIR [GT_DIR RES_DIR ...]``. Each ``GT_DIR`` holds
``TRA/`` (and optionally ``SEG/``), the layout the Challenge's evaluation reads. Prints one
JSON list, one object per case: the measures py-ctcmetrics reports (and ``seconds``, the
time of its ``load_data`` + ``calculate_metrics``, one thread) (``Valid`` 0 for a
result it refuses), or ``{"error": ...}`` when it raises. When only its CHOTA raises (it
does on a reference frame without cells) or only its LNK (a reference without links
divides by zero), the others are reported, with ``CHOTA_error`` / ``LNK_error``.
A result with no tracks (an empty ``res_track.txt``) is one py-ctcmetrics' gate calls
invalid and then raises on (``valid``: ``tracks[:, 2].max()`` of no tracks); its measures
are computed past the gate by its own functions (:func:`past_the_gate`), with ``Valid`` 0
and ``gate``, its reason.
Its own printing goes to stderr.
"""

import contextlib
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ctc_metrics.scripts import evaluate as ctc_evaluate
from ctc_metrics.scripts.evaluate import calculate_metrics, load_data
from ctc_metrics.utils.filesystem import parse_masks, read_tracking_file

METRICS = ["Valid", "CHOTA", "BC", "CT", "CCA", "TF", "TRA", "DET", "LNK"]


def clean(value):
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def no_tracks(res: str) -> bool:
    """A result with no tracks: an empty ``res_track.txt`` and masks without a label (an
    empty track file beside labelled masks is an invalid result, left to py-ctcmetrics)."""
    track_file = Path(res) / "res_track.txt"
    if not track_file.is_file() or track_file.read_text().strip():
        return False
    return not any(mask.any() for mask in map(_read_mask, parse_masks(res)))


def _read_mask(path: str) -> np.ndarray:
    import tifffile

    return tifffile.imread(path)


def past_the_gate(gt: str, res: str, seg: bool) -> dict:
    """py-ctcmetrics' measures of a result with no tracks, from its own mask matching and
    measure functions (``calculate_metrics`` without its validity gate; CHOTA is left out:
    its track merging, ``merge_tracks``, raises on a result without labels)."""
    ref = read_tracking_file(str(Path(gt) / "TRA" / "man_track.txt"))
    comp = np.zeros((0, 4), dtype=ref.dtype)
    masks = parse_masks(res)
    traj = ctc_evaluate.match_computed_to_reference_masks(
        parse_masks(str(Path(gt) / "TRA")), masks, threads=1)
    ops = ctc_evaluate.count_acyclic_graph_correction_operations(
        ref, comp, traj["labels_ref"], traj["labels_comp"], traj["mapped_ref"],
        traj["mapped_comp"])
    tra, aogm, aogm_0 = ctc_evaluate.tra(**ops)
    out = {"Valid": 0, "gate": "No tracks in result", "DET": ctc_evaluate.det(**ops), "TRA": tra, "AOGM": aogm,
           "AOGM_0": aogm_0,
           **{f"AOGM_{k}": ops[k] for k in ("NS", "FN", "FP", "ED", "EA", "EC")},
           "CT": ctc_evaluate.ct(comp, ref, traj["labels_ref"], traj["mapped_ref"],
                                 traj["mapped_comp"]),
           "TF": ctc_evaluate.tf(ref, traj["labels_ref"], traj["mapped_ref"],
                                 traj["mapped_comp"]),
           "CCA": ctc_evaluate.cca(comp, ref)}
    try:
        out["LNK"] = ctc_evaluate.lnk(**ops)
    except ZeroDivisionError as exc:  # a reference without links, as in one()
        out["LNK_error"] = f"{type(exc).__name__}: {exc}"
    for i in range(4):
        tp, fp, fn = ctc_evaluate.raw_division_metrics(comp, ref, traj["mapped_ref"],
                                                       traj["mapped_comp"], i=i)
        out.update({f"tp_div({i})": tp, f"fp_div({i})": fp, f"fn_div({i})": fn,
                    f"BC({i})": ctc_evaluate.bc(tp, fp, fn)})
    if seg:
        ref_seg = parse_masks(str(Path(gt) / "SEG"))
        frames = [int(Path(x).name.replace("man_seg", "").replace(".tif", "").replace("_", ""))
                  for x in ref_seg]
        segm = ctc_evaluate.match_computed_to_reference_masks(
            ref_seg, [masks[t] for t in frames], threads=1)
        out["SEG"] = ctc_evaluate.seg(segm["labels_ref"], segm["ious"])
    return out


def one(gt: str, res: str) -> dict:
    seg = (Path(gt) / "SEG").is_dir()
    metrics = METRICS + (["SEG"] if seg else [])
    if no_tracks(res):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = past_the_gate(gt, res, seg)
        return {**{k: clean(v) for k, v in out.items()}, "seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp, ref, traj, segm, _, valid = load_data(res, gt, True, seg, threads=1)
            extra = {}
            try:
                out = calculate_metrics(comp, ref, traj, segm, list(metrics), valid)
            except Exception:  # noqa: BLE001 - each of CHOTA and LNK on its own, below
                out = calculate_metrics(comp, ref, traj, segm,
                                        [m for m in metrics if m not in ("CHOTA", "LNK")],
                                        valid)
                for name, alone in (("CHOTA", ["CHOTA"]), ("LNK", ["DET", "LNK"])):
                    try:
                        out[name] = calculate_metrics(comp, ref, traj, segm, alone,
                                                      valid)[name]
                    except Exception as exc:  # noqa: BLE001 - reported
                        extra[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - reported, compared by the tests
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {**{k: clean(v) for k, v in out.items()}, **extra,
            "seconds": time.perf_counter() - t0}


def main(args: list[str]) -> None:
    results = []
    with contextlib.redirect_stdout(sys.stderr):
        for gt, res in zip(args[::2], args[1::2]):
            results.append(one(gt, res))
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
