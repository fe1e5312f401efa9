"""The reference check on the real freely moving recording, and what the reference supports.

    .venv/bin/python benchmarks/check_reference_real.py [--data ../shared/data/fdnc-nerve-freely-moving]
        [--split 373] [--injections 200] [--json out.json] [--score relative]

1. **The check** (its default rule, docs/guide/reference-check.md) on the development half (frames
   <= ``--split``) and, separately, on the rest (the stand-in for a held-out half): findings by
   kind, rows questioned and kept, the pairs of tracks the findings involve most, and the anchor
   frame's findings.
2. **Recall on planted errors** (seeded, 20261205): ``--injections`` one-frame label errors are
   planted into the development half's labels, one per frame (frames drawn without replacement),
   in four kinds taken in turn: a one-sided jump (label ``i`` onto its nearest labelled
   neighbour ``q``'s detection, 5-11 um away, ``q``'s row removed), a crossed pair (``i`` and ``q``
   exchanged), a duplicate (``i`` onto ``q``'s detection, ``q`` kept) and a displaced label (``i``
   onto its nearest unlabelled detection, 5-11 um away). A planted error is found
   when the check questions the planted row; the other findings are counted beside it.
   A pairwise check of the check (``pair_test``, no neighbour motion model) reads each finding
   with a partner, and, as its control, 200 unquestioned rows with their nearest neighbour; the
   second reading of ``displaced`` labels (``pair_reading``) is controlled the same way on 400
   unquestioned rows read against a random detection 3-7 um away.
3. **Both populations.** The CPD tracker's identities (``tracker_cpd.parquet``) scored by
   ``registered_distance`` (its defaults) over the whole recording (frame 0 its anchor, errors
   against the anchor identity, SPEC section 4); per half, AUROC* and correct coverage at
   FCR <= 1 %, 2 %, 5 % on all rows and on the rows the half's check does not question, with the
   count of rows and errors of each; and the rows whose labelled track's anchor-frame label the
   check questions (their errors are counted against that label: ``anchor_inherited``), with
   the unquestioned rows' numbers without them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bench_real_verifier import SHARED, tracker_rows
from trackverify.anchors import anchor_identities
from trackverify.benchmark.corrupt import label_errors
from trackverify.benchmark.dataset import load_dataset
from trackverify.reference_check import check_reference
from trackverify.report.numbers import fmt
from trackverify.benchmark.selective import auroc_abstain_as_error, risk_coverage_curve
from trackverify.verifiers import run_verifier
from trackverify.verifiers.registered_distance import RegisteredDistance

COORDS = ["x_um", "y_um", "z_um"]
SEED = 20261205


def pair_counts(findings: pd.DataFrame, top: int = 6) -> list:
    counts: dict = {}
    for tracks, partner, frames in zip(findings["tracks"], findings["partner"], findings["frames"]):
        pair = tuple(tracks) if len(tracks) == 2 else (tracks[0], None if pd.isna(partner) else int(partner))
        if pair[1] is None:
            continue
        key = tuple(sorted(pair))
        counts[key] = counts.get(key, 0) + len(frames)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def describe(obs: pd.DataFrame, dets: pd.DataFrame) -> tuple[dict, np.ndarray]:
    start = time.process_time()
    check = check_reference(obs, dets)
    seconds = time.process_time() - start
    f = check.findings
    first = int(obs["frame"].min())
    anchor = f[f["frames"].map(lambda v: v[0] == first)]
    out = {**check.summary(), "cpu_seconds": round(seconds, 2),
           "pair_test": pair_test(obs, dets, f),
           "pair_test_control": pair_test(obs, dets, control_pairs(obs, check.kept)),
           "pair_reading_control": pair_reading_control(obs, dets, check.kept),
           "mirror_test": mirror_test(obs, dets),
           "top_pairs": [[list(k), v] for k, v in pair_counts(f)],
           "anchor_findings": [{"tracks": t, "pattern": p, "partner": None if pd.isna(q) else int(q)}
                               for t, p, q in zip(anchor["tracks"], anchor["pattern"], anchor["partner"])]}
    return out, check.kept


def pair_test(obs: pd.DataFrame, dets: pd.DataFrame, findings: pd.DataFrame) -> dict:
    """A second, pairwise reading of the findings with a partner (one_sided, duplicate, crossed,
    and anchor ones with a partner): ``ref`` = pos(q) - pos(i) averaged over the two nearest
    frames (at most 5 away) where both are labelled; the label ``i`` at ``x`` is on ``q``'s place
    when a detection lies nearer ``x - ref`` (where ``i`` is if ``x`` is ``q``) than ``x + ref``
    (where ``q`` is if the label is right). No neighbour motion model: a check of the check."""
    by_track = {k: g.set_index("frame")[COORDS] for k, g in obs.groupby("track")}
    frames_of = dets.groupby("frame").indices
    points = dets[COORDS].to_numpy(dtype=np.float64)
    verdict = {"label_on_partner": 0, "label_right": 0, "no_reference_frame": 0}
    for f in findings[findings["partner"].notna()].itertuples():
        i, q, t = f.tracks[0], int(f.partner), f.frames[0]
        if q == i:
            i = f.tracks[1]
        both = by_track[i].index.intersection(by_track[q].index).difference(f.frames)
        near = both[np.argsort(np.abs(both - t), kind="stable")][:2]
        near = near[np.abs(near - t) <= 5]
        if not len(near) or t not in by_track[i].index:
            verdict["no_reference_frame"] += 1
            continue
        ref = (by_track[q].loc[near].to_numpy() - by_track[i].loc[near].to_numpy()).mean(axis=0)
        x = by_track[i].loc[t].to_numpy(dtype=np.float64)
        here = points[frames_of[t]]
        a = np.linalg.norm(here - (x - ref), axis=1).min()
        b = np.linalg.norm(here - (x + ref), axis=1).min()
        verdict["label_on_partner" if a < b else "label_right"] += 1
    return verdict


def reference_cube(obs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(frames, tracks, P)``: the labels as the check lays them out (frame x track x axis)."""
    from trackverify.reference_check.core import _cube

    frames, tracks = np.unique(obs["frame"]), np.unique(obs["track"])
    return frames, tracks, _cube(obs, frames, tracks, obs[COORDS].to_numpy(dtype=np.float64))


