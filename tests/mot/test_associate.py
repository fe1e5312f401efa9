"""SPEC section 3 diagnostics (trackverify.associate) on hand-computed cases, and the CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from trackverify.associate import (align_identities, association_diagnostics, link_predictions,
                                   pool_diagnostics, switch_events, track_breakdown)
from trackverify.cli import main


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
