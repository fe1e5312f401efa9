"""Corpus cases of issue 18 (reliability): inputs that once raised a traceback, and inputs
that were once scored although they are wrong. Every case here is refused: exit 2 and a
one-line message naming the file (or folder, or setting) and the problem.

A broken *structure* in a stage submission stays a documented verdict (exit 1, ``fail``,
see stage_cases); what is refused here is a submission that reads well but cannot be
right: trajectories far outside the reference's frames, an incomplete submission (one fly
of two, the first 10 % of the frames), a file reached through a link that leaves the
submission folder, p-values outside [0, 1].
"""

from __future__ import annotations

import io
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tests.corpus.andi_cases import _base as andi_base
from tests.corpus.make_corpus import Case, clean_observations, generator
from tests.corpus.stage_cases import EXP, STAGE_FILE, _csv, _world, _write_files
from trackverify.stages import synthetic as S


def _pickled(value) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _trx_part(trx: dict, targets: list[int], frames: int | None = None) -> dict:
    """``trx`` restricted to ``targets`` and (if given) each target's first ``frames``."""
    out = dict(trx)
    n = len(trx["nframes"])
    for key, value in trx.items():
        if isinstance(value, list) and len(value) == n:
            out[key] = [value[i] if frames is None or key == "pxpermm" else
                        value[i][:frames - (1 if key == "dt" else 0)] for i in targets]
        elif isinstance(value, np.ndarray) and value.shape == (n,):
            out[key] = value[targets]
    out["ntargets"] = len(targets)
    if frames is not None:
        out["nframes"] = np.full(len(targets), frames, dtype=np.int64)
        out["endframe"] = out["firstframe"] + frames - 1
    return out


def _shifted(trx: dict, offset) -> dict:
    return {**trx, "firstframe": trx["firstframe"] + offset, "endframe": trx["endframe"] + offset}