def unquestioned_by_half(observations: pd.DataFrame, detections: pd.DataFrame,
                         split: int = 373) -> np.ndarray:
    """The rows each half's check (frames <= ``split``, and the rest) does not question."""
    development = observations["frame"].to_numpy() <= split
    kept = np.ones(len(observations), dtype=bool)
    for mask in (development, ~development):
        dets = detections[(detections["frame"].to_numpy() <= split) == (mask is development)]
        kept[np.flatnonzero(mask)] = check_reference(observations[mask].reset_index(drop=True),
                                                     dets.reset_index(drop=True)).kept
    return kept


def pair_reading_control(obs: pd.DataFrame, dets: pd.DataFrame, kept: np.ndarray,
                         n: int = 400) -> dict:
    """The second reading's false rate: ``n`` unquestioned rows (seeded), each read as if its
    label belonged on a detection drawn at random 3-7 um from it (the distances of the
    displaced findings); the share read as supported by the check's rule (at least
    ``pair_support`` of at least two frames) is the rate at which a right label passes it."""
    from trackverify.reference_check import CheckSettings
    from trackverify.reference_check.core import _frame_points, pair_reading

    rule = CheckSettings()
    rng = np.random.default_rng(SEED)
    frames, tracks, P = reference_cube(obs)
    points = _frame_points(dets, obs, COORDS)
    supported = read_rows = 0
    for r in np.sort(rng.choice(np.flatnonzero(kept), size=min(n, int(kept.sum())), replace=False)):
        a = int(np.searchsorted(frames, obs["frame"].iat[r]))
        i = int(np.searchsorted(tracks, obs["track"].iat[r]))
        here = points[int(frames[a])]
        gap = np.linalg.norm(here - P[a, i], axis=1)
        choice = np.flatnonzero((gap > 3) & (gap < 7))
        if not len(choice):
            continue
        agree, read = pair_reading(P, a, i, P[a, i], here[rng.choice(choice)], points, frames,
                                   rule.window)
        if read >= 2:
            read_rows += 1
            supported += agree >= rule.pair_support * read
    return {"rows_read": read_rows, "supported": supported,
            "false_rate": supported / read_rows if read_rows else None}


