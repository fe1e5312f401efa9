"""Hand-computed cases of the andi/core.py helpers the scorers do not reach: label lists,
field-of-view cutting, data-frame conversion and the VIP choice. Every expected value was
worked out by hand from the definitions in the docstrings and agrees with andi-datasets
2.1.13 (``andi_datasets.utils_challenge``) on the same input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trackverify.andi as A

PAD = -1


def test_label_continuous_to_list_by_hand():
    # a change in any column is a changepoint: alpha at t = 3, only D at t = 5
    labs = np.array([[1, 0.5, 2], [1, 0.5, 2], [1, 0.5, 2], [0.7, 0.3, 1], [0.7, 0.3, 1],
                     [0.7, 0.9, 1]])
    cp, alphas, Ds, states = A.label_continuous_to_list(labs)
    assert cp.tolist() == [3, 5, 6]
    assert alphas.tolist() == [1, 0.7, 0.7] and Ds.tolist() == [0.5, 0.3, 0.9]
    assert states.tolist() == [2, 1, 1]
    out = A.label_continuous_to_list(labs[:, :2])
    assert len(out) == 3 and out[0].tolist() == [3, 5, 6] and out[2].tolist() == [0.5, 0.3, 0.9]
    # no change: one segment ending at T
    cp, alphas, _ = A.label_continuous_to_list(np.array([[1.0, 2.0]] * 4))
    assert cp.tolist() == [4] and alphas.tolist() == [1.0]


def test_label_list_to_continuous_by_hand():
    # official: segment k covers (b_k, b_{k+1}] plus t = 0, one step after each changepoint
    assert A.label_list_to_continuous([3, 5], [1, 2]).tolist() == [1, 1, 1, 1, 2]
    assert A.label_list_to_continuous([2, 3, 6], [1, 2, 3]).tolist() == [1, 1, 1, 2, 3, 3]
    # corrected: [b_k, b_{k+1}), the inverse of label_continuous_to_list
    assert A.label_list_to_continuous([3, 5], [1, 2], corrected=True).tolist() == \
        [1, 1, 1, 2, 2]
    assert A.label_list_to_continuous([2, 3, 6], [1, 2, 3], corrected=True).tolist() == \
        [1, 1, 2, 3, 3, 3]


def _fov_case():
    """Three trajectories of 12 frames in the FOV (0, 10) x (0, 10), cutoff 3.

    0: x = 10 at t = 3 is on the edge (outside): runs [0, 3) (length 3 = cutoff, kept) and
       [4, 12); labels constant.
    1: x = 0 at t = 2 and y = 10 at t = 11 are outside: [0, 2) (length 2, dropped) and
       [3, 11) with alpha 1 -> 0.5 at t = 7 (changepoint 4 of the piece); the state change
       at t = 9 leaves a last run of 2 inside the piece, which the filter removes.
    2: entirely outside.
    """
    trajs = np.zeros((3, 12, 2))
    trajs[..., 1] = 5
    trajs[0, :, 0] = [1, 2, 3, 10, 4, 5, 6, 7, 8, 9, 9, 9]
    trajs[1, :, 0] = [1, 2, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3]
    trajs[1, 11, 1] = 10
    trajs[2, :, 0] = 20
    labels = np.zeros((3, 12, 3))
    labels[..., 0], labels[..., 1], labels[..., 2] = 1, 0.1, 2
    labels[1, :, 0] = [1] * 7 + [0.5] * 5
    labels[1, :, 1] = 0.2
    labels[1, :, 2] = [2] * 9 + [3] * 3
    return trajs, labels


def test_array_to_df_cuts_runs_strictly_inside_the_fov():
    trajs, labels = _fov_case()
    before = trajs.copy(), labels.copy()
    df_in, df_out = A.array_to_df(trajs, labels, 10, [0, 0], 10.0, 3)
    assert np.array_equal(trajs, before[0]) and np.array_equal(labels, before[1])
    assert list(df_in.columns) == ["traj_idx", "x", "y"]
    assert df_in.traj_idx.tolist() == [0.0] * 3 + [1.0] * 8 + [2.0] * 8
    assert df_in.x.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9] + [3] * 8
    assert df_in.y.tolist() == [5.0] * 19
    assert list(df_out.columns) == ["traj_idx", "Ds", "alphas", "states", "changepoints"]
    assert df_out.traj_idx.tolist() == [0, 1, 2]
    assert [list(v) for v in df_out.changepoints] == [[3], [8], [4, 8]]
    assert [list(v) for v in df_out.alphas] == [[1.0], [1.0], [1.0, 0.5]]
    assert [list(v) for v in df_out.Ds] == [[0.1], [0.1], [0.2, 0.2]]
    assert [list(v) for v in df_out.states] == [[2.0], [2.0], [2.0, 2.0]]


def test_array_to_df_defaults_fov_100_and_cutoff_10():
    # x = 0.5 and y = 0.5 are just inside the default FOV (0, 100)^2, x = 100 is outside:
    # one run of exactly 10 points (the default cutoff)
    trajs = np.zeros((1, 12, 2))
    trajs[0, :, 0] = [0.5] + [50] * 9 + [100, 100]
    trajs[0, :, 1] = [0.5] + [50] * 11
    df_in, df_out = A.array_to_df(trajs, np.ones((1, 12, 3)))
    assert df_in.x.tolist() == [0.5] + [50.0] * 9 and df_in.y.tolist() == [0.5] + [50.0] * 9
    assert [list(v) for v in df_out.changepoints] == [[10]]
    # a run of 9 is below the cutoff: nothing
    trajs[0, 9, 0] = 100
    df_in, df_out = A.array_to_df(trajs, np.ones((1, 12, 3)))
    assert len(df_in) == 0 and len(df_out) == 0
    assert list(df_in.columns) == ["traj_idx", "x", "y"]


def test_df_to_array_by_hand():
    df = pd.DataFrame({"traj_idx": [0, 0, 1, 1], "frame": [0, 1, 1, 2],
                       "x": [1.0, 2, 3, 4], "y": [5.0, 6, 7, 8]})
    out = A.df_to_array(df)
    assert out.shape == (3, 2, 2)  # T = max frame + 1, N = last traj_idx + 1
    assert out.tolist() == [[[1, 5], [PAD, PAD]], [[2, 6], [3, 7]], [[PAD, PAD], [4, 8]]]
    assert A.df_to_array(df, pad=7)[0, 1].tolist() == [7, 7]


def _vip_case():
    """Frame 0: particles at x = 0, 1, 10, (padded), 2 on y = 0. Lengths (get_VIP counts
    the index of the last padded frame, else T = 3): 1, 3, 2, -, 3. Longest first, ties
    in index order: 1, 4, 2, 0."""
    a = np.zeros((3, 5, 2))
    a[0, :, 0] = [0, 1, 10, PAD, 2]
    a[0, 3] = PAD
    a[1:] = 5
    a[1:, 3] = PAD
    a[1, 0] = PAD
    a[2, 2] = PAD
    return a


def test_get_vip_longest_first_greedy_with_strict_distance():
    a = _vip_case()
    # from 1: particle 4 is at distance 1 (not > 2), particle 2 at 9
    assert [int(i) for i in A.get_VIP(a, 2, 2)] == [1, 2]
    # distance exactly 1 is not farther than 1
    assert [int(i) for i in A.get_VIP(a, 2, 1)] == [1, 2]
    # min distance 0.5: 4 (distance 1), then 2 (distances 9 and 8)
    assert [int(i) for i in A.get_VIP(a, 3, 0.5)] == [1, 4, 2]
    with pytest.raises(ValueError, match="^Number of VIP demanded is bigger than available "
                                         "particles.$"):
        A.get_VIP(a, 5, 0.5)


def test_get_vip_inside_the_boundary_box():
    # box (0, 10)^2 shrunk by 1: (1, 9)^2 strictly; particles 0 (x = 1), 3 (x = 9) and
    # 4 (y = 9) are on the edge, 6 is padded; 1, 2, 5 are inside and pairwise > 2 apart
    b = np.full((2, 7, 2), 5.0)
    b[0] = [[1, 5], [5, 5], [8.5, 5], [9, 5], [5, 9], [5, 1.5], [PAD, PAD]]
    np.random.seed(0)
    got = A.get_VIP(b, 3, 2, PAD, 10, (0, 0), 1, False)
    assert sorted(int(i) for i in got) == [1, 2, 5]
    with pytest.raises(ValueError, match="bigger than available"):
        A.get_VIP(b, 4, 2, PAD, 10, (0, 0), 1, False)
    # default origin (0, 0) and margin 0: only x = 0 / 10 and y = 0 / 10 are on the edge
    c = np.full((1, 4, 2), 5.0)
    c[0] = [[0, 5], [0.5, 9.5], [9.5, 0.5], [5, 10]]
    assert sorted(int(i) for i in A.get_VIP(c, 2, 2, PAD, 10, sort_length=False)) == [1, 2]
    with pytest.raises(ValueError, match="bigger than available"):
        A.get_VIP(c, 3, 2, PAD, 10, sort_length=False)


def test_get_vip_restarts_at_random_and_gives_up_after_100():
    # from the longest (particle 0 at x = 3) nothing is farther than 4; a random restart
    # from particle 1 (x = 0) or 2 (x = 6) takes the other one
    c = np.zeros((1, 3, 2))
    c[0, :, 0] = [3, 0, 6]
    np.random.seed(1)
    assert sorted(int(i) for i in A.get_VIP(c, 2, 4)) == [1, 2]
    d = np.zeros((1, 3, 2))
    d[0, :, 0] = [0, 0.5, 1]
    with pytest.raises(ValueError, match="^Could not find suitable VIP particles. This is due "
                                         "to either having to few particles or them being too "
                                         "close$"):
        A.get_VIP(d, 2, 5)


def test_majority_filter_edges():
    with pytest.raises(ValueError, match="^Window size must be odd$"):
        A.majority_filter(np.array([1, 2, 3]), 4)
    empty = A.majority_filter(np.array([], dtype=float), 5)
    assert empty.shape == (0,)
    assert A.majority_filter(np.array([7]), 3).tolist() == [7]


def test_unique_labelled_edges():
    values, index = A.unique_labelled(np.array([]))
    assert values.shape == (0,) and index.shape == (0,)
    values, index = A.unique_labelled([7])
    assert values.tolist() == [7.0] and index.tolist() == [0.0]
    # order of first appearance, not of value
    values, index = A.unique_labelled([5, 5, 2, 9, 2])
    assert values.tolist() == [5.0, 2.0, 9.0] and index.tolist() == [0, 0, 1, 2, 1]


def test_label_filter_keeps_a_run_of_min_seg_and_reads_lists():
    # the run of three 2s survives the window-5 majority filter (3 of 5 in its windows)
    # and is exactly min_seg = 3 long: kept; with min_seg = 4 it joins the previous run
    lab = [1.0] * 6 + [2.0] * 3 + [1.0] * 6
    assert A.label_filter(np.array(lab)).tolist() == lab
    assert A.label_filter(lab).tolist() == lab  # a list is read as an array
    assert A.label_filter(np.array(lab), min_seg=4).tolist() == [1.0] * 15
    same = A.label_filter([1.0, 1.0, 1.0])  # no change: returned as an array, unchanged
    assert isinstance(same, np.ndarray) and same.tolist() == [1.0, 1.0, 1.0]


def test_segments_inside_a_shifted_fov():
    # FOV (10, 15) x (20, 25): x = 10 and y = 20 are on the edges; x = 12 alone is inside
    # but y = 20 is not; cutoff 3. An all-outside trajectory comes first.
    trajs = np.zeros((2, 10, 2))
    trajs[0] = [[0, 0]] * 10
    trajs[1, :, 0] = [11, 12, 13, 10, 11, 12, 11, 14, 14.9, 12]
    trajs[1, :, 1] = [21, 21, 21, 21, 24.9, 24, 20, 21, 22, 23]
    labels = np.ones((2, 10, 3))
    df_in, df_out = A.array_to_df(trajs, labels, 10, [10, 20], 5.0, 3)
    # runs [0, 3) (length 3) and [4, 6) (length 2 < 3, dropped) and [7, 10) (length 3)
    assert df_in.traj_idx.tolist() == [0.0] * 3 + [1.0] * 3
    assert df_in.x.tolist() == [11, 12, 13, 14, 14.9, 12]
    assert [list(v) for v in df_out.changepoints] == [[3], [3]]


def test_df_to_array_counts_particles_from_the_last_row():
    df = pd.DataFrame({"traj_idx": [0, 0, 1], "frame": [0, 1, 0], "x": [1.0, 2, 3],
                       "y": [4.0, 5, 6]})
    assert A.df_to_array(df).tolist() == [[[1, 4], [3, 6]], [[2, 5], [PAD, PAD]]]


def test_get_vip_defaults_five_particles_farther_than_2():
    # five particles 2.5 apart on a line: all five are farther than 2 from each other
    a = np.zeros((2, 5, 2))
    a[:, :, 0] = np.arange(5) * 2.5
    assert [int(i) for i in A.get_VIP(a)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="bigger than available"):
        A.get_VIP(a, 6)
    with pytest.raises(ValueError, match="Could not find"):
        A.get_VIP(a, 5, 3)


def test_get_vip_distance_to_every_elected_particle():
    # from 0 (x = 0): 1 (x = 10) is taken; 2 (x = 1) is close to 0 but far from 1, so it
    # is refused; 3 (x = 20) is taken
    a = np.zeros((1, 4, 2))
    a[0, :, 0] = [0, 10, 1, 20]
    assert [int(i) for i in A.get_VIP(a, 3, 2)] == [0, 1, 3]


def test_get_vip_lengths_come_from_the_x_coordinate_and_the_frame():
    # 10 frames, 2 particles: particle 0 is padded from frame 5 (length 9, the index of
    # its last padded frame), particle 1 never (length 10): particle 1 goes first
    a = np.zeros((10, 2, 2))
    a[:, 1, 0] = 5
    a[5:, 0] = PAD
    assert [int(i) for i in A.get_VIP(a, 2, 2)] == [1, 0]
    # lengths 5, 2, 5, 1 (particle 1 padded at frame 2 only, 3 at frame 1 only): order
    # 0, 2, 1, 3; a y coordinate equal to the pad value is a position, not padding
    b = np.zeros((5, 4, 2))
    b[:, :, 0] = [0, 10, 20, 30]
    b[2, 1] = PAD
    b[1, 3] = PAD
    b[3, 0, 1] = PAD
    assert [int(i) for i in A.get_VIP(b, 4, 2)] == [0, 2, 1, 3]
    # at frame 0 only x decides whether a particle is present
    c = np.zeros((1, 3, 2))
    c[0] = [[0, PAD], [PAD, 5], [10, 0]]
    assert [int(i) for i in A.get_VIP(c, 2, 2)] == [0, 2]
    got = A.get_VIP(c, 2, 2, PAD, 20, (-5, -5), 0, False)
    assert sorted(int(i) for i in got) == [0, 2]
    with pytest.raises(ValueError, match="bigger than available"):
        A.get_VIP(c, 3, 2, PAD, 20, (-5, -5), 0, False)


def test_get_vip_boundary_box_is_not_square_around_the_origin():
    # box x in (10 + 1, 10 + 5 - 1), y in (20 + 1, 20 + 5 - 1): (12, 22) and (13.5, 23.5)
    # inside; (12, 21) and (12, 19.5) below the y margin, (14, 22) right of the x margin
    b = np.zeros((1, 5, 2))
    b[0] = [[12, 22], [13.5, 23.5], [12, 21], [12, 19.5], [14, 22]]
    got = A.get_VIP(b, 2, 1, PAD, 5, (10, 20), 1, False)
    assert sorted(int(i) for i in got) == [0, 1]
    with pytest.raises(ValueError, match="bigger than available"):
        A.get_VIP(b, 3, 1, PAD, 5, (10, 20), 1, False)


def test_changepoint_assignment_cost_is_the_absolute_difference():
    (rows, cols), cost = A.changepoint_assignment([10, 50], [48, 12])
    assert cost.tolist() == [[38, 2], [2, 38]]
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


def test_jaccard_between_segments_counts():
    # TP 2, FP 1 (t = 3), FN 1 (t = 0)
    assert A.jaccard_between_segments(np.array([1, 1, 1, 0]), np.array([0, 1, 1, 1])) == 0.5
    # the shorter prediction is padded with zeros: TP 1, FN 2
    assert A.jaccard_between_segments(np.array([1, 1, 1]), np.array([1])) == 1 / 3
    # TP 1, FP 0, FN 1
    assert A.jaccard_between_segments(np.array([1, 1]), np.array([1, 0])) == 0.5


@pytest.mark.parametrize("seed, first_hit", [(476, 100), (287, 101)])
def test_get_vip_gives_up_after_100_random_starts(seed, first_hit):
    # 198 particles at (1, 1) and two at (2, 1) and (0, 1), 2 apart: only a start at one
    # of the two (particle 198 or 199) finds two particles farther than 1.5. Without
    # sort_length every start is np.random.choice(candidates); with these seeds the first
    # such start is draw 100 or 101. The attempt counter is checked after every attempt,
    # also a successful one, so a success at draw 101 still gives up (andi-datasets
    # 2.1.13 gives the same two outcomes).
    a = np.ones((1, 200, 2))
    a[0, 198] = [2, 1]
    a[0, 199] = [0, 1]
    np.random.seed(seed)
    draws = [int(np.random.choice(np.arange(200))) for _ in range(first_hit)]
    assert [i + 1 for i, d in enumerate(draws) if d >= 198] == [first_hit]
    np.random.seed(seed)
    if first_hit <= 100:
        assert sorted(int(i) for i in A.get_VIP(a, 2, 1.5, sort_length=False)) == [198, 199]
    else:
        with pytest.raises(ValueError, match="Could not find suitable VIP"):
            A.get_VIP(a, 2, 1.5, sort_length=False)


def _pairs(out):
    return [None if x is None else (x if isinstance(x, bool) else np.asarray(x).tolist())
            for x in out]


def test_check_no_changepoints_without_a_gt_changepoint():
    # GT one segment (all 200 frames); prediction (0..50] (51 frames), (50..200) (149):
    # Jaccard 51/200 and 149/200, so the GT segment takes predicted segment 1
    want = [True, [[0.5, 0.9]], [[1.0, 1.2]], [[2, 3]]]
    args = ([0.5], [1.0], [2], [50, 200], [0.3, 0.9], [1.1, 1.2], [1, 3])
    assert _pairs(A.check_no_changepoints([200], *args)) == want
    assert _pairs(A.check_no_changepoints(200, *args)) == want  # a bare int is one changepoint
    both = A.check_no_changepoints([50, 200], [0.5], [1.0], [2], [30, 200], [0.1, 0.7], [1, 2],
                                   [0, 1])
    assert _pairs(both) == [False, None, None, None]


def test_check_no_changepoints_without_a_predicted_changepoint():
    # GT (0..50] 51, (50..120] 70, (120..200) 79 frames; the prediction's full segment best
    # matches GT segment 2. Official: the GT segment at the position of that pair in the
    # assignment (1); corrected: the matched GT segment (2)
    args = ([50, 120, 200], [0.1, 0.2, 0.3], [1, 2, 3], [0, 1, 2], [200], [0.9, 0.0], [5, 0],
            [3, 0])
    assert _pairs(A.check_no_changepoints(*args)) == [True, [[0.2, 0.9]], [[2, 5]], [[1, 3]]]
    assert _pairs(A.check_no_changepoints(*args, corrected=True)) == \
        [True, [[0.3, 0.9]], [[3, 5]], [[2, 3]]]


def test_check_no_changepoints_uses_the_corrected_segments():
    # prediction changepoint 100 of T = 201. Official segments (0..100] 101 frames and
    # (100..201) 100: the single GT segment takes segment 0; corrected [0, 100) 100 and
    # [100, 201) 101: segment 1
    args = ([201], [0.5], [1.0], [2], [100, 201], [0.1, 0.7], [1, 2], [0, 1])
    assert _pairs(A.check_no_changepoints(*args))[1] == [[0.5, 0.1]]
    assert _pairs(A.check_no_changepoints(*args, corrected=True))[1] == [[0.5, 0.7]]
    assert A.segment_property_errors(*args, return_pairs=True)[0].tolist() == [[0.5, 0.1]]
    assert A.segment_property_errors(*args, return_pairs=True,
                                     corrected=True)[0].tolist() == [[0.5, 0.7]]


def test_segment_functions_with_an_explicit_length():
    # with T the lists hold only the inner changepoints; an empty prediction is [T - 1]
    out = A.check_no_changepoints([50], [0.5], [1.0], [2], [], [0.7], [1.0], [2], T=100)
    assert _pairs(out) == [True, [[0.5, 0.7]], [[1.0, 1.0]], [[2, 2]]]
    pa, pd_, ps = A.segment_property_errors([50], [0.5, 1.0], [1.0, 2.0], [2, 1], [], [0.7],
                                            [1.0], [2], T=100, return_pairs=True)
    assert pa.tolist() == [[0.5, 0.7]]
    # GT (0..50], (50..120], (120..150); prediction (0..30], (30..70], (70..90], (90..150)
    pa, pd_, ps = A.segment_property_errors(
        [50, 120], [0.5, 1.0, 1.5], [1.0, 2.0, 3.0], [2, 1, 0], [30, 70, 90],
        [0.7, 1.2, 0.1, 0.4], [1.0, 3.0, 9.0, 4.0], [2, 0, 3, 1], T=150, return_pairs=True)
    assert pa.tolist() == [[0.5, 0.7], [1.0, 0.1], [1.5, 0.4]]
    assert pd_.tolist() == [[1, 1], [2, 9], [3, 4]] and ps.tolist() == [[2, 2], [1, 3], [0, 1]]


def test_segment_property_errors_by_hand():
    # GT (0..50], (50..200); prediction (0..48], (48..120], (120..200): GT 0 -> 0, GT 1 -> 2
    args = ([50, 200], [0.5, 1.0], [1.0, 2.0], [2, 1], [48, 120, 200], [0.7, 1.2, 0.1],
            [1.0, 3.0, 9.0], [2, 0, 3])
    pa, pd_, ps = A.segment_property_errors(*args, return_pairs=True)
    assert pa.tolist() == [[0.5, 0.7], [1.0, 0.1]] and ps.tolist() == [[2, 2], [1, 3]]
    alpha, d, state = A.segment_property_errors(*args)
    assert alpha == pytest.approx((0.2 + 0.9) / 2, rel=1e-12)
    assert d == pytest.approx((np.log(3) - np.log(10)) ** 2 / 2, rel=1e-12)
    assert state == 0.5
    # only as many GT segments as GT values are paired (min of the alpha and D lists)
    pa, _, _ = A.segment_property_errors([50, 120, 200], [0.5, 1.0], [1.0, 2.0, 3.0],
                                         [2, 1, 0], [48, 118, 200], [0.7, 1.2, 0.1],
                                         [1.0, 3.0, 9.0], [2, 0, 3], return_pairs=True)
    assert pa.tolist() == [[0.5, 0.7], [1.0, 1.2]]


def test_segment_assignment_corrected_breaks_the_official_tie():
    # T = 12. Corrected segments: GT [0, 1), [1, 12); prediction [0, 1), [1, 6), [6, 12):
    # GT 1 overlaps prediction 1 by 5 of 11 and prediction 2 by 6 of 11 -> prediction 2
    g, p = [1, 12], [1, 6, 12]
    pa, _, _ = A.segment_property_errors(g, [0, 1], [0, 1], [0, 1], p, [10, 11, 12],
                                         [10, 11, 12], [10, 11, 12], return_pairs=True,
                                         corrected=True)
    assert pa.tolist() == [[0, 10], [1, 12]]


def test_create_binary_segment_official_corrected_and_negative():
    # official: (0, 3] plus t = 0, then (3, 5); corrected: [0, 3), [3, 5)
    assert A.create_binary_segment([3], 5).tolist() == [[1, 1, 1, 1, 0], [0, 0, 0, 0, 1]]
    assert A.create_binary_segment([3], 5, corrected=True).tolist() == \
        [[1, 1, 1, 0, 0], [0, 0, 0, 1, 1]]
    # negative changepoints follow python slicing (andi-datasets): [1:-1] and [-1:]
    assert A.create_binary_segment([-2], 5).tolist() == [[1, 1, 1, 1, 0], [0, 0, 0, 0, 1]]
    assert A.create_binary_segment([2, -1], 6).tolist() == \
        [[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]]


def test_segment_assignment_with_an_explicit_length_by_hand():
    # T = 100: GT (0..50] 51, (50..100) 49 frames; prediction (0..30] 31, (30..60] 30,
    # (60..100) 39: Jaccard 31/51, 20/61, 0 / 0, 10/69, 39/49
    want = [[1 - 31 / 51, 1 - 20 / 61, 1.0], [1.0, 1 - 10 / 69, 1 - 39 / 49]]
    for gt in ([50], 50):
        (rows, cols), cost = A.segment_assignment(gt, [30, 60], T=100)
        np.testing.assert_allclose(cost, want, rtol=1e-12)
        assert rows.tolist() == [0, 1] and cols.tolist() == [0, 2]
    # an empty list is one changepoint at T - 1: official, one full segment and an empty one
    (_, cols), cost = A.segment_assignment([], [30], T=100)
    np.testing.assert_allclose(cost, [[1 - 31 / 100, 1 - 69 / 100], [1, 1]], rtol=1e-12)
    (_, cols), cost = A.segment_assignment([40], [], T=100)
    np.testing.assert_allclose(cost, [[1 - 41 / 100, 1], [1 - 59 / 100, 1]], rtol=1e-12)
    # corrected: [0, 99) and [99, 100) against [0, 30) and [30, 100)
    _, cost = A.segment_assignment([], [30], T=100, corrected=True)
    np.testing.assert_allclose(cost, [[1 - 30 / 99, 1 - 69 / 100], [1, 1 - 1 / 70]], rtol=1e-12)
    _, cost = A.segment_assignment([40], [], T=100, corrected=True)
    np.testing.assert_allclose(cost, [[1 - 40 / 99, 1], [1 - 59 / 100, 1 - 1 / 60]],
                               rtol=1e-12)


def test_segment_assignment_without_length_by_hand():
    # the last element is the length; a single one is a changepoint at the end (a full
    # segment and an empty one): GT all 200 frames vs (0..50] 51 and (50..200) 149
    (rows, cols), cost = A.segment_assignment([200], [50, 200])
    np.testing.assert_allclose(cost, [[1 - 51 / 200, 1 - 149 / 200], [1, 1]], rtol=1e-12)
    assert cols.tolist() == [1, 0]
    # two elements: one inner changepoint -> two GT segments
    _, cost = A.segment_assignment([50, 200], [200])
    assert cost.shape == (2, 2)


def test_enforce_min_segment_length_by_hand():
    # default min_seg 3: runs of 3 stay; a leading short run takes the following value
    assert A.enforce_min_segment_length(np.array([1, 1, 1, 2, 2, 2])).tolist() == \
        [1, 1, 1, 2, 2, 2]
    assert A.enforce_min_segment_length(np.array([1, 2, 2, 2, 2])).tolist() == [2] * 5
    # a later short run takes the value of the previous long run; integers stay integers
    out = A.enforce_min_segment_length(np.array([5, 5, 5, 7, 5, 5, 5, 9, 9]))
    assert out.tolist() == [5, 5, 5, 5, 5, 5, 5, 5, 5] and out.dtype == np.int64
    # min_seg 4: the leading run of 3 is short and takes the following value
    assert A.enforce_min_segment_length(np.array([1, 1, 1, 2, 2, 2]), 4).tolist() == [2] * 6


def test_get_vip_many_equal_lengths_keep_index_order():
    # 50 particles 3 apart, lengths 3, 1, 3, 2, 3, ... (padded at frame 1 or 2): the order
    # is longest first and, among equal lengths, by index (a stable sort; numpy's default
    # sort does not keep it for this many ties)
    n = 50
    lengths = [3, 1, 3, 2, 3] * 10
    a = np.zeros((3, n, 2))
    a[:, :, 0] = np.arange(n) * 3.0
    for i, length in enumerate(lengths):
        if length < 3:
            a[length, i] = PAD
    want = sorted(range(n), key=lambda i: -lengths[i])  # Python's sort is stable
    assert [int(i) for i in A.get_VIP(a, n, 2)] == want


def test_integer_predictions_and_output_dtypes():
    # a bare int prediction is one changepoint, as a bare int truth
    args = ([50, 120, 200], [0.1, 0.2, 0.3], [1, 2, 3], [0, 1, 2])
    assert _pairs(A.check_no_changepoints(*args, 200, [0.9, 0.0], [5, 0], [3, 0])) == \
        [True, [[0.2, 0.9]], [[2, 5]], [[1, 3]]]
    _, cost = A.segment_assignment([30, 60], 50, T=100)
    np.testing.assert_allclose(cost, [[1 - 31 / 51, 1.0], [1 - 20 / 61, 1 - 10 / 69],
                                      [1.0, 1 - 39 / 49]], rtol=1e-12)
    # the majority filter keeps the input's dtype
    out = A.majority_filter(np.array([1, 2, 2, 1, 1]), 3)
    assert out.tolist() == [1, 2, 2, 1, 1] and out.dtype == np.int64


def test_fov_upper_x_edge_uses_the_x_length():
    # FOV (10, 15) x (20, 25): x = 16 is right of the FOV even though 16 < 20 + 5
    trajs = np.full((1, 4, 2), 22.0)
    trajs[0, :, 0] = [11, 12, 16, 13]
    df_in, _ = A.array_to_df(trajs, np.ones((1, 4, 3)), 10, [10, 20], 5.0, 2)
    assert df_in.x.tolist() == [11, 12]


def test_segment_costs_of_empty_and_one_frame_segments():
    # official single changepoints: a full and an empty segment on each side; two empty
    # segments have Jaccard 0 (cost 1), not 1
    _, cost = A.segment_assignment([200], [200])
    assert cost.tolist() == [[0.0, 1.0], [1.0, 1.0]]
    # corrected [0, 1) against [0, 1): one frame, Jaccard 1
    _, cost = A.segment_assignment([1, 12], [1, 6, 12], corrected=True)
    assert cost[0, 0] == 0.0
    np.testing.assert_allclose(cost[1], [1.0, 1 - 5 / 11, 1 - 6 / 11], rtol=1e-12)


def test_create_binary_segment_negative_with_a_middle_segment():
    # bounds (0, 2, 4, -1): [1:3], [3:5], [5:0] (empty), then [0:] for the last
    assert A.create_binary_segment([2, 4, -1], 6).tolist() == [
        [1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]]