@generator
def reliability_stage_cases(root: Path) -> list[Case]:
    world = _world()
    base = root / "rel_stage_world"
    for role in ("ref", "gt", "sub"):
        _write_files(base / role, world[role])
    cases = []

    def case(stage: str, name: str, files: dict, fragments: list[str], code: int = 2,
             role: str = "sub", report_fragments: list[str] | None = None) -> None:
        name = f"rel_stage_{stage.replace('-', '_')}_{name}"
        folders = {r: base / r for r in ("ref", "gt", "sub")}
        folders[role] = root / name / role
        if role == "sub":
            wanted = STAGE_FILE[stage]
            _write_files(folders[role], {k: v for k, v in world["sub"].items() if k == wanted})
        else:
            _write_files(folders[role], world[role])
        _write_files(folders[role], files)
        out = root / name / "out"
        args = ["stage", stage, "--submission", str(folders["sub"]), "--reference",
                str(folders["ref"]), "--ground-truth", str(folders["gt"]), "--out", str(out)]
        fragments = [f.format(sub=folders["sub"], ref=folders["ref"]) for f in fragments]
        if code == 1:  # a structural break of the submission: the documented verdict
            cases.append(Case(name, args, 1, [], out, out / "stage.json",
                              fragments + ['"fail"']))
        else:
            cases.append(Case(name, args, code, fragments, out))

    for stage in ("body-tracking", "registration"):
        rel = STAGE_FILE[stage]
        trx = world["sub"][rel]
        # Absurd sizes are refused before anything is laid out (once: a 14.6 TiB allocation).
        case(stage, "firstframe_1e12", {rel: _pickled(_shifted(trx, 10 ** 12))},
             [f"{{sub}}/{rel}", "firstframe must be >= 0", "frames are at most"], code=1)
        case(stage, "firstframe_1e12_float", {rel: _pickled(_shifted(trx, 1e12))},
             [f"{{sub}}/{rel}", "frames are at most"], code=1)
        case(stage, "ntargets_inf", {rel: _pickled({**trx, "ntargets": np.inf})},
             [f"{{sub}}/{rel}", "ntargets must be an integer in 0..", "inf"], code=1)
        case(stage, "ntargets_negative", {rel: _pickled({**trx, "ntargets": -1})},
             [f"{{sub}}/{rel}", "ntargets must be an integer in 0.."], code=1)
        case(stage, "negative_firstframe", {rel: _pickled(_shifted(trx, -5))},
             [f"{{sub}}/{rel}", "firstframe must be >= 0"], code=1)
        case(stage, "ref_firstframe_1e12", {rel: _pickled(_shifted(world["ref"][rel], 10 ** 12))},
             [f"{{ref}}/{rel}", "frames are at most"], role="ref")
        # Within the frame bound, but 2 trajectories x 9 x 10^7 frames: too large a layout.
        case(stage, "ref_firstframe_9e7", {rel: _pickled(_shifted(world["ref"][rel], 9 * 10 ** 7))},
             [f"{{ref}}/{rel}", "2 trajectories over frames 0..90000039", "cells by frame"],
             role="ref")
        case(stage, "firstframe_9e7", {rel: _pickled(_shifted(trx, 9 * 10 ** 7))},
             [f"{{sub}}/{rel}", "cells by frame"], code=1)
        # Read well, but cannot be right: refused, not scored.
        case(stage, "one_fly_of_two", {rel: _pickled(_trx_part(trx, [0]))},
             [f"{{sub}}/{rel}", "incomplete submission", "40 of 80", "50%"])
        case(stage, "first_tenth_of_frames", {rel: _pickled(_trx_part(trx, [0, 1], 4))},
             [f"{{sub}}/{rel}", "incomplete submission", "8 of 80", "10%"])
        case(stage, "after_the_last_frame", {rel: _pickled(_shifted(trx, 1000))},
             [f"{{sub}}/{rel}", "target 0 ends at frame 1039", "last frame 39"])
    # A predictions file reached through a link that leaves the submission folder.
    outside = root / "rel_stage_outside" / "trx.pkl"
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_bytes(_pickled(world["sub"][STAGE_FILE["body-tracking"]]))
    name = "rel_stage_body_tracking_link_leaves_submission"
    sub = root / name / "sub"
    (sub / EXP).mkdir(parents=True, exist_ok=True)
    link = sub / STAGE_FILE["body-tracking"]
    if not link.is_symlink():
        os.symlink(outside, link)
    out = root / name / "out"
    cases.append(Case(name, ["stage", "body-tracking", "--submission", str(sub), "--reference",
                             str(base / "ref"), "--ground-truth", str(base / "gt"), "--out",
                             str(out)], 2, [str(link), "outside the submission folder",
                                            str(outside)], out))
    name = "rel_stage_body_tracking_experiment_link_leaves_submission"
    sub = root / name / "sub"
    sub.mkdir(parents=True, exist_ok=True)
    if not (sub / EXP).is_symlink():
        os.symlink(outside.parent, sub / EXP)
    out = root / name / "out"
    cases.append(Case(name, ["stage", "body-tracking", "--submission", str(sub), "--reference",
                             str(base / "ref"), "--ground-truth", str(base / "gt"), "--out",
                             str(out)], 2, [str(sub / EXP), "outside the submission folder"], out))
    name = "rel_stage_body_tracking_link_loop"
    sub = root / name / "sub"
    (sub / EXP).mkdir(parents=True, exist_ok=True)
    if not (sub / EXP / "trx.pkl").is_symlink():
        os.symlink(sub / EXP / "loop", sub / EXP / "trx.pkl")
        os.symlink(sub / EXP / "trx.pkl", sub / EXP / "loop")
    out = root / name / "out"
    cases.append(Case(name, ["stage", "body-tracking", "--submission", str(sub), "--reference",
                             str(base / "ref"), "--ground-truth", str(base / "gt"), "--out",
                             str(out)], 2, [str(sub / EXP), "a link that cannot be followed"], out))
    # Statistics: a p-value is a probability.
    rows = S.stats_rows(0.02, 0.3)
    for label, value in (("above_one", "1.5"), ("negative", "-0.01")):
        bad = [rows[0], ("p_value_slow", value)] + rows[2:]
        case("stats", f"p_value_{label}", {"line_1.csv": _csv(bad)},
             ["{sub}/line_1.csv", "column 'value', row 2", "p_value_slow", "outside [0, 1]"])
    case("stats", "u_statistic_negative", {"line_1.csv": _csv([("u_statistic_slow", "-3")] + rows[1:])},
         ["{sub}/line_1.csv", "column 'value', row 1", "is negative"])
    bad = [rows[0], ("p_value_slow", "7")] + rows[2:]
    case("stats", "ref_p_value_above_one", {"line_1.csv": _csv(bad)},
         ["{ref}/line_1.csv", "row 2", "outside [0, 1]"], role="ref")
    return cases


