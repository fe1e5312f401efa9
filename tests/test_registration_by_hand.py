"""registered_distance's identity-free registration by hand: CPD's E-step (the posterior) and
M-step, its stopping rule and iteration cap, the low-rank kernel, the rotation, the offset
vote and the global pose with its tie rules, the wiring of the sequential fit (starts, scales,
outlier weight, gaps, units), and the calibration of the ambiguity band.

Expected values are written out from the formulas of the module docstring and of Myronenko &
Song (2010) (a plain dense CPD step below, without the low-rank Woodbury solve), never taken
from the function under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trackverify.verifiers.registered_distance as rd
from trackverify.verifiers.registered_distance import (
    Registration, RegisteredDistance, RegistrationSettings, calibrate_ambiguity_k,
    fit_registration, global_pose)

SQRT2 = np.sqrt(2.0)


def gaussian_posterior(y, x, sigma2, w):
    """CPD's E-step written out: ``P[i, j] = e_ij / (sum_k e_kj + c)``, ``e_ij =
    exp(-|y_i - x_j|^2 / (2 sigma^2))``, ``c = (2 pi sigma^2)^(D/2) w / (1 - w) n / m``."""
    n, dims = y.shape
    e = np.exp(-((y[:, None, :] - x[None, :, :]) ** 2).sum(-1) / (2 * sigma2))
    c = (2 * np.pi * sigma2) ** (dims / 2) * w / (1 - w) * n / len(x)
    return e / (e.sum(axis=0) + c)


def dense_cpd_step(a, x, moved, field, sigma2, lam, w, gram, fit_affine=True):
    """One EM step of CPD with ``T = a B^T + t + G W``, dense: the affine part by weighted
    least squares (``lstsq``) of the posterior means minus the field, ``W`` by a direct solve
    of ``(diag(P1) G + lambda sigma^2 I) W = P X - diag(P1) (a B^T + t)``, then
    ``sigma^2 = sum_ij P_ij |x_j - T_i|^2 / (N_P D)``."""
    p = gaussian_posterior(moved, x, sigma2, w)
    p1 = p.sum(axis=1)
    px = p @ x
    if fit_affine:
        design = np.c_[a, np.ones(len(a))]
        root = np.sqrt(p1)[:, None]
        coef = np.linalg.lstsq(design * root, (px / p1[:, None] - field) * root, rcond=None)[0]
        affine = design @ coef
    else:
        affine = a
    weights = np.linalg.solve(np.diag(p1) @ gram + lam * sigma2 * np.eye(len(a)),
                              px - p1[:, None] * affine)
    field = gram @ weights
    moved = affine + field
    residual = ((x[None, :, :] - moved[:, None, :]) ** 2).sum(-1)
    return moved, field, float((p * residual).sum() / (p.sum() * a.shape[1]))


def gram_of(a, beta):
    """``G_ij = exp(-|a_i - a_j|^2 / (2 beta^2))`` and its full eigendecomposition."""
    gram = np.exp(-((a[:, None, :] - a[None, :, :]) ** 2).sum(-1) / (2 * beta ** 2))
    values, vectors = np.linalg.eigh(gram)
    return gram, (vectors, values)


def rotation_2d(degrees):
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return np.array([[c, -s], [s, c]])


# --- E-step --------------------------------------------------------------------------------


def posterior_sums(y, x, sigma2, w):
    """``[P X, P 1, P |X|^2]`` of the E-step under test (``rd._expectation``), which never
    forms ``P``."""
    return rd._expectation(y, rd._detection_terms(x), sigma2, w)


def assert_sums_of(p, x, sums):
    """``sums`` are ``P X, P 1, P |X|^2`` of the posterior ``p`` written out by hand."""
    dims = x.shape[1]
    np.testing.assert_allclose(sums[:, :dims], p @ x, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(sums[:, dims], p.sum(axis=1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(sums[:, dims + 1], p @ (x ** 2).sum(axis=1), rtol=1e-12, atol=0)


def test_posterior_of_two_points_against_three_detections_by_hand():
    """y = (0, 0), (3, 0); x = (0, 0), (1, 0), (3, 1); sigma^2 = 0.5, w = 0.2, D = 2, n = 2,
    m = 3. Squared distances [[0, 1, 10], [9, 4, 1]], so ``e = exp(-d^2)``; ``c = (2 pi 0.5)^1
    * 0.25 * 2 / 3 = pi / 6``; each column divided by its sum plus pi / 6."""
    y = np.array([[0.0, 0.0], [3.0, 0.0]])
    x = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 1.0]])
    e = np.exp(-np.array([[0.0, 1.0, 10.0], [9.0, 4.0, 1.0]]))
    expected = e / (e.sum(axis=0) + np.pi / 6)
    assert_sums_of(expected, x, posterior_sums(y, x, 0.5, 0.2))
    # 3-D, the same points at z = 0: c = (2 pi 0.5)^(3/2) * 0.25 * 2 / 3 = pi^1.5 / 6
    y3, x3 = np.c_[y, np.zeros(2)], np.c_[x, np.zeros(3)]
    expected3 = e / (e.sum(axis=0) + np.pi ** 1.5 / 6)
    assert_sums_of(expected3, x3, posterior_sums(y3, x3, 0.5, 0.2))


def test_posterior_with_more_anchor_points_than_detections():
    """n = 3 anchor points, m = 1 detection at (0, 0); sigma^2 = 2, w = 0.5: ``c = (4 pi)^1 *
    1 * 3 / 1 = 12 pi``; squared distances 0, 4, 16 -> e = 1, e^-1, e^-4."""
    y = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 4.0]])
    x = np.array([[0.0, 0.0]])
    e = np.array([[1.0], [np.exp(-1.0)], [np.exp(-4.0)]])
    expected = e / (e.sum() + 12 * np.pi)
    assert_sums_of(expected, x, posterior_sums(y, x, 2.0, 0.5))


def test_posterior_of_a_coincident_pair_far_from_the_origin_is_not_above_one():
    """At 3e7 the expansion ``2 y x - y^2 - x^2`` of ``-|y - x|^2`` cancels to a rounding
    error that can be positive (+0.125 for a point 1e-3 from its detection); it is clipped
    at 0, so the kernel is ``exp(0) = 1`` at most: P = 1 / (1 + c), c = (2 pi)^(1/2) * 1
    (D = 1, w = 0.5, sigma^2 = 1)."""
    y, x = np.array([[3e7]]), np.array([[3e7 + 1e-3]])
    raw = 2 * y[0, 0] * x[0, 0] - y[0, 0] ** 2 - x[0, 0] ** 2
    assert raw > 0  # the scene does exercise the clip (exact IEEE products, no sum)
    assert rd._exponents(y, rd._detection_terms(x), 1.0)[0, 0] == 0.0
    assert posterior_sums(y, x, 1.0, 0.5)[0, 1] == pytest.approx(1 / (1 + np.sqrt(2 * np.pi)),
                                                                rel=1e-12)


def test_posterior_far_below_the_exponent_floor_is_negligible():
    """A detection 100 sigma from an anchor point: ``exp(-5000)`` is 0 in float64; the
    E-step takes ``exp(-700)`` (1e-304) instead (``EXPONENT_FLOOR``), which is nothing beside
    the outlier term c = (2 pi)^(1/2) * 1 * 2 / 1 (D = 1, w = 0.5, sigma^2 = 1, n = 2, m = 1):
    P 1 of the far point is below 1e-300, the near point's ``1 / (1 + c)`` to the last
    digits."""
    y, x = np.array([[0.0], [100.0]]), np.array([[0.0]])
    p1 = posterior_sums(y, x, 1.0, 0.5)[:, 1]
    c = np.sqrt(2 * np.pi) * 2
    assert p1[0] == pytest.approx(1 / (1 + c), rel=1e-15)
    assert 0 < p1[1] < 1e-300


# --- rotation and kernel ---------------------------------------------------------------------


def test_rotation_by_90_and_30_degrees():
    np.testing.assert_allclose(rd._rotation(np.pi / 2, 2), [[0, -1], [1, 0]], atol=1e-15)
    np.testing.assert_allclose(rd._rotation(np.pi / 2, 3), [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
                               atol=1e-15)
    half3 = np.sqrt(3) / 2
    np.testing.assert_allclose(rd._rotation(np.pi / 6, 3),
                               [[half3, -0.5, 0], [0.5, half3, 0], [0, 0, 1]], atol=1e-15)


def test_low_rank_kernel_of_two_points_by_hand():
    """Two points 1 apart, beta = 0.5: ``G = [[1, g], [g, 1]]``, ``g = exp(-1 / (2 * 0.25)) =
    e^-2``; eigenvalues 1 + g (vector (1, 1) / sqrt 2) and 1 - g. The first keeps (1 + g) / 2
    = 0.568 of the trace: keep = 0.5 keeps rank 1 (``(1 + g) / 2 * ones``), keep = 0.6 both."""
    a = np.array([[0.0, 0.0], [1.0, 0.0]])
    g = np.exp(-2.0)
    q, values = rd._low_rank_kernel(a, 0.5, 0.6)
    assert q.shape == (2, 2)
    np.testing.assert_allclose(values, [1 + g, 1 - g], rtol=1e-12)
    np.testing.assert_allclose(q @ np.diag(values) @ q.T, [[1, g], [g, 1]], atol=1e-12)
    q, values = rd._low_rank_kernel(a, 0.5, 0.5)
    assert q.shape == (2, 1)
    np.testing.assert_allclose(values, [1 + g], rtol=1e-12)
    np.testing.assert_allclose(q @ np.diag(values) @ q.T, np.full((2, 2), (1 + g) / 2),
                               atol=1e-12)


@pytest.mark.parametrize("keep, rank", [(0.75, 3), (np.nextafter(0.75, 0), 3),
                                        (np.nextafter(0.75, 1), 4), (0.25, 1), (1.0, 4)])
def test_low_rank_kernel_rank_at_a_share_exactly_reached(keep, rank):
    """Four points 100 apart, beta = 1: G = I exactly (exp(-5000) = 0), trace shares 0.25,
    0.5, 0.75, 1 exactly. The rank is the smallest whose share reaches ``keep``: at exactly
    0.75, three; one ulp above, four; one ulp below, three."""
    a = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0], [100.0, 100.0]])
    q, values = rd._low_rank_kernel(a, 1.0, keep)
    assert q.shape == (4, rank)
    np.testing.assert_array_equal(values, np.ones(rank))


def test_low_rank_kernel_of_coincident_points_floors_a_zero_eigenvalue():
    """Two coincident points: ``G = ones(2, 2)``, eigenvalues 2 and 0; the rank-one kernel
    keeps all the trace. A share above 1 (every component kept) floors the zero eigenvalue
    at 1e-12, never below (the Woodbury solve divides by it)."""
    a = np.zeros((2, 3))
    q, values = rd._low_rank_kernel(a, 2.0, 1.0)
    assert q.shape == (2, 1)
    np.testing.assert_allclose(values, [2.0], rtol=1e-12)
    q, values = rd._low_rank_kernel(a, 2.0, 1.5)
    assert values[0] == pytest.approx(2.0) and values[1] == 1e-12


# --- offset vote and global pose -------------------------------------------------------------


def test_offset_candidates_of_three_points_by_hand():
    """Anchor (0, 0), (1, 0), (0, 2); detections = anchor + (5.5, 0.5); radius 1. The nine
    (detection - anchor) offsets, detection-major: the three own pairs give (5.5, 0.5) (cell
    (5, 0), three votes); the other six fall in six cells of one vote each, in cell order
    (4, 0): x0 - a1 = (4.5, 0.5); (4, 2): x2 - a1 = (4.5, 2.5); (5, -2): x0 - a2; ...
    ``cells`` = 1 keeps the three votes of (5, 0); 2 adds the first tied cell (4, 0); 3 adds
    (4, 2); offsets returned in pair order."""
    anchor = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    x = anchor + [5.5, 0.5]
    top = [5.5, 0.5]
    np.testing.assert_array_equal(rd._offset_candidates(x, anchor, 1.0, cells=1), [top] * 3)
    np.testing.assert_array_equal(rd._offset_candidates(x, anchor, 1.0, cells=2),
                                  [top, [4.5, 0.5], top, top])
    np.testing.assert_array_equal(rd._offset_candidates(x, anchor, 1.0, cells=3),
                                  [top, [4.5, 0.5], top, [4.5, 2.5], top])
    # the default keeps eight of the seven cells: every offset
    assert len(rd._offset_candidates(x, anchor, 1.0)) == 9


def test_offset_candidates_cells_are_floored_at_the_radius():
    """Offsets exactly at 2 radii fall in cell 2 (floor), just below in cell 1: anchor 0 and
    detections at 1.0 and 0.999 and 0.5 (radius 0.5): cells 2, 1, 1 -> the two-vote cell 1."""
    anchor = np.array([[0.0]])
    x = np.array([[1.0], [0.999], [0.5]])
    np.testing.assert_array_equal(rd._offset_candidates(x, anchor, 0.5, cells=1),
                                  [[0.999], [0.5]])


def test_offset_candidates_tie_among_cells_goes_by_cell_order():
    """One anchor point at the origin, radius 1, detections in 20 cells along x (cell k
    holds x in [k, k + 1)): cells 0-2 and 9-19 hold two detections, cells 3-8 one. The
    eight most populated cells (the default) are 0, 1, 2 and, among the eleven tied cells
    9-19, the first five in cell order: 9-13."""
    votes = [2, 2, 2, 1, 1, 1, 1, 1, 1] + [2] * 11
    x = np.array([[k + 0.25 + 0.5 * i, 0.5] for k, n in enumerate(votes) for i in range(n)])
    cell = np.floor(x[:, 0]).astype(int)
    expected = x[np.isin(cell, [0, 1, 2, 9, 10, 11, 12, 13])]
    np.testing.assert_array_equal(rd._offset_candidates(x, np.zeros((1, 2)), 1.0), expected)


L_SHAPE = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("degrees", [90.0, -90.0, -30.0])
def test_global_pose_finds_a_turn_of_90_degrees_at_the_search_limit(degrees):
    """The L shape turned by exactly 90 degrees (the default limit, step 10) either way, or
    by -30, and moved by (10, 3), detections listed backwards: each anchor point lands on
    its own detection."""
    a = L_SHAPE - L_SHAPE.mean(0)
    truth = a @ rotation_2d(degrees).T + [10.0, 3.0]
    moved = global_pose(a, truth[::-1], 1.0, RegistrationSettings())
    np.testing.assert_allclose(moved, truth, atol=1e-9)
    # searched only to 89.5 degrees (turns 0, 10, ..., 80), the nearest turn to +-90 is 10
    # degrees off: a point 2 from the centre misses its detection by about 2 * 2 sin(5 deg)
    short = global_pose(a, truth[::-1], 1.0, RegistrationSettings(pose_max_angle=89.5))
    assert (np.abs(short - truth).max() > 0.3) == (abs(degrees) == 90.0)


def test_global_pose_searches_only_its_grid_of_turns():
    """Turned by 4 degrees, the L shape is laid best by the grid's turn 0 (10 degrees is
    6 off): the moved anchor is the anchor translated, not turned by 4. With a step of 0.5
    degrees (turns 0, 0.5, 1), a turn of exactly 0.5 is found."""
    a = L_SHAPE - L_SHAPE.mean(0)
    x = a @ rotation_2d(4).T + [1.0, 2.0]
    moved = global_pose(a, x, 1.0, RegistrationSettings())
    np.testing.assert_allclose(moved - moved[0], a - a[0], atol=1e-12)
    # turned by 7 degrees, the grid's 10 is nearer than 0: both lay the four detections
    # within the radius, and the closer fit (a sum of Gaussians, to 1e-9) wins
    x = a @ rotation_2d(7).T + [1.0, 2.0]
    moved = global_pose(a, x, 1.0, RegistrationSettings())
    turned10 = a @ rotation_2d(10).T
    np.testing.assert_allclose(moved - moved[0], turned10 - turned10[0], atol=1e-12)
    truth = a @ rotation_2d(0.5).T + [1.0, 2.0]
    fine = RegistrationSettings(pose_max_angle=1.0, pose_angle_step=0.5)
    np.testing.assert_allclose(global_pose(a, truth, 1.0, fine), truth, atol=1e-9)


def test_global_pose_tie_between_turns_keeps_no_turn():
    """A square fits exactly at 0 and +-90 degrees (its corners trade places): the tie keeps
    the smaller turn, 0, so every corner stays with its own detection."""
    a = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    moved = global_pose(a, a[[2, 0, 3, 1]] + [5.0, -2.0], 2.0, RegistrationSettings())
    np.testing.assert_allclose(moved, a + [5.0, -2.0], atol=1e-9)


def test_global_pose_tie_between_opposite_turns_keeps_the_positive_one():
    """The square turned by +45 degrees fits exactly at +45 and -45 (step 45, limit 90): the
    turns are met in the order 0, +45, -45, +90, -90, and a tie keeps the first."""
    a = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    truth = a @ rotation_2d(45).T + [3.0, 1.0]
    settings = RegistrationSettings(pose_angle_step=45.0)
    moved = global_pose(a, truth[[1, 3, 0, 2]], 2.0, settings)
    np.testing.assert_allclose(moved, truth, atol=1e-9)


def test_global_pose_equal_counts_are_decided_by_the_closer_fit():
    """A scaled square (corners 1.1 from the centre of the detections' square of side 2)
    lays all four detections within the radius at 0 and at +-90 degrees, equally close by
    symmetry: the rounded closeness ties and the smaller turn stays. Turned by 10 degrees
    (the next turn on the grid), the count is the same but the fit is looser: it loses."""
    a = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    x = a * 1.1 + [0.3, 0.0]
    moved = global_pose(a, x, 2.0, RegistrationSettings())
    # no turn: the moved anchor is the anchor translated (its differences are the anchor's)
    np.testing.assert_allclose(moved - moved[0], a - a[0], atol=1e-9)


def test_global_pose_counts_detections_strictly_inside_the_radius():
    """Radius r = 0.5 * 2 = 1, no turn searched (step 0). Anchor (0, 0), (10, 0), (0, 10).
    Offset (100, 0) lays three detections exactly on moved anchor points (count 3); offset
    (0, 0) lays two exactly and two more, (11, 0) and (0, 11), at distance exactly r: they
    do not count (2 < 3). Counted inclusively, (0, 0) would win with 4."""
    a = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    x = np.array([[100.0, 0.0], [110.0, 0.0], [100.0, 10.0],
                  [0.0, 0.0], [10.0, 0.0], [11.0, 0.0], [0.0, 11.0]])
    moved = global_pose(a, x, 2.0, RegistrationSettings(pose_angle_step=0.0))
    np.testing.assert_array_equal(moved, a + [100.0, 0.0])


#: Four anchor points whose differences are all distinct (no two pairs share an offset).
SKEW = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 17.0], [23.0, 29.0]])


@pytest.mark.parametrize("d_a, d_b, winner", [(0.49, 0.329, "A"), (0.3, 0.15, "B"),
                                               (0.49, 0.315, "B")])
def test_global_pose_closeness_is_a_sum_of_gaussians_of_the_radius(d_a, d_b, winner):
    """No turn (step 0), radius r = 0.5 (spacing 1): closeness = sum_j exp(-d_j^2 / (2 r^2))
    = sum_j exp(-2 d_j^2). Two groups of detections, 100 apart, each lays all four anchor
    points within r: offset A = (100, 0) lays three exactly and the fourth at d_a
    (closeness 1 + 1 + 1 + exp(-2 d_a^2)); offset B = (0, 100) lays two exactly and two at
    d_b, on opposite sides (2 + 2 exp(-2 d_b^2); its other candidates lay one detection
    2 d_b or more away and score less). d_a = 0.49, d_b = 0.329: A 3.6187 > B 3.6107
    (exp(-d^2 * 2 r^2), exp(-d^2 / (3 r^2)) or exp(-d^3 / (2 r^2)) would prefer B);
    d_a = 0.3, d_b = 0.15: B 3.9120 > A 3.8353 (exp(-d / r^2) would prefer A); d_a = 0.49,
    d_b = 0.315: B 3.6400 > A 3.6187 (exp(-d^2 / (2 r^3)) would prefer A)."""
    offset_a, offset_b = np.array([100.0, 0.0]), np.array([0.0, 100.0])
    group_a = SKEW + offset_a + [[0, 0], [0, 0], [0, 0], [d_a, 0]]
    group_b = SKEW + offset_b + [[0, 0], [0, 0], [0, d_b], [0, -d_b]]
    moved = global_pose(SKEW, np.r_[group_a, group_b], 1.0,
                        RegistrationSettings(pose_angle_step=0.0))
    np.testing.assert_array_equal(moved, SKEW + (offset_a if winner == "A" else offset_b))


def test_global_pose_without_a_radius_returns_the_anchor_itself():
    a = L_SHAPE - L_SHAPE.mean(0)
    assert global_pose(a, a + 5.0, 1.0, RegistrationSettings(pose_radius=0.0)) is a
    assert global_pose(a, a + 5.0, 0.0, RegistrationSettings()) is a


# --- CPD's M-step, the stopping rule and the iteration cap ----------------------------------

#: Four anchor points 10 apart and their detections, each moved by a different small step.
SQUARE10 = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
MOVES = np.array([[0.3, -0.2], [0.1, 0.4], [-0.4, 0.2], [0.2, 0.1]])


@pytest.mark.parametrize("fit_affine", [True, False])
def test_one_em_step_equals_the_dense_cpd_step(fit_affine):
    """One EM step from the anchor onto its moved detections (sigma^2 = 4, w = 0.1,
    lambda = 0.1, beta = 10, full-rank kernel): the low-rank Woodbury solve gives the dense
    step's ``T`` and ``sigma^2`` (affine part by least squares; without it, the identity)."""
    a, x = SQUARE10, SQUARE10 + MOVES
    gram, (q, values) = gram_of(a, 10.0)
    moved, sigma2 = rd._register_frame(a, (q, values), x, a, 4.0, 1, 0.1, 0.1, 1e-6,
                                       fit_affine)
    expected, _, expected_sigma2 = dense_cpd_step(a, x, a, np.zeros_like(a), 4.0, 0.1, 0.1,
                                                  gram, fit_affine)
    np.testing.assert_allclose(moved, expected, rtol=0, atol=1e-7)
    assert sigma2 == pytest.approx(expected_sigma2, rel=1e-7)
    assert np.abs(moved - a).max() > 0.05  # the step does move the points


def test_three_em_steps_equal_three_dense_cpd_steps():
    """Each later M-step refits the affine part given the field of the step before (the
    posterior means minus ``G W``): three steps from a start half-way, with the dense
    reference chained by hand."""
    a = SQUARE10
    x = a @ np.array([[1.05, 0.02], [-0.03, 0.97]]).T + [0.5, -0.3] + MOVES
    gram, decomposition = gram_of(a, 10.0)
    start = (a + x) / 2
    moved, sigma2 = rd._register_frame(a, decomposition, x, start, 4.0, 3, 2.0, 0.1, 1e-6)
    expected, field, s2 = start, np.zeros_like(a), 4.0
    for _ in range(3):
        expected, field, s2 = dense_cpd_step(a, x, expected, field, s2, 2.0, 0.1, gram)
    np.testing.assert_allclose(moved, expected, rtol=0, atol=1e-7)
    assert sigma2 == pytest.approx(s2, rel=1e-6)


class CountingPosterior:
    """``_expectation`` (the E-step) that counts its calls (one per EM iteration)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        self._original = rd._expectation
        monkeypatch.setattr(rd, "_expectation", self)

    def __call__(self, *args):
        self.calls += 1
        return self._original(*args)


def exact_scene():
    """The anchor square and detections exactly on it, starting there: every M-step's
    ``sigma^2`` is 0 up to rounding, so the floor (0.5) holds it."""
    a = SQUARE10
    return a, gram_of(a, 10.0)[1], a.copy()


@pytest.mark.parametrize("tolerance, steps", [(0.5, 1), (np.nextafter(0.5, 0), 2),
                                              (np.nextafter(0.5, 1), 1), (0.0, 2)])
def test_em_stops_once_sigma2_moves_by_at_most_the_tolerance(monkeypatch, tolerance, steps):
    """From sigma^2 = 1 the first step falls to the floor 0.5: a change of exactly 0.5 of
    the previous value. A tolerance of exactly 0.5 stops there (at most: inclusive); one ulp
    less runs a second step, whose change is 0 (so even tolerance 0 stops there)."""
    counter = CountingPosterior(monkeypatch)
    a, decomposition, x = exact_scene()
    moved, sigma2 = rd._register_frame(a, decomposition, x, a, 1.0, 10, 2.0, 0.1, 0.5,
                                       tolerance=tolerance)
    assert counter.calls == steps
    assert sigma2 == 0.5
    np.testing.assert_allclose(moved, a, atol=1e-9)


@pytest.mark.parametrize("iterations", [1, 5, 20])
def test_em_runs_at_most_its_iterations(monkeypatch, iterations):
    """A scene that does not settle within 20 steps at tolerance 0 (the square onto eight
    detections, two near each stretched corner, from sigma^2 = 400; left alone it runs 28
    steps, until sigma^2 reaches its floor twice): exactly ``iterations`` E-steps."""
    counter = CountingPosterior(monkeypatch)
    a = SQUARE10
    x = np.r_[a * [1.3, 1.0] + MOVES, a * [1.3, 1.0] - MOVES + [0.5, 0.0]]
    rd._register_frame(a, gram_of(a, 10.0)[1], x, a, 400.0, iterations, 2.0, 0.1, 1e-9,
                       tolerance=0.0)
    assert counter.calls == iterations


def test_em_without_any_posterior_mass_keeps_its_start():
    """Detections 1000 away at sigma^2 = 1: every kernel value underflows to 0, so the
    first E-step has no mass (``N_P < 1e-9``): the start and sigma^2 come back unchanged."""
    a, decomposition, _ = exact_scene()
    start = a + 0.25
    moved, sigma2 = rd._register_frame(a, decomposition, a + 1000.0, start, 1.0, 20, 2.0,
                                       0.1, 0.01)
    assert moved is start and sigma2 == 1.0


# --- the sequential fit: starts, scales, weights, gaps and units -----------------------------

#: A 2-D square of side 2 about (5, 5): RMS radius sqrt 2, so the unit-free anchor is the
#: square of side sqrt 2 about 0 and its median nearest-neighbour spacing is sqrt 2.
SQUARE = np.array([[4.0, 4.0], [6.0, 4.0], [4.0, 6.0], [6.0, 6.0]])


def detection_table(frames: dict[int, np.ndarray]) -> pd.DataFrame:
    parts = [pd.DataFrame({"frame": t, "x_um": p[:, 0], "y_um": p[:, 1]})
             for t, p in frames.items()]
    return pd.concat(parts, ignore_index=True)


class Recorder:
    """Wraps a module function of registered_distance and records each call's arguments
    and result (the fit still runs)."""

    def __init__(self, monkeypatch, name):
        self.calls = []
        self._original = getattr(rd, name)
        monkeypatch.setattr(rd, name, self)

    def __call__(self, *args, **kwargs):
        result = self._original(*args, **kwargs)
        self.calls.append((args, kwargs, result))
        return result


def test_fit_passes_each_frame_its_scale_iterations_and_tolerance(monkeypatch):
    """Frames 1, 2, 4 have 4 detections (the square moved by t/2 along x), frame 3 only 2
    (fewer than D + 1 = 3: unregistered). Unit-free spacing sqrt 2, so: the first frame
    (global pose) starts at sigma^2 = min(3 sqrt 2, 0.25)^2 = 0.0625 with 60 iterations and
    no early stop; later ones at (1 * sqrt 2)^2 = 2 with 20 iterations and tolerance 3e-3;
    floor (0.1 sqrt 2)^2 = 0.02; w = max(0.1, 1 - 4 / 4) = 0.1."""
    frames = {t: SQUARE + [t / 2, 0.0] for t in (1, 2, 4)}
    frames[3] = SQUARE[:2] + [1.5, 0.0]
    recorder = Recorder(monkeypatch, "_register_frame")
    registration = fit_registration(SQUARE, detection_table(frames), 5)
    got = [(len(args[2]), args[4], args[5], args[6], args[7], args[8], args[9], args[10])
           for args, _, _ in recorder.calls]
    assert got == [(4, pytest.approx(0.0625), 60, 8.0, 0.1, pytest.approx(0.02), True, 0.0),
                   (4, pytest.approx(2.0), 20, 8.0, 0.1, pytest.approx(0.02), True, 3e-3),
                   (4, pytest.approx(2.0), 20, 8.0, 0.1, pytest.approx(0.02), True, 3e-3)]
    # the detections handed over are the frame's own, unit-free: (x - (5, 5)) / sqrt 2
    for (args, _, _), t in zip(recorder.calls, (1, 2, 4)):
        np.testing.assert_allclose(args[2], (frames[t] - 5.0) / SQRT2, rtol=0, atol=1e-12)
    # results back in micrometres; frame 0 is the anchor with sigma 0; frame 3 stays NaN
    np.testing.assert_array_equal(registration.positions[0], SQUARE)
    assert registration.sigma[0] == 0.0
    assert np.isnan(registration.positions[3]).all() and np.isnan(registration.sigma[3])
    for (_, _, (moved, sigma2)), t in zip(recorder.calls, (1, 2, 4)):
        np.testing.assert_allclose(registration.positions[t], moved * SQRT2 + 5.0, atol=1e-12)
        assert registration.sigma[t] == pytest.approx(np.sqrt(sigma2) * SQRT2, rel=1e-12)


def test_fit_with_exactly_d_plus_one_detections_registers_the_frame():
    """Three detections in 2-D (D + 1) are enough; two are not."""
    frames = {1: SQUARE[:3] + [0.5, 0.0], 2: SQUARE[:2] + [1.0, 0.0]}
    registration = fit_registration(SQUARE, detection_table(frames), 3)
    assert np.isfinite(registration.positions[1]).all()
    assert np.isnan(registration.positions[2]).all()
    # the number of frames defaults to the last detection's frame + 1
    assert fit_registration(SQUARE, detection_table(frames)).positions.shape == (3, 4, 2)


def test_fit_settings_reach_every_frame(monkeypatch):
    """Non-default settings are passed on: lambda, the iteration counts, the first and later
    scales (first_frame_sigma 0.1 -> (0.1 sqrt 2)^2 = 0.02; frame_sigma 0.5 -> 0.5), the
    floor (min_sigma 0.05 -> 0.005), the affine switch, the tolerance and the outlier weight
    (not fitted: 0.3, although eight detections per frame would fit 1 - 4 / 8 = 0.5)."""
    frames = {t: np.r_[SQUARE, SQUARE + 20.0] + [t / 2, 0.0] for t in (1, 2)}
    settings = RegistrationSettings(lam=3.0, iterations=7, first_frame_iterations=9,
                                    first_frame_sigma=0.1, frame_sigma=0.5, min_sigma=0.05,
                                    affine=False, tolerance=0.25, outlier_weight=0.3,
                                    fit_outlier_weight=False)
    recorder = Recorder(monkeypatch, "_register_frame")
    registration = fit_registration(SQUARE, detection_table(frames), 3, settings)
    assert registration.settings is settings
    assert fit_registration(SQUARE, detection_table(frames), 3).settings == RegistrationSettings()
    recorder.calls[2:] = []
    got = [args[4:] for args, _, _ in recorder.calls]
    assert got == [(pytest.approx(0.02), 9, 3.0, 0.3, pytest.approx(0.005), False, 0.0),
                   (pytest.approx(0.5), 7, 3.0, 0.3, pytest.approx(0.005), False, 0.25)]


def test_fit_starting_scale_is_floored(monkeypatch):
    """frame_sigma 0.01 (sigma^2 = 0.0002) and first_frame_sigma 0.01 lie under the floor
    (0.1 sqrt 2)^2 = 0.02: both frames start at the floor."""
    frames = {t: SQUARE + [t / 2, 0.0] for t in (1, 2)}
    recorder = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 3,
                     RegistrationSettings(first_frame_sigma=0.01, frame_sigma=0.01))
    assert [args[4] for args, _, _ in recorder.calls] == [pytest.approx(0.02)] * 2


def test_fit_outlier_weight_from_the_frames_with_detections(monkeypatch):
    """Frames 1, 3: 8 detections (the square and a copy 20 away), frame 2: 1 (too few to
    register, but counted), frame 4: 5; frames 0 and 5 none. The median over the frames
    with detections (8, 1, 8, 5) is 6.5: w = 1 - 4 / 6.5 = 5 / 13 (counting the empty
    frames, the median of 0, 8, 1, 8, 5, 0 would be 3, w the floor 0.1; without the frame of
    one detection, 8, w = 0.5). A floor above the fitted share holds: four detections a
    frame fit 1 - 4 / 4 = 0, so an outlier_weight of 0.3 stays."""
    eight = np.r_[SQUARE, SQUARE + 20.0]
    frames = {1: eight, 2: SQUARE[:1], 3: eight, 4: np.r_[SQUARE, SQUARE[:1] + 20.0]}
    recorder = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 6)
    assert [args[7] for args, _, _ in recorder.calls] == [pytest.approx(5 / 13)] * 3
    recorder.calls.clear()
    fit_registration(SQUARE, detection_table({1: SQUARE, 2: SQUARE}), 3,
                     RegistrationSettings(outlier_weight=0.3))
    assert [args[7] for args, _, _ in recorder.calls] == [0.3, 0.3]


def test_fit_predicts_over_a_gap_from_the_real_frame_numbers(monkeypatch):
    """Registered frames 1, 2, 4 (3 has too few detections): frame 2 starts from
    constant_velocity(R[1], A, 1, 1), frame 4 from constant_velocity(R[2], R[1], 2, 1) --
    over the gap the velocity is extrapolated two frames -- each then against the zero
    velocity start (previous frame) by _better_start; only frame 1 takes the global pose."""
    frames = {t: SQUARE + [t / 2, 0.0] for t in (1, 2, 4)}
    frames[3] = SQUARE[:2]
    velocity = Recorder(monkeypatch, "constant_velocity")
    better = Recorder(monkeypatch, "_better_start")
    pose = Recorder(monkeypatch, "global_pose")
    register = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 5)
    a = (SQUARE - 5.0) / SQRT2
    r1, r2 = (result[0] for _, _, result in register.calls[:2])
    assert len(pose.calls) == 1
    np.testing.assert_array_equal(pose.calls[0][0][0], a)
    assert [args[2:] for args, _, _ in velocity.calls] == [(1, 1, 1.0), (2, 1, 1.0)]
    for (args, _, _), (previous, before) in zip(velocity.calls, ((r1, a), (r2, r1))):
        np.testing.assert_array_equal(args[0], previous)
        np.testing.assert_array_equal(args[1], before)
    assert len(better.calls) == 2
    for (args, _, chosen), (v_args, _, predicted), register_call in zip(
            better.calls, velocity.calls, register.calls[1:]):
        assert args[0][0] is v_args[0] and args[0][1] is predicted
        assert args[2] == pytest.approx(SQRT2)
        assert register_call[0][3] is chosen  # the chosen start places the first E-step


def test_fit_first_registered_frame_after_a_gap_takes_the_global_pose(monkeypatch):
    """Frame 1 has too few detections: frame 2 is the first registered one, so it starts
    from the global pose with the first frame's scale, iterations and no early stop."""
    frames = {1: SQUARE[:1], 2: SQUARE + [1.0, 0.0], 3: SQUARE + [1.5, 0.0]}
    pose = Recorder(monkeypatch, "global_pose")
    register = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 4)
    assert len(pose.calls) == 1 and len(register.calls) == 2
    assert register.calls[0][0][3] is pose.calls[0][2]
    assert [args[5] for args, _, _ in register.calls] == [60, 20]
    assert [args[10] for args, _, _ in register.calls] == [0.0, 3e-3]


