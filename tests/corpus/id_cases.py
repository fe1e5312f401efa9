"""Corpus cases of id columns and of ids joined across two inputs (docs/reference/robustness.md, "Ids
as written").

Each case writes a valid table and breaks one id: a missing-value marker (``NA``, ``None``,
``nan``, ``null``) as the id in each id column; a fractional or a decimal id above 2^53 in a
column of numbers; an integer beyond int64 (CSV text beyond int64 and beyond uint64, beside a
blank cell, an unsigned Parquet column); integer ids in one file met by text ids none of which
is written as an integer (``evaluate``'s detections, ``audit --detections``); a same-animal
candidate of ``split`` that is a marker or beyond int64. Every one is refused with exit 2
naming the file, the column and the row. One documented acceptance: ids above 2^53 beside a
blank cell keep every digit through ``audit`` (exit 0, the id in ``tracks.csv``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.corpus.evaluate_cases import predictions, reference
from tests.corpus.make_corpus import Case, _raw, _set, _write, clean_observations, generator

MARKERS = ("NA", "None", "nan", "null")
ID_COLUMNS = ("recording", "track", "detection", "pred_id")


def _grid_tracks(ids: list[int], frames: int = 4) -> pd.DataFrame:
    """A tracker output for ``audit``: six ids on a 2 x 3 grid (8 um apart), drifting."""
    grid = [(x, y) for y in (0.0, 8.0) for x in (0.0, 8.0, 16.0)]
    rows = [(t, i, ids[i], x + 0.3 * t, y) for t in range(frames) for i, (x, y) in enumerate(grid)]
    return pd.DataFrame(rows, columns=["frame", "detection", "pred_id", "x_um", "y_um"])


@generator
def id_cases(root: Path) -> list[Case]:
    cases: list[Case] = []

    def refused(name: str, args: list[str], fragments: list[str], out: Path) -> None:
        cases.append(Case(name, args, 2, fragments, out))

    def observations(name: str, table: pd.DataFrame, suffix: str, column: str, row: int,
                     words: str) -> None:
        path = _write(table, root / name / f"obs{suffix}")
        out = root / name / "out"
        line = f" (line {row + 1})" if suffix == ".csv" else ""  # a text file's own line
        refused(name, ["verify", "--observations", str(path), "--out", str(out)],
                [f"{path}, column '{column}', row {row}{line}: {words}"], out)

    for column in ID_COLUMNS:
        for marker in MARKERS:
            observations(f"id_marker_{column}_{marker.lower()}_csv",
                         _set(clean_observations(), column, 3, marker), ".csv", column, 3,
                         f"the id '{marker}' is a missing-value marker")
    observations("id_marker_track_text_parquet",
                 _set(clean_observations().astype({"track": str}), "track", 5, "None"),
                 ".parquet", "track", 5, "the id 'None' is a missing-value marker")
    observations("id_decimal_above_2_53_csv", _set(clean_observations(), "track", 2, 1e16),
                 ".csv", "track", 2, "an id stored as a floating-point number (or written as "
                 "a decimal) of 2^53 or more may have lost its exact value")
    beyond = "an integer id beyond the 64-bit range"
    for name, value in (("int64", 2 ** 63), ("uint64", 2 ** 64), ("negative", -2 ** 63 - 1)):
        observations(f"id_beyond_{name}_track_csv",
                     _set(clean_observations(), "track", 6, str(value)), ".csv", "track", 6,
                     f"{beyond} ({value};")
    blank = _set(_set(clean_observations(), "pred_id", 2, str(2 ** 64 - 1)), "pred_id", 4, None)
    observations("id_beyond_int64_beside_blank_csv", _set(blank, "pred_valid", 4, False),
                 ".csv", "pred_id", 2, beyond)
    observations("id_uint64_track_parquet", clean_observations().assign(
        track=np.array([2 ** 64 - 1] + [1] * 47, dtype=np.uint64) + np.uint64(0)),
        ".parquet", "track", 1, beyond)

    # Ids of one meaning in two files: integers in one, text never written as an integer in
    # the other (before, nothing matched and every prediction scored as a miss).
    folder = root / "id_join_detection_text_evaluate"
    ref = _write(reference(), folder / "ref.csv")
    pred = _write(predictions().assign(detection=lambda p: "d" + p["detection"].astype(str)),
                  folder / "pred.parquet")
    refused(folder.name, ["evaluate", "--reference", str(ref), "--predictions", str(pred),
                          "--out", str(folder / "out")],
            [f"{pred}, column 'detection', row 1: the detection ids are integers in {ref} but "
             "text here ('d0')"], folder / "out")
    folder = root / "id_join_detection_text_audit"
    tracks = _write(_grid_tracks([10, 9, 100, 2, 45, 7]), folder / "tracks.csv")
    dets = _write(_grid_tracks([0] * 6).drop(columns="pred_id").assign(
        detection=lambda d: "d" + d["detection"].astype(str)), folder / "detections.parquet")
    refused(folder.name, ["audit", str(tracks), "--detections", str(dets), "--out",
                          str(folder / "out")],
            [f"{dets}, column 'detection', row 1: the detection ids are integers in the "
             "observations but text here ('d0')"], folder / "out")

    # split: the same-animal candidates are read by the id rule.
    for name, cell, words in (("marker", "NA", "the id 'NA' is a missing-value marker"),
                              ("beyond_int64", str(2 ** 64), beyond)):
        folder = root / f"id_split_candidate_{name}"
        recordings = _raw(root, folder.name, "recordings.csv",
                          b"recording,animal_id,provenance_group\n1,a,g\n2,b,g\n3,c,g\n")
        pairs = _raw(root, folder.name, "pairs.csv", f"recording_a,recording_b\n1,{cell}\n".encode())
        refused(folder.name, ["split", "--recordings", str(recordings), "--same-animal-candidates",
                              str(pairs), "--out", str(folder / "out" / "p.json")],
                [f"{pairs}, column 'recording_b', row 1: {words}"], folder / "out")

    # Documented acceptance: ids above 2^53 beside a blank keep every digit (never a float).
    folder = root / "id_above_2_53_beside_blank_audit"
    big = 2 ** 53 + 1
    table = _grid_tracks([big, big + 2, big + 4, 3, 4, 5], frames=4).astype({"pred_id": object})
    table.loc[len(table) - 1, "pred_id"] = None
    table["pred_valid"] = table["pred_id"].notna()
    tracks = _write(table, folder / "tracks.csv")
    cases.append(Case(folder.name, ["audit", str(tracks), "--out", str(folder / "out")], 0, [],
                      folder / "out", folder / "out" / "tracks.csv",
                      [f",{big},", f",{big + 2},", f",{big + 4},"]))
    return cases
