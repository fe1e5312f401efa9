"""Helpers of the canonical-metric tests: the reference-library runner and result names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MOT_PYTHON = ROOT / ".venv-mot" / "bin" / "python"
sys.path.insert(0, str(HERE))

from mot_scenes import save_npz  # noqa: E402


def run_reference(tmp_path: Path, scenes: dict, zero_distance: float, *flags: str) -> dict:
    """TrackEval + py-motmetrics results on ``scenes`` (zero_distance 0 = by detection)."""
    if not MOT_PYTHON.exists():
        from tests.conftest import missing_reference  # here: benchmarks import this module too

        missing_reference("reference environment .venv-mot is absent (make test builds it)")
    path = tmp_path / "scenes.npz"
    save_npz(path, scenes, zero_distance)
    done = subprocess.run([str(MOT_PYTHON), str(HERE / "mot_reference.py"), str(path), *flags],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def trackeval_summary(res: dict) -> dict:
    """TrackEval's results under our names (array fields averaged over alpha)."""
    h, c, i = res["HOTA"], res["CLEAR"], res["Identity"]
    out = {k.lower(): float(np.mean(h[k])) for k in
           ("HOTA", "DetA", "AssA", "LocA", "DetRe", "DetPr", "AssRe", "AssPr")}
    out.update({"mota": c["MOTA"], "motp": c["MOTP"], "idsw": c["IDSW"], "frag": c["Frag"],
                "clr_tp": c["CLR_TP"], "clr_fn": c["CLR_FN"], "clr_fp": c["CLR_FP"],
                "mt": c["MT"], "pt": c["PT"], "ml": c["ML"],
                "idf1": i["IDF1"], "idp": i["IDP"], "idr": i["IDR"], "idtp": i["IDTP"],
                "idfn": i["IDFN"], "idfp": i["IDFP"]})
    return out


HOTA_PER_ALPHA = ("HOTA_TP", "HOTA_FN", "HOTA_FP", "HOTA", "DetA", "AssA", "LocA", "DetRe",
                  "DetPr", "AssRe", "AssPr")


def per_alpha(counts) -> dict:
    """Our HOTA family at each of the 19 alphas, under TrackEval's names, from the counts."""
    tp, fn, fp = counts.hota_tp, counts.hota_fn, counts.hota_fp
    deta = tp / np.maximum(1, tp + fn + fp)
    return {"HOTA_TP": tp, "HOTA_FN": fn, "HOTA_FP": fp, "DetA": deta,
            "HOTA": np.sqrt(deta * counts.assa), "AssA": counts.assa, "LocA": counts.loca,
            "DetRe": tp / np.maximum(1, tp + fn), "DetPr": tp / np.maximum(1, tp + fp),
            "AssRe": counts.assre, "AssPr": counts.asspr}


def assert_per_alpha(counts, res: dict, tol: float, label: str = "") -> None:
    """Every HOTA array field equals TrackEval's at every alpha (not only their mean)."""
    mine = per_alpha(counts)
    for key in HOTA_PER_ALPHA:
        theirs = np.asarray(res["HOTA"][key], dtype=float)
        ours = np.asarray(mine[key], dtype=float)
        assert ours.shape == theirs.shape == (19,), f"{label} {key}: {ours.shape} {theirs.shape}"
        worst = int(np.argmax(np.abs(ours - theirs)))
        assert abs(ours[worst] - theirs[worst]) <= tol, \
            f"{label} {key} at alpha index {worst}: {ours[worst]} vs {theirs[worst]}"


def motmetrics_summary(res: dict) -> dict:
    """py-motmetrics results under our names (its MOTP is a distance: 1 - similarity)."""
    return {"mota": res["mota"], "motp": 1.0 - res["motp"], "idsw": res["num_switches"],
            "frag": res["num_fragmentations"], "clr_tp": res["num_detections"],
            "clr_fn": res["num_misses"], "clr_fp": res["num_false_positives"],
            "mt_pymotmetrics": res["mostly_tracked"], "pt_pymotmetrics": res["partially_tracked"],
            "ml_pymotmetrics": res["mostly_lost"],
            "idf1": res["idf1"], "idp": res["idp"], "idr": res["idr"], "idtp": res["idtp"],
            "idfn": res["idfn"], "idfp": res["idfp"]}