def test_fit_without_choosing_a_start_takes_the_velocity_prediction(monkeypatch):
    frames = {t: SQUARE + [t / 2, 0.0] for t in (1, 2, 3)}
    velocity = Recorder(monkeypatch, "constant_velocity")
    better = Recorder(monkeypatch, "_better_start")
    register = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 4,
                     RegistrationSettings(choose_start=False, momentum=0.5))
    assert not better.calls
    assert [args[4] for args, _, _ in velocity.calls] == [0.5, 0.5]
    for (_, _, predicted), call in zip(velocity.calls, register.calls[1:]):
        assert call[0][3] is predicted


def test_fit_later_scale_from_the_start_when_frame_sigma_is_none(monkeypatch):
    """frame_sigma None: a later frame starts at sigma^2 = mean over the start's points of
    the squared distance to the nearest detection, divided by D (here by 2)."""
    frames = {1: SQUARE + [0.5, 0.0], 2: SQUARE + [3.0, 1.0]}
    register = Recorder(monkeypatch, "_register_frame")
    fit_registration(SQUARE, detection_table(frames), 3, RegistrationSettings(frame_sigma=None))
    args = register.calls[1][0]
    x, start = args[2], args[3]
    nearest = ((start[:, None, :] - x[None, :, :]) ** 2).sum(-1).min(axis=1)
    assert args[4] == pytest.approx(max(nearest.mean() / 2, 0.02), rel=1e-12)
    assert args[4] > 0.02  # the start is off by more than the floor


