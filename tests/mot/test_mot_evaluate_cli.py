"""``trackverify evaluate`` on good and bad input: a clear one-line message and exit 2, or a
documented count; never a traceback."""

from __future__ import annotations

import re

import json

import pandas as pd
import pytest

from trackverify import evaluate_tracking
from trackverify.cli.app import main

REF = pd.DataFrame({"recording": ["a"] * 4, "frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
                    "x_um": [0.0, 20.0, 0.5, 20.5], "y_um": [0.0, 0.0, 0.0, 0.0],
                    "z_um": [1.0, 1.0, 1.0, 1.0], "detection": [0, 1, 2, 3]})
PRED = pd.DataFrame({"recording": ["a"] * 4, "frame": [0, 0, 1, 1], "pred_id": [7, 8, 7, 8],
                     "detection": [0, 1, 2, 3]})


def run(tmp_path, ref, pred, *extra, ref_name="ref.csv", pred_name="pred.csv", capsys=None):
    for df, name in ((ref, ref_name), (pred, pred_name)):
        path = tmp_path / name
        if isinstance(df, str):
            path.write_text(df)
        elif name.endswith(".parquet"):
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--reference", str(tmp_path / ref_name), "--predictions",
              str(tmp_path / pred_name), "--out", str(tmp_path / "out"), *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return exit_info.value.code, captured.out, captured.err


def results(tmp_path):
    return json.loads((tmp_path / "out" / "results.json").read_text())


def test_clean_run_writes_results(tmp_path, capsys):
    code, out, _ = run(tmp_path, REF, PRED, capsys=capsys)
    assert code == 0 and "results.json" in out
    data = results(tmp_path)
    assert data["settings"] == {"linked_by": "detection", "zero_distance_um": 5.0,
                                "match_distance_um": 2.5, "division_frame_buffer": 1,
                                "definition": "traccuracy", "sparse_reference": False,
                                "protocols": [], "graph_matching": "detection"}
    a = data["tracking_gt"]["a"]
    assert a["correct_observation_rate"] == 1.0 and a["hota"] == 1.0 and a["mota"] == 1.0
    assert set(data["tracking_gt"]) == {"a", "pooled"}


def test_parquet_and_positions(tmp_path, capsys):
    pred = PRED.drop(columns="detection").assign(x_um=[0.0, 20.0, 3.0, 20.5],
                                                 y_um=0.0, z_um=1.0)
    code, _, _ = run(tmp_path, REF.drop(columns="detection"), pred, ref_name="ref.parquet",
                     pred_name="pred.parquet", capsys=capsys)
    assert code == 0
    a = results(tmp_path)["tracking_gt"]["a"]
    # Frame 1, track 1: the prediction is 2.5 um away -> similarity exactly 0.5 -> matched.
    assert (a["clr_tp"], a["correct_observation_rate"]) == (4, 1.0)
    assert results(tmp_path)["settings"]["linked_by"] == "position"


def test_unknown_recording(tmp_path, capsys):
    pred = pd.concat([PRED, PRED.iloc[:1].assign(recording="zz")])
    code, _, err = run(tmp_path, REF, pred, capsys=capsys)
    assert code == 2 and "column 'recording', row 5" in err and "'zz'" in err


def test_null_pred_id(tmp_path, capsys):
    pred = PRED.astype({"pred_id": "Int64"})
    pred.loc[2, "pred_id"] = pd.NA
    # Without a pred_valid column a blank id is a detection the tracker gave no identity (the
    # one reader's rule, as in the audit): a missing prediction.
    code, _, err = run(tmp_path, REF, pred, capsys=capsys)
    a = results(tmp_path)["tracking_gt"]["a"]
    assert code == 0 and a["correct_observation_rate"] == 0.75 and a["clr_fn"] == 1
    code, _, err = run(tmp_path, REF, pred.assign(pred_valid=True), capsys=capsys)
    assert code == 2 and "pred_valid = false" in err
    # Marked invalid, a null pred_id is simply a missing prediction.
    code, _, _ = run(tmp_path, REF, pred.assign(pred_valid=pred["pred_id"].notna()),
                     capsys=capsys)
    a = results(tmp_path)["tracking_gt"]["a"]
    assert code == 0 and a["correct_observation_rate"] == 0.75 and a["clr_fn"] == 1


