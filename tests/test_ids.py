"""Ids are kept exactly as written (docs/reference/robustness.md, "Ids as written").

An id column read from CSV is int64 only when every value is a canonical integer that fits
int64; otherwise it is the text itself. Expected values are the literal strings written.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from trackverify.values import hidden_character
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trackverify.benchmark.dataset import load_dataset
from trackverify.errors import InputError
from trackverify.benchmark.convert import convert
from trackverify.io.tabular import load_table, read_table, write_table
from trackverify.benchmark.partitions import load_partitions, make_partitions, write_partitions
from trackverify.tables import (CANONICAL_INTEGER, DECIMAL_NUMBER, MISSING_MARKERS, OBSERVATIONS,
                                RECORDINGS, TRACKER_IDS, validate)

HEADER = "recording,frame,track,detection,x_um,y_um,pred_id,pred_valid\n"


def _csv(tmp_path, rows: list[str], name="obs.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_padded_ids_stay_distinct(tmp_path):
    path = _csv(tmp_path, ["r,0,7,1,0,0,p,true", "r,0,07,2,1,0,q,true", "r,0,007,3,2,0,s,true"])
    obs = load_table(path, OBSERVATIONS)
    assert obs["track"].tolist() == ["7", "07", "007"]


def test_canonical_integers_are_int64_and_others_text(tmp_path):
    path = _csv(tmp_path, ["r,0,1,1,0,0,-5,true", "r,0,2,2,1,0,0,true"])
    obs = load_table(path, OBSERVATIONS)
    assert obs["track"].dtype == np.int64 and obs["pred_id"].tolist() == [-5, 0]
    for text in ("+7", " 7x", "1e3", "0x10", "٣"):  # '+', not digits, exponent, hex, Arabic-Indic
        path = _csv(tmp_path, [f"r,0,1,1,0,0,{text},true", "r,0,2,2,1,0,8,true"])
        assert load_table(path, OBSERVATIONS)["pred_id"].tolist() == [text.lstrip(), "8"]


def _refusal(path, schema=OBSERVATIONS) -> str:
    with pytest.raises(InputError) as info:
        load_table(path, schema)
    return str(info.value).replace(str(path), "FILE")


BEYOND = ("an integer id beyond the 64-bit range ({}; ids lie within -2^63 .. 2^63 - 1): "
          "number the ids within it, or write them as text with a letter (e.g. a prefix)")


@pytest.mark.parametrize("big", [2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1])
def test_integer_ids_beyond_int64_are_refused_naming_column_and_row(tmp_path, big):
    path = _csv(tmp_path, ["r,0,1,1,0,0,3,true", f"r,0,{big},2,1,0,3,true"])
    assert _refusal(path) == f"FILE, column 'track', row 2: {BEYOND.format(big)}"
    # Beside a blank cell (nullable column) too.
    path = _csv(tmp_path, [f"r,0,1,1,0,0,{big},true", "r,0,2,2,1,0,,false"])
    assert _refusal(path) == f"FILE, column 'pred_id', row 1: {BEYOND.format(big)}"


def test_unsigned_parquet_ids_beyond_int64_are_refused(tmp_path):
    table = pd.DataFrame({"recording": "r", "frame": [0, 0], "track": np.array(
        [2, 2 ** 64 - 1], dtype=np.uint64), "detection": [1, 2], "x_um": 0.0, "y_um": 0.0,
        "pred_id": [1, 2], "pred_valid": True})
    table.to_parquet(tmp_path / "t.parquet")
    assert _refusal(tmp_path / "t.parquet") == (
        f"FILE, column 'track', row 2: {BEYOND.format(2 ** 64 - 1)}")
    # Python ints in a DataFrame: the same rule, the same words.
    table["track"] = pd.Series([2, 2 ** 64 - 1], dtype=object)
    with pytest.raises(InputError, match=r"column 'track', row 2: an integer id beyond"):
        validate(table, OBSERVATIONS, source="df")
    # Beyond int64 beside a letter the column is text: kept exactly as written.
    path = _csv(tmp_path, [f"r,0,{2 ** 64},1,0,0,3,true", "r,0,A,2,1,0,3,true"])
    assert load_table(path, OBSERVATIONS)["track"].tolist() == [str(2 ** 64), "A"]


def test_ids_above_2_53_beside_a_blank_keep_precision(tmp_path):
    big = 2 ** 53 + 1  # 9007199254740993: a float64 cannot hold it
    path = _csv(tmp_path, [f"r,0,1,1,0,0,{big},true", "r,0,2,2,1,0,,false"])
    obs = load_table(path, OBSERVATIONS)
    assert obs["pred_id"].iloc[0] == 9007199254740993 and pd.isna(obs["pred_id"].iloc[1])


def _arrow_parquet(path, columns: dict):
    """A Parquet file written by pyarrow alone (no pandas metadata), as other tools write it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