def _andi_track1(folder: Path) -> None:
    """A valid track-1 (videos) experiment beside the track-2 base: VIP file and all."""
    andi_base(folder)
    for side, name in (("ref", "traj_labs_fov_0.txt"), ("res", "fov_0.txt")):
        src = folder / side / "track_2" / "exp_0"
        dst = folder / side / "track_1" / "exp_0"
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / name, dst / name)
        shutil.copy(src / "ensemble_labels.txt", dst / "ensemble_labels.txt")
    (folder / "ref" / "track_1" / "exp_0" / "vip_idx_fov_0.txt").write_text("0\n1\n")


@generator
def reliability_andi_cases(root: Path) -> list[Case]:
    """The reference side of ``andi score``: its defects are the scoring program's error."""
    cases = []

    def case(name: str, change, fragments: list[str]) -> None:
        folder, out = root / name / "input", root / name / "out"
        _andi_track1(folder)
        target = change(folder)
        cases.append(Case(name, ["andi", "score", str(folder), str(out)], 2,
                          [str(target)] + fragments, out))

    def rename_exp(folder: Path) -> Path:
        for side in ("ref", "res"):
            (folder / side / "track_2" / "exp_0").rename(folder / side / "track_2" / "exp_00")
        return folder / "ref" / "track_2" / "exp_00"

    def remove(rel: str):
        def change(folder: Path) -> Path:
            (folder / rel).unlink()
            return folder / rel
        return change

    def write(rel: str, text: str):
        def change(folder: Path) -> Path:
            (folder / rel).write_text(text)
            return folder / rel
        return change

    vip = "ref/track_1/exp_0/vip_idx_fov_0.txt"
    case("rel_andi_experiment_named_exp_00", rename_exp, ["reference", "exp_<N>"])
    case("rel_andi_vip_file_missing", remove(vip), ["reference", "file not found"])
    case("rel_andi_vip_file_not_numeric", write(vip, "zero\none\n"),
         ["reference", "line 1", "'zero' is not an integer"])
    case("rel_andi_vip_file_fractional", write(vip, "0.5\n1\n"),
         ["reference", "line 1", "'0.5' is not an integer"])
    case("rel_andi_vip_file_index_twice", write(vip, "0\n1\n0\n"),
         ["reference", "line 3", "listed twice"])
    case("rel_andi_reference_ensemble_missing", remove("ref/track_2/exp_0/ensemble_labels.txt"),
         ["reference", "file not found"])
    case("rel_andi_reference_ensemble_not_numeric",
         write("ref/track_2/exp_0/ensemble_labels.txt", "model: x\nnot;numbers\n"),
         ["reference", "not a numeric"])

    def fov_gap(folder: Path) -> Path:  # traj_labs_fov_1 without traj_labs_fov_0
        ref = folder / "ref" / "track_2" / "exp_0"
        (ref / "traj_labs_fov_0.txt").rename(ref / "traj_labs_fov_1.txt")
        return ref / "traj_labs_fov_0.txt"
    case("rel_andi_reference_fov_missing", fov_gap, ["reference", "file not found"])
    case("rel_andi_reference_line_not_numeric",
         write("ref/track_2/exp_0/traj_labs_fov_0.txt", "0,1.0,0.5,2,200\n1,abc,1.5,1,200\n"),
         ["reference", "line 2", "field 2 ('abc') is not a number"])
    return cases


CONFIG = {
    "seed_negative": ("[run]\nseed = -1\n", ["seed", ">= 0"]),
    "conditions_empty": ("[run]\nconditions = []\n", ["conditions", "control"]),
    "conditions_without_control": ("[run]\nconditions = ['persistent_swap']\n",
                                   ["conditions", "control"]),
    "conditions_twice": ("[run]\nconditions = ['control', 'dropout', 'dropout']\n",
                         ["conditions", "dropout", "twice"]),
    "specimen_seed_negative": ("[specimen]\nseed = -3\n", ["seed", ">= 0"]),
    "threshold_infinite": ("[run]\nthreshold_um = inf\n", ["threshold_um", "finite"]),
    "zero_distance_infinite": ("[run]\nzero_distance_um = inf\n", ["zero_distance_um", "finite"]),
    "ambiguity_k_infinite": ("[run]\nambiguity_k = inf\n", ["ambiguity_k", "finite"]),
    "fit_ambiguity_k_not_bool": ("[run]\nfit_ambiguity_k = 1\n",
                                 ["fit_ambiguity_k", "true or false"]),
}


@generator
def reliability_config_cases(root: Path) -> list[Case]:
    cases = []
    for name, (text, fragments) in CONFIG.items():
        path = root / f"rel_config_{name}" / "run.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out = root / f"rel_config_{name}" / "out"
        cases.append(Case(f"rel_config_{name}", ["run", "--config", str(path), "--out", str(out)],
                          2, [str(path)] + fragments, out))
    out = root / "rel_config_seed_option_negative" / "out"
    cases.append(Case("rel_config_seed_option_negative",
                      ["run", "--seed", "-5", "--out", str(out)], 2, ["seed", ">= 0"], out))
    return cases


