"""Settings out of range and inputs of the wrong kind: each refusal is one line naming the
option (or the TOML file and key), or the file and row.

Click's own errors (an option out of its range, a missing argument) were three lines
(usage, hint, error); settings at the int64 edge were accepted; a semicolon-separated CSV
was a missing-columns error; a row with one cell too many named pandas' line, not the row.
"""

from __future__ import annotations

from pathlib import Path

from tests.corpus.make_corpus import Case, _raw, _write, clean_observations, generator

INT64_PAST = str(2**63)  # 9223372036854775808: one past int64's largest


def _observations(root: Path, name: str, frames: int = 12) -> Path:
    return _write(clean_observations(frames=frames), root / name / "obs.csv")


@generator
def setting_cases(root: Path) -> list[Case]:
    """Options out of their range on the command line and in a TOML file."""
    cases = []
    for name, args, fragments in (
            ("jobs_zero", ["--jobs", "0"], ["'--jobs': 0 is not in the range 1<=x<=1000"]),
            ("jobs_negative", ["--jobs", "-1"], ["'--jobs': -1 is not in the range"]),
            ("jobs_million", ["--jobs", str(10**6)], ["'--jobs': 1000000 is not in the range"]),
            ("repeats_past_bound", ["--repeats", "51"], ["repeats must be between 1 and 50"]),
            ("repeats_old_bound", ["--repeats", "1000"], ["repeats must be between 1 and 50"]),
            ("seed_past_int64", ["--seed", INT64_PAST], ["--seed must be a 64-bit integer",
                                                        INT64_PAST]),
            ("start_past_int64", ["--start", INT64_PAST], ["--start must be a 64-bit integer"]),
            ("seed_and_repeats_past_int64", ["--seed", str(2**63 - 1), "--repeats", "2"],
             ["seed + repeats - 1 must be at most 2^63 - 1"])):
        obs = _observations(root, f"setting_{name}")
        out = obs.parent / "out"
        cases.append(Case(f"setting_{name}", ["run", "--data", str(obs), *args, "--out", str(out)],
                          2, fragments, out))
    for name, text, fragments in (
            ("toml_seed_past_int64", f"[run]\nseed = {INT64_PAST}\n", ["'seed' must be a 64-bit"]),
            ("toml_recovery_end_past_int64", f"[run]\nrecovery_end = {INT64_PAST}\n",
             ["'recovery_end' must be a 64-bit integer"]),
            ("toml_negative_int64_edge", f"[run]\nstart = -{INT64_PAST}1\n",
             ["'start' must be a 64-bit integer"])):
        obs = _observations(root, f"setting_{name}")
        config = _raw(root, f"setting_{name}", "run.toml", text.encode())
        out = obs.parent / "out"
        cases.append(Case(f"setting_{name}", ["verify", "--observations", str(obs), "--config",
                                              str(config), "--out", str(out)], 2,
                          [str(config), "[run]", *fragments], out))
    # a recording shorter than recovery_end (set in the file): the data file and the key
    obs = _observations(root, "setting_toml_recovery_end_past_recording")
    config = _raw(root, "setting_toml_recovery_end_past_recording", "run.toml",
                  b"[run]\nstart = 3\nrecovery_end = 100\n")
    cases.append(Case("setting_toml_recovery_end_past_recording",
                      ["verify", "--observations", str(obs), "--config", str(config),
                       "--out", str(obs.parent / "out")], 2,
                      [str(obs), "needs more than recovery_end = 100"], obs.parent / "out"))
    for name, args, fragments in (
            ("synth_seed_past_int64", ["synth", "--seed", INT64_PAST],
             ["'--seed': 9223372036854775808 is not in the range", "trackverify synth --help"]),
            ("synth_seed_negative", ["synth", "--seed", "-1"], ["'--seed': -1 is not in the range"]),
            ("evidence_draws_zero", ["evidence", "--draws", "0"], ["'--draws': 0 is not in"]),
            ("audit_missing_tracks", ["audit"], ["Missing argument 'TRACKS...'"])):
        out = root / f"setting_{name}" / "out"
        cases.append(Case(f"setting_{name}", [*args, "--out", str(out)], 2, fragments, out))
    for name, setting, fragments in (  # refused before any file of the stage is read
            ("stage_set_unknown", "alpha=2", ["--set alpha: unknown setting 'alpha'"]),
            ("stage_set_nan", "delta_p=nan", ["--set delta_p: cannot use nan (not a number)"])):
        folder = root / f"setting_{name}"
        (folder / "submission").mkdir(parents=True, exist_ok=True)
        (folder / "reference").mkdir(exist_ok=True)
        cases.append(Case(f"setting_{name}", ["stage", "stats", "--submission",
                                              str(folder / "submission"), "--reference",
                                              str(folder / "reference"), "--set", setting,
                                              "--out", str(folder / "out")], 2, fragments,
                          folder / "out"))
    return cases


