"""The review sample: stratified by recording x verdict, allocated by a rule fixed in advance.

Population: the audited observations of ``audit.parquet`` (after the anchor frame, with a
valid predicted id, each track's own start aside: the rows the audit judges). Each sampled
row carries its track's ``start_frame``: a reviewer decides whether the observation is on
the neuron of its track's start (docs/guide/error-rate.md), whatever its stratum. Strata: (recording, verdict), the flagged observations split in two:
``flagged_on_other``, those nearer another identity's registered place than their own
(:func:`trackverify.audit.events.on_another_place`, the evidence the events rank by), and
``flagged``, the rest (an audit without look-alikes has no ``flagged_on_other``). The split
is the physical one the audit already draws, not a bin set on any recording: on the real
tracker's development half 90 % of the first and 8 % of the second are wrong, so each
stratum is purer than the flagged ones together and the interval narrower
(docs/evidence/error-rate.md). Allocation (Neyman with planning values
fixed before any data are seen, and a floor): stratum ``h`` gets a share of ``n``
proportional to ``N_h * sqrt(p_h (1 - p_h))`` with the planning error rate ``p_h`` =
:data:`PLANNING_RATE` of its verdict (0.05 for certified, 0.5 otherwise: the most uncertain
value), at least ``min(N_h, FLOOR)`` and at most ``N_h``; rounding by largest remainder, ties
to the earlier stratum. The review order (:mod:`trackverify.review.sequence`): each
row's stratum is drawn with probability ``n_h / n`` among the strata not yet exhausted, and
each stratum's rows come in a uniformly random order without replacement, all from
``numpy.random.Generator(PCG64(seed))`` before any decision; so every prefix of
``review.csv`` is a sample of the design, the number of rows of stratum ``h`` in the sheet is
random around ``n_h``, and given it each row of ``h`` had inclusion probability
``rows_h / N_h``. ``review.csv`` does not name the stratum (the review is blind to the
verdict); ``sample.json`` holds each row's stratum and frame in ``order``.

Where each row is in other tools (:data:`WHERE`): ``row``, the observation's row in the
tracks as read (1-based: a CSV or Parquet table's data row; audit.parquet keeps the rows in
that order), ``x_file, y_file[, z_file]``, its position in the file's own units (the
micrometres divided by audit.json's ``input.calibration.um_per_unit``; empty when the
positions came from the detections table), and with images (:class:`ImageSource`) the
volume's ``t_index`` and fractional voxel indices ``x_voxel, y_voxel, z_voxel`` (voxel
``i``'s centre at ``i``; empty for another recording or a frame the volume lacks).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.review.sequence import (ALPHA, PRIOR_WEIGHT, TRUNCATION, occurrence_rank,
                                               stratum_sequence)
from trackverify.review.sheet import RECORD
from trackverify.errors import InputError
from trackverify.io.atomic import write_json_atomic
from trackverify.io.tabular import read_table, write_table

#: Planning error rate of each stratum kind (fixed in advance, not fitted to any recording).
PLANNING_RATE = {"certified": 0.05, "flagged": 0.5, "flagged_on_other": 0.5, "abstained": 0.5}
#: Smallest sample of a stratum (all of it when smaller): room for an interval per stratum.
FLOOR = 10
REVIEW_COLUMNS = ["recording", "frame", "pred_id", "detection", "row", "x_um", "y_um", "z_um",
                  "x_file", "y_file", "z_file", "start_frame"]
#: Where a row is in other tools (module docstring).
WHERE = ["row", "x_file", "y_file", "z_file", "t_index", "x_voxel", "y_voxel", "z_voxel"]
DEFAULT_SEED = 20261205


def audited_population(audit_dir: Path) -> pd.DataFrame:
    """The audited rows of ``audit_dir/audit.parquet`` in (recording, frame, detection) order,
    with their ``stratum`` (``recording/verdict``)."""
    from trackverify.audit.result import audited

    path = Path(audit_dir) / "audit.parquet"
    if not path.is_file():
        raise InputError("no audit.parquet: give the --out folder of `trackverify audit`",
                         source=str(audit_dir))
    rows = read_table(path)
    rows = rows[audited(rows)]
    rows = rows.sort_values(["recording", "frame", "detection"], kind="stable")
    from trackverify.audit.events import on_another_place

    kind = rows["verdict"].astype(str).to_numpy(dtype=object)
    kind = np.where(on_another_place(rows), "flagged_on_other", kind)
    return rows.assign(stratum=rows["recording"].astype(str) + "/" + kind)


def allocate(sizes: np.ndarray, rates: np.ndarray, n: int, floor: int = FLOOR) -> np.ndarray:
    """Sample sizes ``n_h`` for strata of ``sizes`` ``N_h`` (module docstring's rule).

    >>> allocate(np.array([800, 200]), np.array([0.05, 0.5]), 50).tolist()
    [32, 18]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if n > sizes.sum():
        raise InputError(f"--n {n} is more than the {int(sizes.sum())} audited observations")
    low = np.minimum(sizes, floor)
    if n < low.sum():
        raise InputError(f"--n {n} is less than the {int(low.sum())} the design needs "
                         f"({floor} per stratum, {len(sizes)} strata)")
    weight = sizes * np.sqrt(rates * (1 - rates))
    weight = np.where(weight > 0, weight, sizes * 1e-9)
    fixed = np.zeros(len(sizes), dtype=bool)
    share = low.astype(float)
    for _ in range(len(sizes) + 1):  # strata pinned to their floor or size, then the rest
        free = ~fixed
        ideal = (n - share[fixed].sum()) * weight / weight[free].sum()
        share = np.where(fixed, share, ideal)
        pin = free & ((share < low) | (share > sizes))
        if not pin.any():
            break
        share = np.where(pin, np.clip(share, low, sizes), share)
        fixed |= pin
    whole = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - whole), kind="stable")
    room = order[whole[order] < sizes[order]]
    whole[room[: n - whole.sum()]] += 1
    return whole


