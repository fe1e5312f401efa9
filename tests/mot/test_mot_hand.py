"""Canonical metrics on hand-computed cases, and the documented divergences between the
reference libraries shown on the smallest scenes that exhibit them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from mot_helpers import motmetrics_summary, run_reference, trackeval_summary

import trackverify
from trackverify.metrics import mot

ZD = 5.0


def scene(gt: list[tuple], pred: list[tuple]) -> dict:
    """gt / pred rows: (frame, id, x); y = 0 (2-D points)."""
    def side(rows, name):
        rows = np.array(rows, dtype=float).reshape(-1, 3)
        return {f"{name}_frame": rows[:, 0].astype(np.int64), f"{name}_id": rows[:, 1].astype(
            np.int64), f"{name}_xyz": np.column_stack([rows[:, 2], np.zeros(len(rows))]),
            f"{name}_det": np.arange(len(rows)) + (0 if name == "gt" else 10_000)}
    return {**side(gt, "gt"), **side(pred, "pred")}


def metrics(s: dict) -> dict:
    pairs = mot.similarity_pairs(s["gt_frame"], s["gt_xyz"], s["pred_frame"], s["pred_xyz"], ZD)
    return mot.canonical_metrics(s["gt_frame"], s["gt_id"], s["pred_frame"], s["pred_id"],
                                 *pairs)


# Frame without any prediction between two tracked frames.
NO_PRED_FRAME = scene(gt=[(0, 1, 0), (1, 1, 0), (2, 1, 0), (3, 1, 0)],
                      pred=[(0, 7, 0), (1, 7, 0), (3, 7, 0)])
# Reference id absent in frame 2 while another id keeps the frame busy.
ABSENT_ID = scene(gt=[(0, 1, 0), (1, 1, 0), (3, 1, 0)] + [(f, 2, 50) for f in range(4)],
                  pred=[(0, 7, 0), (1, 7, 0), (3, 7, 0)] + [(f, 8, 50) for f in range(4)])
# A matched to p, missed in frame 1, then p (similarity 0.6) competes with q (1.0).
OLD_PAIRING = scene(gt=[(0, 1, 0), (1, 1, 0), (2, 1, 0)],
                    pred=[(0, 7, 0), (1, 7, 100), (2, 7, 2), (2, 8, 0)])
# Continuation from the previous frame beats a better similarity.
CONTINUATION = scene(gt=[(0, 1, 0), (1, 1, 0)], pred=[(0, 7, 0), (1, 7, 2), (1, 8, 0)])


def test_similarity_is_one_minus_distance_over_zero_distance():
    gi, pj, sim = mot.similarity_pairs([0, 0, 1], [[0, 0], [10, 0], [0, 0]], [0, 0, 1],
                                       [[3, 4], [0, 0], [6, 8]], 10.0)
    # frame 0: gt0-(3,4) d=5 -> 0.5; gt0-(0,0) d=0 -> 1; gt1-(3,4) d=8.06 -> 0.194; gt1-(0,0)
    # d=10 -> 0 (dropped); frame 1: gt2-(6,8) d=10 -> 0 (dropped).
    order = np.lexsort((pj, gi))
    gi, pj, sim = gi[order], pj[order], sim[order]
    assert gi.tolist() == [0, 0, 1] and pj.tolist() == [0, 1, 0]
    np.testing.assert_allclose(sim, [0.5, 1.0, 1 - np.sqrt(49 + 16) / 10], rtol=0, atol=1e-15)


def _pairs_brute_force(gt_frame, gt_xyz, pred_frame, pred_xyz, zero_distance):
    """Every same-frame pair, distance as sqrt of the sum of squared differences."""
    gi, pj = np.nonzero(np.asarray(gt_frame)[:, None] == np.asarray(pred_frame)[None, :])
    d = np.sqrt(((gt_xyz[gi] - pred_xyz[pj]) ** 2).sum(axis=1))
    sim = np.maximum(0.0, 1.0 - d / zero_distance)
    return gi[sim > 0], pj[sim > 0], sim[sim > 0]


def _assert_brute_force_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz):
    """similarity_pairs gives exactly the brute-force pairs (in any order); returns them."""
    got = mot.similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, ZD)
    want = _pairs_brute_force(gt_frame, gt_xyz, pred_frame, pred_xyz, ZD)
    order_got, order_want = np.lexsort(got[:2]), np.lexsort(want[:2])
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a[order_got], b[order_want])
    return want


@pytest.mark.parametrize("dim", [2, 3])
def test_similarity_pairs_against_brute_force(dim):
    """Clustered and spread points, frames out of order, gaps, a moving specimen, points on
    cube boundaries, and an extent that takes the k-d tree path."""
    rng = np.random.default_rng(dim)
    for case in range(30):
        n_gt, n_pred = rng.integers(0, 300, size=2)
        n_frames = int(rng.integers(1, 12))
        spread = float(rng.choice([3.0, 30.0, 1e6 if case % 10 == 9 else 60.0]))
        gt_frame = rng.integers(0, n_frames, n_gt) * 3
        pred_frame = rng.integers(0, n_frames, n_pred) * 3
        gt_xyz = rng.uniform(0, spread, (n_gt, dim)) + gt_frame[:, None] * 7.0
        pred_xyz = rng.uniform(0, spread, (n_pred, dim)) + pred_frame[:, None] * 7.0
        if case % 3 == 0:  # on the grid of cube sides and halves
            gt_xyz, pred_xyz = np.round(gt_xyz / 2.5) * 2.5, np.round(pred_xyz / 2.5) * 2.5
        _assert_brute_force_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz)


def test_similarity_pairs_with_more_occupied_cubes_in_a_block_than_16_bits_count():
    """One frame whose reference points fill more than 2**16 cubes (the cube table then
    counts its cubes in 32 bits, below that in 16): the pairs of every prediction still
    those of the brute force, prediction by prediction."""
    rng = np.random.default_rng(16)
    gt_xyz = rng.uniform(0, 5000.0, (120_000, 2))
    pred_xyz = np.concatenate([gt_xyz[rng.choice(len(gt_xyz), 30, replace=False)]
                               + rng.normal(0, 2.0, (30, 2)), rng.uniform(0, 5000.0, (30, 2))])
    cubes = {tuple(c) for c in np.floor(gt_xyz / (2 * ZD)).astype(int).tolist()}
    assert len(cubes) > 1 << 16
    gi, pj, sim = mot.similarity_pairs(np.zeros(len(gt_xyz), int), gt_xyz,
                                       np.zeros(len(pred_xyz), int), pred_xyz, ZD)
    assert len(gi) >= 30
    for j, xy in enumerate(pred_xyz):
        s = np.maximum(0.0, 1.0 - np.sqrt(((gt_xyz - xy) ** 2).sum(axis=1)) / ZD)
        want = np.flatnonzero(s > 0)
        mine = pj == j
        np.testing.assert_array_equal(np.sort(gi[mine]), want)
        np.testing.assert_array_equal(sim[mine][np.argsort(gi[mine])], s[want])


def test_similarity_pairs_the_same_in_the_same_order_whatever_the_blocks(monkeypatch):
    """The cube table covers a block of frames at a time, its size chosen from the scene's
    extent: blocks of one frame each give the very same pairs, in the same order (the
    matchings break ties by that order), and they are the brute-force pairs."""
    rng = np.random.default_rng(5)
    n_frames = 400
    gt_frame = np.repeat(np.arange(n_frames), 30)
    gt_xyz = rng.uniform(0, 60.0, (len(gt_frame), 3)) + gt_frame[:, None] * 0.5
    pred_frame = np.sort(rng.integers(0, n_frames, 11_000))
    pred_xyz = rng.uniform(0, 60.0, (len(pred_frame), 3)) + pred_frame[:, None] * 0.5
    whole = mot.similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, ZD)
    assert mot._table_slots(n_frames * 9 ** 3) < n_frames * 9 ** 3  # several blocks already
    monkeypatch.setattr(mot, "_table_slots", lambda cubes: 1)  # one frame a block
    framewise = mot.similarity_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz, ZD)
    for a, b in zip(whole, framewise, strict=True):
        np.testing.assert_array_equal(a, b)
    _assert_brute_force_pairs(gt_frame, gt_xyz, pred_frame, pred_xyz)


def test_similarity_pairs_of_a_block_with_more_cubes_than_16_bits_count():
    """A block of frames whose occupied cubes are more than 2**16 (each frame's only 100):
    the cube numbers of the block need more than 16 bits. One axis, 2,000 frames of 100
    reference points 3 apart, each prediction 0.1 from its point: with zero distance 1 each
    prediction pairs with its own point only (similarity 0.9), and with no other."""
    n_frames, per_frame = 2_000, 100
    gt_frame = np.repeat(np.arange(n_frames), per_frame)
    gt_x = np.tile(np.arange(per_frame) * 3.0, n_frames)[:, None]
    n_cubes = n_frames * (per_frame * 3 // 2 + 2)  # cubes of side 2 along the axis
    block = mot._table_slots(n_cubes) // (n_cubes // n_frames)
    assert block * per_frame > 1 << 16  # frames a block x points a frame
    gi, pj, sim = mot.similarity_pairs(gt_frame, gt_x, gt_frame, gt_x + 0.1, 1.0)
    np.testing.assert_array_equal(np.sort(gi), np.arange(len(gt_frame)))
    np.testing.assert_array_equal(gi, pj)
    np.testing.assert_allclose(sim, 0.9, rtol=1e-12)


def test_hota_by_hand():
    # One id, two frames, similarities 1.0 and 0.6: the 0.6 match counts at alphas
    # 0.05..0.60 (12 of 19). Per alpha: TP 2 -> DetA 1, AssA 1, LocA 0.8, AssRe 1;
    # TP 1 -> DetA = AssA = 1/3, LocA 1, DetRe = AssRe = 0.5.
    m = metrics(scene(gt=[(0, 1, 0), (1, 1, 0)], pred=[(0, 7, 0), (1, 7, 2)]))
    assert m["hota"] == pytest.approx((12 + 7 / 3) / 19, abs=1e-12)
    assert m["deta"] == pytest.approx((12 + 7 / 3) / 19, abs=1e-12)
    assert m["loca"] == pytest.approx((12 * 0.8 + 7) / 19, abs=1e-12)
    assert m["detre"] == pytest.approx((12 + 7 * 0.5) / 19, abs=1e-12)
    assert m["assre"] == pytest.approx((12 + 7 * 0.5) / 19, abs=1e-12)
    assert (m["mota"], m["motp"], m["idf1"]) == (1.0, pytest.approx(0.8), 1.0)


def test_frame_without_predictions_does_not_break_a_run():
    # TrackEval skips frame 2 (no prediction): the id is tracked in frames 0, 1, 3 as one
    # run -> Frag 0; FN 1. A reset reading (and motmetrics) would count 1.
    m = metrics(NO_PRED_FRAME)
    assert (m["frag"], m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"]) == (0, 3, 1, 0, 0)
    assert m["mota"] == pytest.approx(0.75)


def test_absent_reference_id_breaks_a_run():
    # Frame 2 is processed (id 2 is there); id 1 is not matched in it -> two runs -> Frag 1.
    m = metrics(ABSENT_ID)
    assert (m["frag"], m["clr_tp"], m["clr_fn"], m["idsw"]) == (1, 7, 0, 0)


def test_continuation_is_preferred_over_similarity():
    # Frame 1: p continues (1000 + 0.6) and beats q (1.0): TP 2, FP 1, IDSW 0.
    m = metrics(CONTINUATION)
    assert (m["clr_tp"], m["clr_fp"], m["idsw"]) == (2, 1, 0)
    assert m["mota"] == pytest.approx(0.5) and m["motp"] == pytest.approx(0.8)


def test_continuation_only_from_the_previous_frame():
    # Frame 1 misses A, so in frame 2 nothing continues: q (1.0) beats p (0.6) and, A's last
    # match being p, that is a switch. TP 2, FN 1, FP 2, IDSW 1: MOTA = (2 - 2 - 1) / 3.
    m = metrics(OLD_PAIRING)
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"]) == (2, 1, 2, 1)
    assert m["mota"] == pytest.approx(-1 / 3) and m["motp"] == pytest.approx(1.0)


def test_reference_libraries_on_the_divergent_cases(tmp_path):
    """TrackEval agrees with us on all four; motmetrics differs exactly where documented."""
    cases = {"no_pred_frame": NO_PRED_FRAME, "absent_id": ABSENT_ID,
             "old_pairing": OLD_PAIRING, "continuation": CONTINUATION}
    ref = run_reference(tmp_path, cases, ZD)
    for name, s in cases.items():
        mine, te = metrics(s), trackeval_summary(ref["trackeval"][name])
        for key in ("mota", "motp", "idsw", "frag", "clr_tp", "clr_fn", "clr_fp", "hota", "idf1"):
            assert mine[key] == pytest.approx(te[key], abs=1e-12), (name, key)
    mm = {name: motmetrics_summary(ref["motmetrics"][name]) for name in cases}
    assert mm["no_pred_frame"]["frag"] == 1          # a miss inside the track span
    assert mm["absent_id"]["frag"] == 0              # absence is not a miss
    assert (mm["old_pairing"]["idsw"], mm["old_pairing"]["mota"]) == (0, 0)  # keeps p
    assert mm["old_pairing"]["motp"] == pytest.approx(0.8)
    assert mm["continuation"]["mota"] == pytest.approx(0.5)  # agrees when pairing is fresh


def test_undefined_values_are_none():
    empty = mot.canonical_metrics([], [], [], [], [], [], [])
    assert all(empty[k] is None for k in mot.METRICS if k not in ("idsw", "frag"))
    only_pred = mot.canonical_metrics([], [], [0, 1], [5, 5], [], [], [])
    assert only_pred["mota"] is None and only_pred["detre"] is None
    assert only_pred["hota"] == 0 and only_pred["idf1"] == 0 and only_pred["idp"] == 0
    assert only_pred["clr_fp"] == 2


def test_clear_metrics_accepts_any_similarity():
    # Two frames, one reference id, one prediction; a custom similarity below 0.5 in frame 1.
    out = mot.clear_metrics([0, 1], [3, 3], [0, 1], [9, 9], [0, 1], [0, 1], [0.9, 0.4])
    assert (out["clr_tp"], out["clr_fn"], out["clr_fp"], out["idsw"]) == (1, 1, 1, 0)
    assert out["mota"] == 0.0 and out["motp"] == pytest.approx(0.9)
    strict = mot.clear_metrics([0, 1], [3, 3], [0, 1], [9, 9], [0, 1], [0, 1], [0.9, 0.4],
                               threshold=0.95)
    assert strict["clr_tp"] == 0 and strict["motp"] is None


def test_clear_metrics_idsw_variants():
    # One reference id in frames 0-3: predicted 7, then 8 (a switch between consecutive
    # frames), no prediction at all in frame 2 (FN; TrackEval skips the frame), then 7 again
    # (a switch against the last match, frame 1, which is not frame 3 - 1).
    args = ([0, 1, 2, 3], [1, 1, 1, 1], [0, 1, 3], [7, 8, 7], [0, 1, 3], [0, 1, 2],
            [1.0, 1.0, 1.0])
    last = mot.clear_metrics(*args)
    cons = mot.clear_metrics(*args, idsw="consecutive")
    assert (last["clr_tp"], last["clr_fn"], last["clr_fp"], last["idsw"]) == (3, 1, 0, 2)
    assert last["mota"] == pytest.approx((3 - 0 - 2) / 4)
    assert (cons["clr_tp"], cons["clr_fn"], cons["clr_fp"], cons["idsw"]) == (3, 1, 0, 1)
    assert cons["mota"] == pytest.approx((3 - 0 - 1) / 4)
    assert mot.clear_metrics(*args, idsw="last_matched") == last
    with pytest.raises(ValueError, match="idsw"):
        mot.clear_metrics(*args, idsw="nearest")


def test_crowded_component_uses_the_best_assignment():
    # Frame 0: two references at x=0 and x=1.5, predictions at 0.4 and 1.2; all four pairs
    # are candidates (d <= 1.5). Best total similarity pairs them in order:
    # (1 - 0.4/5) + (1 - 0.3/5) = 1.86 against (1 - 1.2/5) + (1 - 1.1/5) = 1.54.
    m = metrics(scene(gt=[(0, 1, 0), (0, 2, 1.5)], pred=[(0, 7, 0.4), (0, 8, 1.2)]))
    assert m["clr_tp"] == 2 and m["motp"] == pytest.approx((0.92 + 0.94) / 2)


def _tracked_scene():
    """Reference ids 1-4 in frames 0-4 and id 5 in frames 0-9, far apart; each id's
    prediction sits on it in the first k frames and 50 um away after: tracked ratios
    4/5 = 0.8, 5/5, 1/5 = 0.2, 0/5 and 1/10."""
    gt, pred = [], []
    for i, (n, k) in enumerate([(5, 4), (5, 5), (5, 1), (5, 0), (10, 1)], start=1):
        for f in range(n):
            gt.append((f, i, 100.0 * i))
            pred.append((f, 10 + i, 100.0 * i + (0 if f < k else 50)))
    return scene(gt=gt, pred=pred)


def test_mostly_tracked_partially_tracked_mostly_lost_by_hand():
    # TrackEval: MT r > 0.8 (id 2), PT 0.2 <= r <= 0.8 (ids 1, 3), ML the rest (4, 5).
    # py-motmetrics: MT r >= 0.8 (ids 1, 2), PT 0.2 <= r < 0.8 (id 3), ML r < 0.2 (4, 5).
    m = metrics(_tracked_scene())
    assert (m["mt"], m["pt"], m["ml"]) == (1, 2, 2)
    assert (m["mt_pymotmetrics"], m["pt_pymotmetrics"], m["ml_pymotmetrics"]) == (2, 1, 2)


def test_mostly_tracked_matches_both_libraries(tmp_path):
    ref = run_reference(tmp_path, {"tracked": _tracked_scene()}, ZD)
    m = metrics(_tracked_scene())
    te = ref["trackeval"]["tracked"]["CLEAR"]
    mm = ref["motmetrics"]["tracked"]
    assert (te["MT"], te["PT"], te["ML"]) == (m["mt"], m["pt"], m["ml"])
    assert (mm["mostly_tracked"], mm["partially_tracked"], mm["mostly_lost"]) == (
        m["mt_pymotmetrics"], m["pt_pymotmetrics"], m["ml_pymotmetrics"])
@pytest.mark.parametrize("distance, matched", [(2.5, True), (2.4999, True), (2.5001, False)])
def test_similarity_exactly_at_the_threshold_matches(distance, matched):
    """One id tracked in two frames, every prediction ``distance`` from the truth (ZD 5):
    2.5 gives similarity 1 - 2.5 / 5 = 0.5 exactly, which CLEAR (s >= 0.5 - eps) and Identity
    (s >= 0.5) both accept; 2.5001 gives 0.49998 < 0.5, rejected by both."""
    m = metrics(scene(gt=[(0, 1, 0), (1, 1, 0)], pred=[(0, 7, distance), (1, 7, distance)]))
    s = 1 - distance / ZD
    if matched:
        assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"]) == (2, 0, 0, 0)
        assert m["mota"] == 1.0 and m["motp"] == pytest.approx(s, abs=1e-12)
        assert (m["idtp"], m["idfn"], m["idfp"], m["idf1"]) == (2, 0, 0, 1.0)
    else:
        assert (m["clr_tp"], m["clr_fn"], m["clr_fp"]) == (0, 2, 2)
        assert m["mota"] == -1.0 and m["motp"] is None
        assert (m["idtp"], m["idfn"], m["idfp"], m["idf1"]) == (0, 2, 2, 0.0)
    # HOTA counts the pair at the alphas 0.05 .. 0.45 (9 of 19) for s just below 0.5, and
    # also at 0.50 for s >= 0.5 - eps: per alpha DetA = AssA = 1 (TP) or 0 (FN + FP).
    assert m["hota"] == pytest.approx((10 if s >= 0.5 else 9) / 19, abs=1e-12)


def test_identity_threshold_argument_is_inclusive():
    # similarities 0.6 and 0.8 (distances 2 and 1); threshold 0.6: both frames count
    pairs_scene = scene(gt=[(0, 1, 0), (1, 1, 0)], pred=[(0, 7, 2), (1, 7, 1)])
    pairs = mot.similarity_pairs(pairs_scene["gt_frame"], pairs_scene["gt_xyz"],
                                 pairs_scene["pred_frame"], pairs_scene["pred_xyz"], ZD)
    args = (pairs_scene["gt_frame"], pairs_scene["gt_id"], pairs_scene["pred_frame"],
            pairs_scene["pred_id"], *pairs)
    assert mot.canonical_metrics(*args, threshold=0.6)["idtp"] == 2
    assert mot.canonical_metrics(*args, threshold=0.6000001)["idtp"] == 1
    assert mot.canonical_metrics(*args, threshold=0.8000001)["clr_tp"] == 0


@pytest.mark.parametrize("first, idsw", [(7, 1), (8, 0)])
def test_exact_tie_is_broken_by_input_order(first, idsw):
    """Frame 0: predictions 7 and 8 both 2 from the truth (similarity 0.6 each), a real tie;
    the one given first is matched. Frame 1: only 8 is near. Matching 7 first makes the switch
    to 8 an IDSW; matching 8 first makes none."""
    second = 15 - first
    m = metrics(scene(gt=[(0, 1, 0), (1, 1, 0)],
                      pred=[(0, first, -2 if first == 7 else 2), (0, second, 2 if first == 7 else -2),
                            (1, 8, 0)]))
    assert m["idsw"] == idsw and m["clr_tp"] == 2 and m["clr_fp"] == 1


def _random_graph(rng, n_gt, n_pred, n_edges):
    pairs = np.unique(np.column_stack([rng.integers(0, n_gt, n_edges),
                                       rng.integers(0, n_pred, n_edges)]), axis=0)
    return pairs[:, 0], pairs[:, 1], rng.uniform(0.01, 1.0, len(pairs))


@pytest.mark.parametrize("seed", range(4))
def test_max_weight_matching_equals_a_dense_hungarian_solve(seed):
    """Sparse random graphs (single edges, stars, 2 x 2 squares and larger components, on a
    random subset of the edges as CLEAR's gate makes): the matching is one-to-one and its
    total weight is the optimum of scipy's dense assignment (absent edges weigh 0)."""
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(seed)
    for _ in range(25):
        n_gt, n_pred = (int(v) for v in rng.integers(1, 40, 2))
        pg, pp, w = _random_graph(rng, n_gt, n_pred, int(rng.integers(1, 2 * (n_gt + n_pred))))
        edges = np.flatnonzero(rng.random(len(pg)) < (0.7 if seed % 2 else 1.0))
        got = mot._max_weight_matching(mot._Graph(pg, pp, n_gt, n_pred), edges, w[edges])
        assert np.isin(got, edges).all()
        assert len(np.unique(pg[got])) == len(got) == len(np.unique(pp[got]))
        dense = np.zeros((n_gt, n_pred))
        dense[pg[edges], pp[edges]] = w[edges]
        rows, cols = linear_sum_assignment(dense, maximize=True)
        assert w[got].sum() == pytest.approx(dense[rows, cols].sum(), rel=1e-12)


def test_max_weight_matching_tie_rules():
    """Documented ties: a star takes the smaller partner index; a 2 x 2 square whose two
    diagonals weigh the same takes the main diagonal (first gt with first pred)."""
    # star: gt 0 -- pred 0, 1, 2, all weight 0.5 (edges listed with pred 2 first)
    pg, pp = np.array([0, 0, 0]), np.array([2, 0, 1])
    got = mot._max_weight_matching(mot._Graph(pg, pp, 1, 3), np.arange(3), np.full(3, 0.5))
    assert pp[got].tolist() == [0]
    # star the other way: pred 0 -- gt 2, 1 (equal weights) -> gt 1
    pg, pp = np.array([2, 1]), np.array([0, 0])
    got = mot._max_weight_matching(mot._Graph(pg, pp, 3, 1), np.arange(2), np.full(2, 0.5))
    assert pg[got].tolist() == [1]
    # square: gt {3, 5} x pred {4, 6}; 0.3 + 0.7 on the main diagonal, 0.6 + 0.4 off it
    pg, pp = np.array([5, 3, 3, 5]), np.array([6, 6, 4, 4])
    w = np.array([0.7, 0.6, 0.3, 0.4])
    assert 0.3 + 0.7 == 0.6 + 0.4  # a real tie in float64
    got = mot._max_weight_matching(mot._Graph(pg, pp, 6, 7), np.arange(4), w)
    assert sorted(zip(pg[got].tolist(), pp[got].tolist())) == [(3, 4), (5, 6)]
    # the off-diagonal heavier by 0.1: it wins
    w = np.array([0.7, 0.6, 0.2, 0.5])
    got = mot._max_weight_matching(mot._Graph(pg, pp, 6, 7), np.arange(4), w)
    assert sorted(zip(pg[got].tolist(), pp[got].tolist())) == [(3, 6), (5, 4)]


def test_pair_keys_dense_and_sorted_paths():
    """Keys a * n_b + b, sorted and distinct, and each element's position among them; the
    dense path (n_a * n_b <= 2 ** 24) and the sort path give the same by hand."""
    keys, where = mot._pair_keys(np.array([1, 0, 1, 0]), np.array([1, 0, 1, 1]), 2, 2)
    assert keys.tolist() == [0, 1, 3] and where.tolist() == [2, 0, 2, 1]
    keys, where = mot._pair_keys(np.array([0, 1]), np.array([0, 0]), 2, 1)  # one b value
    assert keys.tolist() == [0, 1] and where.tolist() == [0, 1]
    big_a, big_b = 5000, 4000  # 2e7 > 2 ** 24 id pairs: the sort path
    keys, where = mot._pair_keys(np.array([4999, 0, 4999]), np.array([3999, 1, 3999]),
                                 big_a, big_b)
    assert keys.tolist() == [1, 4999 * 4000 + 3999] and where.tolist() == [1, 0, 1]


def test_similarity_pairs_frame_order_edge_cases():
    """Unsorted frames whose first row holds the smallest frame, and frame numbers beyond
    65535 (no 16-bit radix sort there): the pairs are those of the brute force."""
    rng = np.random.default_rng(7)
    for frames in ([0, 2, 1, 2, 0, 1, 1, 2], [70000, 3, 70000, 3, 65537, 1],
                   [65537, 1, 65537, 1, 65537, 1]):  # 65537 and 1 agree in 16 bits
        f = np.array(frames)
        gt_xyz = rng.uniform(0, 8, (len(f), 2))
        pred_xyz = gt_xyz[::-1] + rng.normal(0, 0.5, (len(f), 2))
        want = _assert_brute_force_pairs(f, gt_xyz, f[::-1], pred_xyz)
        assert len(want[0]) > len(f)  # several partners per point


@pytest.mark.parametrize("dim", [1, 2])
def test_similarity_pairs_over_a_huge_extent_take_the_tree_path(monkeypatch, dim):
    """Two clusters 1e7 apart (1e6 cubes of side 10 along each axis: more than the direct
    table's 2^20 slots even along one axis, so 1-D points too), each with near pairs in two
    frames: the k-d tree path finds exactly the brute-force pairs."""
    rng = np.random.default_rng(8)
    centre = np.repeat([[0.0] * dim, [1.1e7] * dim], 10, axis=0)
    gt_frame = np.tile([0, 1], 10)
    gt_xyz = centre + rng.uniform(0, 6, (20, dim))
    pred_xyz = gt_xyz + rng.normal(0, 1.0, (20, dim))
    calls = []
    tree = mot._similarity_pairs_tree
    monkeypatch.setattr(mot, "_similarity_pairs_tree", lambda *a: calls.append(1) or tree(*a))
    want = _assert_brute_force_pairs(gt_frame, gt_xyz, gt_frame, pred_xyz)
    assert calls == [1] and len(want[0]) > 20


def test_pair_a_hair_inside_the_zero_distance_is_kept():
    """d = 5 * (1 - 1e-10) with zero distance 5: similarity 1e-10 > 0, so it is a pair."""
    d = 5.0 * (1 - 1e-10)
    gi, pj, sim = mot.similarity_pairs([0], [[0.0, 0.0]], [0], [[d, 0.0]], 5.0)
    assert gi.tolist() == [0] and pj.tolist() == [0]
    assert sim[0] == pytest.approx(1e-10, rel=1e-5)


def test_pairs_across_frames_are_rejected():
    with pytest.raises(ValueError, match="^candidate pairs must join detections of the same frame$"):
        mot.sequence_counts([0, 1], [1, 1], [0, 1], [7, 7], [0], [1], [0.9])


def test_similarity_pairs_without_points_on_either_side():
    for gt, pred in (([], [0, 1]), ([0, 1], []), ([], [])):
        got = mot.similarity_pairs(gt, np.zeros((len(gt), 2)), pred, np.zeros((len(pred), 2)), ZD)
        assert [a.shape for a in got] == [(0,), (0,), (0,)]
        assert [a.dtype for a in got] == [np.int64, np.int64, np.float64]


def test_similarity_pairs_of_ordinary_scenes_use_the_cube_table(monkeypatch):
    """The k-d tree is the fallback for huge extents only: an ordinary scene (a specimen
    moving 7 units a frame, points on the cube grid and off it) never falls back to it."""
    def no_tree(*args):
        raise AssertionError("fell back to the k-d tree")

    monkeypatch.setattr(mot, "_similarity_pairs_tree", no_tree)
    rng = np.random.default_rng(9)
    for dim in (2, 3):
        for case in range(6):
            f_gt, f_pred = rng.integers(0, 8, 200), rng.integers(0, 8, 150)
            gt_xyz = rng.uniform(0, 40, (200, dim)) + f_gt[:, None] * 7.0
            pred_xyz = rng.uniform(0, 40, (150, dim)) + f_pred[:, None] * 7.0
            if case % 2:
                gt_xyz, pred_xyz = np.round(gt_xyz / 2.5) * 2.5, np.round(pred_xyz / 2.5) * 2.5
            _assert_brute_force_pairs(f_gt, gt_xyz, f_pred, pred_xyz)


def test_one_match_and_one_lone_reference_by_hand():
    """One reference and one predicted detection at similarity 0.3: a TP at the 6 alphas
    0.05..0.30, else FN 1 and FP 1. Per alpha with the TP: DetRe = DetPr = DetA = AssA =
    AssRe = AssPr = 1 and LocA 0.3; without: 0 and LocA 1 (TrackEval's 1e-10 / 1e-10).
    A sequence with one reference detection only: HOTA and DetA are 0, DetRe 0, the
    others undefined. Combined: the TP-weighted association means keep 1 at the 6 alphas."""
    one = mot.sequence_counts([0], [1], [0], [7], [0], [0], [0.3])
    m = mot.finish(one)
    for key in ("hota", "deta", "detre", "detpr", "assa", "assre", "asspr"):
        assert m[key] == pytest.approx(6 / 19, abs=1e-12), key
    assert m["loca"] == pytest.approx((6 * 0.3 + 13) / 19, abs=1e-12)
    lone = mot.finish(mot.sequence_counts([0], [1], [], [], [], [], []))
    assert (lone["hota"], lone["deta"], lone["detre"]) == (0.0, 0.0, 0.0)
    assert lone["detpr"] is None and lone["assa"] is None and lone["loca"] is None
    both = mot.finish(mot.combine([one, mot.sequence_counts([0], [1], [], [], [], [], [])]))
    assert both["assa"] == pytest.approx(6 / 19, abs=1e-12)
    assert both["loca"] == pytest.approx((6 * 0.3 + 13) / 19, abs=1e-12)
    assert both["detre"] == pytest.approx(6 / 19 / 2, abs=1e-12)   # TP 1 of 2 references


def test_hota_alpha_boundary_and_a_match_at_the_first_alpha_only():
    """A match counts at alpha when s >= alpha - eps: s = ALPHAS[5] - eps exactly counts at
    6 alphas; s = 0.07 only at alpha 0.05 (association is still defined)."""
    s = mot.ALPHAS[5] - mot.EPS
    c = mot.sequence_counts([0], [1], [0], [7], [0], [0], [s])
    assert c.hota_tp.tolist() == [1.0] * 6 + [0.0] * 13
    m = mot.finish(mot.sequence_counts([0], [1], [0], [7], [0], [0], [0.07]))
    assert m["assa"] == pytest.approx(1 / 19, abs=1e-12)


def _by_axis(gt_frame, gt_xyz, pred_frame, pred_xyz, zero_distance=ZD):
    """similarity_pairs_by_axis on (n, dim) arrays, sorted by (gt, pred)."""
    gt_xyz, pred_xyz = np.asarray(gt_xyz, dtype=float), np.asarray(pred_xyz, dtype=float)
    got = mot.similarity_pairs_by_axis(gt_frame, list(gt_xyz.T), pred_frame, list(pred_xyz.T),
                                       zero_distance)
    order = np.lexsort(got[:2])
    return tuple(a[order] for a in got)


def test_similarity_pairs_by_axis_without_points_on_either_side():
    """The axis-by-axis entry point returns empty int64, int64, float64 arrays when either
    side has no point (its own early return, not similarity_pairs')."""
    for gt, pred in (([], [0, 1]), ([0, 1], []), ([], [])):
        got = mot.similarity_pairs_by_axis(gt, [np.zeros(len(gt))], pred,
                                           [np.zeros(len(pred))], ZD)
        assert [a.shape for a in got] == [(0,), (0,), (0,)]
        assert [a.dtype for a in got] == [np.int64, np.int64, np.float64]


def test_similarity_pairs_by_axis_pairs_are_int64_and_float64():
    """Pairs found in frames already in order (no reordering index to go through): int64
    indices and float64 similarities, as the empty returns give, although the blocks keep
    them in int32 while they are joined. Two points per side at the same places, frames 0
    and 1: pairs (0, 0) and (1, 1), similarity 1."""
    got = mot.similarity_pairs_by_axis([0, 1], [np.array([0.0, 0.0])], [0, 1],
                                       [np.array([0.0, 0.0])], ZD)
    assert [a.tolist() for a in got] == [[0, 1], [0, 1], [1.0, 1.0]]
    assert [a.dtype for a in got] == [np.int64, np.int64, np.float64]


def test_similarity_pairs_by_axis_frames_and_coordinates_of_any_numeric_dtype():
    """Frames as uint8 and coordinates as float32 (compact table columns), or as pandas'
    nullable Int64 / Float64 columns: the pairs and float64 similarities of the same
    numbers in int64 / float64 (2-D points over 30 x 30 cubes, so a frame's stride of
    cubes, 900, exceeds what uint8 holds)."""
    import pandas as pd

    rng = np.random.default_rng(11)
    gt_frame, pred_frame = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    gt_xyz = rng.uniform(0, 300, (300, 2)).astype(np.float32)
    pred_xyz = rng.uniform(0, 300, (300, 2)).astype(np.float32)
    want = _pairs_brute_force(gt_frame, gt_xyz.astype(float), pred_frame,
                              pred_xyz.astype(float), ZD)
    order = np.lexsort(want[:2])
    want = tuple(a[order] for a in want)
    assert len(want[0]) >= 10
    for frame_of, axes_of in ((lambda f: f.astype(np.uint8), lambda x: list(x.T)),
                              (lambda f: pd.Series(f, dtype="Int64"),
                               lambda x: [pd.Series(c, dtype="Float64") for c in x.T])):
        got = mot.similarity_pairs_by_axis(frame_of(gt_frame), axes_of(gt_xyz),
                                           frame_of(pred_frame), axes_of(pred_xyz), ZD)
        got_order = np.lexsort(got[:2])
        assert got[2].dtype == np.float64
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a[got_order], b)


def test_similarity_pairs_frames_in_blocks_of_one():
    """1-D, zero distance 5 (cubes of side 10): frame 0 spans 6e6 (600,003 cubes with the
    margins, so a block of the cube table holds 2^20 // 600,003 = 1 frame). Frame 0: two
    references and a prediction 3e6 from both (its cubes are empty); frame 1: a prediction
    only; frame 2: a reference at 0 with predictions at 1, 2 (similarities 0.8, 0.6) and at
    6e6; frame 3: a reference only. Pairs: (2, 1, 0.8) and (2, 2, 0.6), by hand. Frames
    0, 1 and 3 share no block with a partner; frame 2's block comes after empty ones."""
    gt_frame, gt_x = [0, 0, 2, 3], [[0.0], [6e6], [0.0], [50.0]]
    pred_frame, pred_x = [0, 1, 2, 2, 2], [[3e6], [3e6], [1.0], [2.0], [6e6]]
    gi, pj, sim = _by_axis(gt_frame, gt_x, pred_frame, pred_x)
    assert gi.tolist() == [2, 2] and pj.tolist() == [2, 3]
    np.testing.assert_array_equal(sim, [1 - 1 / 5, 1 - 2 / 5])
    # No block holds both a reference and a prediction: no pair, typed empty arrays.
    got = mot.similarity_pairs_by_axis([0, 0], [np.array([0.0, 6e6])], [1], [np.zeros(1)], ZD)
    assert [a.shape for a in got] == [(0,), (0,), (0,)]
    assert [a.dtype for a in got] == [np.int64, np.int64, np.float64]


def test_similarity_pairs_cube_keys_beyond_16_bits():
    """1-D: a cube table over 65,539 cubes, so the keys need both 16-bit radix passes.
    References at 0 and 1 share a cube and one 655,360 units away lies 65,536 cubes
    further (the same low 16 bits); the prediction at -1 has both near ones as partners
    (distances 1 and 2: similarities 0.8 and 0.6)."""
    gi, pj, sim = _by_axis([0, 0, 0], [[0.0], [655360.0], [1.0]], [0], [[-1.0]])
    assert gi.tolist() == [0, 2] and pj.tolist() == [0, 0]
    np.testing.assert_array_equal(sim, [0.8, 0.6])


@pytest.mark.parametrize("gt_frame, gt_x, pred_frame, pred_x, pairs", [
    ([0, 0], [-2e7, 1.0], [0], [0.0], [(1, 0)]),  # a far reference first in its frame
    ([0, 1, 1], [0.0, -2e7, 1.0], [0, 1], [1.0, 0.0], [(0, 0), (2, 1)]),  # in a later frame
    ([0], [0.0], [0, 0], [-2e7, 1.0], [(0, 1)]),  # a far prediction first in its frame
    ([0, 1], [0.0, 0.0], [0, 1, 1], [1.0, -2e7, 1.0], [(0, 0), (1, 2)]),  # in a later frame
])
def test_similarity_pairs_each_frame_laid_out_from_its_lowest_point(gt_frame, gt_x, pred_frame,
                                                                    pred_x, pairs):
    """A frame whose lowest point (2e7 below the others) comes first among its rows: the
    frame's cubes start below it (2e6 cubes here: the k-d tree path). The pairs, by hand,
    are the near ones: distance 1, similarity 1 - 1/5 = 0.8."""
    gi, pj, sim = _by_axis(gt_frame, np.array(gt_x)[:, None], pred_frame,
                           np.array(pred_x)[:, None])
    assert list(zip(gi.tolist(), pj.tolist())) == pairs
    np.testing.assert_array_equal(sim, np.full(len(pairs), 0.8))


def test_similarity_pairs_unsorted_frames_beyond_16_bits_in_blocks():
    """Frames 2, 65537, 1 (65537 and 1 agree in their low 16 bits), each frame a block of its
    own (an extent of 6e6 in frame 65537): the points must be ordered by their full frame
    numbers. Each frame has a reference at 0 and a prediction at 1 (similarity 0.8)."""
    frames = np.array([2, 65537, 1])
    gt_x = [[0.0], [0.0], [0.0], [6e6]]
    gi, pj, sim = _by_axis(np.r_[frames, 65537], gt_x, frames, [[1.0], [1.0], [1.0]])
    assert gi.tolist() == [0, 1, 2] and pj.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(sim, [0.8, 0.8, 0.8])


# One reference id A at frames 0, 1; predicted id X at frames 0, 1 and Y at frame 1 only.
# Frame 1: A-X and A-Y both at similarity 0.52 (a conflict the alignment decides).
HOTA_CONFLICT = dict(gt_frame=[0, 1], gt_id=[1, 1], pred_frame=[0, 1, 1], pred_id=[7, 7, 8],
                     pair_gt=[1, 1], pair_pred=[1, 2])


def test_hota_alignment_ignores_a_pair_whose_denominator_is_eps():
    """Frame 0 adds A-X at similarity eps, the only pair of both detections, so its
    denominator ``rowsum + colsum - s`` is eps itself: not above eps, its IoU-like
    similarity is 0. Frame 1: denominators 0.52 + 1.04 - 0.52 = 1.04, similarities
    0.52 / 1.04 = 0.5. Alignment A-X: 0.5 / (2 + 2 - 0.5) = 1/7; A-Y: 0.5 / (2 + 1 - 0.5) =
    0.2, so A-Y is matched in frame 1 (were the eps pair counted as 1: A-X 1.5 / 2.5 = 0.6
    would win). At alphas 0.05..0.50 one TP, AssA = 1 / (2 + 1 - 1) = 0.5; above, none."""
    c = mot.sequence_counts(**HOTA_CONFLICT | dict(
        pair_gt=[0, 1, 1], pair_pred=[0, 1, 2], pair_similarity=[mot.EPS, 0.52, 0.52]))
    assert c.hota_tp.tolist() == [1.0] * 10 + [0.0] * 9
    np.testing.assert_allclose(c.assa, [0.5] * 10 + [0.0] * 9, rtol=0, atol=1e-15)


def test_hota_alignment_divides_each_similarity_by_its_own_denominator():
    """Frame 0 adds A-X at similarity 0.12, alone: denominator 0.12, IoU-like similarity 1.
    Alignment A-X: (1 + 0.5) / (2 + 2 - 1.5) = 0.6 beats A-Y's 0.2 (were the 0.12 not
    divided by its denominator below 1: A-X (0.12 + 0.5) / 3.38 = 0.18 would lose).
    Alphas 0.05, 0.10: both matches are A-X: AssA = 2 / (2 + 2 - 2) = 1; alphas
    0.15..0.50: the frame-1 match only, 1 / (2 + 2 - 1) = 1/3; above: 0."""
    c = mot.sequence_counts(**HOTA_CONFLICT | dict(
        pair_gt=[0, 1, 1], pair_pred=[0, 1, 2], pair_similarity=[0.12, 0.52, 0.52]))
    assert c.hota_tp.tolist() == [2.0] * 2 + [1.0] * 8 + [0.0] * 9
    np.testing.assert_allclose(c.assa, [1.0] * 2 + [1 / 3] * 8 + [0.0] * 9, rtol=0, atol=1e-15)


def test_hota_with_one_predicted_id_and_unequal_reference_counts():
    """One predicted id X (3 detections) matched at similarity 1 to reference id A (1
    detection) and B (2): AssA = (1 * 1/(1 + 3 - 1) + 2 * 2/(2 + 3 - 2)) / 3 = 5/9, AssRe =
    (1 * 1/1 + 2 * 2/2) / 3 = 1, AssPr = (1 * 1/3 + 2 * 2/3) / 3 = 5/9, at every alpha."""
    c = mot.sequence_counts([0, 1, 2], [1, 2, 2], [0, 1, 2], [7, 7, 7], [0, 1, 2], [0, 1, 2],
                            [1.0, 1.0, 1.0])
    np.testing.assert_allclose(c.assa, np.full(19, 5 / 9), rtol=0, atol=1e-15)
    np.testing.assert_allclose(c.assre, np.full(19, 1.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(c.asspr, np.full(19, 5 / 9), rtol=0, atol=1e-15)


def test_clear_pair_of_similarity_zero_is_no_candidate_even_at_threshold_zero():
    """Candidate pairs have similarity > 0: a pair at 0 is dropped before the threshold
    test, so even at threshold 0 the lone reference and prediction are a FN and a FP
    (MOTA = (0 - 1 - 0) / 1 = -1, MOTP undefined)."""
    m = mot.clear_metrics([0], [1], [0], [7], [0], [0], [0.0], threshold=0.0)
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["mota"], m["motp"]) == (0, 1, 1, -1.0, None)


def test_similarity_pairs_partner_of_a_point_on_its_cubes_half():
    """Zero distance 1.7; the reference at -1000 lays the frame's cubes out from -1003.4.
    The prediction at -376.1000000000001 lies (after rounding) exactly on its cube's half,
    and its partner at -377.8 is 1.6999999999999318 < 1.7 below it, in the cube below once
    rounded: with cubes of exactly 2 * 1.7 the lookup went the other way and missed the pair
    (similarity 1 - 1.6999999999999318 / 1.7, about 4e-14)."""
    gi, pj, sim = _by_axis([0, 0], [[-1000.0], [-377.8]], [0], [[-376.1000000000001]], 1.7)
    assert gi.tolist() == [1] and pj.tolist() == [0]
    np.testing.assert_array_equal(sim, [1.0 - abs(-377.8 + 376.1000000000001) / 1.7])



def test_similarity_pairs_cubes_are_not_narrower_than_twice_the_zero_distance():
    """801 frames; in frame k a reference at 0 (3 zd from the rest: no partner) lays the
    cubes out from one cube side below it, a prediction sits at 3 zd (1 + k * 1e-10) -- on,
    or within 4e-8 zd of, the half of the third cube -- and references at zd (1 - 1e-12) on
    either side of it are its two partners (similarity 1e-12 each, up to rounding).
    Cubes even 1e-8 narrower than 2 zd would leave one of the two in a cube the lookup
    skips for the predictions nearest the half."""
    k = np.arange(-400, 401)
    frames = np.arange(len(k))
    p = 3 * ZD * (1 + k * 1e-10)
    reach = ZD * (1 - 1e-12)
    gt_frame = np.repeat(frames, 3)
    gt_x = np.column_stack([np.zeros(len(k)), p - reach, p + reach]).ravel()[:, None]
    gi, pj, sim = _by_axis(gt_frame, gt_x, frames, p[:, None])
    want = _pairs_brute_force(gt_frame, gt_x, frames, p[:, None], ZD)
    assert len(want[0]) == 2 * len(k)
    order = np.lexsort(want[:2])
    for a, b in zip((gi, pj, sim), want, strict=True):
        np.testing.assert_array_equal(a, b[order])


def test_clear_threshold_is_inclusive_down_to_threshold_minus_eps():
    """A pair is matchable when s >= threshold - eps: at 0.5 - eps exactly it is a TP (MOTA
    1), one ulp below it is not (a FN and a FP: MOTA -1)."""
    at = 0.5 - mot.EPS
    below = np.nextafter(at, 0.0)
    m = mot.clear_metrics([0], [1], [0], [7], [0], [0], [at])
    assert (m["clr_tp"], m["mota"]) == (1, 1.0)
    m = mot.clear_metrics([0], [1], [0], [7], [0], [0], [below])
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["mota"]) == (0, 1, 1, -1.0)


def test_identity_recall_with_as_many_misses_as_matches():
    """Reference id 1 in frames 0 and 1, one prediction (id 7) on it in frame 0 only:
    IDTP = 1, IDFN = 1, IDFP = 0: IDR = 1 / 2, IDP = 1, IDF1 = 2 / 3."""
    m = mot.canonical_metrics([0, 1], [1, 1], [0], [7], [0], [0], [1.0])
    assert (m["idtp"], m["idfn"], m["idfp"]) == (1, 1, 0)
    assert (m["idr"], m["idp"]) == (0.5, 1.0)
    assert m["idf1"] == pytest.approx(2 / 3, abs=1e-15)


def test_clear_frames_without_a_reference_are_not_processed():
    """Reference id 1 at frames 0, 2, 3; prediction 7 at 0 and 2 (similarity 0.6 at 2),
    prediction 8 at 1 (no reference there) and 2 (similarity 1.0). Frame 1 has no reference
    and frame 3 no prediction: neither is processed, so frame 2 follows frame 0 and the
    continuation keeps 7 (no switch); frame 3's reference is a FN. TP 2, FN 1, FP 2 (8 at
    frames 1 and 2): MOTA = (2 - 2 - 0) / 3 = 0."""
    m = mot.clear_metrics([0, 2, 3], [1, 1, 1], [0, 2, 1, 2], [7, 7, 8, 8], [0, 1, 1],
                          [0, 1, 3], [1.0, 0.6, 1.0])
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"]) == (2, 1, 2, 0)
    assert m["mota"] == 0.0


def test_clear_continuation_from_reference_detection_zero():
    """Reference id 1 at frames 0 (detection 0) and 1; predictions 7 and 8 in both frames.
    Frame 0: 7 at 1.0, 8 at 0.5: 7 is matched. Frame 1: 7 at 0.6, 8 at 1.0: the
    continuation from detection 0's match keeps 7 (no switch). Both frames are conflicts,
    so frame 1 must wait for frame 0's matching. TP 2, FP 2, IDSW 0."""
    m = mot.clear_metrics([0, 1], [1, 1], [0, 0, 1, 1], [7, 8, 7, 8], [0, 0, 1, 1],
                          [0, 1, 2, 3], [1.0, 0.5, 0.6, 1.0])
    assert (m["clr_tp"], m["clr_fp"], m["idsw"]) == (2, 2, 0)
    assert m["motp"] == pytest.approx(0.8, abs=1e-15)


def test_combined_motp_ignores_sequences_without_a_match():
    """One sequence with a match at 0.8, one with a lone reference: combined MOTP is the
    mean similarity of the one match, 0.8."""
    matched = mot.sequence_counts([0], [1], [0], [7], [0], [0], [0.8])
    lone = mot.sequence_counts([0], [1], [], [], [], [], [])
    assert mot.finish(mot.combine([matched, lone]))["motp"] == 0.8


def test_sequence_counts_drop_pairs_of_similarity_zero_even_at_threshold_zero():
    """As for clear_metrics: a zero-similarity pair is no candidate, so at threshold 0 the
    lone reference and prediction stay a FN and a FP for CLEAR and Identity (IDTP 0)."""
    m = mot.canonical_metrics([0], [1], [0], [7], [0], [0], [0.0], threshold=0.0)
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idtp"]) == (0, 1, 1, 0)


def test_ids_of_any_kind_give_the_same_metrics():
    """Reference ids as strings or negative integers, predicted ids likewise: the metrics of
    the same scene with ids 0, 1 (a swap at frame 1: IDSW 2 -- each reference id changes
    prediction -- and IDTP 2 of 4)."""
    gt_frame, pred_frame = [0, 0, 1, 1], [0, 0, 1, 1]
    pairs = ([0, 1, 2, 3], [0, 1, 3, 2], [1.0, 1.0, 1.0, 1.0])
    base = mot.canonical_metrics(gt_frame, [0, 1, 0, 1], pred_frame, [0, 1, 0, 1], *pairs)
    assert (base["idsw"], base["idtp"]) == (2, 2)
    for gt_id, pred_id in ((["a", "b", "a", "b"], ["x", "y", "x", "y"]),
                           ([-5, 3, -5, 3], [-1, -2, -1, -2])):
        assert mot.canonical_metrics(gt_frame, gt_id, pred_frame, pred_id, *pairs) == base


def test_counts_from_compact_dtypes_equal_those_from_int64_and_float64():
    """Frames, ids and pair indices as uint8 and similarities as float32 (as a compact table
    stores them): CLEAR (clear_metrics and sequence_counts) and HOTA give exactly what the
    same numbers give as int64 / float64 (MOTP and LocA sum the similarities in float64)."""
    rng = np.random.default_rng(12)
    n = 40
    frame = np.arange(n) // 2
    sim32 = rng.uniform(0.5, 1.0, n).astype(np.float32)
    ids = np.tile([1, 2], n // 2)
    args64 = (frame, ids, frame, ids + 5, np.arange(n), np.arange(n), sim32.astype(np.float64))
    args8 = tuple(a.astype(np.uint8) for a in args64[:6]) + (sim32,)
    want = mot.canonical_metrics(*args64)
    assert mot.canonical_metrics(*args8) == want
    assert mot.clear_metrics(*args8) == mot.clear_metrics(*args64)
    assert want["motp"] == pytest.approx(float(sim32.astype(np.float64).mean()), rel=1e-15)


def test_clear_consecutive_switches_and_fragmentation_by_hand():
    """Reference id 1 at frames 0, 1, 2, 3, 5 matched (similarity 1) to predictions 7, 7, 8,
    9, 10; reference id 2 and prediction 11 at frame 4, no pair (so frame 4 is processed,
    and id 2 is never matched). Switches at frames 2 (7 -> 8), 3 (8 -> 9) and 5 (9 -> 10):
    all three count as last-matched switches; "consecutive" counts only those whose previous
    match is at frame - 1: frames 2 and 3 (frame 5's previous match is at 3). Fragmentation:
    id 1 has two runs over consecutive processed frames (0-3 and 5): 1; id 2 none: 0."""
    gt_frame, gt_id = [0, 1, 2, 3, 5, 4], [1, 1, 1, 1, 1, 2]
    pred_frame, pred_id = [0, 1, 2, 3, 5, 4], [7, 7, 8, 9, 10, 11]
    pairs = ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [1.0] * 5)
    for rule, idsw in (("last_matched", 3), ("consecutive", 2)):
        m = mot.clear_metrics(gt_frame, gt_id, pred_frame, pred_id, *pairs, idsw=rule)
        assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"], m["frag"]) == (5, 1, 1, idsw, 1)
        assert m["mota"] == pytest.approx((5 - 1 - idsw) / 6, abs=1e-15)


def test_similarity_pairs_by_axis_reads_frames_given_as_floats():
    # Frame numbers held as floats (e.g. a column read with a missing-value dtype) are frame
    # numbers: gt 0 (frame 0, x 0) meets pred 1 (frame 0, x 3): 1 - 3/5 = 0.4; gt 1 (frame
    # 1, x 0) meets pred 0 (frame 1, x 1): 1 - 1/5 = 0.8.
    gi, pj, sim = mot.similarity_pairs_by_axis(
        np.array([0.0, 1.0]), [np.zeros(2), np.zeros(2)], np.array([1.0, 0.0]),
        [np.array([1.0, 3.0]), np.zeros(2)], ZD)
    got = sorted(zip(gi.tolist(), pj.tolist(), sim.tolist()))
    assert got == [(0, 1, pytest.approx(0.4)), (1, 0, pytest.approx(0.8))]


def test_hota_matches_a_pair_alone_in_the_graph():
    # One reference and one prediction joined by one pair of similarity 0.62: alone in the
    # graph, matched outright; it passes the alphas 0.05 .. 0.6 (12 of 19).
    counts = mot.sequence_counts([0], [0], [0], [0], [0], [0], [0.62])
    assert counts.hota_tp.tolist() == [1.0] * 12 + [0.0] * 7


def test_hota_iou_of_a_pair_whose_denominator_is_eps_is_zero():
    # TrackEval divides s / (row sum + column sum - s) only where the denominator > eps.
    # Frame 0: reference A (id 1) has two partners P (id 7) and R (id 9), both of similarity
    # t = 2^-53: denominator t + 2t - t = 2t = eps, so both IoU terms are 0 (not 1/2).
    # Frame 1: A has partners P and Q (id 8), both 0.55 (IoU terms 0.55 / 1.1 = 1/2 each).
    # Potentials (1, 7) = (1, 8) = 1/2; align (1, 7) = 0.5 / (2 + 2 - 0.5) = 1/7 < align
    # (1, 8) = 0.5 / (2 + 1 - 0.5) = 0.2, so frame 1 matches Q (with the frame-0 terms at 1/2
    # it would match P). The match passes the alphas 0.05 .. 0.55 (11 of 19); the frame-0
    # match (similarity t) passes none. AssA = 1 / (2 + 1 - 1) = 0.5, AssRe = 1 / 2,
    # AssPr = 1 / 1.
    t = 2.0 ** -53
    c = mot.sequence_counts([0, 1], [1, 1], [0, 0, 1, 1], [7, 9, 7, 8], [0, 0, 1, 1],
                            [0, 1, 2, 3], [t, t, 0.55, 0.55])
    assert c.hota_tp.tolist() == [1.0] * 11 + [0.0] * 8
    assert c.assa.tolist() == pytest.approx([0.5] * 11 + [0.0] * 8)
    assert c.assre.tolist() == pytest.approx([0.5] * 11 + [0.0] * 8)
    assert c.asspr.tolist() == pytest.approx([1.0] * 11 + [0.0] * 8)


def test_identity_counts_only_the_id_pairs_at_the_threshold():
    # Pairs at the threshold 0.5: (gt 0, pred 0) ids (0, 0); (1, 1) ids (0, 1); (2, 2) ids
    # (1, 1); (2, 0) at 0.3 is below it, so its id pair (1, 0) has no count. One match per
    # id pair: (0, 0) and (1, 1) give IDTP 2 (taking (0, 1) leaves 1); IDFN = 3 - 2,
    # IDFP = 3 - 2.
    pg, pp = np.array([0, 1, 2, 2]), np.array([0, 1, 2, 0])
    g_id, p_id = np.array([0, 0, 1]), np.array([0, 1, 1])
    got = mot._identity(pg, pp, np.array([0.9, 0.8, 0.9, 0.3]), g_id, p_id, 3, 3, 0.5,
                        mot._pair_keys(g_id[pg], p_id[pp], 2, 2))
    assert got == {"idtp": 2, "idfn": 1, "idfp": 1}


@pytest.mark.parametrize("seed", range(3))
def test_exact_ties_in_a_shuffled_table_go_to_the_earlier_row(seed):
    """The public call puts the predictions in frame order before matching; the tie rule
    (the prediction given first is matched) still reads the table's order. 40 tracks, 100
    apart, as in test_exact_tie_is_broken_by_input_order: in frame 0 each has predictions
    a (id 1000 + k) and b (id 2000 + k) both 2 from it, in frame 1 only b on it; rows
    shuffled. A track whose a row comes first matches a in frame 0 and then switches to b
    (one IDSW, one identity switch of the diagnostics); one whose b row comes first makes
    none."""
    import pandas as pd

    from trackverify import evaluate_tracking

    n = 40
    x = 100.0 * np.arange(n)
    rows = pd.DataFrame({
        "frame": np.r_[np.zeros(2 * n, int), np.ones(n, int)],
        "pred_id": np.r_[1000 + np.arange(n), 2000 + np.arange(n), 2000 + np.arange(n)],
        "x_um": np.r_[x - 2, x + 2, x], "y_um": 0.0})
    pred = rows.iloc[np.random.default_rng(seed).permutation(len(rows))].reset_index(drop=True)
    ref = pd.DataFrame({"frame": np.repeat([0, 1], n), "track": np.tile(np.arange(n), 2),
                        "x_um": np.tile(x, 2), "y_um": 0.0})
    position = pd.Series(np.arange(len(pred)), index=pred.index)
    a_row = position[(pred["frame"] == 0) & (pred["pred_id"] < 2000)].to_numpy()
    b_row = position[(pred["frame"] == 0) & (pred["pred_id"] >= 2000)].to_numpy()
    a_first = int((a_row[np.argsort(pred["pred_id"].to_numpy()[a_row])]
                   < b_row[np.argsort(pred["pred_id"].to_numpy()[b_row])]).sum())
    assert 0 < a_first < n  # both orders occur
    m = evaluate_tracking(ref, pred, zero_distance_um=5.0)["recording"]
    assert m["idsw"] == a_first and m["identity_switches"] == a_first
    assert m["clr_tp"] == 2 * n and m["clr_fp"] == n


def _sparse(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(frame=table["frame"] * 1000 + 5)


@pytest.mark.parametrize("linked", [True, False])
def test_sparse_frame_numbers_change_no_number_and_keep_the_real_frames(linked):
    """Every metric depends on the frames' order only; frames 5, 1005, ..., 9005 give the
    hand case's numbers, and its switch is reported at the real frame 6005 (frame 6)."""
    from tests.test_timeline import hand_case

    table = hand_case() if linked else hand_case().drop(columns=["detection"])
    dense, sparse = (trackverify.evaluate_tracking(t.drop(columns=["pred_id", "pred_valid"]),
                                                   t.drop(columns=["track"]))
                     for t in (table, _sparse(table)))
    assert sparse == dense
    assert sparse.events[["track", "frame", "from_id", "to_id"]].values.tolist() == [
        [1, 6005, 11, 13]]


FAR_FRAMES = """
import resource, numpy as np, pandas as pd, trackverify
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # an array per frame number: 16 GiB
frames = np.array([5, 0, 2**31 - 1, 3])
ref = pd.DataFrame({"recording": "r", "frame": frames, "track": [1, 1, 1, 2],
                    "x_um": [0.0, 1, 2, 3], "y_um": 0.0})
pred = ref.rename(columns={"track": "pred_id"}).assign(pred_valid=True)
m = trackverify.evaluate_tracking(ref, pred)["r"]
print(m["hota"], m["idf1"], m["idsw"], m["frag"], m["mt"])
"""


def test_a_frame_number_near_2_31_costs_no_memory():
    """Track 1 at frames 0, 5, 2**31 - 1, track 2 at 3, predicted exactly: everything is
    matched (HOTA = IDF1 = 1, no switch, both mostly tracked); track 1 is not tracked at
    frame 3 (a frame with detections on both sides), so it is tracked again at 5: one
    fragmentation (TrackEval's Frag)."""
    child = subprocess.run([sys.executable, "-c", FAR_FRAMES], capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.split() == ["1.0", "1.0", "0", "1", "2"]


def test_alphas_passed_counts_the_alphas_below_every_similarity_near_a_step():
    """The count of alphas a match passes (``alpha - eps <= s``) equals numpy's binary search
    of the 19 bounds, on every float within 4,096 ulps of each ``k / 20`` and of each bound
    (where ``floor(20 s)`` could be off), and on seeded random similarities in (0, 1]."""
    bounds = mot.ALPHAS - mot.EPS
    centres = np.r_[np.arange(21) / 20.0, bounds]
    near = [c + np.arange(-4096, 4097) * np.spacing(c) for c in centres]
    s = np.clip(np.concatenate([*near, np.random.default_rng(5).random(100_000)]), 1e-300, 1.0)
    want = np.searchsorted(bounds, s, side="right")
    np.testing.assert_array_equal(mot._alphas_passed(s), want)


def test_a_chain_of_crossings_keeps_the_first_pairing():
    """Ids 1, 2 and predictions 7, 8 in six frames, every pair a candidate. Frame 0 prefers
    1-7, 2-8 (0.9 against 0.6); frames 1..5 prefer the crossing 1-8, 2-7 (0.9 against 0.6),
    but each frame continues the previous one (1000.6 + 1000.6 > 0.9 + 0.9): 1-7, 2-8
    throughout, TP 12, IDSW 0, MOTP (2 * 0.9 + 10 * 0.6) / 12 = 0.65. Each frame's choice
    rests on the frame before it, a chain of six."""
    frames = np.repeat(np.arange(6), 2)
    ids_gt, ids_pred = np.tile([1, 2], 6), np.tile([7, 8], 6)
    pair_gt = (2 * np.arange(6)[:, None] + [0, 0, 1, 1]).ravel()
    pair_pred = (2 * np.arange(6)[:, None] + [0, 1, 0, 1]).ravel()
    same = np.r_[0.9, np.full(5, 0.6)]  # 1-7 and 2-8 in each frame
    sim = np.column_stack([same, 1.5 - same, 1.5 - same, same]).ravel()
    m = mot.clear_metrics(frames, ids_gt, frames, ids_pred, pair_gt, pair_pred, sim)
    assert (m["clr_tp"], m["clr_fn"], m["clr_fp"], m["idsw"], m["frag"]) == (12, 0, 0, 0, 0)
    assert m["mota"] == 1.0 and m["motp"] == pytest.approx(0.65, abs=1e-15)
