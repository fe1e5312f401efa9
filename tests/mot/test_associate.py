"""SPEC section 3 diagnostics (trackverify.metrics.association) on hand-computed cases, and the CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from trackverify.metrics.association import (align_identities, association_diagnostics, link_predictions,
                                   pool_diagnostics, switch_events, track_breakdown)
from trackverify.cli.app import main


def table(rows):
    """rows: (frame, track, pred_id or None); None = invalid / missing prediction."""
    df = pd.DataFrame(rows, columns=["frame", "track", "pred_id"])
    df["pred_valid"] = df["pred_id"].notna()
    return df


def test_persistent_swap_adopts_swapped_naming():
    # Tracks 1, 2 over frames 0..9; ids swap from frame 4 on (6 of 10 frames).
    # O[p7, t1] = 4, O[p8, t1] = 6, O[p7, t2] = 6, O[p8, t2] = 4: the alignment takes the
    # swapped naming (8 <-> 1, 7 <-> 2; 12 > 8), so frames 4..9 are the correct ones.
    rows = [(f, 1, 7 if f < 4 else 8) for f in range(10)] + \
           [(f, 2, 8 if f < 4 else 7) for f in range(10)]
    d = association_diagnostics(table(rows))
    assert d["reference_observations"] == 20
    assert d["correct_observations"] == 12 and d["correct_observation_rate"] == 0.6
    assert d["identity_switches"] == 2          # one per track
    assert d["fragmentations"] == 2             # two runs per track


def test_reappearance_after_a_gap_is_not_a_fragment():
    # Track 1 is not observed in frames 3, 4 (the reference itself is absent): one run.
    rows = [(f, 1, 7) for f in (0, 1, 2, 5, 6)]
    d = association_diagnostics(table(rows))
    assert (d["correct_observation_rate"], d["identity_switches"], d["fragmentations"]) == \
        (1.0, 0, 0)


def test_invalid_prediction_splits_a_run_but_is_no_switch():
    rows = [(0, 1, 7), (1, 1, 7), (2, 1, None), (3, 1, 7), (4, 1, 7)]
    d = association_diagnostics(table(rows))
    assert d["correct_observations"] == 4 and d["correct_observation_rate"] == 0.8
    assert (d["identity_switches"], d["fragmentations"]) == (0, 1)


def test_switch_across_a_gap_counts_and_ties_take_the_smaller_id():
    # p7 on frames 0, 1; nothing on 2; p8 on 3, 4. The change across the gap is a switch;
    # two runs -> one fragmentation. O[7, 1] = O[8, 1] = 2: the tie goes to the smaller
    # predicted id 7, so 2 of 5 observations are correct.
    rows = [(0, 1, 7), (1, 1, 7), (2, 1, None), (3, 1, 8), (4, 1, 8)]
    d = association_diagnostics(table(rows))
    assert (d["identity_switches"], d["fragmentations"]) == (1, 1)
    assert d["correct_observations"] == 2


def test_tie_between_tracks_goes_to_the_smaller_reference_id():
    # p7 overlaps tracks 1 and 2 for 2 frames each; track 1 (smaller id) gets it.
    rows = [(0, 1, 7), (1, 1, 7), (0, 2, None), (1, 2, None), (2, 2, 7), (3, 2, 7)]
    d = association_diagnostics(table(rows))
    assert d["correct_observations"] == 2
    swapped = [(f, 3 - t, p) for f, t, p in rows]   # same tie, track ids exchanged
    assert association_diagnostics(table(swapped))["correct_observations"] == 2


def test_extras_include_a_second_prediction_on_one_detection():
    reference = pd.DataFrame({"recording": "r", "frame": [0, 0, 1],
                              "track": [1, 2, 1], "detection": [10, 11, 12]})
    predictions = pd.DataFrame({
        "recording": "r", "frame": [0, 0, 0, 1, 1, 1],
        "detection": [10, 10, 11, 12, 99, 98],
        "pred_id": [8, 7, 9, 7, 5, 6],
        "pred_valid": [True, True, True, True, True, False]})
    linked, extra = link_predictions(reference, predictions)
    # detection 10 carries 7 and 8: 7 is kept, 8 is extra; detection 99 has no reference
    # observation: extra; the invalid prediction on 98 counts nowhere.
    assert extra == 2
    assert linked.sort_values(["frame", "track"])["pred_id"].tolist() == [7, 9, 7]
    d = association_diagnostics(linked, extra)
    assert d["extra_predicted_observations"] == 2 and d["reference_observations"] == 3


def test_pooled_is_sums_with_the_rate_recomputed():
    a = association_diagnostics(table([(0, 1, 7), (1, 1, 7), (2, 1, 8)]), 1)   # 2/3
    b = association_diagnostics(table([(0, 1, 5), (1, 1, None)]), 4)           # 1/2
    pooled = pool_diagnostics([a, b])
    assert pooled["reference_observations"] == 5 and pooled["correct_observations"] == 3
    assert pooled["correct_observation_rate"] == pytest.approx(3 / 5)   # not (2/3 + 1/2) / 2
    assert pooled["identity_switches"] == a["identity_switches"] + b["identity_switches"] == 1
    assert pooled["fragmentations"] == 1 and pooled["extra_predicted_observations"] == 5


def test_cli_reports_the_diagnostics(tmp_path, capsys):
    # Two recordings linked by detection; r1 is the persistent swap above (rate 0.6),
    # r2 has one track with one invalid prediction and one extra on a free detection.
    ref_rows, pred_rows = [], []
    for f in range(10):
        for track, pid in ((1, 7 if f < 4 else 8), (2, 8 if f < 4 else 7)):
            det = f * 10 + track
            ref_rows.append(("r1", f, track, float(track * 20), 0.0, det))
            pred_rows.append(("r1", f, pid, det, True))
    for f in range(4):
        ref_rows.append(("r2", f, 1, 0.0, 0.0, f))
        pred_rows.append(("r2", f, 3, f, f != 2))
    pred_rows.append(("r2", 0, 4, 500, True))
    pd.DataFrame(ref_rows, columns=["recording", "frame", "track", "x_um", "y_um",
                                    "detection"]).to_csv(tmp_path / "ref.csv", index=False)
    pd.DataFrame(pred_rows, columns=["recording", "frame", "pred_id", "detection",
                                     "pred_valid"]).to_csv(tmp_path / "pred.csv", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--reference", str(tmp_path / "ref.csv"), "--predictions",
              str(tmp_path / "pred.csv"), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 0
    assert "pooled" in capsys.readouterr().out
    result = json.loads((tmp_path / "out" / "results.json").read_text())["tracking_gt"]
    r1, r2, pooled = result["r1"], result["r2"], result["pooled"]
    assert (r1["correct_observation_rate"], r1["identity_switches"], r1["fragmentations"],
            r1["extra_predicted_observations"]) == (0.6, 2, 2, 0)
    assert (r2["correct_observation_rate"], r2["identity_switches"], r2["fragmentations"],
            r2["extra_predicted_observations"]) == (0.75, 0, 1, 1)
    assert pooled["reference_observations"] == 24
    assert pooled["correct_observation_rate"] == pytest.approx((12 + 3) / 24)
    assert (pooled["identity_switches"], pooled["fragmentations"],
            pooled["extra_predicted_observations"]) == (2, 3, 1)
    # Canonical metrics beside them: r2 by detection has 3 matches, 1 miss, 1 false positive.
    assert (r2["clr_tp"], r2["clr_fn"], r2["clr_fp"], r2["mota"]) == (3, 1, 1, 0.5)


def _lexicographic_optimum(overlap: np.ndarray) -> dict[int, int]:
    """Brute force: every one-to-one set of positive-overlap pairs; the maximum total, then
    tracks in ascending order each taking the smallest predicted id (none = infinity)."""
    n_preds, n_tracks = overlap.shape
    best_total, best_key, best = -1, None, None
    for perm in itertools.permutations(range(max(n_preds, n_tracks)), n_tracks):
        pairs = {r: p for r, p in enumerate(perm) if p < n_preds and overlap[p, r] > 0}
        total = sum(overlap[p, r] for r, p in pairs.items())
        key = tuple(pairs.get(r, n_preds + 1) for r in range(n_tracks))
        if total > best_total or (total == best_total and key < best_key):
            best_total, best_key, best = total, key, pairs
    return best


def test_ties_are_broken_lexicographically_against_brute_force():
    """Small matrices full of ties; the reported counterexample first."""
    rng = np.random.default_rng(7)
    matrices = [np.array([[0, 1, 1], [2, 0, 2], [2, 2, 0]])]
    matrices += [rng.integers(0, 3, size=(rng.integers(1, 5), rng.integers(1, 5))) for _ in range(300)]
    for overlap in matrices:
        p_idx, r_idx = np.nonzero(overlap)
        counts = overlap[p_idx, r_idx]
        pred_codes, track_codes = np.repeat(p_idx, counts), np.repeat(r_idx, counts)
        aligned = align_identities(track_codes, pred_codes, overlap.shape[1], overlap.shape[0])
        got = {int(r): int(p) for p, r in enumerate(aligned) if r >= 0}
        assert got == _lexicographic_optimum(overlap), overlap


def _resolve_reference(overlap: np.ndarray) -> np.ndarray:
    """The straightforward tie rule: one Hungarian re-solve per candidate pair (each track in
    ascending order tries its positive-overlap ids in ascending order, the first that keeps
    the maximum total wins; none: the track stays unaligned)."""
    from scipy.optimize import linear_sum_assignment

    n_preds, n_tracks = overlap.shape
    weight = overlap.astype(np.float64)
    forbidden = -(weight.sum() + 1.0)

    def total(w):
        rows, cols = linear_sum_assignment(w, maximize=True)
        chosen = w[rows, cols]
        return -np.inf if (chosen == forbidden).any() else chosen.sum()

    best = total(weight)
    aligned = np.full(n_preds, -1, dtype=np.int64)
    for r in range(n_tracks):
        for p in np.flatnonzero(overlap[:, r] > 0):
            trial = weight.copy()
            trial[p, :] = forbidden
            trial[:, r] = forbidden
            trial[p, r] = weight[p, r]
            if total(trial) == best:
                weight, aligned[p] = trial, r
                break
        else:
            weight = weight.copy()
            weight[overlap[:, r] > 0, r] = forbidden
    return aligned


@pytest.mark.parametrize("seed", range(4))
def test_tie_rule_matches_one_solve_per_candidate(seed):
    """Larger matrices than brute force allows, with many ties (small integer overlaps,
    repeated columns) and without (wide ranges), against the re-solving reference."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n_preds, n_tracks = rng.integers(1, 16, size=2)
        high = int(rng.choice([2, 3, 5, 1000]))
        overlap = rng.integers(0, high, size=(n_preds, n_tracks)) * \
            (rng.random((n_preds, n_tracks)) < rng.uniform(0.2, 1.0))
        if n_tracks > 2 and rng.random() < 0.5:
            overlap[:, 1] = overlap[:, 0]  # two tracks with the same overlaps
        p_idx, r_idx = np.nonzero(overlap)
        counts = overlap[p_idx, r_idx]
        got = align_identities(np.repeat(r_idx, counts), np.repeat(p_idx, counts), n_tracks,
                               n_preds)
        np.testing.assert_array_equal(got, _resolve_reference(overlap), err_msg=str(overlap))
