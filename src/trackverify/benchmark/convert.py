"""``trackverify convert``: a run's data (NWB files, observation tables, trackers' files) as
``observations.parquet`` + ``recordings.csv`` or as NWB, one file per recording."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from trackverify.benchmark.dataset import load_dataset
from trackverify.errors import InputError
from trackverify.io.nwb import read_nwb, write_nwb
from trackverify.tables import plain


def read_any(path: Path, **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Observations and recordings from an NWB file, a folder of them, or anything
    :func:`trackverify.benchmark.dataset.load_dataset` reads (a folder with ``observations.parquet``
    (+ ``recordings.csv``), an observation table, a tracker's file; ``options`` are its
    ``fmt``, ``columns`` and ``pixel_size``)."""
    path = Path(path)
    fmt = options.get("fmt")
    if fmt in (None, "nwb") and path.is_file() and path.suffix.lower() == ".nwb":
        return read_nwb(path)
    if fmt in (None, "nwb") and path.is_dir():
        files = sorted(path.glob("*.nwb"))
        if files:
            parts = [read_nwb(p) for p in files]
            first: dict[Any, Path] = {}
            for file, (_, recordings) in zip(files, parts):
                name = plain(recordings["recording"].iloc[0])
                other = first.setdefault(name, file)
                if other != file:
                    raise InputError(f"holds recording {name!r} (its identifier), like "
                                     f"{other}; one recording per file, each file once",
                                     source=str(file))
            return (pd.concat([p[0] for p in parts], ignore_index=True),
                    pd.concat([p[1] for p in parts], ignore_index=True))
    dataset = load_dataset(path, **options)
    return dataset._observations, dataset.recordings


def convert(source: str | os.PathLike, to: str, out: str | os.PathLike, *,
            layout: str = "rois", voxel_um: float | None = None, **options) -> list[Path]:
    """``to="parquet"``: write ``out/observations.parquet`` and ``out/recordings.csv``.
    ``to="nwb"``: one file per recording: ``out`` itself if it ends in ``.nwb`` (one
    recording only), else ``out/<recording>.nwb``. ``options`` (``fmt``, ``columns``,
    ``pixel_size``) say how to read ``source`` (:func:`read_any`)."""
    from trackverify.io.paths import child_paths
    from trackverify.io.tabular import write_table

    if to == "nwb":
        from trackverify.extras import require

        for module in ("hdmf", "pynwb", "ndx_multichannel_volume"):  # before reading anything
            require(module, "nwb", "convert --to nwb")
    obs, recordings = read_any(Path(source), **options)
    out = Path(out)
    if to == "parquet":
        return [write_table(obs, out / "observations.parquet"),
                write_table(recordings, out / "recordings.csv")]
    if to != "nwb":
        raise InputError(f"unknown target format {to!r} (use parquet or nwb)")
    names = list(pd.unique(obs["recording"]))
    if out.suffix.lower() == ".nwb" and len(names) != 1:
        raise InputError(f"{len(names)} recordings need one NWB file each; give a folder as "
                         "--out", source=str(out))
    rows = {r["recording"]: r for r in recordings.to_dict("records")}
    targets = [out] if out.suffix.lower() == ".nwb" else child_paths(
        out, names, ".nwb", source=str(source))  # every name checked before any file is written
    written = []
    for name, target in zip(names, targets):
        written.append(write_nwb(obs[obs["recording"] == name], target,
                                 recording=rows.get(name), layout=layout, voxel_um=voxel_um))
    return written

