"""The three harder corruptions (SPEC section 9): labels by hand on a 4-track, 10-frame table.

Tracks A, B, C, D sit on a line at x = 0, 10, 20, 23 um (so neighbours by hand: A->B,
B->A (tie with C, smaller id), C->D, D->C), predictions p<track>, start 3, recovery_end 6,
T = 10.
"""

from __future__ import annotations

import pytest

from tests.conftest import observation_table
from trackverify.benchmark.config import CONDITIONS, DEFAULT_CONDITIONS
from trackverify.benchmark.corrupt import corrupt_recording, plan_corruptions

START, END = 3, 6
NEW = ("smooth_drift", "duplicate_identity", "long_gap_reassociation")
# The drift chain by hand: from each first track, the nearest not-yet-chosen one each time.
CHAINS = {"A": ("A", "B", "C", "D"), "B": ("B", "A", "C", "D"),
          "C": ("C", "D", "B", "A"), "D": ("D", "C", "B", "A")}
NEAREST = {"A": "B", "B": "A", "C": "D", "D": "C"}


@pytest.fixture
def table():
    df = observation_table(frames=10)
    df.loc[df["track"] == "D", "x_um"] = 23.0
    return df


def parts_of(table, seed=20261007):
    stacked, choices = corrupt_recording(table, CONDITIONS, seed, START, END, "r")
    return ({c: p.reset_index(drop=True) for c, p in stacked.groupby("condition", observed=True)},
            choices)


def frames_where(part, track, error):
    rows = part[part["track"] == track]
    mask = rows["error"].isna() if error is None else (rows["error"] == error).fillna(False)
    return sorted(rows.loc[mask.to_numpy(dtype=bool), "frame"].tolist())


def test_new_conditions_keep_the_original_draws(table):
    for seed in range(20):
        old = plan_corruptions(table, DEFAULT_CONDITIONS, seed, START, END, "r")
        new = plan_corruptions(table, CONDITIONS, seed, START, END, "r")
        assert all(old[c] == new[c] for c in DEFAULT_CONDITIONS)


@pytest.mark.parametrize("seed", [20261007, 1, 2, 3])
def test_smooth_drift_labels(table, seed):
    parts, choices = parts_of(table, seed)
    chain = tuple(choices["smooth_drift"]["tracks"])
    assert chain == CHAINS[chain[0]] and choices["smooth_drift"]["frames"] == [3, 6]
    part = parts["smooth_drift"]
    first, c1, c2, c3 = chain
    # Three hops over [3, 6): frame 3 with c1, frame 4 with c2, frame 5 with c3.
    assert frames_where(part, first, 1) == [3, 4, 5]
    assert (frames_where(part, c1, 1), frames_where(part, c2, 1), frames_where(part, c3, 1)) == \
        ([3], [4], [5])
    assert int((part["error"] == 1).sum()) == 6 and part["error"].notna().all()
    carrier = part[part["pred_id"] == f"p{first}"].set_index("frame")["track"]
    assert [carrier[f] for f in range(10)] == [first] * 3 + [c1, c2, c3] + [first] * 4


@pytest.mark.parametrize("seed", [20261007, 1, 2, 3])
def test_duplicate_identity_labels(table, seed):
    parts, choices = parts_of(table, seed)
    source, copy = choices["duplicate_identity"]["tracks"]
    part = parts["duplicate_identity"]
    assert frames_where(part, copy, 1) == [3, 4, 5] and frames_where(part, source, 1) == []
    assert int((part["error"] == 1).sum()) == 3 and part["error"].notna().all()
    for f in (3, 4, 5):
        here = part[part["frame"] == f]
        assert (here["pred_id"] == f"p{source}").sum() == 2  # two detections, one id
        assert (here["pred_id"] == f"p{copy}").sum() == 0


@pytest.mark.parametrize("seed", [20261007, 1, 2, 3])
def test_long_gap_reassociation_labels(table, seed):
    parts, choices = parts_of(table, seed)
    lost, other = choices["long_gap_reassociation"]["tracks"]
    assert other == NEAREST[lost]
    assert choices["long_gap_reassociation"]["frames"] == [3, 10]
    assert choices["long_gap_reassociation"]["gap_end"] == 6
    part = parts["long_gap_reassociation"]
    assert frames_where(part, lost, None) == [3, 4, 5]  # invalid in the gap: unlabelled
    assert frames_where(part, lost, 1) == [6, 7, 8, 9] and frames_where(part, other, 1) == [6, 7, 8, 9]
    assert int((part["error"] == 1).sum()) == 8 and int(part["error"].isna().sum()) == 3
    returned = part[(part["pred_id"] == f"p{lost}") & (part["frame"] >= 6)]
    assert set(returned["track"]) == {other}


def test_new_modes_need_frames_after_recovery_end(table):
    from trackverify.errors import InputError
    for condition in NEW:
        with pytest.raises(InputError, match=f"too short for '{condition}'"):
            plan_corruptions(table[table["frame"] < 6], ("control", condition), 1, START, END, "r")


def test_default_run_suite_is_the_alpha_suite():
    from trackverify.benchmark.config import RunConfig
    assert RunConfig().conditions == DEFAULT_CONDITIONS and set(NEW) <= set(CONDITIONS)