def test_counts_do_not_leak_across_the_boundary_between_tracks():
    """Tracks 1, 2, 3 given interleaved and out of order. Where one track's last row meets
    the next track's first row (by track, then frame) the ids differ (7 -> 8), an invalid
    row meets a valid one, and the same id continues (8 -> 8): none of these is a switch or
    a fragmentation. By hand: track 1 = 7 7 | 9 (one switch, two runs); track 2 = 8 8 8
    (clean); track 3 = 8 - 8 (an invalid row splits a run: one fragmentation, no switch)."""
    rows = [(2, 3, 8), (0, 1, 7), (0, 2, 8), (1, 1, 7), (2, 1, 9), (1, 2, 8), (2, 2, 8),
            (0, 3, 8), (1, 3, None)]
    d = association_diagnostics(table(rows))
    assert d["identity_switches"] == 1 and d["fragmentations"] == 2
    # Alignment: O[7,1] = 2, O[9,1] = 1, O[8,2] = 3, O[8,3] = 2 -> 7-1, 8-2, (9 -> 1 taken)
    assert d["correct_observations"] == 5 and d["reference_observations"] == 9
    # the same rows in another order give the same counts
    d2 = association_diagnostics(table(sorted(rows, key=lambda r: (-r[0], r[1]))))
    assert (d2["identity_switches"], d2["fragmentations"], d2["correct_observations"]) == (1, 2, 5)