def test_fit_reports_progress_every_25_frames_and_at_the_end():
    frames = {t: SQUARE + [0.01 * t, 0.0] for t in range(1, 30)}
    seen = []
    fit_registration(SQUARE, detection_table(frames), 30, on_frame=lambda *a: seen.append(a))
    assert seen == [(26, 30), (30, 30)]
    seen.clear()
    fit_registration(SQUARE, detection_table({1: SQUARE}), 2, on_frame=lambda *a: seen.append(a))
    assert seen == [(2, 2)]


def test_fit_of_coincident_anchor_points_uses_unit_radius():
    """Every anchor point at (3, 4): RMS radius 0, taken as 1 (no division by zero); the
    spacing 0 gives the floor sigma^2 = 1e-12 (unit-free). The frame's detections at the
    anchor keep it there, at the floor: sigma = sqrt(1e-12) * 1 = 1e-6 um."""
    anchor = np.full((3, 2), [3.0, 4.0])
    registration = fit_registration(anchor, detection_table({1: anchor.copy()}), 2)
    np.testing.assert_allclose(registration.positions[1], anchor, atol=1e-6)
    assert registration.sigma[1] == pytest.approx(1e-6, rel=1e-9)


def test_better_start_compares_mean_squared_capped_distances():
    """Distances to the nearest detection (spacing cap 5, not reached): start A (0, 2) and
    start B (1.5, 1.5): mean squares 2 < 2.25 keeps A (mean cubes, 4 > 3.375, would keep B);
    A (0, 2) and C (1.2, 1.2): mean squares 2 > 1.44 keeps C (mean distances, 1 < 1.2,
    would keep A). Equal costs keep the first start."""
    x = np.array([[0.0, 0.0], [20.0, 0.0]])
    start_a = x + [[0.0, 0.0], [0.0, 2.0]]
    start_b = x + [0.0, 1.5]
    start_c = x + [0.0, 1.2]
    assert rd._better_start((start_b, start_a), x, 5.0) is start_a
    assert rd._better_start((start_a, start_c), x, 5.0) is start_c
    mirrored = x + [[0.0, 0.0], [0.0, -2.0]]
    assert rd._better_start((mirrored, start_a), x, 5.0) is mirrored
    assert rd._better_start((start_a, mirrored), x, 5.0) is start_a


