"""Why ``fixed_distance`` scores lower on the ``freely_moving`` specimen than on the real
recording: per draw of the corruption suite, its pooled AUROC* beside features of the rows the
suite corrupted, on the real recording and on the specimen (draw k on animal k).

    .venv/bin/python benchmarks/fixed_distance_gap.py [--data ...] [--draws 8] [--seed 20261007]
        [--animals 0] [--animal-draws 8]

fixed_distance scores a row by ``|x(t) - a(p)|``, its position minus the anchor (frame 0)
position of its predicted id ``p``. Per draw, over the six corruptions pooled:

- ``auroc`` / ``cov1``: AUROC* (abstained = most suspicious) and correct coverage at
  FCR <= 1 % (:func:`trackverify.benchmark.evidence.summary`), as in ``real_motion_stats.py``;
- ``nearby`` / ``five``: AUROC* of ``nearby_swap`` alone (the nearest pair at the start frame:
  the same pair in every draw of one recording) and of the other five corruptions pooled;
- ``abst_err`` / ``abst_ok``: share of abstained rows among error / correct rows;
- ``score_ok``: median score of the correct rows (their displacement from their own anchor);
- ``score_err``: median score of the scored error rows;
- ``own_err``: median over the error rows of ``|x(t) - a(true id)|`` (the corrupted neuron's own
  displacement from its anchor, what it would score if correct);
- ``spacing``: median over the swapped pairs of ``|a(i) - a(j)|`` (the pair's anchor spacing);
- ``radius``: median over the corrupted identities of ``|a(i) - c|``, ``c`` the centroid of
  frame 0's labelled neurons, relative to the median over all labelled identities;
- ``p_own``: ``P(own displacement of an error row > score of a correct row)`` (ties 1/2), the
  AUROC a corruption would get if its rows kept their own identity -- how far the corrupted
  neurons' own motion ranks among the population's;
- ``p_err``: the same with the error rows' actual scores (the scored part of AUROC*).

The means of each feature over draws are printed for both, with their difference; the
correlation of ``auroc`` with each feature over the pooled draws says which carries it.

Two expectations over the suite's choices (no draw noise), from :func:`expected_ranks`:
``own_rank`` = ``P(d_i(t) > d)`` for the rows of the suite's candidates (labelled at the start
frame, anchored) in the window ``[300, 700]`` against every anchored row (``d`` = displacement
from the own anchor); ``swap_rank`` = ``P(|x_j(t) - a(i)| > d)`` with ``i`` a uniformly drawn
other candidate -- the joint law of displacement and pair spacing a uniform swap reads.

:func:`real_motion_stats.spacing_radius`: ``rho_nn_radius`` and ``nearest_radius_rank`` (where
the suite's ``nearby_swap`` pair sits).

``--animals A``: ``--animal-draws`` suite draws (seeds seed + j) on each specimen animal
``0..A-1``, so the
spread *between animals* of fixed_distance's mean AUROC* is measured (the real recording is one
animal: its draws vary the suite only).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from real_motion_stats import spacing_radius  # benchmarks/, this script's folder
from trackverify.benchmark.config import build_config
from trackverify.benchmark.dataset import load_dataset
from trackverify.benchmark.evidence import summary
from trackverify.benchmark.protocols.anatomical_verification import (SIX_CORRUPTIONS, error_array,
                                                           score_conditions)
from trackverify.synth.specimen import SpecimenConfig, animal_tables
from trackverify.verifiers.fixed_distance import FixedDistance

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fdnc-nerve-freely-moving"
FEATURES = ("auroc", "cov1", "nearby", "five", "abst_err", "abst_ok", "score_ok", "score_err",
            "own_err", "spacing",
            "radius", "p_own", "p_err")


def _p_greater(a: np.ndarray, b: np.ndarray) -> float | None:
    """P(A > B) + P(A = B) / 2 for samples ``a``, ``b`` (Mann-Whitney U / (n m))."""
    if len(a) == 0 or len(b) == 0:
        return None
    return float(mannwhitneyu(a, b).statistic / (len(a) * len(b)))


def draw_features(observations: pd.DataFrame, detections, seed: int) -> dict:
    """The features of one draw (module docstring)."""
    scored, choices, _ = score_conditions(observations, build_config({"seed": seed}),
                                          FixedDistance(), "r", detections)
    scored = scored[scored["condition"].astype(str).isin(SIX_CORRUPTIONS)]
    headline = summary(error_array(scored), scored["score"].to_numpy())  # every row, as reported
    near = (scored["condition"].astype(str) == "nearby_swap").to_numpy()
    parts = {name: summary(error_array(scored[rows]),
                           scored["score"].to_numpy()[rows])["auroc_abst"]
             for name, rows in (("nearby", near), ("five", ~near))}
    scored = scored[~np.isnan(error_array(scored))]  # the features: labelled rows
    error, score = error_array(scored) == 1, scored["score"].to_numpy()
    anchor = observations[observations["frame"] == 0].set_index("track")[["x_um", "y_um", "z_um"]]
    xyz = scored[["x_um", "y_um", "z_um"]].to_numpy()
    own = np.linalg.norm(xyz - anchor.reindex(scored["track"]).to_numpy(), axis=1)
    ok = ~error & np.isfinite(score)
    scored_err = error & np.isfinite(score)
    centre = anchor.to_numpy().mean(0)
    reach = np.linalg.norm(anchor.to_numpy() - centre, axis=1)
    corrupted = [t for c, v in choices.items() if c in SIX_CORRUPTIONS for t in v["tracks"]]
    pairs = [v["tracks"] for c, v in choices.items()
             if c in SIX_CORRUPTIONS and len(v["tracks"]) == 2]
    in_anchor = [t for t in corrupted if t in anchor.index]
    return {
        "auroc": headline["auroc_abst"], "cov1": headline["cov_at_fcr1"], **parts,
        "abst_err": float(np.mean(~np.isfinite(score[error]))),
        "abst_ok": float(np.mean(~np.isfinite(score[~error]))),
        "score_ok": float(np.median(score[ok])),
        "score_err": float(np.median(score[scored_err])) if scored_err.any() else None,
        "own_err": float(np.nanmedian(own[error])),
        "spacing": float(np.median([np.linalg.norm(anchor.loc[i] - anchor.loc[j])
                                    for i, j in pairs if i in anchor.index and j in anchor.index])),
        "radius": float(np.median(np.linalg.norm(anchor.loc[in_anchor].to_numpy() - centre, axis=1))
                        / np.median(reach)),
        "p_own": _p_greater(own[error & np.isfinite(own)], score[ok]),
        "p_err": _p_greater(score[scored_err], score[ok]),
    }


def expected_ranks(observations: pd.DataFrame, rng: np.random.Generator,
                   window: tuple[int, int] = (300, 700), sample: int = 20000) -> dict:
    """``own_rank`` and ``swap_rank`` of the module docstring (one random partner per row; the
    reference population subsampled to ``sample`` rows)."""
    xyz = ["x_um", "y_um", "z_um"]
    anchor = observations[observations["frame"] == 0].set_index("track")[xyz]
    rows = observations[observations["track"].isin(anchor.index)]
    d = np.linalg.norm(rows[xyz].to_numpy() - anchor.reindex(rows["track"]).to_numpy(), axis=1)
    frame = rows["frame"].to_numpy()
    start = frame[frame >= window[0]].min()
    candidates = np.intersect1d(observations.loc[observations["frame"] == start, "track"],
                                anchor.index)
    inside = (frame >= window[0]) & (frame <= window[1]) & rows["track"].isin(candidates).to_numpy()
    partner = candidates[rng.integers(0, len(candidates), int(inside.sum()))]
    other = partner != rows["track"].to_numpy()[inside]
    swapped = np.linalg.norm(rows[xyz].to_numpy()[inside][other]
                             - anchor.reindex(partner[other]).to_numpy(), axis=1)
    reference = d[rng.choice(len(d), min(sample, len(d)), replace=False)]
    return {"own_rank": _p_greater(d[inside], reference),
            "swap_rank": _p_greater(swapped, reference)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--seed", type=int, default=20261007)
    parser.add_argument("--animals", type=int, default=0,
                        help="specimen animals for the between-animal spread (0 = skip)")
    parser.add_argument("--animal-draws", type=int, default=8, help="suite draws per animal")
    args = parser.parse_args()
    (_, source), = load_dataset(args.data).sources()
    real_obs, real_det = source.load(), source.load_detections()
    frames = int(real_obs["frame"].max()) + 1
    config = SpecimenConfig(motion="freely_moving", frames=frames, seed=args.seed)
    real = pd.DataFrame([draw_features(real_obs, real_det, args.seed + k)
                         for k in range(args.draws)], dtype=float)
    spec = pd.DataFrame([draw_features(*animal_tables(config, k), args.seed + k)
                         for k in range(args.draws)], dtype=float)
    both = pd.concat([real, spec])
    print(f"feature | real mean (sd) | specimen mean (sd) | specimen - real | corr with auroc "
          f"(real; specimen; pooled), {args.draws} draws each")
    print("---|---|---|---|---")
    for f in FEATURES:
        corr = [d[f].corr(d["auroc"]) for d in (real, spec, both)]
        print(f"{f} | {real[f].mean():.3f} ({real[f].std():.3f}) | {spec[f].mean():.3f} "
              f"({spec[f].std():.3f}) | {spec[f].mean() - real[f].mean():+.3f} | "
              + "; ".join(f"{c:+.2f}" for c in corr))
    for side, table in (("real", real), ("specimen", spec)):
        print(f"\nper draw, {side}:\n" + table.round(3).to_string())
    rng = np.random.default_rng(args.seed)
    print("\nreal: " + ", ".join(f"{k} {v:.3f}" for k, v in {
        **expected_ranks(real_obs, rng), **spacing_radius(real_obs)}.items()))
    if args.animals > 0:
        rows = []
        for k in range(args.animals):
            observations, detections = animal_tables(config, k)
            draws = pd.DataFrame([draw_features(observations, detections, args.seed + j)
                                  for j in range(args.animal_draws)], dtype=float)
            rows.append({"animal": k, "auroc_mean": draws["auroc"].mean(),
                         "auroc_sd": draws["auroc"].std(), "cov1_mean": draws["cov1"].mean(),
                         "nearby": draws["nearby"].mean(), "five": draws["five"].mean(),
                         **expected_ranks(observations, rng), **spacing_radius(observations)})
        animals = pd.DataFrame(rows)
        print(f"\nspecimen animals 0-{args.animals - 1}, {args.animal_draws} draws each:\n"
              + animals.round(3).to_string(index=False))
        means = animals["auroc_mean"]
        print(f"animal means: mean {means.mean():.3f}, sd {means.std(ddof=1):.3f}, "
              f"range {means.min():.3f}-{means.max():.3f}; share of animals at or above the "
              f"real mean {real['auroc'].mean():.3f}: "
              f"{(means >= real['auroc'].mean()).mean():.3f}; "
              f"mean within-animal sd {animals['auroc_sd'].mean():.3f} (real "
              f"{real['auroc'].std():.3f}); own_rank {animals['own_rank'].mean():.3f}, "
              f"swap_rank {animals['swap_rank'].mean():.3f}; corr(auroc_mean, swap_rank) "
              f"{means.corr(animals['swap_rank']):+.2f}")
        print(f"animals: nearby {animals['nearby'].mean():.3f} (share at or above the real "
              f"{real['nearby'].mean():.3f}: "
              f"{(animals['nearby'] >= real['nearby'].mean()).mean():.3f}), "
              f"five {animals['five'].mean():.3f} (real {real['five'].mean():.3f}); rho_nn_radius "
              f"{animals['rho_nn_radius'].mean():.3f} (sd {animals['rho_nn_radius'].std():.3f}), "
              f"nearest_radius_rank {animals['nearest_radius_rank'].mean():.3f} "
              f"(sd {animals['nearest_radius_rank'].std():.3f})")
        cov = animals["cov1_mean"]
        print(f"cov@1% animal means: mean {cov.mean():.3f}, sd {cov.std(ddof=1):.3f}, range "
              f"{cov.min():.3f}-{cov.max():.3f}; share at or above the real mean "
              f"{real['cov1'].mean():.3f}: {(cov >= real['cov1'].mean()).mean():.3f}")


if __name__ == "__main__":
    main()
