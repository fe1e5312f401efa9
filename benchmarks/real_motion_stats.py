"""The motion statistics of a real recording beside the ``freely_moving`` specimen's, the fit of
that level, and the verifiers' numbers on both.

    .venv/bin/python benchmarks/real_motion_stats.py [--data ../shared/data/fdnc-nerve-freely-moving]
        [--draws 4] [--fit] [--fit-tilt] [--seed 20261007] [--score relative|distance]

1. **Statistics** (:func:`stats`, the same function on both tables): from
   ``observations.parquet`` (+ ``detections.parquet``) of the data folder, and from animal 0 of
   the ``freely_moving`` specimen with as many frame numbers as the recording has. See
   :func:`stats` for each statistic's definition.
2. **Fit** (``--fit``): the values of ``MOTION_LEVELS["freely_moving"]`` and
   ``RECORDING_MODELS["freely_moving"]`` computed from the real statistics by the stated rules
   of :func:`fit` (directly) and :func:`fit_simulated` (matched on generated specimens):
   moments and quantiles matched; no verifier score is read. Slow (a few minutes).
   ``--fit-tilt``: only :func:`fit_labelled_tilt` on the level as it is, with its grid.
3. **Verifiers** (``--draws N``, 0 = skip): fixed_distance and registered_distance (their
   defaults) on the real recording and on the specimen, the corruption suite drawn N times
   (seeds seed, seed+1, ...; the specimen's draw k on its animal k): the six corruptions
   pooled, AUROC* and correct coverage at FCR <= 1 %, mean and sd over draws, side by side,
   with the difference.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from scipy.stats import spearmanr

from trackverify.benchmark.dataset import load_dataset
from trackverify.synth.anatomy import head_ganglion_neurons
from trackverify.synth.motion import MOTION_LEVELS
from trackverify.synth.recording import RECORDING_MODELS
from trackverify.synth.specimen import SpecimenConfig, animal_tables
from trackverify.tables import coordinate_columns

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fdnc-nerve-freely-moving"
LEVEL = "freely_moving"
#: Median of the norm of a 3-D standard normal vector (chi with 3 degrees of freedom).
CHI3_MEDIAN = 1.5382


def _in_plane_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Procrustes rotation angle (rad) in the x-y plane taking centred ``a`` onto centred ``b``."""
    a, b = a[:, :2] - a[:, :2].mean(0), b[:, :2] - b[:, :2].mean(0)
    h = a.T @ b
    return float(np.arctan2(h[0, 1] - h[1, 0], h[0, 0] + h[1, 1]))