# --- RegisteredDistance.register: what is fitted, and when again ----------------------------


def grid_rows(anchor: np.ndarray, frames: int, shift: float = 0.0) -> pd.DataFrame:
    """Rows of ids 0.. at ``anchor`` moved by ``shift * t`` along x, frames 0 .. frames - 1."""
    parts = [pd.DataFrame({"frame": t, "detection": np.arange(len(anchor)),
                           "x_um": anchor[:, 0] + shift * t, "y_um": anchor[:, 1],
                           "pred_id": np.arange(len(anchor)), "pred_valid": True})
             for t in range(frames)]
    return pd.concat(parts, ignore_index=True)


def test_register_fits_again_when_the_anchor_or_the_detections_change(monkeypatch):
    """One verifier, four calls: the same table twice (one fit), one whose later detections
    moved (same anchor: a new fit), one whose anchor frame moved (another): each
    registration equals a fresh verifier's."""
    fits = Recorder(monkeypatch, "fit_registration")
    verifier = RegisteredDistance()
    first = grid_rows(SQUARE, 3, shift=0.5)
    moved_anchor = first.copy()
    moved_anchor.loc[moved_anchor["frame"] == 0, "x_um"] += 0.25
    moved_later = first.copy()
    moved_later.loc[moved_later["frame"] == 2, "x_um"] += 0.25
    tables = (first, first, moved_later, moved_anchor)
    got = [verifier.register(t)[1].positions for t in tables]
    assert len(fits.calls) == 3
    for table, positions in zip(tables, got):
        np.testing.assert_array_equal(positions, RegisteredDistance().register(table)[1].positions)
    # the one-to-one claims follow the refit: scoring the last table equals a fresh verifier
    np.testing.assert_array_equal(verifier.score(moved_anchor),
                                  RegisteredDistance().score(moved_anchor))


