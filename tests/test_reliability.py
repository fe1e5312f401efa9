"""Reliability (issue 18): no traceback ever, deterministic order, nothing wrong accepted.

The corpus (tests/corpus/reliability_cases.py) holds the malformed inputs; this module
holds what is not an input case: the top-level net of ``trackverify.cli.app.main`` and the
stability of orders among ties.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.corpus.make_corpus import clean_observations
from trackverify import stop
from trackverify.cli import app as cli
from trackverify.benchmark.corrupt import equal_ids, label_errors
from trackverify.io.tabular import load_table
from trackverify.tables import OBSERVATIONS, RECORDINGS, validate


def _explode(*args, **kwargs):
    raise RuntimeError("boom\nsecond line")


def test_an_unexpected_exception_ends_in_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(cli.DEBUG_VARIABLE, raising=False)
    monkeypatch.setattr("trackverify.andi.codalab.write_scores", _explode)
    (tmp_path / "ref").mkdir()
    (tmp_path / "res").mkdir()
    with pytest.raises(SystemExit) as info:
        cli.main(["andi", "score", str(tmp_path), str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"trackverify: error: trackverify andi score on {tmp_path}: "
                          "unexpected RuntimeError: boom second line")
    assert "TRACKVERIFY_DEBUG=1" in err


def test_the_debug_variable_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv(cli.DEBUG_VARIABLE, "1")
    monkeypatch.setattr("trackverify.andi.codalab.write_scores", _explode)
    (tmp_path / "ref").mkdir()
    (tmp_path / "res").mkdir()
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["andi", "score", str(tmp_path), str(tmp_path / "out")])


def test_the_termination_signal_is_not_an_exception_a_reader_could_swallow():
    assert not issubclass(stop.Terminated, Exception)


# ------------------------------------------------------------ inputs that once raised


def _verify(table: pd.DataFrame, folder: Path, name: str) -> Path:
    """``verify`` in-process on ``table`` (Parquet); returns the output folder."""
    path = folder / f"{name}.parquet"
    table.to_parquet(path, index=False)
    out = folder / f"out-{name}"
    with pytest.raises(SystemExit) as info:
        cli.main(["verify", "--observations", str(path), "--start", "4", "--recovery-end", "8",
                  "--out", str(out)])
    assert info.value.code == 0
    return out


def test_frames_starting_above_zero_count_from_the_first_frame(tmp_path, capsys):
    """The first frame is the anchor and --start counts from it: frames 1.. (MATLAB) or
    100.. give the results of frames 0.., and the rows keep the input's frame numbers."""
    table = clean_observations(frames=12)
    results = {}
    for first in (0, 1, 100):
        out = _verify(table.assign(frame=table["frame"] + first), tmp_path, f"from{first}")
        doc = json.loads((out / "results.json").read_text())
        assert doc["recordings"]["r1"]["first_frame"] == first
        doc["recordings"]["r1"].pop("first_frame")
        results[first] = doc
        rows = pd.read_parquet(out / "observations.parquet")
        assert sorted(rows["frame"].unique()) == list(range(first, first + 12))
    assert results[1] == results[0] and results[100] == results[0]
    capsys.readouterr()


def test_a_null_pred_id_on_an_invalid_row_is_accepted_and_unlabelled(tmp_path, capsys):
    table = clean_observations(frames=12)
    table["pred_id"] = table["pred_id"].astype("Int64")
    table.loc[5, ["pred_id", "pred_valid"]] = [pd.NA, False]   # frame 1, track 1
    out = _verify(table, tmp_path, "null")
    rows = pd.read_parquet(out / "observations.parquet")
    control = rows[(rows["condition"] == "control")]
    assert control["error"].isna().sum() == 1                  # the invalid row: unlabelled
    assert control.loc[control["error"].isna(), "frame"].tolist() == [1]
    assert (control["error"].dropna() == 0).all()
    capsys.readouterr()


def test_label_errors_ignores_nulls_by_hand():
    table = pd.DataFrame({"track": [0, 1, 0, 1], "pred_id": pd.array([10, 11, pd.NA, 10], "Int64"),
                          "pred_valid": [True, True, False, True]})
    anchors = pd.Series([10, 11], index=[0, 1])
    assert label_errors(table, anchors).tolist() == [0, 0, pd.NA, 1]


def test_equal_ids_never_asks_the_truth_of_a_null():
    ids = np.array([1, pd.NA, None, 2], dtype=object)
    assert equal_ids(ids, 2).tolist() == [False, False, False, True]
    assert equal_ids(ids, np.array([1, 1, pd.NA, 2], dtype=object)).tolist() == [True, False, False, True]


def test_categorical_and_dictionary_columns_read_as_their_values(tmp_path):
    plain = clean_observations()
    expected = validate(plain, OBSERVATIONS, "plain")
    categorical = plain.assign(recording=pd.Categorical(plain["recording"]),
                               track=pd.Categorical(plain["track"]),
                               pred_id=pd.Categorical(plain["pred_id"]))
    pd.testing.assert_frame_equal(validate(categorical, OBSERVATIONS, "c"), expected)
    table = pa.Table.from_pandas(plain, preserve_index=False)
    for column in ("recording", "x_um", "detection"):
        i = table.schema.get_field_index(column)
        table = table.set_column(i, column, pa.compute.dictionary_encode(table.column(column)))
    pq.write_table(table, tmp_path / "dict.parquet")
    pd.testing.assert_frame_equal(load_table(tmp_path / "dict.parquet", OBSERVATIONS), expected)


def test_integer_recording_ids_become_their_text():
    table = clean_observations().assign(recording=7)
    out = validate(table, OBSERVATIONS, "t")
    assert out["recording"].tolist() == ["7"] * len(table)
    recordings = pd.DataFrame({"recording": [7], "animal_id": ["a"], "provenance_group": ["g"]})
    assert validate(recordings, RECORDINGS, "r")["recording"].tolist() == ["7"]