def stats(observations: pd.DataFrame, detections: pd.DataFrame | None) -> dict:
    """Statistics of one recording (labelled = observation rows; detections = every point).

    - ``spacing_um``: median nearest-neighbour distance of the anchor's (frame 0) labelled
      neurons; ``spacing_all_um``: the same over all frame-0 detections;
    - ``labelled_nn_q01_um`` / ``_q05_``: :func:`within_frame_nn` (every frame);
    - ``frame0_principal_sd_um``: standard deviations of frame 0's detections along their
      principal axes (the body's length, width, height);
    - ``labelled_body_axis_median_p90_um`` / ``all_body_axis_median_p90_um``:
      :func:`body_axis_spread` of frame 0's labelled neurons / of all its detections;
    - ``rho_nn_radius``, ``nearest_radius_rank``: :func:`spacing_radius` (start frame 300);
    - ``step_*``: norm of a labelled neuron's step between consecutive frame numbers (raw;
      minus the frame pair's mean step; minus the best affine map of the earlier frame, least
      squares over the pair's common neurons), median and p90; ``step_over_spacing``;
    - ``anchor_quadratic_residual``: :func:`anchor_quadratic_residual`;
    - ``neighbour_distance_ratio_q01``: :func:`neighbour_distance_ratio`;
    - ``turn_per_frame``: |in-plane angle| of the affine map's polar part, median and p90;
    - ``yaw_sd_rad`` / ``yaw_step_sd_rad``: the in-plane Procrustes angle of each frame onto
      the anchor (common labelled neurons, unwrapped over time) -- its standard deviation over
      frames and that of its change between consecutive frame numbers; its RMS; its turn
      (abs. median over the second half of the frames, and the first frame reaching
      ``1 - 1/e`` of that); its two components (:func:`yaw_components`);
    - ``bend_sd_per_um``: standard deviation over frames of the curvature ``k`` of the least
      squares parabola ``v = a + b u + k u^2 / 2`` through a frame's labelled neurons, turned
      onto the anchor's orientation (``u``, ``v``: the anchor's first two principal axes);
    - ``bend_two_lag_per_um_tau``: :func:`two_lag_process` of the curvature series;
    - ``compression_sd``: standard deviation of ``sd(u)(t) / sd(u)(0) - 1`` (common neurons);
    - ``displacement_from_anchor``: |position - anchor position| of labelled neurons, median, p90;
    - ``gaps``: {gap length: count}; ``frame_numbers``, ``frames_present``;
    - ``detections_per_frame`` (min, median, max), ``labelled_per_frame_median``,
      ``unlabelled_per_frame_median``, ``labelled_share_median``;
    - ``unlabelled_persist`` / ``labelled_persist``: share of a frame's unlabelled (labelled)
      detections that, moved by the frame pair's affine map (fitted on the labelled neurons),
      lie within half a spacing of a detection of the same kind in the next frame number;
    - ``nonpersistent_to_labelled_um``: median distance from an unlabelled detection without
      such a partner to the nearest labelled detection of its frame;
    - ``anchor_missing_share_median``: share of the anchor's neurons absent from a frame;
    - ``tracks``; ``rows_without_anchor_share``: labelled rows whose track has no frame-0 row;
    - ``recentring_max_abs_median_um``: the largest |median| of a frame's detections (any axis).
    """
    coords = coordinate_columns(observations)
    obs = observations.sort_values(["frame", "track"], kind="stable")
    cube = np.stack([obs.pivot(index="frame", columns="track", values=c).to_numpy()
                     for c in coords], -1)  # (frames present, tracks, D)
    frames = np.unique(obs["frame"])
    dets = detections if detections is not None else observations.assign(kind="labelled")
    dets = dets.sort_values(["frame", "detection"], kind="stable")
    anchored = ~np.isnan(cube[0]).any(1)
    anchor = cube[0][anchored]
    spacing = float(np.median(cKDTree(anchor).query(anchor, k=2)[0][:, 1]))
    first = dets[dets["frame"] == frames[0]][coords].to_numpy()
    spacing_all = float(np.median(cKDTree(first).query(first, k=2)[0][:, 1]))
    principal_sd = np.linalg.svd(first - first.mean(0), compute_uv=False) / np.sqrt(len(first))
    by_frame = {f: g for f, g in dets.groupby("frame", sort=True)}
    raw, centred, affine, turns = [], [], [], []
    persist = {"labelled": [], "unlabelled": []}
    lonely = []
    for i in np.flatnonzero(np.diff(frames) == 1):  # consecutive frame numbers only
        a, b = cube[i], cube[i + 1]
        both = ~np.isnan(a).any(1) & ~np.isnan(b).any(1)
        if both.sum() <= len(coords) + 1:
            continue
        step = b[both] - a[both]
        raw.append(np.linalg.norm(step, axis=1))
        centred.append(np.linalg.norm(step - step.mean(0), axis=1))
        design = np.c_[a[both], np.ones(both.sum())]
        coef = np.linalg.lstsq(design, b[both], rcond=None)[0]
        affine.append(np.linalg.norm(b[both] - design @ coef, axis=1))
        u, _, vt = np.linalg.svd(coef[:2, :2])
        rotation = u @ vt
        turns.append(abs(np.degrees(np.arctan2(rotation[0, 1], rotation[0, 0]))))
        now, nxt = by_frame[frames[i]], by_frame[frames[i + 1]]
        for kind in persist:
            here = now[now["kind"] == kind][coords].to_numpy()
            there = nxt[nxt["kind"] == kind][coords].to_numpy()
            if len(here) and len(there):
                moved = np.c_[here, np.ones(len(here))] @ coef
                near = cKDTree(there).query(moved)[0] <= spacing / 2
                persist[kind].append(near)
                if kind == "unlabelled" and (~near).any():
                    labelled_here = now[now["kind"] == "labelled"][coords].to_numpy()
                    lonely.append(cKDTree(labelled_here).query(here[~near])[0])
    yaw, bend, compression = _shape_series(cube, anchored, frames)
    consecutive = np.diff(frames) == 1
    present = ~np.isnan(cube).any(-1)
    displacement = np.linalg.norm(cube[:, anchored] - cube[0, anchored][None], axis=-1)
    counts = dets.groupby("frame")["kind"].value_counts().unstack(fill_value=0)
    total = counts.sum(axis=1).to_numpy()
    labelled = counts.get("labelled", pd.Series(0, index=counts.index)).to_numpy()
    medians = dets.groupby("frame")[coords].median().to_numpy()
    cat = np.concatenate
    q = lambda v: (float(np.median(cat(v))), float(np.quantile(cat(v), 0.9)))  # noqa: E731
    return {
        "anchor_neurons": int(anchored.sum()), "spacing_um": spacing,
        "spacing_all_um": spacing_all,
        "labelled_nn_q01_um": within_frame_nn(dets)[0],
        "labelled_nn_q05_um": within_frame_nn(dets)[1],
        "frame0_principal_sd_um": tuple(float(x) for x in principal_sd),
        "labelled_body_axis_median_p90_um": body_axis_spread(cube[0][anchored]),
        **spacing_radius(observations),
        "all_body_axis_median_p90_um": body_axis_spread(first),
        "step_median_p90_um": q(raw), "step_translation_removed_median_p90_um": q(centred),
        "step_affine_residual_median_p90_um": q(affine),
        "anchor_quadratic_residual_median_p90_um": anchor_quadratic_residual(cube),
        "neighbour_distance_ratio_q01": neighbour_distance_ratio(cube),
        "step_over_spacing": q(raw)[0] / spacing,
        "turn_per_frame_median_p90_deg": (float(np.median(turns)), float(np.quantile(turns, 0.9))),
        "yaw_sd_rad": float(np.std(yaw)),
        "yaw_step_sd_rad": float(np.std(np.diff(yaw)[consecutive])),
        "yaw_rms_from_anchor_rad": float(np.sqrt(np.mean(yaw ** 2))),
        "yaw_turn_rad": float(abs(np.median(yaw[frames >= frames[-1] / 2]))),
        "yaw_turn_frames": float(frames[np.argmax(np.abs(yaw) >= (1 - np.exp(-1)) * abs(
            np.median(yaw[frames >= frames[-1] / 2])))]),
        "yaw_swing_turn_rad_tau": yaw_components(yaw, frames),
        "bend_sd_per_um": float(np.std(bend)), "compression_sd": float(np.std(compression)),
        "bend_two_lag_per_um_tau": two_lag_process(bend, frames),
        "displacement_from_anchor_median_p90_um": (float(np.nanmedian(displacement[1:])),
                                                   float(np.nanquantile(displacement[1:], 0.9))),
        "frame_numbers": int(frames[-1] - frames[0] + 1), "frames_present": int(len(frames)),
        "gaps": {int(k): int(v) for k, v in zip(*np.unique(np.diff(frames) - 1, return_counts=True))
                 if k > 0},
        "detections_per_frame_min_median_max": (int(total.min()), float(np.median(total)),
                                                int(total.max())),
        "labelled_per_frame_median": float(np.median(labelled)),
        "unlabelled_per_frame_median": float(np.median(total - labelled)),
        "labelled_share_median": float(np.median(labelled / total)),
        "labelled_persist": float(cat(persist["labelled"]).mean()) if persist["labelled"] else None,
        "unlabelled_persist": (float(cat(persist["unlabelled"]).mean())
                               if persist["unlabelled"] else None),
        "nonpersistent_to_labelled_um": float(np.median(cat(lonely))) if lonely else None,
        "anchor_missing_share_median": float(np.median(1 - present[:, anchored].mean(1))),
        "tracks": int(cube.shape[1]),
        "rows_without_anchor_share": float(present[:, ~anchored].sum() / present.sum()),
        "recentring_max_abs_median_um": float(np.abs(medians).max()),
    }