def mirror_test(obs: pd.DataFrame, dets: pd.DataFrame) -> dict:
    """Rows with ``z >= z_min`` whose label sits on no tracked neuron's place (the partner rule of
    the check): how many have a detection at their predicted place ``p`` (at most ``ratio`` times
    the label's distance from it, as the rule asks) against how many have one at the point
    mirrored through the label, ``2 x - p`` (as far from the label, where chance alone puts a
    detection as often). The excess is what a label moved onto an unlabelled detection leaves."""
    from scipy.spatial import cKDTree

    from trackverify.reference_check import CheckSettings
    from trackverify.reference_check.core import median_spacing, residuals, robust_z

    rule = CheckSettings()
    frames, _, P = reference_cube(obs)
    r, prediction = residuals(P, rule)
    z = robust_z(r)
    half = median_spacing(P) / 2
    trees = {t: cKDTree(g[COORDS].to_numpy(dtype=np.float64)) for t, g in dets.groupby("frame")}
    at_place = mirrored = rows = 0
    for a, i in zip(*np.nonzero(np.nan_to_num(z, nan=-np.inf) >= rule.z_min)):
        x, p = P[a, i], prediction[a, i]
        if not np.isfinite(p).all() or int(frames[a]) not in trees:
            continue
        off = np.linalg.norm(x - p)
        to_place = np.linalg.norm(prediction[a] - x, axis=1)
        to_place[i] = np.inf
        if np.nanmin(np.nan_to_num(to_place, nan=np.inf)) < min(off, half):
            continue  # on a tracked neuron's place: not this test's rows
        tree = trees[int(frames[a])]
        near = tree.query(2 * x - p, k=2)[0]
        rows += 1
        at_place += tree.query(p)[0] <= rule.ratio * off
        mirrored += (near[1] if near[0] < 1e-6 else near[0]) <= rule.ratio * off
    return {"rows": rows, "detection_at_prediction": int(at_place),
            "detection_at_mirror": int(mirrored)}


def control_pairs(obs: pd.DataFrame, kept: np.ndarray, n: int = 200) -> pd.DataFrame:
    """``n`` unquestioned rows (seeded) as findings with their nearest labelled neighbour as
    partner: the pair test's control (it should say ``label_right``)."""
    rng = np.random.default_rng(SEED)
    rows = rng.choice(np.flatnonzero(kept), size=min(n, int(kept.sum())), replace=False)
    out = []
    for r in np.sort(rows):
        t = obs["frame"].iat[r]
        here = obs[obs["frame"].to_numpy() == t]
        gap = np.linalg.norm(here[COORDS].to_numpy() - obs[COORDS].iloc[r].to_numpy(), axis=1)
        gap[gap == 0] = np.inf
        out.append({"tracks": [int(obs["track"].iat[r])], "frames": [int(t)],
                    "partner": int(here["track"].iat[int(np.argmin(gap))])})
    return pd.DataFrame(out)


KINDS = ("one_sided", "crossed", "duplicate", "displaced")


def unlabelled(dets: pd.DataFrame, t: int, labelled: np.ndarray) -> np.ndarray:
    """Frame ``t``'s detections more than 0.5 um from every label."""
    here = dets.loc[dets["frame"].to_numpy() == t, COORDS].to_numpy(dtype=np.float64)
    gap = np.linalg.norm(here[:, None] - labelled[None], axis=2).min(axis=1)
    return here[gap > 0.5]


