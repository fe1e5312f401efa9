"""Audit a real tracker's output with the reference hidden, then measure it against the truth.

Data: ``../shared/data/fdnc-nerve-freely-moving`` (a freely moving C. elegans, NeRVE/fDNC):
``tracker_cpd.parquet`` is a real CPD tracker's output (about 9 % wrong identities) on the
labelled detections of ``observations.parquet``; ``detections.parquet`` holds every detection.
The audit sees the tracker's ids, positions and the detections -- never ``track``.

**Wrong**, for this benchmark: an audited observation (after the anchor frame, with a valid
predicted id) is wrong when ``pred_id != track``, the tracker's identity is not the
reference's for that detection. The tracker's ids are the anchor frame's labelled neurons, so
on a neuron the anchor frame does not label (8 neurons, 1,004 valid rows from frame 0) no
prediction can be right and every one counts as wrong: the tracker says "this detection is
neuron p" and the reference names it another neuron. That label means what it says only as
far as the reference is consistent between its anchor frame and later frames; where it is not
(``unanchored_pairs`` below measures it: the reference audited as if it were a tracker),
those rows are errors the audit is not built to see (docs/evidence/audit.md).
The definition is kept as it is; the neurons labelled in the anchor frame are reported as a
second population, not as a replacement.

Reported, over audited observations, for all of them, for the neurons labelled in the anchor
frame (the population of ``bench_real_verifier.py``, whose ``label_errors`` leave the other
neurons' rows unlabelled), for each half of the recording, and for all but the rows of the two
(neuron without an anchor identity, predicted id) pairs with the most certified rows:

- AUROC* for a wrong identity (abstained rows ranked most suspicious) of the audit's
  ``relative_score`` (the ranking it uses) and of ``score`` (um);
- recall: share of wrong observations inside suspect segments (the ``segment`` column);
- share of certified observations that are wrong, and share of correct ones certified;
- how many top-ranked segments a reviewer works down to see 90 % of the wrong observations,
  and the share of the observations those segments hold; the share of wrong observations
  inside the top segments that hold at most 20 % of the observations.

Goals (issue): AUROC* >= 0.95; certified <= 1 % wrong while certifying >= 70 % of correct;
90 % of wrong observations inside top segments holding <= 20 % of observations.

Then, per (neuron without an anchor identity, predicted id) pair: its rows by verdict, the
rows in whose frame the reference labels that predicted id on another detection, and the
share of the reference's own rows of that id the audit flags when it audits the reference
as if it were a tracker (``pred_id = track``): a large share says the reference's anchor
label and its later labels of that id disagree with the registration, as the tracker does.
``--anchor-frame N`` audits from another frame, checked: its rows take the reference
identities, as a person who checked that frame would leave them (a held-out start; the
tracker's ids it does not name are ``not_in_anchor_frame``). The tracker's own ids there
would put its errors of that frame beyond the audit's reach ("errors already present in the
anchor frame").

ZephIR (``../shared/data/zephir-ift20-demo``): ZephIR's own output read from its native
``annotations-g.h5``, audited; the verdicts of the rows a person annotated (``provenance`` =
``ANTT``, identities correct by construction) are counted: none should be flagged.

    python benchmarks/audit_real.py [--data DIR] [--threshold-um X] [--anchor-frame N]
                                    [--no-detections] [--track-window H] [--merge-k M]

``--track-window H``: the audit's registered_distance with that track pooling window (0 = off;
default: the verifier's default); ``--merge-k M`` likewise its merged-anchor factor (0 = off);
the reference's self-audit keeps the defaults.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import trackverify
from trackverify.benchmark.selective import auroc_abstain_as_error
from trackverify.verifiers.registered_distance import RegisteredDistance

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATA = SHARED / "fdnc-nerve-freely-moving"
ZEPHIR = SHARED / "zephir-ift20-demo" / "annotations-g.h5"


def load(data: Path, anchor_frame: int | None = None
         ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tracker output (positions joined from the observations; no ``track``), every
    detection, and the truth (``recording, frame, detection, track``). With ``anchor_frame``,
    that frame's rows carry the reference identities, as a person who checked it would
    leave them (every labelled detection named); at frame 0 they already do (70 of 70)."""
    observations = pd.read_parquet(data / "observations.parquet")
    tracker = pd.read_parquet(data / "tracker_cpd.parquet")
    keys = ["recording", "frame", "detection"]
    joined = tracker.merge(observations[[*keys, "track", "x_um", "y_um", "z_um"]], on=keys,
                           how="left", validate="one_to_one")
    if anchor_frame is not None:
        checked = joined["frame"].eq(anchor_frame)
        joined.loc[checked, "pred_id"] = joined.loc[checked, "track"].astype("int64")
        joined.loc[checked, "pred_valid"] = True
    truth = joined[[*keys, "track"]]
    tracks = joined.drop(columns=["track"])
    detections = pd.read_parquet(data / "detections.parquet")
    return tracks, detections, truth


