"""Hand-computed values and independent references (scipy, loops written from the
definitions) for the AnDi 2 building blocks; these run without the reference env."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linear_sum_assignment
from scipy.stats import wasserstein_distance

import trackverify.andi as A
from trackverify.andi._engine import assign_blocks


def test_error_bounds_and_metric_caps():
    assert A._get_error_bounds()[:4] == (2, 1e5, 0, 10)
    assert A.metric_anomalous_exponent(np.array([0.0]), np.array([5.0])) == 1.999
    # the seed documentation's default of metric_diffusion_coefficient
    assert A.metric_diffusion_coefficient(np.array([1e-12]), np.array([1e6])) == \
        pytest.approx(190.86835960820298, rel=1e-12)


def test_changepoint_errors_by_hand():
    # pairs (10, 12) TP (d 2), (50, 80) miss -> FP 1, FN 1; JI 1 / 3
    assert A.single_changepoint_error(np.array([10, 50]), np.array([12, 80])) == (2.0, 1 / 3)
    # ensemble: trajectory 1 as above, trajectory 2 empty/empty (one TP), trajectory 3
    # one extra prediction (FP): TP 2, FP 2, FN 1
    rmse, ji = A.ensemble_changepoint_error([[10, 50], [], []], [[12, 80], [], [5]])
    assert rmse == 2.0 and ji == pytest.approx(2 / 5)
    assert A.ensemble_changepoint_error([[], []], [[], []]) == (0, 1)


@pytest.mark.parametrize("pred, official, corrected", [
    (14, (4.0, 1.0), (4.0, 1.0)),                 # |diff| 4 < 5: a true positive
    (15, (math.nan, 0.0), (0.0, 0.0)),            # |diff| 5 = threshold: not < 5, FP + FN
    (16, (math.nan, 0.0), (0.0, 0.0)),
    (5, (math.nan, 0.0), (0.0, 0.0)),             # |diff| 5 below the truth
    (6, (4.0, 1.0), (4.0, 1.0)),
])
def test_changepoint_threshold_is_strict(pred, official, corrected):
    for kwargs, want in (({}, official), ({"corrected": True}, corrected)):
        rmse, ji = A.single_changepoint_error(np.array([10]), np.array([pred]), **kwargs)
        assert ji == want[1]
        assert (math.isnan(rmse) and math.isnan(want[0])) or rmse == want[0]
    assert A.ensemble_changepoint_error([[10]], [[pred]]) == (corrected[0], corrected[1])
    assert _ensemble_changepoint_loop([[10]], [[pred]], 5) == (corrected[0], corrected[1])


def test_changepoint_threshold_argument_moves_the_boundary():
    # |diff| 7: TP under threshold 8, not under 7 (nor under the default 5)
    assert A.single_changepoint_error(np.array([10]), np.array([17]), threshold=8) == (7.0, 1.0)
    assert A.single_changepoint_error(np.array([10]), np.array([17]), threshold=7)[1] == 0.0
    assert A.ensemble_changepoint_error([[10], [30]], [[17], [30]], threshold=7) == (0.0, 1 / 3)
    assert A.ensemble_changepoint_error([[10], [30]], [[17], [30]], threshold=8) == \
        (pytest.approx(math.sqrt(49 / 2)), 1.0)


def test_changepoint_alpha_beta_caps_at_the_threshold():
    # pairs (10, 19) d 9 and (50, 70) d 20 -> capped at 10; one extra prediction
    alpha, beta = A.changepoint_alpha_beta(np.array([10, 50]), np.array([19, 70, 90]))
    assert alpha == pytest.approx(1 - 19 / 20) and beta == pytest.approx((20 - 19) / (20 + 10))
    # official: the threshold argument is ignored (always 10); corrected uses it
    assert A.changepoint_alpha_beta(np.array([10]), np.array([13]), threshold=2) == \
        (pytest.approx(1 - 3 / 10), pytest.approx(7 / 10))
    assert A.changepoint_alpha_beta(np.array([10]), np.array([13]), threshold=2,
                                    corrected=True) == (0.0, 0.0)
    assert A.changepoint_alpha_beta(np.array([10]), np.array([12]), threshold=2,
                                    corrected=True) == (0.0, 0.0)  # d 2 = thr: capped at 2


def test_changepoint_counts_with_unequal_lengths_and_empty_lists():
    # one pair (10, 12) TP; the extra prediction 50 is an FP: JI 1 / 2
    assert A.single_changepoint_error(np.array([10]), np.array([12, 50])) == (2.0, 0.5)
    # the extra truth 50 is an FN: JI 1 / 2
    assert A.single_changepoint_error(np.array([10, 50]), np.array([12])) == (2.0, 0.5)
    rmse, ji = A.single_changepoint_error(np.array([]), np.array([]))
    assert math.isnan(rmse) and ji == 1.0
    assert A.single_changepoint_error(np.array([]), np.array([]), corrected=True) == (0.0, 1.0)
    assert A.single_changepoint_error([10], [30])[1] == 0.0  # one FP + one FN: JI 0 / 2
    # corrected, default threshold 10: |diff| 10.5 caps at 10 -> alpha 0, beta 0
    assert A.changepoint_alpha_beta(np.array([10]), np.array([20.5]), corrected=True) == (0.0, 0.0)


def test_property_metrics_by_hand():
    assert A.metric_anomalous_exponent(np.array([1.0, 0.5]), np.array([0.5, 1.5])) == 0.75
    assert A.metric_anomalous_exponent(np.array([2.0]), np.array([0.5])) == 1.5  # below the cap
    # values <= 1e-12 are raised to 1e-12 on both sides, also for integer input
    assert A.metric_diffusion_coefficient([0], [0.0]) == 0.0
    assert A.metric_diffusion_coefficient([0.0], [0]) == 0.0
    assert A.metric_diffusion_coefficient(np.array([1.0]), np.array([1e-13])) == \
        pytest.approx((math.log(2) - math.log1p(1e-12)) ** 2, rel=1e-12)
    with pytest.raises(ValueError, match=r"^Found array with 0 sample\(s\) while a minimum of 1 "
                                         r"is required\.$"):
        A.metric_diffusion_coefficient([], [])
    for gt, pred in (([np.nan], [1.0]), ([1.0], [np.inf])):
        with pytest.raises(ValueError, match=r"^Input contains NaN or infinity\.$"):
            A.metric_diffusion_coefficient(gt, pred)
    # (log1p(1e-12) - log1p(1e9))^2 = 429.4 > the cap 190.868...: capped
    assert A.metric_diffusion_coefficient([0.0], [1e9]) == pytest.approx(190.86835960820298,
                                                                        rel=1e-12)
    # states compare as integers: 1.7 and 1.2 are both state 1
    assert A.metric_diffusive_state(np.array([1.7, 2.0]), np.array([1.2, 2.0])) == 1.0
    assert A.metric_diffusive_state(np.array([3.0]), np.array([3.0])) == 1.0
    assert A.metric_diffusive_state(np.array([]), np.array([])) == 0.0


def test_jaccard_between_segments_by_hand():
    assert A.jaccard_between_segments(np.array([1, 1, 0]), np.array([0, 1, 1, 1])) == 1 / 4
    assert A.jaccard_between_segments(np.array([0, 0]), np.array([0])) == 0


def test_segment_assignment_by_hand():
    # GT segments (official): [0..10], [11..19]; prediction [0..14], [15..19]
    (rows, cols), cost = A.segment_assignment([10, 20], [14, 20])
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    assert cost[0, 0] == pytest.approx(1 - 11 / 15) and cost[1, 1] == pytest.approx(1 - 5 / 9)


def test_label_filter_by_hand():
    lab = np.array([1.0] * 6 + [2.0] + [1.0] * 6 + [3.0] * 6)
    out = A.label_filter(lab)
    assert out.tolist() == [1.0] * 13 + [3.0] * 6
    same = np.ones(5)
    assert A.label_filter(same) is same


def test_metric_diffusive_state_is_accuracy():
    assert A.metric_diffusive_state(np.array([0, 1, 2, 2.0]), np.array([0, 1, 1, 2.0])) == 0.75


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=8),
       st.integers(0, 2 ** 31 - 1))
def test_assign_blocks_equals_linear_sum_assignment(shapes, seed):
    rng = np.random.default_rng(seed)
    nrow = np.array([s[0] for s in shapes])
    ncol = np.array([s[1] for s in shapes])
    blocks = [rng.integers(0, 4, size=s).astype(float) / 2 for s in shapes]  # many ties
    cost = np.concatenate([b.ravel() for b in blocks])
    b, r, c = assign_blocks(cost, nrow, ncol, np.ones(len(shapes), dtype=bool))
    for k, block in enumerate(blocks):
        rr, cc = linear_sum_assignment(block)
        assert r[b == k].tolist() == rr.tolist() and c[b == k].tolist() == cc.tolist()


def _majority_loop(data, w):
    h = w // 2
    out = []
    for i in range(len(data)):
        win = data[max(i - h, 0):min(i + h + 1, len(data))]
        vals, counts = np.unique(win, return_counts=True)
        out.append(vals[np.argmax(counts)])
    return np.array(out)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.sampled_from([1, 3, 5, 7]))
def test_majority_filter_equals_window_loop(data, w):
    data = np.array(data, dtype=float)
    assert A.majority_filter(data, w).tolist() == _majority_loop(data, w).tolist()


def _enforce_loop(data, min_seg):
    segs = []
    start = 0
    for i in range(1, len(data) + 1):
        if i == len(data) or data[i] != data[start]:
            segs.append([data[start], start, i - 1])
            start = i
    i = 0
    while i < len(segs):
        if segs[i][2] - segs[i][1] + 1 < min_seg:
            if i > 0:
                segs[i - 1][2] = segs[i][2]
                segs.pop(i)
                continue
            if i < len(segs) - 1:
                segs[i] = [segs[i + 1][0], segs[i][1], segs[i + 1][2]]
                segs.pop(i + 1)
                continue
        i += 1
    out = np.empty(len(data))
    for v, a, b in segs:
        out[a:b + 1] = v
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=30), st.integers(1, 5))
def test_enforce_min_segment_length_equals_merge_loop(data, min_seg):
    data = np.array(data, dtype=float)
    assert A.enforce_min_segment_length(data, min_seg).tolist() == \
        _enforce_loop(data, min_seg).tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 25), max_size=4), st.lists(st.integers(0, 25), max_size=4),
       st.integers(1, 30), st.booleans())
def test_segment_costs_equal_indicator_rows(g, p, T, corrected):
    """The interval engine equals Jaccard of create_binary_segment rows (its definition)."""
    from trackverify.andi._engine import Ragged, segment_costs
    g = sorted(g) + [T]
    p = sorted(p) + [T]
    cost, ng, np_ = segment_costs(Ragged.from_lists([g]), Ragged.from_lists([p]), corrected)
    gi = _binary_loop(g[:-1] if len(g) > 1 else g, T, corrected)
    pi = _binary_loop(p[:-1] if len(p) > 1 else p, T, corrected)
    for a, b in ((gi, pi), (pi, gi)):
        assert A.create_binary_segment(np.array(a[1]), T, corrected=corrected).tolist() == \
            a[0].tolist()
    expect = np.array([[1 - _jaccard(a, b) for b in pi[0]] for a in gi[0]])
    assert np.allclose(cost.reshape(ng[0], np_[0]), expect, rtol=0, atol=1e-15)


def _binary_loop(cp, T, corrected):
    """Indicator rows by the andi-datasets slicing definition (shifted unless corrected)."""
    shift = 0 if corrected else 1
    seg = np.zeros((len(cp) + 1, T))
    b = [0] + list(cp)
    for k, (c1, c2) in enumerate(zip(b[:-1], b[1:])):
        seg[k, c1 + shift:c2 + shift] = 1
    seg[-1, b[-1] + shift:] = 1
    if not corrected:
        seg[0, 0] = 1
    return seg, list(cp)


def _jaccard(a, b):
    tp = np.sum((a == 1) & (b == 1))
    union = np.sum((a == 1) | (b == 1))
    return tp / union if union else 0


def test_distribution_distance_equals_scipy():
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(0, 5, 300))
    p, q = rng.random(300), rng.random(300)
    assert A.distribution_distance(p, q, x) == pytest.approx(wasserstein_distance(x, x, p, q),
                                                            rel=1e-12)


def test_error_single_missing_trajectory_by_hand():
    import pandas as pd
    true = pd.DataFrame({"traj_idx": [0.0], "Ds": [[1.0]], "alphas": [[1.0]], "states": [[2.0]],
                         "changepoints": [[200.0]]})
    pred = true.iloc[:0]
    out = A.error_SingleTraj_dataset(pred, true, prints=False)
    assert out == pytest.approx((0, 0.0, 1.999, (math.log1p(1 + 1e5) - math.log(2)) ** 2, 0.0))


def _ensemble_changepoint_loop(gt_ensemble, pred_ensemble, threshold):
    """The pooled changepoint definition, one trajectory at a time, without the engine:
    scipy's Hungarian pairing on |gt - pred|, a pair is a TP when |diff| < threshold (else one
    FP and one FN), unpaired predictions FP, unpaired truths FN, empty/empty one TP; RMSE over
    the TPs (0 without any), JI = TP / (TP + FP + FN)."""
    tp = fp = fn = 0
    squares = []
    for gt, pred in zip(gt_ensemble, pred_ensemble, strict=True):
        gt, pred = np.asarray(gt, float), np.asarray(pred, float)
        if len(gt) == 0 and len(pred) == 0:
            tp += 1
            continue
        rows, cols = linear_sum_assignment(np.abs(gt[:, None] - pred[None, :]))
        for i, j in zip(rows, cols, strict=True):
            if abs(gt[i] - pred[j]) < threshold:
                tp += 1
                squares.append((gt[i] - pred[j]) ** 2)
            else:
                fp += 1
                fn += 1
        fp += max(len(pred) - len(gt), 0)
        fn += max(len(gt) - len(pred), 0)
    return (float(np.sqrt(np.mean(squares))) if squares else 0.0), tp / (tp + fp + fn)


@pytest.mark.parametrize("corrected", [False, True])
def test_engine_equals_per_trajectory_loop(corrected, tmp_path):
    """The vectorised data-set scorer equals the per-trajectory definition (built from
    segment_property_errors and a changepoint loop on scipy's Hungarian, not the engine), also with corrected=True and
    irregular rows (negative or unsorted changepoints take the per-row path)."""
    from trackverify.andi import synthetic as S
    labels = S.make_labels(200, 200, seed=5)
    preds = S.perturb(labels, seed=6, drop=0.1)
    preds[3] = preds[3][:1] + [1.0, 0.5, 1.0, -3.0, 1.0, 0.7, 2.0, 200.0]  # negative cp
    preds[4] = preds[4][:1] + [1.0, 0.5, 1.0, 150.0, 1.0, 0.7, 2.0, 40.0, 0.2, 2.5, 9.0, 200.0]
    S.write_lines(tmp_path / "t.txt", labels)
    S.write_lines(tmp_path / "p.txt", preds)
    df_t, df_p = A.load_file_to_df(tmp_path / "t.txt"), A.load_file_to_df(tmp_path / "p.txt")
    got = A.error_SingleTraj_dataset(df_p, df_t, prints=False, corrected=corrected)
    pa, pd_, ps, gcp, pcp = [], [], [], [], []
    for _, t in df_t.iterrows():
        p = df_p[df_p.traj_idx == t.traj_idx]
        if len(p) == 0:
            pc, pal, pD, pst = [10], [0], [1], [0]
            tc, tal, tD, tst = [20], [2], [1 + 1e5], [10]
            gcp.append(tc)
            pcp.append(pc)
        else:
            p = p.iloc[0]
            pc, pal, pD, pst = np.array(p.changepoints).astype(int), p.alphas, p.Ds, p.states
            tc, tal, tD, tst = np.array(t.changepoints).astype(int), t.alphas, t.Ds, t.states
            gcp.append(tc[:-1])
            pcp.append(pc[:-1])
        a, d, s = A.segment_property_errors(tc, tal, tD, tst, pc, pal, pD, pst,
                                            return_pairs=True, corrected=corrected)
        pa.append(a)
        pd_.append(d)
        ps.append(s)
    pa, pd_, ps = (np.vstack(x).astype(float) for x in (pa, pd_, ps))
    hi = 2
    bad_a = np.isnan(pa[:, 1]) | (pa[:, 1] > hi) | (pa[:, 1] < 0)
    pa[bad_a, 1] = pa[bad_a, 0] + 2
    if corrected:
        bad_d = np.isnan(pd_[:, 1]) | (pd_[:, 1] < 1e-6) | (pd_[:, 1] > 1e6)
    else:
        bad_d = np.isnan(pd_[:, 1])
        pd_ = np.abs(pd_)
    pd_[bad_d, 1] = pd_[bad_d, 0] + 1e5
    bad_s = (ps[:, 1] > 4) | (ps[:, 1] < 0)
    ps[bad_s, 1] = 0
    rmse, ji = _ensemble_changepoint_loop(gcp, pcp, threshold=10)
    want = (rmse, ji, A.metric_anomalous_exponent(pa[:, 0], pa[:, 1]),
            A.metric_diffusion_coefficient(pd_[:, 0], pd_[:, 1]),
            A.metric_diffusive_state(ps[:, 0], ps[:, 1]))
    assert got == pytest.approx(want, rel=1e-12)


def test_ragged_rows_head_take_and_last_by_hand():
    from trackverify.andi._engine import Ragged

    r = Ragged.from_lists([[1, 2], [3], [4, 5, 6]])
    assert r.values.tolist() == [1, 2, 3, 4, 5, 6] and r.offsets.tolist() == [0, 2, 3, 6]
    assert r.n == 3 and r.lengths.tolist() == [2, 1, 3] and r.row(2).tolist() == [4, 5, 6]
    assert r.last().tolist() == [2, 3, 6]
    head = r.head(2)
    assert head.values.tolist() == [1, 2, 3] and head.offsets.tolist() == [0, 2, 3]
    taken = r.take([2, 0, 2])                     # rows in any order, repeated
    assert taken.values.tolist() == [4, 5, 6, 1, 2, 4, 5, 6]
    assert taken.offsets.tolist() == [0, 3, 5, 8]
    none = r.take([])                             # no row (an empty list, not an int array)
    assert none.n == 0 and none.values.size == 0 and none.offsets.tolist() == [0]


def test_changepoint_scores_without_any_pair():
    """No pair, no FP, no FN: a perfect (0, 1) when the truth has no changepoint either; with
    truth changepoints (the reference's 'no segments' case) RMSE = threshold, Jaccard 0."""
    from trackverify.andi._engine import ChangepointCounts

    empty = np.zeros(0)
    assert ChangepointCounts(0, 0, 0, 2, 0, empty).scores(7) == (0, 1)
    with pytest.warns(UserWarning, match=r"^No segments found in your predictions dataset\.$"):
        assert ChangepointCounts(0, 0, 0, 0, 3, empty).scores(7) == (7, 0)


def test_segment_intervals_clip_unsorted_and_late_changepoints():
    """[lo, hi) per segment, clipped to [0, T): changepoints (5, 3) with T = 10, uncorrected
    (segments start one frame after a changepoint): [0, 6), [6, 4) -> empty [6, 6), [4, 10).
    A changepoint past T (15, T = 10): [0, 10) and an empty [10, 10)."""
    from trackverify.andi._engine import Ragged, segment_intervals

    lo, hi, nseg = segment_intervals(Ragged.from_lists([[5, 3, 10], [15, 10]]), corrected=False)
    assert lo.tolist() == [0, 6, 4, 0, 10] and hi.tolist() == [6, 6, 10, 10, 10]
    assert nseg.tolist() == [3, 2]
    lo, hi, _ = segment_intervals(Ragged.from_lists([[5, 3, 10]]), corrected=True)
    assert lo.tolist() == [0, 5, 3] and hi.tolist() == [5, 5, 10]


def test_ragged_from_lists_general_path_by_hand():
    """Rows that are not all sequences (a scalar is a row of one value) take the general
    path: lengths by np.size, values concatenated."""
    from trackverify.andi._engine import Ragged

    r = Ragged.from_lists([[1, 2], 3, [], np.array([4.5])])
    assert r.values.tolist() == [1.0, 2.0, 3.0, 4.5] and r.values.dtype == np.float64
    assert r.offsets.tolist() == [0, 2, 3, 3, 4] and r.offsets.dtype == np.int64
    ints = Ragged.from_lists([7, [8, 9]], dtype=np.int64)
    assert ints.values.tolist() == [7, 8, 9] and ints.values.dtype == np.int64
    assert ints.offsets.tolist() == [0, 1, 3]
    whole = Ragged.from_lists([3, [1, 2]])              # integers, held as float64
    assert whole.values.tolist() == [3.0, 1.0, 2.0] and whole.values.dtype == np.float64
    assert whole.offsets.tolist() == [0, 1, 3]
    late = Ragged.from_lists([[], 3])                   # the only value in the last row
    assert late.values.tolist() == [3.0] and late.offsets.tolist() == [0, 0, 1]
    for dtype in (float, np.int64):                     # a (2, 0) array: a row without values
        none = Ragged.from_lists([np.zeros((2, 0))], dtype=dtype)
        assert none.offsets.tolist() == [0, 0] and none.values.shape == (0,)
        assert none.values.dtype == np.dtype(dtype)


def test_assign_blocks_skips_empty_and_unselected_blocks():
    """Blocks 1 x 0 (empty, selected), 1 x 3, 3 x 1, 2 x 2 (not selected): only the pairs of
    the non-empty selected blocks, the first minimum of each 1 x k / k x 1 block."""
    cost = np.array([5.0, 2.0, 2.0,   # 1 x 3: columns 1 and 2 tie -> column 1
                     4.0, 1.0, 1.0,   # 3 x 1: rows 1 and 2 tie -> row 1
                     0.0, 9.0, 9.0, 0.0])
    nrow, ncol = np.array([1, 1, 3, 2]), np.array([0, 3, 1, 2])
    b, r, c = assign_blocks(cost, nrow, ncol, np.array([True, True, True, False]))
    assert b.tolist() == [1, 2] and r.tolist() == [0, 1] and c.tolist() == [1, 0]


def test_assign_blocks_near_tie_of_large_totals_goes_to_the_hungarian_solver():
    """True changepoints 10.1, 40.3 and predicted ones 635307.2, 1212757.2: every prediction
    lies after every truth, so both pairings cost sum(pred) - sum(truth) -- a real tie. In
    floats the crossed pairing's total comes out one ulp (2.3e-10) lower; the engine counts
    totals within 1e-9 x |total| of the lowest as tied and leaves the block to the Hungarian
    solver, whose choice (scipy's, as the reference's) is the straight pairing."""
    gt, pred = np.array([10.1, 40.3]), np.array([635307.2, 1212757.2])
    block = np.abs(gt[:, None] - pred[None, :])
    assert block[0, 1] + block[1, 0] < block[0, 0] + block[1, 1]  # the ulp the tie hides
    rr, cc = linear_sum_assignment(block)
    assert rr.tolist() == [0, 1] and cc.tolist() == [0, 1]
    b, r, c = assign_blocks(block.ravel(), np.array([2]), np.array([2]), np.array([True]))
    assert b.tolist() == [0, 0] and r.tolist() == [0, 1] and c.tolist() == [0, 1]