def plant(obs: pd.DataFrame, dets: pd.DataFrame, n: int,
          rng: np.random.Generator) -> tuple[pd.DataFrame, list]:
    """``n`` one-frame errors in distinct frames, the kinds of ``KINDS`` in turn; returns the
    labels and the planted rows (frame, track, kind) whose questioning counts as found."""
    obs = obs.copy()
    frames = rng.choice(np.unique(obs["frame"]), size=n, replace=False)
    planted, drop = [], []
    for k, t in enumerate(np.sort(frames)):
        here = obs.index[obs["frame"].to_numpy() == t]
        xyz = obs.loc[here, COORDS].to_numpy(dtype=np.float64)
        kind = KINDS[k % len(KINDS)]
        if kind == "displaced":  # onto the nearest unlabelled detection, 5-11 um away
            free = unlabelled(dets, t, xyz)
            gap = np.linalg.norm(xyz[:, None] - free[None], axis=2) if len(free) else np.full((len(xyz), 1), np.inf)
        else:
            gap = np.linalg.norm(xyz[:, None] - xyz[None], axis=2)
            np.fill_diagonal(gap, np.inf)
        nearest = gap.min(axis=1)
        ok = np.flatnonzero((nearest >= 5) & (nearest <= 11))
        if not len(ok):
            continue
        a = ok[rng.integers(len(ok))]
        b = int(np.argmin(gap[a]))
        ra = here[a]
        if kind == "displaced":
            obs.loc[ra, COORDS] = free[b]
            planted.append((int(t), int(obs.at[ra, "track"]), kind))
            continue
        rb = here[b]
        pa, pb = xyz[a].copy(), xyz[b].copy()
        obs.loc[ra, COORDS] = pb
        if kind == "crossed":
            obs.loc[rb, COORDS] = pa
        if kind == "one_sided":
            drop.append(rb)
        planted.append((int(t), int(obs.at[ra, "track"]), kind))
    return obs.drop(index=drop), planted


def recall(obs: pd.DataFrame, dets: pd.DataFrame, n: int) -> dict:
    labels, planted = plant(obs, dets, n, np.random.default_rng(SEED))
    check = check_reference(labels, dets)
    questioned = labels.loc[check.rows["questioned"].to_numpy(), ["frame", "track"]]
    hit = set(map(tuple, questioned.to_numpy().tolist()))
    out = {"planted": len(planted)}
    for kind in KINDS:
        rows = [(t, i) for t, i, k in planted if k == kind]
        out[f"recall_{kind}"] = sum(r in hit for r in rows) / len(rows) if rows else None
    found = sum((t, i) in hit for t, i, _ in planted)
    out["recall"] = found / len(planted)
    out["findings_total"] = len(check.findings)
    base = check_reference(obs, dets).summary()["findings"]
    out["findings_without_planting"] = base
    return out


def populations(error: np.ndarray, score: np.ndarray, half: np.ndarray, kept: np.ndarray) -> dict:
    out = {}
    for name, mask in (("all_rows", half), ("unquestioned_rows", half & kept)):
        e, s = error[mask], score[mask]
        curve = risk_coverage_curve(e, s)
        fcr, cov = curve["false_certification_rate"], curve["correct_coverage"]
        block = {"rows": int(mask.sum()), "scored_rows": int((~np.isnan(e)).sum()),
                 "errors": int(np.nansum(e)), "auroc_abst": auroc_abstain_as_error(e, s)}
        for level in (0.01, 0.02, 0.05):
            ok = fcr <= level
            block[f"cov_at_fcr{round(level * 100)}"] = float(cov[ok].max()) if ok.any() else 0.0
        out[name] = block
    return out


