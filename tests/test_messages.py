"""Messages name the input: the file, and rows of the file (not of one recording)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.corpus.make_corpus import clean_observations
from trackverify.cli import main
from trackverify.errors import InputError
from trackverify.io.tabular import read_table


def _refused(capsys, args) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_too_short_recording_names_the_file(tmp_path, capsys):
    path = tmp_path / "obs.csv"
    clean_observations(frames=12).to_csv(path, index=False)
    err = _refused(capsys, ["run", "--data", str(path), "--out", str(tmp_path / "out")])
    assert f"{path}: recording 'r1' spans 12 frame numbers (0-11; 12 of them present), too short" in err


def test_unknown_verifier_names_the_config_file(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text("[run]\nverifier = 'oracle'\n", encoding="utf-8")
    err = _refused(capsys, ["run", "--config", str(config), "--out", str(tmp_path / "out")])
    assert str(config) in err and "unknown verifier 'oracle'" in err


@pytest.mark.parametrize("setting, key", [
    ("verifier = 'nosuch.module:Class'", "verifier"),
    ("compare_verifiers = ['fixed_distance', 'nosuch.module:Class']", "compare_verifiers"),
    ("verifier = 'trackverify.verifiers:NoSuchClass'", "verifier"),
])
def test_a_verifier_that_cannot_be_loaded_names_the_config_file_and_key(tmp_path, capsys,
                                                                       setting, key):
    config = tmp_path / "run.toml"
    config.write_text(f"[run]\n{setting}\n", encoding="utf-8")
    out = tmp_path / "out"
    err = _refused(capsys, ["run", "--config", str(config), "--out", str(out)])
    spec = setting.split("'")[-2]
    assert err.startswith(f"trackverify: error: {config} [run]: '{key}': cannot load verifier '{spec}': "), err
    assert not out.exists()


@pytest.mark.parametrize("spec, message", [
    ("os:getenv", "cannot construct verifier 'os:getenv': "),  # needs an argument the run cannot give
    ("collections:OrderedDict", "verifier 'collections:OrderedDict' must have name, evidence"),
])
def test_a_verifier_that_cannot_be_built_names_the_config_file_and_key(tmp_path, capsys, spec,
                                                                      message):
    config = tmp_path / "run.toml"
    config.write_text(f"[run]\nverifier = '{spec}'\n", encoding="utf-8")
    out = tmp_path / "out"
    err = _refused(capsys, ["run", "--config", str(config), "--out", str(out)])
    assert err.startswith(f"trackverify: error: {config} [run]: 'verifier': {message}"), err
    assert not out.exists()


def test_a_verifier_flag_that_cannot_be_loaded_names_the_flag_not_the_file(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text("[run]\nverifier = 'nosuch.module:Class'\n", encoding="utf-8")
    err = _refused(capsys, ["run", "--config", str(config), "--verifier", "nosuch_flag:X",
                            "--out", str(tmp_path / "out")])
    assert err.startswith("trackverify: error: command line: 'verifier': cannot load verifier "
                          "'nosuch_flag:X': No module named 'nosuch_flag'"), err


BIG = "1" + "0" * 400  # beyond the float range


@pytest.mark.parametrize("setting, message", [
    (f"[run]\nthreshold_um = {BIG}", "[run]: 'threshold_um' must be a number within the float "
                                      "range, got an integer of 401 digits"),
    ("[run]\nrepeats = 1001", "repeats must be between 1 and 1000, got 1001"),
    ("[specimen]\nneurons = 190", "neurons must be between 2 and 189 (the head ganglion's "
                                   "neurons), got 190"),
    ("[specimen]\nneurons = 1", "neurons must be between 2 and 189"),
    # 1e9 animals x 1,000 frames x 189 neurons: refused before anything is generated
    ("[specimen]\nanimals = 1000000000", "animals x frames x neurons = 1.89e+14 observations "
                                          "exceeds the specimen's limit of 5e+07"),
    ("[specimen]\nframes = 264551\nanimals = 1", "= 5e+07 observations exceeds"),
])
def test_settings_beyond_what_a_run_can_do_are_refused_at_once(tmp_path, capsys, setting,
                                                                message):
    config = tmp_path / "run.toml"
    config.write_text(setting + "\n", encoding="utf-8")
    out = tmp_path / "out"
    err = _refused(capsys, ["run", "--config", str(config), "--out", str(out)])
    assert str(config) in err and message in err, err
    assert not out.exists()


def test_row_numbers_count_rows_of_the_file(tmp_path, capsys):
    first = clean_observations(frames=12, tracks=4)  # 48 rows of r1
    second = first.assign(recording="r2")
    second.loc[5, "pred_id"] = second.loc[4, "pred_id"]  # r2's 6th row repeats its 5th's id
    path = tmp_path / "obs.csv"
    pd.concat([first, second]).to_csv(path, index=False)
    err = _refused(capsys, ["run", "--data", str(path), "--out", str(tmp_path / "out")])
    assert f"{path}, column 'pred_id', row 54: pred_id 100 is given to two predictions" in err


def test_pyarrow_errors_are_one_line(tmp_path):
    path = tmp_path / "obs.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1")
    with pytest.raises(InputError) as info:
        read_table(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


LONG = "1234" + "5" * 394 + "789"  # 401 digits


@pytest.mark.parametrize("args, line", [
    (["run", "--repeats", LONG], "trackverify: error: command line: repeats must be between 1 "
                                 "and 1000, got 1234...(401 digits)...789"),
    (["run", "--seed", "-" + LONG], "trackverify: error: command line: seed must be >= 0 (numpy "
                                    "seeds are non-negative), got -1234...(401 digits)...789"),
])
def test_a_long_value_is_echoed_cut_in_the_middle(tmp_path, capsys, args, line):
    err = _refused(capsys, [*args, "--out", str(tmp_path / "out")])
    assert err.strip() == line and "5" * 21 not in err


def test_a_long_value_in_a_click_error_is_cut_too(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evidence", "--draws", LONG, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "5" * 21 not in err
    assert err.strip().splitlines()[-1] == ("Error: Invalid value for '--draws': 1234...(401 "
                                            "digits)...789 is not in the range 1<=x<=1000.")


def test_short_values_keeps_numbers_up_to_20_digits():
    from trackverify.errors import short_values

    assert short_values("got 12345678901234567890") == "got 12345678901234567890"  # 20 digits
    assert short_values("a 123456789012345678901 b") == "a 1234...(21 digits)...901 b"
    assert short_values("1.5 and 9223372036854775807") == "1.5 and 9223372036854775807"  # int64
