"""AnDi 2 challenge utilities: labels, changepoints, segments and segment properties.

Drop-in for ``andi_datasets.utils_challenge`` (andi-datasets 2.1.13): same names, same
positional signatures, same numbers on valid inputs. Functions whose official numbers
rest on a verified defect take a keyword-only ``corrected=False``; ``corrected=True``
gives the fixed definition (see ``docs/reference/andi.md``). Defects that crash, mutate the
caller's data or lose data are always fixed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.assignment import assign

# models_phenom().bound_alpha / bound_D of andi-datasets 2.1.13.
BOUND_ALPHA = (0, 1.999)
BOUND_D = (1e-12, 1e6)
#: Largest MAE of anomalous exponents: |bound_alpha[1] - bound_alpha[0]|.
MAX_ERROR_ALPHA = float(np.abs(BOUND_ALPHA[0] - BOUND_ALPHA[1]))
#: Largest MSLE of diffusion coefficients: (log(1+1e-12) - log(1+1e6))^2.
MAX_ERROR_D = float(np.mean((np.log1p(BOUND_D[0]) - np.log1p(BOUND_D[1])) ** 2))
#: models_phenom().lab_state
LAB_STATE = ["i", "c", "f", "d"]


def _get_error_bounds():
    """(alpha 2, D 1e5, state 0, changepoint 10, ensemble alpha 1.999, ensemble D 1e6-1e-12).

    The single-trajectory maxima replace missing or invalid predictions; the ensemble ones
    are the scores of a missing ensemble prediction.
    """
    return (2, 1e5, 0, 10, MAX_ERROR_ALPHA, float(np.abs(BOUND_D[0] - BOUND_D[1])))


# --------------------------------------------------------------------------- labels

def majority_filter(data, window_size):
    """Mode of ``data`` over a centred window of odd ``window_size`` (clipped at the ends).

    ``out[i] = mode(data[max(i-h, 0) : min(i+h+1, n)])`` with ``h = window_size // 2``;
    ties go to the smallest value (as ``scipy.stats.mode``). Window counts come from a
    cumulative one-hot table, so the cost is O(n * distinct values), no per-sample loop.
    """
    if window_size % 2 == 0:
        raise ValueError("Window size must be odd")
    data = np.asarray(data)
    n = len(data)
    if n == 0:
        return data.copy()
    half = window_size // 2
    values, codes = np.unique(data, return_inverse=True)
    codes = codes.reshape(-1)
    onehot = np.zeros((n + 1, len(values)), dtype=np.int64)
    onehot[np.arange(1, n + 1), codes] = 1
    cum = np.cumsum(onehot, axis=0)
    i = np.arange(n)
    start = np.maximum(i - half, 0)
    end = np.minimum(i + half + 1, n)
    counts = cum[end] - cum[start]
    return values[np.argmax(counts, axis=1)].astype(data.dtype, copy=False)


def unique_labelled(arr):
    """Values in order of first appearance, and each element's index into them (as float)."""
    arr = np.asarray(arr)
    if arr.size == 0:
        return np.array([]), np.array([])
    values, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return values[order].astype(float), rank[inverse.reshape(-1)].astype(float)


def _runs(data):
    """Start index, length and value of each run of equal consecutive values."""
    data = np.asarray(data)
    change = np.flatnonzero(data[1:] != data[:-1]) + 1
    starts = np.concatenate(([0], change))
    lengths = np.diff(np.concatenate((starts, [len(data)])))
    return starts, lengths, data[starts]


def enforce_min_segment_length(data, min_seg=3):
    """Merge runs shorter than ``min_seg`` into a neighbour.

    Leading short runs take the value of the following runs until the merged block is at
    least ``min_seg`` long; every later short run takes the value of the nearest previous
    run that was long enough (the andi-datasets merging order, computed without a loop).
    """
    data = np.asarray(data)
    n = len(data)
    _, lengths, values = _runs(data)
    long_enough = np.cumsum(lengths) >= min_seg
    lead = int(np.argmax(long_enough)) if long_enough.any() else len(lengths) - 1
    keep = lengths >= min_seg
    keep[:lead + 1] = False
    keep[lead] = True
    source = np.where(keep, np.arange(len(lengths)), -1)
    source = np.maximum.accumulate(source)
    source[:lead] = lead
    out = np.empty(n, dtype=data.dtype)
    out[:] = np.repeat(values[source], lengths)
    return out