def test_a_track_of_one_row_next_to_others_counts_nothing():
    rows = [(0, 1, 7), (1, 1, 7), (0, 2, 9), (0, 3, 9), (1, 3, 9)]
    d = association_diagnostics(table(rows))
    assert (d["identity_switches"], d["fragmentations"]) == (0, 0)
    # 9 overlaps track 3 twice, track 2 once: 9 -> 3; track 2 unaligned
    assert d["correct_observations"] == 4


def test_empty_table_has_an_undefined_rate_and_zero_counts():
    d = association_diagnostics(table([]).astype({"frame": int}))
    assert d == {"reference_observations": 0, "correct_observations": 0,
                 "correct_observation_rate": None, "identity_switches": 0,
                 "fragmentations": 0, "extra_predicted_observations": 0}
    assert association_diagnostics(table([]), 3)["extra_predicted_observations"] == 3


def test_a_row_marked_invalid_is_ignored_even_with_an_id():
    """pred_valid False with a pred_id present (a tracker that keeps the id of a lost
    track): the row is neither aligned, nor a switch, and it splits the run."""
    df = table([(0, 1, 7), (1, 1, 8), (2, 1, 7)])
    df.loc[1, "pred_valid"] = False
    d = association_diagnostics(df)
    assert (d["correct_observations"], d["identity_switches"], d["fragmentations"]) == (2, 0, 1)


