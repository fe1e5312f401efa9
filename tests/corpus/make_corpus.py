"""The malformed-input corpus: every case is generated here, so the repository stays small.

``build_corpus(root)`` writes each case's files under ``root/<case>/`` and returns the
cases. A case is the command line to run, the exit code it must end with (2 for refused
input, or a documented verdict code), and fragments its message must contain (the file,
and where there is one, the column and the row). A documented verdict that is not a refusal
(a broken stage submission scored ``fail``, a malformed AnDi line reported in the summary)
names a ``report`` file that must be complete and contain ``report_fragments``.

The generators of the table, file and configuration readers are here; those of the other
readers are in the modules of ``READER_MODULES``. Run ``python -m tests.corpus.make_corpus
DIR`` to look at the files, ``--summary`` for the case count per generator.
"""

from __future__ import annotations

import collections
import importlib
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

GENERATORS: list[Callable[[Path], list["Case"]]] = []


@dataclass
class Case:
    name: str
    args: list[str]
    code: int = 2
    fragments: list[str] = field(default_factory=list)
    out: Path | None = None  # output folder that must hold no half-written file
    report: Path | None = None  # the verdict's report (only complete files may be in ``out``)
    report_fragments: list[str] = field(default_factory=list)
    known_bug: str = ""  # a reader that still fails this case: the test is a strict xfail


def generator(fn: Callable[[Path], list[Case]]) -> Callable[[Path], list[Case]]:
    GENERATORS.append(fn)
    return fn


READER_MODULES = ("tests.corpus.stage_cases", "tests.corpus.nwb_cases",
                  "tests.corpus.andi_cases", "tests.corpus.conversion_cases",
                  "tests.corpus.evaluate_cases", "tests.corpus.pickle_attacks",
                  "tests.corpus.reliability_cases", "tests.corpus.bounded_cases",
                  "tests.corpus.partition_cases", "tests.corpus.tracker_csv_cases",
                  "tests.corpus.id_cases", "tests.corpus.message_cases",
                  "tests.corpus.volume_cases", "tests.corpus.edge_cases")


def build_corpus(root: Path, counts: dict[str, int] | None = None) -> list[Case]:
    """Write every case under ``root``; ``counts`` (if given) receives the count per generator."""
    for module in READER_MODULES:
        importlib.import_module(module)  # registers its generators
    cases: list[Case] = []
    for make in GENERATORS:
        made = make(root)
        cases.extend(made)
        if counts is not None:
            counts[make.__name__] = len(made)
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "corpus case names must be unique"
    return cases