def label_filter(label, window_size=5, min_seg=3):
    """Majority filter of width ``window_size``, then no segment shorter than ``min_seg``.

    A label without any change is returned unchanged (the same object, as upstream).
    Otherwise values are replaced by their order of first appearance, filtered, and
    mapped back; the result is a float array.
    """
    label = np.asarray(label) if not isinstance(label, np.ndarray) else label
    if np.sum(label[1:] != label[:-1]) == 0:
        return label
    values, dummy = unique_labelled(label)
    final = enforce_min_segment_length(majority_filter(dummy, window_size), min_seg)
    return values[final.astype(np.int64)].astype(float)


def label_continuous_to_list(labs):
    """T x 2 (alpha, D) or T x 3 (alpha, D, state) labels to changepoints and segment values.

    ``CP = {t : labs[t-1] != labs[t]}`` followed by ``T``; each segment's value is the
    label at ``cp - 1`` of its closing changepoint.
    """
    labs = np.asarray(labs)
    cp = np.flatnonzero((labs[:-1, :] != labs[1:, :]).sum(1) != 0) + 1
    ends = np.append(cp, labs.shape[0])
    rows = labs[ends - 1].astype(float)
    if labs.shape[1] == 3:
        return ends, rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy()
    return ends, rows[:, 0].copy(), rows[:, 1].copy()


def create_binary_segment(CP, T, *, corrected=False):
    """Indicator rows (len(CP)+1 x T) of the segments delimited by changepoints ``CP``.

    Official (andi-datasets): segment k covers ``(b_k, b_{k+1}]`` with ``b = (0, CP...)``,
    the last ``(CP[-1], T)``, and t = 0 belongs to the first segment; one step later than
    the changepoints of ``label_continuous_to_list``. ``corrected=True``: segment k covers
    ``[b_k, b_{k+1})`` with ``b = (0, CP..., T)``.
    """
    cp = np.asarray(CP).reshape(-1)
    T = int(T)
    segments = np.zeros((len(cp) + 1, T))
    bounds = np.append(0, cp)
    shift = 0 if corrected else 1
    if bounds.size and bounds.min() >= 0:
        lo = bounds + shift
        hi = np.append(bounds[1:] + shift, T)
        t = np.arange(T)
        segments[(t >= lo[:, None]) & (t < hi[:, None])] = 1
    else:  # negative changepoints: python slicing semantics (wrap-around), as upstream
        for idx, (c1, c2) in enumerate(zip(bounds[:-1], bounds[1:])):
            segments[idx, c1 + shift:c2 + shift] = 1
        segments[-1, bounds[-1] + shift:] = 1
    if not corrected:
        segments[0, 0] = 1
    return segments


def label_list_to_continuous(CP, label, *, corrected=False):
    """Continuous label of length ``CP[-1]`` from changepoints and segment values.

    With ``corrected=True`` it inverts ``label_continuous_to_list`` exactly.
    """
    label = np.asarray(label)
    segs = create_binary_segment(np.asarray(CP)[:-1], np.asarray(CP)[-1], corrected=corrected)
    return (segs.transpose() * label).sum(1)


# ------------------------------------------------------------------ data frames

def _segs_inside_fov(traj, fov_origin, fov_length, cutoff_length):
    """(start, end) of runs of at least ``cutoff_length`` points strictly inside the FOV."""
    lo = np.asarray(fov_origin, dtype=float)
    hi = lo + fov_length
    inside = ((traj[:, 0] > lo[0]) & (traj[:, 0] < hi[0])
              & (traj[:, 1] > lo[1]) & (traj[:, 1] < hi[1]))
    mask = np.concatenate(([False], inside, [False]))
    if not mask.any():
        return None
    idx = np.flatnonzero(mask[1:] != mask[:-1])
    length = idx[1::2] - idx[::2]
    long_ = np.flatnonzero(length >= cutoff_length)
    if long_.size == 0:
        return None
    return np.array([idx[::2][long_], idx[1::2][long_]]).transpose()