def spacing_radius(observations: pd.DataFrame, start: int = 300) -> dict:
    """Where the closest labelled neighbours sit relative to the body's centre, at the first
    frame ``>= start`` (the corruption suite's start frame, where ``nearby_swap`` draws its pair),
    over the anchored neurons labelled there:

    - ``rho_nn_radius``: Spearman correlation of each one's nearest-neighbour distance at that
      frame (among those neurons) with its anchor's distance from the anchor centroid (every
      frame-0 labelled neuron);
    - ``nearest_radius_rank``: share of those neurons whose anchor radius is smaller than that
      of the nearest pair's first member (``track`` order).
    """
    xyz = ["x_um", "y_um", "z_um"]
    frame = observations["frame"].to_numpy()
    anchor = observations[frame == 0].set_index("track")[xyz]
    at = observations[frame == frame[frame >= start].min()].set_index("track")[xyz]
    at = at[at.index.isin(anchor.index)]
    gap = cKDTree(at.to_numpy()).query(at.to_numpy(), 2)[0][:, 1]
    radius = np.linalg.norm(anchor.reindex(at.index).to_numpy() - anchor.to_numpy().mean(0), axis=1)
    first = int(np.argmin(gap))
    return {"rho_nn_radius": float(spearmanr(gap, radius).statistic),
            "nearest_radius_rank": float(np.mean(radius < radius[first]))}


def body_axis_spread(points: np.ndarray) -> tuple[float, float]:
    """Median and p90 of ``|u - median(u)|``, ``u`` the points' coordinate along their first
    principal axis (how far along the body the points reach)."""
    centred = points - points.mean(0)
    u = centred @ np.linalg.svd(centred, full_matrices=False)[2][0]
    spread = np.abs(u - np.median(u))
    return float(np.median(spread)), float(np.quantile(spread, 0.9))


def within_frame_nn(detections: pd.DataFrame) -> tuple[float, float]:
    """1 % and 5 % quantiles, over labelled detections of every frame, of the distance to the
    nearest other labelled detection of the same frame."""
    d = detections[detections["kind"] == "labelled"]
    xyz = d[["x_um", "y_um", "z_um"]].to_numpy()
    span = np.ptp(xyz, axis=0).max() + 1.0
    points = xyz + np.c_[d["frame"].to_numpy() * span, np.zeros((len(d), 2))]
    distance = cKDTree(points).query(points, k=2)[0][:, 1]
    return float(np.quantile(distance, 0.01)), float(np.quantile(distance, 0.05))


def neighbour_distance_ratio(cube: np.ndarray) -> float:
    """1 % quantile over frames t > 0 and anchor neurons of ``d(t) / d(0)``, ``d`` the distance
    between a neuron and its nearest anchor neighbour (how close neighbours come)."""
    anchor = cube[0]
    index = np.flatnonzero(~np.isnan(anchor).any(1))
    neighbour = index[cKDTree(anchor[index]).query(anchor[index], k=2)[1][:, 1]]
    d0 = np.linalg.norm(anchor[index] - anchor[neighbour], axis=1)
    d = np.linalg.norm(cube[1:, index] - cube[1:, neighbour], axis=-1)
    return float(np.nanquantile(d / d0, 0.01))