def audited_rows(result, truth: pd.DataFrame) -> pd.DataFrame:
    """The audited observations (valid id, after the anchor frame, a track's own start
    aside: ``trackverify.audit.result.audited``) with ``track`` joined."""
    from trackverify.audit.result import audited

    obs = result.observations.merge(truth, on=["recording", "frame", "detection"], how="left",
                                    validate="one_to_one")
    return obs[audited(obs)]


def anchor_frame_tracks(result, truth: pd.DataFrame) -> pd.Series:
    """The reference tracks of the anchor frame's rows."""
    obs = result.observations.merge(truth, on=["recording", "frame", "detection"], how="left",
                                    validate="one_to_one")
    return obs.loc[obs["reason"].eq("anchor_frame").to_numpy(), "track"]


def without_pairs(result, truth: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """Mask over the audited rows: every row except those of the given (track, pred_id)
    pairs."""
    rows = audited_rows(result, truth)
    key = pd.MultiIndex.from_frame(rows[["track", "pred_id"]].astype("Int64"))
    return ~key.isin(pd.MultiIndex.from_frame(pairs[["track", "pred_id"]].astype("Int64")))


def measure(result, truth: pd.DataFrame, rows: np.ndarray | None = None) -> dict:
    """The issue's numbers over audited observations (``rows``: a mask over the audited rows,
    in ``result.observations`` order, to measure a subset; segments are still the audit's).

    AUROC* is of ``relative_score`` (the ranking the audit uses: score / the id's anchor
    spacing) and of ``score`` (um). A wrong observation lies in a segment when its
    ``segment`` column is set; the reviewer reads segments in rank order, and
    ``recall_at_20pct_obs`` is the share of wrong observations inside the top segments that
    hold at most 20 % of the measured observations.
    """
    obs = audited_rows(result, truth)
    if rows is not None:
        obs = obs[rows]
    wrong = (obs["pred_id"].astype("Int64") != obs["track"].astype("Int64")).to_numpy(bool)
    certified = obs["verdict"].to_numpy() == "certified"
    seg = obs["segment"].to_numpy(dtype=np.float64, na_value=np.nan)
    inside = np.isfinite(seg)
    n, n_wrong = len(obs), int(wrong.sum())
    # reviewer's curve: segments in rank order, cumulative wrong rows and rows seen
    ranks = np.sort(np.unique(seg[inside]))
    per_wrong = np.bincount(np.searchsorted(ranks, seg[inside & wrong]), minlength=len(ranks))
    per_rows = np.bincount(np.searchsorted(ranks, seg[inside]), minlength=len(ranks))
    seen_wrong, seen_rows = np.cumsum(per_wrong), np.cumsum(per_rows)
    need = int(np.ceil(0.9 * n_wrong))
    k = int(np.searchsorted(seen_wrong, need)) if n_wrong else len(ranks)
    within = int(np.searchsorted(seen_rows, 0.2 * n, side="right"))
    return {
        "audited": n, "wrong": n_wrong, "prevalence": n_wrong / n if n else None,
        "auroc_star": auroc_abstain_as_error(wrong.astype(np.int8),
                                             obs["relative_score"].to_numpy(float)),
        "auroc_star_um": auroc_abstain_as_error(wrong.astype(np.int8), obs["score"].to_numpy(float)),
        "recall_in_segments": float(inside[wrong].mean()) if n_wrong else None,
        "certified_wrong_share": float(wrong[certified].mean()) if certified.any() else None,
        "correct_certified_share": float(certified[~wrong].mean()),
        "segments": int(len(ranks)), "obs_share_in_segments": float(inside.mean()),
        "segments_for_90pct": int(k + 1) if k < len(ranks) else None,
        "obs_share_for_90pct": float(seen_rows[k] / n) if k < len(ranks) else None,
        "recall_at_20pct_obs": float(seen_wrong[within - 1] / n_wrong) if within and n_wrong else 0.0,
    }


def unanchored_pairs(result, truth: pd.DataFrame, observations: pd.DataFrame,
                     detections: pd.DataFrame | None) -> pd.DataFrame:
    """Per (neuron absent from the anchor frame, predicted id) pair of audited rows: rows,
    certified / flagged / abstained, ``id_elsewhere`` (rows in whose frame the reference labels
    the predicted id on another detection: two different detections named the same neuron,
    the tracker's and the reference's), and ``ref_flagged_share`` (the share of the audited
    reference rows of that id flagged when the reference itself, ``pred_id = track``, is
    audited from the same anchor frame with the same detections)."""
    rows = audited_rows(result, truth)
    rows = rows[~rows["track"].isin(anchor_frame_tracks(result, truth)).to_numpy()]
    labelled = observations[["recording", "frame", "track"]].rename(columns={"track": "pred_id"})
    elsewhere = rows[["recording", "frame", "pred_id"]].astype({"pred_id": "int64"}).merge(
        labelled.drop_duplicates(), how="left", indicator=True)["_merge"].eq("both").to_numpy()
    reference = observations.drop(columns=["track"]).assign(pred_id=observations["track"],
                                                            pred_valid=True)
    anchor = int(result.observations.loc[result.observations["reason"].eq("anchor_frame"),
                                          "frame"].min())
    ref = trackverify.audit(reference, detections, anchor_frame=anchor).observations
    from trackverify.audit.result import audited

    ref = ref[audited(ref)]
    ref_flagged = ref["verdict"].eq("flagged").groupby(ref["pred_id"]).mean()
    pairs = rows.assign(id_elsewhere=elsewhere, certified=rows["verdict"].eq("certified"),
                        flagged=rows["verdict"].eq("flagged"),
                        abstained=rows["verdict"].eq("abstained")).groupby(
        ["track", "pred_id"], sort=True)
    table = pairs.agg(rows=("frame", "size"), certified=("certified", "sum"),
                      flagged=("flagged", "sum"), abstained=("abstained", "sum"),
                      id_elsewhere=("id_elsewhere", "sum")).reset_index()
    table["ref_flagged_share"] = table["pred_id"].astype("int64").map(ref_flagged)
    table.attrs["ref_flagged_median"] = float(ref_flagged.median())
    return table.sort_values(["rows", "track", "pred_id"], ascending=[False, True, True],
                             kind="stable").reset_index(drop=True)


def populations(result, truth: pd.DataFrame) -> dict[str, np.ndarray]:
    """Masks over the audited rows: all; neurons with an anchor identity (the population of
    ``bench_real_verifier.py``'s ``label_errors``: a neuron absent from the anchor frame has
    no anchor id and its rows no label there); the two halves of the recording."""
    anchor_tracks = anchor_frame_tracks(result, truth)
    rows = audited_rows(result, truth)
    middle = np.median(np.unique(rows["frame"]))
    return {"all": np.ones(len(rows), dtype=bool),
            "anchored neurons": rows["track"].isin(anchor_tracks).to_numpy(),
            "first half": (rows["frame"] <= middle).to_numpy(),
            "second half": (rows["frame"] > middle).to_numpy()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--threshold-um", type=float, default=None)
    parser.add_argument("--anchor-frame", type=int, default=None)
    parser.add_argument("--no-detections", action="store_true")
    parser.add_argument("--track-window", type=int, default=None)
    parser.add_argument("--merge-k", type=float, default=None)
    args = parser.parse_args()
    tracks, detections, truth = load(args.data, args.anchor_frame)
    evidence = None if args.no_detections else detections
    start = time.perf_counter()
    options = {key: value for key, value in (("track_window", args.track_window),
                                             ("merge_k", args.merge_k)) if value is not None}
    result = trackverify.audit(tracks, evidence, threshold_um=args.threshold_um,
                               anchor_frame=args.anchor_frame,
                               verifier=RegisteredDistance(**options) if options else None)
    seconds = time.perf_counter() - start
    print(f"audit: {seconds:.1f} s end to end; {result}")
    print("threshold (median over identities):", result.summary["threshold"]["per_recording_um"])
    for name, rows in populations(result, truth).items():
        print(f"{name}:")
        for k, v in measure(result, truth, rows).items():
            print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    print("abstained by reason:", result.summary["counts"]["abstained_by_reason"])
    pairs = unanchored_pairs(result, truth, pd.read_parquet(args.data / "observations.parquet"),
                             evidence)
    print("neurons without an anchor identity, by (neuron, predicted id); reference "
          f"self-audit: median flagged share over ids {pairs.attrs['ref_flagged_median']:.3f}")
    print(pairs.head(12).to_string(index=False, float_format="{:.3f}".format))
    print("  total:", pairs[["rows", "certified", "flagged", "abstained", "id_elsewhere"]]
          .sum().to_dict())
    most = pairs.sort_values(["certified", "track", "pred_id"], ascending=[False, True, True],
                             kind="stable").head(2)
    print("all but the rows of the two pairs above with the most certified rows "
          f"{list(zip(most['track'].astype(int), most['pred_id'].astype(int)))}:")
    for k, v in measure(result, truth, without_pairs(result, truth, most)).items():
        print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    if ZEPHIR.is_file():
        zephir = audit_zephir(ZEPHIR)
        print(f"ZephIR demo: {zephir['result']}")
        print("  verdicts of manually annotated rows (ANTT):", zephir["annotated"])
        print("  verdicts of ZephIR's tracked rows (ZEIR):", zephir["tracked"])


def audit_zephir(path: Path) -> dict:
    """ZephIR's output through its native reader, audited; verdicts by provenance."""
    from trackverify.io.tracks import read_tracks

    tracks = read_tracks(path, "predictions").table
    result = trackverify.audit(tracks.drop(columns=["parent_track"]))
    obs = result.observations
    later = obs["reason"].ne("anchor_frame")
    counts = obs[later].groupby(["provenance", "verdict"]).size()
    return {"result": result,
            "annotated": counts.get("ANTT", pd.Series(dtype=int)).to_dict(),
            "tracked": counts.get("ZEIR", pd.Series(dtype=int)).to_dict()}


if __name__ == "__main__":
    main()
