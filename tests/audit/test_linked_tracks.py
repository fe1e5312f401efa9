"""Tracks that break and start late (a linking tracker's output): each judged from its own
start, with switches, crossings, frame failures, joins and continuity worked out by hand on
a drifting grid of neurons."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.verifiers.registered_distance import carry_points

SPACING = 8.0
COLUMNS, ROWS = 4, 3  # neuron k at grid column k % 4, row k // 4
FRAMES = 40


def grid(frame: int) -> np.ndarray:
    """The 12 neurons' positions at ``frame``: a 4 x 3 grid, 8 um apart, drifting 0.3 um a
    frame in x."""
    k = np.arange(COLUMNS * ROWS)
    return np.c_[SPACING * (k % COLUMNS) + 0.3 * frame, SPACING * (k // COLUMNS)]


def tracker(ids_of) -> pd.DataFrame:
    """One row per neuron and frame (the neuron's detection, numbered by neuron), its id
    ``ids_of(frame, neuron)``."""
    rows = [("worm", t, k, ids_of(t, k), *grid(t)[k]) for t in range(FRAMES)
            for k in range(COLUMNS * ROWS)]
    return pd.DataFrame(rows, columns=["recording", "frame", "detection", "pred_id", "x_um", "y_um"])


def linked(t: int, k: int) -> int:
    """A linker's ids: anchor ids 0..11 (neuron k has id k) and, by hand:

    - neuron 2: id 2 to frame 9, id 100 from frame 10 to 24, id 101 from frame 25 on;
    - neuron 3: id 3 to frame 24, then id 100 (it leaves neuron 2 for neuron 3: a switch);
    - neurons 8 and 9: ids 8 and 9 to frame 4, ids 200 and 201 from frame 5, which cross at
      frame 20 (200 on neuron 9, 201 on neuron 8 from there on);
    - frame 35: every neuron's detection carries the id neuron k + 1 carries (mod 12) in that
      frame: the whole frame fails once.
    """
    if t == 35:
        return linked_plain(t, (k + 1) % (COLUMNS * ROWS))
    return linked_plain(t, k)


def linked_plain(t: int, k: int) -> int:
    if k == 2:
        return 2 if t <= 9 else (100 if t <= 24 else 101)
    if k == 3:
        return 3 if t <= 24 else 100
    if k in (8, 9):
        if t <= 4:
            return k
        own = 200 if k == 8 else 201
        other = 201 if k == 8 else 200
        return own if t < 20 else other
    return k


@pytest.fixture(scope="module")
def audited():
    return trackverify.audit(tracker(linked))


def test_every_observation_with_an_id_is_judged_but_each_tracks_start(audited):
    obs = audited.observations
    later_starts = obs[obs["reason"].eq("track_start")]
    assert sorted(zip(later_starts["pred_id"], later_starts["frame"])) == [
        (100, 10), (101, 25), (200, 5), (201, 5)]
    counts = audited.summary["counts"]
    # 12 x 40 rows: 12 in the anchor frame and 4 later starts are not judged
    assert counts["audited"] == 12 * 40 - 12 - 4
    assert counts["abstained"] == 0 and counts["track_starts"] == 4
    starts = obs.drop_duplicates("pred_id").set_index("pred_id")["start_identity"]
    assert starts.loc[[100, 101, 200, 201]].tolist() == [2, 2, 8, 9]
    from trackverify.audit.write import one_line

    assert one_line(audited).startswith(
        "480 rows: 12 rows in the anchor frame (trusted), 4 later tracks' first observations; "
        "464 judged: 400 certified (86.2%), 64 flagged (13.8%)")


def test_a_switch_a_crossing_and_a_frame_failure_are_each_one_event(audited):
    events = audited.events
    assert sorted(events["kind"]) == ["crossing", "frame", "switch"]
    by_kind = events.set_index("kind")
    switch = by_kind.loc["switch"]
    assert (switch["ids"], switch["lookalike_id"], switch["first_frame"], switch["last_frame"],
            switch["observations"]) == ("100", 3, 25, 39, 14)  # frame 35 is the frame event's
    assert switch["evidence"].startswith(
        "id 100 leaves the place it started on (it started on 2's place at frame 10) at frame "
        "25 and follows 3's place from there")
    crossing = by_kind.loc["crossing"]
    assert (crossing["ids"], crossing["first_frame"], crossing["last_frame"],
            crossing["observations"]) == ("200;201", 20, 39, 38)
    assert crossing["evidence"].startswith("ids 200 and 201 cross at frame 20")
    frame = by_kind.loc["frame"]
    assert (frame["first_frame"], frame["last_frame"], frame["flagged"]) == (35, 35, 12)
    obs = audited.observations
    flagged = obs[obs["verdict"].eq("flagged")]
    assert set(zip(flagged["pred_id"], flagged["frame"])) == (
        {(100, t) for t in range(25, 40)} | {(200, t) for t in range(20, 40)}
        | {(201, t) for t in range(20, 40)} | set(zip(obs.loc[obs["frame"].eq(35), "pred_id"],
                                                     [35] * 12)))


def test_joins_name_the_identity_a_later_track_continues(audited):
    joins = audited.joins.set_index("id")
    assert sorted(joins.index) == [100, 101, 200, 201]
    assert joins.loc[100, ["continues", "first_frame", "last_frame", "previous_id",
                           "previous_last_frame"]].tolist() == [2, 10, 24, 2, 9]
    assert joins.loc[101, ["continues", "first_frame", "last_frame", "previous_id",
                           "previous_last_frame"]].tolist() == [2, 25, 39, 100, 24]
    # 200 and 201 continue 8 and 9 until they cross (frame 20); frame 35 is a frame failure
    assert joins.loc[200, ["continues", "first_frame", "last_frame"]].tolist() == [8, 5, 19]
    assert joins.loc[201, ["continues", "first_frame", "last_frame"]].tolist() == [9, 5, 19]
    assert joins.loc[100, "start_um"] < 1e-3  # the registration of a rigid drift: exact
    assert joins.loc[100, "evidence"].startswith("id 100, frames 10-24, continues 2: its first "
                                                 "observation ")
    assert joins.loc[100, "evidence"].endswith(
        " um from where 2 should be (threshold 4 um); 2 was last on its place at frame 9 as "
        "id 2; 14 of 14 later observations certified")
    assert (joins.loc[100, "judged"], joins.loc[100, "certified"]) == (14, 14)
    pieces = audited.continuity.set_index("identity")
    assert pieces.loc[2, "ids"] == "2;100;101" and pieces.loc[2, "pieces"] == 3
    assert pieces.loc[8, "ids"] == "8;200" and pieces.loc[0, "pieces"] == 1
    assert audited.summary["continuity"] == {"anchor_identities": 12, "in_one_piece": 9,
                                             "median_pieces": 1.0, "max_pieces": 3, "joins": 4}


def starts_wrong(t: int, k: int) -> int:
    """Id 0 ends at frame 11 and id 1 at frame 12; id 300 starts at frame 12 on neuron 0's
    detection and follows neuron 1 from frame 13; neuron 0 is id 301 from frame 13."""
    if k == 0:
        return 0 if t <= 11 else (300 if t == 12 else 301)
    if k == 1:
        return 1 if t <= 12 else 300
    return k


def test_a_track_that_starts_on_the_wrong_neuron_is_flagged_where_it_goes():
    result = trackverify.audit(tracker(starts_wrong))
    obs = result.observations.set_index(["pred_id", "frame"])
    three = obs.loc[300]
    assert three.loc[12, "reason"] == "track_start" and three.loc[12, "start_identity"] == 0
    # judged against neuron 0, where it started: every later row is on 1's place
    assert (three.loc[13:, "verdict"] == "flagged").all()
    assert (three.loc[13:, "lookalike_id"] == 1).all()
    assert (obs.loc[301, "verdict"].iloc[1:] == "certified").all()
    events = result.events
    assert events[["kind", "ids", "lookalike_id", "first_frame"]].values.tolist() == [
        ["switch", "300", 1, 13]]
    joins = result.joins.set_index("id")
    # its start is on 0's place: a join of that one frame; 301 continues 0 from frame 13
    assert joins.loc[300, ["continues", "first_frame", "last_frame"]].tolist() == [0, 12, 12]
    assert joins.loc[301, ["continues", "first_frame", "previous_id"]].tolist() == [0, 13, 300]


def test_scattered_one_frame_noise_is_flagged_but_makes_no_event():
    # neuron 5's detection is moved 5 um along the grid's diagonal in frames 7, 15 and 22:
    # 5 um from its place (threshold 4 um: flagged), 6.3 um from its diagonal neighbour's
    # (not on another's place); scattered single flags are no event
    tracks = tracker(lambda t, k: k)
    moved = tracks["detection"].eq(5) & tracks["frame"].isin([7, 15, 22])
    tracks.loc[moved, ["x_um", "y_um"]] += 5.0 / np.sqrt(2)
    result = trackverify.audit(tracks)
    obs = result.observations
    flagged = obs[obs["verdict"].eq("flagged")]
    assert sorted(zip(flagged["pred_id"], flagged["frame"])) == [(5, 7), (5, 15), (5, 22)]
    assert result.events.empty and obs["event"].isna().all()
    assert len(result.segments) == 3 and result.joins.empty


def test_carry_points_moves_a_point_with_its_neighbours_by_hand():
    # six anchor points; frame 1 translates them by (2, -1), frame 2 rotates them 90 degrees
    # about the origin: a translation is carried exactly, the start frame is the start
    anchor = np.array([[0.0, 0.0], [4.0, 0.0], [8.0, 0.0], [0.0, 4.0], [4.0, 4.0], [8.0, 4.0]])
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    registered = np.stack([anchor, anchor + [2.0, -1.0], anchor @ rotation.T])
    start = np.array([[5.0, 2.0], [5.0, 2.0], [7.0, 1.0]])
    out = carry_points(registered, np.array([0, 0, 1]), start, np.array([1, 0, 1]))
    np.testing.assert_allclose(out, [[7.0, 1.0], [5.0, 2.0], [7.0, 1.0]], atol=1e-12)
    # a rotation is carried as the neighbours' affine motion, up to the ridge's shrinkage
    # (1e-3 of the moment: under 0.01 um here)
    rotated = carry_points(registered, np.array([0]), np.array([[5.0, 2.0]]), np.array([2]))
    np.testing.assert_allclose(rotated, [[-2.0, 5.0]], atol=0.01)
    # a frame that was not registered: no place
    registered[1] = np.nan
    assert np.isnan(carry_points(registered, np.array([0]), np.array([[5.0, 2.0]]),
                                 np.array([1]))).all()


def test_the_review_item_carries_the_start_of_the_sampled_track(audited, tmp_path):
    # the review page shows the observation a row is judged against: its track's start
    from trackverify.audit.write import write_audit
    from trackverify.review.items import ReviewItems
    from trackverify.review.sheet import read_sheet

    out = write_audit(audited, tmp_path / "audit")
    pd.DataFrame({"recording": ["worm", "worm"], "frame": [20, 20], "pred_id": [100, 4],
                  "detection": [2, 4], "x_um": [grid(20)[2][0], grid(20)[4][0]],
                  "y_um": [grid(20)[2][1], grid(20)[4][1]], "stratum": ["worm/certified"] * 2,
                  "decision": ["", ""]}).to_csv(out / "review.csv", index=False)
    items = ReviewItems(out, read_sheet(out / "review.csv"), triage=True)
    later, anchored = items.detail(0), items.detail(1)
    start = later["start"]
    assert (start["frame"], start["identity"]) == (10, "2")
    assert start["place"] == dict(zip(["x", "y"], grid(10)[2].tolist()))
    # the points around it in its frame, nearest first: itself, then its neighbours 8 um away
    near = [np.hypot(p["x"] - start["place"]["x"], p["y"] - start["place"]["y"])
            for p in start["points"]]
    assert near[0] == 0 and near[1:4] == pytest.approx([8.0] * 3)
    # an anchor identity starts at the anchor frame, where the anchor place is
    assert (anchored["start"]["frame"], anchored["start"]["identity"]) == (0, "4")
    assert anchored["start"]["place"] == anchored["anchor"]["place"]
    # blind (the default): the start carries no identity the audit gave it
    assert "identity" not in ReviewItems(out, read_sheet(out / "review.csv")).detail(0)["start"]


def test_claims_of_the_own_ids_score_as_the_ids_themselves():
    # registered_distance's score with claims = each row's own anchor index is its score
    from trackverify.verifiers.registered_distance import RegisteredDistance

    table = tracker(lambda t, k: k if not (20 <= t <= 25 and k in (5, 6)) else 11 - k)
    table = table.assign(pred_valid=True)
    verifier = RegisteredDistance()
    plain = verifier.score(table)
    anchor_ids, _ = verifier.register(table)
    claimed = verifier.score(table, claims=anchor_ids.get_indexer(table["pred_id"]))
    np.testing.assert_array_equal(plain, claimed)
    # a claim on no anchor point (-1) abstains
    none = verifier.score(table, claims=np.full(len(table), -1))
    assert np.isnan(none).all()
