"""A seeded fuzz sweep: hostile variants of real tracker files fed to every command that reads them.

Base files are small slices of the shared real data (``../shared/data``: tracker-formats,
zephir-ift20-demo, fdnc-nerve-freely-moving) and of the project's own synthetic specimen.
From each, :func:`variants` derives hostile copies, one break each: truncation at several
offsets and flipped bytes (every file); a BOM, CRLF, NUL bytes, a 10 MB line, renamed /
duplicated / emptied / dropped header columns, NaN / inf / -0 / 1e308 / huge-int / text /
empty cells, negative / fractional / > 2^31 / unsorted frames, mixed-type ids (CSV and
text formats); wrong types, nested and dictionary columns, nulls, no rows (Parquet);
missing attributes, wrong nesting, enormous attribute values, dangling edges (TrackMate
XML); wrong dtypes and shapes, empty datasets, a scalar where an array belongs, deleted
datasets (HDF5); deleted arrays, broken or retyped metadata (GEFF zarr); broken JSON
(graph and metadata files). The readers of settings and side inputs have bases too
(:func:`_setting_bases`): ``calibration.json`` for ``audit --calibration`` (broken, and
re-hashed with each value of the wrong type), a ``run --config`` TOML file (wrong types,
NaN / inf, huge values, deep nesting), a ``run --partitions`` file, and an ``evidence
--pairs`` folder of ``.npy`` pairs (object / pickled / ``.npz`` / huge-shape arrays, which
``allow_pickle=False`` must refuse; symlinks out of the folder; ``--out`` the input folder).
The other readers have bases of their own (:func:`_reader_bases`): NWB files of both
layouts written from the fdnc slice (every HDF5 break), ``split``'s recording table and
same-animal candidates, one experiment folder holding every stage evaluator's files (trx
and feature pickles, ``.npy`` / ``.npz`` arrays, the statistics CSV), a conversion
submission folder, an AnDi 2 CodaLab folder (predictions, reference labels, ensemble files,
VIP indices) and an ``evidence --recordings`` data folder (observations, detections,
recording table). Their pickles get data breaks (each key dropped or retyped, each array
emptied, non-finite, text, with an extra axis; objects nested 100,000 deep or holding
themselves); in a folder the file may also be missing, a folder, or a symlink.

Each variant is fed to every command that reads it (``convert --to parquet``,
``evaluate`` with the variant on either side, ``audit``, ``verify --conditions control``,
``run --data ... --conditions control``; ``split``; ``stage`` with the variant as the
submission, the reference or the ground truth; ``conversion check`` with it as either side
and ``conversion decode``; ``andi score`` official and ``--corrected``; ``evidence
--recordings``) and to the Python API (``trackverify.audit``,
``trackverify.verify``, ``trackverify.evaluate_tracking``), each in a forked child under a
timeout, with its working directory an empty folder. An outcome is correct when it is
exit 0, or exit 2 with one ``trackverify: error:`` line that names the input and is not
the net's "a defect of trackverify" message, or, for ``stage`` and ``conversion check``,
exit 1 with their verdict file written (a broken submission is a documented ``fail``
verdict, :data:`VERDICT_FILES`); the input must be unchanged and nothing may
be written outside ``--out``. Everything else is printed (and written to
``DIR/findings.json``)::

    python -m tests.corpus.fuzz DIR [--seed 20261201] [--only NAME] [--commands a,b]

The same seed gives the same variants. Needs the shared data (``REPO.parent / "shared"``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import signal
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
SEED = 20261201
TIMEOUT_S = 30.0  # CPU seconds a command may take on these small inputs
WALL_LIMIT_S = 180.0  # a child still running after this is killed (a hang)

BAD_CELLS = ["nan", "NaN", "inf", "-inf", "-0", "1e308", "-1e308", "1e400",
             "99999999999999999999999", str(2 ** 63), "abc", "", " ", "NULL", "0x10", "1,5"]
BAD_FRAMES = ["-1", "1.5", str(2 ** 31 + 5), str(2 ** 63 + 1), "1e3", "-0"]


@dataclass
class Base:
    """A valid input: the path to give a command, what kind of input it is, its main file."""

    name: str
    path: Path  # what the command line names (a file or a folder)
    fmt: str  # table | trackmate | trackmate_csv | 3deecelltracker | ctc | geff | btrack | napari | zephir | mot | ...
    main: Path  # the file most variants change (inside ``path`` when it is a folder)
    extra: dict = field(default_factory=dict)


@dataclass
class Variant:
    name: str
    base: Base
    path: Path
    dir: Path  # holds in/ (the inputs) and _out/ (the outputs)


# ---------------------------------------------------------------- bases

def _slice_fdnc(frames: int = 30) -> dict[str, pd.DataFrame]:
    root = SHARED / "fdnc-nerve-freely-moving"
    out = {}
    for name in ("observations", "tracker_cpd", "detections"):
        df = pd.read_parquet(root / f"{name}.parquet")
        out[name] = df[df["frame"] < frames].reset_index(drop=True)
    return out


def make_bases(root: Path) -> list[Base]:
    """Write the valid base inputs under ``root/base`` (small slices of the real data)."""
    b = root / "base"
    shutil.rmtree(b, ignore_errors=True)
    b.mkdir(parents=True)
    bases: list[Base] = []
    fdnc = _slice_fdnc()
    obs = fdnc["observations"]
    (b / "fdnc_csv").mkdir()
    obs.to_csv(b / "fdnc_csv" / "observations.csv", index=False)
    bases.append(Base("fdnc_csv", b / "fdnc_csv" / "observations.csv", "table",
                      b / "fdnc_csv" / "observations.csv"))
    (b / "fdnc_pq").mkdir()
    obs.to_parquet(b / "fdnc_pq" / "observations.parquet", index=False)
    bases.append(Base("fdnc_pq", b / "fdnc_pq" / "observations.parquet", "table",
                      b / "fdnc_pq" / "observations.parquet"))
    (b / "fdnc_cpd").mkdir()
    fdnc["tracker_cpd"].to_parquet(b / "fdnc_cpd" / "tracker_cpd.parquet", index=False)
    bases.append(Base("fdnc_cpd", b / "fdnc_cpd" / "tracker_cpd.parquet", "predictions",
                      b / "fdnc_cpd" / "tracker_cpd.parquet",
                      {"reference": b / "fdnc_pq" / "observations.parquet"}))
    obs.drop(columns="track").to_parquet(b / "fdnc_pq" / "tracker_output.parquet", index=False)
    (b / "fdnc_det").mkdir()
    fdnc["detections"].to_csv(b / "fdnc_det" / "detections.csv", index=False)
    bases.append(Base("fdnc_det", b / "fdnc_det" / "detections.csv", "detections",
                      b / "fdnc_det" / "detections.csv",
                      {"tracks": b / "fdnc_pq" / "tracker_output.parquet"}))
    # MOT text made from the same slice: frame,id,x,y,z
    (b / "fdnc_mot").mkdir()
    mot = obs[["frame", "pred_id", "x_um", "y_um", "z_um"]].copy()
    mot["frame"] += 1
    mot.to_csv(b / "fdnc_mot" / "tracks.txt", index=False, header=False)
    bases.append(Base("fdnc_mot", b / "fdnc_mot" / "tracks.txt", "mot", b / "fdnc_mot" / "tracks.txt"))
    # the project's own synthetic specimen (a folder: observations.parquet + recordings.csv)
    from trackverify.cli.app import main as cli_main
    spec = b / "synth"
    try:
        cli_main(["synth", "--out", str(spec), "--frames", "40"])
    except SystemExit as exc:
        assert exc.code == 0, exc.code
    bases.append(Base("synth_dir", spec, "table", spec / "recordings.csv"))
    tf = SHARED / "tracker-formats"
    for xml in ("Celegans-5pc-17timepoints.xml", "trackmate_tracks_with_splitting_merging.xml"):
        (b / xml[:8]).mkdir()
        shutil.copy(tf / "trackmate_xml" / xml, b / xml[:8] / xml)
        bases.append(Base(f"tm_{xml[:8]}", b / xml[:8] / xml, "trackmate", b / xml[:8] / xml))
    ctc = b / "ctc"
    shutil.copytree(tf / "ctc" / "java-ctcmetrics_test_data", ctc)
    bases.append(Base("ctc_res", ctc / "res", "ctc", ctc / "res" / "res_track.txt",
                      {"reference": ctc / "GT" / "TRA"}))
    for store in ("Fluo-N2DL-HeLa-01.zarr", "mouse-20250719.zarr", "Ecoli_growth_on_agar_pad.geff"):
        shutil.copytree(tf / "geff" / store, b / store)
        bases.append(Base(f"geff_{store[:5]}", b / store, "geff", b / store))
    (b / "btrack").mkdir()
    shutil.copy(tf / "btrack_hdf5" / "tracks.h5", b / "btrack" / "tracks.h5")
    bases.append(Base("btrack", b / "btrack" / "tracks.h5", "btrack", b / "btrack" / "tracks.h5"))
    (b / "napari").mkdir()
    tracks = pd.read_csv(tf / "napari_tracks_csv" / "tracks.csv")
    tracks[tracks["t"] < 15].to_csv(b / "napari" / "tracks.csv", index=False)
    shutil.copy(tf / "napari_tracks_csv" / "graph.json", b / "napari" / "graph.json")
    bases.append(Base("napari", b / "napari" / "tracks.csv", "napari", b / "napari" / "tracks.csv",
                      {"graph": b / "napari" / "graph.json"}))
    bases += _tracker_csv_bases(b, tf / "trackmate_xml" / "Celegans-5pc-17timepoints.xml")
    z = b / "zephir"
    z.mkdir()
    for f in ("annotations-2.h5", "worldlines.h5", "metadata.json"):
        shutil.copy(SHARED / "zephir-ift20-demo" / f, z / f)
    os.rename(z / "annotations-2.h5", z / "annotations.h5")
    bases.append(Base("zephir", z / "annotations.h5", "zephir", z / "annotations.h5",
                      {"metadata": z / "metadata.json", "worldlines": z / "worldlines.h5"}))
    bases += _setting_bases(b, b / "fdnc_pq" / "tracker_output.parquet", spec)
    bases += _reader_bases(b, fdnc)
    return bases


def _tracker_csv_bases(b: Path, xml: Path) -> list[Base]:
    """TrackMate 7 CSV spots + edges tables of the C. elegans XML's tracks, written as
    TrackMate's exporter writes them (tests/corpus/tracker_csv_cases.py), and a 3DeeCellTracker
    tracked_coordinates.csv of 8 cells x 12 volumes (seeded)."""
    from tests.corpus.tracker_csv_cases import deecell_csv, v7_edges, v7_row, v7_spots

    model = ET.parse(xml).getroot().find("Model")
    spots = {int(s.get("ID")): s for s in model.iter("Spot")}
    edges = [(int(t.get("TRACK_ID")), int(e.get("SPOT_SOURCE_ID")), int(e.get("SPOT_TARGET_ID")))
             for t in model.find("AllTracks") for e in t.iter("Edge")]
    track_of = {i: k for k, s, t in edges for i in (s, t)}
    folder = b / "tmcsv"
    folder.mkdir()
    rows = "".join(v7_row(i, track_of[i], int(spots[i].get("FRAME")), *(
        float(spots[i].get(f"POSITION_{a}")) for a in "XYZ")) for i in sorted(track_of))
    (folder / "celegans_spots.csv").write_text(v7_spots(()) + rows)
    (folder / "celegans_edges.csv").write_text(v7_edges(edges))
    dct = b / "dct"
    dct.mkdir()
    coords = np.random.default_rng(SEED).uniform(0, 200, (12, 8, 3)).cumsum(axis=0) / 4
    (dct / "tracked_coordinates.csv").write_text(deecell_csv(coords))
    spots_path = folder / "celegans_spots.csv"
    return [Base("tmcsv_spots", spots_path, "trackmate_csv", spots_path),
            Base("tmcsv_edges", spots_path, "trackmate_csv", folder / "celegans_edges.csv"),
            Base("dct_csv", dct / "tracked_coordinates.csv", "3deecelltracker",
                 dct / "tracked_coordinates.csv")]


#: A valid ``calibration.json`` body (without its ``sha256``), as ``run --calibrate`` writes it.
CALIBRATION = {
    "format": "trackverify-calibration/1", "trackverify_version": "fuzz",
    "verifier": {"name": "fixed_distance", "evidence": "independent", "options": {"ambiguity_k": None}},
    "threshold_um": 5.0,
    "target": {"kind": "target_false_certification_rate", "level": 0.05, "method": "crc", "delta": None},
    "guarantee": "expected false-certification rate <= 0.05 on a new animal",
    "assumption": "calibration and new animals are exchangeable",
    "calibration_animals": 12, "smallest_reachable_target": 0.08, "fit": {},
    "partitions_sha256": None}

#: A valid ``run --config`` TOML file (key = TOML literal), small enough to run at once.
RUN_TOML = {"seed": "20261007", "start": "16", "recovery_end": "33", "threshold_um": "5.0",
            "zero_distance_um": "5.0", "falsification_share": "0.05",
            "verifier": '"fixed_distance"', "ambiguity_k": "0.0", "conditions": '["control"]',
            "repeats": "1"}


def _toml(run: dict[str, str], extra: str = "") -> str:
    return "[run]\n" + "".join(f"{k} = {v}\n" for k, v in run.items()) + extra


def _setting_bases(b: Path, observations: Path, specimen: Path) -> list[Base]:
    """The readers of settings and side inputs: ``audit --calibration``, ``run --config``,
    ``run --partitions``, ``evidence --pairs`` (a folder of ``.npy`` pairs)."""
    from trackverify.benchmark.certify.calibration_file import write_calibration
    from trackverify.cli.app import main as cli_main

    bases = []
    (b / "calib").mkdir()
    write_calibration(b / "calib" / "calibration.json", CALIBRATION)
    bases.append(Base("calibration", b / "calib" / "calibration.json", "calibration",
                      b / "calib" / "calibration.json", {"observations": observations}))
    (b / "toml").mkdir()
    (b / "toml" / "run.toml").write_text(_toml(RUN_TOML))
    bases.append(Base("run_toml", b / "toml" / "run.toml", "config", b / "toml" / "run.toml",
                      {"data": specimen}))
    (b / "parts").mkdir()
    try:
        cli_main(["split", "--recordings", str(specimen / "recordings.csv"), "--fractions", "test=1",
                  "--out", str(b / "parts" / "partitions.json")])
    except SystemExit as exc:
        assert exc.code == 0, exc.code
    bases.append(Base("partitions", b / "parts" / "partitions.json", "partitions",
                      b / "parts" / "partitions.json", {"data": specimen}))
    pairs = b / "pairs"
    for ex in ("ex1", "ex2"):
        shutil.copytree(SHARED / "targettrack-point-pairs" / ex, pairs / ex)
    bases.append(Base("pairs_npy", pairs, "pairs", pairs / "ex1" / "pts_gt.npy"))
    return bases


# ---------------------------------------------------------------- the other readers' bases

#: The stage evaluators' bases: (base name, stage, file of the experiment folder it reads).
STAGE_BASES = [("stage_gait", "gait", "exp_1/swing_stance.npy"),
               ("stage_kp", "keypoints", "exp_1/keypoint_preds.npz"),
               ("stage_kpgt", "keypoints", "exp_1/keypoints_gt.npz"),
               ("stage_stats", "stats", "line_1.csv"),
               ("stage_trx", "body-tracking", "exp_1/trx.pkl"),
               ("stage_reg", "registration", "exp_1/registered_trx.pkl"),
               ("stage_walk", "walking", "exp_1/walk_preds.pkl"),
               ("stage_labels", "walking", "labels.pkl"),
               ("stage_feat", "features", "exp_1/perframe/velmag.pkl")]


def _reader_bases(b: Path, fdnc: dict[str, pd.DataFrame]) -> list[Base]:
    """The readers of NWB files, ``split``'s recording and same-animal tables, the stage
    evaluators' files, the conversion verifier's pickle, the AnDi 2 scoring folder and
    ``evidence --recordings``'s data folder."""
    from tests.corpus.stage_cases import _world, _write_files
    from trackverify.andi.synthetic import make_challenge
    from trackverify.conversion import synthetic as C
    from trackverify.io.nwb import write_nwb

    bases = []
    obs = fdnc["observations"]
    (b / "nwb").mkdir()
    few = obs[obs["frame"] < 4].reset_index(drop=True)
    write_nwb(few, b / "nwb" / "rois.nwb")
    bases.append(Base("nwb_rois", b / "nwb" / "rois.nwb", "nwb", b / "nwb" / "rois.nwb"))
    (b / "nwb_lab").mkdir()
    write_nwb(few, b / "nwb_lab" / "labels.nwb", layout="labels")
    bases.append(Base("nwb_labels", b / "nwb_lab" / "labels.nwb", "nwb", b / "nwb_lab" / "labels.nwb"))
    # split: a recording table of 8 recordings of 5 animals in 3 provenance groups
    (b / "split").mkdir()
    recordings = b / "split" / "recordings.csv"
    recordings.write_text("recording,animal_id,provenance_group,source_folds\n" + "".join(
        f"rec{k},animal{k % 5},lab{k % 3},{'0;1' if k % 2 else ''}\n" for k in range(8)))
    bases.append(Base("split_recordings", recordings, "recordings", recordings))
    (b / "split_same").mkdir()
    same = b / "split_same" / "same_animal.csv"
    same.write_text("recording_a,recording_b\nrec0,rec1\nrec2,rec7\nrec3,rec4\n")
    bases.append(Base("split_same_animal", same, "candidates", same, {"recordings": recordings}))
    # the stage evaluators: one experiment folder holding every stage's files
    world = _world()
    files = {**world["sub"], "labels.pkl": world["gt"]["labels.pkl"]}
    _write_files(b / "stages", files)
    for name, stage, rel in STAGE_BASES:
        bases.append(Base(name, b / "stages", "stage", b / "stages" / rel, {"stage": stage}))
    # the conversion verifier: a submission folder
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    sub = C.write_submission(b / "conversion", data)
    bases.append(Base("conversion", sub, "conversion", sub / "converted_data.pkl"))
    # AnDi 2: a CodaLab input folder (tracks 1 and 2, one experiment, one FOV)
    andi = make_challenge(b / "andi", 4, experiments=1, fovs=1, tracks=(1, 2))
    for name, rel in (("andi_res", "res/track_2/exp_0/fov_0.txt"),
                      ("andi_ref", "ref/track_2/exp_0/traj_labs_fov_0.txt"),
                      ("andi_ens", "res/track_2/exp_0/ensemble_labels.txt"),
                      ("andi_ensref", "ref/track_2/exp_0/ensemble_labels.txt"),
                      ("andi_vip", "ref/track_1/exp_0/vip_idx_fov_0.txt")):
        bases.append(Base(name, andi, "andi", andi / rel))
    # evidence --recordings: a data folder (observations + detections + recordings.csv)
    ev = b / "evidence"
    ev.mkdir()
    # every frame (the corruption suite's default recovery ends at frame 700) of 12 tracks
    # and their detections
    real = {n: pd.read_parquet(SHARED / "fdnc-nerve-freely-moving" / f"{n}.parquet")
            for n in ("observations", "detections")}
    kept = real["observations"][real["observations"]["track"].isin(
        np.sort(real["observations"]["track"].unique())[:12])]
    kept.to_parquet(ev / "observations.parquet", index=False)
    det = real["detections"]
    det[pd.MultiIndex.from_frame(det[["frame", "detection"]]).isin(
        pd.MultiIndex.from_frame(kept[["frame", "detection"]]))].to_parquet(
        ev / "detections.parquet", index=False)
    shutil.copy(SHARED / "fdnc-nerve-freely-moving" / "recordings.csv", ev / "recordings.csv")
    for name, main in (("evid_obs", "observations.parquet"), ("evid_det", "detections.parquet"),
                       ("evid_rec", "recordings.csv")):
        bases.append(Base(name, ev, "recordings_dir", ev / main))
    return bases