def anchor_quadratic_residual(cube: np.ndarray) -> tuple[float, float]:
    """Median and p90 over frames t > 0 and neurons of |position - Q(anchor position)|, ``Q``
    the least-squares quadratic map (affine + the 6 second-order monomials) of the anchor
    onto frame t over their common neurons: the deformation no smooth map explains."""
    out = []
    for t in range(1, len(cube)):
        a, b = cube[0], cube[t]
        ok = ~np.isnan(a).any(1) & ~np.isnan(b).any(1)
        x = a[ok]
        design = np.c_[x, np.ones(len(x)), x ** 2, x[:, [0]] * x[:, [1]], x[:, [1]] * x[:, [2]],
                       x[:, [0]] * x[:, [2]]]
        out.append(np.linalg.norm(b[ok] - design @ np.linalg.lstsq(design, b[ok], rcond=None)[0],
                                  axis=1))
    out = np.concatenate(out)
    return float(np.median(out)), float(np.quantile(out, 0.9))


def _shape_series(cube: np.ndarray, anchored: np.ndarray, frames: np.ndarray):
    """Per present frame: in-plane yaw onto the anchor (unwrapped), the parabola's curvature
    ``k`` in the anchor's orientation, and the body-axis compression (see :func:`stats`)."""
    anchor = cube[0, anchored]
    centre0 = anchor[:, :2].mean(0)
    _, _, vt = np.linalg.svd(anchor[:, :2] - centre0)
    yaw, bend, compression = [], [], []
    for t in range(len(frames)):
        both = ~np.isnan(cube[t, anchored]).any(1)
        a, b = anchor[both], cube[t, anchored][both]
        theta = _in_plane_angle(a, b)
        c, s = np.cos(-theta), np.sin(-theta)  # b turned back onto the anchor's orientation
        plane = (b[:, :2] - b[:, :2].mean(0)) @ np.array([[c, s], [-s, c]])
        u, v = (plane @ vt.T).T
        bend.append(2 * np.polyfit(u, v, 2)[0])
        u0 = (a[:, :2] - a[:, :2].mean(0)) @ vt[0]
        compression.append(u.std() / u0.std() - 1)
        yaw.append(theta)
    return np.unwrap(np.asarray(yaw)), np.asarray(bend), np.asarray(compression)


def yaw_components(yaw: np.ndarray, frames: np.ndarray, max_lag_share: float = 1 / 3):
    """``(swing_rad, swing_tau, turn_rad, turn_tau)``: the two Gaussian-filtered processes
    whose summed variogram ``A_s^2 (1 - exp(-L^2 / (4 tau_s^2))) + A_t^2 (1 - exp(-L^2 /
    (4 tau_t^2)))`` fits the yaw's empirical variogram ``gamma(L) = mean((yaw_j - yaw_i)^2) / 2``
    over frame pairs ``L`` frame numbers apart, ``L`` = the distinct integers of a geometric
    grid from 1 to ``max_lag_share x frame numbers`` (40 points: every scale weighs alike;
    least squares on log gamma; the swing is the component with the shorter tau). The
    swing's amplitude and tau are then solved exactly from ``gamma(1)`` and ``gamma(2)``
    (:func:`two_lag_process`: the step the registration sees); the sway keeps the fit's
    long component."""
    from scipy.optimize import least_squares

    top = max(3, int((frames[-1] - frames[0]) * max_lag_share))
    lags = np.unique(np.round(np.geomspace(1, top, 40)).astype(int))
    diff = frames[None, :] - frames[:, None]
    gamma = np.array([np.mean((yaw[j] - yaw[i]) ** 2) / 2 if len(i) else np.nan
                      for i, j in (np.nonzero(diff == lag) for lag in lags)])
    ok = np.isfinite(gamma) & (gamma > 0)
    lags, gamma = lags[ok], gamma[ok]

    def model(p):
        a_s, t_s, a_t, t_t = np.exp(p)
        return (a_s ** 2 * (1 - np.exp(-lags ** 2 / (4 * t_s ** 2)))
                + a_t ** 2 * (1 - np.exp(-lags ** 2 / (4 * t_t ** 2))))

    start = np.log([0.1, 3.0, 1.0, 100.0])
    p = least_squares(lambda p: np.log(model(p)) - np.log(gamma), start,
                      bounds=(np.log([1e-4, 0.3, 1e-4, 0.3]), np.log([10, 5e3, 10, 5e3]))).x
    a_s, t_s, a_t, t_t = (float(v) for v in np.exp(p))
    if t_s > t_t:
        a_s, t_s, a_t, t_t = a_t, t_t, a_s, t_s
    swing = two_lag_process(yaw, frames)
    return (*swing, a_t, t_t) if swing is not None else (a_s, t_s, a_t, t_t)


def two_lag_process(series: np.ndarray, frames: np.ndarray) -> tuple[float, float] | None:
    """``(A, tau)`` of the Gaussian-filtered process whose variogram ``A^2 (1 - exp(-L^2 /
    (4 tau^2)))`` equals the series' empirical one at ``L = 1`` and ``2`` frame numbers
    (``gamma(2) / gamma(1)`` fixes tau); None when that ratio is outside (1, 4)."""
    from scipy.optimize import brentq

    diff = frames[None, :] - frames[:, None]
    g1, g2 = (np.mean((series[j] - series[i]) ** 2) / 2
              for i, j in (np.nonzero(diff == lag) for lag in (1, 2)))
    if not 1.0 < g2 / g1 < 4.0:
        return None
    x = brentq(lambda x: (1 - np.exp(-4 * x)) / (1 - np.exp(-x)) - g2 / g1, 1e-8, 50.0)
    return float(np.sqrt(g1 / (1 - np.exp(-x)))), float(1 / (2 * np.sqrt(x)))


