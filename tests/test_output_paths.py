"""Outputs stay inside --out and never overlap an input (issue 18, items 2 and 3).

Every refusal is checked for its exit code (2), a message naming both paths (or the
offending recording), and inputs byte-identical afterwards (every file of the input tree
hashed before and after; nothing added or removed).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.corpus.make_corpus import clean_observations
from trackverify.cli.app import main
from trackverify.conversion import synthetic as C
from trackverify.errors import InputError
from trackverify.io.paths import check_out_dir, check_out_file, child_path, child_paths, safe_name
from trackverify.stages import synthetic as S


def tree(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` and the list of every folder."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest()
                                         if p.is_file() else "dir")
            for p in sorted(folder.rglob("*"))}


def refused(capsys, args: list) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


# ---- input-derived file names (item 2) ---------------------------------------------------

@pytest.mark.parametrize("name, problem", [
    ("", "empty"), ("   ", "empty"), (".", "not a file name"), ("..", "not a file name"),
    ("../ESCAPED", "path separator"), ("/tmp/ESCAPED", "path separator"),
    ("a/b", "path separator"), ("..\\..\\x", "path separator"), ("C:evil", "':'"),
    ("C:\\Windows\\x", "path separator"), ("rec\x00.nwb", "NUL or control"),
    ("line\nbreak", "NUL or control"), ("CON", "reserved"), ("nul.txt", "reserved"),
    ("com1", "reserved"), ("LPT9.nwb", "reserved"), ("trailing.", "dot or a space"),
    ("trailing ", "dot or a space"), ("x" * 252, "longer than 255 bytes"),
    *[(f"a{c}b", "not allowed in a file name on Windows") for c in '<>"|?*'],
    # characters that do not show as themselves: 'x\u202eavon.exe' shows as 'xexe.nova'
    ("x\u202eavon.exe", r"U\+202E \(RIGHT-TO-LEFT OVERRIDE\)"),
    ("rec\u200b1", r"U\+200B \(ZERO WIDTH SPACE\)"), ("a\u00adb", r"U\+00AD \(SOFT HYPHEN\)"),
    ("c1\x85x", r"U\+0085 \(unnamed\)"), ("a\u2028b", r"U\+2028 \(LINE SEPARATOR\)"),
    ("a\ufeffb", r"U\+FEFF \(ZERO WIDTH NO-BREAK SPACE\)"),
])
def test_unsafe_names_are_refused(name, problem):
    with pytest.raises(InputError, match=problem) as info:
        safe_name(name, ".nwb", source="obs.parquet")
    assert repr(name) in str(info.value) and "obs.parquet" in str(info.value)


@pytest.mark.parametrize("name", ["r1", "worm 3", "exp_1", "animal-07.day2", "é-recording",
                                  "console", "CONx", "x" * 251, "線虫-1", "worm\u00a0b",
                                  "ε\u0301"])
def test_plain_names_are_kept(name, tmp_path):
    assert child_path(tmp_path, name, ".nwb") == tmp_path / f"{name}.nwb"


def test_a_symlink_inside_out_that_leads_elsewhere_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere" / "r1.nwb", tmp_path / "out" / "r1.nwb")
    with pytest.raises(InputError, match="resolves outside the output folder"):
        child_path(tmp_path / "out", "r1", ".nwb")


def test_names_that_share_a_file_case_insensitively_are_refused(tmp_path):
    with pytest.raises(InputError, match="'Worm1' and 'worm1' would write the same file"):
        child_paths(tmp_path, ["Worm1", "r2", "worm1"], ".nwb")


def test_names_that_share_a_file_by_unicode_normal_form_are_refused(tmp_path):
    """macOS file systems do not tell 'caf\u00e9' (one code point) from 'cafe\u0301' (e plus
    a combining accent): the second file would replace the first. The message writes both
    in ASCII escapes, since they print alike."""
    with pytest.raises(InputError, match=r"'caf\\xe9' and 'cafe\\u0301' would write the same"):
        child_paths(tmp_path, ["caf\u00e9", "r2", "cafe\u0301"], ".nwb")


def test_a_name_of_255_bytes_is_written(tmp_path, capsys):
    """The temporary file beside it (``.<name>.<random>.tmp``) keeps within 255 bytes too;
    it was 'File name too long' (the net) for a recording of 251 characters."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    table = clean_observations()
    table["recording"] = np.where(np.arange(len(table)) < 8, "fine", "x" * 251)
    table.to_parquet(inputs / "obs.parquet", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(inputs / "obs.parquet"), "--to", "nwb", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fine.nwb", "x" * 251 + ".nwb"]


@pytest.mark.parametrize("recording", ["../ESCAPED", "/ABSOLUTE", "sub/dir", "..", "NUL"])
def test_convert_to_nwb_never_writes_outside_out(recording, tmp_path, capsys):
    recording = recording.replace("/ABSOLUTE", str(tmp_path / "ABSOLUTE"))
    inputs = tmp_path / "in"
    inputs.mkdir()
    table = clean_observations()
    table["recording"] = np.where(np.arange(len(table)) < 8, "fine", recording)
    table.to_parquet(inputs / "obs.parquet", index=False)
    before = tree(tmp_path)
    err = refused(capsys, ["convert", inputs / "obs.parquet", "--to", "nwb", "--out",
                           tmp_path / "out"])
    assert repr(recording) in err and str(inputs / "obs.parquet") in err
    assert tree(tmp_path) == before  # nothing written anywhere, not even the fine recording


# ---- --out against the inputs (item 3) -----------------------------------------------------

def test_check_out_dir_relations(tmp_path):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "obs.csv").write_text("x\n")
    for out, relation in [(data, "is the input"), (data / "sub" / "out", "lies inside the input"),
                          (tmp_path, "contains the input"), (data / "obs.csv", "regular file"),
                          (data / "obs.csv" / "out", "lies under the regular file")]:
        with pytest.raises(InputError, match=relation):
            check_out_dir(out, [data])
    check_out_dir(tmp_path / "results", [data, None])  # a sibling is fine
    os.symlink(data, tmp_path / "link")
    with pytest.raises(InputError, match="is the input"):  # real paths are compared
        check_out_dir(tmp_path / "link", [data])
    with pytest.raises(InputError, match="lies inside the input"):
        check_out_dir(tmp_path / "results", [tmp_path / "link" / ".." / "link" / ".."])
    with pytest.raises(InputError, match="is the input"):
        check_out_file(data / "obs.csv", [data / "obs.csv"])
    with pytest.raises(InputError, match="is a folder"):
        check_out_file(data / "sub", [])
    check_out_file(tmp_path / "partitions.json", [data / "obs.csv"])


