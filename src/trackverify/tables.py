"""The tables that flow through trackverify, documented once, here.

Observation table (one row per reference observation, i.e. per recording x frame x
reference track, with the prediction the tracker gave that observation's detection):

========== ============ ==================================================================
column     type         meaning
========== ============ ==================================================================
recording  str          recording id (one animal imaged over frames ``0..T-1``); optional
                        for a single recording: absent, it is ``DEFAULT_RECORDING``
frame      int >= 0     frame index; frame 0 is the anchor frame
track      int or str   reference track id (anonymous but persistent)
detection  int or str   source detection id, unique within (recording, frame)
x_um       float        position in micrometres (finite)
y_um       float        position in micrometres (finite)
z_um       float        optional; 2-D data leave it out
pred_id    int or str   predicted identity the tracker gave the detection
pred_valid bool         whether that prediction is valid (False = no usable prediction)
========== ============ ==================================================================

After corruption the table gains ``condition`` (str), ``is_control`` (bool) and ``error``
(nullable 0/1); after verification ``score`` (float, NaN = abstain) and ``abstained``.

Reference table (``trackverify evaluate --reference``): ``recording, frame, track, x_um,
y_um[, z_um][, detection]``. Prediction table: ``recording, frame, pred_id[, detection][,
x_um, y_um[, z_um]][, pred_valid]``.

Recording table (one row per recording): ``recording, animal_id, provenance_group[,
source_folds]`` plus free metadata columns. ``source_folds`` is carried as metadata and
never used to split.

Validation errors name the file, the column and the first offending row; a table that lacks
required columns gets one error naming every missing column and, for each, the closest
present column names (``difflib``), e.g. ``x_um (closest: x)``. Rows are
numbered from 1 over the data rows (for a CSV file, row 1 is the line after the header).
Ids may be integers or strings but not a mixture of both within one column.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.errors import InputError

ID_COLUMNS = ("recording", "track", "detection", "pred_id")
COORDS_3D = ("x_um", "y_um", "z_um")
#: The recording of a table without a ``recording`` column (one recording).
DEFAULT_RECORDING = "default"


@dataclass(frozen=True)
class Schema:
    """Which columns a kind of table needs, may have, and which keys must be unique."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()


OBSERVATIONS = Schema(
    "observation table",
    required=("recording", "frame", "track", "detection", "x_um", "y_um", "pred_id", "pred_valid"),
    optional=("z_um",),
    unique_keys=(("recording", "frame", "track"), ("recording", "frame", "detection")),
)
REFERENCE = Schema(
    "reference table",
    required=("recording", "frame", "track", "x_um", "y_um"),
    optional=("z_um", "detection"),
    unique_keys=(("recording", "frame", "track"), ("recording", "frame", "detection")),
)
PREDICTIONS = Schema(
    "prediction table",
    required=("recording", "frame", "pred_id"),
    optional=("detection", "x_um", "y_um", "z_um", "pred_valid"),
)
RECORDINGS = Schema(
    "recording table",
    required=("recording", "animal_id", "provenance_group"),
    optional=("source_folds",),
    unique_keys=(("recording",),),
)


def coordinate_columns(df: pd.DataFrame) -> list[str]:
    """The coordinate columns a table carries: x, y and, for 3-D data, z."""
    return [c for c in COORDS_3D if c in df.columns]


