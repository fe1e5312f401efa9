"""Messages name the input: the file, and rows of the file (not of one recording)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.corpus.make_corpus import clean_observations
from trackverify.cli.app import main
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
    ("[run]\nrepeats = 51", "repeats must be between 1 and 50, got 51"),
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
    (["run", "--repeats", LONG], "trackverify: error: command line: --repeats must be a 64-bit "
                                 "integer (-2^63 to 2^63 - 1 = 9223372036854775807), got "
                                 "1234...(401 digits)...789"),
    (["run", "--seed", "-" + LONG], "trackverify: error: command line: --seed must be a 64-bit "
                                    "integer (-2^63 to 2^63 - 1 = 9223372036854775807), got "
                                    "-1234...(401 digits)...789"),
])
def test_a_long_value_is_echoed_cut_in_the_middle(tmp_path, capsys, args, line):
    err = _refused(capsys, [*args, "--out", str(tmp_path / "out")])
    assert err.strip() == line and "5" * 21 not in err


def test_a_long_value_in_a_click_error_is_cut_too(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evidence", "--draws", LONG, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "5" * 21 not in err
    assert err == ("trackverify: error: Invalid value for '--draws': 1234...(401 digits)...789 "
                   "is not in the range 1<=x<=50. Try 'trackverify evidence --help' for help.\n")


def test_short_values_keeps_numbers_up_to_20_digits():
    from trackverify.errors import short_values

    assert short_values("got 12345678901234567890") == "got 12345678901234567890"  # 20 digits
    assert short_values("a 123456789012345678901 b") == "a 1234...(21 digits)...901 b"
    assert short_values("1.5 and 9223372036854775807") == "1.5 and 9223372036854775807"  # int64


@pytest.mark.parametrize("jobs", ["0", "-1", str(10**6)])
def test_jobs_out_of_range_is_one_line_naming_the_option(tmp_path, capsys, jobs):
    # before: click's usage line, its hint and the error, on three lines
    err = _refused(capsys, ["run", "--jobs", jobs, "--out", str(tmp_path / "out")])
    assert err == (f"trackverify: error: Invalid value for '--jobs': {jobs} is not in the range "
                   "1<=x<=1000. Try 'trackverify run --help' for help.\n")


def test_a_missing_argument_is_one_line(capsys):
    err = _refused(capsys, ["audit"])
    assert err == ("trackverify: error: Missing argument 'TRACKS...'. Try 'trackverify audit "
                   "--help' for help.\n")


def test_an_error_holding_line_breaks_is_printed_on_one_line(monkeypatch, capsys):
    from trackverify.cli import app as cli_module
    from trackverify.errors import ConfigError

    def broken(**_):
        raise ConfigError("first line\nsecond line\r\n  third line")

    monkeypatch.setattr(cli_module.cli, "main", broken)
    err = _refused(capsys, ["run"])
    assert err == "trackverify: error: first line second line third line\n"


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("key, flag", [("seed", "--seed"), ("start", "--start"),
                                       ("recovery_end", "--recovery-end")])
def test_an_integer_past_int64_on_the_command_line_names_the_option(tmp_path, capsys, key, flag):
    # before: --seed 2^63 was accepted (exit 0), --start 2^63 reached the window check
    err = _refused(capsys, ["run", flag, str(INT64_MAX + 1), "--out", str(tmp_path / "out")])
    assert err == (f"trackverify: error: command line: {flag} must be a 64-bit integer (-2^63 "
                   f"to 2^63 - 1 = {INT64_MAX}), got {INT64_MAX + 1}\n")


@pytest.mark.parametrize("value", [INT64_MAX + 1, -(2**63) - 1])
def test_an_integer_past_int64_in_toml_names_the_file_and_key(tmp_path, capsys, value):
    config = tmp_path / "run.toml"
    config.write_text(f"[run]\nstart = {value}\n", encoding="utf-8")
    err = _refused(capsys, ["run", "--config", str(config), "--out", str(tmp_path / "out")])
    assert err == (f"trackverify: error: {config} [run]: 'start' must be a 64-bit integer (-2^63 "
                   f"to 2^63 - 1 = {INT64_MAX}), got {value}\n")


def test_the_largest_int64_seed_is_a_seed_and_its_next_draw_is_not():
    from trackverify.benchmark.config import build_config
    from trackverify.errors import ConfigError

    assert build_config({"seed": INT64_MAX}).seed == INT64_MAX
    with pytest.raises(ConfigError, match=r"command line: seed \+ repeats - 1 must be at most "
                                          r"2\^63 - 1 = 9223372036854775807 \(the last draw's "
                                          r"seed\), got seed 9223372036854775807 and repeats 2"):
        build_config({"seed": INT64_MAX, "repeats": 2})


@pytest.mark.parametrize("command", ["synth", "split", "conversion decode", "audit sample"])
def test_every_other_seed_option_stops_at_int64(tmp_path, capsys, command):
    err = _refused(capsys, [*command.split(), "--seed", str(INT64_MAX + 1)])
    assert (f"Invalid value for '--seed': {INT64_MAX + 1} is not in the range "
            f"0<=x<={INT64_MAX}") in err


def test_a_recording_shorter_than_recovery_end_names_the_setting(tmp_path, capsys):
    path = tmp_path / "obs.csv"
    clean_observations(frames=12).to_csv(path, index=False)
    err = _refused(capsys, ["verify", "--observations", str(path), "--start", "3",
                            "--recovery-end", "100", "--out", str(tmp_path / "out")])
    assert (f"{path}: recording 'r1' spans 12 frame numbers (0-11; 12 of them present), too "
            "short for 'swap_and_recovery' (needs more than recovery_end = 100); ") in err


def _csv_rows(tmp_path, lines: list[str]):
    path = tmp_path / "obs.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_table(path)
    return path, str(info.value)


def test_an_unquoted_thousands_separator_names_the_row(tmp_path):
    path, message = _csv_rows(tmp_path, ["recording,frame,x_um", "r1,0,1.5", "r1,1,2.5",
                                         "r1,2,1,234.5", "r1,3,3.5"])
    assert message == (f"{path}, row 3: 4 cells where the header has 3 (an unquoted comma inside "
                       "a value, such as a thousands separator in 1,234.5, splits it: quote the "
                       "value or drop the separator)")


def test_the_row_counts_neither_blank_lines_nor_lines_inside_a_quoted_cell(tmp_path):
    # physical line 6 (pandas says 'line 5'); data rows: '"a\nb",1,2' is 1, 'r2,...' 2, then 3
    path, message = _csv_rows(tmp_path, ["recording,frame,x_um", '"a', 'b",1,2', "", "r2,1,2",
                                         "r3,2,2,9"])
    assert message.startswith(f"{path}, row 3: 4 cells where the header has 3 ")


def test_a_semicolon_separated_csv_is_named_as_such(tmp_path):
    path, message = _csv_rows(tmp_path, ["recording;frame;x_um", "r1;0;1,5"])
    assert message == (f"{path}: the header holds ';' -- save as comma-separated (a semicolon-"
                       "separated CSV, as a spreadsheet with a decimal comma writes it, is read "
                       "as one column)")


def test_an_hdf5_file_of_no_tracker_layout_names_what_was_expected(tmp_path):
    h5py = pytest.importorskip("h5py")
    from trackverify.io.formats import detect_format

    path = tmp_path / "tracks.h5"
    with h5py.File(path, "w") as handle:
        handle["values"] = [1, 2, 3]
    with pytest.raises(InputError) as info:
        detect_format(path)
    assert str(info.value).startswith(
        f"{path}: cannot tell the format: not the layout of btrack, btrack HDF5 (objects + "
        "tracks); nor of zephir, ZephIR annotations.h5 (+ worldlines.h5, metadata.json); give "
        "--format, one of: ")


def test_a_tracker_csv_read_cell_by_cell_names_semicolons_and_long_rows_too(tmp_path, capsys):
    # before: "column 'frame': missing column"; "row 2: 5 cells where the header has 4"
    semi = tmp_path / "semi.csv"
    semi.write_text("frame;particle;x;y\n0;1;2,5;3,0\n", encoding="utf-8")
    err = _refused(capsys, ["audit", str(semi), "--format", "trackpy", "--pixel-size", "1",
                            "--out", str(tmp_path / "out")])
    assert err.startswith(f"trackverify: error: {semi}: the header holds ';' -- save as "
                          "comma-separated"), err
    long = tmp_path / "long.csv"
    long.write_text("frame,particle,x,y\n0,1,2.5,3\n1,1,1,234.5,3\n", encoding="utf-8")
    err = _refused(capsys, ["audit", str(long), "--format", "trackpy", "--pixel-size", "1",
                            "--out", str(tmp_path / "out")])
    assert err == (f"trackverify: error: {long}, row 2: 5 cells where the header has 4 (an "
                   "unquoted comma inside a value, such as a thousands separator in 1,234.5, "
                   "splits it: quote the value or drop the separator)\n")


@pytest.mark.parametrize("setting, message", [
    ("alpha=2", "--set alpha: unknown setting 'alpha' for this stage; known: ['alphas', "
                "'delta_p', 'partial_threshold']"),
    ("delta_p=nan", "--set delta_p: cannot use nan (not a number)"),
    ("delta_p=x", "--set delta_p: cannot use 'x' (could not convert string to float: 'x')"),
])
def test_a_stage_setting_names_the_set_option(setting, message):
    from trackverify.errors import ConfigError
    from trackverify.stages import default_config
    from trackverify.stages.common import apply_overrides

    key, value = setting.split("=")
    with pytest.raises(ConfigError) as info:
        apply_overrides(default_config("stats"), {key: value})
    assert str(info.value) == message


def test_a_stage_integer_setting_stops_at_int64():
    from trackverify.errors import ConfigError
    from trackverify.stages import default_config
    from trackverify.stages.common import apply_overrides

    config = default_config("keypoints")
    key = next(k for k, v in vars(config).items() if type(v) is int)
    assert getattr(apply_overrides(config, {key: str(2**63 - 1)}), key) == 2**63 - 1
    with pytest.raises(ConfigError, match=rf"^--set {key}: cannot use {2**63} \(not a 64-bit"):
        apply_overrides(config, {key: str(2**63)})


@pytest.mark.parametrize("args, head", [([], "Usage: trackverify [OPTIONS] COMMAND"),
                                        (["conversion"], "Usage: trackverify conversion")])
def test_a_group_without_a_command_prints_its_help_not_an_error(capsys, args, head):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(head) and "trackverify: error" not in err
    assert "Commands:" in err
