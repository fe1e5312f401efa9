"""The audit of trackers that link, measured against the hidden reference (issue: every
identity judged).

Cases (``benchmarks/linker_cases.py`` makes the first two; the third is the shipped output):

- ``laptrack``: laptrack on every detection of the real recording (settings by a rule from
  the detections alone);
- ``cpd_cut``: the CPD template tracker's output cut into fragments (mean 60 frames);
- ``cpd``: the CPD tracker's output as shipped (the audit before the cut).

Each is audited as a lab would (``trackverify.audit(tracks)``: anchor frame = the first
frame, no detections table, as the guide advises) and written out (``write_audit``). The
reference (``observations.parquet``, joined on recording, frame, detection) is read only
afterwards. **Wrong** (the question the audit answers): a judged observation whose reference
neuron differs from the reference neuron of its track's start (the anchor-frame row for an
id there, the track's first observation otherwise); defined only where the reference labels
both detections (laptrack also links the unlabelled detections: those rows are counted,
not measured). For ``cpd`` this is ``pred_id != track`` on every row (its anchor-frame ids
are the reference's), the definition of ``audit_real.py``.

Numbers per case: the share of observations with an id that are judged (certified or
flagged; first observations aside), AUROC* of ``relative_score`` (abstained ranked most
suspicious) and of ``score``, the share of certified rows that are wrong, the top-20 events'
share of the wrong rows, the events by kind; joins: of the tracks that start after the
anchor frame on a neuron an anchor identity holds (by the reference), the share proposed as
a join to that identity (recall), and of the proposed joins the share right (precision);
continuity; the coverage of ``audit estimate``'s 95 % interval at N = 200 (the design of
``audit sample`` on the measured rows, ``--draws`` seeded draws, a reviewer deciding each
row by the reference: ``error_rate_coverage.design_table``); the audit's time.

    python benchmarks/audit_linkers.py [--cases DIR] [--data DIR] [--draws 1000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import trackverify
from audit_events import event_numbers
from error_rate_coverage import design_table
from linker_cases import DATA, OUT
from trackverify.audit.result import audited
from trackverify.audit.write import write_audit
from trackverify.benchmark.selective import auroc_abstain_as_error
from trackverify.review.design import audited_population

KEYS = ["recording", "frame", "detection"]
GOALS = {"judged_share": ">= 0.95", "auroc_star": ">= 0.95 (linker)",
         "certified_wrong_share": "<= 0.05 (linker)", "coverage_200": ">= 0.95",
         "join_recall": ">= 0.80 (cut)", "join_precision": ">= 0.95 (cut)"}


def load_case(name: str, cases: Path, data: Path) -> pd.DataFrame:
    """A case's tracker output with positions (the CPD outputs carry detection ids only:
    positions joined from the reference's rows, as ``audit_real.load`` does)."""
    if name == "cpd":
        tracks = pd.read_parquet(data / "tracker_cpd.parquet")
    else:
        tracks = pd.read_parquet(cases / f"{name}.parquet")
    if "x_um" not in tracks.columns:
        observations = pd.read_parquet(data / "observations.parquet")
        tracks = tracks.merge(observations[[*KEYS, "x_um", "y_um", "z_um"]], on=KEYS,
                              how="left", validate="one_to_one")
    return tracks


