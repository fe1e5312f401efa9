"""Helpers of the graph-metric tests: the traccuracy runner, lineage tables, perturbations."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: traccuracy's Python: its own environment, or the one TRACKVERIFY_TRACCURACY_PYTHON names
#: (tests/test_field.py: the environment trackverify and traccuracy share).
TRACCURACY_PYTHON = Path(os.environ.get("TRACKVERIFY_TRACCURACY_PYTHON")
                         or ROOT / ".venv-traccuracy" / "bin" / "python")
DATA = ROOT.parent / "shared" / "data" / "tracker-formats"


def _reference(*args: str) -> dict:
    if not TRACCURACY_PYTHON.exists():
        from tests.conftest import missing_reference
        missing_reference("reference environment .venv-traccuracy is absent (make test builds it)")
    done = subprocess.run([str(TRACCURACY_PYTHON), str(HERE / "traccuracy_reference.py"), *args],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def table(frame, track, parent, xyz) -> pd.DataFrame:
    """A lineage table: frame, track, parent_track (None when -1), x_um, y_um[, z_um]."""
    xyz = np.asarray(xyz, dtype=float)
    df = pd.DataFrame({"frame": np.asarray(frame, dtype=np.int64),
                       "track": np.asarray(track, dtype=np.int64)})
    parent = np.asarray(parent, dtype=np.int64)
    df["parent_track"] = pd.array(np.where(parent >= 0, parent, 0), dtype="Int64")
    df.loc[parent < 0, "parent_track"] = pd.NA
    for k, name in enumerate(["x_um", "y_um", "z_um"][: xyz.shape[1]]):
        df[name] = xyz[:, k]
    return df


def _columns(df: pd.DataFrame, identity: str):
    coords = [c for c in ("x_um", "y_um", "z_um") if c in df.columns]
    parent = df["parent_track"].astype("Int64").fillna(-1).to_numpy(np.int64)
    return (df["frame"].to_numpy(np.int64), df[identity].to_numpy(np.int64), parent,
            df[coords].to_numpy(np.float64))


def run_points(tmp_path: Path, cases: dict, frame_buffer: int = 1) -> dict:
    """traccuracy's results (PointMatcher) per case ``name: (gt, pred, threshold)`` (lineage
    tables with identity column ``track``), in one reference process."""
    paths = []
    for name, (gt, pred, threshold) in cases.items():
        path = tmp_path / f"points_{name}.npz"
        g, p = _columns(gt, "track"), _columns(pred, "track")
        np.savez(path, threshold=threshold, frame_buffer=frame_buffer,
                 **{f"gt_{k}": v for k, v in zip(("frame", "id", "parent", "xyz"), g)},
                 **{f"pred_{k}": v for k, v in zip(("frame", "id", "parent", "xyz"), p)})
        paths.append(str(path))
    return dict(zip(cases, _reference("points", *paths)))


def run_ctc(tmp_path: Path, cases: dict) -> dict:
    """traccuracy's results (CTCMatcher) per case ``name: (gt_dir, res_dir)``, each with the
    label stacks it read (``masks``: ``gt``, ``pred``), or ``{"error": ...}`` for a case
    traccuracy refuses."""
    args = []
    for name, (gt_dir, res_dir) in cases.items():
        args += [str(gt_dir), str(res_dir), str(tmp_path / f"masks_{name}.npz")]
    out = dict(zip(cases, _reference("ctc", *args)))
    for name in cases:
        if "error" in out[name]:
            continue
        z = np.load(tmp_path / f"masks_{name}.npz")
        out[name]["masks"] = {"gt": z["gt"], "pred": z["pred"]}
    return out


def geff_tables(tmp_path: Path, stores: dict) -> dict:
    """GEFF stores as lineage tables (converted in the reference environment)."""
    args = []
    for name, store in stores.items():
        args += [str(store), str(tmp_path / f"geff_{name}.npz")]
    _reference("geff", *args)
    out = {}
    for name in stores:
        z = np.load(tmp_path / f"geff_{name}.npz")
        out[name] = table(z["frame"], z["id"], z["parent"], z["xyz"])
    return out


def ctc_table(track_file: Path) -> pd.DataFrame:
    """CTC ``L B E P`` rows as one observation per (track, frame), without coordinates."""
    rows = np.loadtxt(track_file, dtype=np.int64, ndmin=2)
    n = rows[:, 2] - rows[:, 1] + 1
    track = np.repeat(rows[:, 0], n)
    frame = np.concatenate([np.arange(b, e + 1) for b, e in rows[:, 1:3]])
    parent = np.repeat(np.where(rows[:, 3] > 0, rows[:, 3], -1), n)
    return table(frame, track, parent, np.zeros((len(frame), 2)))


def traccuracy_names(res: dict) -> dict:
    """traccuracy's results under our names."""
    c = res["ctc"]
    out = {"aogm": c["AOGM"], "det": c["DET"], "tra": c["TRA"], "lnk": c["LNK"],
           "ns_nodes": c["ns_nodes"], "fp_nodes": c["fp_nodes"], "fn_nodes": c["fn_nodes"],
           "fp_edges": c["fp_edges"], "fn_edges": c["fn_edges"], "ws_edges": c["ws_edges"],
           "chota": res["chota"]["CHOTA"]}
    names = {"Division Recall": "division_recall", "Division Precision": "division_precision",
             "Division F1": "division_f1", "Total GT Divisions": "gt_divisions",
             "Total Predicted Divisions": "pred_divisions",
             "True Positive Divisions": "tp_divisions", "False Positive Divisions": "fp_divisions",
             "False Negative Divisions": "fn_divisions", "Wrong Children Divisions": "wc_divisions",
             "Mitotic Branching Correctness": "mitotic_branching_correctness"}
    for fb, values in res.get("divisions", {}).items():
        key = "frame_buffer_" + fb.split()[-1]
        out[key] = {names[k]: v for k, v in values.items()}
    return out