def draw_sample(audit_dir: str | os.PathLike, n: int, seed: int = DEFAULT_SEED,
                images=None) -> tuple[Path, dict]:
    """Draw the review sample of ``audit_dir``; write ``review.csv`` and ``sample.json`` there.

    ``images``: an :class:`~trackverify.review.images.ImageSource`: review.csv also gives
    each row's voxel indices, and sample.json how the volume was read and whether the
    tracks sit on it (checked on the anchor frame; ``design["images"]["alignment"]``).

    Refuses (:class:`InputError`) to replace a ``review.csv`` that holds a decision.
    Returns the path of ``review.csv`` and the design written to ``sample.json``.
    ``trackverify.sample_review`` is this function; the command is ``trackverify audit sample``.

    Example (``audit`` is the ``--out`` folder of ``trackverify audit``)::

        review, design = trackverify.sample_review("audit", n=200, seed=7)
        [(s["stratum"], s["N"], s["n"]) for s in design["strata"]]
        design["order"]["stratum"][:5]   # the strata of the first rows (review.csv is blind)
    """
    audit_dir = Path(audit_dir)
    review = audit_dir / "review.csv"
    if review.is_file():
        old = read_table(review)
        if "decision" in old and old["decision"].notna().any():
            raise InputError("holds decisions; move it away to draw a new sample",
                             source=str(review), column="decision")
    rows = audited_population(audit_dir)
    names, codes = np.unique(rows["stratum"].to_numpy(dtype=str), return_inverse=True)
    sizes = np.bincount(codes, minlength=len(names))
    verdicts = [name.rsplit("/", 1)[1] for name in names]
    rates = np.array([PLANNING_RATE[v] for v in verdicts])
    planned = allocate(sizes, rates, n)
    share = planned / n
    rng = np.random.Generator(np.random.PCG64(seed))
    order = stratum_sequence(sizes, share, n, rng)
    picked = review_rows(codes, sizes, order, rng)
    sample = rows.iloc[picked]
    table = sample.assign(**file_coordinates(sample, audit_dir)).assign(row=sample.index + 1)
    table = table.reindex(columns=REVIEW_COLUMNS)
    shown = None
    if images is not None:
        shown = _voxels(audit_dir, images)
        try:
            table = pd.concat([table, shown.voxels(sample)], axis=1)
        finally:
            shown.close()
    table = table.assign(decision=None, **dict.fromkeys(RECORD, None))
    table["pred_id"] = ids(table["pred_id"])
    held = np.bincount(order, minlength=len(names))
    from trackverify import __version__

    design = {"seed": seed, "n": int(n), "population": "audited observations of audit.parquet",
              "audit": str(audit_dir), "trackverify": __version__,
              "allocation": {"rule": "Neyman with planning error rates, floor, largest remainder",
                             "planning_rate": PLANNING_RATE, "floor": FLOOR},
              "order": {"rule": "each row's stratum drawn with probability share among the "
                                "strata not exhausted, each stratum's rows in a uniformly "
                                "random order without replacement",
                        "stratum": order.tolist(),
                        "frame": sample["frame"].astype("int64").tolist()},
              "sequence": {"alpha": ALPHA, "horizon": int(n), "truncation": TRUNCATION,
                           "prior_weight": PRIOR_WEIGHT},
              "strata": [{"stratum": str(names[h]), "N": int(sizes[h]), "n": int(held[h]),
                          "planned": int(planned[h]), "share": float(share[h]),
                          "planning_rate": float(rates[h]),
                          "inclusion_probability": float(held[h] / sizes[h])}
                         for h in range(len(names))]}
    if shown is not None:
        design["images"] = shown.describe()
    write_table(table, review)
    write_json_atomic(audit_dir / "sample.json", design)
    return review, design


