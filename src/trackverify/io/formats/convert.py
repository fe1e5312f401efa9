"""A reader's points (``frame, track, x_um, y_um[, z_um]``, extras) as a project table.

* reference: ``recording, frame, track, x_um, y_um[, z_um]`` + extras;
* predictions: the same with ``track`` renamed ``pred_id`` (``parent_track`` then holds a
  parent's ``pred_id``) and ``pred_valid = True``;
* observations (``run --data``, ``convert``): the tracker's tracks as both the reference and
  the clean predictions: ``pred_id = track``, ``pred_valid = True`` and ``detection`` = the
  file's node / spot id when there is one (``node``), else the point's rank within its frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.tables import DEFAULT_RECORDING, OBSERVATIONS, PREDICTIONS, REFERENCE, validate


def parent_ids(parent: np.ndarray | None, none: np.ndarray | None = None,
               length: int = 0) -> pd.arrays.IntegerArray:
    """The ``parent_track`` column: ``parent`` (int64) with null where ``none`` is True;
    ``parent=None`` gives ``length`` nulls (a format without lineage)."""
    if parent is None:
        parent, none = np.zeros(length, dtype=np.int64), np.ones(length, dtype=bool)
    values = pd.array(np.where(none, 0, parent).astype(np.int64), dtype="Int64")
    values[np.asarray(none, dtype=bool)] = pd.NA
    return values


def cell_numbers(cells: pd.DataFrame, column: str, where: str, whole: bool = False,
                 blank_ok: bool = False) -> np.ndarray:
    """``cells[column]`` (text cells, or a numeric column of a Parquet file) as float64; a
    cell that is not a finite number (or, with ``whole``, not a whole number below 2^53; with
    ``blank_ok`` a blank is NaN) is an InputError naming ``where``, the column, the 1-based
    row and the cell."""
    cells_of = cells[column]
    if pd.api.types.is_numeric_dtype(cells_of) and not pd.api.types.is_bool_dtype(cells_of):
        text = cells_of.astype(object)  # quoted only in a message
        values = cells_of.to_numpy(dtype=np.float64, na_value=np.nan)
        blank = np.zeros(len(values), dtype=bool)
    else:
        text = cells_of.astype(str).str.strip()
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        blank = (text == "").to_numpy()
    bad = ~np.isfinite(values) & ~(blank_ok & blank)
    if whole:  # and exact in float64 (ids and frames beyond 2^53 would be rounded)
        bad |= np.isfinite(values) & ((values != np.round(values)) | (np.abs(values) >= 2.0**53))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"expected a {'whole (below 2^53)' if whole else 'finite'} number, found "
                         f"{text.iloc[row]!r}", source=where, column=column, row=row + 1)
    return values


BLOCK_BYTES = 1 << 26  # a cell may be this long (pyarrow parses whole blocks)


def text_cells(path, names: list[str], skip: int, encoding: str = "utf-8-sig",
               **parse) -> pd.DataFrame:
    """The rows of a CSV file after its ``skip`` header lines, every cell as text, under
    ``names``; ``parse``: pyarrow ``ParseOptions`` (delimiter, quoting). A row with too few or
    too many cells is an InputError naming it (pyarrow reports it; pandas would pad a short
    row silently)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    where = str(path)
    bad: list = []

    def refuse(row):
        bad.append(row)
        return "error"

    try:
        table = pcsv.read_csv(
            path, read_options=pcsv.ReadOptions(
                skip_rows=skip, column_names=names, use_threads=False, block_size=BLOCK_BYTES,
                encoding="utf8" if encoding == "utf-8-sig" else encoding),  # a BOM is in a skipped row
            parse_options=pcsv.ParseOptions(invalid_row_handler=refuse, **parse),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                strings_can_be_null=False))
    except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
        if bad:
            row = bad[0]
            raise InputError(f"{row.actual_columns} cells where the header has "
                             f"{row.expected_columns}", source=where,
                             row=None if row.number is None else row.number - skip) from None
        raise InputError(f"not a readable CSV file ({str(exc).splitlines()[0]})", source=where) from None
    return table.to_pandas()


def as_kind(table: pd.DataFrame, kind: str, recording: str | None,
            source: str) -> pd.DataFrame:
    out = table.copy()
    if "recording" not in out.columns:
        out.insert(0, "recording", DEFAULT_RECORDING if recording is None else recording)
    if kind == "reference":
        return validate(out, REFERENCE, source)
    if kind == "predictions":
        out = out.rename(columns={"track": "pred_id"})
        out["pred_valid"] = True
        return validate(out, PREDICTIONS, source)
    if "node" in out.columns and not out.duplicated(["recording", "frame", "node"]).any():
        out["detection"] = out["node"]
    else:
        out["detection"] = out.groupby(["recording", "frame"], sort=False).cumcount()
    out["pred_id"] = out["track"]
    out["pred_valid"] = True
    return validate(out, OBSERVATIONS, source)