def array_to_df(trajs, labels, min_length=10, fov_origin=[0, 0], fov_length=100.0,
                cutoff_length=10):
    """Trajectories (N x T x 2) and labels (N x T x 3: alpha, D, state) to two data frames.

    Each run of at least ``cutoff_length`` points strictly inside the square FOV becomes a
    trajectory; its labels are smoothed with ``label_filter`` and listed with
    ``label_continuous_to_list``. Returns ``(df_in[traj_idx, x, y],
    df_out[traj_idx, Ds, alphas, states, changepoints])``. ``min_length`` is unused, as
    upstream.
    """
    trajs = np.asarray(trajs)
    labels = np.asarray(labels)
    pieces, rows = [], []
    idx_t = 0
    for n, traj in enumerate(trajs):
        segs = _segs_inside_fov(traj, fov_origin, fov_length, cutoff_length)
        if segs is None:
            continue
        for a, b in segs:
            lab = [label_filter(labels[n, a:b, k]) for k in range(3)]
            merge = np.column_stack(lab)
            cp, alphas, Ds, states = label_continuous_to_list(merge)
            pieces.append(np.column_stack((np.full(b - a, float(idx_t)), traj[a:b, 0], traj[a:b, 1])))
            rows.append([idx_t, Ds, alphas, states, cp])
            idx_t += 1
    data = np.vstack(pieces) if pieces else np.zeros((0, 3))
    df_in = pd.DataFrame(data, columns=["traj_idx", "x", "y"])
    df_out = pd.DataFrame(rows, columns=["traj_idx", "Ds", "alphas", "states", "changepoints"])
    return df_in, df_out


def df_to_array(df, pad=-1):
    """Data frame (traj_idx, frame, x, y) to a T x N x 2 array padded with ``pad``.

    ``T = max(frame) + 1``; ``N = traj_idx of the last row + 1`` (as upstream, so the
    frame must be sorted by ``traj_idx``).
    """
    max_T = int(df.frame.max() + 1)
    num_part = int(df.iloc[-1].traj_idx)
    out = np.ones((max_T, num_part + 1, 2)) * pad
    frame = df.frame.values.astype(int)
    idx = df.traj_idx.values.astype(int)
    out[frame, idx, 0] = df.x.values
    out[frame, idx, 1] = df.y.values
    return out


def get_VIP(array_trajs, num_vip=5, min_distance_part=2, pad=-1, boundary=False,
            boundary_origin=(0, 0), min_distance_bound=0, sort_length=True):
    """Indices of ``num_vip`` particles present at frame 0, pairwise farther than
    ``min_distance_part`` (and inside the optional boundary box).

    Candidates are taken longest first (``sort_length``), equal lengths in index order (a
    stable sort; andi-datasets uses numpy's default unstable sort, so its order among equal
    lengths depends on the numpy version and the CPU); the greedy choice and the random
    restarts (``np.random.choice``) follow andi-datasets, so a seeded global generator gives
    the same particles whenever the lengths do not tie.
    """
    first = array_trajs[0]
    if not boundary:
        candidates = np.flatnonzero(first[:, 0] != pad)
    else:
        ok = ((first[:, 0] > boundary_origin[0] + min_distance_bound)
              & (first[:, 0] < boundary_origin[0] + boundary - min_distance_bound)
              & (first[:, 1] > boundary_origin[1] + min_distance_bound)
              & (first[:, 1] < boundary_origin[1] + boundary - min_distance_bound)
              & (first[:, 0] != pad))
        candidates = np.flatnonzero(ok)
    if len(candidates) < num_vip:
        raise ValueError("Number of VIP demanded is bigger than available particles.")
    if sort_length:
        cand = array_trajs[:, candidates, 0]
        lengths = np.ones(cand.shape[1]) * cand.shape[0]
        where_pad = np.argwhere(cand == pad)
        lengths[where_pad[:, 1]] = where_pad[:, 0]
        # stable: equal lengths keep index order (andi-datasets' default quicksort leaves
        # their order to the numpy version and CPU, see docs/reference/andi.md)
        candidates = candidates[np.argsort(-lengths, kind="stable")]
    pos = first[:, :2]
    count = 0
    elected: list = []
    while len(elected) < num_vip:
        elected = [candidates[0]] if (sort_length and count == 0) else [np.random.choice(candidates)]
        for c in candidates:
            if c == elected[0]:
                continue
            dist = np.sqrt(((pos[elected] - pos[c]) ** 2).sum(1))
            if dist.min() > min_distance_part:
                elected.append(c)
            if len(elected) == num_vip:
                break
        count += 1
        if count > 100:
            raise ValueError("Could not find suitable VIP particles. This is due to either "
                             "having to few particles or them being too close")
    return elected


