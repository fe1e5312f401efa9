"""The seeded CTC parity sweep, at any size: trackverify against py-ctcmetrics 1.3.3 (and,
with ``--traccuracy``, the ``traccuracy`` definition against traccuracy 0.4.3).

    .venv/bin/python benchmarks/ctc_parity_sweep.py --seeds 2000 [--start 0] [--traccuracy]
    .venv/bin/python benchmarks/ctc_parity_sweep.py --seeds 2000 --raw
    .venv/bin/python benchmarks/ctc_parity_sweep.py --hela 20 [--frames 10]

Cases are ``tests/graph/ctc_sweep.make_case(seed)`` for ``seed`` in ``start..start+seeds-1``
(the test suite runs seeds 0..199, and 0..59 for traccuracy). For each: validity (both
refuse or both accept) and every measure (AOGM and NS / FN / FP / ED / EA / EC, AOGM_0, TRA,
DET, LNK, CHOTA, BC(0..3) with their TP / FP / FN, CT, TF, CCA) to 1e-9, except where
py-ctcmetrics departs from the Challenge (``ctc_sweep.KNOWN``, docs/reference/metrics.md). Prints one
line per disagreement and a JSON summary (counts of cases, refusals, known departures and
disagreements); exits 1 when any case disagrees. ``--raw`` instead counts every difference
with py-ctcmetrics given the folders as written (lines by label) and no departure set
aside, by kind (the state before the departures were decided). ``--hela K`` instead edits the
real HeLa result (its first ``--frames`` frames as the reference) with seeds 0..K-1
(``ctc_sweep.edited_real``) and compares each with py-ctcmetrics. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "graph"))

from ctc_sweep import (COUNTS, compare_case, edited_real, make_case, ours,  # noqa: E402
                       refused, write)
from graph_helpers import DATA  # noqa: E402
from test_ctc_parity import run_reference, sweep_outcomes  # noqa: E402

from trackverify.errors import InputError  # noqa: E402
from trackverify.metrics.graph.ctc import evaluate_ctc  # noqa: E402

BATCH = 250
"""Cases per reference process (their folders live in one temporary folder at a time)."""


def py_ctcmetrics(seeds) -> dict:
    counts = collections.Counter()
    for first in range(0, len(seeds), BATCH):
        with tempfile.TemporaryDirectory() as tmp:
            for case, mine, _, problems, known in sweep_outcomes(Path(tmp),
                                                                 seeds[first:first + BATCH]):
                counts["cases"] += 1
                counts["refused"] += "refused" in mine
                counts.update(f"known:{k}" for k in known)
                if problems:
                    counts["disagree"] += 1
                    print(case.name, problems[:4])
    return dict(counts)


def _kind(mine: dict, theirs: dict) -> str | None:
    if "refused" in mine or refused(theirs):
        return None if ("refused" in mine) == refused(theirs) else "validity"
    bad = sorted(k for k, m in COUNTS.items() if (mine[m] is None) != (theirs.get(k) is None)
                 or (mine[m] is not None and abs(mine[m] - theirs[k]) > 1e-9))
    if bad == ["CHOTA"]:
        return "CHOTA (py-ctcmetrics raises)" if "CHOTA_error" in theirs else \
            "CHOTA (line order)"
    return ", ".join(bad) or None


def raw(seeds) -> dict:
    counts = collections.Counter()
    for first in range(0, len(seeds), BATCH):
        with tempfile.TemporaryDirectory() as tmp:
            cases = [make_case(s) for s in seeds[first:first + BATCH]]
            folders = [write(c, Path(tmp) / f"seed{c.seed}")[0] for c in cases]
            mine = [ours(*f) for f in folders]
            for case, m, t in zip(cases, mine, run_reference(folders)):
                counts["cases"] += 1
                counts["negative label refused"] += ("negative_label" in case.edits
                                                     and "refused" in m)
                kind = _kind(m, t)
                if kind:
                    counts["disagree"] += 1
                    counts[f"disagree: {kind}"] += 1
    return dict(counts)


def hela(seeds, n_frames: int) -> dict:
    counts = collections.Counter()
    cases = edited_real(DATA / "ctc" / "Fluo-N2DL-HeLa_01_RES", n_frames, seeds)
    with tempfile.TemporaryDirectory() as tmp:
        folders = [write(c, Path(tmp) / f"hela{c.seed}") for c in cases]
        mine = [ours(*plain) for plain, _ in folders]
        for case, m, t in zip(cases, mine, run_reference([o for _, o in folders])):
            problems, known = compare_case(case, m, t)
            counts["cases"] += 1
            counts["refused"] += "refused" in m
            counts.update(f"known:{k}" for k in known)
            counts.update(f"edit:{e}" for e in case.edits)
            if problems:
                counts["disagree"] += 1
                print(case.name, problems[:4])
    return dict(counts)


def traccuracy(seeds) -> dict:
    from graph_helpers import assert_same, run_ctc, traccuracy_names

    counts = collections.Counter()
    for first in range(0, len(seeds), BATCH):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            mine, folders = {}, {}
            for seed in seeds[first:first + BATCH]:
                case = make_case(seed)
                (gt, res), _ = write(case, tmp / f"seed{seed}")
                counts["cases"] += 1
                try:
                    r = evaluate_ctc(gt, res, definition="traccuracy")
                except InputError:
                    counts["refused"] += 1
                    continue
                mine[case.name] = {**r["ctc"]["pooled"], "chota": r["chota"]["pooled"],
                                   **(r["divisions"]["pooled"] or {})}
                folders[case.name] = (gt / "TRA", res)
            ref = run_ctc(tmp, folders)
            for name in folders:
                if "error" in ref[name]:
                    counts["traccuracy_refused"] += 1
                    continue
                theirs = traccuracy_names(ref[name])
                theirs.pop("frame_buffer_1", None)
                try:
                    assert_same(mine[name], theirs, label=name)
                    counts["compared"] += 1
                except AssertionError as exc:
                    counts["disagree"] += 1
                    print(exc)
    return dict(counts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--traccuracy", action="store_true")
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--hela", type=int, default=0)
    ap.add_argument("--frames", type=int, default=10)
    args = ap.parse_args()
    seeds = list(range(args.start, args.start + args.seeds))
    t0 = time.perf_counter()
    if args.hela:
        out = hela(list(range(args.hela)), args.frames)
        print(json.dumps({"hela": out, "seconds": round(time.perf_counter() - t0, 1)},
                         indent=1))
        return int(bool(out.get("disagree")))
    if args.raw:
        print(json.dumps({"seeds": f"{seeds[0]}..{seeds[-1]}", "raw": raw(seeds),
                          "seconds": round(time.perf_counter() - t0, 1)}, indent=1))
        return 0
    summary = {"seeds": f"{seeds[0]}..{seeds[-1]}", "py-ctcmetrics": py_ctcmetrics(seeds)}
    if args.traccuracy:
        summary["traccuracy"] = traccuracy(seeds)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(summary, indent=1))
    return int(any(part.get("disagree") for part in summary.values()
                   if isinstance(part, dict)))


if __name__ == "__main__":
    sys.exit(main())
