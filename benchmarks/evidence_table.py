"""Side-by-side evidence as markdown tables (docs/reference/verifiers.md); the computation lives in
:mod:`trackverify.benchmark.evidence` (``trackverify evidence --out DIR`` writes the same as JSON + HTML).

    .venv/bin/python benchmarks/evidence_table.py [--frames 1000] [--levels still,...,freely_moving]
                                                 [--pairs ../shared/data/targettrack-point-pairs]
                                                 [--score relative|distance] [--track-window H]
                                                 [--merge-k M]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trackverify.benchmark.evidence import (FULL_GRID, LEVELS, PAIR_COLUMNS, SPECIMEN_COLUMNS,
                                  build_evidence, markdown)
from trackverify.verifiers.registered_distance import SCORES

PAIRS = Path(__file__).resolve().parents[2] / "shared" / "data" / "targettrack-point-pairs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--levels", default=",".join(LEVELS))
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--score", choices=SCORES, default=None,
                        help="registered_distance's score [its default]")
    parser.add_argument("--track-window", type=int, default=None,
                        help="registered_distance's track pooling window h [its default]")
    parser.add_argument("--merge-k", type=float, default=None,
                        help="registered_distance's merged-anchor factor m, 0 = off [its default]")
    args = parser.parse_args()
    levels = [level for level in args.levels.split(",") if level]
    pairs = args.pairs if args.pairs.is_dir() else None
    result = build_evidence(levels, args.frames, pairs, FULL_GRID, score=args.score,
                            track_window=args.track_window, merge_k=args.merge_k)
    if result["specimen"]:
        k = result["specimen"][1]["ambiguity_k"]
        print(f"ambiguity k of registered_distance (its default): {k:.3f}")
        print("\n## Development specimen (six original conditions pooled; nearby_swap; harder)\n")
        print(markdown(result["specimen"], SPECIMEN_COLUMNS))
        for row in result["specimen"]:
            if row["verifier"] == "registered_distance":
                print(f"{row['data']}: abstained rows, ambiguous {row['ambiguous_rows']}, "
                      f"merged {row['merged_rows']}, missing evidence "
                      f"{row['missing_evidence_rows']}; claims contradicted (scored) "
                      f"{row['contradicted_rows']}")
    if pairs is None:
        print(f"\n(real pairs not found at {args.pairs}; skipped)")
    else:
        print("\n## Real point-set pairs (clean frame-1 rows + swapped rows)\n")
        print(markdown(result["pairs"], PAIR_COLUMNS))
        print("\n" + "\n".join(result["pair_summary"]))


if __name__ == "__main__":
    main()
