"""Schema validation: each bad input is refused with file, column and first bad row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import run_cli
from trackverify.errors import InputError
from trackverify.io.tabular import load_table, read_table, write_table
from trackverify.tables import OBSERVATIONS, PREDICTIONS, RECORDINGS, REFERENCE, validate


def refused(df, schema=OBSERVATIONS):
    with pytest.raises(InputError) as info:
        validate(df, schema, source="data.csv")
    return info.value


def test_valid_table_is_normalised_and_input_untouched(obs):
    before = obs.copy()
    out = validate(obs, OBSERVATIONS, "data.csv")
    pd.testing.assert_frame_equal(obs, before)
    assert out["frame"].dtype == np.int64
    assert out["pred_valid"].dtype == bool


def test_missing_column_is_named(obs):
    err = refused(obs.drop(columns=["y_um"]))
    assert err.column == "y_um" and "data.csv" in str(err) and "missing" in str(err)


def test_nan_coordinate_names_row(obs):
    obs.loc[5, "x_um"] = np.nan
    err = refused(obs)
    assert (err.column, err.row) == ("x_um", 6)


def test_infinite_coordinate(obs):
    obs.loc[2, "z_um"] = np.inf
    assert (refused(obs).column, refused(obs).row) == ("z_um", 3)


def test_text_in_coordinate(obs):
    obs["y_um"] = obs["y_um"].astype(object)
    obs.loc[7, "y_um"] = "abc"
    err = refused(obs)
    assert (err.column, err.row) == ("y_um", 8) and "number" in str(err)


def test_negative_frame(obs):
    obs.loc[3, "frame"] = -1
    err = refused(obs)
    assert (err.column, err.row) == ("frame", 4) and ">= 0" in str(err)


def test_fractional_frame(obs):
    obs["frame"] = obs["frame"].astype(float)
    obs.loc[9, "frame"] = 2.5
    err = refused(obs)
    assert (err.column, err.row) == ("frame", 10) and "fractional" in str(err)


def test_duplicate_track_in_frame(obs):
    obs.loc[1, "track"] = "A"  # frame 0 now has track A twice (rows 1 and 2)
    err = refused(obs)
    assert err.row == 2 and "duplicate (recording, frame, track)" in str(err)


def test_duplicate_detection_in_reference(obs):
    ref = obs.drop(columns=["pred_id", "pred_valid"])
    ref.loc[1, "detection"] = 0
    err = refused(ref, REFERENCE)
    assert err.row == 2 and "duplicate (recording, frame, detection)" in str(err)


def test_two_predictions_on_one_detection_are_allowed(obs):
    pred = obs[["recording", "frame", "detection", "pred_id"]].copy()
    pred.loc[1, "detection"] = 0
    assert len(validate(pred, PREDICTIONS, "p.csv")) == len(pred)


def test_mixed_id_types(obs):
    obs["track"] = obs["track"].astype(object)
    obs.loc[6, "track"] = 7
    err = refused(obs)
    assert err.column == "track" and err.row == 7 and "mixed" in str(err)


def test_null_pred_id_on_valid_prediction(obs):
    obs["pred_id"] = obs["pred_id"].astype(object)
    obs.loc[4, "pred_id"] = None
    err = refused(obs)
    assert (err.column, err.row) == ("pred_id", 5)


def test_null_pred_id_allowed_when_invalid(obs):
    obs["pred_id"] = obs["pred_id"].astype(object)
    obs.loc[4, "pred_id"] = None
    obs.loc[4, "pred_valid"] = False
    assert len(validate(obs, OBSERVATIONS, "x")) == len(obs)


def test_bad_boolean(obs):
    obs["pred_valid"] = obs["pred_valid"].astype(object)
    obs.loc[2, "pred_valid"] = "maybe"
    assert (refused(obs).column, refused(obs).row) == ("pred_valid", 3)


def test_two_dimensional_data_allowed(obs):
    out = validate(obs.drop(columns=["z_um"]), OBSERVATIONS, "x")
    assert "z_um" not in out.columns


def test_integer_and_string_ids_both_allowed(obs):
    obs["track"] = obs["track"].map({"A": 1, "B": 2, "C": 3, "D": 4})
    assert validate(obs, OBSERVATIONS, "x")["track"].dtype == np.int64


def test_empty_reference_refused(obs):
    assert "no rows" in str(refused(obs.iloc[:0]))


def test_recording_table_duplicate():
    rec = pd.DataFrame({"recording": ["a", "a"], "animal_id": ["x", "y"], "provenance_group": ["g", "g"]})
    err = refused(rec, RECORDINGS)
    assert err.row == 2


def test_csv_round_trip_with_bom(tmp_path, obs):
    path = tmp_path / "obs.csv"
    path.write_bytes(b"\xef\xbb\xbf" + obs.to_csv(index=False).encode())
    loaded = load_table(path, OBSERVATIONS)
    assert list(loaded["track"][:4]) == ["A", "B", "C", "D"]
    assert loaded["pred_valid"].all()


@pytest.mark.parametrize("boms", [2, 3])
def test_a_second_bom_is_refused(tmp_path, boms):
    # Two BOMs: pandas dropped the second itself, but the header check saw '\ufeffrecording',
    # so recording '007' was not read as an id (it became 7); three: a column '\ufeffrecording'.
    path = tmp_path / "obs.csv"
    path.write_bytes(b"\xef\xbb\xbf" * boms + b"recording,frame\n007,0\n")
    with pytest.raises(InputError) as info:
        read_table(path)
    assert str(info.value) == (f"{path}, column 'recording': the column name begins with a "
                               "byte-order mark (U+FEFF; the file starts with two, or one is "
                               "inside the header): save the file with at most one")


def test_parquet_round_trip(tmp_path, obs):
    write_table(obs, tmp_path / "obs.parquet")
    loaded = load_table(tmp_path / "obs.parquet", OBSERVATIONS)
    pd.testing.assert_frame_equal(loaded.reset_index(drop=True), validate(obs, OBSERVATIONS, "x"))


def test_empty_file_and_header_only(tmp_path, obs):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_table(empty)
    header = tmp_path / "header.csv"
    header.write_text(",".join(obs.columns) + "\n")
    with pytest.raises(InputError, match="no rows"):
        load_table(header, OBSERVATIONS)


def test_wrong_delimiter_hint(tmp_path, obs):
    path = tmp_path / "semi.csv"
    obs.to_csv(path, sep=";", index=False)
    with pytest.raises(InputError, match="comma-separated"):
        load_table(path, OBSERVATIONS)


@pytest.mark.parametrize("mutate, column, row", [
    (lambda df: df.drop(columns=["frame"]), "frame", None),
    (lambda df: df.assign(x_um=df["x_um"].where(df.index != 3, np.nan)), "x_um", 4),
    (lambda df: df.assign(frame=df["frame"].where(df.index != 0, -5)), "frame", 1),
])
def test_cli_exits_2_with_location_and_no_traceback(tmp_path, obs, mutate, column, row):
    path = tmp_path / "bad.csv"
    mutate(obs).to_csv(path, index=False)
    result = run_cli("run", "--data", path, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(path) in result.stderr and f"column '{column}'" in result.stderr
    if row is not None:
        assert f"row {row}" in result.stderr
    assert not (tmp_path / "out" / "results.json").exists()


def test_validating_twice_is_stable_with_null_integer_ids(obs):
    obs["pred_id"] = obs["track"].map({"A": 1, "B": 2, "C": 3, "D": 4}).astype(object)
    obs.loc[4, "pred_id"] = None
    obs.loc[4, "pred_valid"] = False
    once = validate(obs, OBSERVATIONS, "x")
    assert str(once["pred_id"].dtype) == "Int64"
    pd.testing.assert_frame_equal(validate(once, OBSERVATIONS, "x"), once)


@pytest.mark.parametrize("seed", range(3))
def test_first_repeated_key_matches_pandas_duplicated(seed):
    """The key check (small integers used directly, large or string ids hashed, nulls equal
    to each other) finds the row pandas' duplicated(keep='first') finds first."""
    from trackverify.tables import column_codes, first_repeat, joint_codes

    rng = np.random.default_rng(seed)
    for _ in range(50):
        n = int(rng.integers(1, 400))
        df = pd.DataFrame({
            "recording": rng.choice(["a", "b", "c"], n),
            "frame": rng.integers(0, int(rng.choice([5, 10**9])), n),
            "track": pd.array(np.where(rng.random(n) < 0.1, None,
                                       rng.integers(0, int(rng.choice([4, 10**12])), n)),
                              dtype="Int64"),
        })
        dup = df.duplicated(list(df.columns), keep="first").to_numpy()
        want = int(np.flatnonzero(dup)[0]) if dup.any() else None
        got = first_repeat(*joint_codes([column_codes(df[c]) for c in df.columns]))
        assert got == want


