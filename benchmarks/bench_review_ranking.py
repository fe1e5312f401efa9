"""Which key ranks the audit's review list (docs/guide/audit.md "The review list", issue 15).

    .venv/bin/python benchmarks/bench_review_ranking.py [--frames 1000] [--seeds 0,1,2]
                                                        [--pairs 12]

Candidates, stated before any measurement (uncovered ids stay last under every key; ties
fall back to: flagged count, max relative score, max score, length, the audit's rank):

(a) ``count``: flagged observations (today's rule) -- every flagged row is direct evidence.
(b) ``weighted``: sum over the segment's flagged rows of ``min(relative_score / t, 3)``,
    ``t`` = the default threshold in spacings -- a row far past the threshold is stronger
    evidence than one just past it, capped so one wild row cannot dominate.
(c) ``mean``: the mean relative score over the segment's scored rows (abstained rows carry
    none) -- evidence per observation reviewed, since the budget is counted in observations.
(d) (``P(wrong | score)`` from a source other than the recording) is not included: no
    such curve was fitted here.

Data (synthetic only; the choice never reads the real recording): the ``freely_moving``
specimen level, whose predicted ids are the true tracks except that ``--pairs`` close pairs
(each identity with its nearest neighbour in the anchor frame) swap predicted ids over one
run of frames each (start uniform, length uniform in 5..150 frames) -- a tracker's
identity swap between neighbours. Measured on the anchored population (predicted ids present
in the anchor frame; the specimen's unanchored ids are uncovered and last under every key;
a row is wrong when its id's anchor-frame track is not its own). Per seed, one audit (the defaults); each key re-ranks the
same segments. Rule: the key whose pooled share of observations reviewed to reach 90 % of
the wrong observations is smallest (ties within 0.005: the simplest, in the order a, c, b).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import trackverify
from trackverify.audit.result import DEFAULT_THRESHOLD_SPACINGS, UNCOVERED
from trackverify.benchmark.config import build_config
from trackverify.synth.specimen import animal_detections, animal_observations

KEYS = ("count", "mean", "weighted")  # simplest first
CAP = 3.0
TOLERANCE = 0.005


def swapped_tracks(frames: int, seed: int, pairs: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    config = build_config({"specimen.motion": "freely_moving", "specimen.frames": frames})
    table = animal_observations(config.specimen, seed).reset_index(drop=True)
    detections = animal_detections(config.specimen, seed)
    rng = np.random.default_rng(seed)
    first = table[table["frame"] == table["frame"].min()]
    xyz = first[["x_um", "y_um", "z_um"]].to_numpy()
    dist = np.linalg.norm(xyz[:, None] - xyz[None], axis=-1)
    np.fill_diagonal(dist, np.inf)
    ids = first["pred_id"].to_numpy()
    used: set = set()
    pred = table["pred_id"].to_numpy().copy()
    frame = table["frame"].to_numpy()
    for i in rng.permutation(len(ids)):
        j = int(np.argmin(dist[i]))
        if len(used) >= 2 * pairs or i in used or j in used:
            continue
        used |= {i, j}
        length = int(rng.integers(5, 151))
        start = int(rng.integers(1, max(2, frames - length)))
        inside = (frame >= start) & (frame < start + length)
        a, b = ids[i], ids[j]
        pred[inside & (table["pred_id"].to_numpy() == a)] = b
        pred[inside & (table["pred_id"].to_numpy() == b)] = a
    return table.assign(pred_id=pred), detections


def keyed(observations: pd.DataFrame, segments: pd.DataFrame, key: str) -> np.ndarray:
    """Segment ranks (as numbered by the audit) in the order ``key`` reads them;
    ties by flagged count, max relative score, max score, length, then the audit's rank."""
    rows = observations[observations["segment"].notna()]
    rel = rows["relative_score"].astype(float)
    flagged = rows["verdict"].eq("flagged")
    by = rows["segment"].astype(np.int64)
    weighted = np.minimum(rel / DEFAULT_THRESHOLD_SPACINGS, CAP).where(flagged, 0.0)
    per = pd.DataFrame({"weighted": weighted.groupby(by).sum(),
                        "mean": rel.groupby(by).mean()}).reindex(segments["rank"].to_numpy())
    uncovered = segments["reason"].isin(UNCOVERED).to_numpy()
    primary = {"count": segments["flagged"].to_numpy(float),
               "mean": per["mean"].fillna(-np.inf).round(6).to_numpy(),
               "weighted": per["weighted"].fillna(0.0).round(6).to_numpy()}[key]
    base = segments["rank"].to_numpy()
    ties = [-segments[c].astype(float).fillna(-np.inf).round(6).to_numpy()
            for c in ("frames", "max_score", "max_relative_score", "flagged")]
    order = np.lexsort((base, *ties, -primary, uncovered))  # the last key sorts first
    return base[order]


def share_for_90(observations: pd.DataFrame, wrong: np.ndarray, order: np.ndarray) -> float | None:
    """Share of audited observations inside the first segments of ``order`` holding 90 % of
    the wrong audited observations (None when the segments never reach 90 %)."""
    seg = observations["segment"].to_numpy(dtype=np.float64, na_value=np.nan)
    inside = np.isfinite(seg)
    position = np.empty(int(order.max()) + 1, np.int64)
    position[order] = np.arange(len(order))
    at = position[seg[inside].astype(np.int64)]
    per_wrong = np.bincount(at[wrong[inside]], minlength=len(order))
    per_rows = np.bincount(at, minlength=len(order))
    need = np.ceil(0.9 * wrong.sum())
    k = int(np.searchsorted(np.cumsum(per_wrong), need))
    return float(np.cumsum(per_rows)[k] / len(seg)) if k < len(order) else None


def chosen(shares: dict[str, float | None]) -> str:
    valid = {k: v for k, v in shares.items() if v is not None}
    best = min(valid.values())
    return next(k for k in KEYS if k in valid and valid[k] <= best + TOLERANCE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--pairs", type=int, default=12)
    args = parser.parse_args()
    totals = {k: [0.0, 0] for k in KEYS}
    for seed in (int(s) for s in args.seeds.split(",")):
        table, detections = swapped_tracks(args.frames, seed, args.pairs)
        result = trackverify.audit(table.drop(columns=["track"]), detections)
        obs = result.observations.merge(table[["recording", "frame", "detection", "track"]],
                                        on=["recording", "frame", "detection"], how="left")
        audited = obs["verdict"].notna() & ~obs["reason"].isin(["anchor_frame", "before_anchor"])
        anchor = table[table["frame"] == table["frame"].min()].set_index("pred_id")["track"]
        obs = obs[(audited & obs["pred_id"].isin(anchor.index)).to_numpy()]  # anchored ids
        wrong = (obs["pred_id"].map(anchor).to_numpy() != obs["track"].to_numpy())
        line = {k: share_for_90(obs, wrong, keyed(obs, result.segments, k)) for k in KEYS}
        for k, v in line.items():
            if v is not None:
                totals[k][0] += v * len(obs)
            totals[k][1] += len(obs)
        print(f"seed {seed}: {len(obs)} audited, {int(wrong.sum())} wrong, "
              f"{len(result.segments)} segments; share for 90 %: "
              + ", ".join(f"{k} {v if v is None else round(v, 4)}" for k, v in line.items()))
    pooled = {k: t / n if n else None for k, (t, n) in totals.items()}
    print("pooled:", {k: round(v, 4) for k, v in pooled.items() if v is not None})
    print("chosen:", chosen(pooled))


if __name__ == "__main__":
    main()
