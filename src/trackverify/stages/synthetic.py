"""Synthetic fly experiments for the stage evaluators' tests and demonstrations.

Flies walk in a circular arena of radius 26.689 mm (ellipse pose: centroid, heading, quarter
axes), with alternating walking / stopped bouts; the module derives the raw and registered
trajectory files, per-frame features, walking labels, swing/stance arrays, keypoint
annotations and statistics rows in the layouts of EVALUATORS.md. Everything is seeded and
deterministic; nothing here is used to score.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.stages.common import wrapped

ARENA_RADIUS_MM = 26.689
FEATURES = ("absdtheta", "absdv_cor", "corfrac_maj", "corfrac_min", "dphi", "dtheta", "du_cor",
            "du_ctr", "dv_cor", "dv_ctr", "flipdv_cor", "phisideways", "velmag", "velmag_ctr",
            "velmag_nose", "yaw")
N_KEYPOINTS = 21


def fly_experiment(seed: int, n_flies: int = 3, n_frames: int = 300, pxpermm: float = 18.9,
                   center_px: tuple[float, float] = (512.0, 500.0), fps: float = 150.0
                   ) -> dict[str, Any]:
    """A registered trajectory dict (pixel and mm fields, no NaNs), one target per fly.

    Each fly alternates walking bouts (speed 8-30 mm/s along its heading) and stops (speed
    below 1 mm/s); its heading turns smoothly and it stays at least 2 mm inside the arena.
    Also carries ``walking`` (per-fly bool arrays, one per frame), not part of the format.
    """
    rng = np.random.default_rng(seed)
    dt = 1.0 / fps
    out: dict[str, list] = {k: [] for k in ("x", "y", "theta", "a", "b", "x_mm", "y_mm",
                                            "theta_mm", "a_mm", "b_mm", "dt", "off", "pxpermm",
                                            "walking")}
    for _ in range(n_flies):
        bout_len = rng.integers(20, 60, size=n_frames)
        state = np.repeat(np.arange(bout_len.size) % 2 == rng.integers(0, 2), bout_len)[:n_frames]
        speed = np.where(state, rng.uniform(8, 30), rng.uniform(0, 1))
        turn = np.cumsum(rng.normal(0, 0.05, n_frames))
        theta = wrapped(rng.uniform(-np.pi, np.pi) + turn)
        step = speed * dt
        x = np.cumsum(step * np.cos(theta))
        y = np.cumsum(step * np.sin(theta))
        start = rng.uniform(-10, 10, size=2)
        x, y = x - x.mean() + start[0], y - y.mean() + start[1]
        r = np.hypot(x, y)
        shrink = np.minimum(1.0, (ARENA_RADIUS_MM - 2.0) / np.maximum(r, 1e-9))
        x, y = x * shrink, y * shrink
        a_mm = 0.62 + 0.02 * np.sin(np.linspace(0, 6, n_frames)) + rng.normal(0, 0.005, n_frames)
        b_mm = 0.24 + rng.normal(0, 0.003, n_frames)
        out["x_mm"].append(x)
        out["y_mm"].append(y)
        out["theta_mm"].append(theta.copy())
        out["a_mm"].append(a_mm)
        out["b_mm"].append(b_mm)
        out["x"].append(center_px[0] + pxpermm * x)
        out["y"].append(center_px[1] + pxpermm * y)
        out["theta"].append(theta)
        out["a"].append(pxpermm * a_mm)
        out["b"].append(pxpermm * b_mm)
        out["dt"].append(np.full(n_frames - 1, dt))
        out["off"].append(np.zeros(1))
        out["pxpermm"].append(np.array([pxpermm]))
        out["walking"].append(state)
    trx: dict[str, Any] = dict(out)
    trx.update(firstframe=np.zeros(n_flies, dtype=np.int64),
               endframe=np.full(n_flies, n_frames - 1, dtype=np.int64),
               nframes=np.full(n_flies, n_frames, dtype=np.int64), ntargets=n_flies,
               timestamps=np.arange(n_frames) * dt, id=np.arange(1, n_flies + 1),
               fps=np.full(n_flies, fps))
    return trx


def file_trx(trx: dict[str, Any], mm: bool = True) -> dict[str, Any]:
    """The trx dict as written to disk (without the generator-only ``walking`` key)."""
    drop = {"walking"} | (set() if mm else {"x_mm", "y_mm", "theta_mm", "a_mm", "b_mm",
                                             "pxpermm"})
    return {k: v for k, v in trx.items() if k not in drop}


def with_nan_gaps(trx: dict[str, Any], seed: int, gaps_per_fly: int = 2, max_gap: int = 8
                  ) -> dict[str, Any]:
    """A copy of ``trx`` with ``gaps_per_fly`` runs of 1..``max_gap`` NaN frames in every
    pose field of each fly (as in raw tracker output; never at the first or last frame)."""
    rng = np.random.default_rng(seed)
    out = {k: ([a.copy() for a in v] if isinstance(v, list) else v) for k, v in trx.items()}
    pose = [k for k in ("x", "y", "theta", "a", "b", "x_mm", "y_mm", "theta_mm", "a_mm", "b_mm")
            if k in out]
    for i in range(out["ntargets"]):
        n = int(out["nframes"][i])
        for _ in range(gaps_per_fly):
            length = int(rng.integers(1, max_gap + 1))
            start = int(rng.integers(1, max(2, n - length - 1)))
            for k in pose:
                out[k][i][start:start + length] = np.nan
    return out


def perframe_features(trx: dict[str, Any], corfrac: tuple[float, float] = (0.3, 0.0)
                      ) -> dict[str, list[np.ndarray]]:
    """The 16 per-frame features (JAABA-style conventions), each of length ``nframes - 1``.

    The centre of rotation is the body-fixed point ``corfrac`` (fractions of ``2a`` along
    the body axis and ``2b`` across it). Element ``i`` describes the step from frame ``i``
    to ``i + 1`` of the trajectory.
    """
    feats: dict[str, list[np.ndarray]] = {f: [] for f in FEATURES}
    for i in range(trx["ntargets"]):
        x, y, th = trx["x_mm"][i], trx["y_mm"][i], trx["theta_mm"][i]
        a, b, dt = trx["a_mm"][i], trx["b_mm"][i], trx["dt"][i]
        c, s = np.cos(th[:-1]), np.sin(th[:-1])
        vx, vy = np.diff(x) / dt, np.diff(y) / dt
        rho1, rho2 = np.full(dt.size, corfrac[0]), np.full(dt.size, corfrac[1])

        def point(k0, k1):
            cc, ss = np.cos(th[k0:k1]), np.sin(th[k0:k1])
            px = x[k0:k1] + rho1 * 2 * a[k0:k1] * cc - rho2 * 2 * b[k0:k1] * ss
            py = y[k0:k1] + rho1 * 2 * a[k0:k1] * ss + rho2 * 2 * b[k0:k1] * cc
            return px, py

        p0, p1 = point(0, -1), point(1, None)
        wx, wy = (p1[0] - p0[0]) / dt, (p1[1] - p0[1]) / dt
        dtheta = wrapped(np.diff(th)) / dt
        phi = np.arctan2(vy, vx)
        yaw = wrapped(phi - th[:-1])
        nose_x, nose_y = x + 2 * a * np.cos(th), y + 2 * a * np.sin(th)
        dv_cor = -wx * s + wy * c
        values = {
            "absdtheta": np.abs(dtheta), "dtheta": dtheta,
            "dphi": np.append(wrapped(np.diff(phi)) / dt[1:], 0.0),
            "du_cor": wx * c + wy * s, "dv_cor": dv_cor, "absdv_cor": np.abs(dv_cor),
            "du_ctr": vx * c + vy * s, "dv_ctr": -vx * s + vy * c,
            "flipdv_cor": dv_cor * np.sign(dtheta), "yaw": yaw,
            "phisideways": np.minimum(np.abs(yaw), np.pi - np.abs(yaw)),
            "velmag": np.hypot(wx, wy), "velmag_ctr": np.hypot(vx, vy),
            "velmag_nose": np.hypot(np.diff(nose_x), np.diff(nose_y)) / dt,
            "corfrac_maj": rho1, "corfrac_min": rho2,
        }
        for f in FEATURES:
            feats[f].append(values[f])
    return feats


def walking_labels(trx: dict[str, Any], names: list[str], seed: int, bouts_per_fly: int = 4
                   ) -> dict[str, Any]:
    """Sparse walking labels (EVALUATORS.md A5 layout) for experiments ``names`` (one trx each,
    given as a list in ``trx``), drawn from the generator's true walking state.

    Each labelled bout is a run of constant state (1 = walk, 0 = not walking), at most
    30 frames, inside frames ``0 .. nframes - 2`` (the feature length).
    """
    rng = np.random.default_rng(seed)
    labels: dict[str, Any] = {"sampleDirs": list(names), "flies": [], "t0s": [], "t1s": [],
                              "labels": []}
    for t in trx:
        flies, t0s, t1s, labs = [], [], [], []
        for i in range(t["ntargets"]):
            walk = t["walking"][i][:-1]
            change = np.flatnonzero(np.diff(walk.astype(int))) + 1
            starts = np.concatenate([[0], change])
            ends = np.concatenate([change, [walk.size]])
            pick = np.sort(rng.choice(starts.size, size=min(bouts_per_fly, starts.size),
                                      replace=False))
            s0, s1 = starts[pick], np.minimum(ends[pick], starts[pick] + 30)
            flies.append(i + 1)
            t0s.append(s0.astype(np.int64))
            t1s.append(s1.astype(np.int64))
            labs.append(walk[s0].astype(np.int64))
        for key, value in (("flies", flies), ("t0s", t0s), ("t1s", t1s), ("labels", labs)):
            labels[key].append(value)
    return labels


def walking_predictions(trx: dict[str, Any]) -> list[np.ndarray]:
    """Perfect per-frame walking predictions (length ``nframes - 1``, values 0/1)."""
    return [w[:-1].astype(np.float64) for w in trx["walking"]]


def swing_stance(trx: dict[str, Any], seed: int) -> np.ndarray:
    """``(n_flies, total_frames, 6)`` int8: 1 stance / 0 swing while walking, -1 otherwise.

    While walking, each leg alternates stance (8-14 frames) and swing (4-7 frames).
    """
    rng = np.random.default_rng(seed)
    n, total = trx["ntargets"], trx["timestamps"].size
    out = np.full((n, total, 6), -1, dtype=np.int8)
    for i in range(n):
        for leg in range(6):
            lengths = np.stack([rng.integers(8, 15, total), rng.integers(4, 8, total)], 1).ravel()
            phase = np.repeat(np.tile([1, 0], total), lengths)[rng.integers(0, 10):][:total]
            walking = trx["walking"][i]
            out[i, trx["firstframe"][i]:trx["endframe"][i] + 1, leg] = np.where(walking, phase, -1)
    return out


def keypoint_annotations(seed: int, n: int = 40, crop: int = 192, hidden: float = 0.05
                         ) -> np.ndarray:
    """``(n, 21, 3)`` COCO-style (x, y, v) annotations in crop pixels; a share ``hidden`` has
    v = 0 (coordinates 0), the rest v = 2."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(crop * 0.25, crop * 0.75, size=(n, N_KEYPOINTS, 2))
    v = np.where(rng.random((n, N_KEYPOINTS)) < hidden, 0, 2)
    xy[v == 0] = 0.0
    return np.concatenate([xy, v[..., None]], axis=2)


STATS_METRICS = ("u_statistic_slow", "p_value_slow", "u_statistic_fast", "p_value_fast",
                 "sig_slow_0.05", "sig_slow_0.01", "sig_slow_0.001",
                 "sig_fast_0.05", "sig_fast_0.01", "sig_fast_0.001")


def stats_rows(p_slow: float, p_fast: float, u_slow: float = 500.0, u_fast: float = 600.0
               ) -> list[tuple[str, str]]:
    """The 10 ``metric,value`` rows of a per-line statistics CSV (booleans from ``p < alpha``)."""
    rows = [("u_statistic_slow", repr(u_slow)), ("p_value_slow", repr(p_slow)),
            ("u_statistic_fast", repr(u_fast)), ("p_value_fast", repr(p_fast))]
    for speed, p in (("slow", p_slow), ("fast", p_fast)):
        for alpha in ("0.05", "0.01", "0.001"):
            rows.append((f"sig_{speed}_{alpha}", str(p < float(alpha))))
    return rows


def write_stats_csv(path: Path, rows: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("metric,value\n" + "".join(f"{m},{v}\n" for m, v in rows))


def write_pickle(path: Path, obj: Any) -> None:
    """Write a test fixture pickle (plain pickle; only ever read back restricted)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)