def _pair(folder: Path, gt: np.ndarray, tar: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "pts_gt.npy", gt)
    np.save(folder / "pts_tar.npy", tar)


@generator
def reliability_evidence_cases(root: Path) -> list[Case]:
    rng = np.random.default_rng(0)
    points = rng.uniform(0, 100, (12, 3))
    cases = []

    def case(name: str, make, fragments: list[str]) -> None:
        pairs = root / f"rel_evidence_{name}" / "pairs"
        _pair(pairs / "a", points, points + 0.5)
        _pair(pairs / "b", points * 1.1, points * 1.1 + 0.3)
        target = make(pairs / "c")
        out = root / f"rel_evidence_{name}" / "out"
        cases.append(Case(f"rel_evidence_{name}", ["evidence", "--levels", "", "--grid", "default",
                                                   "--pairs", str(pairs), "--out", str(out)],
                          2, [str(target)] + fragments, out))

    def all_nan(folder):
        _pair(folder, np.full((12, 3), np.nan), np.full((12, 3), np.nan))
        return folder

    def one_point(folder):
        _pair(folder, points[:1], points[:1] + 0.1)
        return folder

    def zip_as_npy(folder):
        _pair(folder, points, points)
        buffer = io.BytesIO()
        np.savez(buffer, pts=points)
        (folder / "pts_gt.npy").write_bytes(buffer.getvalue())
        return folder / "pts_gt.npy"

    def broken_zip_as_npy(folder):
        _pair(folder, points, points)
        (folder / "pts_tar.npy").write_bytes(b"PK\x03\x04 not a zip at all")
        return folder / "pts_tar.npy"

    def huge(folder):
        _pair(folder, points * 1e300, points * 1e300)
        return folder

    def complex_points(folder):  # read as their real parts before
        _pair(folder, points, points + 1j)
        return folder / "pts_tar.npy"

    case("huge_coordinates", huge, ["implausibly large"])
    case("complex_coordinates", complex_points, ["real numbers, got complex128 (12, 3)"])
    case("all_nan", all_nan, ["at least 2 neurons present in both frames", "found 0"])
    case("one_point", one_point, ["at least 2 neurons present in both frames", "found 1"])
    case("zip_as_npy", zip_as_npy, ["a .npz archive, not a .npy array"])
    case("broken_zip_as_npy", broken_zip_as_npy, ["cannot read a numpy array"])
    return cases


