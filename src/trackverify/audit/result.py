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


#: Reasons of the rows an audit does not judge (their ``verdict`` is null): a row with no
#: predicted id, a frame before the anchor, the anchor frame (trusted) and a track's own
#: start (what its later rows are judged against).
NOT_JUDGED = ("no_prediction", "before_anchor", "anchor_frame", "track_start")
#: Every row of an audit is of one kind, in this order (a row with no id is ``no_prediction``
#: in any frame): ``audit.json``'s count of each, and the words the report and the terminal
#: give it; the rest (``audited``) are judged: certified, flagged or abstained.
ROW_KINDS = {"no_prediction": ("no_prediction", "rows without an id"),
             "before_anchor": ("before_anchor", "rows before the anchor frame"),
             "anchor_frame": ("anchor_frame", "rows in the anchor frame (trusted)"),
             "track_start": ("track_starts", "later tracks' first observations")}


def not_judged(counts: dict) -> list[tuple[str, int]]:
    """``(words, count)`` of each kind of row that is not judged (``counts``: audit.json's),
    in :data:`ROW_KINDS` order, the kinds with no row left out."""
    return [(words, counts.get(key, 0)) for key, words in ROW_KINDS.values()
            if counts.get(key, 0)]


def audited(observations: pd.DataFrame) -> np.ndarray:
    """Rows with a valid predicted id that are judged: after the anchor frame, and not the
    start of their track (:data:`NOT_JUDGED`)."""
    reason = observations["reason"]
    return (observations["pred_valid"].to_numpy(dtype=bool)
            & ~reason.isin(NOT_JUDGED).to_numpy())


def row_counts(observations: pd.DataFrame) -> dict:
    """Every row counted once: ``rows`` = the :data:`ROW_KINDS` counts + ``audited``, and
    ``audited`` = ``certified`` + ``flagged`` + ``abstained``."""
    reason = observations["reason"]
    judged = audited(observations)
    verdict = observations["verdict"].to_numpy(dtype=object)[judged]
    return {"rows": int(len(observations)),
            **{key: int(reason.eq(kind).sum()) for kind, (key, _) in ROW_KINDS.items()},
            "audited": int(judged.sum()),
            **{v: int((verdict == v).sum()) for v in VERDICTS}}
