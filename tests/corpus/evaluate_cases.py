"""Corpus cases of ``trackverify evaluate --reference REF --predictions PRED``
(protocol tracking_gt, docs/reference/metrics.md).

A valid reference (two recordings, 6 frames x 3 tracks, with detection ids) and perfect
predictions; each case breaks one of the two tables. Input errors are refused with exit 2
and a message naming the file, column and row. The documented counts are verdicts, not
errors: two predictions on one detection and a prediction table with a header and no rows
both exit 0 with ``results.json`` written whole and the count in it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from tests.corpus.make_corpus import Case, _raw, _set, _write, generator

FRAMES, TRACKS = 6, 3


def reference() -> pd.DataFrame:
    f = np.tile(np.repeat(np.arange(FRAMES), TRACKS), 2)
    t = np.tile(np.arange(TRACKS), 2 * FRAMES)
    rec = np.repeat(["r1", "r2"], FRAMES * TRACKS)
    return pd.DataFrame({"recording": rec, "frame": f, "track": t, "detection": t,
                         "x_um": t * 20.0, "y_um": 1.0, "z_um": 2.0})


def predictions() -> pd.DataFrame:
    ref = reference()
    return pd.DataFrame({"recording": ref["recording"], "frame": ref["frame"],
                         "pred_id": ref["track"] + 10, "detection": ref["detection"],
                         "x_um": ref["x_um"], "y_um": ref["y_um"], "z_um": ref["z_um"],
                         "pred_valid": True})


# Broken predictions: (name, mutation, fragments after the file name).
PRED_BREAKS: list[tuple[str, Callable[[pd.DataFrame], pd.DataFrame], list[str]]] = [
    ("unknown_recording", lambda p: _set(p, "recording", 4, "r9"),
     ["column 'recording', row 4", "'r9', which the reference does not have"]),
    ("null_pred_id", lambda p: _set(p, "pred_id", 5, None), ["column 'pred_id'", "row 5"]),
    ("pred_id_twice_in_frame", lambda p: _set(p, "pred_id", 2, 10),
     ["column 'pred_id', row 2", "pred_id 10 is given to two predictions in frame 0"]),
    ("two_dimensional", lambda p: p.drop(columns="z_um"),
     ["column 'z_um'", "predictions are 2-D but the reference is 3-D"]),
    ("no_detection_no_coordinates", lambda p: p.drop(columns=["detection", "x_um", "y_um", "z_um"]),
     ["column 'detection'", "predictions need either a 'detection' column"]),
    ("missing_pred_id", lambda p: p.drop(columns="pred_id"), ["column 'pred_id'"]),
    ("text_in_frame", lambda p: _set(p, "frame", 3, "third"), ["column 'frame'", "row 3"]),
    ("negative_frame", lambda p: _set(p, "frame", 7, -2), ["column 'frame'", "row 7"]),
    ("nan_x", lambda p: _set(p, "x_um", 6, np.nan), ["column 'x_um'", "row 6"]),
    ("bad_pred_valid", lambda p: _set(p, "pred_valid", 8, "maybe"),
     ["column 'pred_valid'", "row 8"]),
]
# Broken references.
REF_BREAKS: list[tuple[str, Callable[[pd.DataFrame], pd.DataFrame], list[str]]] = [
    ("missing_track", lambda r: r.drop(columns="track"), ["column 'track'"]),
    ("null_track", lambda r: _set(r, "track", 9, None), ["column 'track'", "row 9"]),
    ("text_in_x", lambda r: _set(r, "x_um", 4, "far"), ["column 'x_um'", "row 4"]),
    ("no_rows", lambda r: r.iloc[:0], ["the reference table has no rows"]),
    ("recording_called_pooled",
     lambda r: r.assign(recording=r["recording"].replace("r2", "pooled")),
     ["column 'recording'", "'pooled'"]),
]
PARQUET_REFERENCES = ("missing_track", "no_rows", "recording_called_pooled")
KNOWN_BUGS: dict[str, str] = {}  # readers that still fail a case: strict xfails


def _evaluate(root: Path, name: str, ref: Path, pred: Path, code: int, fragments: list[str],
              report: list[str] | None = None, extra: list[str] = ()) -> Case:
    out = root / name / "out"
    args = ["evaluate", "--reference", str(ref), "--predictions", str(pred), "--out", str(out),
            *extra]
    if report is not None:
        return Case(name, args, code, fragments, out, out / "results.json", report)
    return Case(name, args, code, fragments, out, known_bug=KNOWN_BUGS.get(name, ""))


@generator
def evaluate_cases(root: Path) -> list[Case]:
    world = root / "evaluate_world"
    ref_ok = _write(reference(), world / "reference.csv")
    pred_ok = _write(predictions(), world / "predictions.csv")
    cases = []
    for name, mutate, fragments in PRED_BREAKS:
        case = f"evaluate_predictions_{name}"
        pred = _write(mutate(predictions()), root / case / "predictions.csv")
        cases.append(_evaluate(root, case, ref_ok, pred, 2, [str(pred), *fragments]))
    for name, mutate, fragments in REF_BREAKS:
        case = f"evaluate_reference_{name}"
        suffix = ".parquet" if name in PARQUET_REFERENCES else ".csv"  # Parquet: typed columns
        ref = _write(mutate(reference()), root / case / f"reference{suffix}")
        cases.append(_evaluate(root, case, ref, pred_ok, 2, [str(ref), *fragments]))
    for name, raw, fragment in [("empty_predictions", b"", "the file is empty"),
                                ("binary_predictions", bytes(range(256)), "not UTF-8 text")]:
        case = f"evaluate_{name}"
        pred = _raw(root, case, "predictions.csv", raw)
        cases.append(_evaluate(root, case, ref_ok, pred, 2, [str(pred), fragment]))
    ref_empty = _raw(root, "evaluate_empty_reference", "reference.csv", b"")
    cases.append(_evaluate(root, "evaluate_empty_reference", ref_empty, pred_ok, 2,
                           [str(ref_empty), "the file is empty"]))
    for flag, value in (("zero", "0"), ("zero", "-5"), ("zero", "nan"), ("zero", "1e400"),
                        ("match", "-1")):
        case = f"evaluate_{flag}_distance_{value.replace('-', 'minus_')}"
        cases.append(_evaluate(root, case, ref_ok, pred_ok, 2,
                               [f"--{flag}-distance-um: {flag}_distance_um must be a positive"],
                               extra=[f"--{flag}-distance-um", value]))
    # Documented counts, exit 0: a second prediction on one detection is an extra predicted
    # observation; a prediction table without rows misses every reference observation.
    doubled = predictions()
    doubled = pd.concat([doubled, doubled.iloc[[0]].assign(pred_id=99)], ignore_index=True)
    pred = _write(doubled, root / "evaluate_two_predictions_on_one_detection" / "pred.csv")
    cases.append(_evaluate(root, "evaluate_two_predictions_on_one_detection", ref_ok, pred, 0,
                           [], ['"extra_predicted_observations": 1']))
    pred = _write(predictions().iloc[:0], root / "evaluate_predictions_header_only" / "pred.csv")
    cases.append(_evaluate(root, "evaluate_predictions_header_only", ref_ok, pred, 0, [],
                           ['"correct_observations": 0', '"reference_observations": 36']))
    return cases