def test_register_fits_again_for_a_new_anchor_on_the_same_detections(monkeypatch):
    """The detection table given is the same; only the anchor frame's rows moved (by 0.5
    along y): the fit starts from the new anchor, so it runs again."""
    fits = Recorder(monkeypatch, "fit_registration")
    table = grid_rows(SQUARE, 3, shift=0.5)
    detections = table[["frame", "detection", "x_um", "y_um"]].copy()
    moved = table.copy()
    moved.loc[moved["frame"] == 0, "y_um"] += 0.5
    verifier = RegisteredDistance()
    verifier.register(table, detections)
    _, registration = verifier.register(moved, detections)
    assert len(fits.calls) == 2
    np.testing.assert_array_equal(fits.calls[1][0][0], SQUARE + [0.0, 0.5])
    np.testing.assert_array_equal(registration.positions[0], SQUARE + [0.0, 0.5])


def test_register_reports_the_fits_progress():
    """The verifier's ``on_frame`` reaches the fit: three frames, one call at the end."""
    verifier = RegisteredDistance()
    seen = []
    verifier.on_frame = lambda *done: seen.append(done)
    verifier.register(grid_rows(SQUARE, 3, shift=0.5))
    assert seen == [(3, 3)]


def test_register_covers_the_later_of_the_tables_last_frames():
    """The registration spans frame 0 .. the last frame of the table or of the detections,
    whichever is later."""
    table = grid_rows(SQUARE, 2, shift=0.5)
    detections = grid_rows(SQUARE, 4, shift=0.5)[["frame", "detection", "x_um", "y_um"]]
    _, registration = RegisteredDistance().register(table, detections)
    assert registration.positions.shape == (4, 4, 2)
    _, registration = RegisteredDistance().register(grid_rows(SQUARE, 5), detections)
    assert registration.positions.shape == (5, 4, 2)


