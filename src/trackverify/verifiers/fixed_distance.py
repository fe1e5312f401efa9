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

from trackverify.anchors import distance_to_anchor


class FixedDistance:
    name = "fixed_distance"
    evidence = "consistency"

    def score(self, table: pd.DataFrame) -> np.ndarray:
        return distance_to_anchor(table, "pred_id", table["pred_valid"].to_numpy(dtype=bool))