def fit(real: dict) -> dict:
    """The ``freely_moving`` values computed directly from the real statistics (the rest:
    :func:`fit_simulated`):

    - ``axis_scale`` = real frame-0 principal sd / the c302 head model's principal sd (per axis);
    - ``rotation_rad``, ``tau_frames`` (head swings; bending and compression share the tau) =
      the short component of the yaw's two-component variogram fit (:func:`yaw_components`);
    - ``turn_rad`` = |median yaw over the second half of the frames| (the pose the worm keeps
      away from its anchor); ``turn_frames`` = the first frame number whose |yaw| reaches
      ``(1 - 1/e) turn_rad``; ``sway_rad``, ``sway_tau_frames`` = the variogram's long component;
    - ``bend_per_um`` = ``bend_sd_per_um``; ``compression`` = ``compression_sd``;
      ``translation_um`` = 0 (re-centring on each volume removes any lab-frame drift);
    - ``miss_rate`` = ``anchor_missing_share_median``;
    - persistent unlabelled per frame = unlabelled median x unlabelled_persist /
      labelled_persist (the test's sensitivity read on labelled neurons), / (1 - miss_rate);
      ``spurious_per_frame`` = the rest of the unlabelled median;
    - labelled neurons ``L`` = labelled per frame median / (1 - miss_rate); ``labelled_share``
      = L / (L + persistent unlabelled); ``detected_share`` = (L + persistent unlabelled) /
      189; ``anchor_absent_share`` = 1 - anchor neurons / L (identities without a frame-0 row);
    - ``spurious_offset_um`` = ``nonpersistent_to_labelled_um / 1.5382``;
    - ``gap_lengths`` = the gaps' length shares (``gap_rate``: :func:`fit_simulated`).
    """
    model = head_ganglion_neurons()[["x_um", "y_um", "z_um"]].to_numpy()
    model_sd = np.linalg.svd(model - model.mean(0), compute_uv=False) / np.sqrt(len(model))
    swing, tau, sway, sway_tau = real["yaw_swing_turn_rad_tau"]
    miss = real["anchor_missing_share_median"]
    unlabelled = real["unlabelled_per_frame_median"]
    persistent = unlabelled * min(real["unlabelled_persist"] / real["labelled_persist"], 1.0)
    labelled = real["labelled_per_frame_median"] / (1 - miss)
    neurons = labelled + persistent / (1 - miss)
    gaps = real["gaps"]
    lengths = np.zeros(max(gaps)) if gaps else np.zeros(1)
    for k, v in gaps.items():
        lengths[k - 1] = v
    return {
        "translation_um": 0.0, "rotation_rad": swing,
        "bend_per_um": real["bend_sd_per_um"], "compression": real["compression_sd"],
        "tau_frames": tau, "turn_rad": real["yaw_turn_rad"], "turn_frames": real["yaw_turn_frames"],
        "sway_rad": sway, "sway_tau_frames": sway_tau,
        "axis_scale": tuple(float(x) for x in
                            np.asarray(real["frame0_principal_sd_um"]) / model_sd),
        "detected_share": neurons / len(model),
        "labelled_share": labelled / neurons,
        "anchor_absent_share": 1 - real["anchor_neurons"] / labelled,
        "miss_rate": miss, "spurious_per_frame": unlabelled - persistent,
        "spurious_offset_um": (real["nonpersistent_to_labelled_um"] or 0.0) / CHI3_MEDIAN,
        "gap_lengths": tuple(float(x) for x in lengths / max(lengths.sum(), 1)),
    }


def _noise_fit(target: tuple[float, float], deformation: np.ndarray, samples: int = 20000):
    """``(noise, share, outlier_noise)`` matching the residual's (median, p90)
    (:func:`fit_simulated`); ``deformation``: residual vectors without localisation noise."""
    rng = np.random.Generator(np.random.PCG64(0))
    z = rng.normal(size=(4, samples, 3))  # two frames' noise, two frames' outliers
    own = deformation[rng.integers(len(deformation), size=samples)]
    u = rng.random((2, samples))
    best, best_err = None, np.inf
    for share in (0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2):
        for outlier in (0.0,) if share == 0 else np.arange(1.0, 10.01, 0.5):
            extra = (z[2] * (u[0] < share)[:, None] - z[3] * (u[1] < share)[:, None]) * outlier
            for noise in np.arange(0.3, 1.5, 0.01):
                r = np.linalg.norm((z[0] - z[1]) * noise + extra + own, axis=1)
                med, p90 = np.quantile(r, [0.5, 0.9])
                err = ((med - target[0]) / target[0]) ** 2 + ((p90 - target[1]) / target[1]) ** 2
                if err < best_err:
                    best, best_err = (float(noise), share, float(outlier)), err
    return best


