"""trackverify audit: verdicts, segments, tracks, thresholds and the command (hand-computed)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.audit.segments import suspect_segments, track_summary
from trackverify.audit.report import identity_timeline
from trackverify.report.timeline import binned
from trackverify.errors import InputError
from tests.conftest import SHARED, input_in_folder, run_cli

SPACING = 8.0  # um between neighbours of the 2 x 3 grid below


def six_neurons(frames: int = 50, swap: tuple[int, int] | None = (25, 39)) -> pd.DataFrame:
    """Six neurons on a 2 x 3 grid (spacing 8 um) drifting 0.3 um per frame in x.

    With ``swap``, the tracker exchanges the ids of neurons 0 and 1 on those frames (inclusive).
    """
    grid = np.array([(x, y) for y in (0.0, SPACING) for x in (0.0, SPACING, 2 * SPACING)])
    rows = []
    for t in range(frames):
        for i, (x, y) in enumerate(grid):
            pred = i
            if swap and swap[0] <= t <= swap[1] and i in (0, 1):
                pred = 1 - i
            rows.append(("worm", t, i, pred, x + 0.3 * t, y))
    return pd.DataFrame(rows, columns=["recording", "frame", "detection", "pred_id", "x_um", "y_um"])


def test_swapped_pair_is_flagged_and_named():
    tracks = six_neurons()
    before = tracks.copy(deep=True)
    result = trackverify.audit(tracks)
    pd.testing.assert_frame_equal(tracks, before)  # the caller's table is untouched
    obs = result.observations
    swapped = obs["frame"].between(25, 39) & obs["pred_id"].isin([0, 1])
    assert (obs.loc[swapped, "verdict"] == "flagged").all()
    assert (obs.loc[~swapped & (obs["frame"] > 0), "verdict"] == "certified").all()
    assert (obs.loc[obs["frame"] == 0, "reason"] == "anchor_frame").all()
    # Each swapped row sits on the other neuron's place: it looks like the other id.
    assert (obs.loc[swapped & (obs["pred_id"] == 0), "lookalike_id"] == 1).all()
    assert (obs.loc[swapped & (obs["pred_id"] == 1), "lookalike_id"] == 0).all()
    segs = result.segments
    assert segs[["pred_id", "first_frame", "last_frame", "frames", "flagged", "abstained",
                 "lookalike_id"]].values.tolist() == [[0, 25, 39, 15, 15, 0, 1],
                                                      [1, 25, 39, 15, 15, 0, 0]]
    assert segs["rank"].tolist() == [1, 2]
    per_track = result.tracks.set_index("pred_id")
    assert per_track.loc[0, "first_flagged_frame"] == 25
    assert pd.isna(per_track.loc[2, "first_flagged_frame"])
    assert per_track.loc[0, "frames_observed"] == 49  # frames 1..49
    assert per_track.loc[0, "share_flagged"] == pytest.approx(15 / 49)
    counts = result.summary["counts"]
    assert (counts["audited"], counts["certified"], counts["flagged"], counts["abstained"]) == (
        6 * 49, 6 * 49 - 30, 30, 0)
    # Default rule: half the anchor frame's median nearest-neighbour spacing, 0.5 x 8 um.
    assert result.summary["threshold"]["per_recording_um"] == {"worm": 4.0}
    assert result.summary["threshold"]["calibrated"] is False


class FixedScores:
    """A verifier that returns the scores it is given (frame -> score), for boundary cases."""

    name = "fixed_scores"
    evidence = "independent"

    def __init__(self, by_frame: dict[int, float]):
        self.by_frame = by_frame

    def score(self, table: pd.DataFrame) -> np.ndarray:
        return table["frame"].map(self.by_frame).to_numpy(dtype=float)


def test_threshold_boundary_is_certified_and_nan_abstains():
    tracks = six_neurons(frames=4, swap=None)
    verifier = FixedScores({0: 0.0, 1: 2.0, 2: np.nextafter(2.0, 3.0), 3: np.nan})
    obs = trackverify.audit(tracks, verifier=verifier, threshold_um=2.0).observations
    by_frame = obs.groupby("frame")["verdict"].unique().map(list).to_dict()
    assert by_frame == {0: [None], 1: ["certified"], 2: ["flagged"], 3: ["abstained"]}
    assert set(obs.loc[obs["frame"] == 0, "reason"]) == {"anchor_frame"}  # trusted, not judged
    assert set(obs.loc[obs["frame"] == 3, "reason"]) == {"verifier_abstained"}
    assert obs.loc[obs["frame"] == 2, "reason"].isna().all()
    assert obs["lookalike_id"].isna().all()  # this verifier registers nothing


def _close_pair(frames: int = 2) -> pd.DataFrame:
    """Ids 0-3 on a square of side 8 um; ids 4 and 5 only 4 um apart (a crowded pair).

    Nearest-other anchor distances s_p: 8, 8, 8, 8, 4, 4 um (median 8)."""
    place = {0: (20, 0), 1: (28, 0), 2: (20, 8), 3: (28, 8), 4: (0, 0), 5: (4, 0)}
    rows = [("r", t, i, i, x, y) for t in range(frames) for i, (x, y) in place.items()]
    return pd.DataFrame(rows, columns=["recording", "frame", "detection", "pred_id", "x_um", "y_um"])


def test_default_threshold_is_half_of_each_identitys_own_spacing():
    # Every row of frame 1 scores 3 um: the crowded pair's own threshold is 0.5 x 4 = 2 um
    # (flagged), the others' 0.5 x 8 = 4 um (certified); one global rule, 0.5 x the median
    # spacing = 4 um, would certify all six.
    result = trackverify.audit(_close_pair(), verifier=FixedScores({0: 0.0, 1: 3.0}))
    later = result.observations[result.observations["frame"] == 1].set_index("pred_id")
    assert later["verdict"].to_dict() == {0: "certified", 1: "certified", 2: "certified",
                                          3: "certified", 4: "flagged", 5: "flagged"}
    assert later["threshold_um"].tolist() == [4.0, 4.0, 4.0, 4.0, 2.0, 2.0]
    assert later["relative_score"].tolist() == [3 / 8] * 4 + [3 / 4] * 2
    assert result.summary["threshold"]["per_recording_um"] == {"r": 4.0}  # the median
    # A threshold given by the user is one value for every identity.
    given = trackverify.audit(_close_pair(), verifier=FixedScores({0: 0.0, 1: 3.0}),
                              threshold_um=3.0).observations
    assert set(given.loc[given["frame"] == 1, "verdict"]) == {"certified"}
    assert set(given.loc[given["frame"] == 1, "threshold_um"]) == {3.0}


def test_segments_of_equal_evidence_rank_the_crowded_identity_first():
    # All six flagged once with the same 5 um score: relative to their own spacing the
    # crowded pair (5 / 4) moved farther than the others (5 / 8), so they come first.
    result = trackverify.audit(_close_pair(), verifier=FixedScores({0: 0.0, 1: 5.0}))
    segs = result.segments
    assert segs["pred_id"].tolist() == [4, 5, 0, 1, 2, 3]
    assert segs["max_relative_score"].tolist() == [1.25, 1.25] + [0.625] * 4
    # Each observation names its segment's rank; rows outside every segment have none.
    obs = result.observations
    later = obs[obs["frame"] == 1].set_index("pred_id")["segment"]
    assert later.to_dict() == {0: 3, 1: 4, 2: 5, 3: 6, 4: 1, 5: 2}
    assert obs.loc[obs["frame"] == 0, "segment"].isna().all()


def _verdict_rows(spec: dict[int, str], recording: str = "r") -> pd.DataFrame:
    """Rows of audited observations: {pred_id: 'CFFA...'} over frames 1, 2, ..."""
    names = {"C": "certified", "F": "flagged", "A": "abstained"}
    rows = [(recording, pid, t + 1, names[v], float(t) if v == "F" else np.nan, None, True)
            for pid, text in spec.items() for t, v in enumerate(text)]
    return pd.DataFrame(rows, columns=["recording", "pred_id", "frame", "verdict", "score",
                                       "lookalike_id", "pred_valid"]).assign(reason=None)


def test_segments_are_maximal_runs_that_do_not_cross_ids():
    # id 5: C F F A C F C ; id 6: F F C. Id 5 ends certified, so a suspect run of 6 starting at
    # its frame 1 must not join id 5's runs; id 7 meets id 6 at a suspect boundary: A | F A.
    rows = pd.concat([_verdict_rows({5: "CFFACFC", 6: "FFCA"}), _verdict_rows({7: "FA"})])
    segs = suspect_segments(rows)
    got = segs[["pred_id", "first_frame", "last_frame", "frames", "flagged", "abstained"]]
    # No relative scores, so the means tie: flagged desc (2, 2, 1, 1, 0), then max score, length.
    assert got.values.tolist() == [[5, 2, 4, 3, 2, 1], [6, 1, 2, 2, 2, 0], [5, 6, 6, 1, 1, 0],
                                   [7, 1, 2, 2, 1, 1], [6, 4, 4, 1, 0, 1]]
    assert segs["max_score"].tolist()[:3] == [2.0, 1.0, 5.0]


def test_a_segments_reason_is_the_one_every_row_shares():
    # id 5: A A (ambiguous, frame_not_registered) -> mixed: none; id 6: A A (both ambiguous);
    # id 7: F A -> a flagged row has no reason: none. Id 8's uncovered run (3 rows) is last.
    rows = _verdict_rows({5: "AA", 6: "AA", 7: "FA", 8: "AAA"})
    rows["reason"] = (["ambiguous", "frame_not_registered", "ambiguous", "ambiguous", None,
                       "ambiguous"] + ["not_in_anchor_frame"] * 3)
    segs = suspect_segments(rows).set_index("pred_id")
    assert segs["reason"].to_dict() == {7: None, 5: None, 6: "ambiguous",
                                        8: "not_in_anchor_frame"}
    assert segs["rank"].to_dict() == {7: 1, 5: 2, 6: 3, 8: 4}


def test_track_summary_shares_by_hand():
    rows = _verdict_rows({5: "CFFA", 6: "CC"})
    per = track_summary(rows).set_index("pred_id")
    assert per.loc[5, ["frames_observed", "share_certified", "share_flagged",
                       "share_abstained"]].tolist() == [4, 0.25, 0.5, 0.25]
    assert per.loc[5, "first_flagged_frame"] == 2
    assert pd.isna(per.loc[6, "first_flagged_frame"])


def test_frames_from_one_and_an_explicit_anchor_frame():
    tracks = six_neurons(frames=12, swap=(8, 11)).assign(frame=lambda d: d["frame"] + 1)
    result = trackverify.audit(tracks)  # anchor = first frame = 1
    assert set(result.observations.loc[result.observations["frame"] == 1, "reason"]) == {"anchor_frame"}
    assert result.segments[["pred_id", "first_frame", "last_frame"]].values.tolist() == [
        [0, 9, 12], [1, 9, 12]]
    later = trackverify.audit(tracks, anchor_frame=4)
    obs = later.observations
    assert set(obs.loc[obs["frame"] < 4, "reason"]) == {"before_anchor"}
    assert obs.loc[obs["frame"] < 4, "verdict"].isna().all()  # not judged: no verdict
    assert later.summary["counts"]["audited"] == 6 * 8  # frames 5..12
    with pytest.raises(InputError, match="no rows in the anchor frame 99"):
        trackverify.audit(tracks, anchor_frame=99)


class ScoresByRow:
    """A verifier that scores every row 0.5 um except the (frame, pred_id) pairs it is given."""

    name = "scores_by_row"
    evidence = "independent"

    def __init__(self, scores: dict[tuple[int, int], float]):
        self.scores = scores

    def score(self, table: pd.DataFrame) -> np.ndarray:
        keys = zip(table["frame"], table["pred_id"])
        return np.array([self.scores.get((int(t), int(p)), 0.5) for t, p in keys])


def _three_ids() -> pd.DataFrame:
    """Ids 0 and 1 from frame 0 (the anchor), id 2 first seen at frame 2; frames 0..3."""
    rows = [(t, p, 10.0 * p, 0.0) for t in range(4) for p in (0, 1)]
    rows += [(t, 2, 20.0, 0.0) for t in (2, 3)]
    return pd.DataFrame(rows, columns=["frame", "pred_id", "x_um", "y_um"])


def test_an_id_first_seen_after_the_anchor_frame_abstains_and_ranks_last():
    # The verifier scores id 2 (0.5 um, under the 1 um threshold), but the anchor frame never
    # held it: nothing a person checked covers it, so its rows abstain (not_in_anchor_frame, no
    # score). Id 0 is flagged at frame 3 (2 um); id 1 abstains at frame 1 (NaN).
    verifier = ScoresByRow({(3, 0): 2.0, (1, 1): np.nan})
    result = trackverify.audit(_three_ids(), verifier=verifier, threshold_um=1.0)
    obs = result.observations.set_index(["frame", "pred_id"])
    assert obs.loc[(2, 2), "verdict"] == obs.loc[(3, 2), "verdict"] == "abstained"
    assert obs.loc[(2, 2), "reason"] == obs.loc[(3, 2), "reason"] == "not_in_anchor_frame"
    assert np.isnan(obs.loc[(2, 2), "score"]) and np.isnan(obs.loc[(3, 2), "relative_score"])
    assert (obs.loc[(1, 1), "verdict"], obs.loc[(1, 1), "reason"]) == ("abstained",
                                                                       "verifier_abstained")
    assert [obs.loc[k, "verdict"] for k in [(1, 0), (2, 0), (3, 0), (2, 1), (3, 1)]] == [
        "certified", "certified", "flagged", "certified", "certified"]
    # Review list: the flagged run, the one-frame abstention, then the uncovered id (2 rows:
    # longer, but no evidence of an error), whose first frame is where to check it.
    segs = result.segments
    assert segs[["rank", "pred_id", "first_frame", "last_frame", "frames", "flagged",
                 "abstained"]].values.tolist() == [[1, 0, 3, 3, 1, 1, 0], [2, 1, 1, 1, 1, 0, 1],
                                                   [3, 2, 2, 3, 2, 0, 2]]
    assert segs["reason"].tolist() == [None, "verifier_abstained", "not_in_anchor_frame"]
    counts = result.summary["counts"]
    # audited: ids 0 and 1 at frames 1-3, id 2 at frames 2-3
    assert (counts["audited"], counts["certified"], counts["flagged"], counts["abstained"]) == (
        8, 4, 1, 3)
    assert counts["abstained_by_reason"] == {"not_in_anchor_frame": 2, "verifier_abstained": 1}
    assert result.tracks.set_index("pred_id").loc[2, "share_abstained"] == 1.0


def test_an_id_twice_in_the_anchor_frame_has_no_anchor_identity():
    # Id 1 names two detections of the anchor frame: neither is "the" checked one.
    tracks = pd.concat([_three_ids(), pd.DataFrame({"frame": [0], "pred_id": [1],
                                                    "x_um": [30.0], "y_um": [0.0]})])
    obs = trackverify.audit(tracks, verifier=ScoresByRow({}), threshold_um=1.0).observations
    later = obs[obs["frame"] > 0].set_index(["frame", "pred_id"])
    assert later.loc[[(1, 1), (2, 1), (3, 1)], "reason"].tolist() == ["no_anchor_identity"] * 3
    assert later.loc[[(2, 2), (3, 2)], "reason"].tolist() == ["not_in_anchor_frame"] * 2
    assert later.loc[[(1, 0), (2, 0), (3, 0)], "verdict"].tolist() == ["certified"] * 3


def test_an_id_first_seen_later_is_judged_from_its_own_start_on_the_real_path():
    # A seventh neuron appears at frame 10 at x = 40 um, on no anchor identity's place, and
    # stays there while the grid drifts 0.3 um a frame in x: its start (frame 10) is not
    # judged; the registration carries that start with the grid (the grid moves rigidly,
    # so the carried place is the start plus the grid's shift since frame 10), and every
    # later row is judged against it: 0.3 um per frame away from where it should be.
    tracks = six_neurons(frames=20, swap=None)
    new = pd.DataFrame({"recording": "worm", "frame": range(10, 20), "detection": 6,
                        "pred_id": 6, "x_um": 40.0, "y_um": 0.0})
    result = trackverify.audit(pd.concat([tracks, new], ignore_index=True))
    obs = result.observations.set_index(["pred_id", "frame"])
    seven = obs.loc[6]
    assert seven.loc[10, "reason"] == "track_start" and seven.loc[10, "verdict"] is None
    assert np.isnan(seven.loc[10, "score"])
    assert set(seven["start_frame"]) == {10} and seven["start_identity"].isna().all()
    later = seven.loc[11:]
    np.testing.assert_allclose(later["expected_x_um"], 40.0 + 0.3 * (later.index - 10), atol=0.02)
    np.testing.assert_allclose(later["expected_y_um"], 0.0, atol=0.02)
    # own distance 0.3 (t - 10); track pooling (h 1) takes the median of the row and its
    # neighbours when larger: the last row keeps its own 2.7, the others their next one's
    # own distance is larger, the median of three rises by one step except at the ends
    assert (later["verdict"] == "certified").all()  # threshold: half of 40 - 19 = 21 um
    assert later["threshold_um"].tolist() == pytest.approx([10.5] * 9)
    assert set(obs.loc[obs.index.get_level_values(0) < 6].query("frame > 0")["verdict"]) == {
        "certified"}
    assert result.summary["counts"]["audited"] == 6 * 19 + 9  # the start is not judged
    assert result.joins.empty  # it starts on no identity's place


def test_detections_table_adds_evidence_but_no_rows():
    tracks = six_neurons(frames=6, swap=None)
    extra = pd.DataFrame({"recording": "worm", "frame": range(6), "detection": 100,
                          "x_um": 40.0, "y_um": 40.0})
    detections = pd.concat([tracks.drop(columns="pred_id"), extra], ignore_index=True)
    result = trackverify.audit(tracks, detections, detections_as_evidence=True)
    assert len(result.observations) == len(tracks)
    assert result.summary["detections_table"] is True
    assert result.summary["detections"] == "positions and evidence"
    missing = detections[detections["detection"] != 3]
    with pytest.raises(InputError, match="is not a row of the detection table"):
        trackverify.audit(tracks, missing)


def test_refuses_a_reference_column_and_reports_null_ids():
    tracks = six_neurons(frames=3, swap=None)
    with pytest.raises(InputError, match="takes no reference"):
        trackverify.audit(tracks.assign(track=1))
    holes = tracks.assign(pred_id=tracks["pred_id"].astype("Int64"))
    holes.loc[7, "pred_id"] = pd.NA
    result = trackverify.audit(holes)
    assert result.observations.loc[7, "reason"] == "no_prediction"
    assert result.summary["counts"]["no_prediction"] == 1


def test_timeline_bins_keep_the_most_severe_verdict():
    timeline = identity_timeline("r", _verdict_rows({5: "CFCC", 6: "CCAC"}))
    starts, codes = binned(timeline, max_columns=2)
    assert list(timeline.rows) == [5, 6] and starts.tolist() == [1, 3]
    assert codes.tolist() == [[4, 2], [2, 3]]  # (C, F) -> flagged; (A, C) -> abstained


def _calibration(path, threshold: float, verifier: str = "registered_distance",
                 options: dict | None = None) -> None:
    """A calibration.json in the run's schema (trackverify.benchmark.certify.calibration_file)."""
    from trackverify.benchmark.certify.calibration_file import CALIBRATION_FORMAT, write_calibration

    write_calibration(path, {
        "format": CALIBRATION_FORMAT, "trackverify_version": "test",
        "verifier": {"name": verifier, "evidence": "independent",
                     "options": options or {"ambiguity_k": 0.5}},
        "threshold_um": threshold,
        "target": {"kind": "target_false_certification_rate", "level": 0.05, "method": "crc",
                   "delta": None},
        "guarantee": "expected false-certification rate <= 0.05 on a new animal",
        "assumption": "calibration and new animals are exchangeable",
        "calibration_animals": 12, "smallest_reachable_target": 0.08, "fit": {},
        "partitions_sha256": None})