def validate(df: pd.DataFrame, schema: Schema, source: str = "<table>") -> pd.DataFrame:
    """Check ``df`` against ``schema`` and return a normalised copy (never modifies ``df``).

    Normalisation: ``frame`` becomes int64, coordinates float64, ``pred_valid`` bool
    (default True when absent in a prediction table), id columns keep their type
    (int64 or str). Raises :class:`InputError` naming source, column and first bad row.
    """
    _check_columns(df, schema, source)
    if schema is not RECORDINGS and "recording" not in df.columns:
        df = df.assign(recording=DEFAULT_RECORDING)
    keep = [c for c in (*schema.required, *schema.optional) if c in df.columns]
    extra = [c for c in df.columns if c not in keep]
    out = df[keep + extra].copy().reset_index(drop=True)
    if schema is RECORDINGS:
        for column in ("recording", "animal_id", "provenance_group"):
            out[column] = _id_column(out[column], column, source)
        _check_unique(out, schema, source)
        return out
    if len(out) == 0 and schema is not PREDICTIONS:
        raise InputError(f"the {schema.name} has no rows", source=source)
    for column in ID_COLUMNS:
        if column in out.columns:
            out[column] = _id_column(out[column], column, source,
                                     allow_null=_null_allowed(out, column))
    out["frame"] = _frame_column(out["frame"], source)
    if "x_um" in out.columns or "y_um" in out.columns or "z_um" in out.columns:
        _check_coordinate_set(out, schema, source)
        for column in coordinate_columns(out):
            out[column] = _coordinate_column(out[column], column, source)
    if "pred_valid" in out.columns:
        out["pred_valid"] = _bool_column(out["pred_valid"], "pred_valid", source)
    elif schema is PREDICTIONS:
        out["pred_valid"] = True
    if "pred_id" in out.columns:
        null = out["pred_id"].isna().to_numpy() & out["pred_valid"].to_numpy()
        if null.any():
            raise InputError("pred_id is null on a valid prediction (mark it pred_valid = false)",
                             source=source, column="pred_id", row=_first(null))
    _check_unique(out, schema, source)
    return out


def _check_columns(df: pd.DataFrame, schema: Schema, source: str) -> None:
    names = [str(c) for c in df.columns]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError("the column appears twice", source=source, column=name)
        seen.add(name)
    missing = [c for c in schema.required if c not in seen
               and not (c == "recording" and schema is not RECORDINGS)]
    if missing:
        hint = ""
        if len(names) == 1 and any(sep in names[0] for sep in ";\t|"):
            hint = " (is the file comma-separated?)"
        unused = [n for n in names if n not in schema.required and n not in schema.optional]
        described = [column + closest_hint(column, unused) for column in missing]
        raise InputError(
            f"missing required column(s) of the {schema.name}: {'; '.join(described)}; found "
            f"columns {names}{hint} (rename them in the file or map them with --columns "
            f"{','.join(f'{c}=NAME' for c in missing)})", source=source,
            column=", ".join(missing))


def closest_hint(name: str, candidates: list[str]) -> str:
    """``" (closest: a, b)"``: the present names most like ``name`` (difflib), or ``""``."""
    close = difflib.get_close_matches(name, candidates, n=2, cutoff=0.3)
    return f" (closest: {', '.join(close)})" if close else ""


def _first(mask: np.ndarray) -> int:
    """1-based data row number of the first True in ``mask``."""
    return int(np.flatnonzero(mask)[0]) + 1


def _null_allowed(df: pd.DataFrame, column: str) -> bool:
    return column == "pred_id" and "pred_valid" in df.columns


def _id_column(series: pd.Series, column: str, source: str, allow_null: bool = False) -> pd.Series:
    null = pd.isna(series).to_numpy()
    if null.any() and not allow_null:
        raise InputError("missing id", source=source, column=column, row=_first(null))
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError("ids must be integers or strings, not booleans",
                         source=source, column=column, row=1)
    if pd.api.types.is_integer_dtype(series.dtype):
        return series.astype("Int64" if null.any() else np.int64)
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64)
        fractional = ~null & (values != np.round(values))
        if fractional.any():
            raise InputError("ids must be integers or strings, found a fractional number",
                             source=source, column=column, row=_first(fractional))
        return series.astype("Int64" if null.any() else np.int64)
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind == "empty":
        return series.astype(object)
    if kind == "integer":
        try:
            return series.astype("Int64" if null.any() else np.int64)
        except (OverflowError, TypeError, ValueError):
            values = series.to_numpy(dtype=object)
            huge = np.fromiter((not null[i] and not -2**63 <= values[i] < 2**63
                                for i in range(len(values))), bool, len(values))  # error path only
            raise InputError("integer id does not fit in 64 bits (write such ids as strings)",
                             source=source, column=column, row=_first(huge) if huge.any() else 1)
    if kind == "string":
        return series
    # Error path only: locate the first id that breaks the column's type.
    values = series.to_numpy(dtype=object)
    is_int = np.fromiter((isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                          for v in values), bool, len(values))
    is_str = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
    bad = ~null & ~is_int & ~is_str
    if bad.any():
        raise InputError("ids must be integers or strings", source=source, column=column,
                         row=_first(bad))
    minority = is_str if is_int[~null][0] else is_int
    raise InputError("mixed id types (integers and strings) in one column",
                     source=source, column=column, row=_first(minority))


