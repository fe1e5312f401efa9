"""The anchor frame (frame 0): trusted, never corrupted, the reference of every label.

One place for what the corruption labels, the fixed-distance verifier and the consistency
protocol all read from the anchor frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.tables import coordinate_columns

ANCHOR_FRAME = 0


def anchor_identities(table: pd.DataFrame) -> pd.Series:
    """Track -> the predicted id it carries, validly, in the anchor frame."""
    anchor = table[(table["frame"].to_numpy() == ANCHOR_FRAME) & table["pred_valid"].to_numpy(dtype=bool)]
    return pd.Series(anchor["pred_id"].to_numpy(), index=anchor["track"].to_numpy())


def anchor_positions(table: pd.DataFrame) -> tuple[pd.Index, np.ndarray]:
    """The anchor identities and their positions: the predicted ids of the valid rows of the
    anchor frame that occur there once (an id on two anchor rows has no position), and those
    rows' coordinates (n, D) as float64. Reads the anchor frame only."""
    at_anchor = (table["frame"].to_numpy() == ANCHOR_FRAME) & table["pred_valid"].to_numpy(dtype=bool)
    ids = pd.Index(table["pred_id"][at_anchor])
    xyz = table.loc[at_anchor, coordinate_columns(table)].to_numpy(dtype=np.float64)
    keep = ~ids.duplicated(keep=False)
    return ids[keep], xyz[keep]


def distance_to_anchor(table: pd.DataFrame, key: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Distance (um) of each row from the anchor-frame position of its ``key`` value.

    Only ``rows`` (all rows by default) take part, both as anchors and as scored rows. A
    key with no anchor observation, or with two (no single anchor position), gives NaN.
    """
    rows = np.ones(len(table), dtype=bool) if rows is None else rows
    coords = coordinate_columns(table)
    at_anchor = (table["frame"].to_numpy() == ANCHOR_FRAME) & rows
    keys = pd.Index(table[key][at_anchor])
    positions = table[coords].to_numpy()
    anchor_xyz = positions[at_anchor]
    if keys.has_duplicates:
        unique = ~keys.duplicated(keep=False)
        keys, anchor_xyz = keys[unique], anchor_xyz[unique]
    which = keys.get_indexer(table[key])
    usable = rows & (which >= 0)
    out = np.full(len(table), np.nan)
    out[usable] = np.linalg.norm(positions[usable] - anchor_xyz[which[usable]], axis=1)
    return out
