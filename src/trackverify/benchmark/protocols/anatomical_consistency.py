"""Protocol ``anatomical_consistency``: does the small-deformation hypothesis hold on clean data?

For each clean (control) observation of a track observed in the anchor frame, its
displacement is the distance (um) from the track's reference position in the anchor frame.
The hypothesis behind the fixed-reference-distance verifier is that clean observations stay
within the threshold. It is **falsified** for a recording when more than
``falsification_share`` (default 5 %) of its clean observations exceed the threshold, and
**supported** otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.anchors import distance_to_anchor

QUANTILES = (0.5, 0.9, 0.95, 0.99, 1.0)


def displacement_from_anchor(table: pd.DataFrame) -> np.ndarray:
    """Distance of each row from its track's anchor-frame position (NaN without an anchor)."""
    return distance_to_anchor(table, "track")


def falsification_rule(threshold: float, share: float) -> str:
    return (f"The small-deformation hypothesis is falsified for a recording when more than "
            f"{share:.0%} of its clean observations lie farther than {threshold:g} µm from their "
            f"anchor-frame position; otherwise it is supported.")


def consistency(control: pd.DataFrame, threshold: float, share: float,
                verifier_threshold: float | None = None) -> dict:
    """Displacement quantiles (overall and per frame), rejection shares and the verdict.

    The verdict uses ``threshold`` (the rule's declared value); the verifier's rejected share
    uses ``verifier_threshold`` (default: ``threshold``), which may be a fitted one.
    """
    verifier_threshold = threshold if verifier_threshold is None else verifier_threshold
    displacement = displacement_from_anchor(control)
    measured = np.isfinite(displacement)
    d = displacement[measured]
    exceed_share = float(np.mean(d > threshold)) if len(d) else None
    score = control["score"].to_numpy() if "score" in control.columns else np.full(len(control), np.nan)
    finite = np.isfinite(score)
    frames = control["frame"].to_numpy()[measured]
    # no measured row: no quantile table to unstack (pandas has no 0.5 column to give)
    per_frame = (pd.Series(d).groupby(frames).quantile([0.5, 0.95, 1.0]).unstack() if len(d)
                 else pd.DataFrame({0.5: [], 0.95: [], 1.0: []}))
    verdict = None if exceed_share is None else ("falsified" if exceed_share > share else "supported")
    return {
        "clean_observations": int(len(control)),
        "measured_observations": int(measured.sum()),
        "displacement_quantiles_um": {f"q{int(q * 1000) / 10:g}": float(np.quantile(d, q))
                                      for q in QUANTILES} if len(d) else None,
        "per_frame_displacement_um": {
            "frame": per_frame.index.to_numpy().tolist(),
            "median": per_frame[0.5].to_numpy().tolist(),
            "q95": per_frame[0.95].to_numpy().tolist(),
            "max": per_frame[1.0].to_numpy().tolist(),
        },
        "threshold_um": threshold,
        "share_exceeding_threshold": exceed_share,
        "verifier_threshold": verifier_threshold,
        "verifier_rejected_share": (float(np.mean(finite & (score > verifier_threshold)))
                                    if len(score) else None),
        "verifier_abstained_share": float(np.mean(~finite)) if len(score) else None,
        "falsification_share": share,
        "deformation_hypothesis": verdict,
        "rule": falsification_rule(threshold, share),
    }
