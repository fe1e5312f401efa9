"""Protocol ``tracking_gt`` on an observation table: the tracker's identities vs the reference.

Each row of an observation table is a reference observation with the prediction on its
detection, so predictions are linked by detection: the oracle diagnostics apply directly,
and for the canonical metrics two observations on the same detection have similarity 1.
"""

from __future__ import annotations

import pandas as pd

from trackverify.metrics import mot
from trackverify.tables import coordinate_columns
from trackverify.metrics.tracking import (RecordingScore, check_predictions, pool_recordings,
                                     score_recording)


def tracking_gt(observations: pd.DataFrame, zero_distance_um: float,
                source: str = "<observations>") -> RecordingScore:
    """Diagnostics, canonical metrics and identity report of one recording's clean
    observation table."""
    coords = coordinate_columns(observations)
    reference = observations[["recording", "frame", "track", "detection", *coords]]
    predictions = observations[["recording", "frame", "pred_id", "detection", "pred_valid", *coords]]
    check_predictions(reference, predictions, source)
    # the identity-size refusal unnamed (source None), so that the run names the data file
    # (errors.naming_input)
    return score_recording(reference, predictions, zero_distance_um, True, None)


def pool(scored: list[tuple[dict, mot.SequenceCounts]]) -> dict:
    return pool_recordings(scored)