@pytest.mark.parametrize("n_frames, n_ids", [(3, 60), (40_000, 60), (40_000, 200)])
def test_joint_codes_of_wide_integer_keys_are_equal_exactly_for_equal_rows(n_frames, n_ids):
    """Keys whose combined space exceeds the direct range (integers up to 65535 are their own
    codes; 65536 x 65536 is compacted to the values present): equal rows, equal codes, and
    the first repeat is the one pandas finds (60 ids: only the ids compacted; 200: both)."""
    from trackverify.tables import column_codes, first_repeat, joint_codes

    rng = np.random.default_rng(n_frames)
    n = 20_000
    df = pd.DataFrame({"frame": rng.choice(rng.integers(0, 65536, n_frames), n),
                       "pred_id": rng.choice(np.r_[0, 65535, rng.integers(0, 65536, n_ids)], n)})
    code, span = joint_codes([column_codes(df[c]) for c in df.columns])
    assert code.min() >= 0 and code.max() < span
    # the same partition of the rows: groups numbered by first appearance on both sides
    np.testing.assert_array_equal(pd.factorize(code)[0],
                                  df.groupby(list(df.columns), sort=False).ngroup().to_numpy())
    dup = np.flatnonzero(df.duplicated(keep="first").to_numpy())
    assert first_repeat(code, span) == (int(dup[0]) if len(dup) else None)


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "string[python]", object])
@pytest.mark.parametrize("bad, problem", [("r\n1", "control character"), ("r1\x00", "control character"),
                                          ("r\r", "control character"), ("r" * 1001, "1001 characters"),
                                          ("r\x85", "U\\+0085 \\(unnamed\\)"),  # C1 NEL
                                          ("x\u202e1r", "U\\+202E \\(RIGHT-TO-LEFT OVERRIDE\\)"),
                                          ("r\u200b1", "U\\+200B \\(ZERO WIDTH SPACE\\)"),
                                          ("r\u20281", "U\\+2028 \\(LINE SEPARATOR\\)"),
                                          ("\ufeffr1", "U\\+FEFF \\(ZERO WIDTH NO-BREAK SPACE\\)")])
