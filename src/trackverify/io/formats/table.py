"""trackverify's own tables (CSV / TSV / Parquet), with an optional column mapping.

``--columns frame=t,pred_id=id,x_um=x`` renames the file's columns (``t`` -> ``frame`` ...)
before the table is validated as the project's reference, prediction or observation table
(:mod:`trackverify.tables`). Coordinates are micrometres; when ``--columns`` maps the
coordinates from other names (``x_um=x``) and ``--pixel-size`` is given, they are taken as
pixels and multiplied (recorded in the manifest); without it, coordinates mapped from names
that say pixels (``x_px``) get the formats' units warning. Columns already named ``x_um`` are
never rescaled. A z axis left in an unmapped column (``z``, ``Z``, ``z_px`` ... beside
``x_um``, ``y_um``) is refused with the complete ``--columns`` value that reads it.
A single-recording table may leave out ``recording``. A table that misses the project's
columns is refused with the columns it has and, when its header is a known tracker's
(:mod:`.dataframe`), the ``--format`` to give, or when it has a frame, an id and x, y under
names trackers use, the exact ``--columns`` mapping to try.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.tabular import read_table
from trackverify.tables import (OBSERVATIONS, PREDICTIONS, READ_AS_IDS, REFERENCE, closest_hint,
                                validate)

SCHEMAS = {"reference": REFERENCE, "predictions": PREDICTIONS, "observations": OBSERVATIONS}
#: A column name that says its values are pixels: ``px``, ``pix`` or ``pixel(s)`` as a word.
PIXEL_NAME = re.compile(r"(?:^|[^a-z])(?:px|pix|pixels?)(?:$|[^a-z])", re.IGNORECASE)


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


def load_as(path: Path, kind: str, mapping: dict[str, str], scale, recording: str | None):
    from trackverify.io.formats import Loaded, id_kinds

    source = str(path)
    mapped_ids = tuple(name for name, target in mapping.items() if target in READ_AS_IDS)
    df = apply_mapping(read_table(path, id_columns=mapped_ids), mapping, source)
    kinds = id_kinds(df)  # as written: validation makes recording ids text
    if recording is not None and "recording" not in df.columns:
        df = df.assign(recording=recording)
    check_axes(df, mapping, source)
    table = validated(df, SCHEMAS[kind], kind, source, mapping, path)
    table, calibration, notes = to_micrometres(table, mapping, scale, source)
    info = {"path": source, "format": "table", "columns": mapping or None,
            "calibration": calibration}
    return Loaded(table, info, notes, kinds)


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


def to_micrometres(table, mapping: dict[str, str], scale, source: str):
    """``(table, calibration record, warnings)`` of a validated table: coordinates mapped from
    other names are multiplied by ``--pixel-size`` when given; without it, coordinates mapped
    from names that say pixels (``x_px``, ``X (pixel)``) are taken as micrometres with the
    formats' warning (:func:`.units.assumed_micrometres`); columns named ``x_um`` are never
    rescaled. Plus the units' plausibility warnings."""
    from trackverify.io.formats.units import (assumed_micrometres, expand_scale,
                                              plausibility_warnings)

    coords = [c for c in ("x_um", "y_um", "z_um") if c in table.columns]
    named = {project: name for name, project in mapping.items()}
    mapped = [c for c in coords if c in named]
    notes = []
    if scale is not None and coords and not mapped:
        notes.append(f"{source}: --pixel-size ignored, the table's columns are named in um")
    if scale is not None and mapped:
        factors = expand_scale(scale, len(coords), source)
        table = table.copy()
        for column, factor in zip(coords, factors):
            table[column] = table[column].to_numpy(dtype=np.float64) * factor
        calibration = {"unit": "pixel", "um_per_unit": list(factors), "source": "--pixel-size"}
    elif any(PIXEL_NAME.search(named[c]) for c in mapped):
        calibration, note = assumed_micrometres("pixel", len(coords), source)
        notes.append(note)
    else:
        calibration = {"unit": "um", "um_per_unit": [1.0] * len(coords),
                       "source": "column names (x_um, y_um, z_um)"}
    return table, calibration, notes + (plausibility_warnings(table, source) if coords else [])
