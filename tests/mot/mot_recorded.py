"""TrackEval's results on a few small scenes, recorded, so the canonical metrics can be
checked against the reference library without running it (fast enough for mutation testing).

The scenes are regenerated from their seeds (``mot_scenes.random_scene``); the recorded
results in ``data/trackeval_recorded.json`` are TrackEval's own output (``mot_reference.py``
in ``.venv-mot``), never ours. ``test_mot_parity.py`` re-runs TrackEval and fails if the
recording is stale. Re-record with ``python tests/mot/mot_recorded.py`` (needs ``.venv-mot``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from mot_scenes import random_scene

RECORDED = Path(__file__).with_name("data") / "trackeval_recorded.json"
ZERO_DISTANCE = 5.0
# Dense enough for stars, 2 x 2 squares and larger conflicts; empty frames, vanishing ids,
# swaps and fragments; 2-D and 3-D; and one sparse scene.
SCENES = {
    "crowded2d": dict(seed=201, n_ids=10, n_frames=25, dim=2, box=12.0, noise=1.0, swaps=3,
                      vanish=2, empty_pred_frames=1, empty_gt_frames=1),
    "crowded3d": dict(seed=202, n_ids=12, n_frames=25, dim=3, box=10.0, noise=1.0, swaps=3),
    "sparse2d": dict(seed=203, n_ids=6, n_frames=20, dim=2, box=80.0, noise=0.8),
    # packed so densely that most frames hold 2 x 2 and larger conflicts, where the global
    # alignment decides the HOTA matching
    **{f"packed{k}": dict(seed=300 + k, n_ids=8, n_frames=30, dim=2 + k % 2, box=8.0 + k % 5,
                          noise=1.0, swaps=3, vanish=2, empty_pred_frames=k % 3,
                          empty_gt_frames=k % 2) for k in range(12)},
}




def one_predicted_id() -> dict:
    """Two reference ids (x = 0 and x = 50, frames 0..5) and a single predicted id that
    follows the first for frames 0..2 (1 away) and the second for frames 3..5 (2 away; in
    frame 5 exactly 2.5 away: similarity exactly 0.5, the CLEAR / Identity threshold)."""
    frames = np.arange(6)
    gt_frame = np.r_[frames, frames]
    gt_id = np.r_[np.ones(6, int), np.full(6, 2)]
    gt_xyz = np.column_stack([np.r_[np.zeros(6), np.full(6, 50.0)], np.zeros(12)])
    pred_x = np.r_[1.0, 1.0, 1.0, 52.0, 52.0, 52.5]
    return {"gt_frame": gt_frame, "gt_id": gt_id, "gt_xyz": gt_xyz, "gt_det": np.arange(12),
            "pred_frame": frames, "pred_id": np.full(6, 7),
            "pred_xyz": np.column_stack([pred_x, np.zeros(6)]), "pred_det": 100 + frames}


def scenes() -> dict:
    out = {name: random_scene(**kw) for name, kw in SCENES.items()}
    out["one_predicted_id"] = one_predicted_id()
    return out


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def record() -> dict:
    """Run TrackEval (in .venv-mot) on the scenes: its per-sequence and combined results."""
    from mot_helpers import run_reference

    with tempfile.TemporaryDirectory() as tmp:
        return run_reference(Path(tmp), scenes(), ZERO_DISTANCE, "--no-motmetrics")["trackeval"]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    RECORDED.parent.mkdir(exist_ok=True)
    RECORDED.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {RECORDED}")