def test_register_without_anchor_points_gives_an_empty_registration():
    """No trusted anchor row: nothing is fitted; the registration has no anchor point, one
    NaN sigma per frame and the verifier's settings. An empty table and an empty detection
    table give one frame (frame 0)."""
    settings = RegistrationSettings(lam=3.0)
    verifier = RegisteredDistance(settings=settings)
    table = grid_rows(SQUARE, 3).assign(pred_valid=False)
    ids, registration = verifier.register(table)
    assert len(ids) == 0 and registration.positions.shape == (3, 0, 2)
    assert registration.positions.dtype == np.float64
    assert np.isnan(registration.sigma).all() and len(registration.sigma) == 3
    assert registration.settings is settings
    empty = table.iloc[:0]
    _, registration = verifier.register(empty, empty[["frame", "detection", "x_um", "y_um"]])
    assert registration.positions.shape == (1, 0, 2)
    # an empty table beside detections up to frame 2: three frames
    _, registration = verifier.register(empty, table[["frame", "detection", "x_um", "y_um"]])
    assert registration.positions.shape == (3, 0, 2)


# --- the calibration of the ambiguity band ---------------------------------------------------

#: Anchor ids 0, 1, 2 at (0, 0), (10, 0), (30, 0): spacings 10, 10, 20 (relative factors
#: 1, 1, 0.5, so a relative score would differ on id 2).
CALIBRATION_ANCHOR = np.array([[0.0, 0.0], [10.0, 0.0], [30.0, 0.0]])