# ---------------------------------------------------------------- mutations

def _copy_base(base: Base, vdir: Path) -> tuple[Path, Path]:
    """Copy the base's files into ``vdir/in``: (path to give, main file)."""
    src_dir = base.path if base.path.is_dir() and base.fmt != "ctc" else base.path.parent
    dest = vdir / "in" / (src_dir.name if src_dir == base.path else "")
    shutil.copytree(src_dir, dest)
    return dest / base.path.relative_to(src_dir), dest / base.main.relative_to(src_dir)


def _bytes_mutations(data: bytes, rng: np.random.Generator) -> Iterator[tuple[str, bytes]]:
    n = len(data)
    for frac in (0.0, 0.1, 0.5, 0.9):
        yield f"trunc{int(frac * 100)}", data[:int(n * frac)]
    yield "trunc_last", data[:-1]
    yield "trunc_1", data[:1]
    for k in (1, 8, 64):
        arr = bytearray(data)
        for pos in rng.integers(0, n, size=k):
            arr[pos] ^= int(rng.integers(1, 256))
        yield f"flip{k}", bytes(arr)


def _csv_text_mutations(text: str, rng: np.random.Generator, header: bool = True,
                        sep: str = ",") -> Iterator[tuple[str, str | bytes]]:
    lines = text.splitlines()
    while len(lines) < 5:
        lines = lines + lines[1:] if len(lines) > 1 else lines * 2
    text = "\n".join(lines) + "\n"
    yield "bom", "\ufeff" + text
    yield "crlf", "\r\n".join(lines) + "\r\n"
    pos = int(rng.integers(len(lines[0]) + 1 if header else 0, len(text)))
    yield "nul", text[:pos] + "\x00" + text[pos:]
    yield "nul_header", "\x00" + text
    yield "long_line", text + "9" * 10_000_000 + "\n"
    yield "long_cell", "\n".join(lines[:2] + [lines[2] + "1" * 10_000_000] + lines[3:]) + "\n"
    yield "latin1", (text.replace(lines[1], lines[1] + "\xe9", 1)).encode("latin-1", "replace")
    yield "blank_lines", "\n\n".join(lines) + "\n"
    yield "header_only", lines[0] + "\n" if header else ""
    yield "dup_rows", text + "\n".join(lines[1:]) + "\n"
    body = lines[1:] if header else lines
    shuffled = [body[i] for i in rng.permutation(len(body))]
    yield "unsorted", "\n".join(([lines[0]] if header else []) + shuffled) + "\n"
    yield "ragged", "\n".join(lines[:3] + [lines[3] + sep + "7"] + lines[4:]) + "\n"
    yield "short_row", "\n".join(lines[:3] + [lines[3].split(sep)[0]] + lines[4:]) + "\n"
    yield "quote", "\n".join(lines[:3] + ['"' + lines[3]] + lines[4:]) + "\n"
    yield "tabs", text.replace(sep, "\t") if sep != "\t" else text.replace("\t", ",")
    ncol = len(lines[0].split(sep))
    if header:
        cols = lines[0].split(sep)
        for i, c in enumerate(cols):
            for label, new in (("renamed", "zz_" + c), ("empty", ""), ("dup", cols[i - 1]),
                               ("upper", c.upper()), ("space", " " + c + " ")):
                h = cols.copy()
                h[i] = new
                yield f"h{label}_{c}", "\n".join([sep.join(h)] + lines[1:]) + "\n"
            dropped = [sep.join(p for j, p in enumerate(line.split(sep)) if j != i) for line in lines]
            yield f"drop_{c}", "\n".join(dropped) + "\n"
    names = lines[0].split(sep) if header else [f"c{i}" for i in range(ncol)]
    first = 1 if header else 0
    for i, c in enumerate(names):
        for value in BAD_CELLS:
            row = int(rng.integers(first, len(lines)))
            parts = lines[row].split(sep)
            if i >= len(parts):
                continue
            parts[i] = value
            new = lines.copy()
            new[row] = sep.join(parts)
            yield f"cell_{c}_{value.strip() or 'blank'}", "\n".join(new) + "\n"
        for value in ("nan", "", "abc"):
            new = [lines[0]] if header else []
            for line in lines[first:]:
                parts = line.split(sep)
                if i < len(parts):
                    parts[i] = value
                new.append(sep.join(parts))
            yield f"col_{c}_{value or 'blank'}", "\n".join(new) + "\n"
        if c in ("frame", "t", "c0"):
            for value in BAD_FRAMES:
                row = int(rng.integers(first, len(lines)))
                parts = lines[row].split(sep)
                parts[i] = value
                new = lines.copy()
                new[row] = sep.join(parts)
                yield f"frame_{c}_{value}", "\n".join(new) + "\n"
        if c in ("pred_id", "track", "detection", "ID", "recording", "c1"):
            new = [lines[0]] if header else []
            for k, line in enumerate(lines[first:]):
                parts = line.split(sep)
                if k % 3 == 1:
                    parts[i] = ("x" + parts[i]) if k % 2 else (parts[i] + ".5")
                new.append(sep.join(parts))
            yield f"mixed_ids_{c}", "\n".join(new) + "\n"


