"""The Cell Tracking Challenge measures on CTC folders: trackverify against py-ctcmetrics
and traccuracy, end to end, in the same run.

    .venv/bin/python benchmarks/bench_ctc.py [--frames 92] [--repeat 3]

Case: the real HeLa result (``../shared/data/tracker-formats/ctc/Fluo-N2DL-HeLa_01_RES``:
92 frames of 700 x 1100 pixels, 285 tracks) as the reference, against an edited copy of
itself (labels shifted by 3 px, three tracks erased, two parent links cut, one track
continued under a new label; ``tests/graph/test_graph_parity._edited_hela``), written as
zlib-compressed TIFFs in the Challenge's layout.

Timed end to end from the folders: ours is :func:`trackverify.metrics.graph.ctc.evaluate_ctc`
(reading, validation, mask matching, AOGM / DET / TRA / LNK, CHOTA, division metrics,
BC(0..3), CT, CCA; median of ``--repeat`` runs); py-ctcmetrics 1.3.3 is ``load_data`` +
``calculate_metrics`` for Valid, CHOTA, BC, CT, CCA, TF, TRA, DET, LNK with one thread (in
``.venv-ctcmetrics``); traccuracy 0.4.3 is ``load_ctc_data`` on both folders,
``CTCMatcher`` and ``CTCMetrics`` + ``DivisionMetrics`` + ``CHOTAMetric`` (in
``.venv-traccuracy``); each timed inside its own process without import time. The numbers
are checked equal to 1e-9 first (ours under ``definition="ctc"`` against py-ctcmetrics,
``"traccuracy"`` against traccuracy). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "graph"))

from graph_helpers import assert_same, run_ctc, traccuracy_names  # noqa: E402
from test_ctc_parity import _as_gt, compare, run_reference  # noqa: E402
from test_graph_parity import _edited_hela  # noqa: E402

from trackverify.metrics.graph.ctc import evaluate_ctc  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=92)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        gt, res = _as_gt(*_edited_hela(tmp / "hela", args.frames))
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            mine = evaluate_ctc(gt, res)
            times.append(time.perf_counter() - t0)
        ours_s = float(np.median(times))
        flat = {**mine["ctc"]["pooled"], **mine["challenge"]["pooled"],
                "chota": mine["chota"]["pooled"]}
        theirs = run_reference([(gt, res)])[0]
        compare(flat, theirs, "hela")
        tr = run_ctc(tmp, {"hela": (gt / "TRA", res)})["hela"]
        mine_tr = evaluate_ctc(gt, res, definition="traccuracy")
        names = traccuracy_names(tr)
        names.pop("frame_buffer_1", None)
        assert_same({**mine_tr["ctc"]["pooled"], "chota": mine_tr["chota"]["pooled"],
                     **mine_tr["divisions"]["pooled"]}, names, label="hela traccuracy")
    tr_s = tr["seconds_build"] + tr["seconds"]
    print(f"HeLa, {args.frames} frames: TRA {flat['tra']:.6f} DET {flat['det']:.6f} "
          f"LNK {flat['lnk']:.6f} CHOTA {flat['chota']:.6f} BC(0) {flat['BC(0)']} "
          "(same as py-ctcmetrics and, under definition traccuracy, traccuracy, to 1e-9)")
    print(f"trackverify evaluate_ctc: {ours_s:.3f} s (median of {args.repeat}: "
          + ", ".join(f"{t:.3f}" for t in times) + ")")
    print(f"py-ctcmetrics (1 thread): {theirs['seconds']:.3f} s -> "
          f"{theirs['seconds'] / ours_s:.1f}x")
    print(f"traccuracy: {tr_s:.3f} s (load {tr['seconds_build']:.3f} s, matching + metrics "
          f"{tr['seconds']:.3f} s) -> {tr_s / ours_s:.1f}x")


if __name__ == "__main__":
    main()
