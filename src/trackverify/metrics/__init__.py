"""Tracking metrics against reference tracks: MOT (HOTA / CLEAR / Identity at TrackEval
parity, :mod:`.mot`), the oracle association and its identity diagnostics
(:mod:`.association`), both per recording and pooled (:mod:`.tracking`:
:func:`~trackverify.metrics.tracking.evaluate_tracking`), and the graph measures of the Cell
Tracking Challenge, traccuracy and WormND (:mod:`.graph`)."""