@generator
def message_file_cases(root: Path) -> list[Case]:
    """CSV rows and HDF5 files of the wrong kind, and an --out inside a submission."""
    clean = clean_observations().to_csv(index=False)
    lines = clean.splitlines()
    cells = lines[5].split(",")
    cells[4] = "1,234.5"  # x_um of data row 5, its thousands separator unquoted
    cases = []
    for name, text, fragments in (
            ("thousands_separator", "\n".join([*lines[:5], ",".join(cells), *lines[6:]]) + "\n",
             ["row 5 (line 6): 10 cells where the header has 9", "thousands separator"]),
            ("semicolons_decimal_commas", clean.replace(",", ";").replace(".0", ",0"),
             ["the header holds ';' -- save as comma-separated"]),
            ("ragged_after_blank_line", "\n".join([*lines[:3], "", lines[3] + ",7", *lines[4:]])
             + "\n", ["row 3 (line 5): 10 cells where the header has 9"])):
        path = _raw(root, f"message_{name}", "obs.csv", text.encode())
        out = path.parent / "out"
        cases.append(Case(f"message_{name}", ["verify", "--observations", str(path), "--out",
                                              str(out)], 2, [str(path), *fragments], out))
    trackpy = "frame,particle,x,y\n" + "".join(f"{t},{i},{10.0 * i},{t * 0.5}\n"
                                                  for t in range(3) for i in range(3))
    rows = trackpy.splitlines()
    for name, text, fragments in (
            ("trackpy_semicolons", trackpy.replace(",", ";"), ["the header holds ';'"]),
            ("trackpy_thousands_separator", "\n".join([*rows[:4], "1,0,1,234.5,0.5", *rows[5:]])
             + "\n", ["row 4: 5 cells where the header has 4", "thousands separator"])):
        path = _raw(root, f"message_{name}", "tracks.csv", text.encode())
        out = path.parent / "out"
        cases.append(Case(f"message_{name}", ["audit", str(path), "--format", "trackpy",
                                              "--pixel-size", "1", "--out", str(out)], 2,
                          [str(path), *fragments], out))
    import h5py

    for name, filename, args, fragments in (
            ("hdf5_without_groups_audit", "tracks.h5", ["audit"],
             ["not the layout of btrack", "nor of zephir"]),
            ("hdf5_without_groups_run", "tracks.hdf5", ["run", "--data"],
             ["not the layout of btrack"]),
            ("nwb_without_groups", "rec.nwb", ["convert"],
             ["an HDF5 file, not NWB: no nwb_version attribute"])):
        path = root / f"message_{name}" / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        with h5py.File(path, "w") as handle:
            handle["values"] = [1, 2, 3]
        out = path.parent / "out"
        more = ["--to", "parquet"] if args == ["convert"] else []
        cases.append(Case(f"message_{name}", [*args, str(path), *more, "--out", str(out)], 2,
                          [str(path), *fragments], out))
    from trackverify.conversion.synthetic import make_dataset, write_submission

    submission = write_submission(root / "message_conversion_out" / "submission", make_dataset())
    for name, out in (("inside", submission / "out"), ("equal", submission)):
        cases.append(Case(f"message_conversion_out_{name}_submission",
                          ["conversion", "check", str(submission), "--out", str(out)], 2,
                          [f"--out {out}", str(submission), "write outputs elsewhere"]))
    return cases


@generator
def audit_bound_cases(root: Path) -> list[Case]:
    """Audits past their stated bounds, refused before any recording is scored: more
    recordings than one audit takes (10^5 one-row recordings ran past an hour), and two
    frames of 5,001 identities, whose reference check laid out every pair (10^4: 4.9 GB)."""
    import numpy as np
    import pandas as pd

    from trackverify.audit.core import MAX_RECORDINGS

    n = MAX_RECORDINGS + 1
    many = _write(pd.DataFrame({"recording": [f"r{i}" for i in range(n)], "frame": 0,
                                "pred_id": 1, "x_um": np.arange(n, dtype=float), "y_um": 0.0}),
                  root / "bound_audit_recordings" / "tracks.csv")
    rng = np.random.default_rng(5)
    points = rng.uniform(0, 2000, (5001, 2))
    frames = pd.DataFrame({"frame": np.repeat([0, 1], 5001), "x_um": np.r_[points[:, 0],
                                                                          points[:, 0] + 0.5],
                           "y_um": np.r_[points[:, 1], points[:, 1]]})
    ids = np.tile(np.arange(5001), 2)
    crowded = _write(frames.assign(pred_id=ids), root / "bound_crowded_frames" / "tracks.csv")
    reference = _write(frames.assign(track=ids), root / "bound_crowded_frames" / "reference.csv")
    layout = "has 5001 identities in frame "
    cases = []
    for name, args, path, fragments in (
            ("audit_recordings", ["audit", "--threshold-um", "1"], many,
             ["column 'recording'", f"{n} recordings, more than the {MAX_RECORDINGS}"]),
            ("audit_crowded_frames", ["audit", "--verifier", "fixed_distance", "--threshold-um",
                                      "1"], crowded, [layout, "(5001 x 5001 x 2)"]),
            ("check_reference_crowded_frames", ["check-reference"], reference, [layout])):
        out = path.parent / f"out_{name}"
        cases.append(Case(f"bound_{name}", [*args, str(path), "--out", str(out)], 2,
                          [str(path), *fragments], out))
    return cases