def _table_df_mutations(df: pd.DataFrame, rng: np.random.Generator) -> Iterator[tuple[str, object]]:
    """Parquet variants: pyarrow tables with one column (or the schema) broken."""
    import pyarrow as pa

    base = pa.Table.from_pandas(df, preserve_index=False)
    yield "empty_rows", base.slice(0, 0)
    yield "one_row", base.slice(0, 1)
    yield "unsorted", base.take(pa.array(rng.permutation(len(df))))
    for i, name in enumerate(base.column_names):
        col = base.column(i)
        yield f"drop_{name}", base.remove_column(i)
        yield f"renamed_{name}", base.rename_columns(
            [("zz_" + n) if j == i else n for j, n in enumerate(base.column_names)])
        yield f"dup_{name}", base.append_column(name, col)
        yield f"as_string_{name}", base.set_column(i, name, col.cast(pa.string()))
        yield f"nested_{name}", base.set_column(
            i, name, pa.array([[v] for v in col.to_pylist()]))
        yield f"struct_{name}", base.set_column(
            i, name, pa.array([{"v": v} for v in col.to_pylist()]))
        yield f"dict_{name}", base.set_column(i, name, col.combine_chunks().dictionary_encode())
        yield f"nulls_{name}", base.set_column(
            i, name, pa.array([None if k % 7 == 3 else v for k, v in enumerate(col.to_pylist())],
                              type=col.type))
        yield f"allnull_{name}", base.set_column(i, name, pa.nulls(len(col), type=col.type))
        yield f"binary_{name}", base.set_column(
            i, name, pa.array([str(v).encode() + b"\xff" for v in col.to_pylist()], type=pa.binary()))
        values = col.to_numpy(zero_copy_only=False)
        if pa.types.is_floating(col.type):
            for label, v in (("nan", np.nan), ("inf", np.inf), ("ninf", -np.inf), ("negzero", -0.0),
                             ("big", 1e308), ("tiny", 5e-324)):
                arr = values.astype(float).copy()
                arr[int(rng.integers(len(arr)))] = v
                yield f"{label}_{name}", base.set_column(i, name, pa.array(arr))
            yield f"f32_{name}", base.set_column(i, name, col.cast(pa.float32()))
            yield f"f16_{name}", base.set_column(i, name, pa.array(values.astype(np.float16)))
        if pa.types.is_integer(col.type):
            for label, v in (("neg", -1), ("big31", 2 ** 31 + 5), ("big62", 2 ** 62), ("min", -2 ** 63)):
                arr = values.astype(np.int64).copy()
                arr[int(rng.integers(len(arr)))] = v
                yield f"{label}_{name}", base.set_column(i, name, pa.array(arr))
            arr = values.astype(np.uint64).copy()
            arr[int(rng.integers(len(arr)))] = 2 ** 64 - 1
            yield f"u64max_{name}", base.set_column(i, name, pa.array(arr))
            yield f"as_float_{name}", base.set_column(i, name, pa.array(values.astype(float) + 0.5))
            yield f"as_bool_{name}", base.set_column(i, name, pa.array(values.astype(bool)))
            yield f"int8_{name}", base.set_column(i, name, pa.array(values.astype(np.int8)))
            yield f"ts_{name}", base.set_column(i, name, col.cast(pa.int64()).cast(pa.timestamp("s")))
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            yield f"mixed_{name}", base.set_column(
                i, name, pa.array([str(k) if k % 2 else v for k, v in enumerate(col.to_pylist())]))
            yield f"emptystr_{name}", base.set_column(i, name, pa.array([""] * len(col)))
            yield f"ints_{name}", base.set_column(i, name, pa.array(np.arange(len(col)) % 3))
        if pa.types.is_boolean(col.type):
            yield f"as_int_{name}", base.set_column(i, name, pa.array(np.arange(len(col)) % 3))