class RunsCommand:
    """Pickles as a call of ``os.system``: the restricted unpickler must refuse it unrun."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


# Mutations of any pickle, as (name, bytes -> bytes, fragment of the reason).
PICKLE_BREAKS: list[tuple[str, Callable[[bytes], bytes], str]] = [
    ("empty", lambda data: b"", "not a readable pickle"),
    ("truncated", lambda data: data[: len(data) // 2], "pickle data was truncated"),
    ("text", lambda data: b"x,y\n1,2\n", "pickle"),
    ("class_instance", lambda data: pickle.dumps(collections.Counter(a=1)),
     "refused to load collections.Counter"),
]


def clean_observations(frames: int = 12, tracks: int = 4) -> pd.DataFrame:
    f = np.repeat(np.arange(frames), tracks)
    t = np.tile(np.arange(tracks), frames)
    return pd.DataFrame({"recording": "r1", "frame": f, "track": t, "detection": t,
                         "x_um": t * 10.0, "y_um": 0.0, "z_um": 0.0, "pred_id": t + 100,
                         "pred_valid": True})


def _write(df: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def _set(df: pd.DataFrame, column: str, row: int, value) -> pd.DataFrame:
    """Copy of ``df`` with 1-based data row ``row`` of ``column`` set to ``value``."""
    out = df.copy()
    if column in out.columns and not isinstance(value, type(out[column].iloc[0])):
        out[column] = out[column].astype(object)
    out.loc[row - 1, column] = value
    return out


# Observation-table mutations: (name, mutate, column, row). Row is the 1-based data row.
TABLE_MUTATIONS: list[tuple[str, Callable[[pd.DataFrame], pd.DataFrame], str | None, int | None]] = [
    # (``recording`` may be left out of a single-recording table: tests/formats cover it.)
    *[(f"missing_{c}", (lambda c: lambda df: df.drop(columns=[c]))(c), c, None)
      for c in ("frame", "track", "detection", "x_um", "y_um", "pred_id", "pred_valid")],
    ("renamed_x", lambda df: df.rename(columns={"x_um": "x"}), "x_um", None),
    ("renamed_frame", lambda df: df.rename(columns={"frame": "Frame"}), "frame", None),
    ("nan_x", lambda df: _set(df, "x_um", 5, np.nan), "x_um", 5),
    ("nan_y", lambda df: _set(df, "y_um", 7, np.nan), "y_um", 7),
    ("nan_z", lambda df: _set(df, "z_um", 9, np.nan), "z_um", 9),
    ("inf_x", lambda df: _set(df, "x_um", 3, np.inf), "x_um", 3),
    ("minus_inf_z", lambda df: _set(df, "z_um", 11, -np.inf), "z_um", 11),
    ("text_in_x", lambda df: _set(df, "x_um", 2, "left"), "x_um", 2),
    ("text_in_frame", lambda df: _set(df, "frame", 6, "six"), "frame", 6),
    ("negative_frame", lambda df: _set(df, "frame", 4, -1), "frame", 4),
    ("fractional_frame", lambda df: _set(df, "frame", 8, 1.5), "frame", 8),
    ("huge_frame", lambda df: _set(df, "frame", 10, 10 ** 12), "frame", 10),
    ("duplicate_track", lambda df: _set(df, "track", 2, 0), "track", 2),
    ("duplicate_detection", lambda df: _set(df, "detection", 3, 0), "detection", 3),
    ("null_track", lambda df: _set(df, "track", 5, None), "track", 5),
    ("null_recording", lambda df: _set(df, "recording", 1, None), "recording", 1),
    ("null_pred_id_valid", lambda df: _set(df, "pred_id", 6, None), "pred_id", 6),
    ("bad_pred_valid", lambda df: _set(df, "pred_valid", 7, "perhaps"), "pred_valid", 7),
    ("fractional_track_id", lambda df: _set(df, "track", 4, 2.5), "track", 4),
    ("only_x_no_y", lambda df: df.drop(columns=["y_um", "z_um"]), "y_um", None),
    ("no_rows", lambda df: df.iloc[:0], None, None),
    # a text id holds no control character and is at most tables.MAX_ID_CHARACTERS long
    ("recording_with_line_break", lambda df: _set(df, "recording", 3, "r\n1"), "recording", 3),
    ("recording_with_nul", lambda df: _set(df, "recording", 9, "r1\x00"), "recording", 9),
    ("recording_of_1001_characters", lambda df: _set(df, "recording", 5, "r" * 1001),
     "recording", 5),
    # ... nor one that does not show as itself (a bidirectional override, a C1 control)
    ("recording_with_rtl_override", lambda df: _set(df, "recording", 4, "x\u202e1r"),
     "recording", 4),
    ("recording_with_c1_control", lambda df: _set(df, "recording", 6, "r\x9b1"), "recording", 6),
]


@generator
def table_cases(root: Path) -> list[Case]:
    """Observation tables through `run --data` and `verify --observations`, CSV and Parquet."""
    cases = []
    for suffix in (".csv", ".parquet"):
        for name, mutate, column, row in TABLE_MUTATIONS:
            if suffix == ".parquet" and name in ("text_in_x", "text_in_frame", "bad_pred_valid",
                                                 "null_track"):
                # Parquet columns have one type: write these as typed-wrong whole columns below.
                continue
            case_name = f"table_{name}{suffix.replace('.', '_')}"
            path = _write(mutate(clean_observations()), root / case_name / f"obs{suffix}")
            fragments = [str(path)] + ([f"column '{column}'"] if column else []) + (
                [f"row {row}"] if row else [])
            for command in ("run", "verify"):
                flag = "--data" if command == "run" else "--observations"
                out = root / case_name / f"out-{command}"
                cases.append(Case(f"{case_name}_{command}", [command, flag, str(path), "--out", str(out)],
                                  2, fragments, out))
    typed = {
        "x_as_text": ("x_um", lambda df: df.assign(x_um=df["x_um"].astype(str).where(df.index != 2, "n/a"))),
        "frame_as_text": ("frame", lambda df: df.assign(frame=df["frame"].astype(str).where(df.index != 4, "late"))),
        "x_as_bool": ("x_um", lambda df: df.assign(x_um=df["x_um"] > 5)),
        "track_as_bool": ("track", lambda df: df.assign(track=df["track"] > 1)),
        "pred_valid_as_text": ("pred_valid", lambda df: df.assign(pred_valid="yes?")),
    }
    for name, (column, mutate) in typed.items():
        case_name = f"table_{name}_parquet"
        path = _write(mutate(clean_observations()), root / case_name / "obs.parquet")
        out = root / case_name / "out"
        cases.append(Case(case_name, ["run", "--data", str(path), "--out", str(out)], 2,
                          [str(path), f"column '{column}'"], out))
    return cases


def _raw(root: Path, case_name: str, filename: str, data: bytes) -> Path:
    path = root / case_name / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@generator
def file_cases(root: Path) -> list[Case]:
    """Whole-file problems: empty, header only, delimiter, encoding, duplicated header, not Parquet."""
    clean = clean_observations().to_csv(index=False)
    header = clean.splitlines()[0]
    specs = {
        "empty_file": ("obs.csv", b"", None),
        "header_only": ("obs.csv", (header + "\n").encode(), None),
        "semicolon_delimiter": ("obs.csv", clean.replace(",", ";").encode(), "the header holds ';'"),
        "latin1_bytes": ("obs.csv", (header + "\nr\xe9,0,0,0,0,0,0,100,True\n").encode("latin-1"), None),
        "duplicated_header": ("obs.csv", (header + ",frame\n" + "\n".join(
            line + ",0" for line in clean.splitlines()[1:]) + "\n").encode(), "frame"),
        # two BOMs: utf-8-sig drops one, the column was '\ufeffrecording' (one recording 'default')
        "two_boms": ("obs.csv", ("\ufeff\ufeff" + clean).encode(), "recording"),
        "garbage_parquet": ("obs.parquet", b"PAR1 this is not parquet", None),
        "unknown_extension": ("obs.xlsx", clean.encode(), None),
        "ragged_csv_row": ("obs.csv", (clean + "r1,1,2\n").encode(), None),
        "long_csv_row": ("obs.csv", (clean + "r1,1,2,3,4,5,6,7,8,9\n").encode(),
                         f"row {len(clean.splitlines())} (line {len(clean.splitlines()) + 1}): "
                         "10 cells where the header has 9"),
        "binary_csv": ("obs.csv", bytes(range(256)) * 4, None),
        "unclosed_quote": ("obs.csv", (clean + 'r1,"11,0,0,0,0,0,100,True\n').encode(), None),
    }
    cases = []
    for name, (filename, data, named) in specs.items():  # named: a column, or the words
        path = _raw(root, f"file_{name}", filename, data)
        out = root / f"file_{name}" / "out"
        column = f"column '{named}'" if named and " " not in named else named
        fragments = [str(path)] + ([column] if named else [])
        cases.append(Case(f"file_{name}", ["run", "--data", str(path), "--out", str(out)], 2,
                          fragments, out))
    # .txt and extensionless files are read by their content; a failure says how it was read
    for name, filename, data, fragment in [
        ("garbage_parquet_txt", "obs.txt", b"PAR1 this is not parquet",
         "(read as Parquet: the file starts with the bytes PAR1)"),
        ("latin1_no_extension", "obs", (header + "\nr\xe9,0,0,0,0,0,0,100,True\n")
         .encode("latin-1"), "(read as CSV: the file does not start with Parquet's PAR1"),
        ("tsv_txt_duplicated_header", "obs.txt", (header.replace(",", "\t") + "\tframe\n")
         .encode(), "(read as TSV: the file does not start with Parquet's PAR1"),
    ]:
        path = _raw(root, f"file_{name}", filename, data)
        out = root / f"file_{name}" / "out"
        cases.append(Case(f"file_{name}", ["run", "--data", str(path), "--out", str(out)], 2,
                          [str(path), fragment], out))
    # a header line over io.tabular.MAX_HEADER_LINE (64 KiB) is refused before pandas reads it
    # (10**6 columns asked it for gigabytes)
    wide = _raw(root, "file_header_of_20000_columns", "obs.csv", (header + "".join(
        f",c{i}" for i in range(2 * 10 ** 4)) + "\n" + clean.split("\n", 1)[1]).encode())
    cases.append(Case("file_header_of_20000_columns", ["run", "--data", str(wide), "--out",
                                                       str(wide.parent / "out")], 2,
                      [str(wide), "the header line is longer than 65536 characters"],
                      wide.parent / "out"))
    # a Parquet binary pred_valid column, UTF-8 but for row 3 (before: row 1 was named)
    flags = [b"true"] * 48
    flags[2] = b"\xff"
    path = _write(clean_observations().assign(pred_valid=flags),
                  root / "file_binary_flag" / "obs.parquet")
    cases.append(Case("file_binary_flag", ["run", "--data", str(path), "--out",
                                           str(root / "file_binary_flag" / "out")], 2,
                      [str(path), "column 'pred_valid', row 3", "not UTF-8"]))
    missing = root / "file_missing" / "nope.csv"
    cases.append(Case("file_missing", ["verify", "--observations", str(missing), "--out",
                                       str(root / "file_missing" / "out")], 2, ["nope.csv"]))
    empty_dir = root / "folder_without_table"
    empty_dir.mkdir(parents=True, exist_ok=True)
    cases.append(Case("folder_without_table", ["run", "--data", str(empty_dir), "--out",
                                               str(root / "out_folder_without_table")], 2,
                      [str(empty_dir), "observations"]))
    return cases


@generator
def recording_table_cases(root: Path) -> list[Case]:
    """A folder whose recordings.csv is missing a column, a recording, or repeats one."""
    variants = {
        "unknown_recording": (pd.DataFrame({"recording": ["other"], "animal_id": ["a"],
                                            "provenance_group": ["g"]}), "recording"),
        "missing_animal_id": (pd.DataFrame({"recording": ["r1"], "provenance_group": ["g"]}), "animal_id"),
        "duplicate_recording": (pd.DataFrame({"recording": ["r1", "r1"], "animal_id": ["a", "b"],
                                              "provenance_group": ["g", "g"]}), "recording"),
    }
    cases = []
    for name, (recordings, column) in variants.items():
        folder = root / f"recordings_{name}"
        _write(clean_observations(), folder / "observations.csv")
        path = _write(recordings, folder / "recordings.csv")
        out = root / f"recordings_{name}_out"
        cases.append(Case(f"recordings_{name}", ["run", "--data", str(folder), "--out", str(out)], 2,
                          [str(path), f"column '{column}'"], out))
    return cases


CONFIG_CASES = {
    "unknown_key": ("[run]\nthreshhold_um = 5\n", "threshhold_um"),
    "unknown_section": ("[runn]\nseed = 1\n", "runn"),
    "seed_text": ("[run]\nseed = 'abc'\n", "seed"),
    "seed_float": ("[run]\nseed = 1.5\n", "seed"),
    "start_text": ("[run]\nstart = 'early'\n", "start"),
    "threshold_negative": ("[run]\nthreshold_um = -5.0\n", "threshold_um"),
    "threshold_zero": ("[run]\nthreshold_um = 0\n", "threshold_um"),
    "threshold_bool": ("[run]\nthreshold_um = true\n", "threshold_um"),
    "zero_distance_negative": ("[run]\nzero_distance_um = -1\n", "zero_distance_um"),
    "start_zero": ("[run]\nstart = 0\n", "start"),
    "start_after_recovery": ("[run]\nstart = 800\nrecovery_end = 700\n", "recovery_end"),
    "share_above_one": ("[run]\nfalsification_share = 1.5\n", "falsification_share"),
    "unknown_condition": ("[run]\nconditions = ['control', 'teleport']\n", "teleport"),
    "conditions_not_list": ("[run]\nconditions = 'control'\n", "conditions"),
    "unknown_verifier": ("[run]\nverifier = 'oracle'\n", "oracle"),
    "specimen_unknown_motion": ("[specimen]\nmotion = 'wild'\n", "motion"),
    "specimen_zero_frames": ("[specimen]\nframes = 0\n", "frames"),
    "specimen_unknown_key": ("[specimen]\nworms = 3\n", "worms"),
    "not_toml": ("[run\nseed = 1\n", "TOML"),
    "run_not_table": ("run = 3\n", "[run]"),
    "binary": ("\x00\x01\x02", "TOML"),
}


@generator
def config_cases(root: Path) -> list[Case]:
    cases = []
    for name, (text, fragment) in CONFIG_CASES.items():
        path = _raw(root, f"config_{name}", "run.toml", text.encode())
        out = root / f"config_{name}" / "out"
        cases.append(Case(f"config_{name}", ["run", "--config", str(path), "--out", str(out)], 2,
                          [fragment], out))
    short = _write(clean_observations(frames=12), root / "config_start_beyond_data" / "obs.csv")
    cases.append(Case("config_start_beyond_data",
                      ["verify", "--observations", str(short), "--start", "50", "--recovery-end", "60",
                       "--out", str(root / "config_start_beyond_data" / "out")], 2,
                      ["too short", "r1"], root / "config_start_beyond_data" / "out"))
    return cases


def _main(argv: list[str]) -> None:  # pragma: no cover - a look at the corpus
    counts: dict[str, int] = {}
    cases = build_corpus(Path(argv[0]), counts)
    if "--summary" in argv:
        for name, n in counts.items():
            print(f"{n:5d}  {name}")
        print(f"{len(cases):5d}  total")
        return
    for case in cases:
        print(case.code, case.name, " ".join(case.args))


if __name__ == "__main__":  # pragma: no cover
    # Through the package module, so that the reader modules register with the same list.
    importlib.import_module("tests.corpus.make_corpus")._main(sys.argv[1:])