def test_two_predictions_on_one_detection_count_as_extra(tmp_path, capsys):
    pred = pd.concat([PRED, pd.DataFrame({"recording": ["a"], "frame": [1], "pred_id": [9],
                                          "detection": [2]})])
    code, _, _ = run(tmp_path, REF, pred, capsys=capsys)
    a = results(tmp_path)["tracking_gt"]["a"]
    assert code == 0
    assert a["extra_predicted_observations"] == 1 and a["correct_observation_rate"] == 1.0
    assert (a["clr_tp"], a["clr_fp"]) == (4, 1)


def test_same_pred_id_twice_in_a_frame(tmp_path, capsys):
    pred = PRED.assign(pred_id=[7, 7, 7, 8])
    code, _, err = run(tmp_path, REF, pred, capsys=capsys)
    assert code == 2 and "pred_id 7 is given to two predictions in frame 0" in err
    assert "row 2" in err


def test_mismatched_dimensionality(tmp_path, capsys):
    pred = PRED.assign(x_um=0.0, y_um=0.0)
    code, _, err = run(tmp_path, REF, pred, capsys=capsys)
    assert code == 2 and "2-D but the reference is 3-D" in err


def test_empty_files(tmp_path, capsys):
    code, _, err = run(tmp_path, REF, "", capsys=capsys)
    assert code == 2 and "the file is empty" in err
    code, _, err = run(tmp_path, "recording,frame,track,x_um,y_um\n", PRED, capsys=capsys)
    assert code == 2 and "has no rows" in err
    # Predictions with a header and no rows: every reference observation is missed.
    code, _, _ = run(tmp_path, REF.drop(columns="detection"),
                     "recording,frame,pred_id,x_um,y_um,z_um\n", capsys=capsys)
    a = results(tmp_path)["tracking_gt"]["a"]
    assert code == 0 and a["clr_fn"] == 4 and a["correct_observation_rate"] == 0.0
    assert a["motp"] is None and a["hota"] == 0.0


def test_no_way_to_link(tmp_path, capsys):
    code, _, err = run(tmp_path, REF.drop(columns="detection"), PRED.drop(columns="detection"),
                       capsys=capsys)
    assert code == 2 and "predictions need either a 'detection' column" in err


def test_bad_zero_distance_and_missing_file(tmp_path, capsys):
    code, _, err = run(tmp_path, REF, PRED, "--zero-distance-um", "0", capsys=capsys)
    assert code == 2 and "zero_distance_um must be a positive number" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--reference", str(tmp_path / "nope.csv"), "--predictions",
              str(tmp_path / "pred.csv")])
    assert exit_info.value.code == 2 and "file not found" in capsys.readouterr().err


def test_recording_named_pooled_is_refused():
    with pytest.raises(Exception, match="may not be called 'pooled'"):
        evaluate_tracking(REF.assign(recording="pooled"), PRED.assign(recording="pooled"))


def _swapped_six():
    """Six reference tracks over 50 frames; the tracker swaps ids 0 and 1 on frames 25-39."""
    rows = [(t, i, 8.0 * i) for t in range(50) for i in range(6)]
    ref = pd.DataFrame(rows, columns=["frame", "track", "x_um"]).assign(
        recording="w", y_um=0.0, detection=lambda d: d["track"])
    swapped = ref["frame"].between(25, 39) & ref["track"].isin([0, 1])
    pred = ref[["recording", "frame", "detection"]].assign(
        pred_id=ref["track"].where(~swapped, 1 - ref["track"]))
    return ref, pred