def test_command_writes_every_output_and_quotes_a_calibration(tmp_path):
    tracks = tmp_path / "tracks.csv"
    six_neurons().drop(columns="recording").to_csv(tracks, index=False)  # one recording
    calibration = tmp_path / "calibration.json"
    _calibration(calibration, 3.0)
    out = tmp_path / "out"
    done = run_cli("audit", tracks, "--calibration", calibration, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "30 flagged" in done.stdout and "calibrated" in done.stdout
    for name in ("audit.parquet", "segments.csv", "tracks.csv", "audit.json", "report.html"):
        assert (out / name).is_file()
    summary = json.loads((out / "audit.json").read_text())
    assert list(summary["threshold"]["per_recording_um"].values()) == [3.0]
    assert summary["threshold"]["guarantee"]["target"]["level"] == 0.05
    report = (out / "report.html").read_text()
    assert "expected false-certification rate" in report and "exchangeable" in report
    assert pd.read_csv(out / "segments.csv")["pred_id"].tolist() == [0, 1]


def test_a_calibration_for_another_verifier_is_refused(tmp_path):
    calibration = tmp_path / "calibration.json"
    _calibration(calibration, 3.0, verifier="fixed_distance")
    with pytest.raises(InputError, match="fitted for verifier 'fixed_distance'"):
        trackverify.audit(six_neurons(frames=3), verifier="registered_distance",
                          calibration=calibration)
    result = trackverify.audit(six_neurons(frames=3), calibration=calibration)
    assert result.summary["verifier"] == "fixed_distance"  # the calibration's verifier


def test_the_calibrated_verifier_is_built_with_every_recorded_option(tmp_path):
    """A threshold fitted on the relative score applies to the relative score: the audit
    builds the verifier with the file's ``score`` and ``ambiguity_k``, and says so."""
    calibration = tmp_path / "calibration.json"
    _calibration(calibration, 3.0, options={"ambiguity_k": 0.25, "score": "relative"})
    # written before the track pooling: its threshold is of unpooled scores (window 0)
    result = trackverify.audit(six_neurons(frames=3), calibration=calibration)
    assert result.summary["verifier_options"] == {"ambiguity_k": 0.25, "score": "relative",
                                                  "track_window": 0, "merge_k": 0.0}
    _calibration(calibration, 3.0, options={"ambiguity_k": 0.0})  # written before the score
    result = trackverify.audit(six_neurons(frames=3), calibration=calibration)
    assert result.summary["verifier_options"] == {"ambiguity_k": 0.0, "score": "distance",
                                                  "track_window": 0, "merge_k": 0.0}
    _calibration(calibration, 3.0, options={"ambiguity_k": 0.0, "track_window": 3})
    result = trackverify.audit(six_neurons(frames=3), calibration=calibration)
    assert result.summary["verifier_options"] == {"ambiguity_k": 0.0, "score": "distance",
                                                  "track_window": 3, "merge_k": 0.0}


@pytest.mark.parametrize("content, message", [
    ("frame,id,x,y\n0,1,0,0\n", "missing required column"),
    ("frame,pred_id,x_um,y_um,track\n0,1,0,0,1\n", "takes no reference"),
])
def test_command_bad_input_is_one_line_exit_2(tmp_path, content, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    done = run_cli("audit", bad, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_command_refuses_an_edited_calibration_and_an_out_inside_an_input(tmp_path):
    tracks = tmp_path / "tracks.csv"
    six_neurons(frames=3).to_csv(tracks, index=False)
    calibration = tmp_path / "calibration.json"
    _calibration(calibration, 3.0)
    data = json.loads(calibration.read_text())
    data["threshold_um"] = 300.0  # loosened by hand: the recorded sha256 no longer matches
    calibration.write_text(json.dumps(data))
    done = run_cli("audit", tracks, "--calibration", calibration, "--out", tmp_path / "out")
    assert done.returncode == 2 and "sha256" in done.stderr
    before = tracks.read_bytes()
    done = run_cli("audit", tracks, "--out", tmp_path)
    assert done.returncode == 2 and "contains the input" in done.stderr
    assert tracks.read_bytes() == before


FDNC = SHARED / "data" / "fdnc-nerve-freely-moving"


@pytest.mark.skipif(not (FDNC / "tracker_cpd.parquet").is_file(),
                    reason="the real recording ../shared/data/fdnc-nerve-freely-moving is absent")
def test_real_tracker_output_audits_every_row():
    observations = pd.read_parquet(FDNC / "observations.parquet")
    tracker = pd.read_parquet(FDNC / "tracker_cpd.parquet")
    keys = ["recording", "frame", "detection"]
    tracks = tracker.merge(observations[[*keys, "x_um", "y_um", "z_um"]], on=keys)
    result = trackverify.audit(tracks, pd.read_parquet(FDNC / "detections.parquet"))
    obs = result.observations
    assert len(obs) == len(tracks)
    invalid = ~tracks["pred_valid"].to_numpy()
    assert (obs.loc[invalid, "reason"] == "no_prediction").all()
    valid_later = ~invalid & (obs["frame"].to_numpy() > 0)
    assert obs.loc[valid_later, "verdict"].isin(["certified", "flagged", "abstained"]).all()
    # Every suspect audited row lies in exactly one segment.
    suspect = valid_later & (obs["verdict"] != "certified").to_numpy()
    assert result.segments["frames"].sum() == suspect.sum()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian package 'chromium')")
def test_audit_report_renders_in_headless_chromium(tmp_path):
    tracks = tmp_path / "tracks.csv"
    six_neurons().to_csv(tracks, index=False)
    assert run_cli("audit", tracks, "--out", tmp_path / "out").returncode == 0
    report = (tmp_path / "out" / "report.html").resolve()
    text = report.read_text()
    for remote in ("<script", 'src="http', 'href="http', "@import", "url(http"):
        assert remote not in text
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "identity timeline" in done.stdout and done.stdout.count("<svg") >= 2
    assert "not calibrated" in done.stdout


ZEPHIR = SHARED / "data" / "zephir-ift20-demo" / "annotations-g.h5"


@pytest.mark.skipif(not ZEPHIR.is_file(), reason="../shared/data/zephir-ift20-demo is absent")
def test_zephir_native_output_audits_and_no_manual_annotation_is_flagged(tmp_path):
    done = run_cli("audit", ZEPHIR, "--out", tmp_path / "z")
    assert done.returncode == 0, done.stderr
    assert "no calibration" in done.stderr  # voxels taken as um, said in one warning line
    obs = pd.read_parquet(tmp_path / "z" / "audit.parquet")
    assert len(obs) == 512 * 23 and set(obs["provenance"]) == {"ZEIR", "ANTT"}
    manual = obs[obs["provenance"] == "ANTT"]
    assert len(manual) == 53  # SOURCE.md: 53 manually annotated rows (frames 23, 171, 271)
    # Correct by construction: each is scored, nearer its own identity's registered place
    # than any other identity's, and nearer it than its identity's anchor spacing.
    assert manual["score"].notna().all()
    assert (manual["score"] < manual["lookalike_um"]).all()
    assert (manual["relative_score"] < 1.0).all()
    # With one threshold for every identity (the recording's median default) none is flagged.
    median = json.loads((tmp_path / "z" / "audit.json").read_text())["threshold"]["per_recording_um"]
    done = run_cli("audit", ZEPHIR, "--threshold-um", *median.values(), "--out", tmp_path / "g")
    assert done.returncode == 0, done.stderr
    obs = pd.read_parquet(tmp_path / "g" / "audit.parquet")
    assert not (obs.loc[obs["provenance"] == "ANTT", "verdict"] == "flagged").any()


def test_progress_is_reported_by_frame():
    calls = []
    trackverify.audit(six_neurons(frames=60, swap=None),
                      progress=lambda what, done, total: calls.append((what, done, total)))
    frames = [c for c in calls if c[0].endswith("frames")]
    assert frames[-1] == ("worm: frames", 60, 60)  # the last frame of 0..59 registered
    assert [c[1] for c in frames] == [26, 51, 60]  # every 25 frames, then the end


def test_python_out_refuses_a_folder_that_is_or_holds_an_input(tmp_path):
    # The command's --out policy holds from Python: audit(..., out=) and write_audit refuse an
    # out that is, or contains, an input file; nothing is written and the input is untouched.
    from trackverify.audit.write import write_audit

    path, before = input_in_folder(tmp_path, "tracks.csv", six_neurons(frames=3))
    data = path.parent
    for out in (data, path, tmp_path):
        with pytest.raises(InputError, match="tracks.csv"):
            trackverify.audit(path, out=out)
    result = trackverify.audit(pd.read_csv(path), source=str(path))
    with pytest.raises(InputError, match="contains the input"):
        write_audit(result, data)
    assert sorted(p.name for p in data.iterdir()) == ["tracks.csv"]
    assert path.read_bytes() == before
    written = trackverify.audit(path, out=tmp_path / "out")  # elsewhere: written
    assert (tmp_path / "out" / "audit.json").is_file()
    assert json.loads((tmp_path / "out" / "audit.json").read_text())["inputs"]["tracks"] == str(path)
    assert written.summary["counts"]["audited"] == 6 * 2


def test_a_report_with_nothing_scored_draws_its_plots_without_a_warning():
    """No row judged (the ids of frame 1 are not those of the anchor frame: each is a later
    track's first observation): the score plot is empty, and drawing it warns of nothing."""
    import warnings

    from trackverify.audit.report import render_audit_report

    tracks = six_neurons(frames=2, swap=None)
    tracks.loc[tracks["frame"] == 1, "pred_id"] += 100  # no anchor identity
    result = trackverify.audit(tracks)
    assert set(result.observations.loc[result.observations["frame"] == 1, "reason"]) == {"track_start"}
    assert result.summary["counts"]["audited"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = render_audit_report(result)
    assert "Scores of judged observations" in page


def test_segments_rank_by_mean_relative_score_then_flagged_count_uncovered_last():
    # id 1: F F F F at relative 0.6 each (mean 0.6, 4 flagged); id 2: F at 2.0 (mean 2.0,
    # 1 flagged); id 3: F A at 1.0 (mean over the scored row 1.0, 1 flagged); id 4: F F at 0.6
    # (mean 0.6, ties id 1, fewer flagged); id 9: A A A uncovered (last whatever its score).
    # By flagged count the order would be 1, 4, 2, 3; by the mean it is 2, 3, 1, 4, 9.
    rows = _verdict_rows({1: "FFFF", 2: "F", 3: "FA", 4: "FF", 9: "AAA"})
    rows["relative_score"] = [0.6] * 4 + [2.0] + [1.0, np.nan] + [0.6] * 2 + [np.nan] * 3
    rows.loc[rows["pred_id"].eq(9), "reason"] = "not_in_anchor_frame"
    segs = suspect_segments(rows)
    assert segs["pred_id"].tolist() == [2, 3, 1, 4, 9]
    assert segs["flagged"].tolist() == [1, 1, 4, 2, 0]


def test_a_recording_of_the_anchor_frame_alone_audits_nothing(tmp_path):
    """Only the anchor frame: no row to audit, no segment, and the terminal line says so
    instead of giving shares of nothing as 0 %."""
    tracks = tmp_path / "tracks.csv"
    six_neurons(frames=1, swap=None).to_csv(tracks, index=False)
    out = tmp_path / "out"
    done = run_cli("audit", tracks, "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("6 rows: 6 rows in the anchor frame (trusted); none judged;")
    assert "%" not in done.stdout
    summary = json.loads((out / "audit.json").read_text())
    assert summary["counts"]["audited"] == 0 and summary["counts"]["rows"] == 6
    assert len(pd.read_csv(out / "segments.csv")) == 0
    assert (pd.read_parquet(out / "audit.parquet")["reason"] == "anchor_frame").all()


def test_identities_stacked_on_one_point_are_not_certified():
    """Three identities at (5, 5) in every frame: each one's anchor spacing is 0, so the
    default threshold (half of it) is 0 and a score of 0 certified all 9 later rows; no
    distance tells them apart, so those rows abstain with ``no_spacing`` (the anchor frame's
    own 3 rows stay trusted)."""
    frames = np.repeat(np.arange(4), 3)
    tracks = pd.DataFrame({"recording": "r1", "frame": frames, "pred_id": np.tile([1, 2, 3], 4),
                           "x_um": 5.0, "y_um": 5.0, "pred_valid": True})
    result = trackverify.audit(tracks)
    later = result.observations[result.observations["frame"] > 0]
    assert later["verdict"].tolist() == ["abstained"] * 9
    assert later["reason"].tolist() == ["no_spacing"] * 9
    first = result.observations[result.observations["frame"] == 0]
    assert first["verdict"].tolist() == [None] * 3  # trusted, not judged
    assert first["reason"].tolist() == ["anchor_frame"] * 3


def test_an_anchor_frame_of_thousands_of_identities_is_refused_before_the_kernel(tmp_path):
    """registered_distance's deformation kernel, and the check of the anchor frame's labels
    (the reference check's neighbour search), lay out every pair of anchor identities
    (identities x identities x axes); beyond io.bounded.MAX_LAYOUT_CELLS (5e7: 4,082
    identities in 3-D) the audit says so in one line, at once, before any verifier runs,
    instead of asking for 9 GiB (20,000 identities) and running out of memory."""
    import subprocess
    import sys

    from trackverify.io.bounded import MAX_LAYOUT_CELLS

    n = int((MAX_LAYOUT_CELLS / 3) ** 0.5) + 1  # 4,083: one more than fits
    grid = np.arange(n, dtype=float)
    table = pd.DataFrame({"recording": "r", "frame": np.repeat([0, 1], n),
                          "pred_id": np.tile(np.arange(n), 2), "x_um": np.tile(grid * 7.0, 2),
                          "y_um": 0.0, "z_um": np.tile(grid % 5, 2)})
    path = tmp_path / "tracks.csv"
    table.to_csv(path, index=False)
    done = subprocess.run([sys.executable, "-m", "trackverify", "audit", str(path), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"trackverify: error: {path}: recording 'r' has {n} identities in frame 0: the "
        "reference check (each track's nearest neighbours) lays out every pair of "
        f"them, {n * n * 3:.3g} cells ({n} x {n} x 3), more than the 5e+07 allowed (at most "
        f"{n - 1} identities)")
    assert not (tmp_path / "out").exists()


def test_the_report_draws_the_twelve_most_flagged_recordings(tmp_path):
    """Twenty recordings, recording k holding k flagged observations (an identity 5 um off
    its place in k later frames of 20, threshold 1 um): the report draws the 12 with the most
    (r19 ... r8), says how many are not drawn, and draws none of the others."""
    from trackverify.audit.report import render_audit_report

    rows = []
    for k in range(20):
        for frame in range(21):
            off = 5.0 if 1 <= frame <= k else 0.0
            rows += [(f"r{k:02d}", frame, 1, off, 0.0), (f"r{k:02d}", frame, 2, 20.0, 0.0)]
    table = pd.DataFrame(rows, columns=["recording", "frame", "pred_id", "x_um", "y_um"])
    result = trackverify.audit(table, threshold_um=1.0, verifier="fixed_distance")
    report = render_audit_report(result)
    assert "The 12 recordings with the most flagged observations of 20 are drawn." in report
    drawn = [k for k in range(20) if f"r{k:02d}: identity timeline" in report]
    assert drawn == list(range(8, 20))


def test_decimal_ids_written_by_pandas_audit_as_the_dataframe_does(tmp_path):
    # pandas writes an integer id column holding a blank as 10.0, 9.0, ...: through the
    # command they are the integers the DataFrame's floats are, in numeric order (as text,
    # '10.0' < '100.0' < '2.0').
    tracks = six_neurons(frames=12, swap=(5, 8))
    tracks["pred_id"] = tracks["pred_id"].map({0: 10, 1: 9, 2: 100, 3: 2, 4: 45, 5: 7})
    tracks["pred_id"] = tracks["pred_id"].astype(float).where(tracks.index < len(tracks) - 1)
    tracks["pred_valid"] = tracks["pred_id"].notna()
    tracks.to_csv(tmp_path / "tracks.csv", index=False)
    assert "worm,0,0,10.0," in (tmp_path / "tracks.csv").read_text()
    api = trackverify.audit(tracks)
    done = run_cli("audit", tmp_path / "tracks.csv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    cli_tracks = pd.read_csv(tmp_path / "out" / "tracks.csv")
    assert cli_tracks["pred_id"].tolist() == api.tracks["pred_id"].tolist() == [2, 7, 9, 10, 45,
                                                                                100]
    cli_segments = pd.read_csv(tmp_path / "out" / "segments.csv")
    assert cli_segments[["pred_id", "lookalike_id"]].values.tolist() == \
        api.segments[["pred_id", "lookalike_id"]].astype(int).values.tolist() == [[9, 10], [10, 9]]


def test_a_threshold_far_beyond_the_scores_is_named_not_drawn(tmp_path):
    """A threshold of 1e308 um certifies every row; the score plot names it beside the axis
    instead of drawing a line there (which overflowed matplotlib's tick arithmetic with a
    RuntimeWarning); a threshold inside the range is still drawn."""
    import warnings

    from trackverify.audit.report import _score_plot

    obs = pd.DataFrame({"verdict": ["certified", "flagged", "certified"], "reason": [None] * 3,
                        "score": [0.5, 3.0, 1.0], "relative_score": [0.1, 0.6, 0.2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = _score_plot(obs, {"source": "user", "per_recording_um": {"r": 1e308}})
        near = _score_plot(obs, {"source": "user", "per_recording_um": {"r": 2.0}})
    assert "beyond the axis" in far and "beyond the axis" not in near