# ----------------------------------------------------------------- changepoints

def changepoint_assignment(GT, preds):
    """Hungarian pairing of changepoints with cost ``|gt - pred|``.

    Returns ``((gt_index, pred_index), cost_matrix)``.
    """
    gt = np.asarray(GT, dtype=float).reshape(-1)
    pr = np.asarray(preds, dtype=float).reshape(-1)
    cost = np.abs(gt[:, None] - pr[None, :])
    return assign(cost), cost


def changepoint_alpha_beta(GT, preds, threshold=10, *, corrected=False):
    """alpha and beta of paired changepoints (Chenouard et al. 2014, Suppl. Note 3).

    ``d = sum min(|gt_i - pred_j|, thr)`` over Hungarian pairs, ``alpha = 1 - d / (thr |GT|)``,
    ``beta = (thr |GT| - d) / (thr |GT| + max(0, |preds| - |GT|) thr)``. Official: ``thr`` is
    always 10 whatever ``threshold`` says; ``corrected=True`` uses ``threshold``.
    """
    gt = np.asarray(GT)
    pr = np.asarray(preds)
    (rows, cols), _ = changepoint_assignment(gt, pr)
    thr = threshold if corrected else 10
    distance = np.minimum(np.abs(gt[rows] - pr[cols]), thr)
    distance = np.sum(distance)
    d_x_phi = thr * len(gt)
    d_ybar_phi = max([0, (len(pr) - len(gt)) * thr])
    return 1 - distance / d_x_phi, (d_x_phi - distance) / (d_x_phi + d_ybar_phi)


def jaccard_index(TP, FP, FN):
    """``TP / (TP + FP + FN)``."""
    return TP / (TP + FP + FN)


def single_changepoint_error(GT, preds, threshold=5, *, corrected=False):
    """RMSE of the true-positive changepoints and Jaccard index, one trajectory.

    Pairs come from ``changepoint_assignment``; a pair is a true positive when
    ``|gt - pred| < threshold``, otherwise it counts one FP and one FN; unpaired
    predictions are FP, unpaired truths FN. ``RMSE = sqrt(mean((gt - pred)^2))`` over TPs.
    Official: RMSE is NaN without true positives; ``corrected=True`` gives 0 (the
    ensemble rule). Two empty lists (a ZeroDivisionError upstream) give JI = 1.
    """
    gt = np.asarray(GT, dtype=float).reshape(-1)
    pr = np.asarray(preds, dtype=float).reshape(-1)
    (rows, cols), _ = changepoint_assignment(gt, pr)
    diff = gt[rows] - pr[cols]
    tp_mask = np.abs(diff) < threshold
    tp = int(tp_mask.sum())
    fp = fn = len(rows) - tp
    fp += max(len(pr) - len(gt), 0)
    fn += max(len(gt) - len(pr), 0)
    if tp == 0:
        rmse = 0.0 if corrected else float("nan")
    else:
        rmse = float(np.sqrt(np.mean(diff[tp_mask] ** 2)))
    if tp + fp + fn == 0:
        return rmse, 1.0
    return rmse, jaccard_index(tp, fp, fn)


