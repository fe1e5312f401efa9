"""Deformation of the specimen over time.

Positions at frame ``t`` are the animal's anatomy (centred on its centroid, body axis = y)
passed through, in order:

1. compression along the body axis by ``1 + c(t)`` (x and z widen by ``1 - c(t)/2``);
2. bending: lateral (x) and dorso-ventral (z) offsets ``k(t) * y**2 / 2``;
3. rotation about the dorso-ventral axis by ``theta(t)`` (plus, where the level has one, a
   persistent turn away from the anchor pose and a slow sway) and a smaller roll about y;
4. rigid translation ``d(t)``;
5. per-neuron jitter (a smooth AR(1) process per neuron and axis);
6. localisation noise (independent per observation).

Every time signal is a smooth random process (Gaussian-filtered white noise with
correlation time ``tau`` frames, unit standard deviation) minus its value at frame 0, so
the anchor frame is the undeformed pose. Each motion level fixes the amplitudes and
``tau``; the levels are defined, and tested, by the displacement of neurons from their
frame-0 position (see :data:`MOTION_LEVELS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.signal import lfilter


@dataclass(frozen=True)
class MotionLevel:
    """Amplitudes (standard deviations) of the deformation signals of one motion level."""

    name: str
    translation_um: float  # per in-plane axis; z gets a third of it
    rotation_rad: float  # in-plane rotation; the roll about y gets a quarter of it
    bend_per_um: float  # curvature k of the bend, 1/um
    compression: float  # relative length change c
    tau_frames: float  # correlation time of every signal
    promise: str  # the displacement it is built to give, in words
    #: A persistent in-plane turn away from the anchor pose (None: none): the yaw gains
    #: ``+-turn_rad * (1 - exp(-t / turn_frames))`` (sign drawn per animal) plus a slow sway
    #: (a smooth process of amplitude ``sway_rad``, correlation time ``sway_tau_frames``). The
    #: real worm turns by about half a circle soon after its anchor frame and never returns.
    turn_rad: float | None = None
    turn_frames: float | None = None
    sway_rad: float | None = None
    sway_tau_frames: float | None = None


MOTION_LEVELS: dict[str, MotionLevel] = {
    level.name: level for level in (
        MotionLevel("still", 0.35, 0.004, 0.0001, 0.003, 150.0,
                    "median displacement from frame 0 under 2.5 um, 99 % under 5 um"),
        MotionLevel("moderate", 4.0, 0.05, 0.002, 0.02, 150.0,
                    "median displacement 5-15 um"),
        MotionLevel("free", 16.0, 0.25, 0.012, 0.06, 120.0,
                    "median displacement 20-50 um with strong bending"),
        MotionLevel("fast", 16.0, 0.25, 0.012, 0.06, 8.0,
                    "as free, with a frame-to-frame step approaching the neuron spacing"),
        # Fitted to a real recording (benchmarks/real_motion_stats.py --fit; docs/reference/specimen.md);
        # seen through trackverify.synth.recording.RECORDING_MODELS["freely_moving"].
        MotionLevel("freely_moving", 0.0, 0.1995, 0.00382, 0.0337, 1.03,
                    "the real recording's head swings, turn, bending and step / spacing "
                    "ratio (fitted)", turn_rad=3.78, turn_frames=25.0, sway_rad=0.579,
                    sway_tau_frames=20.4),
    )
}


def smooth_signal(rng: np.random.Generator, frames: int, tau: float, dims: int = 1) -> np.ndarray:
    """A (frames, dims) smooth random process with unit std, zero at frame 0."""
    pad = int(4 * tau) + 1
    noise = rng.normal(size=(frames + 2 * pad, dims))
    smooth = gaussian_filter1d(noise, sigma=tau, axis=0, mode="wrap")[pad:pad + frames]
    smooth /= smooth.std(axis=0, keepdims=True) + 1e-12
    return smooth - smooth[:1]


def deform(anatomy: np.ndarray, level: MotionLevel, frames: int, rng: np.random.Generator,
           neuron_jitter_um: float, localisation_noise_um: float,
           jitter_correlation: float = 0.9, jitter_length_um: float = 0.0) -> np.ndarray:
    """Positions of every neuron in every frame, shape (frames, neurons, 3), in um.

    ``jitter_length_um`` > 0 makes the jitter spatially smooth: each neuron's process is the
    kernel-weighted sum of all neurons' independent ones, weights ``exp(-r^2 / (2 l^2))``
    over anatomy distances ``r``, normalised to unit sum of squares (unit variance kept)."""
    centre = anatomy.mean(axis=0)
    body = anatomy - centre
    tau = level.tau_frames
    translation = smooth_signal(rng, frames, tau, 3) * level.translation_um * np.array([1, 1, 1 / 3])
    yaw, roll = (smooth_signal(rng, frames, tau, 2) * level.rotation_rad * np.array([1, 0.25])).T
    bend_x, bend_z = (smooth_signal(rng, frames, tau, 2) * level.bend_per_um).T
    compression = smooth_signal(rng, frames, tau, 1)[:, 0] * level.compression
    if level.turn_rad is not None:  # drawn last: the levels without a turn keep their draws
        sign = rng.choice([-1.0, 1.0])
        ramp = 1 - np.exp(-np.arange(frames) / level.turn_frames)
        sway = smooth_signal(rng, frames, level.sway_tau_frames, 1)[:, 0] * level.sway_rad
        yaw = yaw + sign * level.turn_rad * ramp + sway

    x, y, z = (body[None, :, i] for i in range(3))
    y = y * (1 + compression[:, None])
    x = x * (1 - compression[:, None] / 2) + bend_x[:, None] * y ** 2 / 2
    z = z * (1 - compression[:, None] / 2) + bend_z[:, None] * y ** 2 / 2
    cy, sy = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    x, y = cy * x - sy * y, sy * x + cy * y
    cr, sr = np.cos(roll)[:, None], np.sin(roll)[:, None]
    x, z = cr * x - sr * z, sr * x + cr * z
    positions = np.stack([x, y, z], axis=-1) + centre + translation[:, None, :]
    jitter = _ar1(rng, positions.shape, jitter_correlation)
    if jitter_length_um > 0:
        r2 = ((anatomy[:, None, :] - anatomy[None, :, :]) ** 2).sum(-1)
        kernel = np.exp(-r2 / (2 * jitter_length_um ** 2))
        kernel /= np.sqrt((kernel ** 2).sum(axis=1, keepdims=True))
        jitter = np.einsum("ij,fjd->fid", kernel, jitter)
    positions += jitter * neuron_jitter_um
    noise = rng.normal(0.0, localisation_noise_um, size=positions.shape)
    noise[0] = 0.0  # the anchor frame is the curated reference pose
    return positions + noise


def _ar1(rng: np.random.Generator, shape: tuple[int, ...], rho: float) -> np.ndarray:
    """AR(1) processes ``x_t = rho x_(t-1) + e_t`` along axis 0, unit stationary std, 0 at frame 0."""
    innovations = rng.normal(size=shape) * np.sqrt(1 - rho ** 2)
    innovations[0] = 0.0
    return lfilter([1.0], [1.0, -rho], innovations, axis=0)