def _specimen(folder: Path) -> Path:
    from trackverify.synth.specimen import SpecimenConfig
    from trackverify.synth.write import write_specimen

    write_specimen(SpecimenConfig(animals=1, frames=20, neurons=6), folder)
    return folder


def _stage_world(root: Path) -> dict[str, Path]:
    t = S.fly_experiment(7, n_flies=2, n_frames=40)
    for role in ("sub", "ref", "gt"):
        S.write_pickle(root / role / "exp_1" / "trx.pkl", S.file_trx(t, mm=False))
    return {role: root / role for role in ("sub", "ref", "gt")}


def _conversion_world(root: Path) -> tuple[Path, Path]:
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=3, n_neurons=3, n_bins=4))
    submission = C.write_submission(root / "submission", data)
    (root / "reference").mkdir()
    (root / "reference" / "converted_data.pkl").write_bytes(pickle.dumps(data, protocol=4))
    return submission, root / "reference" / "converted_data.pkl"


def _cases(root: Path) -> dict[str, tuple[list, Path, Path]]:
    """{name: (command line, the input it overlaps, the --out given)}."""
    spec = _specimen(root / "specimen")
    obs = spec / "observations.parquet"
    config = root / "config" / "run.toml"
    config.parent.mkdir()
    config.write_text("[run]\nstart = 4\nrecovery_end = 8\n")
    partitions = root / "partitions" / "partitions.json"
    partitions.parent.mkdir()
    partitions.write_text("{}\n")
    stage = _stage_world(root / "stage")
    submission, reference = _conversion_world(root / "conversion")
    andi = root / "andi"
    for part in ("ref", "res"):
        (andi / part / "track_1" / "exp_0").mkdir(parents=True)
        (andi / part / "track_1" / "exp_0" / "fov_0.txt").write_text("0,1,2\n")
    pairs = root / "pairs"
    (pairs / "example_1").mkdir(parents=True)
    np.save(pairs / "example_1" / "pts_gt.npy", np.zeros((4, 3)))
    ratings = root / "ratings.csv"
    pd.DataFrame({"judge_rating": ["ok"], "manual_rating": ["ok"]}).to_csv(ratings, index=False)
    nwb = root / "nwb"
    with pytest.raises(SystemExit) as converted:
        main(["convert", str(obs), "--to", "nwb", "--out", str(nwb)])
    assert converted.value.code == 0
    os.symlink(spec, root / "link-to-specimen")
    return {
        "run --data D --out D": (["run", "--data", spec, "--out", spec], spec, spec),
        "run --out a symbolic link to --data": (["run", "--data", spec, "--out",
                                                 root / "link-to-specimen"], spec,
                                                root / "link-to-specimen"),
        "run --out inside --data": (["run", "--data", spec, "--out", spec / "out"], spec,
                                    spec / "out"),
        "run --out contains --config": (["run", "--config", config, "--out", config.parent],
                                        config, config.parent),
        "run --out contains --partitions": (["run", "--data", obs, "--partitions", partitions,
                                             "--out", partitions.parent], partitions,
                                            partitions.parent),
        "verify": (["verify", "--observations", obs, "--out", spec], obs, spec),
        "evaluate": (["evaluate", "--reference", obs, "--predictions", obs, "--out", spec],
                     obs, spec),
        "convert to parquet into the input folder": (
            ["convert", obs, "--to", "parquet", "--out", spec], obs, spec),
        "convert to nwb onto its own input": (["convert", nwb, "--to", "nwb", "--out", nwb],
                                              nwb, nwb),
        "convert to one nwb file that is the input": (
            ["convert", next(nwb.glob("*.nwb")), "--to", "nwb", "--out",
             next(nwb.glob("*.nwb"))], next(nwb.glob("*.nwb")), next(nwb.glob("*.nwb"))),
        "stage submission": (["stage", "body-tracking", "--submission", stage["sub"],
                              "--reference", stage["ref"], "--ground-truth", stage["gt"],
                              "--out", stage["sub"]], stage["sub"], stage["sub"]),
        "stage reference": (["stage", "body-tracking", "--submission", stage["sub"],
                             "--reference", stage["ref"], "--ground-truth", stage["gt"],
                             "--out", stage["ref"] / "exp_1"], stage["ref"],
                            stage["ref"] / "exp_1"),
        "stage ground truth": (["stage", "body-tracking", "--submission", stage["sub"],
                                "--reference", stage["ref"], "--ground-truth", stage["gt"],
                                "--out", stage["gt"] / "exp_1"], stage["gt"],
                               stage["gt"] / "exp_1"),
        "conversion check into the submission": (
            ["conversion", "check", submission, "--out", submission], submission, submission),
        "conversion check over the reference": (
            ["conversion", "check", submission, "--reference", reference, "--out",
             reference.parent], reference, reference.parent),
        "conversion decode onto its data": (
            ["conversion", "decode", reference, "--out", reference], reference, reference),
        "conversion judge-agreement onto its ratings": (
            ["conversion", "judge-agreement", ratings, "--out", ratings], ratings, ratings),
        "andi score into res": (["andi", "score", andi, andi / "res" / "scores"],
                                andi / "res", andi / "res" / "scores"),
        "andi score into ref": (["andi", "score", andi, andi / "ref"], andi / "ref", andi / "ref"),
        "evidence --pairs P --out P": (["evidence", "--pairs", pairs, "--levels", "", "--out",
                                        pairs], pairs, pairs),
        "split --out is --recordings": (["split", "--recordings", spec / "recordings.csv",
                                         "--out", spec / "recordings.csv"],
                                        spec / "recordings.csv", spec / "recordings.csv"),
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("overlap")
    return root, _cases(root)


CASE_NAMES = ["run --data D --out D", "run --out a symbolic link to --data",
              "run --out inside --data", "run --out contains --config",
              "run --out contains --partitions", "verify", "evaluate",
              "convert to parquet into the input folder", "convert to nwb onto its own input",
              "convert to one nwb file that is the input", "stage submission",
              "stage reference", "stage ground truth", "conversion check into the submission",
              "conversion check over the reference", "conversion decode onto its data",
              "conversion judge-agreement onto its ratings", "andi score into res",
              "andi score into ref", "evidence --pairs P --out P", "split --out is --recordings"]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_out_overlapping_an_input_is_refused_and_inputs_are_untouched(name, world, capsys):
    root, cases = world
    args, overlapped, out = cases[name]
    before = tree(root)
    err = refused(capsys, args)
    assert f"--out {out}" in err and str(overlapped) in err, err
    assert tree(root) == before


def test_every_case_is_listed(world):
    assert sorted(world[1]) == sorted(CASE_NAMES)


@pytest.mark.parametrize("command", [
    ["synth"], ["run"], ["evaluate", "--reference", "{obs}", "--predictions", "{obs}"],
    ["conversion", "check", "{sub}"], ["evidence", "--levels", ""]])
def test_out_under_a_regular_file_is_refused(command, tmp_path, capsys):
    obs = _specimen(tmp_path / "spec") / "observations.parquet"
    submission, _ = _conversion_world(tmp_path / "conv")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    args = [a.format(obs=obs, sub=submission) for a in command]
    before = tree(tmp_path)
    err = refused(capsys, [*args, "--out", blocker / "results"])
    assert f"--out {blocker / 'results'} lies under the regular file {blocker}" in err
    with pytest.raises(SystemExit) as exit_info:  # click itself refuses a file as a folder
        main([*args, "--out", str(blocker)])
    assert exit_info.value.code == 2 and "is a file" in capsys.readouterr().err
    assert tree(tmp_path) == before


def test_run_model_refuses_an_experiment_name_that_cannot_name_an_output(tmp_path, capsys):
    world = _stage_world(tmp_path)
    (world["gt"] / "exp_1").rename(world["gt"] / "exp_1:stream")
    for name in ("model.py", "model.pkl"):
        (world["sub"] / name).write_text("")
    before = tree(tmp_path)
    err = refused(capsys, ["stage", "walking", "--run-model", "--submission", world["sub"],
                           "--reference", world["ref"], "--ground-truth", world["gt"],
                           "--out", tmp_path / "out"])
    assert "experiment 'exp_1:stream'" in err and str(world["gt"]) in err
    assert tree(tmp_path) == before