def _xml_mutations(path: Path, rng: np.random.Generator) -> Iterator[tuple[str, bytes]]:
    text = path.read_bytes()

    def tree():
        return ET.ElementTree(ET.fromstring(text))

    def dump(t: ET.ElementTree) -> bytes:
        buf = io.BytesIO()
        t.write(buf, encoding="utf-8", xml_declaration=True)
        return buf.getvalue()

    def spots(t):
        return t.getroot().findall(".//Spot")

    for attr in ("ID", "FRAME", "POSITION_X", "POSITION_Y", "POSITION_Z", "name", "POSITION_T"):
        t = tree()
        s = spots(t)[int(rng.integers(len(spots(t))))]
        s.attrib.pop(attr, None)
        yield f"missing_{attr}", dump(t)
        for value in ["NaN", "inf", "-inf", "abc", "", "-1", "1.5", "1e308", str(2 ** 31 + 1),
                      str(2 ** 64), "-0", "x" * 10_000_000]:
            t = tree()
            s = spots(t)[int(rng.integers(len(spots(t))))]
            s.set(attr, value)
            yield f"attr_{attr}_{value[:12]}", dump(t)
        t = tree()
        for s in spots(t):
            s.attrib.pop(attr, None)
        yield f"missing_all_{attr}", dump(t)
    for tag in ("AllSpots", "AllTracks", "FilteredTracks", "Model", "Settings", "ImageData",
                "SpotsInFrame", "Track", "Edge", "TrackID"):
        t = tree()
        for parent in t.getroot().iter():
            for child in list(parent):
                if child.tag == tag:
                    parent.remove(child)
        yield f"remove_{tag}", dump(t)
    # wrong nesting: spots directly under Model; tracks inside AllSpots; FilteredTracks at the root
    t = tree()
    model = t.getroot().find("Model")
    allspots = model.find("AllSpots") if model is not None else None
    if allspots is not None:
        for frame in list(allspots):
            for s in list(frame):
                model.append(s)
            allspots.remove(frame)
        yield "nesting_spots_in_model", dump(t)
    t = tree()
    model = t.getroot().find("Model")
    if model is not None and model.find("AllTracks") is not None:
        at = model.find("AllTracks")
        model.remove(at)
        model.find("AllSpots").append(at)
        yield "nesting_tracks_in_spots", dump(t)
        t = tree()
        model = t.getroot().find("Model")
        ft = model.find("FilteredTracks")
        if ft is not None:
            model.remove(ft)
            t.getroot().append(ft)
            yield "nesting_filtered_at_root", dump(t)
    # edges
    for attr in ("SPOT_SOURCE_ID", "SPOT_TARGET_ID"):
        for value in (None, "999999999", "abc", ""):
            t = tree()
            edges = t.getroot().findall(".//Edge")
            if not edges:
                continue
            e = edges[int(rng.integers(len(edges)))]
            if value is None:
                e.attrib.pop(attr, None)
            else:
                e.set(attr, value)
            yield f"edge_{attr}_{value}", dump(t)
    t = tree()
    edges = t.getroot().findall(".//Edge")
    if edges:
        e = edges[0]
        e.set("SPOT_TARGET_ID", e.get("SPOT_SOURCE_ID", "0"))
        yield "edge_self_loop", dump(t)
    for value in ("999999", "abc", ""):
        t = tree()
        tids = t.getroot().findall(".//FilteredTracks/TrackID")
        if tids:
            tids[0].set("TRACK_ID", value)
            yield f"filtered_trackid_{value}", dump(t)
    t = tree()
    s = spots(t)
    if len(s) > 1:
        s[1].set("ID", s[0].get("ID", "0"))
        yield "duplicate_spot_id", dump(t)
    t = tree()
    tr = t.getroot().findall(".//Track")
    if len(tr) > 1:
        tr[1].set("TRACK_ID", tr[0].get("TRACK_ID", "0"))
        yield "duplicate_track_id", dump(t)
    for unit in ("parsec", "", "pixels", "µm", None):
        t = tree()
        model = t.getroot().find("Model")
        if model is None:
            continue
        if unit is None:
            model.attrib.pop("spatialunits", None)
        else:
            model.set("spatialunits", unit)
        yield f"units_{unit}", dump(t)
    yield "root_renamed", text.replace(b"<TrackMate", b"<TrackMeat", 1).replace(
        b"</TrackMate>", b"</TrackMeat>")
    yield "unclosed", text[:text.rfind(b"</")]
    yield "doctype_entity", text.replace(b"?>", b"?><!DOCTYPE x [<!ENTITY a 'b'>]>", 1)
    yield "utf16", text.decode("utf-8").replace("UTF-8", "UTF-16").encode("utf-16")


