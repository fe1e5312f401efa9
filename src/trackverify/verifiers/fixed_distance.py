"""The built-in fixed-reference-distance verifier (SPEC section 5).

For a row at frame ``t`` with valid predicted id ``p``: the anchor position of ``p`` is the
position, in the anchor frame (frame 0), of the observation that carries ``p`` validly there.
The score is the Euclidean distance (um) between the row's position and that anchor
position, with no refitting to the candidate tracks. A prediction that is invalid, or whose
id has no anchor (a fragment's new id), is abstained (NaN).

It penalises real tissue motion, so it is a *consistency* diagnostic of the
small-deformation hypothesis, not an independent certificate. Its usual threshold (5 um)
is a demonstration value, not a calibrated guarantee.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.tables import coordinate_columns

ANCHOR_FRAME = 0


class FixedDistance:
    name = "fixed_distance"
    evidence = "consistency"

    def score(self, table: pd.DataFrame) -> np.ndarray:
        coords = coordinate_columns(table)
        frames = table["frame"].to_numpy()
        valid = table["pred_valid"].to_numpy(dtype=bool)
        anchor_rows = (frames == ANCHOR_FRAME) & valid
        anchor_ids = pd.Index(table["pred_id"][anchor_rows])
        anchor_xyz = table.loc[anchor_rows, coords].to_numpy()
        if anchor_ids.has_duplicates:
            # Two anchor observations with one id: the id has no single anchor position.
            keep = ~anchor_ids.duplicated(keep=False)
            anchor_ids, anchor_xyz = anchor_ids[keep], anchor_xyz[keep]
        which = anchor_ids.get_indexer(table["pred_id"])
        usable = valid & (which >= 0)
        scores = np.full(len(table), np.nan)
        positions = table[coords].to_numpy()
        scores[usable] = np.linalg.norm(positions[usable] - anchor_xyz[which[usable]], axis=1)
        return scores