def fit_simulated(real: dict, values: dict, animals: int = 8) -> dict:
    """The values fitted on generated specimens (the others as :func:`fit` gives them):

    - ``detected_spacing_um``, then ``labelled_spacing_um``: on a grid of 0.25 um, the hard core
      whose specimen anchors (animals 0-7) have the median nearest-neighbour spacing of all
      frame-0 detections (then of the labelled ones) nearest the real one;
    - ``labelled_spacing_tilt``: :func:`fit_labelled_tilt` (with the values fitted so far;
      printed, not carried into the later steps: the level does not use it);
    - ``labelled_axis_width_um``, ``labelled_axis_power`` (which detected neurons carry an
      identity, along the body): on a grid (power 2, 4, 8, 16; width 20-70 um by 2.5), the
      pair whose specimen anchors (animals 0-7) have the real frame-0 labelled neurons'
      :func:`body_axis_spread` (median and p90; least summed relative squared error): the
      real annotation labels the ends of the head less completely than its middle, which
      sets the upper tail of the displacement from the anchor;
    - ``gap_rate``: on a grid of 0.001, the rate whose gap process (frames never missing at 0
      and multiples of 10; 200 draws of the real number of frame numbers) has the real mean
      number of gaps;
    - ``merge_distance_um``: on a grid of 0.25 um (0-4 um), the distance whose specimen
      (animals 0-1) has the real 1 % quantile of a labelled detection's distance to the
      nearest labelled detection of its frame (``labelled_nn_q01_um``) nearest;
    - ``neuron_jitter_um``, ``jitter_length_um`` (``jitter_correlation`` 0.997): on a grid
      (1-2 um by 0.25; 0, 3, 4, 5, 6, 8 um), the pair whose specimens (animals 0-1) have the
      real anchor-quadratic residual's median and p90 and ``neighbour_distance_ratio_q01``
      (least summed relative squared error over the three);
    - ``localisation_noise_um``, ``outlier_share``, ``outlier_noise_um``: the real affine
      residual's (median, p90) read as those of the norm of the specimen's own deformation
      residual (animal 0 generated without localisation noise: jitter, bending changes) plus
      a step between two frames' localisation errors (each Gaussian ``noise`` per axis, plus
      with probability ``share`` an extra Gaussian ``outlier_noise``): the triple on a grid
      (share 0 included) nearest the real pair (relative squared error; Monte Carlo, fixed seed).
    """
    import dataclasses

    from trackverify.synth.specimen import recorded_animal

    level = dataclasses.replace(MOTION_LEVELS[LEVEL], **{k: v for k, v in values.items()
                                                       if hasattr(MOTION_LEVELS[LEVEL], k)})
    model = dataclasses.replace(RECORDING_MODELS[LEVEL], **{
        k: v for k, v in values.items() if hasattr(RECORDING_MODELS[LEVEL], k)})
    config = SpecimenConfig(motion=LEVEL, frames=2)

    def spacing(model, labelled_only):
        out = []
        for index in range(animals):
            obs, det = recorded_animal(config, index, level, model)
            points = (obs if labelled_only else det).query("frame == 0")[["x_um", "y_um", "z_um"]]
            points = points.to_numpy()
            out.append(np.median(cKDTree(points).query(points, k=2)[0][:, 1]))
        return float(np.mean(out))

    grid = np.arange(0.0, 10.01, 0.25)
    for key, target, labelled_only in (("detected_spacing_um", real["spacing_all_um"], False),
                                       ("labelled_spacing_um", real["spacing_um"], True)):
        best = min(grid, key=lambda r: abs(spacing(dataclasses.replace(model, **{key: r}),
                                                   labelled_only) - target))
        model = dataclasses.replace(model, **{key: float(best)})
        values[key] = float(best)
    # computed, not used: the level keeps uniform labelling (docs/reference/specimen.md), so the later
    # steps are fitted without the tilt
    values["labelled_spacing_tilt"] = fit_labelled_tilt(real["rho_nn_radius"],
                                                        real["frame_numbers"], level, model,
                                                        animals)[0]
    reach = np.asarray(real["labelled_body_axis_median_p90_um"])

    def labelled_reach(width, power):
        candidate = dataclasses.replace(model, labelled_axis_width_um=width,
                                        labelled_axis_power=power)
        spread = [body_axis_spread(recorded_animal(config, index, level, candidate)[0]
                                   .query("frame == 0")[["x_um", "y_um", "z_um"]].to_numpy())
                  for index in range(animals)]
        return float(np.sum((np.mean(spread, axis=0) / reach - 1) ** 2))

    width, power = min(((float(w), p) for p in (2.0, 4.0, 8.0, 16.0)
                        for w in np.arange(20.0, 70.01, 2.5)), key=lambda p: labelled_reach(*p))
    model = dataclasses.replace(model, labelled_axis_width_um=width, labelled_axis_power=power)
    values.update(labelled_axis_width_um=width, labelled_axis_power=power)
    full = SpecimenConfig(motion=LEVEL, frames=real["frame_numbers"])
    target = np.asarray(real["anchor_quadratic_residual_median_p90_um"])
    from trackverify.synth.recording import missing_frames

    def gap_count(rate):
        rng = np.random.Generator(np.random.PCG64(0))
        candidate = dataclasses.replace(model, gap_rate=rate)
        return np.mean([np.count_nonzero(np.diff(np.r_[0, missing_frames(
            rng, full.frames, candidate).astype(int)]) == 1) for _ in range(200)])

    rate = min(np.arange(0.05, 0.2001, 0.001), key=lambda r: abs(gap_count(r)
                                                               - sum(real["gaps"].values())))
    model = dataclasses.replace(model, gap_rate=round(float(rate), 3))
    values["gap_rate"] = round(float(rate), 3)

    def floor(radius):
        candidate = dataclasses.replace(model, merge_distance_um=radius)
        return np.mean([within_frame_nn(recorded_animal(full, i, level, candidate)[1])[0]
                        for i in range(2)])

    radius = min(np.arange(0.0, 4.01, 0.25),
                 key=lambda r: abs(floor(r) - real["labelled_nn_q01_um"]))
    model = dataclasses.replace(model, merge_distance_um=float(radius))
    values["merge_distance_um"] = float(radius)

    target = np.r_[target, real["neighbour_distance_ratio_q01"]]

    def wander(jitter, length):
        candidate = dataclasses.replace(model, neuron_jitter_um=jitter, jitter_length_um=length,
                                        jitter_correlation=0.997)
        measured = []
        for index in range(2):
            cube = _cube(recorded_animal(full, index, level, candidate)[0])
            measured.append([*anchor_quadratic_residual(cube), neighbour_distance_ratio(cube)])
        return float(np.sum((np.mean(measured, axis=0) / target - 1) ** 2))

    jitter, length = min(((j, length) for j in np.arange(1.0, 2.01, 0.25)
                          for length in (0.0, 3.0, 4.0, 5.0, 6.0, 8.0)), key=lambda p: wander(*p))
    model = dataclasses.replace(model, neuron_jitter_um=float(jitter), jitter_length_um=length,
                                jitter_correlation=0.997)
    values.update(neuron_jitter_um=float(jitter), jitter_length_um=length,
                  jitter_correlation=0.997)
    quiet = dataclasses.replace(model, localisation_noise_um=0.0, outlier_share=0.0)
    obs, _ = recorded_animal(full, 0, level, quiet)
    noise, share, outlier = _noise_fit(real["step_affine_residual_median_p90_um"],
                                       affine_residuals(obs))
    values.update(localisation_noise_um=noise, outlier_share=share, outlier_noise_um=outlier)
    return values


