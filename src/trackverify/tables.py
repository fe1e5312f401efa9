"""The tables that flow through trackverify, documented once, here.

Observation table (one row per reference observation, i.e. per recording x frame x
reference track, with the prediction the tracker gave that observation's detection):

========== ============ ==================================================================
column     type         meaning
========== ============ ==================================================================
recording  str          recording id (one animal imaged over frames ``0..T-1``); optional
                        for a single recording: absent, it is ``DEFAULT_RECORDING``; integer
                        ids are read as their decimal text
frame      int >= 0     frame index; the recording's first frame is the anchor (a run counts
                        frames from it, see :mod:`trackverify.benchmark.dataset`); not a timestamp
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

Lineage: tables read from trackers' files (:mod:`trackverify.io.formats`) carry
``parent_track``, the id of the track a branch divided (or merged) from, null when none;
every branch of a division is its own track (docs/reference/formats.md).

Recording table (one row per recording): ``recording, animal_id, provenance_group[,
source_folds]`` plus free metadata columns. ``source_folds`` is carried as metadata and
never used to split.

Validation errors name the file, the column and the first offending row; a table that lacks
required columns gets one error naming every missing column and, for each, the closest
present column names (``difflib``), e.g. ``x_um (closest: x)``. Rows are
numbered from 1 over the data rows (for a CSV file, row 1 is the line after the header).
Ids follow one rule (:func:`id_column`; docs/reference/robustness.md, "Ids as written"): integers
(exact int64; whole-valued floats and decimals such as ``45.0`` are integers, fractional
ones, floats above 2^53 and integers beyond int64 are refused) or text, not a mixture of
both within one column; missing only as a blank cell, never a missing-value marker such as
``NA`` (:data:`MISSING_MARKERS`); a text id is at most :data:`MAX_ID_CHARACTERS` characters
and holds no control character (C0 or DEL: a line break, NUL or CR in an id would break
one-line messages, file names and reports). Ids of one meaning from two inputs meet by
:func:`common_id_type`.
Categorical (Parquet dictionary-encoded) columns are read as their values.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.values import describe_character, hidden_character, is_integer

ID_COLUMNS = ("recording", "track", "detection", "pred_id")
#: Coordinates beyond +-1 km are refused: squared distances of 1e300 overflow to inf.
MAX_COORDINATE_UM = 1e9
READ_AS_IDS = (*ID_COLUMNS, "animal_id", "provenance_group", "recording_a", "recording_b")
"""Columns a CSV reader keeps as written (io/tabular.py ``ids_as_written``)."""
#: The longest text id, in characters (a 500 MB recording id ran a run out of memory).
MAX_ID_CHARACTERS = 1000
_CONTROL = r"[\x00-\x1f\x7f]"  # a regular expression: one C0 control character or DEL
#: How an integer id is written: ``-?(0|[1-9][0-9]*)`` (no '+', no leading zero, ASCII digits).
CANONICAL_INTEGER = r"-?(?:0|[1-9][0-9]*)"
#: A number as pandas and spreadsheets write a float: digits, a point and digits (``45.0``,
#: ``1.5``, ``4.5e+20``), or an exponent with its sign (``1e+16``). An id column written so
#: is read as numbers (docs/reference/robustness.md, "Ids as written").
DECIMAL_NUMBER = CANONICAL_INTEGER + r"(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+][0-9]+)"
#: pandas' missing-value markers (``read_csv`` ``na_values``): a missing number in every
#: other column; as a whole id they are refused (a missing id is a blank cell).
MISSING_MARKERS = ("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                   "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
COORDS_3D = ("x_um", "y_um", "z_um")
#: The recording of a table without a ``recording`` column (one recording).
DEFAULT_RECORDING = "recording"
#: The largest frame index (int32's largest); a larger one is refused as implausible.
MAX_FRAME = int(np.iinfo(np.int32).max)


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
#: A tracker's identities of a recording's detections (e.g. ``tracker_cpd.parquet`` of the
#: real recording): a null ``pred_id`` is allowed where ``pred_valid`` is false.
TRACKER_IDS = Schema(
    "tracker table",
    required=("recording", "frame", "detection", "pred_id"),
    optional=("pred_valid",),
    unique_keys=(("recording", "frame", "detection"),),
)
#: Every source detection of each frame, with or without a reference identity (SPEC:
#: detections are fixed). Extra columns (e.g. ``kind``) are allowed and kept.
DETECTIONS = Schema(
    "detection table",
    required=("recording", "frame", "detection", "x_um", "y_um"),
    optional=("z_um",),
    unique_keys=(("recording", "frame", "detection"),),
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
    # a new frame (copy on write); the columns taken in a new order only when they need one
    out = df.reset_index(drop=True) if list(df.columns) == keep + extra else \
        df[keep + extra].reset_index(drop=True)
    for column, dtype in zip(out.columns, out.dtypes):
        if column in keep and isinstance(dtype, pd.CategoricalDtype):
            # categorical (Parquet dictionary) columns: validated as their values
            out[column] = _decoded(out[column])
    if schema is RECORDINGS:
        for column in ("recording", "animal_id", "provenance_group"):
            _normalise(out, column, id_column, column, source)
        _normalise(out, "recording", ids_as_text)
        check_unique(out, schema.unique_keys, source)
        return out
    if len(out) == 0 and schema is not PREDICTIONS:
        raise InputError(f"the {schema.name} has no rows", source=source)
    for column in ID_COLUMNS:
        if column in out.columns:
            allow_null = _null_allowed(out, column, schema)
            _normalise(out, column, id_column, column, source, allow_null)
    _normalise(out, "recording", ids_as_text)
    _normalise(out, "frame", _frame_column, source)
    if "x_um" in out.columns or "y_um" in out.columns or "z_um" in out.columns:
        _check_coordinate_set(out, schema, source)
        for column in coordinate_columns(out):
            _normalise(out, column, _coordinate_column, column, source)
    if "pred_valid" in out.columns:
        _normalise(out, "pred_valid", _bool_column, "pred_valid", source)
        if "pred_id" in out.columns:  # (a reference may carry pred_id)
            null = out["pred_id"].isna().to_numpy() & out["pred_valid"].to_numpy()
            if null.any():
                raise InputError("pred_id is null on a valid prediction (mark it pred_valid = "
                                 "false)", source=source, column="pred_id", row=_first(null))
    elif schema is PREDICTIONS:  # a blank pred_id: a detection the tracker gave no identity
        out["pred_valid"] = out["pred_id"].notna().to_numpy()
    check_unique(out, schema.unique_keys, source)
    return out


def _normalise(df: pd.DataFrame, column: str, check, *args) -> None:
    """``df[column] = check(df[column], *args)``, the assignment skipped when ``check`` gives
    the column back as it is."""
    series = df[column]
    checked = check(series, *args)
    if checked is not series:
        df[column] = checked


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


def _decoded(series: pd.Series) -> pd.Series:
    """A categorical column as a plain column of its values (missing stay missing); integer
    categories beside a missing value as nullable integers (a float64 column would round
    integers above 2^53)."""
    categories = series.cat.categories
    codes = series.cat.codes.to_numpy()
    if pd.api.types.is_integer_dtype(categories.dtype) and (codes < 0).any():
        categories = pd.Index(pd.array(categories.to_numpy()))
    values = categories.take(codes, allow_fill=True)
    return pd.Series(values, index=series.index, name=series.name)


def _first(mask: np.ndarray) -> int:
    """1-based data row number of the first True in ``mask``."""
    return int(np.flatnonzero(mask)[0]) + 1


def _null_allowed(df: pd.DataFrame, column: str, schema: Schema) -> bool:
    """A blank ``pred_id``: no identity (``pred_valid`` false), in a prediction table or
    beside a ``pred_valid`` column."""
    return column == "pred_id" and ("pred_valid" in df.columns or schema is PREDICTIONS)


def id_column(series: pd.Series, column: str, source: str, allow_null: bool = False) -> pd.Series:
    """An id column checked and typed by the one id rule (docs/reference/robustness.md, "Ids as
    written"), the same for a CSV file (whose cells :func:`trackverify.io.tabular.ids_as_written`
    types as written) and a DataFrame: int64 (``Int64`` with nulls) or text, never both.

    Missing only as null (a blank cell), and only where ``allow_null``; whole-valued
    floats (``45.0``) are integers; a fractional number, a float of 2^53 or more, an integer
    outside int64, a bool, an empty text, a text that is a missing-value marker
    (:data:`MISSING_MARKERS`: ``NA``, ``None``, ``nan``, ``null``, ...) and text with a
    control or invisible character are refused with an :class:`InputError` naming
    ``source``, ``column`` and the first offending 1-based row.

    >>> id_column(pd.Series([45.0, 7.0]), "track", "t.csv").tolist()
    [45, 7]
    >>> id_column(pd.Series(["NA"]), "track", "t.csv")
    Traceback (most recent call last):
    trackverify.errors.InputError: t.csv, column 'track', row 1: the id 'NA' is a missing-value marker: leave the cell blank where the id is missing, or give the object another id
    """
    if isinstance(series.dtype, np.dtype) and series.dtype == np.int64:  # no null: as it is
        return series
    null = pd.isna(series).to_numpy()
    if null.any() and not allow_null:
        raise InputError("missing id", source=source, column=column, row=_first(null))
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError("ids must be integers or strings, not booleans",
                         source=source, column=column, row=1)
    if pd.api.types.is_integer_dtype(series.dtype):
        if series.dtype.kind == "u" and not null.all() and int(series.max()) > _INT64_MAX:
            _refuse_beyond_int64(series, column, source)
        return series.astype("Int64" if null.any() else np.int64)
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        fractional = ~null & (values != np.round(values))
        if fractional.any():
            raise InputError(f"an id must be a whole number or a text, found the fractional "
                             f"number {float(values[_first(fractional) - 1])!r}", source=source,
                             column=column, row=_first(fractional))
        inexact = ~null & (np.abs(values) >= 2.0 ** 53)  # 2^53 + 1 is stored as 2^53
        if inexact.any():
            raise InputError("an id stored as a floating-point number (or written as a "
                             "decimal) of 2^53 or more may have lost its exact value; store "
                             "ids as integers or text", source=source, column=column,
                             row=_first(inexact))
        return series.astype("Int64" if null.any() else np.int64)
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind == "empty":
        return series.astype(object)
    if kind == "integer":
        try:
            return series.astype("Int64" if null.any() else np.int64)
        except (OverflowError, TypeError, ValueError):
            _refuse_beyond_int64(series, column, source)
    if kind == "string":
        if isinstance(series.dtype, pd.StringDtype):  # Arrow / pandas strings: no objects
            empty = _empty_text(series)
        else:
            empty = (series.to_numpy(dtype=object) == "") & ~null
        if empty.any():
            raise InputError("empty id (an id is a non-empty text or an integer)", source=source,
                             column=column, row=_first(empty))
        _check_text_ids(series, column, source)
        return series
    # Error path only: locate the first id that breaks the column's type.
    values = series.to_numpy(dtype=object)
    is_int = np.fromiter((is_integer(v) for v in values), bool, len(values))
    is_str = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
    bad = ~null & ~is_int & ~is_str
    if bad.any():
        raise InputError("ids must be integers or strings", source=source, column=column,
                         row=_first(bad))
    minority = is_str if is_int[~null][0] else is_int
    raise InputError("mixed id types (integers and strings) in one column",
                     source=source, column=column, row=_first(minority))


_INT64_MAX = int(np.iinfo(np.int64).max)


def _refuse_beyond_int64(series: pd.Series, column: str, source: str) -> None:
    """Refuse an integer id outside int64, naming its row (error path only)."""
    values = series.to_numpy(dtype=object)
    beyond = np.fromiter((v is not None and not pd.isna(v) and not
                          -_INT64_MAX - 1 <= int(v) <= _INT64_MAX for v in values),
                         bool, len(values))
    if not beyond.any():
        raise InputError("ids must be integers or strings", source=source, column=column, row=1)
    raise InputError(f"an integer id beyond the 64-bit range ({values[_first(beyond) - 1]}; "
                     "ids lie within -2^63 .. 2^63 - 1): number the ids within it, or write "
                     "them as text with a letter (e.g. a prefix)", source=source, column=column,
                     row=_first(beyond))


def _check_text_ids(series: pd.Series, column: str, source: str) -> None:
    """Refuse a text id that is a missing-value marker (:data:`MISSING_MARKERS`), one longer
    than :data:`MAX_ID_CHARACTERS`, holding a control character
    or another character that does not show as itself (:func:`values.hidden_character`: a
    right-to-left override, a zero-width space, a line separator, ...). Checked on the Arrow
    data (pyarrow compute) or on the distinct values joined into one text (every check is a
    property of a value, so the distinct values decide: one value when the column holds one,
    read off its buffers, else Arrow's unique values); the first offending row is looked for
    only when there is one."""
    one = single_value(series)  # e.g. a one-recording table's recording: one value to check
    if one:
        series = series.iloc[:1]
    if not one and isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        arrow = pc.unique(series.array.__arrow_array__())
        marker = bool(pc.any(pc.is_in(arrow, value_set=pa.array(MISSING_MARKERS))).as_py())
        longest = pc.max(pc.utf8_length(arrow)).as_py() or 0
        control = bool(pc.any(pc.match_substring_regex(arrow, _CONTROL)).as_py())
        ascii_only = pc.all(pc.string_is_ascii(arrow)).as_py() is not False
        distinct = [] if ascii_only else pc.unique(arrow).drop_null().to_pylist()
    else:
        import re

        distinct = [series.iloc[0]] if one else list(series.dropna().unique())
        longest = max(map(len, distinct), default=0)
        control = re.search(_CONTROL, "".join(distinct)) is not None
        marker = not set(MISSING_MARKERS).isdisjoint(distinct)
    if marker:
        rows = series.isin(MISSING_MARKERS).to_numpy(dtype=bool, na_value=False)
        raise InputError(f"the id {series.iloc[_first(rows) - 1]!r} is a missing-value marker: "
                         "leave the cell blank where the id is missing, or give the object "
                         "another id", source=source, column=column, row=_first(rows))
    if longest > MAX_ID_CHARACTERS:
        long = (series.str.len() > MAX_ID_CHARACTERS).to_numpy(dtype=bool, na_value=False)
        raise InputError(f"an id of {int(series.str.len().iloc[_first(long) - 1])} characters "
                         f"(at most {MAX_ID_CHARACTERS})", source=source, column=column,
                         row=_first(long))
    if control:
        bad = series.str.contains(_CONTROL, regex=True, na=False).to_numpy(dtype=bool,
                                                                            na_value=False)
        raise InputError("an id holds a control character (a line break, tab, NUL, ...)",
                         source=source, column=column, row=_first(bad))
    if hidden_character("".join(set("".join(distinct)))) is not None:  # order-free test
        hidden = [v for v in distinct if hidden_character(v) is not None]
        row = _first(series.isin(hidden).to_numpy(dtype=bool, na_value=False))
        character = hidden_character(series.iloc[row - 1])
        raise InputError(f"an id holds {describe_character(character)}, an invisible or "
                         "control character that changes how the id reads",
                         source=source, column=column, row=row)


#: The id columns two inputs join on.
JOINED_IDS = ("recording", "detection")


def id_kinds(frame: pd.DataFrame) -> dict[str, str]:
    """``{column: "integers" | "text"}`` of the :data:`JOINED_IDS` columns of ``frame`` as
    read, before validation makes recording ids text (whole-valued floats are integers by the
    id rule)."""
    return {column: "integers" if pd.api.types.is_numeric_dtype(frame[column].dtype)
            and not pd.api.types.is_bool_dtype(frame[column].dtype) else "text"
            for column in JOINED_IDS if column in frame.columns}


def common_id_type(a: pd.Series, b: pd.Series, column: str = "id",
                   sources: tuple[str, str] = ("<first table>", "<second table>")
                   ) -> tuple[pd.Series, pd.Series]:
    """Two id columns of one meaning read from two inputs (e.g. ``detection`` of a reference
    and of a prediction table) with one type, by the rule of docs/reference/robustness.md ("Ids as
    written"): an integer id is the same id as the text that writes it canonically (``7``
    and ``'7'``; never ``'07'`` nor ``'7.0'``), so when one column is integer and the other
    text, the integers become their decimal text. One-to-one: distinct integers have
    distinct canonical texts, and a CSV reads the same written id ``1`` as the integer 1 or
    as the text ``'1'`` depending on the other cells of its column.

    When no text id of the other column is written as an integer, no id can be the same
    in both: an :class:`InputError` naming both inputs, the column and the first text id's
    row (the ids were written one way in one file and another way in the other).
    """
    a_int, b_int = (pd.api.types.is_integer_dtype(s.dtype) for s in (a, b))
    if a_int == b_int:
        return a, b
    text, (int_source, text_source) = (b, sources) if a_int else (a, sources[::-1])
    written = text.dropna().astype(str)
    if len(written) and not written.str.fullmatch(CANONICAL_INTEGER).any():
        row = _first(text.notna().to_numpy())
        raise InputError(f"the {column} ids are integers in {int_source} but text here "
                         f"({text.iloc[row - 1]!r}), and none is written as an integer, so no "
                         f"id can be the same in both; write the {column} ids one way in both "
                         "files", source=text_source, column=column, row=row)
    return (ids_as_text(a), b) if a_int else (a, ids_as_text(b))


def ids_as_text(ids: pd.Series) -> pd.Series:
    """Integer ids as their decimal text (integer 7 becomes '7'); other ids as they are.
    Recording ids are always text: they name files and JSON keys."""
    if pd.api.types.is_integer_dtype(ids.dtype):
        return _as_text(ids, pd.isna(ids).to_numpy())
    return ids


def _as_text(series: pd.Series, null: np.ndarray) -> pd.Series:
    """Integer ids as their decimal text, exact at any size (missing stays missing)."""
    text = series.astype(object).where(null, series.astype(str)) if null.any() else \
        series.astype(str)
    return text.astype(object)


def _frame_column(series: pd.Series, source: str) -> pd.Series:
    dtype = series.dtype
    if (pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)
            or pd.api.types.is_bool_dtype(dtype)):
        raise InputError(f"frame must be an integer frame index, not a timestamp, duration or "
                         f"boolean (a {dtype} column); convert times to frame numbers first",
                         source=source, column="frame", row=1)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":  # integers: only the range to check
        values = series.to_numpy()
    else:
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
    if len(values) and not (values.min() >= 0 and values.max() <= MAX_FRAME):
        negative = values < 0
        if negative.any():
            raise InputError("frame must be >= 0", source=source, column="frame",
                             row=_first(negative))
        huge = values > MAX_FRAME
        if huge.any():
            raise InputError("frame is implausibly large", source=source, column="frame",
                             row=_first(huge))
    if isinstance(dtype, np.dtype) and dtype == np.int64:  # as it is (not converted again)
        return series
    return pd.Series(values.astype(np.int64), index=series.index)


def _check_coordinate_set(df: pd.DataFrame, schema: Schema, source: str) -> None:
    for column in ("x_um", "y_um"):
        if column not in df.columns:
            raise InputError(f"the {schema.name} has some coordinates but not {column}",
                             source=source, column=column)


def _coordinate_column(series: pd.Series, column: str, source: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError("coordinates must be numbers", source=source, column=column, row=1)
    if pd.api.types.is_datetime64_any_dtype(series.dtype) or \
            pd.api.types.is_timedelta64_dtype(series.dtype):  # numbers to pandas, not positions
        raise InputError(f"coordinates must be numbers, not timestamps or durations (a "
                         f"{series.dtype} column)", source=source, column=column, row=1)
    if isinstance(series.dtype, np.dtype) and series.dtype == np.float64:  # NaN: caught below
        numeric = series
    else:
        numeric = pd.to_numeric(series, errors="coerce")
        not_number = numeric.isna().to_numpy() & ~series.isna().to_numpy()
        if not_number.any():
            raise InputError("coordinates must be numbers", source=source, column=column,
                             row=_first(not_number))
    values = numeric.to_numpy(dtype=np.float64)
    if len(values) == 0 or (values.min() >= -MAX_COORDINATE_UM and
                            values.max() <= MAX_COORDINATE_UM):  # finite (NaN fails) and plausible
        return numeric if numeric is series else pd.Series(values, index=series.index)
    bad = ~np.isfinite(values)
    if bad.any():
        raise InputError("coordinate is NaN or infinite", source=source, column=column,
                         row=_first(bad))
    huge = np.abs(values) > MAX_COORDINATE_UM
    if huge.any():
        raise InputError(f"coordinate is implausibly large (beyond +-{MAX_COORDINATE_UM:g} um)",
                         source=source, column=column, row=_first(huge))
    return numeric if numeric is series else pd.Series(values, index=series.index)


_TRUE = {"true", "1", "t", "yes", "y"}
_FALSE = {"false", "0", "f", "no", "n"}


def _bool_column(series: pd.Series, column: str, source: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(series.dtype) and not series.isna().any():
        return series.astype(bool)
    try:
        text = series.astype(str).str.strip().str.lower().to_numpy(dtype=object)
    except UnicodeDecodeError:  # bytes that are not UTF-8 (a Parquet binary column)
        raw = series.to_numpy(dtype=object)  # error path only: the first bytes that fail
        undecodable = np.array([isinstance(v, bytes) and not _utf8(v) for v in raw], dtype=bool)
        raise InputError("expected true/false, found bytes that are not UTF-8 text",
                         source=source, column=column, row=_first(undecodable)) from None
    is_true = np.isin(text, list(_TRUE))
    is_false = np.isin(text, list(_FALSE))
    bad = ~(is_true | is_false) | series.isna().to_numpy()
    if bad.any():
        raise InputError("expected true/false", source=source, column=column, row=_first(bad))
    return pd.Series(is_true, index=series.index)


def _utf8(value: bytes) -> bool:
    """Whether ``value`` decodes as UTF-8."""
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_unique(df: pd.DataFrame, keys: tuple[tuple[str, ...], ...], source: str) -> None:
    """Refuse the first row whose values of one of ``keys`` (column tuples; those ``df`` lacks
    are skipped) repeat an earlier row's, naming it."""
    codes: dict = {}  # each column coded once
    for key in keys:
        if not all(c in df.columns for c in key):
            continue
        for c in key:
            if c not in codes:
                codes[c] = column_codes(df[c])
        row = first_repeat(*joint_codes([codes[c] for c in key]))
        if row is not None:
            values = ", ".join(f"{c}={plain(df[c].iloc[row])!r}" for c in key)
            raise InputError(f"duplicate ({', '.join(key)}): {values}", source=source,
                             column=key[-1], row=row + 1)


DIRECT_KEYS = 1 << 22  # key spaces up to this size are used as they are (no hashing)


def column_codes(values) -> tuple[np.ndarray, int]:
    """Codes ``0..k-1`` of a column's values (equal values, equal codes) and ``k``: small
    non-negative integers are their own codes, anything else is factorised."""
    array = values.to_numpy() if isinstance(values, pd.Series) and \
        pd.api.types.is_integer_dtype(values.dtype) and not values.hasnans else values
    if isinstance(array, np.ndarray) and array.dtype.kind in "iu" and len(array):
        low, high = int(array.min()), int(array.max())
        if low >= 0 and high < max(2 * len(array), 1 << 16):
            return array.astype(np.int64, copy=False), high + 1
    if single_value(values):  # e.g. the recording of a one-recording table
        return np.zeros(len(values), dtype=np.int64), 1
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def single_value(values) -> bool:
    """Whether a non-empty text column (a Series) without nulls holds one value only:
    checked without hashing (a one-recording table's ``recording``); False for anything
    else."""
    if not isinstance(values, pd.Series) or len(values) == 0 or \
            not (isinstance(values.dtype, pd.StringDtype) or values.dtype == object):
        return False
    first = values.iloc[0]
    if not isinstance(first, str) or values.iloc[-1] != first or values.hasnans:
        return False
    same = _arrow_all_equal(values, first)
    return bool(values.eq(first).all()) if same is None else same


def _arrow_all_equal(values: pd.Series, text: str) -> bool | None:
    """Whether an Arrow-backed text column without nulls holds ``text`` in every row, read
    off its buffers (every row's offsets ``len(text)`` bytes apart, the bytes ``text``
    repeated); ``None`` when the column is not laid out so (then compare row by row)."""
    chunks = _arrow_text_chunks(values)
    if chunks is None or any(chunk.null_count for chunk, _, _ in chunks):
        return None
    pattern = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    for _, offsets, data_buffer in chunks:
        if not (np.diff(offsets) == len(pattern)).all():  # every row len(text) bytes long
            return False
        data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0]:offsets[-1]]
        if len(pattern) and not (data.reshape(-1, len(pattern)) == pattern).all():
            return False
    return True