def _hdf5_mutations(path: Path, rng: np.random.Generator) -> Iterator[tuple[str, Callable]]:
    """Edits to an HDF5 copy: (label, function(h5py.File))."""
    import h5py

    with h5py.File(path, "r") as h:
        names: list[str] = []
        h.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        shapes = {n: (h[n].shape, h[n].dtype) for n in names}

    def replace(name, make):
        def edit(h):
            old = h[name][()]
            del h[name]
            h[name] = make(old)
        return edit

    for name in names:
        shape, dtype = shapes[name]
        yield f"del_{name}", (lambda n: lambda h: h.__delitem__(n))(name)
        yield f"str_{name}", replace(name, lambda a: np.asarray(a).astype("S8"))
        yield f"empty_{name}", replace(name, lambda a: np.asarray(a)[:0])
        yield f"scalar_{name}", replace(name, lambda a: np.asarray(a).reshape(-1)[0] if np.size(a) else 0)
        yield f"extradim_{name}", replace(name, lambda a: np.asarray(a)[..., None])
        yield f"flat_{name}", replace(name, lambda a: np.asarray(a).reshape(-1))
        yield f"short_{name}", replace(name, lambda a: np.asarray(a)[: max(len(a) // 2, 1)]
                                       if np.ndim(a) else a)
        yield f"float_{name}", replace(name, lambda a: np.asarray(a, dtype=float) + 0.5
                                       if np.asarray(a).dtype.kind in "iuf" else a)
        if np.dtype(dtype).kind in "iuf":
            for label, v in (("nan", np.nan), ("inf", np.inf), ("neg", -1), ("huge", 2 ** 62),
                             ("big", 1e308)):
                def mk(a, v=v):
                    a = np.asarray(a).astype(float if isinstance(v, float) else np.int64).copy()
                    if a.size:
                        a.reshape(-1)[int(rng.integers(a.size))] = v
                    return a
                yield f"{label}_{name}", replace(name, mk)
        if len(shape) == 2:
            yield f"transpose_{name}", replace(name, lambda a: np.asarray(a).T)
            yield f"fewcols_{name}", replace(name, lambda a: np.asarray(a)[:, :1])
        yield f"group_{name}", (lambda n: lambda h: (h.__delitem__(n), h.create_group(n)))(name)


def _json_mutations(text: str) -> Iterator[tuple[str, str]]:
    yield "json_invalid", text[: len(text) // 2]
    yield "json_list", "[1, 2, 3]"
    yield "json_null", "null"
    yield "json_string", '"x"'
    yield "json_empty_obj", "{}"
    try:
        obj = json.loads(text)
    except ValueError:
        return
    if isinstance(obj, dict):
        for k in list(obj)[:12]:
            for label, v in (("null", None), ("str", "abc"), ("neg", -1), ("list", [1, "a"]),
                             ("dict", {"a": 1}), ("huge", 10 ** 30), ("nan", float("nan"))):
                o = dict(obj)
                o[k] = v
                yield f"json_{k}_{label}", json.dumps(o)
            o = dict(obj)
            del o[k]
            yield f"json_drop_{k}", json.dumps(o)


def _calibration_mutations(text: str) -> Iterator[tuple[str, str]]:
    """``calibration.json`` breaks: as JSON (the hash then refuses most), and re-hashed, so
    the type and range checks behind the hash see each wrong value."""
    from trackverify.benchmark.partitions import content_hash

    yield from _json_mutations(text)
    body = {k: v for k, v in json.loads(text).items() if k != "sha256"}

    def hashed(o):
        return json.dumps({**o, "sha256": content_hash(o)})

    values = (("null", None), ("str", "abc"), ("neg", -1), ("zero", 0), ("list", [1, "a"]),
              ("dict", {"a": 1}), ("huge", 10 ** 30), ("big", 1e308), ("true", True))
    for k in body:
        for label, v in values:
            yield f"rehash_{k}_{label}", hashed({**body, k: v})
        o = dict(body)
        del o[k]
        yield f"rehash_drop_{k}", hashed(o)
        if isinstance(body[k], dict):
            for inner in body[k]:
                for label, v in values:
                    yield f"rehash_{k}.{inner}_{label}", hashed({**body, k: {**body[k], inner: v}})
                yield f"rehash_drop_{k}.{inner}", hashed(
                    {**body, k: {x: y for x, y in body[k].items() if x != inner}})
    opts = body["verifier"]["options"]
    for label, v in (("score_bad", {"score": "zz"}), ("window_neg", {"track_window": -1}),
                     ("window_float", {"track_window": 1.5}), ("window_huge", {"track_window": 10 ** 30})):
        yield f"rehash_options_{label}", hashed(
            {**body, "verifier": {**body["verifier"], "options": {**opts, **v}}})
    for label, v in (("nan", "NaN"), ("inf", "Infinity"), ("ninf", "-Infinity")):
        yield f"rehash_threshold_{label}", hashed(body).replace('"threshold_um": 5.0',
                                                                f'"threshold_um": {v}')
    yield "rehash_deep", hashed({**body, "fit": _deep(200)})
    yield "deep_fit", hashed(body).replace('"fit": {}', '"fit": ' + '{"a": ' * 5000 + "1" + "}" * 5001)
    yield "deep_json", "[" * 100_000 + "]" * 100_000


def _deep(depth: int):
    o: object = 1
    for _ in range(depth):
        o = {"a": o}
    return o


def _toml_mutations(run: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``run --config`` breaks: each key of the wrong type, out of range, NaN / inf, huge,
    dropped, twice; unknown keys and tables; deep nesting; not TOML at all."""
    values = (("str", '"abc"'), ("neg", "-1"), ("zero", "0"), ("float", "1.5"), ("bool", "true"),
              ("huge", "9223372036854775807"), ("big", "1e308"), ("nan", "nan"), ("inf", "inf"),
              ("ninf", "-inf"), ("list", "[1, 2]"), ("table", "{a = 1}"), ("empty_list", "[]"),
              ("date", "2026-12-04"), ("long", '"' + "x" * 1_000_000 + '"'))
    for k in run:
        for label, v in values:
            yield f"toml_{k}_{label}", _toml({**run, k: v})
        yield f"toml_drop_{k}", _toml({x: y for x, y in run.items() if x != k})
        yield f"toml_twice_{k}", _toml(run) + f"{k} = {run[k]}\n"
    for label, v in (("unknown", '"control", "zz_nosuch"'), ("dup", '"control", "control"'),
                     ("nocontrol", '"dropout"'), ("ints", "1, 2"), ("nested", '["control"]')):
        yield f"toml_conditions_{label}", _toml({**run, "conditions": f"[{v}]"})
    yield "toml_verifier_module", _toml({**run, "verifier": '"os:system"'})
    yield "toml_verifier_nosuch", _toml({**run, "verifier": '"nosuch.module:Class"'})
    yield "toml_unknown_key", _toml({**run, "zz_nosuch": "1"})
    yield "toml_unknown_table", _toml(run, "[zz]\na = 1\n")
    yield "toml_specimen_bad", _toml(run, '[specimen]\nframes = -5\nmotion = "zz"\n')
    yield "toml_run_not_table", "run = 3\n"
    yield "toml_empty", ""
    yield "toml_deep", "a = " + "[" * 50_000 + "]" * 50_000 + "\n"
    yield "toml_deep_tables", "[" + ".".join(["a"] * 5000) + "]\n"
    yield "toml_json", json.dumps({"run": {"seed": 1}})
    yield "toml_invalid", "[run\nseed = \n"


def _npy_mutations(array: np.ndarray) -> Iterator[tuple[str, object]]:
    """``.npy`` breaks: (label, array to ``np.save`` or raw bytes). An object array needs
    pickle to load and must be refused (``allow_pickle`` stays False)."""
    yield "npy_object", np.array([object()] * 3 + [None], dtype=object)
    yield "npy_object_pts", array.astype(object)
    yield "npy_pickle_bytes", b"\x80\x04\x95" + bytes(40)
    yield "npy_npz", "npz"
    yield "npy_str", array.astype(str)
    yield "npy_bool", array > 0
    yield "npy_complex", array.astype(complex)
    yield "npy_f16", array.astype(np.float16)
    yield "npy_int", np.nan_to_num(array).astype(np.int64)
    yield "npy_structured", np.zeros(len(array), dtype=[("x", "f8"), ("y", "f8"), ("z", "f8")])
    yield "npy_scalar", np.float64(1.0)
    yield "npy_1d", array.reshape(-1)
    yield "npy_3d", array[None]
    yield "npy_transposed", array.T
    yield "npy_4cols", np.hstack([array, array[:, :1]])
    yield "npy_1col", array[:, :1]
    yield "npy_empty", array[:0]
    yield "npy_one_row", array[:1]
    yield "npy_short", array[: len(array) // 2]
    for label, v in (("nan_all", np.nan), ("inf", np.inf), ("ninf", -np.inf), ("big", 1e308),
                     ("huge_um", 1e9)):
        a = array.astype(float).copy()
        if label == "nan_all":
            a[:] = v
        else:
            a[len(a) // 2, 0] = v
        yield f"npy_{label}", a
    yield "npy_fortran", np.asfortranarray(array)
    yield "npy_bigendian", array.astype(">f8")
    yield "npy_header_huge_shape", "huge_shape"


def _pickle_mutations(obj) -> Iterator[tuple[str, bytes]]:
    """Pickle breaks of a data object (a dict, a list of arrays): each key dropped or of the
    wrong type, each array emptied, transposed, non-finite, text or an extra axis; objects
    nested deep (by opcodes, below the writer's recursion limit) or holding themselves."""
    import pickle

    def dump(o) -> bytes:
        return pickle.dumps(o, protocol=4)

    def array_breaks(a: np.ndarray) -> Iterator[tuple[str, object]]:
        yield "empty", a[:0]
        yield "extradim", a[..., None]
        yield "text", a.astype(str)
        yield "scalar", a.reshape(-1)[0] if a.size else 0
        if a.ndim == 2:
            yield "transposed", a.T
        if a.dtype.kind in "iuf" and a.size:
            for label, v in (("nan", np.nan), ("inf", np.inf), ("huge", 1e308), ("neg", -1)):
                c = a.astype(float).copy()
                c.reshape(-1)[a.size // 2] = v
                yield label, c
            yield "int8", a.astype(np.int8)
            yield "u64max", np.full(a.shape, 2 ** 64 - 1, dtype=np.uint64)

    def element_breaks(value) -> Iterator[tuple[str, object]]:
        for label, v in (("none", None), ("str", "abc"), ("neg", -1), ("float", 1.5),
                         ("huge", 10 ** 30), ("list", [1, "a"]), ("dict", {"a": 1}),
                         ("emptylist", []), ("bool", True)):
            yield label, v
        if isinstance(value, np.ndarray):
            yield from array_breaks(value)
        elif isinstance(value, list) and value:
            yield "short", value[:-1]
            yield "long", value + value[-1:]
            for label, v in element_breaks(value[0]) if not isinstance(value[0], (str, int, float)) \
                    else (("none", None), ("num", 3), ("text", "abc")):
                yield f"first_{label}", [v] + list(value[1:])
            if isinstance(value[0], list) and value[0] and isinstance(value[0][0], np.ndarray):
                for label, v in array_breaks(value[0][0]):
                    yield f"inner_{label}", [[v] + list(value[0][1:])] + list(value[1:])

    yield "pkl_list", dump([1, 2, 3])
    yield "pkl_none", dump(None)
    yield "pkl_str", dump("abc")
    yield "pkl_array", dump(np.zeros((3, 3)))
    yield "pkl_deep", b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b"."
    loop: list = []
    loop.append(loop)
    yield "pkl_self", dump(loop)
    if isinstance(obj, dict):
        yield "pkl_empty_dict", dump({})
        for k, value in obj.items():
            yield f"pkl_drop_{k}", dump({x: y for x, y in obj.items() if x != k})
            for label, v in element_breaks(value):
                yield f"pkl_{k}_{label}", dump({**obj, k: v})
            if isinstance(value, dict):
                for inner in value:
                    for label, v in (("none", None), ("str", "abc"), ("nan", float("nan")),
                                     ("list", [1])):
                        yield f"pkl_{k}.{inner}_{label}", dump({**obj, k: {**value, inner: v}})
        yield "pkl_self_dict", dump(_self_dict(obj))
    elif isinstance(obj, list):
        for label, v in element_breaks(obj):
            yield f"pkl_{label}", dump(v)


def _self_dict(obj: dict) -> dict:
    out = dict(obj)
    out[next(iter(out))] = out
    return out


def _npz_mutations(arrays: dict[str, np.ndarray]) -> Iterator[tuple[str, bytes]]:
    """``.npz`` breaks: its array renamed, doubled, missing or broken as a ``.npy`` is."""
    def savez(**named) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, **named)
        return buf.getvalue()

    yield "npz_empty", savez()
    yield "npz_renamed", savez(**{"zz_" + k: v for k, v in arrays.items()})
    yield "npz_extra", savez(**arrays, extra=np.zeros(3))
    for key, array in arrays.items():
        for label, payload in _npy_mutations(array):
            if isinstance(payload, (bytes, str)):
                if label == "npy_pickle_bytes":
                    yield f"npz_{key}_pickled", savez(**{**arrays, key: np.array([object()] * 2)})
                continue
            yield f"npz_{key}_{label}", savez(**{**arrays, key: payload})


def _write_npy(main: Path, payload, array: np.ndarray) -> None:
    """Write one of :func:`_npy_mutations`' payloads (of ``array``) to ``main``."""
    if isinstance(payload, bytes):
        main.write_bytes(payload)
    elif isinstance(payload, str) and payload == "npz":
        with main.open("wb") as fh:
            np.savez(fh, pts=array)
    elif isinstance(payload, str) and payload == "huge_shape":  # the header's first axis
        buf = io.BytesIO()
        np.save(buf, array)
        huge = str((999_999_999_999, *array.shape[1:])).encode()
        main.write_bytes(buf.getvalue().replace(str(array.shape).encode(), huge, 1))
    else:
        np.save(main, payload, allow_pickle=True)


def _geff_mutations(store: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    arrays = sorted(p.parent.relative_to(store) for p in store.rglob(".zarray"))
    attrs = sorted(p.relative_to(store) for p in store.rglob(".zattrs"))
    groups = sorted(p.parent.relative_to(store) for p in store.rglob(".zgroup") if p.parent != store)
    for a in arrays:
        yield f"rm_{a}", lambda s, a=a: shutil.rmtree(s / a)
        yield f"rmchunks_{a}", lambda s, a=a: [p.unlink() for p in (s / a).iterdir()
                                              if not p.name.startswith(".")]
        meta = json.loads((store / a / ".zarray").read_text())
        for label, change in (("dtype_bool", {"dtype": "|b1"}), ("dtype_str", {"dtype": "<U4"}),
                              ("dtype_f2", {"dtype": "<f2"}), ("dtype_bad", {"dtype": "zz"}),
                              ("shape0", {"shape": [0] + meta["shape"][1:]}),
                              ("shape_big", {"shape": [meta["shape"][0] * 4] + meta["shape"][1:]}),
                              ("shape_scalar", {"shape": [], "chunks": []}),
                              ("shape_2d", {"shape": meta["shape"] + [1], "chunks": meta["chunks"] + [1]}),
                              ("compressor_bad", {"compressor": {"id": "nosuch"}}),
                              ("fill_nan", {"fill_value": "NaN"})):
            def edit(s, a=a, change=change):
                m = json.loads((s / a / ".zarray").read_text())
                m.update(change)
                (s / a / ".zarray").write_text(json.dumps(m))
            yield f"{label}_{a}", edit
        yield f"zarray_invalid_{a}", lambda s, a=a: (s / a / ".zarray").write_text("{")
        chunk = next((p for p in sorted((store / a).iterdir()) if not p.name.startswith(".")), None)
        if chunk is not None:
            def flip(s, rel=chunk.relative_to(store)):
                data = bytearray((s / rel).read_bytes())
                for k in range(0, len(data), max(len(data) // 16, 1)):
                    data[k] ^= 0x5A
                (s / rel).write_bytes(bytes(data))
            yield f"chunkflip_{a}", flip
            yield f"chunktrunc_{a}", lambda s, rel=chunk.relative_to(store): (s / rel).write_bytes(
                (s / rel).read_bytes()[:7])
    for g in groups:
        yield f"rmgroup_{g}", lambda s, g=g: shutil.rmtree(s / g)
    for at in attrs:
        text = (store / at).read_text()
        for label, new in _json_mutations(text):
            yield f"attrs_{at.parent}_{label}", lambda s, at=at, new=new: (s / at).write_text(new)
        obj = json.loads(text)
        inner = obj.get("geff") if isinstance(obj.get("geff"), dict) else None
        if inner is not None:
            for k in list(inner):
                for lab, v in (("null", None), ("str", "abc"), ("list", [1, "a"]), ("num", 3)):
                    o = json.loads(text)
                    o["geff"][k] = v
                    yield f"geffmeta_{at.parent}_{k}_{lab}", lambda s, at=at, o=o: (s / at).write_text(
                        json.dumps(o))
                o = json.loads(text)
                del o["geff"][k]
                yield f"geffmeta_{at.parent}_drop_{k}", lambda s, at=at, o=o: (s / at).write_text(
                    json.dumps(o))


def variants(bases: list[Base], root: Path, seed: int = SEED,
             only: str | None = None) -> Iterator[Variant]:
    """Write each hostile variant under ``root/var/<name>/`` as it is yielded."""
    import h5py
    import pyarrow.parquet as pq

    import warnings
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(seed)
    vroot = root / "var"
    for base in bases:
        if only and not any(o in base.name for o in only.split(",")):
            continue

        def new(label: str) -> tuple[Variant, Path]:
            name = f"{base.name}__{label}"
            safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:150]
            vdir = vroot / safe
            shutil.rmtree(vdir, ignore_errors=True)
            path, main = _copy_base(base, vdir)
            return Variant(name, base, path, vdir), main

        def write_bytes(label: str, payload: str | bytes, target: Path | None = None):
            v, main = new(label)
            t = main if target is None else main.parent / target.name
            t.write_bytes(payload.encode("utf-8") if isinstance(payload, str) else payload)
            return v

        main_is_file = base.main.is_file()
        if main_is_file:
            data = base.main.read_bytes()
            for label, payload in _bytes_mutations(data, rng):
                yield write_bytes(label, payload)
        if base.fmt in ("table", "detections", "napari", "mot", "ctc", "trackmate_csv",
                        "3deecelltracker") and base.main.suffix in (".csv", ".txt"):
            text = base.main.read_text()
            sep = " " if base.fmt == "ctc" else ","
            for label, payload in _csv_text_mutations(text, rng, header=base.fmt not in ("mot", "ctc"),
                                                      sep=sep):
                yield write_bytes(label, payload)
        if base.main.suffix == ".parquet":
            df = pd.read_parquet(base.main)
            for label, table in _table_df_mutations(df, rng):
                v, main = new(label)
                pq.write_table(table, main)
                yield v
            v, main = new("as_csv_named_parquet")
            df.to_csv(main, index=False)
            yield v
        if base.name == "synth_dir":
            df = pd.read_parquet(base.path / "observations.parquet")
            for label, table in _table_df_mutations(df, rng):
                v, main = new("obs_" + label)
                pq.write_table(table, main.parent / "observations.parquet")
                yield v
            v, main = new("no_recordings_csv")
            main.unlink()
            yield v
            v, main = new("no_observations")
            (main.parent / "observations.parquet").unlink()
            yield v
        if base.fmt == "trackmate":
            for label, payload in _xml_mutations(base.main, rng):
                yield write_bytes(label, payload)
        if base.fmt in ("btrack", "zephir", "nwb"):
            h5s = [base.main] + ([base.extra["worldlines"]] if "worldlines" in base.extra else [])
            for h5 in h5s:
                for label, edit in _hdf5_mutations(h5, rng):
                    v, main = new(f"{h5.stem}_{label}")
                    with h5py.File(main.parent / h5.name, "r+") as h:
                        try:
                            edit(h)
                        except (TypeError, ValueError, KeyError, IndexError):
                            continue  # a break h5py cannot write: no variant
                    yield v
        if base.fmt in ("calibration", "partitions"):
            for label, payload in _calibration_mutations(base.main.read_text()) \
                    if base.fmt == "calibration" else _json_mutations(base.main.read_text()):
                yield write_bytes(label, payload)
        if base.fmt == "config":
            for label, payload in _toml_mutations(RUN_TOML):
                yield write_bytes(label, payload)
        if base.fmt == "pairs":
            yield from _pairs_variants(base, new, write_bytes)
        if base.fmt in READER_FORMATS:
            yield from _reader_variants(base, new, write_bytes, rng)
        if base.fmt == "geff":
            for label, edit in _geff_mutations(base.path):
                v, main = new(label)
                edit(v.path)
                yield v
        if base.fmt == "ctc":
            masks = sorted(base.path.glob("mask*.tif"))
            for label, payload in _bytes_mutations(masks[2].read_bytes(), rng):
                yield write_bytes(f"mask_{label}", payload, masks[2])
            v, main = new("mask_missing")
            (v.path / masks[2].name).unlink()
            yield v
            v, main = new("mask_extra")
            shutil.copy(v.path / masks[0].name, v.path / "mask999.tif")
            yield v
            v, main = new("mask_renamed_labels")
            (v.path / masks[1].name).write_bytes((v.path / masks[0].name).read_bytes())
            yield v
            import tifffile
            img = tifffile.imread(masks[1])
            for label, arr in (("float", img.astype(np.float32) + 0.5), ("3d", np.stack([img, img])),
                               ("rgb", np.stack([img] * 3, axis=-1).astype(np.uint8)),
                               ("empty", np.zeros((0, 0), np.uint16)),
                               ("neg", (img.astype(np.int32) - 5)),
                               ("big", img.astype(np.uint64) * (2 ** 40)),
                               ("shape", img[: img.shape[0] // 2])):
                v, main = new(f"maskimg_{label}")
                tifffile.imwrite(v.path / masks[1].name, arr)
                yield v
        for key in ("graph", "metadata"):
            if key in base.extra:
                text = base.extra[key].read_text()
                for label, payload in _json_mutations(text):
                    v, main = new(f"{key}_{label}")
                    (main.parent / base.extra[key].name).write_text(payload)
                    yield v
                if key == "graph":
                    for label, payload in (("graph_cycle", '{"2": [3], "3": [2]}'),
                                           ("graph_unknown", '{"999": [998]}'),
                                           ("graph_strkeys", '{"a": ["b"]}'),
                                           ("graph_self", '{"2": [2]}'),
                                           ("graph_nested", '{"2": [[3]]}'),
                                           ("graph_float", '{"2.5": [1.5]}')):
                        v, main = new(label)
                        (main.parent / "graph.json").write_text(payload)
                        yield v


#: The formats of :func:`_reader_bases`, whose variants :func:`_reader_variants` writes.
READER_FORMATS = ("recordings", "candidates", "stage", "conversion", "andi", "recordings_dir")


def _reader_variants(base: Base, new, write_bytes, rng: np.random.Generator) -> Iterator[Variant]:
    """The breaks of :func:`_reader_bases`' main files by their kind (text tables, pickles,
    ``.npy``, ``.npz``; Parquet and bytes are the shared ones), and, in a folder, the file
    missing, a folder in its place or a symlink out of the folder."""
    import pickle

    suffix = base.main.suffix
    if suffix in (".csv", ".txt"):
        ensemble = base.main.name == "ensemble_labels.txt"  # a "model: ..." line, then ;-rows
        for label, payload in _csv_text_mutations(base.main.read_text(), rng,
                                                  header=base.fmt != "andi" or ensemble,
                                                  sep=";" if ensemble else ","):
            yield write_bytes(label, payload)
    elif suffix == ".pkl":
        for label, payload in _pickle_mutations(pickle.loads(base.main.read_bytes())):
            yield write_bytes(label, payload)
    elif suffix == ".npy":
        array = np.load(base.main, allow_pickle=False)
        for label, payload in _npy_mutations(array):
            v, main = new(label)
            _write_npy(main, payload, array)
            yield v
    elif suffix == ".npz":
        with np.load(base.main, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        for label, payload in _npz_mutations(arrays):
            yield write_bytes(label, payload)
    if base.path.is_dir():
        v, main = new("main_missing")
        main.unlink()
        yield v
        v, main = new("main_is_folder")
        main.unlink()
        main.mkdir()
        yield v
        v, main = new("main_symlink_out")
        shutil.move(main, v.dir / main.name)
        main.symlink_to(v.dir / main.name)
        yield v
    if base.fmt == "conversion":
        for f in sorted(base.path.iterdir()):
            if f != base.main:
                v, main = new(f"missing_{f.name}")
                (main.parent / f.name).unlink()
                yield v


def _pairs_variants(base: Base, new, write_bytes) -> Iterator[Variant]:
    """An ``evidence --pairs`` folder: each ``.npy`` break, one file of a pair missing, an
    example that is a symlink out of the folder, a symlinked file, an empty folder."""
    array = np.load(base.main, allow_pickle=False)
    for label, payload in _npy_mutations(array):
        v, main = new(label)
        _write_npy(main, payload, array)
        yield v
    v, main = new("pair_missing_tar")
    (main.parent / "pts_tar.npy").unlink()
    yield v
    v, main = new("pair_empty_folder")
    for f in main.parent.iterdir():
        f.unlink()
    yield v
    v, main = new("pair_no_examples")
    shutil.rmtree(main.parent.parent)
    main.parent.parent.mkdir()
    yield v
    v, main = new("pair_symlink_out")
    outside = v.dir / "outside"
    shutil.copytree(main.parent, outside)
    shutil.rmtree(main.parent)
    main.parent.symlink_to(outside, target_is_directory=True)
    yield v
    v, main = new("pair_symlink_file_out")
    shutil.copy(main, v.dir / "outside.npy")
    main.unlink()
    main.symlink_to(v.dir / "outside.npy")
    yield v
    v, main = new("pair_dangling_symlink")
    main.unlink()
    main.symlink_to(v.dir / "nosuch.npy")
    yield v
    v, main = new("pair_stray_file")
    (main.parent.parent / "README.txt").write_text("not an example")
    yield v


# ---------------------------------------------------------------- commands

def commands(v: Variant, out: Path) -> list[tuple[str, list[str]]]:
    """Every command line that reads ``v`` (the variant's own file on each side it can be on)."""
    p = str(v.path)
    fmt = [] if v.base.fmt in ("table", "predictions", "detections", "nwb") else ["--format", v.base.fmt]
    if v.base.fmt == "calibration":
        return [("audit_calibration", ["audit", str(v.base.extra["observations"]), "--calibration", p,
                                       "--out", str(out / "audit")])]
    if v.base.fmt in ("config", "partitions"):
        flag = "--config" if v.base.fmt == "config" else "--partitions"
        return [(f"run_{v.base.fmt}", ["run", "--data", str(v.base.extra["data"]), flag, p,
                                       *(["--conditions", "control"] if flag == "--partitions" else []),
                                       "--no-rows", "--out", str(out / "run")])]
    if v.base.fmt == "pairs":
        return [("evidence_pairs", ["evidence", "--pairs", p, "--levels", "", "--grid", "default",
                                    "--out", str(out / "evidence")]),
                ("evidence_pairs_out_in", ["evidence", "--pairs", p, "--levels", "",
                                           "--grid", "default", "--out", p])]
    if v.base.fmt in READER_FORMATS:
        return _reader_commands(v, out)
    if v.base.fmt == "detections":
        return [("audit_detections", ["audit", str(v.base.extra["tracks"]), "--detections", p,
                                      "--out", str(out / "audit")])]
    if v.base.fmt == "predictions":
        return [("evaluate_pred", ["evaluate", "--reference", str(v.base.extra["reference"]),
                                   "--predictions", p, "--out", str(out / "evaluate")]),
                ("audit", ["audit", p, "--out", str(out / "audit")])]
    cmds = [("convert", ["convert", p, "--to", "parquet", *fmt, "--out", str(out / "convert")]),
            ("evaluate", ["evaluate", "--reference", p, "--predictions", p, *fmt,
                          "--out", str(out / "evaluate")]),
            ("audit", ["audit", p, *fmt, "--out", str(out / "audit")]),
            ("verify", ["verify", "--observations", p, *fmt, "--conditions", "control",
                        "--out", str(out / "verify")]),
            ("run", ["run", "--data", p, *fmt, "--conditions", "control", "--no-rows",
                     "--out", str(out / "run")])]
    if "reference" in v.base.extra:
        ref = v.base.extra["reference"]
        ref_dir = (v.dir / "in" / ref.relative_to(v.base.path.parent)
                   if v.base.path.parent in ref.parents else ref)
        cmds.append(("evaluate_vs_ref", ["evaluate", "--reference", str(ref_dir), "--predictions", p,
                                         *fmt, "--out", str(out / "evaluate2")]))
    if v.base.name == "synth_dir":
        cmds = [c for c in cmds if c[0] in ("verify", "run", "convert")]
    return cmds


#: The stages that read a ground truth (docs/reference/stages.md).
STAGES_WITH_TRUTH = ("body-tracking", "keypoints", "walking", "features")


def _reader_commands(v: Variant, out: Path) -> list[tuple[str, list[str]]]:
    """The command lines of :func:`_reader_bases`' inputs: the variant on each side it can be
    on (a stage's submission, reference or ground truth; a conversion's submission or
    reference), the valid base on the others."""
    p, valid, fmt = str(v.path), str(v.base.path), v.base.fmt
    if fmt == "recordings":
        return [("split", ["split", "--recordings", p, "--fractions", "train=0.5,test=0.5",
                           "--out", str(out / "partitions.json")]),
                ("split_group", ["split", "--recordings", p, "--by", "provenance_group",
                                 "--out", str(out / "partitions.json")])]
    if fmt == "candidates":
        return [("split_same", ["split", "--recordings", str(v.base.extra["recordings"]),
                                "--same-animal-candidates", p, "--fractions", "train=0.5,test=0.5",
                                "--out", str(out / "partitions.json")])]
    if fmt == "stage":
        stage = v.base.extra["stage"]
        roles = [("stage_sub", p, valid, valid), ("stage_ref", valid, p, valid)]
        if stage in STAGES_WITH_TRUTH:
            roles.append(("stage_gt", valid, valid, p))
        return [(label, ["stage", stage, "--submission", sub, "--reference", ref,
                         "--ground-truth", gt, "--out", str(out / "stage")])
                for label, sub, ref, gt in roles]
    if fmt == "conversion":
        quick = ["--epochs", "5"]
        return [("conversion_check", ["conversion", "check", p, *quick, "--out", str(out / "conv")]),
                ("conversion_ref", ["conversion", "check", valid, "--reference", p, *quick,
                                    "--out", str(out / "conv")]),
                ("conversion_decode", ["conversion", "decode", str(v.path / v.base.main.name),
                                       *quick, "--out", str(out / "decode.json")])]
    if fmt == "andi":
        return [("andi_score", ["andi", "score", p, str(out / "andi")]),
                ("andi_corrected", ["andi", "score", p, str(out / "andi"), "--corrected"])]
    return [("evidence_recordings", ["evidence", "--recordings", p, "--levels", "", "--draws", "1",
                                     "--out", str(out / "evidence")]),
            ("run_data", ["run", "--data", p, "--conditions", "control", "--no-rows",
                          "--out", str(out / "run")])]


#: Commands whose exit 1 is a documented verdict when they wrote this file under ``--out``.
VERDICT_FILES = {"stage_sub": "stage.json", "stage_ref": "stage.json", "stage_gt": "stage.json",
                 "conversion_check": "conversion.json", "conversion_ref": "conversion.json"}


def api_calls(v: Variant, out: Path) -> list[tuple[str, Callable[[], object]]]:
    """The Python API on the variant: trackverify.audit, verify, evaluate_tracking."""
    import trackverify

    if v.base.fmt != "table" or v.base.name == "synth_dir":
        return []
    p = v.path

    def frame():
        return pd.read_csv(p) if p.suffix == ".csv" else pd.read_parquet(p)

    def evaluate():
        try:
            df = frame()
        except Exception:  # pandas cannot read it: nothing for the API to see
            return None
        return trackverify.evaluate_tracking(df, df)

    return [("api_audit", lambda: trackverify.audit(p, out=out / "api_audit")),
            ("api_verify", lambda: trackverify.verify(p, out=out / "api_verify",
                                                       conditions=["control"])),
            ("api_evaluate_tracking", evaluate)]


# ---------------------------------------------------------------- running

def _tree_hash(path: Path) -> str:
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*"))
    for p in files:
        h.update(str(p.relative_to(path.parent)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def run_in_child(target: Callable[[], object], stderr_path: Path, cwd: Path,
                 timeout: float = TIMEOUT_S) -> tuple[str, int | None, float]:
    """Run ``target`` in a forked child: ``('exit', code, cpu seconds)``, or ``('timeout', None,
    seconds)`` when it used more than ``timeout`` CPU seconds or ran :data:`WALL_LIMIT_S`."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        code = 70
        try:
            os.chdir(cwd)
            fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            os.dup2(fd, 1)
            sys.stderr = os.fdopen(2, "w", buffering=1)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            try:
                target()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException as exc:  # the API raised
                from trackverify.errors import TrackverifyError
                print(f"{type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
                code = 64 if isinstance(exc, TrackverifyError) else 65
        finally:
            try:
                sys.stderr.flush()
                sys.stdout.flush()
            finally:
                os._exit(code)
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            cpu = usage.ru_utime + usage.ru_stime
            if cpu > timeout:  # CPU time: a machine shared with other work stretches wall time
                return "timeout", None, cpu
            return "exit", os.waitstatus_to_exitcode(status), cpu
        if time.monotonic() - start > WALL_LIMIT_S:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", None, time.monotonic() - start
        time.sleep(0.01)


def judge(label: str, v: Variant, state: str, code, err: str,
          verdict: bool = False) -> str | None:
    """None when the outcome is one of the documented ones, else what is wrong. ``verdict``:
    the command wrote its :data:`VERDICT_FILES` file (then exit 1 is a documented verdict)."""
    if state == "timeout":
        return "hang"
    # a documented units warning about the file may precede its refusal
    lines = [line for line in err.splitlines()
             if line.strip() and not line.startswith("trackverify: warning:")]
    if "Traceback" in err:
        return "traceback"
    if label.startswith("api_"):
        if code == 65:
            return "api raised a non-trackverify exception"
        if code not in (0, 64):
            return f"api exit {code}"
        return None
    if code == 0 or code == 1 and verdict and label in VERDICT_FILES:
        return None
    if code != 2:
        return f"exit {code}"
    errors = [line for line in lines if line.startswith("trackverify: error:")]
    if not errors:
        return "exit 2 without an error line"
    if "a defect of trackverify" in errors[-1]:
        return "net"
    if len(lines) > 1:
        return "more than one line"
    if v.path.name not in errors[-1] and str(v.dir / "in") not in errors[-1]:
        return "file not named"
    return None


REDUNDANT = {"run": "verify", "api_verify": "verify", "api_audit": "audit"}  # the same job


def _warm_up(bases: list[Base], root: Path, cli_main) -> None:
    """Run every command once on each valid base in this process, so that every module a
    command imports lazily is loaded before the forks (each child then starts at once)."""
    import contextlib

    done: set[str] = set()
    for base in bases:
        if base.fmt in done:
            continue  # one base of each format loads every module its commands need
        done.add(base.fmt)
        v = Variant(base.name, base, base.path, root / "warm" / base.name)
        shutil.copytree(base.path.parent if base.fmt == "ctc" or not base.path.is_dir() else base.path,
                        v.dir / "in", dirs_exist_ok=True)
        for label, argv in commands(v, root / "warm" / "_out"):
            argv = [a.replace(str(v.dir / "in"), str(base.path.parent if not base.path.is_dir()
                                                     or base.fmt == "ctc" else base.path))
                    for a in argv]
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                try:
                    cli_main(argv)
                except SystemExit:
                    pass
        shutil.rmtree(root / "warm", ignore_errors=True)


def sweep(root: Path, seed: int = SEED, only: str | None = None,
          selected: set[str] | None = None, limit: int | None = None,
          sample: float = 1.0) -> list[dict]:
    """Build the bases and variants under ``root`` and run every command on each."""
    import trackverify.audit  # noqa: F401  heavy imports once, before the forks
    import trackverify.io.formats as formats
    import trackverify.metrics.tracking  # noqa: F401
    import trackverify.benchmark.verification  # noqa: F401
    from trackverify.cli.app import main as cli_main
    for f in formats.FORMATS.values():
        try:
            f._reader()
        except ImportError:
            pass

    bases = make_bases(root)
    rng = np.random.default_rng(seed + 1)
    _warm_up([b for b in bases if not only or any(o in b.name for o in only.split(","))],
             root, cli_main)
    findings: list[dict] = []
    count = runs = 0
    t0 = time.monotonic()
    keep = np.random.default_rng(seed + 2)
    for v in variants(bases, root, seed, only):
        if sample < 1 and keep.random() >= sample:
            shutil.rmtree(v.dir, ignore_errors=True)
            continue
        count += 1
        if limit and count > limit:
            break
        calls = [(label, (lambda a: lambda: cli_main(a))(argv), argv)
                 for label, argv in commands(v, v.dir / "_out")]
        calls += [(label, fn, None) for label, fn in api_calls(v, v.dir / "_out")]
        watched = v.dir / "in"
        refused = 0
        for k, (label, fn, argv) in enumerate(calls):
            if selected and label not in selected:
                continue
            if k >= 2 and refused == 2 and int(rng.integers(10)) and not selected:
                continue  # the reader refused it twice, cleanly: the rest only for a tenth
            if label in REDUNDANT and int(rng.integers(10)) and not selected:
                continue  # the same job as another command: only for a tenth
            out = v.dir / "_out"
            shutil.rmtree(out, ignore_errors=True)
            cwd = root / "cwd"
            shutil.rmtree(cwd, ignore_errors=True)
            cwd.mkdir()
            before = _tree_hash(watched)
            err_path = root / "stderr.txt"
            state, code, seconds = run_in_child(fn, err_path, cwd)
            runs += 1
            err = err_path.read_text(errors="replace")
            verdict = label in VERDICT_FILES and any(out.rglob(VERDICT_FILES[label]))
            shutil.rmtree(out, ignore_errors=True)
            problem = judge(label, v, state, code, err, verdict)
            refused += k < 2 and problem is None and code == 2
            if problem is None and _tree_hash(watched) != before:
                problem = "input modified or written beside it"
            if problem is None and any(cwd.iterdir()):
                problem = "wrote into the working directory"
            if problem is not None:
                finding = {"variant": v.name, "command": label, "problem": problem, "code": code,
                           "seconds": round(seconds, 2), "stderr": err[-1500:],
                           "argv": argv}
                (root / "findings.jsonl").open("a").write(json.dumps(finding) + "\n")
                findings.append(finding)
                print(f"[{problem}] {v.name} {label}: {err.strip().splitlines()[-1][:300] if err.strip() else ''}",
                      flush=True)
        shutil.rmtree(v.dir, ignore_errors=True)
    print(f"{count} variants, {runs} runs, {len(findings)} findings, "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--only", help="bases whose name contains this")
    parser.add_argument("--commands", help="comma-separated command labels to run")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--sample", type=float, default=1.0,
                        help="run each variant with this probability (seeded)")
    parser.add_argument("--variant", help="write only this variant (by name), print its path, run nothing")
    args = parser.parse_args(argv)
    if args.variant:
        bases = make_bases(args.root)
        for v in variants(bases, args.root, args.seed, args.variant.split("__")[0]):
            if v.name == args.variant:
                print(v.path)
                return 0
            shutil.rmtree(v.dir, ignore_errors=True)
        return 1
    if not SHARED.is_dir():
        print(f"the shared data is not at {SHARED}", file=sys.stderr)
        return 2
    args.root.mkdir(parents=True, exist_ok=True)
    selected = set(args.commands.split(",")) if args.commands else None
    findings = sweep(args.root, args.seed, args.only, selected, args.limit, args.sample)
    (args.root / "findings.json").write_text(json.dumps(findings, indent=1))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