def test_single_recording_without_predictions():
    d = association_diagnostics(table([(0, 1, None), (1, 1, None), (0, 2, None)]))
    assert (d["correct_observations"], d["identity_switches"], d["fragmentations"]) == (0, 0, 0)
    assert d["correct_observation_rate"] == 0.0


def test_alignment_with_a_zero_overlap_pair_is_not_aligned():
    # p7 only on track 1; track 2 only invalid rows: the solver pairs something with track 2
    # at zero overlap, which must not count as aligned.
    codes = align_identities(np.array([0, 0]), np.array([0, 0]), n_tracks=2, n_preds=2)
    assert codes.tolist() == [0, -1]
    assert align_identities(np.zeros(0, int), np.zeros(0, int), 2, 0).tolist() == []
    assert align_identities(np.zeros(0, int), np.zeros(0, int), 0, 3).tolist() == [-1, -1, -1]
    assert align_identities(np.zeros(0, int), np.zeros(0, int), 2, 2).tolist() == [-1, -1]
    assert align_identities(np.array([1]), np.array([1]), 2, 2).dtype == np.int64


def test_link_predictions_needs_detection_in_both_tables():
    from trackverify.errors import InputError

    reference = pd.DataFrame({"recording": "r", "frame": [0], "track": [1], "detection": [3]})
    predictions = pd.DataFrame({"recording": "r", "frame": [0], "pred_id": [7],
                                "pred_valid": [True]})
    message = ("preds.csv, column 'detection': linking predictions to reference observations "
               "needs a 'detection' column in both tables")
    for ref, pred in ((reference, predictions), (reference.drop(columns="detection"),
                                                 predictions.assign(detection=[3]))):
        with pytest.raises(InputError) as info:
            link_predictions(ref, pred, source="preds.csv")
        assert str(info.value) == message
    with pytest.raises(InputError, match=r"^<predictions>, column 'detection': linking"):
        link_predictions(reference, predictions)


def test_link_predictions_replaces_existing_prediction_columns_and_keeps_inputs():
    reference = pd.DataFrame({"recording": "r", "frame": [0, 0, 1], "track": [1, 2, 1],
                              "detection": [3, 4, 3], "pred_id": [0, 0, 0],
                              "pred_valid": [False] * 3})
    predictions = pd.DataFrame({"recording": "r", "frame": [0, 1, 1], "detection": [4, 3, 3],
                                "pred_id": [8, 9, 6], "pred_valid": np.array([1, 1, 0], object)})
    before = predictions.copy()
    linked, extra = link_predictions(reference, predictions)
    pd.testing.assert_frame_equal(predictions, before)
    assert list(linked.columns) == ["recording", "frame", "track", "detection", "pred_id",
                                    "pred_valid"]
    assert linked["pred_valid"].tolist() == [False, True, True]
    assert linked["pred_id"].iloc[1:].tolist() == [8, 9] and extra == 0


def test_one_observation():
    d = association_diagnostics(table([(0, 1, 7)]))
    assert (d["reference_observations"], d["correct_observations"],
            d["correct_observation_rate"]) == (1, 1, 1.0)
    d = association_diagnostics(table([(4, 2, None)]))
    assert (d["reference_observations"], d["correct_observation_rate"]) == (1, 0.0)
