"""CSV and Parquet tables at the edge: read with clear errors, write atomically."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from trackverify.errors import InputError
from trackverify.io.atomic import commit_temporary, temporary_beside, write_atomic
from trackverify.io.bounded import regular_file
from trackverify.tables import Schema, validate

PARQUET_SUFFIXES = {".parquet", ".pq"}
CSV_SUFFIXES = {".csv", ".txt", ".tsv"}


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV (UTF-8, BOM tolerated) or Parquet file into a DataFrame, unvalidated."""
    path = regular_file(path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", source=str(path))
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        try:
            return pq.read_table(path).to_pandas()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", source=str(path)) from exc
    if suffix in CSV_SUFFIXES or suffix == "":
        _check_csv_header(path, "\t" if suffix == ".tsv" else ",")
        try:
            return pd.read_csv(path, encoding="utf-8-sig", sep="\t" if suffix == ".tsv" else ",",
                               skipinitialspace=True)
        except pd.errors.EmptyDataError as exc:
            raise InputError("the file has no header line", source=str(path)) from exc
        except (pd.errors.ParserError, UnicodeDecodeError, csv.Error, ValueError) as exc:
            raise InputError(f"not a readable CSV file ({_first_line(exc)})",
                             source=str(path)) from exc
    raise InputError(f"unknown table format '{suffix}' (use .csv or .parquet)", source=str(path))


def _check_csv_header(path: Path, delimiter: str) -> None:
    """pandas renames a repeated header ('a', 'a.1'); refuse it instead, naming the column."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle, delimiter=delimiter), [])
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=str(path)) from exc
    except csv.Error as exc:
        raise InputError(f"not a readable CSV header ({exc})", source=str(path)) from exc
    seen: set[str] = set()
    for name in (h.strip() for h in header):
        if name in seen:
            raise InputError("the column appears twice in the header", source=str(path), column=name)
        seen.add(name)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def load_table(path: str | os.PathLike, schema: Schema) -> pd.DataFrame:
    """Read ``path`` and validate it against ``schema``."""
    return validate(read_table(path), schema, source=str(path))


def write_table(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet or CSV (by suffix), atomically, without the index."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        table = pa.Table.from_pandas(df, preserve_index=False)
        # Deterministic bytes: no pandas metadata with library versions, fixed compression.
        table = table.replace_schema_metadata(None)
        return write_atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
    return write_atomic(path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))


class ParquetStream:
    """Append tables (same columns) to one Parquet file, one row group per append.

    The file appears under its final name only when the context exits cleanly; on error
    or interruption the temporary file is removed. Memory does not grow with the appends.
    """

    def __init__(self, path: str | os.PathLike, enabled: bool = True):
        self.path = Path(path)
        self.enabled = enabled
        self._writer: pq.ParquetWriter | None = None
        self._schema: pa.Schema | None = None
        self._tmp: Path | None = None

    def __enter__(self) -> "ParquetStream":
        if self.enabled:
            self._tmp = temporary_beside(self.path)
        return self

    def write(self, df: pd.DataFrame) -> None:
        if not self.enabled:
            return
        table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
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
            self._tmp.unlink(missing_ok=True)