def ensemble_changepoint_error(GT_ensemble, pred_ensemble, threshold=5):
    """RMSE of true-positive changepoints and Jaccard index over many trajectories.

    Counts are pooled over trajectories (see ``single_changepoint_error``); a trajectory
    with no changepoint in truth nor prediction adds one TP. RMSE is 0 without true
    positives. No changepoints anywhere gives ``(0, 1)``.
    """
    from trackverify.andi._engine import Ragged, changepoint_counts

    gt = Ragged.from_lists(GT_ensemble)
    pr = Ragged.from_lists(pred_ensemble)
    n = min(gt.n, pr.n)
    return changepoint_counts(gt.head(n), pr.head(n), threshold).scores(threshold)


# --------------------------------------------------------------------- segments

def jaccard_between_segments(gt, pred):
    """Jaccard index of two 0/1 indicator vectors (the shorter padded with zeros); 0 when
    both are empty."""
    gt = np.asarray(gt)
    pred = np.asarray(pred)
    n = max(len(gt), len(pred))
    g = np.zeros(n, dtype=bool)
    p = np.zeros(n, dtype=bool)
    g[:len(gt)] = gt == 1
    p[:len(pred)] = pred == 1
    zg = np.zeros(n, dtype=bool)
    zp = np.zeros(n, dtype=bool)
    zg[:len(gt)] = gt == 0
    zp[:len(pred)] = pred == 0
    zg[len(gt):] = True
    zp[len(pred):] = True
    tp = np.sum(p & g)
    fp = np.sum(p & zg)
    fn = np.sum(zp & g)
    if tp + fp + fn == 0:
        return 0
    return jaccard_index(tp, fp, fn)


def _prepare_segments(GT, preds, T):
    if T is not None:
        T_gt = T_pred = T
        if isinstance(GT, int):
            GT = [GT]
        elif len(GT) == 0:
            GT = [T - 1]
        if isinstance(preds, int):
            preds = [preds]
        elif len(preds) == 0:
            preds = [T - 1]
    else:
        T_gt = GT[-1]
        if len(GT) > 1:
            GT = GT[:-1]
        T_pred = preds[-1]
        if len(preds) > 1:
            preds = preds[:-1]
    return GT, T_gt, preds, T_pred


def segment_assignment(GT, preds, T=None, *, corrected=False):
    """Hungarian pairing of segments with cost ``1 - Jaccard(segment_gt, segment_pred)``.

    Without ``T`` the last changepoint of each list is its length (a list of one element
    is a single changepoint at the end, as upstream). Segments come from
    ``create_binary_segment`` (its ``corrected`` flag). Returns
    ``((gt_index, pred_index), cost_matrix)``.
    """
    GT, T_gt, preds, T_pred = _prepare_segments(GT, preds, T)
    seg_gt = create_binary_segment(GT, T_gt, corrected=corrected)
    seg_pr = create_binary_segment(preds, T_pred, corrected=corrected)
    n = max(seg_gt.shape[1], seg_pr.shape[1])
    g = np.zeros((seg_gt.shape[0], n))
    p = np.zeros((seg_pr.shape[0], n))
    g[:, :seg_gt.shape[1]] = seg_gt
    p[:, :seg_pr.shape[1]] = seg_pr
    g1 = (g == 1).astype(np.int64)
    p1 = (p == 1).astype(np.int64)
    tp = g1 @ p1.T
    fp = (g == 0).astype(np.int64) @ p1.T
    fn = g1 @ (p == 0).astype(np.int64).T
    union = tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        jac = np.where(union == 0, 0.0, tp / np.where(union == 0, 1, union))
    cost = 1 - jac
    return assign(cost), cost


# ----------------------------------------------------------- segment properties

def metric_anomalous_exponent(gt=None, pred=None, max_error=MAX_ERROR_ALPHA):
    """Mean absolute error ``mean|gt - pred|``, capped at ``max_error`` (1.999)."""
    error = np.mean(np.abs(np.asarray(gt) - np.asarray(pred)))
    return max_error if error > max_error else error