def fit_labelled_tilt(target: float, frames: int, level=None, model=None, animals: int = 8,
                      grid=tuple(range(0, 65, 4))) -> tuple[float, dict]:
    """``labelled_spacing_tilt`` (beta of ``RecordingModel``, which detected neurons carry an
    identity): on ``grid``, the value whose specimen animals ``0..animals-1`` (``frames`` frame
    numbers, the default seed; ``level`` / ``model`` as given, else the level's) have the mean
    :func:`spacing_radius` ``rho_nn_radius`` nearest ``target`` (the real one). Returns
    ``(beta, {beta: per-animal statistics})``: each animal's ``rho_nn_radius``,
    ``nearest_radius_rank``, frame-0 labelled spacing (median nearest-neighbour distance, um)
    and :func:`body_axis_spread` of the labelled anchors (median, p90)."""
    import dataclasses

    from trackverify.synth.specimen import recorded_animal

    model = RECORDING_MODELS[LEVEL] if model is None else model
    config = SpecimenConfig(motion=LEVEL, frames=frames)
    measured = {}
    for beta in grid:
        candidate = dataclasses.replace(model, labelled_spacing_tilt=float(beta))
        rows = []
        for index in range(animals):
            obs = recorded_animal(config, index, level, candidate)[0]
            anchor = obs[obs["frame"] == 0][["x_um", "y_um", "z_um"]].to_numpy()
            nearest = cKDTree(anchor).query(anchor, k=2)[0][:, 1]
            rows.append({**spacing_radius(obs), "spacing_um": float(np.median(nearest)),
                         "reach_median_um": body_axis_spread(anchor)[0],
                         "reach_p90_um": body_axis_spread(anchor)[1]})
        measured[float(beta)] = pd.DataFrame(rows)
    best = min(measured, key=lambda b: abs(measured[b]["rho_nn_radius"].mean() - target))
    return best, measured


def _cube(observations: pd.DataFrame) -> np.ndarray:
    """(frames present, tracks, 3) positions (NaN where a track has no row)."""
    obs = observations.sort_values(["frame", "track"], kind="stable")
    return np.stack([obs.pivot(index="frame", columns="track", values=c).to_numpy()
                     for c in ("x_um", "y_um", "z_um")], -1)


def affine_residuals(observations: pd.DataFrame) -> np.ndarray:
    """(k, 3) residual vectors of the best affine map between consecutive frame numbers."""
    cube = _cube(observations)
    frames = np.unique(observations["frame"])
    out = []
    for i in np.flatnonzero(np.diff(frames) == 1):
        a, b = cube[i], cube[i + 1]
        both = ~np.isnan(a).any(1) & ~np.isnan(b).any(1)
        design = np.c_[a[both], np.ones(both.sum())]
        out.append(b[both] - design @ np.linalg.lstsq(design, b[both], rcond=None)[0])
    return np.concatenate(out)


