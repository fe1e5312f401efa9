"""CSV and Parquet tables at the edge: read with clear errors, write atomically; the text
cells of a tracker's CSV (:func:`text_cells`) and their numbers (:func:`cell_numbers`)."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from trackverify.errors import InputError
from trackverify.io.atomic import (commit_temporary, discard_temporary, missing_folders,
                                   remove_empty, temporary_beside, write_atomic)
from trackverify.io.bounded import regular_file
from trackverify.tables import (CANONICAL_INTEGER, DECIMAL_NUMBER, MISSING_MARKERS, READ_AS_IDS,
                                Schema, validate)

PARQUET_SUFFIXES = {".parquet", ".pq"}
# pandas' default missing-value markers (read_csv ``na_values``), for every non-id column.
NA_MARKERS = ("", *MISSING_MARKERS)
#: A CSV header line longer than this is refused before pandas sees the file (a header of
#: 10**6 columns asked pandas for gigabytes); every reader of CSV headers keeps this bound.
MAX_HEADER_LINE = 1 << 16
#: Most bytes in memory one stored byte of a Parquet file may stand for (RLE, dictionary and
#: zstd together; :func:`_check_parquet_rows`), and the size below which any file is read.
#: 10**8 constant rows take 3.8 MB with zstd (1900x); real tables stay near 3x, regular
#: synthetic ones below 200x.
MAX_PARQUET_EXPANSION = 1000
PARQUET_ALWAYS_READ = 1 << 28
# What pyarrow raises turning a column into pandas when the file's pandas metadata does not
# fit its columns (NotImplementedError: a struct column the metadata calls Int64).
_TO_PANDAS_ERRORS = (pa.ArrowException, TypeError, ValueError, NotImplementedError, KeyError)


def read_table(path: str | os.PathLike, id_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a CSV (UTF-8, BOM tolerated), TSV or Parquet file into a DataFrame, unvalidated
    (which one: :func:`table_kind`; an error about a ``.txt`` or extensionless file says how
    it was read).

    A CSV's id columns (:data:`~trackverify.tables.READ_AS_IDS`, and ``id_columns``: the
    file's names of columns a mapping makes ids) are typed as written (:func:`ids_as_written`)."""
    path = regular_file(path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", source=str(path))
    suffix = path.suffix.lower()
    kind = table_kind(path)
    try:
        return _read_kind(path, kind, id_columns)
    except InputError as exc:
        if suffix in SNIFFED_SUFFIXES:  # say how a .txt / extensionless file was read
            raise InputError(f"{exc.problem} (read as {SNIFFED_AS[kind]})", source=exc.source,
                             column=exc.column, row=exc.row) from None
        raise


def data_lines(path: str | os.PathLike) -> np.ndarray | None:
    """The 1-based line in the file of each data row of a CSV / TSV file (its header is its
    first non-blank line; blank lines are no rows, as :func:`read_table` reads them), or None
    for another kind of file and for one whose rows are not its lines (a quoted cell holding
    a line break). Read on an error path only: the whole file at once."""
    path = Path(path)
    if table_kind(path) not in ("csv", "tsv"):
        return None
    data = np.frombuffer(path.read_bytes(), dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n"))
    starts, stops = np.r_[0, ends + 1], np.r_[ends, len(data)]
    def per_line(mask: np.ndarray) -> np.ndarray:
        total = np.r_[0, np.cumsum(mask, dtype=np.int64)]
        return total[stops] - total[starts]
    if (per_line(data == ord('"')) % 2).any():  # a quoted cell across lines
        return None
    blank = per_line(~np.isin(data, np.frombuffer(b" \t\r", dtype=np.uint8))) == 0
    return (np.flatnonzero(~blank) + 1)[1:]


#: Suffixes whose content decides how the table is read (:func:`table_kind`).
SNIFFED_SUFFIXES = {".txt", ""}
SNIFFED_AS = {"parquet": "Parquet: the file starts with the bytes PAR1",
              "csv": "CSV: the file does not start with Parquet's PAR1 and its header line "
                     "holds a comma or no tab",
              "tsv": "TSV: the file does not start with Parquet's PAR1 and its header line "
                     "holds tabs and no comma"}


def table_kind(path: Path) -> str | None:
    """How :func:`read_table` reads ``path``: ``"parquet"``, ``"csv"`` or ``"tsv"`` by its
    suffix (``.parquet`` / ``.pq``, ``.csv``, ``.tsv``), or None for another suffix. A
    ``.txt`` or extensionless file is read by its content: Parquet when it starts with
    Parquet's magic bytes ``PAR1``, else TSV when its first line holds a tab and no comma,
    else CSV."""
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in (".csv", ".tsv"):
        return suffix[1:]
    if suffix not in SNIFFED_SUFFIXES:
        return None
    with open(path, "rb") as handle:
        head = handle.read(MAX_HEADER_LINE)
    if head.startswith(b"PAR1"):
        return "parquet"
    line = head.split(b"\n", 1)[0]
    return "tsv" if b"\t" in line and b"," not in line else "csv"


def _read_kind(path: Path, kind: str | None, id_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    if kind == "parquet":
        try:
            metadata = pq.read_metadata(path)
            _check_parquet_rows(metadata, path)
            _check_unique_names(metadata.schema.to_arrow_schema().names, path, "schema")
            arrow = pq.read_table(path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InputError(f"not a readable Parquet file ({_first_line(exc)})",
                             source=str(path)) from None
        try:
            return exact_integers(arrow, arrow.to_pandas())
        except _TO_PANDAS_ERRORS:
            # the pandas metadata stored in the file names dtypes its columns no longer have
            # (e.g. Int64 for a bool column): the columns as they are, which validation judges
            try:
                return exact_integers(arrow, arrow.to_pandas(ignore_metadata=True))
            except _TO_PANDAS_ERRORS as exc:
                raise InputError(f"a Parquet column cannot be read as a table column "
                                 f"({_first_line(exc)})", source=str(path)) from None
    if kind in ("csv", "tsv"):
        sep = "\t" if kind == "tsv" else ","
        header = _check_csv_header(path, sep)
        ids = [name for name in header if name in READ_AS_IDS or name in id_columns]
        # Id columns are read as text (only a blank cell is missing), every other column
        # with pandas' usual missing-value markers; ids_as_written then decides int or str.
        na_values = {name: [""] if name in ids else list(NA_MARKERS) for name in header}
        try:
            table = pd.read_csv(path, encoding="utf-8-sig", sep=sep,
                                skipinitialspace=True, dtype={name: str for name in ids},
                                keep_default_na=False, na_values=na_values)
            for name in ids:
                table[name] = ids_as_written(table[name])
            return table
        except pd.errors.EmptyDataError as exc:
            raise InputError("the file has no header line", source=str(path)) from exc
        except pd.errors.ParserError as exc:
            raise _parser_error(exc, path, sep) from None
        except (UnicodeDecodeError, csv.Error, ValueError) as exc:
            raise InputError(f"not a readable CSV file ({_first_line(exc)})",
                             source=str(path)) from exc
    raise InputError(f"unknown table format '{path.suffix.lower()}' (use .csv, .tsv or "
                     ".parquet; a .txt or extensionless file is read by its content)",
                     source=str(path))


#: pandas' nullable dtype of each Arrow integer type (exact, with missing values).
NULLABLE_INTEGERS = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(),
                     pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype(),
                     pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
                     pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}


def exact_integers(arrow: pa.Table, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (``arrow`` as pandas made it) with every integer column that holds a null
    as pandas' nullable integers (``Int64``, ``UInt64``, ...). pandas makes such a column
    float64, which rounds integers above 2^53: ids 2^53 + 1 and 2^53 read as one id (the
    rule of docs/reference/robustness.md, "Ids as written": integers are exact)."""
    for field, column in zip(arrow.schema, arrow.columns):
        if (pa.types.is_integer(field.type) and column.null_count and field.name in frame
                and frame[field.name].dtype.kind == "f"):
            frame[field.name] = column.to_pandas(types_mapper=NULLABLE_INTEGERS.get).array
    return frame


#: pandas' C parser on a row of more cells than the header ("line" counts the header's line).
_MORE_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _parser_error(exc: pd.errors.ParserError, path: Path, delimiter: str) -> InputError:
    """pandas' ParserError as one line naming the data row: ``Expected 9 fields in line 6,
    saw 10`` is a row with one cell more than the header, most often an unquoted comma inside
    a value (a thousands separator: ``1,234.5``). pandas' line counts blank lines and the
    header, the row does not (:func:`_long_row`)."""
    found = _MORE_FIELDS.search(str(exc))
    if found is None:
        return InputError(f"not a readable CSV file ({_first_line(exc)})", source=str(path))
    fields, line, saw = (int(g) for g in found.groups())
    return InputError(cell_count_problem(saw, fields), source=str(path),
                      row=_long_row(path, delimiter, fields) or line - 1)


def _long_row(path: Path, delimiter: str, fields: int) -> int | None:
    """The 1-based data row (blank lines not counted) of the first record of more than
    ``fields`` cells, as :mod:`csv` reads the file (only on the error path)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        records = (r for r in csv.reader(handle, delimiter=delimiter, skipinitialspace=True) if r)
        next(records, None)  # the header
        return next((row for row, record in enumerate(records, 1) if len(record) > fields), None)


def _check_parquet_rows(metadata: pq.FileMetaData, path: Path) -> None:
    """Refuse a Parquet file whose footer declares more rows than its bytes can hold, before
    pyarrow allocates them (a footer declaring 10**9 rows asked for 8 GB per column).

    Declared: rows x columns x 8 bytes (the least a column of numbers takes in memory).
    Allowed: :data:`MAX_PARQUET_EXPANSION` times the file's size, and never less than
    :data:`PARQUET_ALWAYS_READ` bytes."""
    declared = int(metadata.num_rows) * max(int(metadata.num_columns), 1) * 8
    allowed = max(MAX_PARQUET_EXPANSION * path.stat().st_size, PARQUET_ALWAYS_READ)
    if declared > allowed:
        raise InputError(f"the Parquet footer declares {metadata.num_rows} rows of "
                         f"{metadata.num_columns} columns ({declared} bytes in memory) in a file "
                         f"of {path.stat().st_size} bytes; the file is damaged or a "
                         f"decompression bomb (at most {MAX_PARQUET_EXPANSION} bytes in memory "
                         "per stored byte are read)", source=str(path))


def header_line(path: Path, errors: str = "strict") -> str:
    """The text of a CSV file's first record (UTF-8, BOM dropped): its first line, and the
    lines after it while a quoted cell is open, as :mod:`csv` reads it. Only the first
    :data:`MAX_HEADER_LINE` + 1 characters are read; a longer record is refused."""
    with open(path, encoding="utf-8-sig", errors=errors, newline="") as handle:
        text = handle.read(MAX_HEADER_LINE + 1)
    buffer = io.StringIO(text, newline="")
    try:
        next(csv.reader(buffer, skipinitialspace=True), None)
    except csv.Error as exc:
        raise InputError(f"not a readable CSV header ({exc})", source=str(path)) from None
    end = buffer.tell()
    if end > MAX_HEADER_LINE:
        raise InputError(f"the header line is longer than {MAX_HEADER_LINE} characters",
                         source=str(path))
    return text[:end]


def _check_csv_header(path: Path, delimiter: str) -> list[str]:
    """pandas renames a repeated header ('a', 'a.1'); refuse it instead, naming the column.
    A name beginning with U+FEFF (a second BOM: ``\ufeffrecording`` is not ``recording``)
    is refused too."""
    try:
        line = header_line(path)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=str(path)) from exc
    try:
        header = next(csv.reader(io.StringIO(line, newline=""), delimiter=delimiter,
                                 skipinitialspace=True), [])
    except csv.Error as exc:
        raise InputError(f"not a readable CSV header ({exc})", source=str(path)) from exc
    _check_unique_names([h.strip() for h in header], path)
    if delimiter == ",":
        check_not_semicolons(header, path)
    marked = next((h for h in header if h.startswith("\ufeff")), None)
    if marked is not None:  # the first BOM was dropped (utf-8-sig): this one is in the name
        raise InputError("the column name begins with a byte-order mark (U+FEFF; the file "
                         "starts with two, or one is inside the header): save the file with "
                         "at most one", source=str(path), column=marked.lstrip("\ufeff"))
    return header  # the column names as pandas reads them (skipinitialspace)


def check_not_semicolons(names: list[str], path: str | os.PathLike) -> None:
    """Refuse a comma-separated header read as one name holding ';': a semicolon-separated
    CSV (what a spreadsheet with a decimal comma writes)."""
    if len(names) == 1 and ";" in names[0]:
        raise InputError("the header holds ';' -- save as comma-separated (a semicolon-separated "
                         "CSV, as a spreadsheet with a decimal comma writes it, is read as one "
                         "column)", source=str(path))


def cell_count_problem(found: int, expected: int) -> str:
    """A row of ``found`` cells under a header of ``expected``; more cells than the header most
    often come from an unquoted comma inside a value (a thousands separator: ``1,234.5``)."""
    hint = (" (an unquoted comma inside a value, such as a thousands separator in 1,234.5, "
            "splits it: quote the value or drop the separator)") if found > expected else ""
    return f"{found} cells where the header has {expected}{hint}"


def _check_unique_names(names: list[str], path: Path, where: str = "header") -> None:
    """Refuse a column named twice (pandas renames a CSV's 'a', 'a' to 'a', 'a.1'; pyarrow
    refuses a Parquet file's in its own words, 'Multiple matches for FieldRef')."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"the column appears twice in the {where}", source=str(path),
                             column=name)
        seen.add(name)


_TEXTUAL = ("string", "mixed", "mixed-integer")


def ids_as_written(text: pd.Series) -> pd.Series:
    """An id column read as text, typed the way it was written (the rule is
    :func:`trackverify.tables.validate`'s; docs/reference/robustness.md, "Ids as written").

    * every non-blank value a canonical integer (:data:`~trackverify.tables.CANONICAL_INTEGER`:
      no sign '+', no leading zero, no space): int64 (nullable ``Int64`` when a cell is
      blank), converted exactly (no float passes), so ids above 2^53 beside a blank cell
      keep every digit; beyond int64, Python ints, which validation refuses naming the row;
    * every non-blank value a canonical integer or a decimal number
      (:data:`~trackverify.tables.DECIMAL_NUMBER`, ``45.0`` as pandas writes an integer
      column holding blanks): float64, which validation makes integers or refuses (a
      fractional id, one above 2^53), exactly as it treats a DataFrame's float ids;
    * otherwise the text itself, so ``'7'``, ``'07'`` and ``'007'`` stay three ids.
    """
    null = text.isna().to_numpy()
    present = text[~null]
    numbers = f"{CANONICAL_INTEGER}|{DECIMAL_NUMBER}"
    if present.empty or re.fullmatch(numbers, present.iloc[0]) is None:  # text at a glance
        return text.astype(object)
    if present.str.fullmatch(CANONICAL_INTEGER).all():
        try:
            values = present.to_numpy(dtype=object).astype(np.int64)
        except OverflowError:  # beyond int64: exact Python ints, refused by validation
            exact = [None if blank else int(v) for v, blank in zip(text, null)]
            return pd.Series(exact, index=text.index, name=text.name, dtype=object)
        if not null.any():
            return pd.Series(values, index=text.index, name=text.name)
        full = np.zeros(len(text), dtype=np.int64)
        full[~null] = values
        return pd.Series(pd.arrays.IntegerArray(full, null), index=text.index, name=text.name)
    if present.str.fullmatch(numbers).all():
        return pd.to_numeric(text).astype(np.float64)
    return text.astype(object)


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
            raise InputError(cell_count_problem(row.actual_columns, row.expected_columns),
                             source=where,
                             row=None if row.number is None else row.number - skip) from None
        raise InputError(f"not a readable CSV file ({str(exc).splitlines()[0]})", source=where) from None
    return table.to_pandas()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def load_table(path: str | os.PathLike, schema: Schema) -> pd.DataFrame:
    """Read ``path`` and validate it against ``schema``."""
    return validate(read_table(path), schema, source=str(path))


def arrow_table(df: pd.DataFrame) -> pa.Table:
    """``df`` as an Arrow table with deterministic bytes: no pandas metadata (library
    versions), and text as ``string`` whether pandas holds it as objects or as its string
    dtype (``large_string``), so a table read back and written again is the same file."""
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f
                        for f in table.schema])
    return table.cast(schema) if schema != table.schema else table


def write_table(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet or CSV (by suffix), atomically, without the index; a Parquet
    file's key-value metadata names the trackverify version that wrote it (``trackverify``)."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        from trackverify import __version__

        try:
            table = arrow_table(df)
        except pa.ArrowException as exc:  # e.g. a column mixing numbers and text
            raise InputError(f"cannot be written as Parquet ({_first_line(exc)})",
                             source=str(path)) from None
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               b"trackverify": __version__.encode()})
        return write_atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
    # A text cell that starts with a space is quoted (readers skip a cell's initial spaces);
    # only then are all text cells quoted, so ordinary tables keep their plain look.
    quoting = csv.QUOTE_NONNUMERIC if any(
        (df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype))
        and pd.api.types.infer_dtype(df[c], skipna=True) in _TEXTUAL
        and df[c].str.match(r"\s", na=False).any() for c in df.columns) else csv.QUOTE_MINIMAL
    return write_atomic(path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n",
                                                    quoting=quoting))


class ParquetStream:
    """Append tables (same columns) to one Parquet file, one row group per append.

    The file appears under its final name only when the context exits cleanly; on error
    or interruption the temporary file is removed, and so are the folders the stream created
    for it if they are left empty. Memory does not grow with the appends.
    """

    def __init__(self, path: str | os.PathLike, enabled: bool = True):
        self.path = Path(path)
        self.enabled = enabled
        self._writer: pq.ParquetWriter | None = None
        self._schema: pa.Schema | None = None
        self._tmp: Path | None = None
        self._created: list[Path] = []

    def __enter__(self) -> "ParquetStream":
        if self.enabled:
            self._created = missing_folders(self.path.parent)
            self._tmp = temporary_beside(self.path)
        return self

    def write(self, df: pd.DataFrame) -> None:
        if not self.enabled:
            return
        table = arrow_table(df)
        if self._writer is None:
            self._schema = table.schema
            self._writer = pq.ParquetWriter(self._tmp, self._schema, compression="zstd")
        self._writer.write_table(table.cast(self._schema))

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._writer is not None:
            self._writer.close()
        if exc_type is None and self._writer is not None:
            commit_temporary(self._tmp, self.path)
        elif self._tmp is not None:
            discard_temporary(self._tmp)
            remove_empty(self._created)