def _frame_column(series: pd.Series, source: str) -> pd.Series:
    numeric = pd.to_numeric(series, errors="coerce")
    bad = numeric.isna().to_numpy()
    if bad.any():
        raise InputError("frame must be an integer", source=source, column="frame",
                         row=_first(bad))
    values = numeric.to_numpy(dtype=np.float64)
    fractional = values != np.round(values)
    if fractional.any():
        raise InputError("frame must be an integer, found a fractional value",
                         source=source, column="frame", row=_first(fractional))
    negative = values < 0
    if negative.any():
        raise InputError("frame must be >= 0", source=source, column="frame",
                         row=_first(negative))
    huge = values > np.iinfo(np.int32).max
    if huge.any():
        raise InputError("frame is implausibly large", source=source, column="frame",
                         row=_first(huge))
    return pd.Series(values.astype(np.int64), index=series.index)


def _check_coordinate_set(df: pd.DataFrame, schema: Schema, source: str) -> None:
    for column in ("x_um", "y_um"):
        if column not in df.columns:
            raise InputError(f"the {schema.name} has some coordinates but not {column}",
                             source=source, column=column)


def _coordinate_column(series: pd.Series, column: str, source: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError("coordinates must be numbers", source=source, column=column, row=1)
    numeric = pd.to_numeric(series, errors="coerce")
    not_number = numeric.isna().to_numpy() & ~series.isna().to_numpy()
    if not_number.any():
        raise InputError("coordinates must be numbers", source=source, column=column,
                         row=_first(not_number))
    values = numeric.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        raise InputError("coordinate is NaN or infinite", source=source, column=column,
                         row=_first(bad))
    return pd.Series(values, index=series.index)


_TRUE = {"true", "1", "t", "yes", "y"}
_FALSE = {"false", "0", "f", "no", "n"}


def _bool_column(series: pd.Series, column: str, source: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(series.dtype) and not series.isna().any():
        return series.astype(bool)
    text = series.astype(str).str.strip().str.lower().to_numpy(dtype=object)
    is_true = np.isin(text, list(_TRUE))
    is_false = np.isin(text, list(_FALSE))
    bad = ~(is_true | is_false) | series.isna().to_numpy()
    if bad.any():
        raise InputError("expected true/false", source=source, column=column, row=_first(bad))
    return pd.Series(is_true, index=series.index)


def _check_unique(df: pd.DataFrame, schema: Schema, source: str) -> None:
    for key in schema.unique_keys:
        if not all(c in df.columns for c in key):
            continue
        dup = df.duplicated(list(key), keep="first").to_numpy()
        if dup.any():
            row = _first(dup)
            values = ", ".join(f"{c}={plain(df[c].iloc[row - 1])!r}" for c in key)
            raise InputError(f"duplicate ({', '.join(key)}): {values}", source=source,
                             column=key[-1], row=row)


def plain(value):
    """A numpy scalar as the Python value it holds (for messages, JSON and manifests)."""
    return value.item() if isinstance(value, np.generic) else value


def check_same_dimensionality(reference: pd.DataFrame, predictions: pd.DataFrame,
                              source: str = "<predictions>") -> None:
    """Predictions that carry coordinates must carry as many as the reference."""
    pred = coordinate_columns(predictions)
    ref = coordinate_columns(reference)
    if pred and len(pred) != len(ref):
        raise InputError(f"predictions are {len(pred)}-D but the reference is {len(ref)}-D",
                         source=source, column="z_um")