def _empty_text(values: pd.Series) -> np.ndarray:
    """Which rows of a text column hold the empty string (a null is not empty): read off the
    Arrow offsets (an empty row's two offsets are equal) when the column is Arrow-backed,
    else from the rows' lengths."""
    chunks = _arrow_text_chunks(values)
    if chunks is None:
        return (values.str.len() == 0).to_numpy(dtype=bool, na_value=False)
    parts = [np.zeros(0, dtype=bool)]
    for chunk, offsets, _ in chunks:
        empty = offsets[1:] == offsets[:-1]
        if chunk.null_count:
            empty &= ~chunk.is_null().to_numpy(zero_copy_only=False)
        parts.append(empty)
    return np.concatenate(parts)


def _arrow_text_chunks(values: pd.Series) -> list | None:
    """``(chunk, offsets, data buffer)`` of each non-empty chunk of an Arrow-backed text
    column (its own buffers, no copy; ``offsets``: the chunk's ``len + 1`` row offsets);
    ``None`` when the column is not laid out so."""
    if not isinstance(values.dtype, pd.StringDtype) or values.dtype.storage != "pyarrow":
        return None
    import pyarrow as pa

    arrow = values.array.__arrow_array__()  # the column's own Arrow data (no copy)
    chunks = []
    for chunk in arrow.chunks if isinstance(arrow, pa.ChunkedArray) else [arrow]:
        if chunk.type == pa.large_string():
            width = np.int64
        elif chunk.type == pa.string():
            width = np.int32
        else:
            return None
        if len(chunk) == 0:  # nothing to read (an empty chunk may come first)
            continue
        _, offset_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=width)[chunk.offset:chunk.offset + len(chunk) + 1]
        chunks.append((chunk, offsets, data_buffer))
    return chunks


