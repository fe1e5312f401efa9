"""Write the fixtures of tests/data/writers/ with the trackers' own code.

Run with a scratch environment holding the writers (never the project's):

    python3 -m venv /tmp/writers
    /tmp/writers/bin/pip install trackpy==0.7 laptrack==0.17.1 btrack==0.7.0 geff==0.5.0 pyarrow
    /tmp/writers/bin/python tests/data/writers/make_writers.py [OUT]   # OUT: tests/data/writers

Every file is written by the library's own call (trackpy ``batch`` + ``link``; laptrack
``LapTrack.predict_dataframe``; btrack ``BayesianTracker.export`` / ``export_CSV``; geff
``write_nx`` / ``write_arrays``) or by the ``DataFrame.to_csv`` / ``to_parquet`` usage of the
library's docs. The scene (:func:`scene`) is the same everywhere, so the tests can state the
expected values by hand:

* track A: frames 0-19, x = 10 + 2 t, y = 12; missing in frame 7 (a one-frame gap);
* track B: frames 0-9, x = 40, y = 30 + t; divides at frame 10 into
  B1 (x = 46 + 2 (t - 10), y = 44 + 2 (t - 10)) and B2 (x = 34 - 2 (t - 10), same y),
  frames 10-19 (each 7.8 px from B's last point: btrack links across at most 5 px);
* track C: frames 4-15, x = 60, y = 60 - t.

3-D files add z = 8 for A, z = 12 for B and its daughters, z = 16 for C. Positions are
pixels (x the column axis).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

FRAMES = 20


def scene(three_d: bool = False) -> pd.DataFrame:
    """The ground truth: ``frame, label, x, y[, z]`` (label A, B, B1, B2, C)."""
    rows = []
    for t in range(FRAMES):
        if t != 7:
            rows.append((t, "A", 10 + 2 * t, 12, 8))
        if t <= 9:
            rows.append((t, "B", 40, 30 + t, 12))
        else:
            rows.append((t, "B1", 46 + 2 * (t - 10), 44 + 2 * (t - 10), 12))
            rows.append((t, "B2", 34 - 2 * (t - 10), 44 + 2 * (t - 10), 12))
        if 4 <= t <= 15:
            rows.append((t, "C", 60, 60 - t, 16))
    table = pd.DataFrame(rows, columns=["frame", "label", "x", "y", "z"]).astype(
        {"x": float, "y": float, "z": float})
    return table if three_d else table.drop(columns="z")


def made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def source(folder: Path, library: str, version: str, licence: str, what: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SOURCE.md").write_text(
        f"# {folder.name}\n\nWritten by {library} {version} ({licence} licence), with "
        f"`tests/data/writers/make_writers.py` (run in a scratch venv holding the writer; "
        f"the scene is in its docstring).\n\n{what}\n")


# --------------------------------------------------------------------------- trackpy
def trackpy_files(out: Path) -> None:
    import trackpy as tp
    from trackpy.artificial import draw_spots

    folder = made(out / "trackpy")
    for three_d in (False, True):
        truth = scene(three_d)
        shape = (24, 80, 80) if three_d else (80, 80)
        axes = ["z", "y", "x"] if three_d else ["y", "x"]
        frames = [draw_spots(shape, truth.loc[truth["frame"] == t, axes].to_numpy(), 5,
                             noise_level=0, bitdepth=8) for t in range(FRAMES)]
        features = tp.batch(np.asarray(frames), 5, minmass=10, processes=1)
        # the walkthrough's call: link(f, search_range, memory=...)
        linked = tp.link(features, 6, memory=3)
        name = "linked_3d" if three_d else "linked_2d"
        linked.to_csv(folder / f"{name}.csv")  # the walkthrough's to_csv: default index
        if not three_d:
            linked.to_parquet(folder / f"{name}.parquet")
            tp.link(features, 6).to_csv(folder / "linked_2d_no_memory.csv")
    source(folder, "trackpy", tp.__version__, "BSD-3-Clause",
           "`tp.batch(frames, 5, minmass=10)` on frames drawn with `trackpy.artificial.draw_spots` "
           "(size 5) at the scene's positions, then `tp.link(features, 6, memory=3)` "
           "(`linked_*`) or without memory (`linked_2d_no_memory.csv`), saved with "
           "`DataFrame.to_csv` (default index) and `to_parquet`.")


# --------------------------------------------------------------------------- laptrack
def laptrack_files(out: Path) -> None:
    import laptrack
    from laptrack import LapTrack

    folder = made(out / "laptrack")
    for three_d in (False, True):
        truth = scene(three_d)
        cols = ["position_x", "position_y"] + (["position_z"] if three_d else [])
        df = truth.rename(columns={"x": "position_x", "y": "position_y", "z": "position_z"})
        df = df.drop(columns="label").reset_index(drop=True)
        lt = LapTrack(cutoff=6.0**2, gap_closing_cutoff=8.0**2, gap_closing_max_frame_count=2,
                      splitting_cutoff=10.0**2)
        track_df, split_df, merge_df = lt.predict_dataframe(df, cols, only_coordinate_cols=False)
        name = "track_df_3d" if three_d else "track_df"
        track_df.to_csv(folder / f"{name}.csv")  # default index (laptrack's examples)
        split_df.to_csv(folder / f"{name}_split.csv")
        if not three_d:
            track_df.to_parquet(folder / f"{name}.parquet")
            split_df.to_parquet(folder / f"{name}_split.parquet")
            track_df.to_csv(folder / "track_df_noindex.csv", index=False)
            split_df.to_csv(folder / "track_df_noindex_split.csv", index=False)
    source(folder, "laptrack", laptrack.__version__, "BSD-3-Clause",
           "`LapTrack(cutoff=36, gap_closing_cutoff=64, gap_closing_max_frame_count=2, "
           "splitting_cutoff=100).predict_dataframe(df, ['position_x', 'position_y'(, "
           "'position_z')], only_coordinate_cols=False)` on the scene; `track_df` and "
           "`split_df` saved with `to_csv()` (default index; `track_df_noindex*.csv`: "
           "`index=False`) and `to_parquet()`, the split table as `<name>_split.*` "
           "(trackverify's convention: laptrack writes no files). merge_df is empty (no "
           "merges) and not written.")


# --------------------------------------------------------------------------- btrack
BTRACK_CONFIG = {
    # btrack's example cell_config.json (btrack-examples, examples/cell_config.json), whose
    # fetch needs the network: the same values written out here.
    "TrackerConfig": {
        "MotionModel": {
            "name": "cell_motion", "dt": 1.0, "measurements": 3, "states": 6,
            "accuracy": 7.5, "prob_not_assign": 0.1, "max_lost": 5,
            "A": {"matrix": [1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1,
                             0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]},
            "H": {"matrix": [1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]},
            "P": {"sigma": 150.0, "matrix": [0.1, 0, 0, 0, 0, 0, 0, 0.1, 0, 0, 0, 0,
                                             0, 0, 0.1, 0, 0, 0, 0, 0, 0, 1, 0, 0,
                                             0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]},
            "G": {"sigma": 15.0, "matrix": [0.5, 0.5, 0.5, 1, 1, 1]},
            "R": {"sigma": 5.0, "matrix": [1, 0, 0, 0, 1, 0, 0, 0, 1]},
        },
        "ObjectModel": {},
        "HypothesisModel": {
            "name": "cell_hypothesis",
            "hypotheses": ["P_FP", "P_init", "P_term", "P_link", "P_branch", "P_dead"],
            "lambda_time": 5.0, "lambda_dist": 3.0, "lambda_link": 10.0,
            "lambda_branch": 50.0, "eta": 1e-10, "theta_dist": 20.0, "theta_time": 5.0,
            "dist_thresh": 40, "time_thresh": 2, "apop_thresh": 5,
            "segmentation_miss_rate": 0.1, "apoptosis_rate": 0.001, "relax": True,
        },
    }
}


def btrack_files(out: Path) -> None:
    import btrack
    from btrack.constants import DEFAULT_EXPORT_PROPERTIES
    from btrack.io import export_CSV, objects_from_dict

    folder = made(out / "btrack")
    config = folder.parent / ".btrack_config.json"
    config.write_text(json.dumps(BTRACK_CONFIG))
    try:
        for three_d in (False, True):
            truth = scene(three_d).sort_values(["frame", "label"], kind="stable")
            objects = objects_from_dict({
                "ID": np.arange(len(truth)), "t": truth["frame"].to_numpy(),
                "x": truth["x"].to_numpy(), "y": truth["y"].to_numpy(),
                "z": truth["z"].to_numpy() if three_d else np.zeros(len(truth)),
            })
            with btrack.BayesianTracker(verbose=False) as tracker:
                tracker.configure(str(config))
                tracker.max_search_radius = 5
                tracker.append(objects)
                tracker.volume = ((0, 100), (0, 100)) + (((0, 30),) if three_d else ())
                tracker.track(step_size=10)
                tracker.optimize()
                name = "tracks_3d" if three_d else "tracks"
                (folder / f"{name}.h5").unlink(missing_ok=True)  # export appends
                tracker.export(str(folder / f"{name}.h5"), obj_type="obj_type_1")
                export_CSV(folder / f"{name}.csv", tracker.tracks)  # space-separated
                if not three_d:
                    frame = pd.concat([pd.DataFrame(t.to_dict(DEFAULT_EXPORT_PROPERTIES))
                                       for t in tracker.tracks], ignore_index=True)
                    frame.to_csv(folder / "tracks_dataframe.csv", index=False)
    finally:
        config.unlink()
    source(folder, "btrack", btrack.__version__, "MIT",
           "`BayesianTracker` configured with btrack's example `cell_config.json` (values in "
           "the script), `objects_from_dict` of the scene's points, `volume` 0-100 px "
           "(0-30 in z), `max_search_radius = 5`, `track(step_size=10)`, `optimize()`, then `export('tracks.h5', "
           "obj_type='obj_type_1')` (HDF5FileHandler) and `btrack.io.export_CSV` "
           "(space-separated). `tracks_dataframe.csv`: the tracklets' `to_dict()` "
           "concatenated into a pandas DataFrame saved with `to_csv(index=False)`. The "
           "one-frame gap of track A is filled by btrack with a dummy object.")


# --------------------------------------------------------------------------- geff
def geff_files(out: Path) -> None:
    import geff
    import networkx as nx
    from geff.metadata_schema import GeffMetadata, axes_from_lists
    from geff.write_arrays import write_arrays

    folder = made(out / "geff")
    for three_d in (False, True):
        truth = scene(three_d).reset_index(drop=True)
        graph = nx.DiGraph()
        axes = ["t", "y", "x"] + (["z"] if three_d else [])
        for node, row in truth.iterrows():
            attrs = {"t": int(row["frame"]), "x": float(row["x"]), "y": float(row["y"])}
            if three_d:
                attrs["z"] = float(row["z"])
            graph.add_node(int(node), **attrs)
        previous = {}
        for node, row in truth.sort_values("frame", kind="stable").iterrows():
            label = row["label"]
            parent = previous.get(label) if label in previous else (
                previous.get("B") if label in ("B1", "B2") else None)
            if parent is not None:
                graph.add_edge(parent, int(node))
            previous[label] = int(node)
        name = "tracks_3d.geff" if three_d else "tracks.geff"
        # the README's call: write_nx(graph, path, axis_names=..., axis_units=...)
        geff.write_nx(graph, folder / name, axis_names=axes,
                      axis_units=["second" if a == "t" else "micrometer" for a in axes],
                      axis_types=["time" if a == "t" else "space" for a in axes])
        if not three_d:
            geff.write_nx(graph, folder / "tracks_nounits.geff", axis_names=axes)
            geff.write_nx(graph, folder / "tracks_v3.zarr", axis_names=axes,
                          axis_types=["time", "space", "space"], zarr_format=3)
            # write_arrays with an optional property and a track id property
            ids = truth.index.to_numpy(dtype=np.uint64)
            edges = np.asarray(list(graph.edges), dtype=np.uint64)
            track_id = truth["label"].map({"A": 1, "B": 2, "B1": 3, "B2": 4, "C": 5})
            score = np.linspace(0, 1, len(ids))
            missing = np.zeros(len(ids), dtype=bool)
            missing[::5] = True
            props = {a: (truth["frame" if a == "t" else a].to_numpy(), None) for a in axes}
            props["track_id"] = (track_id.to_numpy(dtype=np.int64), None)
            props["score"] = (score, missing)
            metadata = GeffMetadata(
                directed=True, axes=axes_from_lists(
                    axes, axis_types=["time", "space", "space"],
                    axis_units=["second", "micrometer", "micrometer"]),
                track_node_props={"tracklet": "track_id"})
            write_arrays(folder / "arrays.geff", ids, props, edges, None, metadata)
    source(folder, "geff", geff.__version__, "BSD-3-Clause",
           "A networkx DiGraph of the scene (node attributes t, y, x[, z]; an edge between a "
           "track's consecutive points, the gap included, and B's frame-9 point to the first "
           "points of B1 and B2), written with `geff.write_nx(graph, path, axis_names=..., "
           "axis_units=[second, micrometer...], axis_types=...)` (`tracks*.geff`), without "
           "units or types (`tracks_nounits.geff`), as zarr format 3 (`tracks_v3.zarr`), and "
           "with `geff.write_arrays` adding a `track_id` tracklet property and a `score` "
           "property missing on every fifth node (`arrays.geff`).")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    logging.disable(logging.WARNING)
    which = sys.argv[2:] or ["trackpy", "laptrack", "btrack", "geff"]
    for name in which:
        globals()[f"{name}_files"](out)


if __name__ == "__main__":
    main()
