"""Protocol ``tracking_gt`` on an observation table: the tracker's identities vs the reference.

Each row of an observation table is a reference observation with the prediction on its
detection, so the oracle diagnostics apply directly (no extra predictions can be
expressed in this table).
"""

from __future__ import annotations

import pandas as pd

from trackverify.associate import association_diagnostics, pool_diagnostics


def tracking_gt(table: pd.DataFrame) -> dict:
    """SPEC section 3 diagnostics of one recording's clean observation table."""
    return association_diagnostics(table)


def pool(per_recording: dict[str, dict]) -> dict:
    return pool_diagnostics(list(per_recording.values()))
