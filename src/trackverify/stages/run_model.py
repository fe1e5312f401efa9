"""``--run-model``: run a submitted ``model.py`` + ``model.pkl`` to produce predictions.

This executes the submitter's code, so it is opt-in and happens only in a child process
(``python -I``, working directory = the submission, a timeout, no shell). ``model.pkl`` is an
arbitrary pickle of the submitter's model and is unpickled only inside that child; every
data file the evaluators read is still loaded through the restricted unpickler.

* keypoints: ``GROUND_TRUTH/exp_*/images.npy`` ``(n, H, W, C)`` uint8 crops (OQ-A3.3) are
  passed to ``KeypointTracker(num_keypoints=21).track(X)`` in chunks of 256; the output
  ``(n, 21, 2)`` is written as ``exp_*/keypoint_preds.npz``.
* walking: for every fly of ``GROUND_TRUTH/exp_*/perframe/``, the features in
  ``WalkingClassifier.feature_names`` are truncated to the shortest length and stacked
  column-wise; ``predict(X)`` gives ``exp_*/walk_preds.pkl``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trackverify.errors import InputError
from trackverify.io.paths import safe_name
from trackverify.stages.common import experiments

_RUNNER = r'''
import json, pickle, sys
from pathlib import Path
import numpy as np
from trackverify.io.safe_pickle import load_restricted
args = json.loads(sys.argv[1])
sys.path.insert(0, args["submission"])
import model as submitted
with open(Path(args["submission"]) / "model.pkl", "rb") as handle:
    trained = pickle.load(handle)
out = Path(args["out"])
for exp in args["experiments"]:
    src = Path(args["ground_truth"]) / exp
    (out / exp).mkdir(parents=True, exist_ok=True)
    if args["stage"] == "keypoints":
        obj = submitted.KeypointTracker(num_keypoints=21)
        obj.model = trained
        images = np.load(src / "images.npy", allow_pickle=False)
        parts = [np.asarray(obj.track(images[i:i + 256]), dtype=np.float64)
                 for i in range(0, len(images), 256)]
        pred = np.concatenate(parts) if parts else np.zeros((0, 21, 2))
        np.savez(out / exp / "keypoint_preds.npz", pred=pred)
    else:
        obj = submitted.WalkingClassifier()
        obj.model = trained
        feats = [load_restricted(src / "perframe" / f"{name}.pkl") for name in obj.feature_names]
        preds = []
        for fly in range(len(feats[0])):
            cols = [np.asarray(f[fly], dtype=np.float64) for f in feats]
            n = min(c.size for c in cols)
            X = np.stack([c[:n] for c in cols], axis=1)
            preds.append(np.asarray(obj.predict(X), dtype=np.float64).reshape(-1))
        with open(out / exp / "walk_preds.pkl", "wb") as handle:
            pickle.dump(preds, handle)
'''


def run_submitted_model(stage: str, submission: Path, ground_truth: Path | None, out: Path,
                        timeout: float) -> tuple[Path, list[str]]:
    """Run the submission's model on the ground-truth inputs; returns the folder of
    predictions and the problems (a crash, a timeout, a missing file) that make it fail."""
    if stage not in ("keypoints", "walking"):
        raise InputError(f"--run-model applies to the keypoints and walking stages, not {stage}")
    if ground_truth is None:
        raise InputError("--run-model needs --ground-truth (the held-out inputs)")
    missing = [n for n in ("model.py", "model.pkl") if not (submission / n).is_file()]
    if missing:
        return out, [f"{submission}: missing {', '.join(missing)}"]
    args = {"stage": stage, "submission": str(Path(submission).resolve()),
            "ground_truth": str(Path(ground_truth).resolve()), "out": str(Path(out).resolve()),
            "experiments": [safe_name(e, what="experiment", source=str(ground_truth))
                            for e in experiments(ground_truth, "ground-truth")]}
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _RUNNER, json.dumps(args)],
                              cwd=submission, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return out, [f"{submission}: the submitted model did not finish within {timeout} s"]
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return out, [f"{submission}: the submitted model failed: {tail}"]
    return out, []