def calibration_rows() -> pd.DataFrame:
    """Frame 0: the anchor. Frame 1 (sigma 0.5): id 0 at (1, 0) (d = 1, ratio 2), id 1 at
    (10, 2) (d = 2, ratio 4), id 2 at (30, 1) (d = 1, ratio 2). Frame 2 (sigma 0): id 0,
    left out. Frame 3 (sigma 1): id 0 at (4.9, 0) (d = 4.9, the other anchor 5.1 away: a
    margin of 0.2, inside any band k >= 0.2 but scored at k = 0; ratio 4.9), and an
    invalid row at (0, 0.5). The one-to-one assignment (cap 10) would give (0, 0.5) to
    anchor 0 and (4.9, 0) to anchor 1 (0.5 + 5.1 < 4.9 + 10) and so add 10 to id 0's
    score there: the calibration measures the distance alone."""
    rows = [(0, 0, 0.0, 0.0, True), (0, 1, 10.0, 0.0, True), (0, 2, 30.0, 0.0, True),
            (1, 0, 1.0, 0.0, True), (1, 1, 10.0, 2.0, True), (1, 2, 30.0, 1.0, True),
            (2, 0, 0.0, 1.0, True), (3, 0, 4.9, 0.0, True), (3, 1, 0.0, 0.5, False)]
    table = pd.DataFrame(rows, columns=["frame", "pred_id", "x_um", "y_um", "pred_valid"])
    return table.assign(detection=np.arange(len(table)))