def file_coordinates(rows: pd.DataFrame, audit_dir: Path) -> dict[str, np.ndarray]:
    """``x_file, y_file[, z_file]`` of ``rows`` (module docstring); NaN when unknown."""
    from trackverify.review.items import read_settings

    read = read_settings(Path(audit_dir)).get("input") or {}
    factors = (read.get("calibration") or {}).get("um_per_unit")
    dims = [a for a in "xyz" if f"{a}_um" in rows]
    known = str(read.get("positions") or "").startswith("tracks") and isinstance(
        factors, list) and len(factors) == len(dims)
    return {f"{a}_file": rows[f"{a}_um"].to_numpy(float) / float(factors[k]) if known
            else np.full(len(rows), np.nan) for k, a in enumerate(dims)}


def _voxels(audit_dir: Path, images):
    """The volume of ``images`` opened and checked for the audit of ``audit_dir``."""
    from trackverify.review.images import open_images
    from trackverify.review.items import anchor_frames, read_settings

    audit = read_table(Path(audit_dir) / "audit.parquet")
    audit = audit.assign(recording=audit["recording"].astype(str))
    return open_images(images, audit, anchor_frames(audit, read_settings(Path(audit_dir))))


def review_rows(codes: np.ndarray, sizes: np.ndarray, order: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """Positions (into the population, whose rows have stratum ``codes``) of the rows of a
    review whose strata are ``order``: stratum ``h``'s rows drawn without replacement in a
    uniformly random order (``rng.choice``), stratum by stratum."""
    members = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rank = occurrence_rank(order, len(sizes))
    picked = np.empty(len(order), dtype=np.int64)
    for h in range(len(sizes)):
        here = order == h
        chosen = members[starts[h] + rng.choice(sizes[h], int(here.sum()), replace=False)]
        picked[here] = chosen[rank[here]]
    return picked


def ids(values: pd.Series) -> pd.Series:
    """Whole-number float ids (the audit's table) as integers, others unchanged."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all() and (numbers % 1 == 0).all():
        return numbers.astype("int64")
    return values
