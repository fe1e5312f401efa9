"""Single-trajectory task: submission lines, tables of segments, data-set metrics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from trackverify.andi import core
from trackverify.andi._engine import (Ragged, ranges, assign_blocks, changepoint_counts,
                                      segment_costs)
from trackverify.io.bounded import regular_file

COLUMNS = ["traj_idx", "Ds", "alphas", "states", "changepoints"]


# ------------------------------------------------------------------ file format

def check_prediction_length(pred, *, corrected=False):
    """A line ``idx, D1, a1, s1, cp1, ..., Dk, ak, sk, T`` has length 1 + 4k.

    Official: lengths ``4k`` pass too (the last changepoint then becomes the length T
    and the last segment's values are ignored). ``corrected=True``: only ``1 + 4k``.
    """
    if corrected:
        return len(pred) % 4 == 1
    return len(pred) % 4 == 0 or len(pred) % 4 == 1


def separate_prediction_values(pred):
    """``(Ds, alphas, states, changepoints) = (pred[1::4], pred[2::4], pred[3::4], pred[4::4])``."""
    return pred[1::4], pred[2::4], pred[3::4], pred[4::4]


@dataclass
class Problem:
    """One finding about an input file: where, what, and how it was scored."""

    source: str
    line: int | None
    message: str
    severity: str = "error"  # "error": data rejected and scored by rule; "warning": kept

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"


@dataclass
class Table:
    """Segmentation of trajectories, one row per accepted line (ragged columns)."""

    idx: np.ndarray
    cp: Ragged
    D: Ragged
    a: Ragged
    s: Ragged
    line: np.ndarray = field(default=None)  # 1-based source line of each row

    @property
    def n(self) -> int:
        return len(self.idx)

    @classmethod
    def from_df(cls, df: pd.DataFrame) -> "Table":
        idx = pd.to_numeric(df["traj_idx"], errors="coerce").to_numpy(dtype=float)
        return cls(idx, Ragged.from_lists(df["changepoints"].tolist()),
                   Ragged.from_lists(df["Ds"].tolist()), Ragged.from_lists(df["alphas"].tolist()),
                   Ragged.from_lists(df["states"].tolist()))

    def to_df(self) -> pd.DataFrame:
        out = pd.DataFrame({"traj_idx": self.idx.astype(float)})
        for name, col in zip(COLUMNS[1:], (self.D, self.a, self.s, self.cp)):
            flat = col.values.tolist()
            off = col.offsets.tolist()
            out[name] = [flat[i:j] for i, j in zip(off[:-1], off[1:])]
        return out

    def take(self, rows) -> "Table":
        rows = np.asarray(rows, dtype=np.int64)
        return Table(self.idx[rows], self.cp.take(rows), self.D.take(rows), self.a.take(rows),
                     self.s.take(rows), None if self.line is None else self.line[rows])

    @classmethod
    def concat(cls, tables: list["Table"]) -> "Table":
        def cat(rs):
            return Ragged.from_lengths(np.concatenate([r.values for r in rs]),
                                       np.concatenate([r.lengths for r in rs]))
        return cls(np.concatenate([t.idx for t in tables]),
                   cat([t.cp for t in tables]), cat([t.D for t in tables]),
                   cat([t.a for t in tables]), cat([t.s for t in tables]))


def _parse_fields(line: str):
    try:
        return [float(v) for v in line.split(",")], None
    except ValueError:
        for k, v in enumerate(line.split(","), start=1):
            try:
                float(v)
            except ValueError:
                return None, f"field {k} ({v.strip()[:20]!r}) is not a number"
    return None, "unreadable line"  # pragma: no cover


def parse_lines(lines: list[str], source: str = "<text>", *, corrected: bool = False,
                strict: bool = False) -> tuple[Table, list[Problem]]:
    """Parse submission lines into a :class:`Table` and a list of problems.

    The official reader (``load_file_to_df``) drops lines of a wrong length silently and
    crashes on a non-numeric field. Here every rejected line is reported by file and line
    and its trajectory then counts as missing (maximum errors). With ``strict`` the
    lines the official reader would accept but that cannot be scored (non-finite index or
    changepoint, length < 1) are rejected too; ``strict`` is what the scoring program uses.
    Numbers are parsed with Python's ``float`` (the official reader's rule).
    """
    problems: list[Problem] = []
    counts = np.fromiter((ln.count(",") + 1 for ln in lines), dtype=np.int64, count=len(lines))
    line_no = np.arange(1, len(lines) + 1)
    try:  # fast path: every field of every line is a number
        flat = np.fromiter(map(float, ",".join(lines).split(",")) if lines else (),
                           dtype=float, count=int(counts.sum()))
    except ValueError:
        keep, values = [], []
        for k, ln in enumerate(lines, start=1):
            if not ln.strip():
                problems.append(Problem(source, k, "blank line ignored", "warning"))
                continue
            vals, err = _parse_fields(ln)
            if err:
                problems.append(Problem(source, k, f"{err}; line rejected"))
                continue
            keep.append(k - 1)
            values.extend(vals)
        counts, line_no = counts[keep], line_no[keep]
        flat = np.asarray(values, dtype=float)
    starts = np.cumsum(counts) - counts
    ok = (counts % 4 == 1) if corrected else (counts % 4 <= 1)
    for k, n in zip(line_no[~ok].tolist(), counts[~ok].tolist()):
        problems.append(Problem(source, k, f"{n} fields; a line must have 1 + 4k (idx, then "
                                "D, alpha, state, changepoint per segment); line rejected"))
    for k, n in zip(line_no[ok & (counts % 4 == 0)].tolist(), counts[ok & (counts % 4 == 0)].tolist()):
        problems.append(Problem(source, k, f"{n} fields (a multiple of 4): the last changepoint "
                                "is taken as the length and the last segment's values are "
                                "ignored (official rule)", "warning"))
    ncp = (counts - 1) // 4
    if strict:
        cp_pos = np.repeat(starts, ncp) + 4 * ranges(np.ones(len(ncp), dtype=np.int64), ncp)
        row_of = np.repeat(np.arange(len(counts)), ncp)
        bad_cp = np.zeros(len(counts), dtype=bool)
        np.logical_or.at(bad_cp, row_of, ~np.isfinite(flat[cp_pos]))
        last = np.where(ncp > 0, flat[np.minimum(starts + 4 * ncp, len(flat) - 1)]
                        if len(flat) else 0, 1)
        with np.errstate(invalid="ignore"):
            short = ~bad_cp & (ncp > 0) & (np.trunc(np.nan_to_num(last)) < 1)
        bad_idx = ~np.isfinite(flat[starts]) if len(flat) else np.zeros(0, dtype=bool)
        for mask, text in ((ok & bad_cp, "a changepoint is not finite"),
                           (ok & short, None), (ok & ~bad_cp & ~short & bad_idx,
                                                "trajectory index is not finite")):
            for i in np.flatnonzero(mask).tolist():
                msg = text or f"trajectory length {last[i]:g} < 1"
                problems.append(Problem(source, int(line_no[i]), f"{msg}; line rejected"))
        ok &= ~bad_cp & ~short & ~bad_idx
    problems.sort(key=lambda p: (p.line or 0))
    starts, counts, line_no, ncp = starts[ok], counts[ok], line_no[ok], ncp[ok]
    nval = np.where(counts % 4 == 0, counts // 4, (counts - 1) // 4)

    def column(offset, n):
        pos = np.repeat(starts + offset, n) + 4 * ranges(np.zeros(len(n), dtype=np.int64), n)
        return Ragged.from_lengths(flat[pos], n)

    table = Table(flat[starts] if len(starts) else np.zeros(0), column(4, ncp),
                  column(1, nval), column(2, nval), column(3, nval), line_no)
    return table, problems


def read_table_file(path, *, corrected=False, strict=False) -> tuple[Table, list[Problem]]:
    """Read a submission or reference file (``fov_N.txt`` / ``traj_labs_fov_N.txt``)."""
    with open(regular_file(path), encoding="utf-8-sig", errors="replace") as f:
        lines = f.read().splitlines()
    return parse_lines(lines, str(path), corrected=corrected, strict=strict)


def load_file_to_df(path_file, columns=COLUMNS, *, corrected=False):
    """Read a submission file into a data frame (``traj_idx, Ds, alphas, states,
    changepoints``; list columns). Lines of a wrong length are left out (official rule;
    the scoring program reports them); a non-numeric field raises ``ValueError`` naming
    file and line."""
    with open(path_file) as f:
        lines = f.read().splitlines()
    table, problems = parse_lines(lines, str(path_file), corrected=corrected)
    for p in problems:
        if "is not a number" in p.message or p.message.startswith("blank line"):
            raise ValueError(f"{p.source}:{p.line}: {p.message.split(';')[0]}")
    df = table.to_df()
    df.columns = list(columns)
    return df


# ------------------------------------------------------------------ matching

def first_match(q_group, q_idx, r_group, r_idx) -> np.ndarray:
    """For each query key (group, idx): the first reference row with the same key, or -1.

    Keys compare as floats (NaN never matches), as ``df.traj_idx == t_idx`` does.
    """
    q_idx = np.asarray(q_idx, dtype=float)
    r_idx = np.asarray(r_idx, dtype=float)
    allv = np.concatenate((q_idx, r_idx))
    ok = ~np.isnan(allv)
    uniq, inv = np.unique(allv[ok], return_inverse=True)
    codes = np.full(len(allv), -1, dtype=np.int64)
    codes[ok] = inv.reshape(-1)
    m = max(len(uniq), 1)
    qk = np.asarray(q_group, dtype=np.int64) * m + codes[:len(q_idx)]
    rk = np.asarray(r_group, dtype=np.int64) * m + codes[len(q_idx):]
    rvalid = codes[len(q_idx):] >= 0
    order = np.flatnonzero(rvalid)[np.argsort(rk[rvalid], kind="stable")]
    keys = rk[order]
    pos = np.searchsorted(keys, qk, side="left")
    pos_c = np.minimum(pos, max(len(keys) - 1, 0))
    found = (len(keys) > 0) & (codes[:len(q_idx)] >= 0)
    found &= keys[pos_c] == qk if len(keys) else np.zeros(len(qk), dtype=bool)
    return np.where(found, order[pos_c] if len(keys) else -1, -1)


# ------------------------------------------------------------------ scoring

@dataclass
class SingleResult:
    rmse_cp: float
    ji: float
    alpha: float
    D: float
    state: float
    missing: np.ndarray  # indices of true rows scored as missing

    def as_tuple(self):
        return self.rmse_cp, self.ji, self.alpha, self.D, self.state


def _regular(cp_int: Ragged, tab: Table) -> np.ndarray:
    """Rows the interval engine reproduces exactly: changepoints >= 0, length >= 1, enough
    values per segment."""
    n = tab.n
    ncp = cp_int.lengths
    bad = np.zeros(n, dtype=bool)
    if cp_int.values.size:
        row_of = np.repeat(np.arange(n), ncp)
        np.logical_or.at(bad, row_of, cp_int.values < 0)
    T = np.where(ncp > 0, cp_int.values[np.maximum(cp_int.offsets[1:] - 1, 0)] if
                 cp_int.values.size else 0, 0)
    nval = np.minimum(np.minimum(tab.D.lengths, tab.a.lengths), tab.s.lengths)
    return (~bad) & (ncp > 0) & (T >= 1) & (nval >= ncp)


def _int_cp(r: Ragged) -> Ragged:
    with np.errstate(invalid="ignore"):
        return Ragged(r.values.astype(int), r.offsets)


def score_tables(true: Table, pred: Table, *, true_group=None, pred_group=None,
                 threshold_error_alpha=None, max_val_alpha=2, min_val_alpha=0,
                 threshold_error_D=None, max_val_D=1e6, min_val_D=1e-6,
                 threshold_error_s=None, threshold_cp=None, corrected=False) -> SingleResult:
    """Data-set metrics of the single-trajectory task (see ``error_SingleTraj_dataset``).

    Trajectories are matched by (group, traj_idx): the group is the FOV when several
    files are pooled, so ids never need offsetting.
    """
    bounds = core._get_error_bounds()
    thr_a = bounds[0] if threshold_error_alpha is None else threshold_error_alpha
    thr_D = bounds[1] if threshold_error_D is None else threshold_error_D
    thr_s = bounds[2] if threshold_error_s is None else threshold_error_s
    thr_cp = bounds[3] if threshold_cp is None else threshold_cp
    nt = true.n
    tg = np.zeros(nt, dtype=np.int64) if true_group is None else np.asarray(true_group)
    pg = np.zeros(pred.n, dtype=np.int64) if pred_group is None else np.asarray(pred_group)
    t_row = first_match(tg, true.idx, tg, true.idx)  # duplicates use their first row
    p_row = first_match(tg, true.idx, pg, pred.idx)
    missing = (p_row < 0)
    missing[~missing] = pred.cp.lengths[p_row[~missing]] == 0
    # Substitutes of a missing trajectory (maximum errors), appended as the last row.
    sub_pred = Table(np.array([np.nan]), Ragged.from_lists([[10]]), Ragged.from_lists([[1]]),
                     Ragged.from_lists([[0]]), Ragged.from_lists([[0]]))
    sub_true = Table(np.array([np.nan]), Ragged.from_lists([[10 + thr_cp]]),
                     Ragged.from_lists([[1 + thr_D]]), Ragged.from_lists([[thr_a]]),
                     Ragged.from_lists([[10]]))
    P = Table.concat([pred, sub_pred]).take(np.where(missing, pred.n, p_row))
    G = Table.concat([true, sub_true]).take(np.where(missing, true.n, t_row))
    Pc, Gc = _int_cp(P.cp), _int_cp(G.cp)
    # ---- changepoints (official: the last one, the length, is left out)
    Pens = Ragged(np.where(np.repeat(missing, Pc.lengths), P.cp.values, Pc.values), Pc.offsets)
    Gens = Ragged(np.where(np.repeat(missing, Gc.lengths), G.cp.values, Gc.values), Gc.offsets)
    Pens = _drop_last_unless(Pens, missing)
    Gens = _drop_last_unless(Gens, missing)
    counts = changepoint_counts(Gens, Pens, thr_cp)
    rmse_cp, ji = counts.scores(thr_cp)
    # ---- segment pairs
    ng, np_ = Gc.lengths, Pc.lengths
    single_g, single_p = ng == 1, np_ == 1
    regular = _regular(Gc, G) & _regular(Pc, P)
    case_a = missing | (regular & single_g & single_p)
    fast = regular & ~case_a
    pair_traj, pair_g, pair_p, pair_order = [np.flatnonzero(case_a)], [np.zeros(case_a.sum(), int)], \
        [np.zeros(case_a.sum(), int)], [np.zeros(case_a.sum(), int)]
    if fast.any():
        rows = np.flatnonzero(fast)
        cost, nsg, nsp = segment_costs(Ragged.take(Gc, rows), Ragged.take(Pc, rows), corrected)
        b, r, c = assign_blocks(cost, nsg, nsp, np.ones(len(rows), dtype=bool))
        first_of_block = np.searchsorted(b, b, side="left")
        within = np.arange(len(b)) - first_of_block
        traj = rows[b]
        sg, sp = single_g[traj], single_p[traj]
        # B: no GT changepoint -> GT segment 0 with the prediction matched to row 0.
        sel_b = sg & ~sp & (r == 0)
        # C: no predicted changepoint -> the pair whose prediction is segment 0.
        sel_c = ~sg & sp & (c == 0)
        # D: every matched GT segment.
        sel_d = ~sg & ~sp
        g_idx = np.where(sel_c & (not corrected), within, r)
        sel = sel_b | sel_c | sel_d
        pair_traj.append(traj[sel])
        pair_g.append(g_idx[sel])
        pair_p.append(c[sel])
        pair_order.append(r[sel])
    slow = np.flatnonzero(~regular & ~case_a)
    slow_pairs = []
    for t in slow.tolist():  # irregular rows: the reference algorithm, row by row
        pa, pd_, ps = core.segment_property_errors(
            G.cp.row(t).astype(int), G.a.row(t), G.D.row(t), G.s.row(t),
            P.cp.row(t).astype(int), P.a.row(t), P.D.row(t), P.s.row(t),
            return_pairs=True, corrected=corrected)
        slow_pairs.append((t, np.asarray(pa, float).reshape(-1, 2), np.asarray(pd_, float).reshape(-1, 2),
                           np.asarray(ps, float).reshape(-1, 2)))
    traj = np.concatenate(pair_traj)
    gi, pi = np.concatenate(pair_g), np.concatenate(pair_p)
    order_key = np.concatenate(pair_order)
    pairs = {}
    for name, gcol, pcol in (("a", G.a, P.a), ("D", G.D, P.D), ("s", G.s, P.s)):
        pairs[name] = np.column_stack((gcol.values[gcol.offsets[traj] + gi],
                                       pcol.values[pcol.offsets[traj] + pi]))
    if slow_pairs:
        extra_traj = np.concatenate([np.full(len(p[1]), p[0]) for p in slow_pairs])
        traj = np.concatenate((traj, extra_traj))
        order_key = np.concatenate((order_key, np.concatenate([np.arange(len(p[1])) for p in slow_pairs])))
        for k, name in enumerate(("a", "D", "s"), start=1):
            pairs[name] = np.vstack([pairs[name]] + [p[k] for p in slow_pairs])
    order = np.lexsort((order_key, traj))
    pa, pD, ps = (pairs[k][order].astype(float) for k in ("a", "D", "s"))
    # ---- invalid predictions get the maximum error
    if corrected:
        wrong_a = np.isnan(pa[:, 1]) | (pa[:, 1] > max_val_alpha) | (pa[:, 1] < min_val_alpha)
        wrong_D = np.isnan(pD[:, 1]) | (pD[:, 1] > max_val_D) | (pD[:, 1] < min_val_D)
    else:
        wrong_a = np.isnan(pa[:, 1]) | (pa[:, 1] > 2) | (pa[:, 1] < 0)
        wrong_D = np.isnan(pD[:, 1])
        pD = np.abs(pD)
    pa[wrong_a, 1] = pa[wrong_a, 0] + thr_a
    pD[wrong_D, 1] = pD[wrong_D, 0] + thr_D
    wrong_s = (ps[:, 1] > 4) | (ps[:, 1] < 0)
    ps[wrong_s, 1] = thr_s
    return SingleResult(rmse_cp, ji,
                        core.metric_anomalous_exponent(pa[:, 0], pa[:, 1]),
                        core.metric_diffusion_coefficient(pD[:, 0], pD[:, 1]),
                        core.metric_diffusive_state(ps[:, 0], ps[:, 1]),
                        np.flatnonzero(missing))


def _drop_last_unless(r: Ragged, keep: np.ndarray) -> Ragged:
    lengths = np.where(keep, r.lengths, np.maximum(r.lengths - 1, 0))
    return Ragged.from_lengths(r.values[ranges(r.offsets[:-1], lengths)], lengths)


def error_SingleTraj_dataset(df_pred, df_true, threshold_error_alpha=None, max_val_alpha=2,
                             min_val_alpha=0, threshold_error_D=None, max_val_D=1e6,
                             min_val_D=1e-6, threshold_error_s=None, threshold_cp=None,
                             prints=True, disable_tqdm=False, *, corrected=False):
    """Metrics of the single-trajectory task over a data set.

    For every true trajectory (``traj_idx``) the first prediction with that index is used;
    a missing one (or one without changepoints) is scored as the worst case (changepoints
    10 vs 10 + threshold_cp, alpha 0 vs threshold_error_alpha, D 1 vs 1 + threshold_error_D,
    state 0 vs 10). Changepoints (without the final length) give ``ensemble_changepoint_error``
    (RMSE, Jaccard); matched segments (``segment_property_errors``) give pairs whose
    invalid predictions are replaced by ``truth + threshold`` (alpha NaN or outside [0, 2];
    D NaN; state outside [0, 4] -> threshold_error_s) and the three metrics. Official: D
    pairs are taken in absolute value and ``min/max_val_*`` are ignored; ``corrected=True``
    flags alpha outside [min_val_alpha, max_val_alpha] and D NaN or outside
    [min_val_D, max_val_D] (negative D is invalid, not flipped).

    Returns ``(rmse_CP, JI, error_alpha, error_D, error_s)``.
    """
    res = score_tables(Table.from_df(df_true), Table.from_df(df_pred),
                       threshold_error_alpha=threshold_error_alpha, max_val_alpha=max_val_alpha,
                       min_val_alpha=min_val_alpha, threshold_error_D=threshold_error_D,
                       max_val_D=max_val_D, min_val_D=min_val_D,
                       threshold_error_s=threshold_error_s, threshold_cp=threshold_cp,
                       corrected=corrected)
    if prints:
        print("Summary of metrics assesments:")
        if len(res.missing):
            print(f"\n{len(res.missing)} missing trajectory/ies. ")
        print(f"\nChangepoint Metrics \nRMSE: {round(res.rmse_cp, 3)} \nJaccard Index: "
              f"{round(res.ji, 3)}", f"\n\nDiffusion property metrics \nMetric anomalous "
              f"exponent: {res.alpha} \nMetric diffusion coefficient: {res.D} \nMetric "
              f"diffusive state: {res.state}")
    return res.as_tuple()
