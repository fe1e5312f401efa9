"""The verifiers on real data: a freely moving recording over repeated draws, a real tracker's
own mistakes, and the ZephIR demo; the registration's previous defaults beside the current.

    .venv/bin/python benchmarks/bench_real_verifier.py [--draws 8] [--k 0] [--track-window H]
        [--merge-k M] [--check-reference]
        [--data ../shared/data/fdnc-nerve-freely-moving] [--zephir ../shared/data/zephir-ift20-demo]

1. The recording (``observations.parquet`` + ``detections.parquet``; every detection feeds the
   registration): the corruption suite drawn ``--draws`` times (seeds 20261007, +1, ...) in
   ``evidence --recordings``'s window (SPEC's 300 / 700, or 30 % / 70 % of a shorter part);
   per verifier the six corruptions pooled (AUROC*, correct coverage at FCR <= 1 %: mean and
   minimum over draws) and nearby_swap (AUROC*: mean).
2. Its real tracker (``tracker_cpd.parquet`` joined on (recording, frame, detection)) as the
   predictions: the control condition's errors are the tracker's own (row labels against the
   anchor identity, SPEC section 4); AUROC* and coverage at FCR <= 1 % over its rows.
3. The ZephIR demo (``annotations-g.h5``: identities from ZephIR, coordinates in voxels =
   fraction x volume extent), one draw with start / recovery_end at 30 % / 70 % of the frames.

``registered_distance (previous)`` is the registration with the settings it had before the
freely moving recording (8 EM iterations run to the end, the mixture started at the
prediction's nearest-detection distance, constant velocity, w = 0.1, beta 0.8, lambda 3),
for the regression check; its score is the current one (distance plus margin excess).
``registered_distance (relative score)`` is the current verifier with ``score="relative"``
(its score times median spacing / the claimed identity's own anchor spacing; a setting,
docs/reference/verifiers.md). ``--check-reference`` adds, for the real tracker, the same numbers on the rows the reference
check does not question (docs/guide/reference-check.md; the check reads the reference only).
``--track-window H`` sets the track pooling window of every
``registered_distance`` entry (0 = off; default: the verifier's default), ``--merge-k M`` its
merged-anchor factor likewise.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.anchors import anchor_identities
from trackverify.benchmark.corrupt import label_errors
from trackverify.benchmark.dataset import load_dataset, tracker_predictions
from trackverify.benchmark.evidence import evidence_window, repeated_draws, summary
from trackverify.io.tabular import read_table
from trackverify.report.numbers import fmt
from trackverify.verifiers import run_verifier
from trackverify.verifiers.fixed_distance import FixedDistance
from trackverify.verifiers.registered_distance import (
    DEFAULT_AMBIGUITY_K, DEFAULT_MERGE_K, DEFAULT_TRACK_WINDOW, RegisteredDistance,
    RegistrationSettings)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
PREVIOUS = RegistrationSettings(beta=0.8, lam=3.0, iterations=8, frame_sigma=None,
                                fit_outlier_weight=False, choose_start=False, tolerance=0.0)


def verifiers(k: float, h: int = DEFAULT_TRACK_WINDOW, m: float = DEFAULT_MERGE_K) -> dict:
    return {"fixed_distance": lambda: FixedDistance(),
            "registered_distance": lambda: RegisteredDistance(ambiguity_k=k, track_window=h,
                                                              merge_k=m),
            "registered_distance (relative score)": lambda: RegisteredDistance(
                ambiguity_k=k, score="relative", track_window=h, merge_k=m),
            "registered_distance (previous)": lambda: RegisteredDistance(
                ambiguity_k=k, settings=PREVIOUS, track_window=h, merge_k=m)}


def tracker_rows(folder: Path, observations: pd.DataFrame, first_frame: int = 0) -> pd.DataFrame:
    """The tracker's ids on ``observations`` (frames counted from ``first_frame``, the input's
    number of frame 0; the tracker file keeps the input's numbering); where the tracker gave
    no identity, ``pred_valid`` is false (the row is unlabelled)."""
    path = folder / "tracker_cpd.parquet"
    return tracker_predictions(observations, read_table(path), first_frame, str(path))


def tracker_errors(table, detections, make, kept: np.ndarray | None = None) -> dict:
    """AUROC* and coverage at FCR <= 1 % on the tracker's rows; with ``kept`` (the rows the
    reference check does not question) the same on those rows too, as ``unquestioned``."""
    error = label_errors(table, anchor_identities(table)).astype("Float64").to_numpy(
        dtype=np.float64, na_value=np.nan)
    score = run_verifier(make(), table, detections)

    def block(mask):
        m = summary(error[mask], score[mask])
        return {"auroc_abst": m["auroc_abst"], "cov_at_fcr1": m["cov_at_fcr1"],
                "errors": int(np.nansum(error[mask])), "labelled": int((~np.isnan(error[mask])).sum()),
                "rows": int(mask.sum())}

    out = block(np.ones(len(table), dtype=bool))
    if kept is not None:
        out["unquestioned"] = block(kept)
    return out


def zephir_observations(folder: Path) -> pd.DataFrame:
    import h5py

    meta = json.loads((folder / "metadata.json").read_text())
    with h5py.File(folder / "annotations-g.h5", "r") as f:
        raw = {k: f[k][()] for k in ("t_idx", "worldline_id", "x", "y", "z")}
    table = pd.DataFrame({"recording": "zephir", "frame": raw["t_idx"].astype(np.int64),
                          "track": raw["worldline_id"].astype(np.int64),
                          "x_um": raw["x"] * meta["shape_x"], "y_um": raw["y"] * meta["shape_y"],
                          "z_um": raw["z"] * meta["shape_z"]})
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    table["detection"] = table.groupby("frame").cumcount()
    table["pred_id"], table["pred_valid"] = table["track"], True
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "fdnc-nerve-freely-moving")
    parser.add_argument("--zephir", type=Path, default=SHARED / "zephir-ift20-demo")
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--k", type=float, default=DEFAULT_AMBIGUITY_K,
                        help="ambiguity k of registered_distance [its default]")
    parser.add_argument("--track-window", type=int, default=DEFAULT_TRACK_WINDOW,
                        help="track pooling window h of registered_distance [its default]")
    parser.add_argument("--merge-k", type=float, default=DEFAULT_MERGE_K,
                        help="merged-anchor factor m of registered_distance [its default]")
    parser.add_argument("--only", default="", help="comma-separated verifier names")
    parser.add_argument("--check-reference", action="store_true",
                        help="also score the tracker's errors on the rows the reference check "
                             "does not question (docs/guide/reference-check.md)")
    args = parser.parse_args()
    makers = {n: m for n, m in verifiers(args.k, args.track_window, args.merge_k).items()
              if not args.only or n in args.only.split(",")}
    out = {}
    if args.data.is_dir():
        (_, source), = load_dataset(args.data).sources()
        observations, detections = source.load(), source.load_detections()
        cpd = (tracker_rows(args.data, observations, source.first_frame)
               if (args.data / "tracker_cpd.parquet").exists() else None)
        kept = None
        if args.check_reference and cpd is not None:
            from trackverify.reference_check import check_reference
            from trackverify.reference_check.populations import rows_note

            check = check_reference(observations, detections)
            kept = check.kept
            print(rows_note(check), flush=True)
        # evidence's rule: SPEC's 300 / 700, or 30 % / 70 % of a shorter (held-out) part
        window = evidence_window(observations["frame"].to_numpy())
        settings = {"start": window["start"], "recovery_end": window["recovery_end"]}
        print(f"window {window['start']} / {window['recovery_end']} ({window['rule']}), frames "
              f"counted from input frame {source.first_frame}", flush=True)
        for name, make in makers.items():
            t0 = time.perf_counter()
            r = repeated_draws(observations, detections, make(), args.draws, "r", **settings)
            p, n = r["pooled"], r["nearby"]
            line = (f"{name:32s} real: six AUROC* {fmt(p['auroc_abst'], 3)} (min "
                    f"{fmt(p['auroc_abst_min'], 3)}), cov@1% {fmt(p['cov_at_fcr1'], 3)} (min "
                    f"{fmt(p['cov_at_fcr1_min'], 3)}), nearby AUROC* {fmt(n['auroc_abst'], 3)}")
            if cpd is not None:
                r["tracker"] = tracker_errors(cpd, detections, make, kept)
                t = r["tracker"]
                line += (f" | tracker_cpd AUROC* {fmt(t['auroc_abst'], 3)}, cov@1% "
                         f"{fmt(t['cov_at_fcr1'], 3)} ({t['errors']} errors / "
                         f"{t['labelled']})")
                if kept is not None:
                    u = t["unquestioned"]
                    line += (f"; unquestioned rows AUROC* {fmt(u['auroc_abst'], 3)}, cov@1% "
                             f"{fmt(u['cov_at_fcr1'], 3)} ({u['errors']} errors / {u['labelled']}, "
                             f"{u['rows']} of {t['rows']} rows)")
            print(line + f"  [{time.perf_counter() - t0:.0f} s]", flush=True)
            out.setdefault(name, {})["real"] = r
    else:
        print(f"(real recording not found at {args.data}; skipped)")
    if args.zephir.is_dir():
        table = zephir_observations(args.zephir)
        window = evidence_window(table["frame"].to_numpy())  # evidence's rule: 30 % / 70 %
        settings = {"start": window["start"], "recovery_end": window["recovery_end"]}
        for name, make in makers.items():
            r = repeated_draws(table, None, make(), 1, "zephir", **settings)
            print(f"{name:32s} ZephIR: six AUROC* {fmt(r['pooled']['auroc_abst'], 3)}, cov@1% "
                  f"{fmt(r['pooled']['cov_at_fcr1'], 3)}, nearby AUROC* "
                  f"{fmt(r['nearby']['auroc_abst'], 3)}", flush=True)
            out.setdefault(name, {})["zephir"] = r
    else:
        print(f"(ZephIR demo not found at {args.zephir}; skipped)")


if __name__ == "__main__":
    main()