def verifier_numbers(tables, draws: int, seed: int, score: str | None = None,
                     merge_k: float | None = None) -> dict:
    """Per verifier: six corruptions pooled, AUROC* and cov@1 %, mean over ``draws`` draws
    (``score``: registered_distance's score, ``merge_k`` its merged-anchor factor; None = its
    default).

    ``tables(k)`` = (observations, detections) of draw ``k``: the same recording every draw
    for the real data, animal ``k`` for the specimen (its expectation, not one animal's)."""
    from threadpoolctl import threadpool_limits

    from trackverify.benchmark.evidence import repeated_draws
    from trackverify.verifiers.fixed_distance import FixedDistance
    from trackverify.verifiers.registered_distance import RegisteredDistance

    out = {}
    with threadpool_limits(1):
        options = {key: value for key, value in (("score", score), ("merge_k", merge_k))
                   if value is not None}
        for name, make in ((FixedDistance.name, FixedDistance),
                           (RegisteredDistance.name, lambda: RegisteredDistance(**options))):
            per_draw = [repeated_draws(*tables(k), make(), 1, "r", seed=seed + k)["per_draw"][0]
                        for k in range(draws)]
            out[name] = {m: [d["pooled"][m] for d in per_draw]
                              for m in ("auroc_abst", "cov_at_fcr1")}
    return out


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--draws", type=int, default=4, help="draws of the suite (0 = skip)")
    parser.add_argument("--seed", type=int, default=20261007)
    parser.add_argument("--fit", action="store_true", help="print the fitted level's values")
    parser.add_argument("--fit-tilt", action="store_true",
                        help="fit only labelled_spacing_tilt on the level as it is (its grid)")
    parser.add_argument("--score", choices=("relative", "distance"), default=None,
                        help="registered_distance's score [its default]")
    parser.add_argument("--merge-k", type=float, default=None,
                        help="registered_distance's merged-anchor factor m, 0 = off [its default]")
    args = parser.parse_args()
    (name, source), = load_dataset(args.data).sources()
    real_obs, real_det = source.load(), source.load_detections()
    real = stats(real_obs, real_det)
    config = SpecimenConfig(motion=LEVEL, frames=real["frame_numbers"], seed=args.seed)
    spec_obs, spec_det = animal_tables(config, 0)
    spec = stats(spec_obs, spec_det)
    print(f"statistic | real ({name}) | specimen {LEVEL} (animal 0, {config.frames} frame numbers)")
    print("---|---|---")
    for key in real:
        print(f"{key} | {_show(real[key])} | {_show(spec[key])}")
    if args.fit:
        level, model = MOTION_LEVELS[LEVEL], RECORDING_MODELS[LEVEL]
        print("\nfitted (rule: benchmarks/real_motion_stats.py fit()) | value | in the level now")
        print("---|---|---")
        for key, value in fit_simulated(real, fit(real)).items():
            now = getattr(level, key, None) if hasattr(level, key) else getattr(model, key)
            print(f"{key} | {_show(value)} | {_show(now)}")
    if args.fit_tilt:
        now = RECORDING_MODELS[LEVEL].labelled_spacing_tilt
        beta, measured = fit_labelled_tilt(real["rho_nn_radius"], config.frames)
        print(f"\nlabelled_spacing_tilt: animals 0-7 (mean, sd over animals) against the real "
              f"rho_nn_radius {real['rho_nn_radius']:.3f}, spacing {real['spacing_um']:.3f} um, "
              f"reach {_show(real['labelled_body_axis_median_p90_um'])} um")
        print("beta | rho_nn_radius | nearest_radius_rank | spacing_um | reach median | reach p90")
        print("---|---|---|---|---|---")
        for b, table in measured.items():
            print(f"{b:g} | " + " | ".join(f"{table[c].mean():.3f} ({table[c].std():.3f})"
                                           for c in table.columns))
        print(f"fitted {beta:g} (in the level now: {now:g})")
    if args.draws > 0:
        start = time.perf_counter()
        r = verifier_numbers(lambda k: (real_obs, real_det), args.draws, args.seed, args.score,
                             args.merge_k)
        s = verifier_numbers(lambda k: animal_tables(config, k), args.draws, args.seed, args.score,
                             args.merge_k)
        print(f"\nsix corruptions pooled, mean (sd) over {args.draws} draws (suite seed "
              f"{args.seed}+k; specimen animal k) | real | specimen | specimen - real")
        print("---|---|---|---")
        for verifier in r:
            for metric, label in (("auroc_abst", "AUROC*"), ("cov_at_fcr1", "cov@FCR<=1%")):
                a, b = np.asarray(r[verifier][metric]), np.asarray(s[verifier][metric])
                print(f"{verifier} {label} | {a.mean():.3f} ({a.std(ddof=1):.3f}) | "
                      f"{b.mean():.3f} ({b.std(ddof=1):.3f}) | {b.mean() - a.mean():+.3f}")
        for side, numbers in (("real", r), ("specimen", s)):
            for verifier, metrics in numbers.items():
                print(f"per draw, {side} {verifier}: AUROC* "
                      + " ".join(f"{v:.3f}" for v in metrics["auroc_abst"]) + "; cov@1% "
                      + " ".join(f"{v:.3f}" for v in metrics["cov_at_fcr1"]))
        print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
