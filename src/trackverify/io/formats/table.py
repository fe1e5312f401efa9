"""trackverify's own tables (CSV / TSV / Parquet), with an optional column mapping: the
pieces :func:`trackverify.io.tracks.read_tracks` reads them with (the rules, units included,
are stated there).

``--columns frame=t,pred_id=id,x_um=x`` renames the file's columns (``t`` -> ``frame`` ...)
before the table is validated as the project's reference, prediction or observation table
(:mod:`trackverify.tables`). A z axis left in an unmapped column (``z``, ``Z``, ``z_px`` ...
beside ``x_um``, ``y_um``) is refused with the complete ``--columns`` value that reads it.
A table that misses the project's
columns is refused with the columns it has and, when its header is a known tracker's
(:mod:`.dataframe`), the ``--format`` to give, or when it has a frame, an id and x, y under
names trackers use, the exact ``--columns`` mapping to try.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.tables import (closest_hint,
                                validate)



def sniff(path: Path) -> bool:
    return path.is_file()


def read(path: Path):
    raise InputError("a trackverify table is read as a reference, prediction or observation "
                     "table, not as tracks", source=str(path))


def apply_mapping(df, mapping: dict[str, str], source: str):
    """Rename the file's columns; a mapped name the file lacks is an error with suggestions."""
    present = [str(c) for c in df.columns]
    absent = [name for name in mapping if name not in present]
    if absent:
        hints = [f"'{name}'{closest_hint(name, present)}" for name in absent]
        raise InputError(f"--columns names column(s) the file does not have: {', '.join(hints)}; "
                         f"found {present}", source=source)
    return df.rename(columns=mapping)


def validated(df, schema, kind: str, source: str, mapping: dict[str, str],
              path: Path | None = None, names: list[str] | None = None):
    """``validate(df, schema)``; a missing column's error adds the ``--format`` or
    ``--columns`` to try when the header is a tracker's (:func:`.dataframe.columns_hint`;
    ``names``: the file's columns, when ``df`` has more)."""
    try:
        return validate(df, schema, source)
    except InputError as exc:
        if not exc.problem.startswith("missing required column"):
            raise
        from trackverify.io.formats.dataframe import columns_hint, header

        names = [str(c) for c in (df.columns if names is None else names)]
        if len(names) == 1 and not mapping and path is not None:  # a space-separated file?
            names = header(path)
        hint = columns_hint(names, kind)
        if not hint:
            raise
        raise InputError(exc.problem + hint, source=exc.source, column=exc.column,
                         row=exc.row) from None


def columns_text(mapping: dict[str, str]) -> str:
    """A mapping (the file's name -> the project's) as ``--columns`` takes it."""
    return ",".join(f"{project}={name}" for name, project in mapping.items())


def check_axes(df, mapping: dict[str, str], source: str, prefix: str = "") -> None:
    """Refuse a table whose ``x_um`` and ``y_um`` are read but whose z axis is left in a
    column of another name (trackers' names of z, :data:`.dataframe.ALIASES`, or ``z_um``,
    case ignored: ``z``, ``Z``, ``z_px`` ...) that
    holds at least two different numbers (a constant column carries no position), with the
    complete ``--columns`` value that reads it (``prefix`` before it, e.g. ``--format table``).
    ``df`` is the table after ``mapping`` (the file's name -> the project's)."""
    from trackverify.io.formats.dataframe import ALIASES

    if not {"x_um", "y_um"} <= set(df.columns) or "z_um" in df.columns:
        return
    names = {*ALIASES["z_um"], "z_um"}
    for column in (c for c in df.columns if str(c).lower() in names):
        values = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        if len(values) and values.min() != values.max():
            fix = columns_text({**mapping, str(column): "z_um"})
            raise InputError(f"the column '{column}' looks like the z axis but is not read (x_um "
                             f"and y_um are): give {prefix}--columns {fix} (or drop the column "
                             "for 2-D positions)", source=source, column=str(column))