BIG_IDS = [2**53 + i for i in range(6)]


@pytest.mark.parametrize("dictionary", [False, True])
def test_parquet_integer_ids_beside_a_null_keep_every_digit(tmp_path, dictionary):
    import pyarrow as pa

    # float64 holds these six ids as three values (2^53, 2^53 + 2, 2^53 + 4: its spacing
    # above 2^53 is 2, ties to even), which is how pandas read them before
    assert len({float(i) for i in BIG_IDS}) == 3
    ids = pa.array([*BIG_IDS, None], pa.int64())
    path = _arrow_parquet(tmp_path / "t.parquet", {
        "recording": ["r"] * 7, "frame": [0] * 7, "detection": list(range(7)),
        "pred_id": ids.dictionary_encode() if dictionary else ids,
        "pred_valid": [True] * 6 + [False]})
    table = validate(read_table(path), TRACKER_IDS, str(path))
    assert table["pred_id"].tolist()[:6] == BIG_IDS and pd.isna(table["pred_id"].iloc[6])


def test_parquet_unsigned_ids_beside_a_null_beyond_int64_are_refused(tmp_path):
    import pyarrow as pa

    path = _arrow_parquet(tmp_path / "t.parquet", {
        "recording": ["r"] * 3, "frame": [0] * 3, "detection": [0, 1, 2],
        "pred_id": pa.array([1, None, 2**64 - 1], pa.uint64()),
        "pred_valid": [True, False, True]})
    assert _refusal(path, TRACKER_IDS) == f"FILE, column 'pred_id', row 3: " \
        f"{BEYOND.format(2**64 - 1)}"