@generator
def reliability_table_cases(root: Path) -> list[Case]:
    """Parquet columns of a type a frame index cannot have."""
    cases = []
    df = clean_observations()
    variants = {
        "frame_as_timestamp": df.assign(frame=pd.to_datetime(df["frame"], unit="s")),
        "frame_as_duration": df.assign(frame=pd.to_timedelta(df["frame"], unit="s")),
        "frame_as_timestamp_tz": df.assign(frame=pd.to_datetime(df["frame"], unit="s", utc=True)),
    }
    for name, table in variants.items():
        path = root / f"rel_table_{name}" / "obs.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path, index=False)
        for command, flag in (("run", "--data"), ("verify", "--observations")):
            out = root / f"rel_table_{name}" / f"out-{command}"
            cases.append(Case(f"rel_table_{name}_{command}", [command, flag, str(path), "--out",
                                                               str(out)], 2,
                              [str(path), "column 'frame'", "not a timestamp"], out))
    # Coordinates whose squares overflow (once a traceback in the verifier's KD-tree).
    path = root / "rel_table_huge_coordinate" / "obs.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    df.assign(x_um=df["x_um"].where(df.index != 6, 1e300)).to_csv(path, index=False)
    for command, flag in (("run", "--data"), ("verify", "--observations")):
        out = root / "rel_table_huge_coordinate" / f"out-{command}"
        cases.append(Case(f"rel_table_huge_coordinate_{command}", [command, flag, str(path),
                                                                   "--out", str(out)], 2,
                          [str(path), "column 'x_um'", "row 7", "implausibly large"], out))
    # A dictionary-encoded frame column of timestamps is no better.
    path = root / "rel_table_frame_as_dictionary_timestamp" / "obs.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(variants["frame_as_timestamp"], preserve_index=False)
    i = table.schema.get_field_index("frame")
    table = table.set_column(i, "frame", pa.compute.dictionary_encode(table.column("frame")))
    pq.write_table(table, path)
    out = root / "rel_table_frame_as_dictionary_timestamp" / "out"
    cases.append(Case("rel_table_frame_as_dictionary_timestamp",
                      ["run", "--data", str(path), "--out", str(out)], 2,
                      [str(path), "column 'frame'", "not a timestamp"], out))
    # Timestamps and durations are numbers to pandas, never positions.
    for name, table, column in (
            ("x_as_timestamp", df.assign(x_um=pd.to_datetime(df["x_um"], unit="s")), "x_um"),
            ("y_as_duration", df.assign(y_um=pd.to_timedelta(df["y_um"], unit="s")), "y_um")):
        path = root / f"rel_table_{name}" / "obs.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path, index=False)
        out = root / f"rel_table_{name}" / "out"
        cases.append(Case(f"rel_table_{name}", ["verify", "--observations", str(path), "--out",
                                                str(out)], 2,
                          [str(path), f"column '{column}'", "row 1", "not timestamps or durations"],
                          out))
    # A footer declaring 10**9 rows (pyarrow asked for 8 GB per column before reading a page).
    path = root / "rel_table_footer_declares_1e9_rows" / "obs.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(path, index=False)
    path.write_bytes(footer_declaring_rows(path.read_bytes(), len(df), 10 ** 9))
    out = root / "rel_table_footer_declares_1e9_rows" / "out"
    cases.append(Case("rel_table_footer_declares_1e9_rows",
                      ["run", "--data", str(path), "--out", str(out)], 2,
                      [str(path), "declares 1000000000 rows"], out))
    # A column named twice in a Parquet schema (pyarrow: 'Multiple matches for FieldRef').
    path = root / "rel_table_parquet_column_twice" / "obs.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table.append_column("y_um", table.column("x_um")), path)
    out = root / "rel_table_parquet_column_twice" / "out"
    cases.append(Case("rel_table_parquet_column_twice",
                      ["verify", "--observations", str(path), "--out", str(out)], 2,
                      [str(path), "column 'y_um'", "appears twice in the schema"], out))
    return cases


def footer_declaring_rows(data: bytes, rows: int, declared: int) -> bytes:
    """A Parquet file's bytes with every ``rows`` count of its footer (the file's, the row
    group's, the column chunks' value counts) replaced by ``declared``: in Thrift's compact
    encoding, each is field header 0x16 (the next field, type i64) then the zigzag varint."""
    def varint(n: int) -> bytes:
        out = b""
        while n > 0x7F:
            out, n = out + bytes([n & 0x7F | 0x80]), n >> 7
        return out + bytes([n])

    length = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - length:-8]
    assert footer.count(b"\x16" + varint(2 * rows)) >= 3, "the counts are not where expected"
    footer = footer.replace(b"\x16" + varint(2 * rows), b"\x16" + varint(2 * declared))
    return data[:-8 - length] + footer + len(footer).to_bytes(4, "little") + b"PAR1"


@generator
def reliability_output_cases(root: Path) -> list[Case]:
    """``--out`` under a regular file: refused before anything is computed or written."""
    folder = root / "rel_out_under_file"
    folder.mkdir(parents=True, exist_ok=True)
    blocker = folder / "a_file"
    blocker.write_text("not a folder\n")
    table = folder / "obs.csv"
    clean_observations().to_csv(table, index=False)
    andi = folder / "andi"
    andi_base(andi)
    pairs = folder / "pairs"
    rng = np.random.default_rng(1)
    for name in ("a", "b"):
        p = rng.uniform(0, 100, (8, 3))
        _pair(pairs / name, p, p + 0.2)
    commands = {
        "run": ["run", "--data", str(table), "--start", "4", "--recovery-end", "8"],
        "verify": ["verify", "--observations", str(table), "--start", "4", "--recovery-end", "8"],
        "synth": ["synth", "--frames", "5", "--neurons", "3"],
        "evaluate": ["evaluate", "--reference", str(table), "--predictions", str(table)],
        "andi_score": ["andi", "score", str(andi)],
        "evidence": ["evidence", "--levels", "", "--grid", "default", "--pairs", str(pairs)],
    }
    cases = []
    for name, args in commands.items():
        out = blocker / name / "out"
        full = [*args, str(out)] if name == "andi_score" else [*args, "--out", str(out)]
        cases.append(Case(f"rel_out_under_file_{name}", full, 2,
                          [str(blocker), "lies under the regular file"]))
    return cases

