"""One copy of optimal one-to-one assignment (Hungarian, scipy), shared by every family.

Used for the recording-wide oracle alignment, trajectory-to-trajectory matching (fly
registration), and variable matching (converted datasets).
"""

from __future__ import annotations

import numpy as np


def assign(cost: np.ndarray, gate: float | None = None, maximize: bool = False
           ) -> tuple[np.ndarray, np.ndarray]:
    """Optimal one-to-one assignment on a (rows x cols) matrix.

    Entries that are not finite, or beyond ``gate`` (above it when minimising, below it
    when maximising), are forbidden: they are never returned as pairs. Returns the row and
    column indices of the kept pairs, sorted by row.
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    allowed = np.isfinite(cost)
    if gate is not None:
        allowed &= (cost >= gate) if maximize else (cost <= gate)
    if not allowed.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    finite = cost[allowed]
    span = float(finite.max() - finite.min()) + 1.0
    # A forbidden pair costs more than any complete assignment of allowed pairs can save.
    penalty = (finite.max() + span * (min(cost.shape) + 1)) if not maximize else \
        (finite.min() - span * (min(cost.shape) + 1))
    filled = np.where(allowed, cost, penalty)
    from scipy.optimize import linear_sum_assignment  # lazy: keeps `stage -h` light

    rows, cols = linear_sum_assignment(filled, maximize=maximize)
    keep = allowed[rows, cols]
    return rows[keep].astype(np.int64), cols[keep].astype(np.int64)