def test_track_breakdown_and_switch_events_by_hand():
    # Track 1: ids 7 7 8 8 (frames 0-3): after the swap to 8 at frame 2 it is wrong.
    # Track 2: ids 8 8 7 - (frames 0-3; frame 3 has no prediction): wrong from frame 2.
    # Track 3: 9 9 9 9, correct throughout. Overlaps: O[7,1]=2, O[8,1]=2, O[8,2]=2, O[7,2]=1,
    # so the alignment keeps 7 <-> 1 and 8 <-> 2 (total 4; the tie 8 <-> 1 / 7 <-> 2 gives 3).
    rows = [(0, 1, 7), (1, 1, 7), (2, 1, 8), (3, 1, 8),
            (0, 2, 8), (1, 2, 8), (2, 2, 7), (3, 2, None),
            (0, 3, 9), (1, 3, 9), (2, 3, 9), (3, 3, 9)]
    t = table(rows)
    per_track = track_breakdown(t)
    assert per_track.drop(columns="first_wrong_frame").to_dict("list") == {
        "track": [1, 2, 3], "observations": [4, 4, 4], "correct": [2, 2, 4],
        "identity_switches": [1, 1, 0], "fragmentations": [1, 1, 0]}
    first = per_track["first_wrong_frame"]
    assert first.iloc[:2].tolist() == [2, 2] and pd.isna(first.iloc[2])
    events = switch_events(t)
    assert events.to_dict("list") == {"frame": [2, 2], "track": [1, 2], "from_id": [7, 8],
                                      "to_id": [8, 7]}
    d = association_diagnostics(t)  # the breakdown sums to the recording's diagnostics
    assert (d["correct_observations"], d["identity_switches"], d["fragmentations"]) == (8, 2, 2)


def test_switches_do_not_leak_across_the_boundary_between_tracks():
    # Track 1 ends with id 7 and track 2 starts with id 8: adjacent in (track, frame) order
    # but on different tracks, so neither a switch nor a fragment.
    rows = [(0, 1, 7), (1, 1, 7), (0, 2, 8), (1, 2, 8)]
    per_track = track_breakdown(table(rows))
    assert per_track["identity_switches"].tolist() == [0, 0]
    assert per_track["fragmentations"].tolist() == [0, 0]
    assert len(switch_events(table(rows))) == 0


def test_tracks_and_tied_ids_by_ascending_id_whatever_the_row_order():
    # Track 2's rows come first, and p8 appears before p7. Track 1: p8 on frames 0, 1, p7 on
    # frames 2, 3 (O[7, 1] = O[8, 1] = 2, a tie: the smaller id 7 is aligned, so frames 0, 1
    # are wrong). Track 2: p9 throughout. Tracks are listed 1, 2.
    rows = [(f, 2, 9) for f in range(4)] + [(0, 1, 8), (1, 1, 8), (2, 1, 7), (3, 1, 7)]
    per_track = track_breakdown(table(rows))
    assert per_track["track"].tolist() == [1, 2]
    assert per_track["correct"].tolist() == [2, 4]
    assert per_track["first_wrong_frame"].iloc[0] == 0 and pd.isna(per_track["first_wrong_frame"].iloc[1])


def test_pred_valid_given_as_integers_is_a_mask():
    # pred_valid 1 / 0 reads as True / False: rows 0, 1, 3 carry p7, row 2 none.
    t = pd.DataFrame({"frame": [0, 1, 2, 3], "track": 1, "pred_id": [7, 7, 8, 7],
                      "pred_valid": [1, 1, 0, 1]})
    d = association_diagnostics(t)
    assert (d["correct_observations"], d["identity_switches"], d["fragmentations"]) == (3, 0, 1)


def test_identity_diagnostics_and_report_default_to_no_extras():
    from trackverify.metrics.association import identity_diagnostics, identity_report

    frame, tracks, preds = np.array([0, 1]), np.array([0, 0]), np.array([0, -1])
    d = identity_diagnostics(frame, tracks, 1, preds)
    assert d == {"reference_observations": 2, "correct_observations": 1,
                 "correct_observation_rate": 0.5, "identity_switches": 0, "fragmentations": 0,
                 "extra_predicted_observations": 0}
    assert identity_report(frame, tracks, [5], preds, [7]).diagnostics == d
    # one observation: its report is not the empty one
    one = identity_report(frame[:1], tracks[:1], [5], preds[:1], [7])
    assert one.diagnostics["reference_observations"] == 1
    assert one.tracks["track"].tolist() == [5] and one.observations["correct"].tolist() == [True]