def test_a_text_id_with_a_control_character_or_too_long_is_refused(dtype, bad, problem):
    """Each text layout pandas may hold (Arrow strings, Python strings, objects): row 3 named."""
    df = pd.DataFrame({"recording": pd.Series(["r1", "r1", bad, "r1"], dtype=dtype),
                       "frame": [0, 1, 2, 3], "track": [1, 1, 1, 1], "detection": [0, 0, 0, 0],
                       "x_um": 0.0, "y_um": 0.0, "pred_id": [5, 5, 5, 5], "pred_valid": True})
    with pytest.raises(InputError, match=problem) as info:
        validate(df, OBSERVATIONS, source="obs.csv")
    assert "column 'recording', row 3" in str(info.value)
    ok = df.assign(recording=pd.Series(["r1", "r1", "r" * 1000, "r1"], dtype=dtype))
    assert validate(ok, OBSERVATIONS, source="obs.csv")["recording"].iloc[2] == "r" * 1000
    shown = df.assign(recording=pd.Series(["r1", "r1", "wörm ü\u00e9 é", "r1"], dtype=dtype))
    assert validate(shown, OBSERVATIONS, source="obs.csv")["recording"].iloc[2] == "wörm ü\u00e9 é"


def test_a_repeated_column_after_a_quoted_line_break_in_the_header_is_refused(tmp_path):
    """The header is the first CSV record, not the first line: a quoted name holding a line
    break does not hide the repeated x_um after it (pandas would rename it x_um.1)."""
    path = tmp_path / "obs.csv"
    path.write_text('"a\nb",recording,frame,track,detection,x_um,y_um,pred_id,pred_valid,x_um\n'
                    "1,r1,0,0,0,0,0,100,True,5\n", encoding="utf-8")
    with pytest.raises(InputError, match="the column appears twice in the header") as info:
        read_table(path)
    assert "column 'x_um'" in str(info.value)


def test_columns_put_in_schema_order_index_renumbered_input_untouched():
    # columns in the schema's order (required, optional, then the others as given), rows
    # numbered 0.. whatever the input's index; checked columns kept, others converted
    df = pd.DataFrame({"note": ["a", "b"], "y_um": [1, 2], "x_um": [0.5, 1.5],
                       "track": [7, 8], "frame": [3, 4], "recording": ["r", "r"]},
                      index=[10, 5])
    before = df.copy()
    out = validate(df, REFERENCE, "t.csv")
    assert list(out.columns) == ["recording", "frame", "track", "x_um", "y_um", "note"]
    assert out.index.tolist() == [0, 1]
    assert out["y_um"].dtype == np.float64 and out["y_um"].tolist() == [1.0, 2.0]
    assert out["track"].tolist() == [7, 8] and out["note"].tolist() == ["a", "b"]
    ordered = df[list(out.columns)].reset_index(drop=True)  # already in the schema's order
    in_order = validate(ordered, REFERENCE, "t.csv")
    assert list(in_order.columns) == list(out.columns)
    pd.testing.assert_frame_equal(in_order, out)
    pd.testing.assert_frame_equal(df, before)
    out.loc[0, "x_um"] = 99.0  # the results are copies: writing to them leaves the inputs
    in_order.loc[0, "track"] = 99
    assert df.loc[10, "x_um"] == 0.5 and ordered.loc[0, "track"] == 7