def metric_diffusion_coefficient(gt=None, pred=None, threshold_min=BOUND_D[0],
                                 max_error=MAX_ERROR_D):
    """Mean squared log error ``mean((log(1+gt) - log(1+pred))^2)`` after raising values
    ``<= threshold_min`` to ``threshold_min``; capped at ``max_error`` (190.868...)."""
    gt = np.array(gt, dtype=float)
    pred = np.array(pred, dtype=float)
    gt[gt <= threshold_min] = threshold_min
    pred[pred <= threshold_min] = threshold_min
    if gt.size == 0:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if not (np.isfinite(gt).all() and np.isfinite(pred).all()):
        raise ValueError("Input contains NaN or infinity.")  # as sklearn's check_array
    error = float(np.mean((np.log1p(gt) - np.log1p(pred)) ** 2))
    return max_error if error > max_error else error


def metric_diffusive_state(gt=None, pred=None):
    """Micro-averaged F1 of integer states, which for one label per sample is the
    accuracy ``mean(int(gt) == int(pred))``."""
    gt = np.asarray(gt).astype(int)
    pred = np.asarray(pred).astype(int)
    if gt.size == 0:
        return 0.0
    return float(np.mean(gt == pred))


def check_no_changepoints(GT_cp, GT_alpha, GT_D, GT_s, preds_cp, preds_alpha, preds_D,
                          preds_s, T=None, *, corrected=False):
    """Pair segment properties when truth or prediction has no changepoint.

    Returns ``(False, None, None, None)`` when both have changepoints, else ``(True,
    alpha_pair, D_pair, state_pair)``, each a 1 x 2 array ``[[gt, pred]]``. When only the
    prediction lacks changepoints, official pairing takes the GT segment by position in
    the assignment (always the first); ``corrected=True`` takes the matched GT segment.
    """
    if isinstance(GT_cp, (int, float)):
        GT_cp = [GT_cp]
    if isinstance(preds_cp, (int, float)):
        preds_cp = [preds_cp]
    no_gt = len(GT_cp) == 1
    no_pr = len(preds_cp) == 1
    if not (no_gt or no_pr):
        return False, None, None, None
    (row_ind, col_ind), _ = segment_assignment(GT_cp, preds_cp, T, corrected=corrected)
    if no_gt and not no_pr:
        g, p = 0, col_ind[0]
    elif no_pr and not no_gt:
        pos = np.flatnonzero(col_ind == 0)[0]
        g = row_ind[pos] if corrected else pos
        p = col_ind[pos]
    else:
        g = p = 0
    return (True, np.array([[GT_alpha[g], preds_alpha[p]]]), np.array([[GT_D[g], preds_D[p]]]),
            np.array([[GT_s[g], preds_s[p]]]))


def segment_property_errors(GT_cp, GT_alpha, GT_D, GT_s, preds_cp, preds_alpha, preds_D,
                            preds_s, return_pairs=False, T=None, *, corrected=False):
    """Pair segments (``segment_assignment``) and score their properties.

    Each matched GT segment gives pairs ``[gt, pred]`` of alpha, D and state; returns the
    pairs (``return_pairs``) or ``(metric_anomalous_exponent, metric_diffusion_coefficient,
    metric_diffusive_state)`` of them.
    """
    special, pa, pd_, ps = check_no_changepoints(GT_cp, GT_alpha, GT_D, GT_s, preds_cp,
                                                 preds_alpha, preds_D, preds_s, T,
                                                 corrected=corrected)
    if not special:
        (rows, cols), _ = segment_assignment(GT_cp, preds_cp, T, corrected=corrected)
        n = min(len(GT_alpha), len(GT_D))
        keep = rows < n
        rows, cols = rows[keep], cols[keep]
        pa = np.array([[GT_alpha[r], preds_alpha[c]] for r, c in zip(rows, cols)])
        pd_ = np.array([[GT_D[r], preds_D[c]] for r, c in zip(rows, cols)])
        ps = np.array([[GT_s[r], preds_s[c]] for r, c in zip(rows, cols)])
    if return_pairs:
        return pa, pd_, ps
    return (metric_anomalous_exponent(pa[:, 0], pa[:, 1]),
            metric_diffusion_coefficient(pd_[:, 0], pd_[:, 1]),
            metric_diffusive_state(ps[:, 0], ps[:, 1]))
