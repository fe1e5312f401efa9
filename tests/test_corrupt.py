"""Corruption suite: every condition's labels, computed by hand on a 4-track, 10-frame table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import observation_table
from trackverify.metrics.association import association_diagnostics
from trackverify.benchmark.config import CONDITIONS
from trackverify.benchmark.corrupt import (compose_corruptions, corrupt_recording, equal_ids,
                                 plan_corruptions, scaled_window, usable_start)
from trackverify.errors import InputError

START, END = 3, 6


@pytest.fixture
def table():
    df = observation_table(frames=10)
    df.loc[df["track"] == "D", "x_um"] = 23.0  # C (x=20) and D (x=23) are the nearest pair
    return df


def corrupted(table, seed=20261007):
    stacked, choices = corrupt_recording(table, CONDITIONS, seed, START, END, "r")
    return {c: part.reset_index(drop=True) for c, part in stacked.groupby("condition", observed=True)}, choices


def error_frames(part, track):
    rows = part[(part["track"] == track) & (part["error"] == 1)]
    return sorted(rows["frame"].tolist())


def test_choices_recorded_and_valid(table):
    _, choices = corrupted(table)
    assert choices["control"] == {"tracks": [], "frames": None}
    assert choices["single_frame_swap"]["frames"] == [3, 4]
    assert choices["persistent_swap"]["frames"] == [3, 10]
    assert choices["swap_and_recovery"]["frames"] == [3, 6]
    assert choices["nearby_swap"] == {"tracks": ["C", "D"], "frames": [3, 6]}
    assert choices["fragmentation"]["frames"] == [3, 10] and choices["dropout"]["frames"] == [3, 10]
    for c in ("single_frame_swap", "persistent_swap", "swap_and_recovery"):
        a, b = choices[c]["tracks"]
        assert a != b and {a, b} <= {"A", "B", "C", "D"}
    assert corrupted(table)[1] == choices  # same seed, same choices


def test_seed_changes_choices(table):
    seen = {tuple(corrupted(table, seed)[1]["persistent_swap"]["tracks"]) for seed in range(8)}
    assert len(seen) > 1


def test_control_has_no_errors_and_is_tagged(table):
    parts, _ = corrupted(table)
    control = parts["control"]
    # to float first: on the nullable column, NA == 0 is NA, which .all() would skip
    assert control["is_control"].all() and (control["error"].to_numpy(float) == 0).all()
    assert not parts["persistent_swap"]["is_control"].any()
    # .all() / .any() skip nulls: check the values themselves
    for condition, part in parts.items():
        assert part["is_control"].dtype == bool
        assert part["is_control"].tolist() == [condition == "control"] * len(part)


@pytest.mark.parametrize("condition, frames", [
    ("single_frame_swap", [3]),
    ("persistent_swap", [3, 4, 5, 6, 7, 8, 9]),
    ("swap_and_recovery", [3, 4, 5]),
    ("nearby_swap", [3, 4, 5]),
])
def test_swap_labels(table, condition, frames):
    parts, choices = corrupted(table)
    part = parts[condition]
    a, b = choices[condition]["tracks"]
    assert error_frames(part, a) == frames and error_frames(part, b) == frames
    assert int((part["error"] == 1).sum()) == 2 * len(frames)
    assert part["error"].notna().all()
    swapped = part[(part["track"] == a) & part["frame"].isin(frames)]
    assert (swapped["pred_id"] == f"p{b}").all()


def test_fragmentation_labels(table):
    parts, choices = corrupted(table)
    part = parts["fragmentation"]
    (t,) = choices["fragmentation"]["tracks"]
    assert error_frames(part, t) == list(range(3, 10))
    new_ids = set(part.loc[(part["track"] == t) & (part["frame"] >= 3), "pred_id"])
    assert len(new_ids) == 1 and not new_ids & {"pA", "pB", "pC", "pD"}


def test_dropout_labels(table):
    parts, choices = corrupted(table)
    part = parts["dropout"]
    (t,) = choices["dropout"]["tracks"]
    dropped = (part["track"] == t) & (part["frame"] >= 3)
    assert not part.loc[dropped, "pred_valid"].any()
    assert part.loc[dropped, "error"].isna().all()
    assert (part.loc[~dropped, "error"].to_numpy(float) == 0).all()  # NA would fail here
    assert part.loc[~dropped, "pred_valid"].all() and int(dropped.sum()) == 7


def test_coordinates_and_detections_never_change(table):
    before = table.copy()
    parts, _ = corrupted(table)
    pd.testing.assert_frame_equal(table, before)
    for part in parts.values():
        for column in ("frame", "track", "detection", "x_um", "y_um", "z_um"):
            assert part[column].tolist() == table[column].tolist()


def test_anchor_frame_never_corrupted(table):
    parts, _ = corrupted(table)
    for part in parts.values():
        assert (part.loc[part["frame"] == 0, "error"].to_numpy(float) == 0).all()


def test_track_without_anchor_is_unlabelled(table):
    table = table[~((table["track"] == "A") & (table["frame"] == 0))]
    parts, _ = corrupted(table)
    for part in parts.values():
        assert part.loc[part["track"] == "A", "error"].isna().all()


def test_integer_ids_get_a_new_integer_fragment_id(table):
    table["pred_id"] = table["track"].map({"A": 5, "B": 6, "C": 7, "D": 8})
    parts, choices = corrupted(table)
    (t,) = choices["fragmentation"]["tracks"]
    part = parts["fragmentation"]
    assert set(part.loc[(part["track"] == t) & (part["frame"] >= 3), "pred_id"]) == {9}


def test_too_short_for_a_mode_is_an_error(table):
    with pytest.raises(InputError, match="too short for 'single_frame_swap'"):
        plan_corruptions(table[table["frame"] < 3], CONDITIONS, 1, START, END, "r")
    with pytest.raises(InputError, match="too short for 'swap_and_recovery'"):
        plan_corruptions(table[table["frame"] < 6], CONDITIONS, 1, START, END, "r")


def test_errors_name_the_recording(table):
    short = table[table["frame"] < 3]
    spans = r"spans 3 frame numbers \(0-2; 3 of them present\), too short"
    with pytest.raises(InputError, match=rf"^recording 'rec7' {spans} for "
                                         r"'single_frame_swap' \(needs more than start = 3\)"):
        corrupt_recording(short, CONDITIONS, 1, START, END, "rec7")
    with pytest.raises(InputError, match=rf"^recording {spans}"):
        corrupt_recording(short, CONDITIONS, 1, START, END)
    with pytest.raises(InputError, match=rf"^recording {spans}"):
        plan_corruptions(short, CONDITIONS, 1, START, END)
    with pytest.raises(InputError) as info:  # the window at floor(0.3 * 6), floor(0.7 * 6)
        plan_corruptions(table[table["frame"] < 6], ("swap_and_recovery",), 1, START, END, "r")
    assert str(info.value) == (
        "recording 'r' spans 6 frame numbers (0-5; 6 of them present), too short for "
        "'swap_and_recovery' (needs more than recovery_end = 6); "
        "try --start 1 --recovery-end 4, or --conditions control (or set start / recovery_end "
        "/ conditions in the [run] table of --config; docs/reference/configuration.md)")
    lonely = table[table["track"] == "A"]
    with pytest.raises(InputError, match=r"^recording 'rec7': 'single_frame_swap' needs 2 "
                                         r"track\(s\) observed at frame 3, found 1"):
        plan_corruptions(lonely, CONDITIONS, 1, START, END, "rec7")


def test_too_short_counts_the_frame_number_span_and_says_how_many_are_present(table):
    # frames 0, 1 and 8 of a 10-frame table: 3 present frame numbers, a span of 9 (0-8).
    # SPEC's T is the span: T = 9 > start 3 fits single_frame_swap (whose start frame is a
    # gap, a different refusal); T = 9 <= recovery_end 9 is too short for swap_and_recovery
    gapped = table[table["frame"].isin([0, 1, 8])]
    with pytest.raises(InputError) as info:
        plan_corruptions(gapped, ("swap_and_recovery",), 1, START, 9, "g")
    assert str(info.value).startswith(
        "recording 'g' spans 9 frame numbers (0-8; 3 of them present), too short for "
        "'swap_and_recovery' (needs more than recovery_end = 9); ")
    with pytest.raises(InputError, match=r"^recording 'g': 'single_frame_swap' draws among "
                                         r"the tracks observed at frame 3, which holds no "
                                         r"observation"):
        plan_corruptions(gapped, ("single_frame_swap",), 1, START, END, "g")


def test_persistent_swap_row_labels_and_global_alignment_diverge(table):
    """7 of 10 frames swapped: rows say 14 errors, the alignment adopts the swapped naming."""
    parts, choices = corrupted(table)
    part = parts["persistent_swap"]
    assert int((part["error"] == 1).sum()) == 14  # row labels: 26 of 40 rows correct
    diagnostics = association_diagnostics(part)
    # Alignment: swapped naming overlaps 7 frames per track, original 3, so the pair's
    # 3 clean frames count as wrong: 40 - 6 = 34 correct.
    assert diagnostics["correct_observations"] == 34
    assert diagnostics["correct_observation_rate"] == pytest.approx(34 / 40)
    assert diagnostics["identity_switches"] == 2 and diagnostics["fragmentations"] == 2


def at_start(tracks, xs, ys=0.0):
    return pd.DataFrame({"track": tracks, "x_um": np.asarray(xs, float),
                         "y_um": np.asarray(ys, float), "z_um": 0.0})


@pytest.mark.parametrize("tracks, xs, pair", [
    (["D", "C", "B", "A"], [30, 20, 10, 0], ("A", "B")),   # three pairs 10 apart: smallest ids
    (["C", "B", "A"], [10, 20, 0], ("A", "C")),            # (A, C) and (B, C) tie: first id A
    (["C", "B", "A"], [20, 0, 10], ("A", "B")),            # (A, B) and (A, C) tie: second id B
    ([10, 2, 5], [0.0, 7.0, 3.0], (5, 10)),                # no tie: (10, 5) is 3, (2, 5) 4
    ([10, 2, 5], [0.0, 7.0, 3.5], (2, 5)),                 # (2, 5) and (5, 10) tie at 3.5
])
def test_nearby_pair_tie_rule(tracks, xs, pair):
    """The two closest tracks; among equal distances the smaller first id, then the smaller
    second id (ids in ascending order, whatever the row order)."""
    from trackverify.benchmark.corrupt import _nearest_pair

    assert _nearest_pair(at_start(tracks, xs)) == pair


@pytest.mark.parametrize("tracks, xs, ys, pair", [
    # (A, D) and (B, C) tie at 10, everything else >= 100 apart: the first id decides (A < B);
    # taking the second id first would give (B, C) (C < D).
    (["A", "B", "C", "D"], [0, 0, 10, 10], [0, 100, 100, 0], ("A", "D")),
    (["D", "C", "B", "A"], [10, 10, 0, 0], [0, 100, 100, 0], ("A", "D")),
    # (C, D) 3.1 apart is nearer than (A, B) 3.4: distances are compared exactly (rounded to
    # 1 um they would tie, and the tie would go to (A, B)).
    (["A", "B", "C", "D"], [0, 3.4, 100, 103.1], [0, 0, 0, 0], ("C", "D")),
    (["A", "B", "C", "D"], [0, 0.4, 100, 100.1], [0, 0, 0, 0], ("C", "D")),
])
def test_nearby_pair_rule_where_the_alternatives_disagree(tracks, xs, ys, pair):
    """Cases where a rule with the tie keys the other way round, or with distances rounded,
    would choose another pair."""
    from trackverify.benchmark.corrupt import _nearest_pair

    assert _nearest_pair(at_start(tracks, xs, ys)) == pair


def test_neighbour_chain_ties_go_to_the_smaller_id():
    from trackverify.benchmark.corrupt import _neighbour_chain

    # B at 10 has A (0) and C (20) both 10 away: A first, then C (20 from A, D is 40 away)
    table = at_start(["D", "C", "B", "A"], [40, 20, 10, 0])
    assert _neighbour_chain(table, "B", 2) == ("B", "A", "C")
    assert _neighbour_chain(table, "C", 1) == ("C", "B")  # B 10, D 20
    assert _neighbour_chain(table, "D", 3) == ("D", "C", "B", "A")


@pytest.mark.parametrize("ids, expected", [
    (pd.Series([3, 7, 5]), 8),
    (pd.Series([], dtype=np.int64), 1),
    (pd.Series(["pA", "pB"]), "fragment"),
    (pd.Series(["fragment", "pB", None]), "fragment-2"),
    (pd.Series(["fragment", "fragment-2", "fragment-3"]), "fragment-4"),
    (pd.Series([], dtype=object), "fragment"),
])
def test_brand_new_id_is_unused_and_of_the_same_kind(ids, expected):
    from trackverify.benchmark.corrupt import brand_new_id

    assert brand_new_id(ids) == expected


def test_corruption_does_not_depend_on_the_table_index(table):
    """The same recording with a non-default index gives the same predictions and labels."""
    shifted = table.set_index(table.index * 3 + 100)
    stacked, _ = corrupt_recording(table, CONDITIONS, 20261007, START, END, "r")
    moved, _ = corrupt_recording(shifted, CONDITIONS, 20261007, START, END, "r")
    for column in ("pred_id", "pred_valid", "error", "condition"):
        assert moved[column].tolist() == stacked[column].tolist(), column
    assert stacked["error"].dtype == "Int8"


def test_a_pair_with_one_unanchored_track_exchanges_nothing(table):
    """B has no valid anchor-frame prediction: a swap of A and B must leave both alone (a
    one-sided exchange would hand A a null id)."""
    from trackverify.anchors import anchor_identities
    from trackverify.benchmark.corrupt import Corruption, apply_corruption

    table.loc[(table["frame"] == 0) & (table["track"] == "B"), "pred_valid"] = False
    plan = Corruption("persistent_swap", ("A", "B"), (3, 10))
    out = apply_corruption(table, plan, anchor_identities(table), lambda: "new")
    assert out["pred_id"].tolist() == table["pred_id"].tolist()
    plan = Corruption("persistent_swap", ("B", "A"), (3, 10))
    out = apply_corruption(table, plan, anchor_identities(table), lambda: "new")
    assert out["pred_id"].tolist() == table["pred_id"].tolist()


def test_smooth_drift_parts_split_an_uneven_interval_at_whole_frames(table):
    """Interval [3, 6) in K = 2 parts: [3 + 0, 3 + 3 // 2) = [3, 4) and [4, 6). A trades ids
    with B on frame 3 and with C on frames 4 and 5 (not 4.5: parts end at whole frames)."""
    from trackverify.anchors import anchor_identities
    from trackverify.benchmark.corrupt import Corruption, apply_corruption

    plan = Corruption("smooth_drift", ("A", "B", "C"), (3, 6))
    out = apply_corruption(table, plan, anchor_identities(table), lambda: "new")
    by = out.set_index(["frame", "track"])["pred_id"]
    assert [by[(f, "A")] for f in range(8)] == ["pA", "pA", "pA", "pB", "pC", "pC", "pA", "pA"]
    assert [by[(f, "B")] for f in (2, 3, 4)] == ["pB", "pA", "pB"]
    assert [by[(f, "C")] for f in (3, 4, 5, 6)] == ["pC", "pA", "pA", "pC"]


def test_stacked_table_has_a_fresh_index_and_ordered_conditions(table):
    from trackverify.anchors import anchor_identities
    from trackverify.benchmark.corrupt import label_errors

    stacked, _ = corrupt_recording(table, CONDITIONS, 20261007, START, END, "r")
    assert stacked.index.equals(pd.RangeIndex(len(table) * len(CONDITIONS)))
    assert stacked["condition"].dtype == "category"
    assert list(stacked["condition"].cat.categories) == list(CONDITIONS)
    assert stacked["condition"].tolist() == [c for c in CONDITIONS for _ in range(len(table))]
    labels = label_errors(table, anchor_identities(table))
    assert labels.name == "error" and labels.index.equals(table.index)


def test_one_track_is_enough_for_fragmentation_and_dropout(table):
    lonely = table[table["track"] == "A"]
    plans = plan_corruptions(lonely, ("control", "fragmentation", "dropout"), 1, START, END, "r")
    assert plans["fragmentation"].tracks == ("A",) and plans["dropout"].tracks == ("A",)
    assert list(plans) == ["control", "fragmentation", "dropout"]


def test_a_subset_of_conditions_still_draws_every_one(table):
    """Conditions absent from the run are skipped, not the end of the draws."""
    plans = plan_corruptions(table, ("dropout", "smooth_drift"), 1, START, END, "r")
    assert len(plans["dropout"].tracks) == 1 and plans["dropout"].frames == (3, 10)
    assert len(plans["smooth_drift"].tracks) == 4 and plans["smooth_drift"].frames == (3, 6)


@pytest.mark.parametrize("tracks, end, hops", [(("A", "B"), END, 1), (("A", "B", "C", "D"), 5, 2),
                                               (("A", "B", "C", "D"), END, 3)])
def test_smooth_drift_hops_are_bounded(table, tracks, end, hops):
    """hops = min(3, tracks at start - 1, frames in the interval): chain of hops + 1 tracks."""
    plans = plan_corruptions(table[table["track"].isin(tracks)], ("smooth_drift",), 1, START,
                             end, "r")
    assert len(plans["smooth_drift"].tracks) == hops + 1
    assert len(set(plans["smooth_drift"].tracks)) == hops + 1


def test_draws_pick_distinct_tracks_and_keep_id_types():
    """Integer track ids (not strings: a draw of one must stay one id), many seeds: a pair
    never repeats a track."""
    df = observation_table(tracks=(10, 20, 30, 40), frames=10)
    for seed in range(30):
        plans = plan_corruptions(df, CONDITIONS, seed, START, END, "r")
        for condition in ("single_frame_swap", "persistent_swap", "swap_and_recovery"):
            a, b = plans[condition].tracks
            assert a != b and {a, b} <= {10, 20, 30, 40}
        assert plans["fragmentation"].tracks in ((10,), (20,), (30,), (40,))
        assert isinstance(plans["dropout"].tracks[0], int)


def test_smooth_drift_takes_at_most_three_hops():
    df = observation_table(tracks=("A", "B", "C", "D", "E", "F"), frames=12)
    plans = plan_corruptions(df, ("smooth_drift",), 1, START, 9, "r")
    assert len(plans["smooth_drift"].tracks) == 4  # min(3, 6 - 1, 9 - 3) + 1


def without_anchor(table, *tracks):
    """``table`` without the frame-0 rows of ``tracks``: they have no anchor identity."""
    return table[~(table["track"].isin(tracks) & (table["frame"] == 0))].reset_index(drop=True)


def test_nearby_swap_skips_a_track_without_anchor(table):
    """C (x 20) and D (x 23) are the nearest pair, but C has no anchor identity: swapping it
    would inject no error (its rows are unlabelled, D's keep pD). Among A (0), B (10) and
    D (23) the nearest pair is (A, B), 10 um apart: 2 tracks x frames 3, 4, 5 = 6 errors."""
    parts, choices = corrupted(without_anchor(table, "C"))
    assert choices["nearby_swap"] == {"tracks": ["A", "B"], "frames": [3, 6]}
    part = parts["nearby_swap"]
    assert error_frames(part, "A") == [3, 4, 5] and error_frames(part, "B") == [3, 4, 5]
    assert int((part["error"] == 1).sum()) == 6


def test_random_draws_skip_a_track_without_anchor(table):
    """A draw holding C (no anchor identity) is drawn again among A, B, D (from a second
    generator); every draw without C is the one the recording with every track anchored
    gets (the first generator's)."""
    redrawn = 0
    for seed in range(40):
        plans = plan_corruptions(without_anchor(table, "C"), CONDITIONS, seed, START, END, "r")
        anchored = plan_corruptions(table, CONDITIONS, seed, START, END, "r")
        for condition, plan in plans.items():
            assert "C" not in plan.tracks, (seed, condition)
            if condition != "nearby_swap" and "C" not in anchored[condition].tracks:
                assert plan == anchored[condition], (seed, condition)
            redrawn += "C" in anchored[condition].tracks
    assert redrawn > 0
    # every swap now injects errors: 2 rows per frame of its interval
    parts, _ = corrupted(without_anchor(table, "C"), seed=12)
    for condition, frames in (("single_frame_swap", 1), ("persistent_swap", 7),
                              ("swap_and_recovery", 3), ("nearby_swap", 3)):
        assert int((parts[condition]["error"] == 1).sum()) == 2 * frames, condition


def test_too_few_anchored_tracks_at_start_is_an_error(table):
    """B, C and D are observed at frame 3 but only A has an anchor identity."""
    with pytest.raises(InputError) as info:
        plan_corruptions(without_anchor(table, "B", "C", "D"), ("control", "nearby_swap"), 1,
                         START, END, "r")
    assert str(info.value) == (
        "recording 'r': 'nearby_swap' needs 2 track(s) observed at frame 3 with an identity in "
        "the anchor frame (frame 0), found 1 (and 3 without one: their rows are unlabelled, so "
        "a corruption of them injects no error); try another --start (or set start in the "
        "[run] table of --config; docs/reference/configuration.md)")


def test_equal_ids_never_compares_a_null():
    # pd.NA == "a" is pd.NA (no truth value): a null on either side is simply not equal
    ids = np.array(["a", pd.NA, None, "b", "c"], dtype=object)
    other = np.array(["a", "a", None, pd.NA, "b"], dtype=object)
    assert equal_ids(ids, other).tolist() == [True, False, False, False, False]
    assert equal_ids(np.array([1, pd.NA, 2], dtype=object), 1).tolist() == [True, False, False]


def test_no_usable_frame_at_or_after_start_is_none():
    # frames 0 0 1 2 2 3: only frame 2 holds 2 observations (frame 0 is the anchor)
    frames = np.array([0, 0, 1, 2, 2, 3])
    assert usable_start(frames, 1) == 2
    assert usable_start(frames, 3) is None
    # T = 10, one observation per frame after the anchor: no start for the scaled window
    assert scaled_window(np.array([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9])) is None


def test_a_redrawn_pair_is_two_distinct_anchored_tracks(table):
    """Only A and B have an anchor identity: every random pair is A and B, never one twice."""
    for seed in range(20):
        plans = plan_corruptions(without_anchor(table, "C", "D"), CONDITIONS, seed, START, END,
                                 "r")
        for condition in ("single_frame_swap", "persistent_swap", "swap_and_recovery",
                          "duplicate_identity"):
            assert sorted(plans[condition].tracks) == ["A", "B"], (seed, condition)


def test_a_redraw_comes_from_the_second_generator_of_the_seed(table):
    """fragmentation alone (one draw): PCG64(seed) picks among A, B, C, D (ascending); a pick
    of C (no anchor identity) is drawn again among A, B, D from PCG64([seed, 1]), as the
    module's definition states (numpy's generators, not the module, give the expected)."""
    redrawn = 0
    for seed in range(20):
        first = "ABCD"[np.random.Generator(np.random.PCG64(seed)).choice(4, size=1,
                                                                          replace=False)[0]]
        if first == "C":
            spare = np.random.Generator(np.random.PCG64([seed, 1]))
            first, redrawn = "ABD"[spare.choice(3, size=1, replace=False)[0]], redrawn + 1
        plans = plan_corruptions(without_anchor(table, "C"), ("control", "fragmentation"), seed,
                                 START, END, "r")
        assert plans["fragmentation"].tracks == (first,), seed
    assert redrawn > 0


def test_composed_swaps_undo_each_other_where_both_apply():
    # Two tracks: persistent_swap and nearby_swap both exchange A and B, on [3, 10) and
    # [3, 6); applied one after the other the ids are right again on [3, 6), swapped on
    # [6, 10).
    two = observation_table(tracks=("A", "B"), frames=10)
    before = two.copy()
    out, plans = compose_corruptions(two, ("persistent_swap", "nearby_swap"), 1, START, END)
    pd.testing.assert_frame_equal(two, before)  # the input is not modified
    assert plans == {"persistent_swap": {"tracks": ["A", "B"], "frames": [3, 10]},
                     "nearby_swap": {"tracks": ["A", "B"], "frames": [3, 6]}}
    for track, other in (("A", "B"), ("B", "A")):
        rows = out[out["track"] == track].sort_values("frame")
        assert rows["pred_id"].tolist() == [f"p{track}"] * 6 + [f"p{other}"] * 4
        assert rows["error"].tolist() == [0] * 6 + [1] * 4


def test_composed_conditions_keep_each_condition_s_errors(table):
    # swap_and_recovery (a random pair on [3, 6)) with dropout (a random track invalid on
    # [3, 10)): a row is wrong where the swap moved it and its prediction is still valid,
    # unlabelled where dropout made it invalid, right elsewhere.
    out, plans = compose_corruptions(table, ("swap_and_recovery", "dropout"), 20261007, START, END)
    swapped, dropped = set(plans["swap_and_recovery"]["tracks"]), plans["dropout"]["tracks"][0]
    frame, track = out["frame"].to_numpy(), out["track"].to_numpy()
    invalid = (track == dropped) & (frame >= START)
    wrong = np.isin(track, list(swapped)) & (frame >= START) & (frame < END) & ~invalid
    assert out["error"].isna().to_numpy().tolist() == invalid.tolist()
    assert out.loc[~invalid, "error"].astype(int).tolist() == wrong[~invalid].astype(int).tolist()
    assert wrong.sum() > 0 and invalid.sum() > 0  # the draw exercises both


def test_composing_no_condition_is_the_clean_table_labelled(table):
    before = table.copy()
    out, plans = compose_corruptions(table, (), 1, START, END)
    pd.testing.assert_frame_equal(table, before)  # no column added to the caller's table
    assert plans == {}
    assert out["pred_id"].tolist() == before["pred_id"].tolist()
    assert out["error"].tolist() == [0] * len(before)