def joint_codes(columns: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """Codes ``0..k-1`` of the rows' tuples of values from per-column ``(codes, k)``
    (:func:`column_codes`), and ``k``; compacted, then hashed, when the space grows large."""
    code, span = columns[0]
    for part, k in columns[1:]:
        if span * max(k, 1) > max(DIRECT_KEYS, 4 * len(code)):  # the values present only
            part, k = _compact(part, k)
            if span * max(k, 1) > max(DIRECT_KEYS, 4 * len(code)):
                code, span = _compact(code, span)
        code, span = code * max(k, 1) + part, span * max(k, 1)
        if span > max(DIRECT_KEYS, 4 * len(code)):
            code, span = column_codes(code)
    return code, span


def _compact(code: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """The codes renumbered over the values present (order kept)."""
    present, inverse = unique_inverse(code, span)
    return inverse, len(present)


def sorted_codes(values) -> tuple[np.ndarray, pd.Index, np.ndarray | None]:
    """``pd.factorize(values, sort=True)`` -- each value's rank among the distinct values
    (int64) and those values ascending (an Index) -- and how many times each distinct value
    occurs (``None`` where not counted). ``values``: a Series or anything ``np.asarray``
    takes. Small non-negative integers (a numpy integer column or array, ``0 <= v < 2 n +
    2**16``) are counted, without hashing: codes already (every value of ``0..k-1``
    present) are their own ranks, others are ranked by :func:`dense_ranks`; anything else
    is factorised (then the counts are ``None``)."""
    series = isinstance(values, pd.Series)
    array = values.to_numpy() if series and isinstance(values.dtype, np.dtype) else \
        (None if series else np.asarray(values))
    if array is not None and array.dtype.kind in "iu" and len(array):
        low, high = int(array.min()), int(array.max())
        if low >= 0 and high < 2 * len(array) + (1 << 16):
            counts = np.bincount(array.astype(np.intp, copy=False))  # exact: high is small
            if counts.all():  # codes already: each its own rank
                return (array.astype(np.int64, copy=False),
                        pd.Index(np.arange(len(counts), dtype=array.dtype)), counts)
            present = counts > 0
            return (dense_ranks(present, array),
                    pd.Index(np.flatnonzero(present).astype(array.dtype, copy=False)),
                    counts[present])
    codes, uniques = pd.factorize(values if series else array, sort=True)
    return codes.astype(np.int64, copy=False), pd.Index(uniques, dtype=uniques.dtype), None


def unique_inverse(values: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` for integers in ``0..span-1``: the distinct
    values ascending and each value's rank among them; by counting (``O(n + span)``, no
    sort) unless ``span`` is far larger than the number of values (counting costs less up to
    a span of about 15 times the values, as measured; sorting beyond)."""
    if span > 12 * len(values) + (1 << 16):
        return np.unique(values, return_inverse=True)
    present = np.zeros(span, dtype=bool)
    present[values] = True
    return np.flatnonzero(present), dense_ranks(present, values)


def dense_ranks(present: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each value's rank among the ``True`` slots of ``present`` (``present[values]`` all
    ``True``), as int64: ``(np.cumsum(present) - 1)[values]``. The running count is taken in
    int32 (a count of slots never reaches 2**31 here), which numpy sums many times faster
    than a boolean array into int64."""
    ranks = np.cumsum(present, dtype=np.int32)[values].astype(np.int64)
    ranks -= 1
    return ranks


def stable_order(major: np.ndarray, n_major: int, minor: np.ndarray) -> np.ndarray:
    """The rows sorted by ``(major, minor)``, ties in row order: ``np.lexsort((minor,
    major))``. ``major`` holds codes ``0..n_major-1``. When the rows are in ``minor`` order
    already (tables sorted by frame), one stable sort on ``major`` gives the same order (a
    radix sort for fewer than 65536 codes)."""
    major = np.asarray(major)
    minor = np.asarray(minor)
    if len(major) > 1 and bool(np.all(minor[1:] >= minor[:-1])):
        return np.argsort(major.astype(np.uint16) if n_major <= 1 << 16 else major,
                          kind="stable")
    return np.lexsort((minor, major))


def first_repeat(codes: np.ndarray, span: int) -> int | None:
    """Index of the first row whose code (``0 <= code < span``) appeared earlier, or None."""
    if len(codes) == 0 or np.bincount(codes, minlength=span).max() <= 1:  # no repeat at all
        return None
    order = np.arange(len(codes))
    first = np.full(span, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, order)
    again = np.flatnonzero(first[codes] < order)
    return int(again[0]) if len(again) else None


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


def validate_pair(reference: pd.DataFrame, predictions: pd.DataFrame,
                  reference_source: str = "<reference>",
                  predictions_source: str = "<predictions>"
                  ) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """Validated copies of a reference and a prediction table, and whether they are linked
    by detection (both carry ``detection``); otherwise predictions must carry coordinates,
    as many as the reference."""
    ref = validate(reference, REFERENCE, reference_source)
    pred = validate(predictions, PREDICTIONS, predictions_source)
    check_same_dimensionality(ref, pred, predictions_source)
    by_detection = "detection" in ref.columns and "detection" in pred.columns
    for column in ("recording", "detection") if by_detection else ("recording",):
        ref[column], pred[column] = common_id_type(ref[column], pred[column], column,
                                                   (reference_source, predictions_source))
    if not by_detection and not coordinate_columns(pred):
        raise InputError("predictions need either a 'detection' column (with one in the "
                         "reference too) or coordinates x_um, y_um[, z_um]",
                         source=predictions_source, column="detection")
    return ref, pred, by_detection


def lookup(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of each ``wanted`` key in ``keys`` (distinct integers), -1 when absent."""
    keys = np.asarray(keys)
    wanted = np.asarray(wanted)
    if len(keys) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
    return np.where(keys[order][at] == wanted, order[at], -1).astype(np.int64)