def test_identity_report_of_no_observation():
    from trackverify.metrics.association import (EVENT_COLUMNS, OBSERVATION_COLUMNS, TRACK_COLUMNS,
                                       identity_report)

    none = np.array([], dtype=np.int64)
    report = identity_report(none, none, [], none, [])
    assert report.diagnostics == {"reference_observations": 0, "correct_observations": 0,
                                  "correct_observation_rate": None, "identity_switches": 0,
                                  "fragmentations": 0, "extra_predicted_observations": 0}
    for frame, columns in ((report.tracks, TRACK_COLUMNS), (report.events, EVENT_COLUMNS),
                           (report.observations, OBSERVATION_COLUMNS)):
        assert list(frame.columns) == list(columns) and len(frame) == 0
    assert identity_report(none, none, [], none, [], 3).diagnostics[
        "extra_predicted_observations"] == 3


def test_link_smallest_by_hand():
    from trackverify.metrics.association import link_smallest

    # reference rows 0 and 2 carry predictions of ranks (5, 3) and (4); row 1 none; one of
    # the four valid predictions lies on no reference row: extras 4 - 2 = 2.
    linked, extra = link_smallest(3, np.array([0, 0, 2]), np.array([5, 3, 4]), 4)
    assert linked.tolist() == [3, -1, 4] and extra == 2


def test_link_predictions_id_dtypes_and_column_order():
    # pred_id in the middle of the reference table: the old columns go, the new ones are
    # appended; integer ids come back as nullable Int64 (None where nothing is linked), other
    # ids as objects (None where nothing is linked).
    reference = pd.DataFrame({"recording": "r", "frame": [0, 0], "pred_id": [1, 1],
                              "track": [1, 2], "detection": [3, 4]})
    for ids, dtype in (([8], "Int64"), (["b"], object), ([2.5], object)):
        predictions = pd.DataFrame({"recording": "r", "frame": [0], "detection": [4],
                                    "pred_id": ids, "pred_valid": [True]})
        linked, _ = link_predictions(reference, predictions)
        assert list(linked.columns) == ["recording", "frame", "track", "detection", "pred_id",
                                        "pred_valid"]
        assert linked["pred_id"].dtype == dtype
        assert linked["pred_id"].iloc[0] is (pd.NA if dtype == "Int64" else None)
        assert linked["pred_id"].iloc[1] == ids[0]


def test_track_breakdown_of_a_last_track_without_any_prediction():
    # Track 1: p7 throughout (correct); track 2, the last, never has a valid prediction:
    # no correct observation, no run, no fragmentation (not -1), wrong from its first frame.
    rows = [(0, 1, 7), (1, 1, 7), (0, 2, None), (1, 2, None)]
    per_track = track_breakdown(table(rows))
    assert per_track.drop(columns="first_wrong_frame").to_dict("list") == {
        "track": [1, 2], "observations": [2, 2], "correct": [2, 0],
        "identity_switches": [0, 0], "fragmentations": [0, 0]}
    assert pd.isna(per_track["first_wrong_frame"].iloc[0])
    assert per_track["first_wrong_frame"].iloc[1] == 0


def test_report_columns_keep_their_types_when_all_is_correct():
    # Every observation correct: first_wrong_frame all null, still nullable Int64; the ids of
    # the switch events are kept as objects (one column for ids of any type).
    rows = [(0, 1, 7), (1, 1, 7), (2, 1, 8), (0, 2, 9)]
    per_track = track_breakdown(table([r for r in rows if r[2] != 8]))
    assert per_track["first_wrong_frame"].dtype == "Int64"
    assert per_track["first_wrong_frame"].isna().all()
    events = switch_events(table(rows))
    assert events.to_dict("list") == {"frame": [2], "track": [1], "from_id": [7], "to_id": [8]}
    assert (events["track"].dtype, events["from_id"].dtype, events["to_id"].dtype) == (
        object, object, object)


def test_identity_report_observations_in_track_then_frame_order():
    from trackverify.metrics.association import identity_report

    # Rows given out of order: track 4 (code 0) carries p7 on frames 1, 0; track 6 (code 1)
    # has no valid prediction on frames 0, 1.
    report = identity_report(np.array([1, 0, 0, 1]), np.array([0, 1, 0, 1]), [4, 6],
                             np.array([0, -1, 0, -1]), [7])
    assert report.observations.to_dict("list") == {
        "frame": [0, 1, 0, 1], "track": [4, 4, 6, 6], "predicted": [True, True, False, False],
        "correct": [True, True, False, False]}