class StubFit:
    """fit_registration replaced by the registration of the calibration scene: every frame
    at the anchor, sigma (1, 0.5, 0, 1) (1 at frame 0, which the calibration must skip)."""

    def __init__(self, monkeypatch):
        self.calls = []
        monkeypatch.setattr(rd, "fit_registration", self)

    def __call__(self, anchor, detections, n_frames, settings, on_frame=None):
        self.calls.append((anchor, detections, n_frames, settings))
        return Registration(np.repeat(CALIBRATION_ANCHOR[None], 4, axis=0),
                            np.array([1.0, 0.5, 0.0, 1.0]), settings)


def test_ambiguity_ratios_by_hand(monkeypatch):
    fit = StubFit(monkeypatch)
    settings = RegistrationSettings(lam=5.0)
    table = calibration_rows()
    detections = table[["frame", "detection", "x_um", "y_um"]].iloc[::-1]
    ratios = rd.ambiguity_ratios(table, settings, detections)
    np.testing.assert_allclose(ratios, [2.0, 4.0, 2.0, 4.9], rtol=1e-12)
    assert len(fit.calls) == 1  # the sigmas are those of the same fit
    anchor, seen, n_frames, used = fit.calls[0]
    np.testing.assert_array_equal(anchor, CALIBRATION_ANCHOR)
    assert seen.index.tolist() == detections.index.tolist() and n_frames == 4
    assert used is settings


def test_calibrate_ambiguity_k_pools_the_ratios_of_every_table(monkeypatch):
    """One table: the median of 2, 4, 2, 4.9 is 3; its maximum (quantile 1) 4.9. Two
    tables (the second without its frame-1 id 1 row): 2, 4, 2, 4.9, 2, 2, 4.9 -> median 2."""
    fit = StubFit(monkeypatch)
    table = calibration_rows()
    settings = RegistrationSettings(lam=5.0)
    assert calibrate_ambiguity_k(table) == pytest.approx(3.0)
    assert calibrate_ambiguity_k(table, quantile=1.0) == pytest.approx(4.9)
    second = table.drop(index=4)
    assert calibrate_ambiguity_k([table, second], settings=settings) == pytest.approx(2.0)
    assert len(fit.calls) == 4 and all(call[3] is settings for call in fit.calls[-2:])
    assert isinstance(fit.calls[0][3], RegistrationSettings)


def test_a_new_verifier_has_recorded_nothing():
    """Before any call: no abstention record, no margin, factor or claimant, no progress
    callback, no spacing factor; the defaults are k = 0 (a float), the default settings,
    the one-to-one assignment on and the distance score."""
    verifier = RegisteredDistance()
    assert verifier.abstentions == []
    assert verifier.last_margin is None and verifier.last_factor is None
    assert verifier.last_claimant is None and verifier.on_frame is None
    assert verifier.spacing_factor.shape == (0,)
    assert type(verifier.ambiguity_k) is float and verifier.ambiguity_k == 0.0
    assert verifier.settings == RegistrationSettings()
    assert verifier.one_to_one is True and verifier.score_kind == "distance"
    given = RegistrationSettings(lam=4.0)
    other = RegisteredDistance(ambiguity_k=1, settings=given, one_to_one=0, score="relative")
    assert type(other.ambiguity_k) is float and other.ambiguity_k == 1.0
    assert other.settings is given and other.one_to_one is False
    assert other.score_kind == "relative"


def test_fit_of_a_float32_anchor_is_computed_in_float64():
    """A float32 anchor gives exactly the registration of the same values in float64."""
    anchor32 = (SQUARE + [0.1, 0.3]).astype(np.float32)
    frames = detection_table({t: SQUARE + [0.1 + t / 3, 0.3] for t in (1, 2)})
    single = fit_registration(anchor32, frames, 3)
    double = fit_registration(anchor32.astype(np.float64), frames, 3)
    assert single.positions.dtype == np.float64
    np.testing.assert_array_equal(single.positions, double.positions)
    np.testing.assert_array_equal(single.sigma, double.sigma)


def test_fit_of_one_anchor_point_uses_unit_spacing():
    """One anchor point at (3, 4): RMS radius 0 (taken as 1) and no neighbour, so the
    spacing is 1 (unit-free): floor sigma^2 = (0.1 * 1)^2 = 0.01. Frame 1's first detection
    lies 1 to its right (the pose vote's candidates all lay one detection; the first
    listed wins), the others far away; CPD keeps the point on it, at the floor: sigma =
    0.1 um."""
    anchor = np.array([[3.0, 4.0]])
    frame = np.array([[4.0, 4.0], [13.0, 14.0], [-7.0, 14.0]])
    registration = fit_registration(anchor, detection_table({1: frame}), 2)
    np.testing.assert_allclose(registration.positions[1], [[4.0, 4.0]], atol=1e-6)
    assert registration.sigma[1] == pytest.approx(0.1, rel=1e-9)


def test_fit_of_two_anchor_points_uses_their_distance_as_the_spacing():
    """Anchor (0, 0), (4, 0): RMS radius 2, unit-free points (-1, 0), (1, 0), spacing 2:
    floor sigma^2 = (0.1 * 2)^2 = 0.04. Detections on both points and one far away: the fit
    stays exact, at the floor: sigma = 0.2 * 2 = 0.4 um."""
    anchor = np.array([[0.0, 0.0], [4.0, 0.0]])
    frame = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 50.0]])
    registration = fit_registration(anchor, detection_table({1: frame}), 2)
    np.testing.assert_allclose(registration.positions[1], anchor, atol=1e-6)
    assert registration.sigma[1] == pytest.approx(0.4, rel=1e-9)
