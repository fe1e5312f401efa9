"""Many tracker files audited at once (``trackverify audit A B C --out DIR --jobs N``).

Each file is audited on its own, exactly as ``trackverify audit FILE --out DIR/<name>`` would
(the same options, the same outputs), ``jobs`` at a time on ``executor``
(:func:`trackverify.execute.ordered_map`: a process pool, or Ray); ``DIR/audits.csv`` lists
them, one row per file, in the order given. ``<name>`` is the file's name without its
suffix (two files of one name are refused before any work: :func:`trackverify.io.paths.child_paths`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

#: The columns of ``audits.csv``.
SUMMARY_COLUMNS = ("file", "folder", "rows", "audited", "certified", "flagged", "abstained",
                   "events")


def audit_files(paths: list[str | os.PathLike], out: str | os.PathLike, *, jobs: int = 1,
                executor: str = "process", progress=None, **options) -> pd.DataFrame:
    """Audit each of ``paths`` into ``out/<name>/`` (module docstring) and return the table
    written to ``out/audits.csv``. ``options`` are :func:`trackverify.audit`'s (its
    ``detections``, one table for one recording's file, is refused here); ``progress(name,
    done, total)`` is called as each file is written."""
    from trackverify.errors import InputError
    from trackverify.execute import ordered_map
    from trackverify.io.atomic import ensure_folder
    from trackverify.io.paths import check_out_dir, child_paths
    from trackverify.io.tabular import write_table

    if options.get("detections") is not None:
        raise InputError("--detections holds one file's detections: audit one TRACKS file "
                         "with it, or each file on its own")
    paths = [Path(p) for p in paths]
    check_out_dir(out, [*paths, options.get("calibration")])
    folders = child_paths(out, [p.stem for p in paths], what="tracks file")
    ensure_folder(out)
    tasks = [(path, folder, options) for path, folder in zip(paths, folders)]
    rows = []
    for i, row in enumerate(ordered_map(_audit_one, tasks, jobs, executor)):
        rows.append(row)
        if progress is not None:
            progress(row["file"], i + 1, len(tasks))
    table = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    write_table(table, Path(out) / "audits.csv")
    return table


def _audit_one(task: tuple) -> dict:
    """One file audited into its folder; its ``audits.csv`` row (module-level: picklable)."""
    from trackverify.audit.core import audit

    path, folder, options = task
    counts = audit(path, out=folder, **options).summary["counts"]
    return {"file": str(path), "folder": str(folder), "rows": counts["rows"],
            **{k: counts[k] for k in ("audited", "certified", "flagged", "abstained", "events")}}