def test_evaluate_names_the_wrong_tracks_and_every_switch(tmp_path, capsys):
    ref, pred = _swapped_six()
    result = evaluate_tracking(ref, pred)
    # By hand: track 0 carries id 0 except frames 25-39 (id 1): 35 of 50 correct, switches at
    # 25 (0 -> 1) and 40 (1 -> 0), three runs (two fragmentations), first wrong frame 25.
    wrong = result.tracks[result.tracks["track"].isin([0, 1])]
    assert wrong[["observations", "correct", "identity_switches", "fragmentations"]].values.tolist() \
        == [[50, 35, 2, 2], [50, 35, 2, 2]]
    assert wrong["first_wrong_frame"].tolist() == [25, 25]
    others = result.tracks[~result.tracks["track"].isin([0, 1])]
    assert (others["correct"] == 50).all() and others["first_wrong_frame"].isna().all()
    assert result.events[["frame", "track", "from_id", "to_id"]].values.tolist() == [
        [25, 0, 0, 1], [40, 0, 1, 0], [25, 1, 1, 0], [40, 1, 0, 1]]
    assert result["w"]["identity_switches"] == 4  # the per-track rows sum to the recording
    out = tmp_path / "out"
    code, _, _ = run(tmp_path, ref, pred, "--out", str(out), capsys=capsys)
    assert code == 0
    assert pd.read_csv(out / "events.csv")["frame"].tolist() == [25, 40, 25, 40]
    written = json.loads((out / "results.json").read_text())["identity"]["tracks"]
    assert [t["first_wrong_frame"] for t in written] == [25, 25, None, None, None, None]


def test_evaluate_lists_the_most_wrong_tracks_first_and_says_it_cut_the_list(tmp_path, capsys):
    """13 tracks over 30 frames; track i (1..12) carries the unknown id 100 + i on its last i
    frames (fewer than half, so its own id stays its majority one): i wrong observations,
    first wrong frame 30 - i. The terminal lists the 10 most wrong: tracks 12 down to 3."""
    ref = pd.DataFrame([(t, i, 8.0 * i) for t in range(30) for i in range(13)],
                       columns=["frame", "track", "x_um"]).assign(
        recording="w", y_um=0.0, detection=lambda d: d["track"])
    pred = ref[["recording", "frame", "detection"]].assign(
        pred_id=ref["track"].where(ref["frame"] < 30 - ref["track"], 100 + ref["track"]))
    code, out, _ = run(tmp_path, ref, pred, capsys=capsys)
    assert code == 0
    flat = " ".join(out.split())  # the console may wrap long lines
    assert ("12 of 13 reference tracks are not followed correctly throughout; 12 identity "
            "switches (tracks.csv and events.csv with --out); the 10 with the most wrong "
            "observations:") in flat
    listed = [line.split(":")[0].strip() for line in out.splitlines() if " correct, first " in line]
    assert listed == [f"w track {i}" for i in range(12, 2, -1)]
    assert "w track 12: 18 of 30 correct, first wrong frame 18, 1 switches" in flat
    # The report's table lists them in the same order (all 12: fewer than its 25 rows).
    report = (tmp_path / "out" / "report.html").read_text()
    assert "The 12 with the most wrong observations" in report
    rows = re.findall(r"<tr><td>w</td><td>(\d+)</td><td>30</td>", report)
    assert rows == [str(i) for i in range(12, 0, -1)]


@pytest.mark.parametrize("name", ["w", "é-Ω rec", "r" * 300])
def test_one_recordings_tables_carry_its_name_in_every_row(name):
    """The recording column of a one-recording result, whatever the name's length in bytes,
    is the column pandas makes of the name repeated (its values and its type)."""
    ref, pred = _swapped_six()
    result = evaluate_tracking(ref.assign(recording=name), pred.assign(recording=name))
    for table, rows in ((result.tracks, 6), (result.events, 4), (result.observations, 300)):
        assert table.columns[0] == "recording" and len(table) == rows
        pd.testing.assert_series_equal(table["recording"], pd.Series([name] * rows,
                                                                     name="recording"))


def test_stacking_one_table_leaves_it_as_given_unless_told():
    from trackverify.metrics.tracking import stack_by_recording

    table = pd.DataFrame({"track": [3, 4], "correct": [1, 0]})
    stacked = stack_by_recording([("a", table)])
    assert list(table.columns) == ["track", "correct"]  # copied: the caller's table unchanged
    assert stacked.to_dict("list") == {"recording": ["a", "a"], "track": [3, 4],
                                       "correct": [1, 0]}
    own = stack_by_recording([("a", table)], copy=False)
    pd.testing.assert_frame_equal(own, stacked)
    assert own is table  # the caller's own table, the column inserted in place