def pictures(obs: pd.DataFrame, dets: pd.DataFrame, folder: Path, n: int = 6) -> None:
    from trackverify.io.atomic import ensure_folder, write_text_atomic
    from trackverify.reference_check.write import picture

    folder = ensure_folder(folder)
    for _, finding in check_reference(obs, dets).findings.head(n).iterrows():
        write_text_atomic(folder / f"finding-{finding['rank']}.svg", picture(finding, obs, dets))


def real_recording(data: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``(observations, detections, tracker rows, error)`` of the real recording: the CPD
    tracker's identities joined onto the reference and each row's error against the frame-0
    identity (SPEC section 4; NaN where unlabelled)."""
    (_, source), = load_dataset(data).sources()
    observations, detections = source.load(), source.load_detections()
    tracker = tracker_rows(data, observations, source.first_frame)
    error = label_errors(tracker, anchor_identities(tracker)).astype("Float64").to_numpy(
        dtype=np.float64, na_value=np.nan)
    return observations, detections, tracker, error


def scores_against(positions: np.ndarray, table: pd.DataFrame, ids: pd.Index) -> np.ndarray:
    """``d + max(0, d - alt)`` of each row against ``positions`` (T, n, D; NaN = no place):
    ``d`` to its claimed id's place, ``alt`` to the nearest other place (NaN without a place
    for the claimed id)."""
    xyz, frames = table[COORDS].to_numpy(dtype=np.float64), table["frame"].to_numpy()
    which = ids.get_indexer(table["pred_id"])
    out = np.full(len(table), np.nan)
    for t in np.unique(frames[which >= 0]):
        g = np.flatnonzero((frames == t) & (which >= 0))
        gap = np.linalg.norm(xyz[g][:, None] - positions[t][None], axis=2)
        own = gap[np.arange(len(g)), which[g]].copy()
        gap[np.arange(len(g)), which[g]] = np.inf
        alt = np.where(np.isnan(gap), np.inf, gap).min(axis=1)
        out[g] = own + np.maximum(0.0, own - alt)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "fdnc-nerve-freely-moving")
    parser.add_argument("--split", type=int, default=373)
    parser.add_argument("--injections", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--score", choices=("distance", "relative"), default="distance",
                        help="registered_distance's score (its setting; distance is its default)")
    parser.add_argument("--pictures", type=Path, default=None,
                        help="write the development half's 6 strongest findings as SVG here")
    args = parser.parse_args()
    observations, detections, tracker, error = real_recording(args.data)
    result = {"command": "benchmarks/check_reference_real.py", "split": args.split}
    start = time.process_time()
    score = run_verifier(RegisteredDistance(score=args.score), tracker, detections)
    result["verifier_cpu_seconds"] = round(time.process_time() - start, 1)
    development = observations["frame"].to_numpy() <= args.split
    for half, mask in (("development", development), ("rest", ~development)):
        obs = observations[mask].reset_index(drop=True)
        dmask = (detections["frame"].to_numpy() <= args.split) == (half == "development")
        dets = detections[dmask].reset_index(drop=True)
        check, kept_half = describe(obs, dets)
        if half == "development" and args.pictures:
            pictures(obs, dets, args.pictures)
        block = {"check": check}
        if half == "development" and args.injections:
            block["planted"] = recall(obs, dets, args.injections)
        kept = np.ones(len(observations), dtype=bool)
        kept[np.flatnonzero(mask)] = kept_half
        if half == "development":  # the anchor frame's questioned labels, whose errors every row inherits
            first = observations["frame"].to_numpy() == observations["frame"].min()
            doubted = observations["track"].to_numpy()[first & ~kept]
            inherits = np.isin(observations["track"].to_numpy(), doubted)
        block["registered_distance"] = populations(error, score, mask, kept)
        block["anchor_inherited"] = {
            "tracks": sorted(int(t) for t in doubted), "rows": int((mask & inherits).sum()),
            "errors": int(np.nansum(error[mask & inherits])),
            "unquestioned_without_them": populations(error, score, mask, kept & ~inherits)["unquestioned_rows"]}
        result[half] = block
        print(half, json.dumps(block, default=fmt, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