def truth_of(observations: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """The audit's rows with ``track`` (reference neuron, NaN: unlabelled), ``start_track``
    (the reference neuron of the track's start) and ``wrong`` (NaN: undefined)."""
    rows = observations.merge(truth, on=KEYS, how="left", validate="many_to_one")
    start = rows[rows["reason"].isin(["anchor_frame", "track_start"]).to_numpy()]
    start = start.drop_duplicates(["recording", "pred_id"]).set_index(
        ["recording", "pred_id"])["track"].rename("start_track")
    rows = rows.join(start, on=["recording", "pred_id"])
    known = rows["track"].notna() & rows["start_track"].notna()
    rows["wrong"] = np.where(known, (rows["track"] != rows["start_track"]).astype(float), np.nan)
    return rows


def join_numbers(result, rows: pd.DataFrame) -> dict:
    """Recall and precision of the joins against the reference (module docstring)."""
    anchor = rows[rows["reason"].eq("anchor_frame").to_numpy()]
    identity_of_track = (anchor.dropna(subset=["track"]).drop_duplicates("track")
                         .set_index("track")["pred_id"])
    starts = rows[rows["reason"].eq("track_start").to_numpy() & rows["track"].notna().to_numpy()]
    should = starts[starts["track"].isin(identity_of_track.index).to_numpy()]
    should = should.assign(identity=identity_of_track.reindex(should["track"]).to_numpy())
    joins = result.joins
    proposed = joins.merge(starts[["recording", "pred_id", "track"]].rename(
        columns={"pred_id": "id"}), on=["recording", "id"], how="left")
    proposed = proposed.assign(truth=identity_of_track.reindex(proposed["track"]).to_numpy())
    measured = proposed[proposed["track"].notna().to_numpy()]
    right = (pd.to_numeric(measured["truth"]).to_numpy(float)
             == pd.to_numeric(measured["continues"]).to_numpy(float))
    found = should.merge(joins[["recording", "id", "continues"]].rename(columns={"id": "pred_id"}),
                         on=["recording", "pred_id"], how="left")
    recalled = (pd.to_numeric(found["continues"]).to_numpy(float)
                == pd.to_numeric(found["identity"]).to_numpy(float))
    return {"later_tracks": int(rows["reason"].eq("track_start").sum()),
            "continuing_an_identity": int(len(should)),
            "join_recall": float(recalled.mean()) if len(should) else None,
            "joins_proposed": int(len(joins)), "joins_measured": int(len(measured)),
            "join_precision": float(right.mean()) if len(measured) else None}


def measure_case(name: str, tracks: pd.DataFrame, truth: pd.DataFrame, draws: int) -> dict:
    start = time.perf_counter()
    result = trackverify.audit(tracks)
    seconds = time.perf_counter() - start
    rows = truth_of(result.observations, truth)
    with_id = rows[audited(rows)]
    decided = with_id["verdict"].isin(["certified", "flagged"]).to_numpy()
    measured = with_id[with_id["wrong"].notna().to_numpy()]
    wrong = measured["wrong"].to_numpy(bool)
    certified = measured["verdict"].to_numpy() == "certified"
    counts = result.summary["counts"]
    numbers = {
        "case": name, "ids": int(tracks["pred_id"].nunique()), "seconds": round(seconds, 1),
        "rows_with_id": int(rows["pred_valid"].sum()), "first_observations": int(
            rows["reason"].isin(["anchor_frame", "track_start"]).sum()),
        "judged_rows": int(len(with_id)), "judged_share": float(decided.mean()),
        "abstained_by_reason": counts["abstained_by_reason"],
        "measured_rows": int(len(measured)), "wrong": int(wrong.sum()),
        "prevalence": float(wrong.mean()) if len(wrong) else None,
        "auroc_star": auroc_abstain_as_error(wrong.astype(np.int8),
                                             measured["relative_score"].to_numpy(float)),
        "auroc_star_um": auroc_abstain_as_error(wrong.astype(np.int8),
                                                measured["score"].to_numpy(float)),
        "certified_wrong_share": float(wrong[certified].mean()) if certified.any() else None,
        "events_by_kind": counts["events_by_kind"],
        "continuity": result.summary["continuity"],
    }
    numbers |= {k: v for k, v in event_numbers(
        measured.assign(wrong=wrong), measured["event"].to_numpy(dtype=float, na_value=np.nan)
    ).items() if k in ("events", "top20_wrong_share", "top20_true")}
    numbers |= join_numbers(result, rows)
    with tempfile.TemporaryDirectory() as tmp:
        write_audit(result, Path(tmp) / "audit")
        population = audited_population(Path(tmp) / "audit")
    population = population.merge(rows[[*KEYS, "wrong"]], on=KEYS, how="left")
    known = population[population["wrong"].notna().to_numpy()].assign(
        wrong=lambda d: d["wrong"].astype(bool))
    numbers["coverage_population"] = int(len(known))
    numbers["coverage"] = design_table(known, [200], draws, seed=46)
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=OUT)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    truth = pd.read_parquet(args.data / "observations.parquet")[[*KEYS, "track"]]
    report = {"goals": GOALS, "cases": []}
    for name in args.only or ("cpd", "cpd_cut", "laptrack"):
        numbers = measure_case(name, load_case(name, args.cases, args.data), truth, args.draws)
        report["cases"].append(numbers)
        print(json.dumps(numbers, default=str))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
