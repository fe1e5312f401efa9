"""The table checks of trackverify.tables one rule at a time, on tables of two to four rows
written out by hand: each refusal's whole message (file, column, row, wording) and each
accepted table's normalised values, with the boundary values of every limit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import InputError
from trackverify.tables import (DETECTIONS, OBSERVATIONS, PREDICTIONS, RECORDINGS, REFERENCE,
                                id_column, validate)


def observations(**columns) -> pd.DataFrame:
    """Three observations: tracks A and B in frame 0, A again in frame 1; ``columns``
    replace (a value of None drops the column)."""
    table = {"recording": ["r", "r", "r"], "frame": [0, 0, 1], "track": ["A", "B", "A"],
             "detection": [0, 1, 0], "x_um": [0.0, 10.0, 1.0], "y_um": [0.0, 0.0, 0.5],
             "pred_id": ["pA", "pB", "pA"], "pred_valid": [True, True, True]}
    table.update(columns)
    return pd.DataFrame({k: v for k, v in table.items() if v is not None})


def message(df, schema=OBSERVATIONS) -> str:
    with pytest.raises(InputError) as info:
        validate(df, schema, source="t.csv")
    return str(info.value)


# ------------------------------------------------------------------------- required columns

def test_missing_columns_are_named_with_their_closest_present_names():
    # unused names y and predid; difflib ratios: y_um ~ y = 2*1/5 = 0.4, pred_id ~ predid =
    # 2*6/13 = 0.92 (both above 0.3); y_um ~ predid and pred_id ~ y share no letter
    df = observations(y_um=None, pred_id=None).assign(y=0.0, predid="p")
    assert message(df) == (
        "t.csv, column 'y_um, pred_id': missing required column(s) of the observation table: "
        "y_um (closest: y); pred_id (closest: predid); found columns ['recording', 'frame', "
        "'track', 'detection', 'x_um', 'pred_valid', 'y', 'predid'] (rename them in the file "
        "or map them with --columns y_um=NAME,pred_id=NAME)")


def test_a_missing_column_without_a_close_name_has_no_hint():
    df = observations(pred_valid=None)
    assert message(df) == (
        "t.csv, column 'pred_valid': missing required column(s) of the observation table: "
        "pred_valid; found columns ['recording', 'frame', 'track', 'detection', 'x_um', "
        "'y_um', 'pred_id'] (rename them in the file or map them with --columns "
        "pred_valid=NAME)")


@pytest.mark.parametrize("name, hinted", [("frame;track", True), ("frame\ttrack", True),
                                          ("frame|track", True), ("frameX", False)])
def test_one_column_holding_a_separator_asks_whether_the_file_is_comma_separated(name, hinted):
    text = message(pd.DataFrame({name: [1]}), DETECTIONS)
    assert text.endswith(f"found columns [{name!r}] (is the file comma-separated?) (rename "
                         f"them in the file or map them with --columns frame=NAME,"
                         f"detection=NAME,x_um=NAME,y_um=NAME)") == hinted
    assert ("comma-separated" in text) == hinted


def test_two_columns_with_a_separator_in_one_get_no_separator_hint():
    assert "comma-separated" not in message(pd.DataFrame({"a;b": [1], "c": [2]}), DETECTIONS)


def test_a_column_named_twice_is_refused():
    df = pd.DataFrame([[0, 0, 0]], columns=["frame", "detection", "frame"])
    assert message(df, DETECTIONS) == "t.csv, column 'frame': the column appears twice"


def test_recording_is_optional_except_in_the_recording_table():
    out = validate(observations(recording=None), OBSERVATIONS, "t.csv")
    assert out["recording"].tolist() == ["recording"] * 3
    assert list(out.columns) == ["recording", "frame", "track", "detection", "x_um", "y_um",
                                 "pred_id", "pred_valid"]
    df = pd.DataFrame({"animal_id": ["a"], "provenance_group": ["g"]})
    assert message(df, RECORDINGS) == (
        "t.csv, column 'recording': missing required column(s) of the recording table: "
        "recording; found columns ['animal_id', 'provenance_group'] (rename them in the file "
        "or map them with --columns recording=NAME)")


def test_columns_are_ordered_required_optional_then_extra():
    df = pd.DataFrame({"kind": ["k"], "y_um": [2.0], "z_um": [3.0], "x_um": [1.0],
                       "detection": [5], "frame": [4], "recording": ["r"]})
    out = validate(df, DETECTIONS, "t.csv")
    assert list(out.columns) == ["recording", "frame", "detection", "x_um", "y_um", "z_um",
                                 "kind"]
    assert out.iloc[0].tolist() == ["r", 4, 5, 1.0, 2.0, 3.0, "k"]


def test_an_empty_table_is_refused_except_predictions():
    assert message(observations().iloc[:0]) == "t.csv: the observation table has no rows"
    assert message(observations().iloc[:0], DETECTIONS) == "t.csv: the detection table has no rows"
    empty = validate(pd.DataFrame({"recording": [], "frame": [], "pred_id": []}), PREDICTIONS,
                     "t.csv")
    assert len(empty) == 0 and list(empty.columns) == ["recording", "frame", "pred_id",
                                                         "pred_valid"]


# ------------------------------------------------------------------------------------ ids

def test_a_missing_id_names_its_row():
    assert message(observations(track=["A", None, "A"])) == "t.csv, column 'track', row 2: missing id"
    assert message(observations(detection=[0, 1, np.nan])) == (
        "t.csv, column 'detection', row 3: missing id")


def test_boolean_ids_are_refused():
    assert message(observations(track=[True, False, True])) == (
        "t.csv, column 'track', row 1: ids must be integers or strings, not booleans")


def test_integer_ids_become_int64_and_unsigned_ones_beyond_int64_are_refused():
    out = validate(observations(track=np.array([7, 8, 7], dtype=np.int32),
                                detection=np.array([0, 1, 0], dtype=np.uint64)),
                   OBSERVATIONS, "t.csv")
    assert out["track"].dtype == np.int64 and out["track"].tolist() == [7, 8, 7]
    assert out["detection"].dtype == np.int64
    big = np.array([5, 2**64 - 1, 2**63], dtype=np.uint64)  # int64 max is 2^63 - 1
    assert message(observations(track=big)) == (
        "t.csv, column 'track', row 2: an integer id beyond the 64-bit range "
        "(18446744073709551615; ids lie within -2^63 .. 2^63 - 1): number the ids within it, "
        "or write them as text with a letter (e.g. a prefix)")
    edge = np.array([2**63 - 1, 0, 2**63 - 1], dtype=np.uint64)  # fits int64 exactly
    out = validate(observations(track=edge), OBSERVATIONS, "t.csv")
    assert out["track"].dtype == np.int64 and out["track"].tolist() == [2**63 - 1, 0, 2**63 - 1]


def test_whole_float_ids_become_int64_below_2_53():
    below = 2.0**53 - 1  # the largest integer no other integer rounds to in float64
    out = validate(observations(track=[1.0, -2.0, 1.0], detection=[below, 0.0, -below]),
                   OBSERVATIONS, "t.csv")
    assert out["track"].dtype == np.int64 and out["track"].tolist() == [1, -2, 1]
    assert out["detection"].tolist() == [2**53 - 1, 0, -(2**53 - 1)]
    # 2^53 itself is refused: float64(2^53 + 1) == 2^53, so two ids may have become one
    assert float(2**53 + 1) == 2.0**53
    assert message(observations(detection=[0.0, 2.0**53, 1.0])).startswith(
        "t.csv, column 'detection', row 2: an id stored as a floating-point number")


def test_fractional_and_inexact_float_ids_name_their_row():
    assert message(observations(track=[1.0, 2.0, 1.5])) == (
        "t.csv, column 'track', row 3: an id must be a whole number or a text, found the "
        "fractional number 1.5")
    inexact = ("", "an id stored as a floating-point number (or written as a decimal) of 2^53 "
               "or more may have lost its exact value; store ids as integers or text")
    assert message(observations(track=[1.0, 2.0**53 + 2, 1.0])) == (
        f"t.csv, column 'track', row 2: {inexact[1]}")
    assert message(observations(track=[-2.0**53 - 2, 2.0, 1.0])) == (
        f"t.csv, column 'track', row 1: {inexact[1]}")


def test_null_prediction_ids_of_invalid_predictions_keep_the_others_exact():
    out = validate(observations(pred_id=[5.0, np.nan, 5.0], pred_valid=[True, False, True]),
                   OBSERVATIONS, "t.csv")
    assert str(out["pred_id"].dtype) == "Int64"
    assert out["pred_id"].tolist() == [5, pd.NA, 5]
    out = validate(observations(pred_id=pd.array([5, None, 6], dtype="Int64"),
                                pred_valid=[True, False, True]), OBSERVATIONS, "t.csv")
    assert str(out["pred_id"].dtype) == "Int64" and out["pred_id"].tolist() == [5, pd.NA, 6]
    out = validate(observations(pred_id=[None, None, None], pred_valid=[False] * 3),
                   OBSERVATIONS, "t.csv")
    assert out["pred_id"].dtype == object and out["pred_id"].isna().all()
    out = validate(observations(pred_id=["x", None, "y"], pred_valid=[True, False, True]),
                   OBSERVATIONS, "t.csv")
    assert out["pred_id"][[0, 2]].tolist() == ["x", "y"] and pd.isna(out["pred_id"][1])


def test_a_null_prediction_id_on_a_valid_prediction_is_refused():
    assert message(observations(pred_id=["x", "y", None], pred_valid=[True, False, True])) == (
        "t.csv, column 'pred_id', row 3: pred_id is null on a valid prediction (mark it "
        "pred_valid = false)")


def test_python_integer_ids_are_int64_and_beyond_int64_refused():
    out = validate(observations(track=pd.Series([3, 4, 3], dtype=object)), OBSERVATIONS, "t.csv")
    assert out["track"].dtype == np.int64 and out["track"].tolist() == [3, 4, 3]
    assert message(observations(track=pd.Series([4, 2**70, -2**63 - 1], dtype=object))) == (
        "t.csv, column 'track', row 2: an integer id beyond the 64-bit range "
        f"({2**70}; ids lie within -2^63 .. 2^63 - 1): number the ids within it, or write "
        "them as text with a letter (e.g. a prefix)")
    assert message(observations(track=pd.Series([4, -2**63 - 1, 4], dtype=object))).startswith(
        f"t.csv, column 'track', row 2: an integer id beyond the 64-bit range ({-2**63 - 1};")
    out = validate(observations(pred_id=pd.Series([9, None, 9], dtype=object),
                                pred_valid=[True, False, True]), OBSERVATIONS, "t.csv")
    assert str(out["pred_id"].dtype) == "Int64" and out["pred_id"].tolist() == [9, pd.NA, 9]


@pytest.mark.parametrize("dtype", [object, "string[python]", "string[pyarrow]"])
def test_an_empty_text_id_is_refused(dtype):
    df = observations(track=pd.Series(["A", "B", ""], dtype=dtype))
    assert message(df) == ("t.csv, column 'track', row 3: empty id (an id is a non-empty text "
                           "or an integer)")
    kept = validate(observations(track=pd.Series(["A", "B", "A"], dtype=dtype)), OBSERVATIONS,
                    "t.csv")
    assert kept["track"].tolist() == ["A", "B", "A"]


def test_an_id_that_is_neither_integer_nor_text_names_its_row():
    assert message(observations(track=pd.Series(["A", "B", 1.5], dtype=object))) == (
        "t.csv, column 'track', row 3: ids must be integers or strings")


@pytest.mark.parametrize("ids", [pd.to_timedelta([1, 2, 1], unit="s"),
                                 pd.to_datetime(["2026-01-01", "2026-01-02", "2026-01-01"])])
def test_duration_and_timestamp_ids_are_neither_integers_nor_text(ids):
    # numpy's timedelta64 is an integer type to Python's numbers; pandas' Timedelta is not
    assert message(observations(track=ids)) == (
        "t.csv, column 'track', row 1: ids must be integers or strings")


def test_mixed_integer_and_text_ids_name_the_first_of_the_minority_type():
    # the first id's type is the column's; the first id of the other type is named
    assert message(observations(track=pd.Series([1, "B", "A"], dtype=object))) == (
        "t.csv, column 'track', row 2: mixed id types (integers and strings) in one column")
    assert message(observations(track=pd.Series(["A", "B", 3], dtype=object))) == (
        "t.csv, column 'track', row 3: mixed id types (integers and strings) in one column")
    assert message(observations(pred_id=pd.Series([None, "p", 3], dtype=object),
                                pred_valid=[False, True, True])) == (
        "t.csv, column 'pred_id', row 3: mixed id types (integers and strings) in one column")


def test_recording_table_ids_and_integer_recordings_as_text():
    df = pd.DataFrame({"recording": [7, 8], "animal_id": [1, 1], "provenance_group": ["g", "h"],
                       "notes": ["a", "b"]})
    out = validate(df, RECORDINGS, "t.csv")
    assert out["recording"].tolist() == ["7", "8"] and out["animal_id"].tolist() == [1, 1]
    assert list(out.columns) == ["recording", "animal_id", "provenance_group", "notes"]
    missing = df.assign(animal_id=pd.Series([1, None], dtype=object))
    assert message(missing, RECORDINGS) == "t.csv, column 'animal_id', row 2: missing id"
    assert message(df.assign(recording=[7, 7]), RECORDINGS) == (
        "t.csv, column 'recording', row 2: duplicate (recording): recording='7'")


def test_integer_recording_ids_are_their_decimal_text():
    out = validate(observations(recording=[12, 12, 12]), OBSERVATIONS, "t.csv")
    assert out["recording"].tolist() == ["12", "12", "12"]


# ---------------------------------------------------------------------------------- frames

@pytest.mark.parametrize("column, dtype", [
    (pd.to_datetime(["2026-01-01"] * 3).astype("datetime64[ns]"), "datetime64[ns]"),
    (pd.to_timedelta([1, 2, 3], unit="s").astype("timedelta64[ns]"), "timedelta64[ns]"),
    ([True, False, True], "bool")])
def test_a_timestamp_duration_or_boolean_frame_is_refused(column, dtype):
    assert message(observations(frame=column)) == (
        f"t.csv, column 'frame', row 1: frame must be an integer frame index, not a timestamp, "
        f"duration or boolean (a {dtype} column); convert times to frame numbers first")


def test_frames_as_text_or_whole_floats_become_int64():
    out = validate(observations(frame=["0", "0", "1"]), OBSERVATIONS, "t.csv")
    assert out["frame"].dtype == np.int64 and out["frame"].tolist() == [0, 0, 1]
    out = validate(observations(frame=[0.0, 0.0, 2147483647.0]), OBSERVATIONS, "t.csv")
    assert out["frame"].dtype == np.int64 and out["frame"].tolist() == [0, 0, 2**31 - 1]
    out = validate(observations(frame=np.array([0, 0, 3], dtype=np.int32)), OBSERVATIONS, "t.csv")
    assert out["frame"].dtype == np.int64 and out["frame"].tolist() == [0, 0, 3]


def test_a_frame_that_is_not_a_whole_number_names_its_row():
    assert message(observations(frame=["0", "x", "1"])) == (
        "t.csv, column 'frame', row 2: frame must be an integer")
    assert message(observations(frame=[0.0, np.nan, 1.0])) == (
        "t.csv, column 'frame', row 2: frame must be an integer")
    assert message(observations(frame=[0.0, 0.0, 0.5])) == (
        "t.csv, column 'frame', row 3: frame must be an integer, found a fractional value")


def test_frame_limits_0_and_2_31_minus_1():
    assert message(observations(frame=[0, -1, 1])) == (
        "t.csv, column 'frame', row 2: frame must be >= 0")
    assert message(observations(frame=[0.0, 0.0, -1.0])) == (
        "t.csv, column 'frame', row 3: frame must be >= 0")
    assert message(observations(frame=[2**31, 0, 1])) == (
        "t.csv, column 'frame', row 1: frame is implausibly large")
    assert message(observations(frame=np.array([0, 0, 2**31], dtype=np.uint64))) == (
        "t.csv, column 'frame', row 3: frame is implausibly large")
    out = validate(observations(frame=[2**31 - 1, 0, 1]), OBSERVATIONS, "t.csv")
    assert out["frame"].tolist() == [2**31 - 1, 0, 1]
    assert message(observations(frame=[2**31 - 1, 2**31, 0])) == (  # the first beyond the limit
        "t.csv, column 'frame', row 2: frame is implausibly large")


# ----------------------------------------------------------------------------- coordinates

def test_coordinates_become_float64_up_to_1e9_um():
    out = validate(observations(x_um=[1, -1_000_000_000, 1_000_000_000],
                                y_um=["0.5", "2", "-3"]), OBSERVATIONS, "t.csv")
    assert out["x_um"].dtype == np.float64 and out["x_um"].tolist() == [1.0, -1e9, 1e9]
    assert out["y_um"].dtype == np.float64 and out["y_um"].tolist() == [0.5, 2.0, -3.0]


@pytest.mark.parametrize("x, row, problem", [
    ([0.0, 1e9 + 1, 1.0], 2, "coordinate is implausibly large (beyond +-1e+09 um)"),
    ([-1e9 - 1, 0.0, 1.0], 1, "coordinate is implausibly large (beyond +-1e+09 um)"),
    ([0.0, 1.0, np.inf], 3, "coordinate is NaN or infinite"),
    ([0.0, -np.inf, 1e10], 2, "coordinate is NaN or infinite"),
    ([0.0, 1e10, np.nan], 3, "coordinate is NaN or infinite"),
    (pd.Series([0.0, None, 1.0], dtype=object), 2, "coordinate is NaN or infinite"),
    (pd.Series([0.0, 1.0, "1,5"], dtype=object), 3, "coordinates must be numbers"),
    ([True, False, True], 1, "coordinates must be numbers"),
])
def test_a_coordinate_that_is_not_a_plausible_number_names_its_row(x, row, problem):
    assert message(observations(x_um=x)) == f"t.csv, column 'x_um', row {row}: {problem}"


def test_the_first_implausible_coordinate_is_named_beside_one_at_the_limit():
    assert message(observations(x_um=[1e9, 2e9, 0.0])) == (
        "t.csv, column 'x_um', row 2: coordinate is implausibly large (beyond +-1e+09 um)")


def test_one_row_and_no_rows_of_coordinates():
    one = pd.DataFrame({"recording": ["r"], "frame": [0], "pred_id": [1], "x_um": [np.nan],
                        "y_um": [0.0]})
    assert message(one, PREDICTIONS) == "t.csv, column 'x_um', row 1: coordinate is NaN or infinite"
    none = validate(one.iloc[:0], PREDICTIONS, "t.csv")
    assert len(none) == 0 and none["x_um"].dtype == np.float64


@pytest.mark.parametrize("present, absent", [(("x_um",), "y_um"), (("y_um",), "x_um"),
                                             (("z_um",), "x_um"), (("x_um", "z_um"), "y_um")])
def test_predictions_with_some_coordinates_need_x_and_y(present, absent):
    df = pd.DataFrame({"recording": ["r"], "frame": [0], "pred_id": [1],
                       **{c: [1.0] for c in present}})
    assert message(df, PREDICTIONS) == (
        f"t.csv, column '{absent}': the prediction table has some coordinates but not {absent}")


def test_a_table_without_a_source_is_named_as_a_table():
    with pytest.raises(InputError) as info:
        validate(observations(track=["A", None, "A"]), OBSERVATIONS)
    assert str(info.value) == "<table>, column 'track', row 2: missing id"


def test_a_reference_may_carry_prediction_ids_without_validity():
    ref = validate(observations(pred_valid=None), REFERENCE, "t.csv")
    assert ref["pred_id"].tolist() == ["pA", "pB", "pA"] and "pred_valid" not in ref.columns


def test_predictions_without_coordinates_or_validity_get_pred_valid_true():
    out = validate(pd.DataFrame({"recording": ["r", "r"], "frame": [0, 1], "pred_id": [1, 1]}),
                   PREDICTIONS, "t.csv")
    assert out["pred_valid"].tolist() == [True, True] and "x_um" not in out.columns
    ref = validate(observations(pred_id=None, pred_valid=None), REFERENCE, "t.csv")
    assert "pred_valid" not in ref.columns


# ------------------------------------------------------------------------------ booleans

def test_boolean_words_and_digits_are_read_case_and_space_insensitively():
    words = [" TRUE", "Yes", "y", "t", "1", "false ", "No", "n", "F", "0"]
    df = pd.DataFrame({"recording": "r", "frame": range(10), "pred_id": 1, "pred_valid": words})
    out = validate(df, PREDICTIONS, "t.csv")
    assert out["pred_valid"].dtype == bool
    assert out["pred_valid"].tolist() == [True] * 5 + [False] * 5
    ints = validate(df.assign(pred_valid=[1, 0] * 5), PREDICTIONS, "t.csv")
    assert ints["pred_valid"].tolist() == [True, False] * 5


@pytest.mark.parametrize("values, row", [(["true", "maybe", "false"], 2),
                                         (pd.Series([True, None, False], dtype=object), 2),
                                         (pd.array([True, False, None], dtype="boolean"), 3),
                                         (["true", "false", "2"], 3)])
def test_a_value_that_is_not_true_or_false_names_its_row(values, row):
    assert message(observations(pred_valid=values)) == (
        f"t.csv, column 'pred_valid', row {row}: expected true/false")


def test_nullable_booleans_without_nulls_are_plain_booleans():
    out = validate(observations(pred_valid=pd.array([True, False, True], dtype="boolean")),
                   OBSERVATIONS, "t.csv")
    assert out["pred_valid"].dtype == bool and out["pred_valid"].tolist() == [True, False, True]


def test_bytes_that_are_not_utf8_name_their_row():
    # before: the first bytes value was named (row 1, b"true", which is UTF-8)
    values = pd.Series([b"true", b"\xff\xfe", b"false"], dtype=object)
    assert message(observations(pred_valid=values)) == (
        "t.csv, column 'pred_valid', row 2: expected true/false, found bytes that are not "
        "UTF-8 text")


# -------------------------------------------------------------------------- duplicate rows

def test_a_repeated_track_in_a_frame_names_the_row_and_the_key_values():
    df = observations(track=["A", "B", "B"], frame=[0, 1, 1], detection=[0, 0, 1])
    assert message(df) == ("t.csv, column 'track', row 3: duplicate (recording, frame, track): "
                           "recording='r', frame=1, track='B'")


def test_a_repeated_detection_in_a_frame_names_the_row_and_the_key_values():
    df = observations(detection=[4, 4, 4])
    assert message(df) == ("t.csv, column 'detection', row 2: duplicate (recording, frame, "
                           "detection): recording='r', frame=0, detection=4")
    assert message(df, REFERENCE) == message(df)
    assert message(df[["recording", "frame", "detection", "x_um", "y_um"]], DETECTIONS) == (
        "t.csv, column 'detection', row 2: duplicate (recording, frame, detection): "
        "recording='r', frame=0, detection=4")


def test_the_same_key_in_other_recordings_or_frames_is_no_repeat():
    df = observations(recording=["a", "b", "a"], frame=[0, 0, 1], track=["A", "A", "A"],
                      detection=[0, 0, 0])
    out = validate(df, OBSERVATIONS, "t.csv")
    assert out["track"].tolist() == ["A", "A", "A"]


def test_a_reference_without_detections_checks_its_tracks_only():
    df = observations(pred_id=None, pred_valid=None, detection=None, track=["A", "B", "C"],
                      frame=[0, 0, 0])
    out = validate(df, REFERENCE, "t.csv")
    assert "detection" not in out.columns and len(out) == 3
    assert message(df.assign(track=["A", "B", "A"]), REFERENCE) == (
        "t.csv, column 'track', row 3: duplicate (recording, frame, track): recording='r', "
        "frame=0, track='A'")


# ------------------------------------------------------------------------- categorical

def test_categorical_columns_are_checked_as_their_values():
    df = observations(track=pd.Categorical(["A", "B", "A"]),
                      frame=pd.Categorical([0, 0, 1]))
    out = validate(df, OBSERVATIONS, "t.csv")
    assert out["track"].tolist() == ["A", "B", "A"] and out["frame"].tolist() == [0, 0, 1]
    assert not isinstance(out["track"].dtype, pd.CategoricalDtype)
    assert message(observations(track=pd.Categorical(["A", None, "A"]))) == (
        "t.csv, column 'track', row 2: missing id")


TEXT_LAYOUTS = ["string[pyarrow]", "string[python]", object]
# (bad id, the whole message after "<file>, column '<column>', row <n>: "), by hand from the
# id rule (docs/reference/robustness.md, "Ids as written")
TEXT_ID_REFUSALS = [
    ("r\n1", "an id holds a control character (a line break, tab, NUL, ...)"),
    ("r1\x00", "an id holds a control character (a line break, tab, NUL, ...)"),
    ("x\u202e1r", "an id holds U+202E (RIGHT-TO-LEFT OVERRIDE), an invisible or control "
                  "character that changes how the id reads"),
    ("r" * 1001, "an id of 1001 characters (at most 1000)"),
    ("NA", "the id 'NA' is a missing-value marker: leave the cell blank where the id is "
           "missing, or give the object another id"),
]


@pytest.mark.parametrize("dtype", TEXT_LAYOUTS)
@pytest.mark.parametrize("bad, message", TEXT_ID_REFUSALS)
def test_a_refused_text_id_is_named_by_its_own_row_after_a_blank_and_a_longest_id(dtype, bad,
                                                                                   message):
    """Row 1 blank (allowed for predicted ids), row 2 an id of exactly 1,000 characters (the
    most allowed), row 3 the bad one: the message is the whole sentence, naming the file and
    row 3 in every text layout (neither the blank nor the longest id is taken for it)."""
    series = pd.Series([None, "r" * 1000, bad], dtype=dtype)
    with pytest.raises(InputError) as info:
        id_column(series, "pred_id", "p.csv", allow_null=True)
    assert str(info.value) == f"p.csv, column 'pred_id', row 3: {message}"


@pytest.mark.parametrize("dtype", TEXT_LAYOUTS)
@pytest.mark.parametrize("bad, message", TEXT_ID_REFUSALS)
def test_a_column_holding_one_refused_text_id_names_its_first_row(dtype, bad, message):
    with pytest.raises(InputError) as info:
        id_column(pd.Series([bad] * 3, dtype=dtype), "recording", "r.csv")
    assert str(info.value) == f"r.csv, column 'recording', row 1: {message}"
