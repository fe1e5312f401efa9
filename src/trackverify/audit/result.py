"""What an audit returns: the result and threshold types, the verdicts and the rows it judges.

Every other module of :mod:`trackverify.audit` imports these; this one imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Default threshold in units of each identity's own anchor spacing ``s_p`` (uncalibrated).
DEFAULT_THRESHOLD_SPACINGS = 0.5
VERDICTS = ("certified", "flagged", "abstained")
#: Abstention reasons of an id the anchor frame does not cover: nothing to check it against.
UNCOVERED = ("not_in_anchor_frame", "no_anchor_identity")


@dataclass
class AuditResult:
    """What :func:`audit` found: data frames plus the summary written to ``audit.json``.

    ``observations``: every input row with ``score, verdict, reason, lookalike_id,
    lookalike_um, threshold_um, relative_score, segment, event``; ``segments``: every suspect
    run of one id's frames (the detail); ``tracks``: one row per (recording, predicted id);
    ``summary``: settings, counts and the threshold with its source; ``events``: the review
    list, one row per thing a person checks once (:mod:`trackverify.audit.events`);
    ``joins``: later tracks that continue an anchor identity, and ``continuity``: each anchor
    identity's pieces (:mod:`trackverify.audit.joins`).
    """

    observations: pd.DataFrame
    segments: pd.DataFrame
    tracks: pd.DataFrame
    summary: dict = field(default_factory=dict)
    events: pd.DataFrame = field(default_factory=pd.DataFrame)
    joins: pd.DataFrame = field(default_factory=pd.DataFrame)
    continuity: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        counts = self.summary.get("counts", {})
        return (f"AuditResult({counts.get('audited', 0)} audited observations: "
                f"{counts.get('certified', 0)} certified, {counts.get('flagged', 0)} flagged, "
                f"{counts.get('abstained', 0)} abstained; {len(self.events)} events to review)")


@dataclass(frozen=True)
class Threshold:
    """The acceptance threshold and where it came from."""

    value_um: float | None  # None: the per-recording default rule
    source: str  # "calibration" | "user" | "default"
    calibrated: bool
    guarantee: dict | None = None
    file: str | None = None


#: Reasons of the rows an audit does not judge: the anchor frame (trusted), a track's own
#: start (what its later rows are judged against) and the frames before the anchor.
NOT_JUDGED = ("anchor_frame", "track_start", "before_anchor")


def audited(observations: pd.DataFrame) -> np.ndarray:
    """Rows with a valid predicted id that are judged: after the anchor frame, and not the
    start of their track (:data:`NOT_JUDGED`)."""
    reason = observations["reason"]
    return (observations["pred_valid"].to_numpy(dtype=bool)
            & ~reason.isin(NOT_JUDGED).to_numpy())
