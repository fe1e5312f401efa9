"""Events of an audit (trackverify.audit.events): hand-built observation tables whose events
are worked out by hand from the rules of the module docstring, and the audit end to end on a
synthetic swap."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.audit.events import find_events
from tests.audit.test_audit import six_neurons
from tests.conftest import CHROMIUM, built_once, chromium_layout, run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "real-tracker"

IDS = tuple(range(1, 11))  # ten ids
FRAMES = 20  # audited frames 1..20: 200 scored observations


def observations(flags: dict[tuple[int, int], tuple[float, int | None, float]],
                 uncovered: dict[tuple[int, int], str] | None = None) -> pd.DataFrame:
    """An audit's observation table: ids 1..10 over frames 0 (anchor) .. 20, every audited
    row certified (score 0.5, threshold 2) except ``flags``: (id, frame) -> (score,
    lookalike_id, lookalike_um), flagged; ``uncovered``: (id, frame) -> abstention reason
    (an id the anchor frame does not hold: rows of its own)."""
    rows = []
    for frame in range(FRAMES + 1):
        for pid in IDS:
            if frame == 0:
                rows.append((pid, frame, 0.0, "certified", "anchor_frame", None, np.nan))
                continue
            score, look, look_um = flags.get((pid, frame), (0.5, pid % 10 + 1, 6.0))
            verdict = "flagged" if (pid, frame) in flags else "certified"
            rows.append((pid, frame, score, verdict, None, look, look_um))
    for (pid, frame), reason in (uncovered or {}).items():
        rows.append((pid, frame, np.nan, "abstained", reason, None, np.nan))
    table = pd.DataFrame(rows, columns=["pred_id", "frame", "score", "verdict", "reason",
                                        "lookalike_id", "lookalike_um"])
    # ids as the audit gives them: integers, None where there is no look-alike
    table["lookalike_id"] = pd.Series([r[5] for r in rows], dtype=object)
    return table.assign(recording="r", pred_valid=True, threshold_um=2.0)


def test_an_id_on_another_identitys_place_is_one_event_over_its_frames():
    # id 3 sits on 4's place (0.5 um from it, 5 um from its own) in frames 3-5 and 9-10:
    # one confusion, one event of 5 observations, frames 3-10.
    flags = {(3, f): (5.0, 4, 0.5) for f in (3, 4, 5, 9, 10)}
    events, member = find_events(observations(flags))
    assert len(events) == 1
    e = events.iloc[0]
    assert (e["rank"], e["kind"], e["ids"], e["lookalike_id"], e["first_frame"], e["last_frame"],
            e["frames"], e["observations"], e["flagged"], e["on_lookalike"]) == (
        1, "identity", "3", 4, 3, 10, 5, 5, 5, 5)
    assert e["evidence"] == ("id 3 sits a median 0.5 um from where 4 should be and 5 um from "
                             "its own place in 5 of 5 flagged observations, frames 3-10 (5 frames)")
    table = observations(flags)
    covered = table.index[member.notna().to_numpy()]
    assert sorted(zip(table.loc[covered, "pred_id"], table.loc[covered, "frame"])) == sorted(flags)
    assert set(member.dropna()) == {1}


def test_two_ids_each_on_the_others_place_are_one_swap():
    flags = {(1, f): (5.0, 2, 0.4) for f in range(5, 9)}
    flags |= {(2, f): (5.0, 1, 0.4) for f in range(5, 9)}
    events, member = find_events(observations(flags))
    assert events[["kind", "ids", "first_frame", "last_frame", "frames", "observations",
                   "on_lookalike"]].values.tolist() == [["swap", "1;2", 5, 8, 4, 8, 8]]
    assert member.notna().sum() == 8
    assert events["evidence"].iloc[0] == ("ids 1 and 2 each sit near the other's place: 8 "
                                          "flagged observations, 8 on the other's place, "
                                          "frames 5-8 (4 frames)")


def test_mutual_confusions_in_different_frames_are_not_a_swap():
    # 1 -> 2 in frames 2-5, 2 -> 1 in frames 12-15: no frame in common, two identity events.
    flags = {(1, f): (5.0, 2, 0.4) for f in range(2, 6)}
    flags |= {(2, f): (5.0, 1, 0.4) for f in range(12, 16)}
    events, _ = find_events(observations(flags))
    assert sorted(events[["kind", "ids"]].values.tolist()) == [["identity", "1"],
                                                               ["identity", "2"]]


def test_a_frame_where_every_id_is_flagged_is_one_frame_event():
    # frame 6: all 10 ids flagged, each near another (on its place); nothing else flagged.
    # q = 10 / 200 = 0.05; P(K >= 10 | n=10, q) = 0.05**10 = 9.8e-14 <= 0.001 / 20.
    flags = {(pid, 6): (4.0, pid % 10 + 1, 1.0) for pid in IDS}
    events, member = find_events(observations(flags))
    assert events[["kind", "first_frame", "last_frame", "observations", "flagged"]].values.tolist() \
        == [["frame", 6, 6, 10, 10]]
    assert events["ids"].iloc[0] == "1;2;3;4;5;6;7;8;9;10"  # numeric order
    assert events["evidence"].iloc[0] == ("frame 6: 10 of 10 scored ids flagged at once: the "
                                          "tracker or the registration failed on the whole frame")
    assert member.notna().sum() == 10


def test_half_the_ids_of_a_frame_is_the_edge_of_a_frame_event():
    # 5 of 10 ids flagged in frame 6 (q = 5/200): share 0.5 >= 0.5 and
    # P(K >= 5 | 10, 0.025) = 2.2e-6 <= 5e-5 (252 x 0.025^5 x 0.975^5 + ...): an event; with 4 flagged (share 0.4) none.
    five = {(pid, 6): (4.0, pid % 10 + 1, 1.0) for pid in IDS[:5]}
    tail = sum(math.comb(10, k) * 0.025 ** k * 0.975 ** (10 - k) for k in range(5, 11))
    assert tail == pytest.approx(2.2e-6, rel=0.02) and tail <= 0.001 / 20
    assert find_events(observations(five))[0]["kind"].tolist() == ["frame"]
    four = {(pid, 6): (4.0, pid % 10 + 1, 1.0) for pid in IDS[:4]}
    assert "frame" not in find_events(observations(four))[0]["kind"].tolist()


def test_a_run_away_from_its_own_place_is_a_drift_and_scattered_flags_are_no_event():
    # id 5 drifts: frames 7-12 flagged (6 in a row), 4 um from its own place and 6 um from
    # its nearest other (so on no other's place). Noise: ids 1, 2, 3 flagged once each, far
    # apart; id 8 for 2 frames in a row. Flagged: 6 + 3 + 2 = 11 of N = 200, q = 0.055:
    # L = ceil(ln(0.001 / 200) / ln(0.055)) = ceil(4.22) = 5; a run of 6 >= 5 is a drift,
    # runs of 1 and 2 are noise.
    flags = {(5, f): (4.0, 6, 6.0) for f in range(7, 13)}
    flags |= {(1, 3): (3.0, 2, 6.0), (2, 11): (3.0, 3, 6.0), (3, 17): (3.0, 4, 6.0),
              (8, 14): (3.0, 9, 6.0), (8, 15): (3.0, 9, 6.0)}
    assert math.ceil(math.log(0.001 / 200) / math.log(11 / 200)) == 5
    events, member = find_events(observations(flags))
    assert events[["kind", "ids", "first_frame", "last_frame", "observations", "on_lookalike"]
                  ].values.tolist() == [["drift", "5", 7, 12, 6, 0]]
    assert events["evidence"].iloc[0] == ("id 5 is a median 4 um from its own place (flagged: "
                                          "score above its threshold of 2 um) in 6 flagged "
                                          "observations, frames 7-12 (6 frames); nearest other "
                                          "identity: 6")
    assert member.notna().sum() == 6


def test_on_the_lookalike_is_measured_from_the_own_place_not_from_the_score():
    # id 3 flagged in frames 3-5 with look-alike 4 at 2 um. In frames 3 and 4 it sits 1 um from
    # where the registration puts it (its score of 9 um is penalties, not distance): not on
    # 4's place. In frame 5 it sits 5 um from its own place: on 4's place. Positions at the
    # origin, expected places on the x axis at the distance given.
    flags = {(3, f): (9.0, 4, 2.0) for f in (3, 4, 5)}
    table = observations(flags).assign(x_um=0.0, y_um=0.0, expected_x_um=0.0, expected_y_um=0.0)
    own = {3: 1.0, 4: 1.0, 5: 5.0}
    for frame, distance in own.items():
        table.loc[(table["pred_id"] == 3) & (table["frame"] == frame), "expected_x_um"] = distance
    from trackverify.audit.events import on_another_place, own_distance

    rows = table[(table["pred_id"] == 3) & table["frame"].isin([3, 4, 5])]
    assert own_distance(rows).tolist() == [1.0, 1.0, 5.0]
    assert on_another_place(rows).tolist() == [False, False, True]
    events, _ = find_events(table)
    assert events[["kind", "ids", "observations", "on_lookalike"]].values.tolist() == [
        ["identity", "3", 3, 1]]
    assert events["evidence"].iloc[0].startswith("id 3 sits a median 2 um from where 4 should "
                                                 "be and 5 um from its own place in 1 of 3")


def test_scattered_flags_alone_make_no_event():
    flags = {(1, 3): (3.0, 2, 6.0), (2, 11): (3.0, 3, 6.0), (3, 17): (3.0, 4, 6.0)}
    events, member = find_events(observations(flags))
    assert len(events) == 0 and member.isna().all()
    assert list(events.columns)[:3] == ["rank", "kind", "recording"]


def test_rank_by_observations_on_the_lookalike_then_flagged_uncovered_last():
    # id 1 -> 2: 3 rows, all on 2's place; id 3 -> 4: 5 flagged rows, 2 on 4's place;
    # id 7 -> 8: 3 rows, 2 on 8's place (fewer flagged than 3 -> 4: after it).
    # id 99 is not in the anchor frame: its rows are one event, after every other.
    flags = {(1, f): (5.0, 2, 0.5) for f in (2, 3, 4)}
    flags |= {(3, f): (5.0, 4, 0.5 if f < 4 else 6.0) for f in (2, 3, 4, 5, 6)}
    flags |= {(7, f): (5.0, 8, 0.5 if f < 12 else 6.0) for f in (10, 11, 12)}
    uncovered = {(99, f): "not_in_anchor_frame" for f in (4, 5, 6, 7)}
    events, _ = find_events(observations(flags, uncovered))
    assert events[["rank", "kind", "ids", "on_lookalike", "flagged", "observations"]
                  ].values.tolist() == [[1, "identity", "1", 3, 3, 3],
                                        [2, "identity", "3", 2, 5, 5],
                                        [3, "identity", "7", 2, 3, 3],
                                        [4, "uncovered", "99", 0, 0, 4]]


def test_the_audit_finds_a_synthetic_swap_as_one_event_and_writes_it(tmp_path):
    result = trackverify.audit(six_neurons(), out=tmp_path / "out")
    events = result.events
    assert events[["rank", "kind", "ids", "first_frame", "last_frame", "frames", "observations"]
                  ].values.tolist() == [[1, "swap", "0;1", 25, 39, 15, 30]]
    obs = result.observations
    swapped = obs["frame"].between(25, 39) & obs["pred_id"].isin([0, 1])
    assert (obs.loc[swapped, "event"] == 1).all() and obs.loc[~swapped, "event"].isna().all()
    written = pd.read_csv(tmp_path / "out" / "events.csv")
    assert written["kind"].tolist() == ["swap"] and written["observations"].tolist() == [30]
    assert result.summary["counts"]["events"] == 1
    assert result.summary["counts"]["events_by_kind"] == {
        "frame": 0, "swap": 1, "crossing": 0, "identity": 0, "switch": 0, "drift": 0,
        "uncovered": 0}
    report = (tmp_path / "out" / "report.html").read_text()
    assert "1. swap" in report and "Identities, worst first" in report
    # where the registration puts each id: the swapped rows sit one grid spacing from it
    row = obs[(obs["frame"] == 30) & (obs["pred_id"] == 0)].iloc[0]
    assert np.hypot(row["x_um"] - row["expected_x_um"], row["y_um"] - row["expected_y_um"]) \
        == pytest.approx(8.0, abs=0.5)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian package 'chromium')")
@pytest.mark.parametrize("width", [900, 1400])
def test_the_audit_report_fits_900_and_1400_px(real_audit, tmp_path, width):
    layout = chromium_layout(real_audit / "report.html", width, tmp_path)
    assert layout["tables"] >= 2  # the verdicts and the ids, worst first
    assert layout["wide"] == [] and layout["page"] <= layout["view"], layout


def _real_audit(out: Path) -> Path:
    done = run_cli("audit", EXAMPLE / "tracker_cpd.parquet", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def real_audit(tmp_path_factory) -> Path:
    """The audit of the shipped real tracker output (examples/real-tracker), run once for the
    suite (read only)."""
    return built_once(tmp_path_factory, "real-audit", _real_audit)


def test_the_real_tracker_audit_lists_its_events_and_draws_twenty(real_audit):
    events = pd.read_csv(real_audit / "events.csv")
    report = (real_audit / "report.html").read_text()
    assert 0 < len(events) < 1000 and events["rank"].tolist() == list(range(1, len(events) + 1))
    assert len(re.findall(r"<figure class='event' id='event-\d+'>", report)) == min(20, len(events))
    # every observation an event covers says so in audit.parquet, and the counts agree
    audit = pd.read_parquet(real_audit / "audit.parquet")
    covered = audit["event"].value_counts().sort_index()
    assert covered.index.astype(int).tolist() == events["rank"].tolist()
    assert covered.to_numpy().tolist() == events["observations"].tolist()
