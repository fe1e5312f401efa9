"""trackverify's own tables (CSV / TSV / Parquet), with an optional column mapping.

``--columns frame=t,pred_id=id,x_um=x`` renames the file's columns (``t`` -> ``frame`` ...)
before the table is validated as the project's reference, prediction or observation table
(:mod:`trackverify.tables`). Coordinates are micrometres; when ``--columns`` maps the
coordinates from other names (``x_um=x``) and ``--pixel-size`` is given, they are taken as
pixels and multiplied (recorded in the manifest). Columns already named ``x_um`` are never
rescaled.
A single-recording table may leave out ``recording``. A table that misses the project's
columns is refused with the columns it has and, when its header is a known tracker's
(:mod:`.dataframe`), the ``--format`` to give, or when it has a frame, an id and x, y under
names trackers use, the exact ``--columns`` mapping to try.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trackverify.errors import InputError
from trackverify.io.tabular import read_table
from trackverify.tables import (OBSERVATIONS, PREDICTIONS, READ_AS_IDS, REFERENCE, closest_hint,
                                validate)

SCHEMAS = {"reference": REFERENCE, "predictions": PREDICTIONS, "observations": OBSERVATIONS}


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
    from trackverify.io.formats import Loaded
    from trackverify.io.formats.units import expand_scale, plausibility_warnings

    source = str(path)
    mapped_ids = tuple(name for name, target in mapping.items() if target in READ_AS_IDS)
    df = apply_mapping(read_table(path, id_columns=mapped_ids), mapping, source)
    if recording is not None and "recording" not in df.columns:
        df = df.assign(recording=recording)
    try:
        table = validate(df, SCHEMAS[kind], source)
    except InputError as exc:
        if not exc.problem.startswith("missing required column"):
            raise
        from trackverify.io.formats.dataframe import columns_hint, header

        names = [str(c) for c in df.columns]
        if len(names) == 1 and not mapping:  # one column: a space-separated file (btrack's)?
            names = header(path)
        hint = columns_hint(names, kind)
        if not hint:
            raise
        raise InputError(exc.problem + hint, source=exc.source, column=exc.column,
                         row=exc.row) from None
    coords = [c for c in ("x_um", "y_um", "z_um") if c in table.columns]
    mapped = [c for c in coords if c in mapping.values()]
    notes = []
    if scale is not None and coords and not mapped:
        notes.append(f"{source}: --pixel-size ignored, the table's columns are named in um")
    if scale is not None and mapped:
        factors = expand_scale(scale, len(coords), source)
        for column, factor in zip(coords, factors):
            table[column] = table[column].to_numpy(dtype=np.float64) * factor
        calibration = {"unit": "pixel", "um_per_unit": list(factors), "source": "--pixel-size"}
    else:
        calibration = {"unit": "um", "um_per_unit": [1.0] * len(coords),
                       "source": "column names (x_um, y_um, z_um)"}
    info = {"path": source, "format": "table", "columns": mapping or None,
            "calibration": calibration}
    return Loaded(table, info, notes + (plausibility_warnings(table, source) if coords else []))