def test_audit_sample_keeps_ids_above_2_53_of_audit_parquet(tmp_path, capsys):
    """audit.parquet holds integer ids beside a null (an id-less detection): read back by
    ``audit sample`` they kept every digit (review.csv listed 2^53 + 1 as 2^53 before)."""
    from trackverify.cli import main

    rows = [(t, i, BIG_IDS[i], 8.0 * (i % 3) + 0.3 * t, 8.0 * (i // 3)) for t in range(4)
            for i in range(6)]
    tracks = pd.DataFrame(rows, columns=["frame", "detection", "pred_id", "x_um", "y_um"])
    tracks = tracks.astype({"pred_id": object})
    tracks.loc[len(tracks) - 1, "pred_id"] = None
    tracks.to_csv(tmp_path / "tracks.csv", index=False)
    for args in (["audit", str(tmp_path / "tracks.csv"), "--out", str(tmp_path / "a")],
                 ["audit", "sample", str(tmp_path / "a"), "--n", "17"]):
        with pytest.raises(SystemExit) as done:
            main(args)
        assert done.value.code == 0, capsys.readouterr().err
    review = pd.read_csv(tmp_path / "a" / "review.csv", dtype={"pred_id": str})  # all 17 rows
    assert set(review["pred_id"]) == {str(i) for i in BIG_IDS}


def test_float_ids_above_2_53_are_refused():
    table = pd.DataFrame({"recording": "r", "frame": [0, 0], "track": [2.0 ** 60, 1.0],
                          "detection": [1, 2], "x_um": 0.0, "y_um": 0.0, "pred_id": [1, 2],
                          "pred_valid": True})
    with pytest.raises(InputError, match="column 'track', row 1: an id stored as a floating"):
        validate(table, OBSERVATIONS, source="t.parquet")


MARKER = ("the id {!r} is a missing-value marker: leave the cell blank where the id is "
          "missing, or give the object another id")


@pytest.mark.parametrize("marker", ["NA", "None", "nan", "null", "NaN", "N/A", "<NA>"])
@pytest.mark.parametrize("column", ["recording", "track", "detection", "pred_id"])
def test_missing_value_markers_as_ids_are_refused_naming_column_and_row(tmp_path, marker,
                                                                        column):
    cells = {"recording": "r", "track": "1", "detection": "1", "pred_id": "p"}
    second = ",".join([{**cells, column: marker}[c] if c in cells else v for c, v in
                       zip(HEADER.strip().split(","), ["", "1", "", "", "0", "0", "", "true"])])
    path = _csv(tmp_path, ["r,0,2,2,5,0,q,true", second])
    assert _refusal(path) == f"FILE, column '{column}', row 2: {MARKER.format(marker)}"
    # The same text ids in a DataFrame (or a Parquet text column): the same refusal.
    table = read_table(path).astype({column: str})
    with pytest.raises(InputError, match=f"column '{column}', row 2: the id '{marker}' is a"):
        validate(table, OBSERVATIONS, source="df")


def test_a_marker_word_inside_a_longer_id_is_an_id(tmp_path):
    path = _csv(tmp_path, ["NA1,0,None2,1,0,0,nullable,true", "nan-,0,NAN,2,1,0,na,true"])
    obs = load_table(path, OBSERVATIONS)
    assert obs[["recording", "track", "pred_id"]].values.tolist() == [
        ["NA1", "None2", "nullable"], ["nan-", "NAN", "na"]]


def test_integer_valued_decimals_are_integers_as_in_a_dataframe(tmp_path):
    # pandas writes an integer column holding a blank as 45.0, 7.0 and an empty cell.
    path = _csv(tmp_path, ["r,0,45.0,1,0,0,3.0,true", "r,0,7,2,1,0,,false",
                           "r,1,45.0,1,0,0,-0.0,true"])
    obs = load_table(path, OBSERVATIONS)
    assert obs["track"].dtype == np.int64 and obs["track"].tolist() == [45, 7, 45]
    assert str(obs["pred_id"].dtype) == "Int64" and obs["pred_id"].tolist() == [3, pd.NA, 0]
    frame = pd.DataFrame({"recording": "r", "frame": [0, 0, 1], "track": [45.0, 7.0, 45.0],
                          "detection": [1, 2, 1], "x_um": [0.0, 1.0, 0.0], "y_um": 0.0,
                          "pred_id": [3.0, np.nan, -0.0], "pred_valid": [True, False, True]})
    api = validate(frame, OBSERVATIONS)
    for column in ("track", "detection", "pred_id"):
        pd.testing.assert_series_equal(obs[column], api[column])


@pytest.mark.parametrize("cell", ["1.5", "-0.25", "2.5e-3"])
def test_a_fractional_id_in_a_numeric_column_is_refused(tmp_path, cell):
    path = _csv(tmp_path, ["r,0,1,1,0,0,3,true", f"r,0,{cell},2,1,0,4.0,true"])
    assert _refusal(path) == (f"FILE, column 'track', row 2: an id must be a whole number or "
                              f"a text, found the fractional number {float(cell)!r}")


def test_decimal_ids_above_2_53_are_refused_as_floats_are(tmp_path):
    path = _csv(tmp_path, ["r,0,1.0,1,0,0,3,true", "r,0,1e+16,2,1,0,4,true"])
    assert _refusal(path) == (
        "FILE, column 'track', row 2: an id stored as a floating-point number (or written as a "
        "decimal) of 2^53 or more may have lost its exact value; store ids as integers or text")


def test_text_ids_that_look_like_numbers_stay_text(tmp_path):
    # A column with one text id is text: 1.5 beside AVAL, 7.0 beside 007, 1e3 (no sign).
    path = _csv(tmp_path, ["r,0,AVAL,1,0,0,1e3,true", "r,0,1.5,2,1,0,8,true",
                           "r,1,AVAL,1,0,0,1e3,true"])
    obs = load_table(path, OBSERVATIONS)
    assert obs["track"].tolist() == ["AVAL", "1.5", "AVAL"]
    assert obs["pred_id"].tolist() == ["1e3", "8", "1e3"]
    path = _csv(tmp_path, ["r,0,007,1,0,0,p,true", "r,0,7.0,2,1,0,q,true"])
    assert load_table(path, OBSERVATIONS)["track"].tolist() == ["007", "7.0"]


def test_empty_text_id_is_refused():
    table = pd.DataFrame({"recording": ["r", ""], "animal_id": ["a", "b"],
                          "provenance_group": "g"})
    with pytest.raises(InputError, match="column 'recording', row 2: empty id"):
        validate(table, RECORDINGS, source="recordings.csv")


def test_convert_output_with_padded_recording_ids_is_accepted(tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    _csv(source, ["001,0,1,1,0,0,1,true", "001,1,1,1,0,0,1,true", "002,0,1,1,0,0,1,true"],
         name="observations.csv")
    (source / "recordings.csv").write_text("recording,animal_id,provenance_group\n"
                                           "001,007,lab\n002,7,lab\n", encoding="utf-8")
    convert(source, "parquet", tmp_path / "out")
    assert (tmp_path / "out" / "recordings.csv").read_text().splitlines()[1:] == [
        "001,007,lab", "002,7,lab"]
    dataset = load_dataset(tmp_path / "out")
    assert dataset.recordings["recording"].tolist() == ["001", "002"]
    assert dataset.recordings["animal_id"].tolist() == ["007", "7"]


def test_integer_observation_ids_meet_text_recording_ids(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    _csv(folder, ["1,0,1,1,0,0,1,true"], name="observations.csv")
    (folder / "recordings.csv").write_text("recording,animal_id,provenance_group\n1,a,g\n"
                                           "r2,b,g\n", encoding="utf-8")
    assert load_dataset(folder).recordings["recording"].tolist() == ["1"]


def test_ids_that_start_with_a_space_round_trip_through_csv(tmp_path):
    # pandas 3 keeps text in a string dtype, not object: such cells must still be quoted,
    # or the reader (which skips a cell's initial spaces) reads " 0" as "0" and " " as missing.
    ids = [" 0", " ", "a"]
    rec = validate(pd.DataFrame({"recording": ids, "animal_id": ids, "provenance_group": ids}),
                   RECORDINGS)
    path = write_table(rec, tmp_path / "recordings.csv")
    assert path.read_text().splitlines()[1:] == ['" 0"," 0"," 0"', '" "," "," "', '"a","a","a"']
    assert load_table(path, RECORDINGS)["recording"].tolist() == [" 0", " ", "a"]


# ----------------------------------------------------------------------- the property

# generated from the rules the readers enforce (values.hidden_character, the missing-value
# markers, decimal numbers read as numbers), not a copy of them
_text_id = st.text(st.characters(), min_size=1, max_size=8).filter(
    lambda t: hidden_character(t) is None and t not in MISSING_MARKERS
    and re.fullmatch(DECIMAL_NUMBER, t.strip()) is None)
_int_id = st.integers(-2 ** 63, 2 ** 63 - 1)
_big_id = st.integers(2 ** 63, 2 ** 64 - 1).map(str)
_padded = st.integers(0, 999).map(lambda n: f"0{n}")


def _text_column(values: list[str]) -> bool:
    """Text a CSV keeps as text: ids beyond int64 only beside an id that is not an integer
    (a column of integers only, one beyond int64, is refused)."""
    return not all(re.fullmatch(CANONICAL_INTEGER, v) for v in values) or \
        all(-2 ** 63 <= int(v) < 2 ** 63 for v in values)


_column = st.one_of(st.lists(_int_id, min_size=1, max_size=6, unique=True),
                    st.lists(st.one_of(_text_id, _padded, _big_id, _int_id.map(str)),
                             min_size=1, max_size=6, unique=True).filter(_text_column))


def _written(values: list) -> list[str]:
    return [str(v) for v in values]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tracks=_column, preds=_column, recordings=_column, suffix=st.sampled_from([".csv", ".parquet"]))
def test_every_written_table_round_trips_its_ids(tmp_path, tracks, preds, recordings, suffix):
    n = len(tracks)
    preds = (preds * n)[:n]
    # the observations' columns as written (pred_id cut to the tracks, one recording)
    assume(_text_column([str(recordings[0])]) and _text_column([str(p) for p in preds]))
    obs = pd.DataFrame({"recording": [recordings[0]] * n, "frame": 0, "track": tracks,
                        "detection": tracks, "x_um": np.arange(n, dtype=float), "y_um": 0.0,
                        "pred_id": preds, "pred_valid": True})
    obs = validate(obs, OBSERVATIONS)
    rec = validate(pd.DataFrame({"recording": recordings, "animal_id": recordings,
                                 "provenance_group": recordings}), RECORDINGS)
    for table, schema, name in ((obs, OBSERVATIONS, f"obs{suffix}"),
                                (rec, RECORDINGS, "recordings.csv")):
        path = write_table(table, tmp_path / name)
        back = load_table(path, schema)
        for column in ("recording", "track", "detection", "pred_id", "animal_id",
                       "provenance_group"):
            if column in table.columns:
                assert _written(back[column]) == _written(table[column]), column
        # Written again, the file is the same bytes.
        again = write_table(back, tmp_path / f"again{suffix if name.startswith('obs') else '.csv'}")
        assert again.read_bytes() == path.read_bytes()
    # The partitions file made from the recording table keeps its recording ids too.
    parts = make_partitions(load_table(tmp_path / "recordings.csv", RECORDINGS))
    loaded = load_partitions(write_partitions(parts, tmp_path / f"p{len(list(tmp_path.iterdir()))}.json"))
    assert _written(loaded.partitions["development"]) == _written(sorted(rec["recording"]))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tracks=_column, preds=_column)
def test_nwb_round_trips_its_ids(tmp_path, tracks, preds):
    pytest.importorskip("pynwb", reason="the 'nwb' extra is not installed")
    from trackverify.io.nwb import read_nwb, write_nwb

    n = len(tracks)
    obs = validate(pd.DataFrame({"recording": "rec", "frame": 0, "track": tracks,
                                 "detection": tracks, "x_um": np.arange(n, dtype=float),
                                 "y_um": 0.0, "z_um": 0.0, "pred_id": (preds * n)[:n],
                                 "pred_valid": True}), OBSERVATIONS)
    back, _ = read_nwb(write_nwb(obs, tmp_path / "r.nwb"))
    back = back.set_index(back["x_um"].round(6))
    want = obs.set_index(obs["x_um"].round(6)).loc[back.index]
    for column in ("track", "detection", "pred_id"):
        assert _written(back[column]) == _written(want[column]), column


def test_read_table_keeps_other_columns_typed(tmp_path):
    path = _csv(tmp_path, ["r,0,1,1,NaN,0,1,true"])
    table = read_table(path)
    assert table["x_um"].isna().all() and table["frame"].dtype == np.int64


def test_evaluate_matches_integer_and_text_recording_ids(tmp_path):
    from trackverify.metrics.tracking import evaluate_tracking

    reference = pd.DataFrame({"recording": [1, 1], "frame": [0, 1], "track": [5, 5],
                              "detection": [1, 1], "x_um": 0.0, "y_um": 0.0})
    predictions = pd.DataFrame({"recording": ["1", "1"], "frame": [0, 1], "pred_id": [9, 9],
                                "detection": ["1", "1"]})
    results = evaluate_tracking(reference, predictions, zero_distance_um=1.0)
    # One recording; both observations are matched by their detection (2 of 2 correct).
    assert list(results) == ["1", "pooled"]
    assert results["1"]["correct_observations"] == 2 and results["1"]["clr_fn"] == 0


# ------------------------------------------------------------ ids of one meaning, two files

def _reference_and_predictions(pred_detection):
    reference = pd.DataFrame({"recording": "r", "frame": [0, 0], "track": [5, 6],
                              "detection": [1, 2], "x_um": [0.0, 10.0], "y_um": 0.0})
    predictions = pd.DataFrame({"recording": "r", "frame": [0, 0], "pred_id": [9, 8],
                                "detection": pred_detection})
    return reference, predictions


@pytest.mark.parametrize("written", [["a", "b"], ["01", "02"], ["1.0", "2.0"]])
def test_integer_and_text_ids_none_written_as_an_integer_are_refused(written):
    # Today's join would match nothing and score every prediction as a miss (exit 0).
    from trackverify.metrics.tracking import evaluate_tracking

    reference, predictions = _reference_and_predictions(written)
    with pytest.raises(InputError) as info:
        evaluate_tracking(reference, predictions, 1.0, reference_source="ref.csv",
                          predictions_source="pred.parquet")
    assert str(info.value) == (
        f"pred.parquet, column 'detection', row 1: the detection ids are integers in ref.csv "
        f"but text here ({written[0]!r}), and none is written as an integer, so no id can be "
        "the same in both; write the detection ids one way in both files")


def test_an_integer_id_meets_the_text_that_writes_it_and_no_other():
    from trackverify.metrics.tracking import evaluate_tracking

    # '1' is detection 1; 'x' is a detection the reference does not have (an extra).
    reference, predictions = _reference_and_predictions(["1", "x"])
    result = evaluate_tracking(reference, predictions, 1.0)["r"]
    assert (result["correct_observations"], result["extra_predicted_observations"]) == (1, 1)


def test_detections_join_observations_by_the_same_rule():
    from trackverify.benchmark.dataset import check_detections

    observations = pd.DataFrame({"recording": "r", "frame": [0, 0], "detection": [1, 2],
                                 "x_um": [0.0, 1.0], "y_um": 0.0})
    detections = observations.assign(detection=["1", "2"])
    check_detections(observations, detections, "detections.parquet")  # the same detections
    assert observations["detection"].tolist() == [1, 2]  # the input is not modified
    with pytest.raises(InputError, match=r"detections.parquet, column 'detection', row 1: the "
                       r"detection ids are integers in the observations but text here \('d1'\)"):
        check_detections(observations, observations.assign(detection=["d1", "d2"]),
                         "detections.parquet")


def _split(tmp_path, recordings: str, candidates: str):
    from tests.conftest import run_cli

    (tmp_path / "recordings.csv").write_text("recording,animal_id,provenance_group\n"
                                             + recordings, encoding="utf-8")
    (tmp_path / "pairs.csv").write_text("recording_a,recording_b\n" + candidates,
                                        encoding="utf-8")
    out = tmp_path / "p.json"
    done = run_cli("split", "--recordings", tmp_path / "recordings.csv",
                   "--same-animal-candidates", tmp_path / "pairs.csv", "--out", out)
    return (done.returncode, done.stdout, done.stderr), out


def test_split_candidates_follow_the_id_rule(tmp_path):
    # 1.0 as pandas writes an integer is recording 1; the pair is quarantined.
    (code, _, _), out = _split(tmp_path, "1,a,g\n2,b,g\n3,c,g\n", "1.0,3\n")
    assert code == 0
    assert [q["recording"] for q in load_partitions(out).quarantine] == ["1", "3"]
    # '01' is not recording 1 (and before, '1.0' beside a text id was not either).
    (code, _, err), _ = _split(tmp_path, "1,a,g\nr2,b,g\n3,c,g\n", "01,3\n")
    assert code == 2 and "pairs.csv, column 'recording_a', row 1: recording '01' is not in " \
        "the recording table" in err
    (code, _, err), _ = _split(tmp_path, "1,a,g\nr2,b,g\n3,c,g\n", "3,NA\n")
    assert code == 2 and "pairs.csv, column 'recording_b', row 1: the id 'NA' is a " \
        "missing-value marker" in err


def test_columns_mapped_to_ids_are_read_as_written(tmp_path):
    # --columns track=trk,pred_id=id: the file's 'trk' and 'id' are id columns too (before,
    # pandas read them: 007 and 7 became one track, 'NA' a missing prediction).
    from trackverify.io.tracks import read_tracks

    (tmp_path / "ref.csv").write_text("recording,frame,trk,x_um,y_um\nr,0,007,0,0\nr,0,7,5,0\n",
                                      encoding="utf-8")
    ref = read_tracks(tmp_path / "ref.csv", "reference", fmt="table", columns={"trk": "track"})
    assert ref.table["track"].tolist() == ["007", "7"]
    (tmp_path / "pred.csv").write_text("recording,frame,id,x_um,y_um,pred_valid\n"
                                       "r,0,1,5,0,true\nr,0,NA,0,0,false\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_tracks(tmp_path / "pred.csv", "predictions", fmt="table", columns={"id": "pred_id"})
    assert str(info.value) == f"{tmp_path / 'pred.csv'}, column 'pred_id', row 2 (line 3): " + \
        MARKER.format("NA")