def perturb(df: pd.DataFrame, seed: int, jitter: float = 0.5, drop: float = 0.05,
            false_divisions: int = 5, missed_divisions: int = 5, extra: float = 0.03
            ) -> pd.DataFrame:
    """A prediction from a lineage: positions jittered, observations dropped, daughters cut
    loose (missed divisions), tracks split into two daughters (false divisions), extras."""
    rng = np.random.default_rng(seed)
    coords = [c for c in ("x_um", "y_um", "z_um") if c in df.columns]
    out = df.copy()
    out[coords] = out[coords].to_numpy() + rng.normal(0, jitter, (len(out), len(coords)))
    has_parent = out.groupby("track")["parent_track"].first().dropna()
    cut = rng.choice(has_parent.index.to_numpy(), min(missed_divisions, len(has_parent)),
                     replace=False)
    out.loc[out["track"].isin(cut), "parent_track"] = pd.NA
    next_id = int(out["track"].max()) + 1
    lengths = out.groupby("track")["frame"].agg(["min", "max"])
    long = lengths[(lengths["max"] - lengths["min"]) >= 6]
    for track in rng.choice(long.index.to_numpy(), min(false_divisions, len(long)), replace=False):
        split = int(long.loc[track, "min"]) + 3
        rows = (out["track"] == track) & (out["frame"] >= split)
        children = out["track"].isin(out.loc[out["parent_track"] == track, "track"].unique())
        out.loc[children & (out["parent_track"] == track), "parent_track"] = next_id
        out.loc[rows, "track"] = next_id
        out.loc[rows, "parent_track"] = track
        sister = out[rows].copy()
        sister["track"] = next_id + 1
        sister["parent_track"] = track
        sister[coords] = sister[coords].to_numpy() + 3 * jitter
        out = pd.concat([out, sister], ignore_index=True)
        next_id += 2
    out = out[rng.random(len(out)) >= drop]
    # A dropped first or last observation can leave a child starting before its parent ends.
    first = out.groupby("track")["frame"].min()
    last = out.groupby("track")["frame"].max()
    parent = out["parent_track"]
    has = parent.notna() & parent.isin(last.index)
    ok = ~has | (last.reindex(parent.where(has, -1)).to_numpy() < first.reindex(out["track"]).to_numpy())
    out.loc[~ok, "parent_track"] = pd.NA
    out.loc[parent.notna() & ~parent.isin(last.index), "parent_track"] = pd.NA
    n_extra = int(extra * len(out))
    pick = out.sample(n_extra, random_state=seed)
    pick = pick.assign(track=np.arange(next_id, next_id + n_extra), parent_track=pd.NA)
    pick[coords] = pick[coords].to_numpy() + rng.normal(0, 4 * jitter, (n_extra, len(coords)))
    return pd.concat([out, pick], ignore_index=True).reset_index(drop=True)


def ours(gt: pd.DataFrame, pred: pd.DataFrame, threshold: float, frame_buffer: int = 1,
         gt_id: str = "track", pred_id: str = "track") -> dict:
    """Our metrics on two lineage tables, flat (as :func:`traccuracy_names`)."""
    from trackverify.metrics.graph import metrics
    from trackverify.metrics.graph.matching import match_points
    from trackverify.metrics.graph.tracks import graph_from_table

    coords = [c for c in ("x_um", "y_um", "z_um") if c in gt.columns]
    g = graph_from_table(gt, gt_id, coords)
    p = graph_from_table(pred, pred_id, coords)
    mg, mp = match_points(g.frame, g.xyz, p.frame, p.xyz, threshold)
    out = {**metrics.ctc_metrics(g, p, mg, mp), **metrics.chota(g, p, mg, mp),
           **metrics.division_metrics(g, p, mg, mp, frame_buffer)}
    out["n_matches"] = len(mg)
    return out


def assert_same(mine: dict, theirs: dict, tol: float = 1e-9, label: str = "",
                skip: tuple = ()) -> None:
    """Every key of ``theirs`` equal in ``mine`` (None = undefined on both sides)."""
    for key, value in theirs.items():
        if key in skip:
            continue
        if isinstance(value, dict):
            assert_same(mine[key], value, tol, f"{label} {key}", skip)
            continue
        got = mine[key]
        if value is None or got is None:
            assert got is None and value is None, f"{label} {key}: {got} vs {value}"
        else:
            assert abs(got - value) <= tol, f"{label} {key}: {got} vs {value}"
