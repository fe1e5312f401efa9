"""registered_distance: the warp never reads identities; scores and abstention by hand."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import spread_points
from trackverify.benchmark.config import build_config
from trackverify.errors import ConfigError
from trackverify.benchmark.protocols.anatomical_verification import error_array, score_conditions
from trackverify.benchmark.selective import auroc_abstain_as_error
from trackverify.synth.specimen import SpecimenConfig, animal_observations
from trackverify.verifiers import load_verifier
from trackverify.verifiers.registered_distance import (
    Abstentions, RegisteredDistance, RegistrationSettings, anchor_spacing, assign_detections,
    contradicted_claims, detection_of_points, fit_registration, frame_groups, global_pose,
    identity_spacings, nearest_smallest_index, spacing_factors)

PAIRS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "targettrack-point-pairs"


class NoIdentities:
    """A detections table that raises on any access but ``frame`` and the coordinates."""

    def __init__(self, table: pd.DataFrame) -> None:
        self._table = table

    def __getitem__(self, key):
        if key not in ("frame", "x_um", "y_um", "z_um"):
            raise AssertionError(f"the warp read '{key}'")
        return self._table[key]


def grid_table(shift: float = 0.0, frames: int = 3) -> pd.DataFrame:
    """A 3 x 3 x 2 grid of 18 points, 10 um apart, translated by ``shift * t`` along x."""
    g = np.stack(np.meshgrid(np.arange(3), np.arange(3), np.arange(2), indexing="ij"), -1)
    base = g.reshape(-1, 3) * 10.0
    rows = []
    for t in range(frames):
        for i, p in enumerate(base):
            rows.append({"recording": "r", "frame": t, "detection": i,
                         "x_um": p[0] + shift * t, "y_um": p[1], "z_um": p[2],
                         "pred_id": 100 + i, "pred_valid": True})
    return pd.DataFrame(rows)


def test_fit_reads_only_frames_and_coordinates():
    table = grid_table(shift=1.0)
    anchor = table.loc[table["frame"] == 0, ["x_um", "y_um", "z_um"]].to_numpy()
    registration = fit_registration(anchor, NoIdentities(table), 3)
    # A rigid translation by 1 um per frame is recovered: frame t = anchor + (t, 0, 0).
    expected = anchor[None] + np.array([[[0.0, 0, 0]], [[1.0, 0, 0]], [[2.0, 0, 0]]])
    np.testing.assert_allclose(registration.positions, expected, atol=0.05)


def turned(points: np.ndarray, degrees: float, centre, shift) -> np.ndarray:
    """``points`` turned by ``degrees`` about the z axis through ``centre``, then shifted."""
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return (points - centre) @ rotation.T + centre + shift


def test_first_frame_registers_a_partial_view_after_a_large_turn():
    """Frame 1 sees 25 of 80 neurons, turned by 60 degrees and moved by (30, -40, 0) um.

    Whole-cloud CPD would pull all 80 anchor points onto the 25 detections; the global pose
    vote finds the turn (on its 10-degree grid), and CPD from there lays each of the 25
    visible anchor points on its own detection (truth known by construction). The first
    EM step starts at one anchor spacing: at the default three, the 55 anchor points out of
    view are drawn onto the visible end (a partial view wants a tight start; the evidence
    table chooses this setting leave-one-out).
    """
    anchor = spread_points(80, [0, 0, 0], [200, 60, 15], spacing=6.0, seed=3)
    visible = np.argsort(anchor[:, 0], kind="stable")[:25]  # the 25 leftmost: one end
    truth = turned(anchor[visible], 60.0, anchor[visible].mean(0), [30.0, -40.0, 0.0])
    truth = truth + np.random.default_rng(4).normal(0, 0.3, truth.shape)
    detections = pd.DataFrame({"frame": 1, "x_um": truth[:, 0], "y_um": truth[:, 1],
                               "z_um": truth[:, 2]})
    registration = fit_registration(anchor, NoIdentities(detections), 2,
                                    RegistrationSettings(first_frame_sigma=1.0))
    moved = registration.positions[1, visible]
    error = np.linalg.norm(moved - truth, axis=1)
    assert np.median(error) < 0.5 and np.max(error) < 3.0  # half the 6 um spacing
    # every visible anchor point lands nearest its own detection: identities recovered
    nearest = np.linalg.norm(moved[:, None] - truth[None], axis=-1).argmin(axis=1)
    np.testing.assert_array_equal(nearest, np.arange(25))


def test_global_pose_keeps_a_still_frame_in_place():
    anchor = spread_points(40, [0, 0, 0], [100, 40, 10], spacing=5.0, seed=5)
    centred = anchor - anchor.mean(0)
    moved = global_pose(centred, centred[::-1] + 0.2, 5.0, RegistrationSettings())
    np.testing.assert_allclose(moved, centred + 0.2, atol=1e-9)


def scrambled_after_the_anchor(table: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """A copy of ``table`` whose later frames' ``pred_id`` are permuted and ``pred_valid``
    redrawn (half true), and the mask of those later rows."""
    shuffled = table.copy()
    later = shuffled["frame"].to_numpy() > 0
    rng = np.random.default_rng(seed)
    shuffled.loc[later, "pred_id"] = rng.permutation(shuffled.loc[later, "pred_id"].to_numpy())
    shuffled.loc[later, "pred_valid"] = rng.random(int(later.sum())) < 0.5
    return shuffled, later


def test_registration_ignores_predicted_ids_after_the_anchor():
    table = animal_observations(SpecimenConfig(frames=40, motion="free"), 0)
    shuffled, _ = scrambled_after_the_anchor(table, 0)
    _, clean = RegisteredDistance().register(table)
    _, scrambled = RegisteredDistance().register(shuffled)
    np.testing.assert_array_equal(clean.positions, scrambled.positions)


def test_scores_by_hand_on_a_translated_grid():
    table = grid_table(shift=1.0)
    swapped = table.copy()
    # Frame 2: detections 0 (0,0,0)+2 and 1 (0,0,10)+2 exchange ids: both 10 um off.
    rows = (swapped["frame"] == 2) & swapped["detection"].isin([0, 1])
    swapped.loc[rows, "pred_id"] = [101, 100]
    swapped.loc[swapped["detection"] == 5, "pred_valid"] = False
    verifier = RegisteredDistance(ambiguity_k=0.0)
    scores = verifier.score(swapped)
    assert np.nanmax(scores[~rows.to_numpy() & swapped["pred_valid"].to_numpy()]) < 0.1
    # each sits on the other's registered anchor: d = 10, alt = 0, and the one-to-one
    # assignment gives its detection to that other anchor point (distance 0), so the claim
    # is contradicted and pays c = the grid's nearest-neighbour spacing, 10 um:
    # 10 + max(0, 10 - 0) + 10 = 30
    np.testing.assert_allclose(scores[rows.to_numpy()], [30.0, 30.0], atol=0.2)
    assert np.isnan(scores[(swapped["detection"] == 5).to_numpy()]).all()
    # the call's record: 54 rows, none ambiguous, 3 invalid (detection 5 in each frame), k 0,
    # the 2 swapped rows contradicted
    assert verifier.abstentions == [Abstentions(rows=54, ambiguous=0, missing_evidence=3,
                                                ambiguity_k=0.0, contradicted=2)]
    # Without the assignment term: 10 + max(0, 10 - 0) = 20
    plain = RegisteredDistance(ambiguity_k=0.0, one_to_one=False).score(swapped)
    np.testing.assert_allclose(plain[rows.to_numpy()], [20.0, 20.0], atol=0.2)


def test_abstains_on_a_constructed_ambiguous_pair():
    """Ids 100 and 101 sit 1 um apart; every other neighbour is 10 um away.

    The scene is still, so the registration is the identity and its scale sigma sits at its
    floor, 0.1 median spacings = 1 um. Each of the pair's frame-1 rows has d = 0 and
    alt = 1 um: margin 1 < k sigma = 2 -> ambiguous. Every other row has margin 10 > 2.
    """
    table = grid_table(frames=2)
    pair = table["detection"].to_numpy() == 1
    table.loc[pair, "z_um"] = 1.0  # (0, 0, 10) -> (0, 0, 1), next to (0, 0, 0)
    verifier = RegisteredDistance(ambiguity_k=2.0)
    scores = verifier.score(table)
    _, registration = verifier.register(table)
    assert registration.sigma[1] == pytest.approx(1.0, rel=0.05)
    in_pair = (table["frame"].to_numpy() == 1) & np.isin(table["detection"], [0, 1])
    # Hand value 1 um; the soft (sigma = 1 um) assignment pulls the pair's registered
    # positions slightly together, so allow 0.15 um.
    np.testing.assert_allclose(verifier.last_margin[in_pair], [1.0, 1.0], atol=0.15)
    assert np.isnan(scores[in_pair]).all() and np.isfinite(scores[~in_pair]).all()
    assert (verifier.abstentions[-1].ambiguous, verifier.abstentions[-1].missing_evidence) == (2, 0)
    # Without the uniqueness rule the same rows keep their finite distance (about 0).
    plain = RegisteredDistance(ambiguity_k=0.0).score(table)
    assert np.nanmax(plain[in_pair]) < 0.15


def test_registered_beats_fixed_on_moving_specimen():
    config = build_config({"specimen.motion": "free", "specimen.frames": 120, "start": 36,
                           "recovery_end": 84})
    table = animal_observations(config.specimen, 0)
    results = {}
    for name in ("fixed_distance", "registered_distance"):
        scored, _, _ = score_conditions(table, config, load_verifier(name), "r")
        nearby = (scored["condition"] == "nearby_swap").to_numpy()
        results[name] = auroc_abstain_as_error(error_array(scored)[nearby],
                                               scored["score"].to_numpy()[nearby])
    assert results["registered_distance"] > 0.95 > results["fixed_distance"]


def test_builtin_and_independent():
    verifier = load_verifier("registered_distance")
    assert verifier.evidence == "independent" and verifier.name == "registered_distance"


def pair_table(example: str, roll: int = 0) -> pd.DataFrame:
    """Frame 0 = ``pts_gt``, frame 1 = ``pts_tar`` (rows present in both), ids = rows;
    frame 1's ids rolled by ``roll`` places (every row then carries another neuron's id)."""
    gt = np.load(PAIRS / example / "pts_gt.npy").astype(float)
    tar = np.load(PAIRS / example / "pts_tar.npy").astype(float)
    present0, present1 = ~np.isnan(gt).any(1), ~np.isnan(tar).any(1)
    both = np.flatnonzero(present0 & present1)

    def frame(points, ids, t, pred):
        df = pd.DataFrame(points[ids], columns=["x_um", "y_um", "z_um"])
        return df.assign(recording="p", frame=t, detection=ids, pred_id=pred, pred_valid=True)

    zero = np.flatnonzero(present0)
    return pd.concat([frame(gt, zero, 0, zero), frame(tar, both, 1, np.roll(both, roll))],
                     ignore_index=True)


@pytest.mark.skipif(not PAIRS.is_dir(), reason=f"real point-set pairs not found at {PAIRS}")
@pytest.mark.parametrize("example", ["ex3", "ex5"])
def test_real_pair_swaps_are_ranked_above_clean_rows(example):
    """ex5 is the hard one: 22 of 85 neurons in view, moved ~6 spacings, turned by
    about 60 degrees; the goal of the verifier is AUROC >= 0.90 on every real pair."""
    table, swapped = pair_table(example), pair_table(example, roll=7)
    later = np.flatnonzero(table["frame"].to_numpy() == 1)
    verifier = RegisteredDistance(ambiguity_k=0.0)
    clean = verifier.score(table)[later]
    wrong = verifier.score(swapped)[later]
    error = np.r_[np.zeros(len(later)), np.ones(len(later))]
    assert auroc_abstain_as_error(error, np.r_[clean, wrong]) > 0.90


def test_auroc_abstain_as_error_by_hand():
    # Labelled rows: (0, 0.1), (1, abstained), (1, 0.5), (0, abstained); row 4 unlabelled.
    # Error-vs-correct pairs: abst > 0.1 (1), abst = abst (1/2), 0.5 > 0.1 (1), 0.5 < abst (0).
    error = np.array([0, 1, 1, np.nan, 0])
    score = np.array([0.1, np.nan, 0.5, 3.0, np.inf])
    assert auroc_abstain_as_error(error, score) == pytest.approx(2.5 / 4)
    assert auroc_abstain_as_error(np.array([0.0, 0.0]), np.array([1.0, np.nan])) is None


def test_two_dimensional_data():
    """A 3 x 3 grid in 2-D looks the same turned by 90 degrees: the global pose keeps the
    smaller turn (none), so every row scores about 0."""
    table = grid_table(shift=1.0)
    table = table[table["z_um"] == 0].drop(columns="z_um")  # the 3 x 3 grid at z = 0, in 2-D
    scores = RegisteredDistance(ambiguity_k=0.0).score(table)
    assert np.nanmax(scores) < 0.1 and np.isfinite(scores).all()


def test_run_with_registered_distance(tmp_path):
    import json

    from tests.conftest import run_cli
    result = run_cli("run", "--verifier", "registered_distance", "--frames", "60", "--start",
                     "20", "--recovery-end", "40", "--motion", "moderate", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["verifier"]["evidence"] == "independent"
    pooled = results["anatomical_verification"]["pooled"]["all_conditions"]
    assert pooled["auroc"] > 0.95 and pooled["n_labelled_abstained"] > 0


def test_no_anchor_means_missing_evidence_everywhere():
    table = grid_table(shift=1.0)
    table.loc[table["frame"] == 0, "pred_valid"] = False
    verifier = RegisteredDistance()
    assert np.isnan(verifier.score(table)).all()
    assert (verifier.abstentions[-1].missing_evidence, verifier.abstentions[-1].ambiguous) == (54, 0)


def test_registration_onto_a_detection_table_ignores_every_identity():
    """With a detection table the fit reads its frames and coordinates, never an id: scrambling
    the observations' later ids and validity, or the detection table's ids, changes nothing."""
    table = animal_observations(SpecimenConfig(frames=30, motion="free", neurons=30), 0)
    coords = ["x_um", "y_um", "z_um"]
    extra = pd.DataFrame({"frame": np.repeat(np.arange(30), 4), "detection": 10_000 + np.arange(120)})
    extra[coords] = np.random.default_rng(1).uniform(-40, 40, (120, 3))  # unlabelled points
    detections = pd.concat([table[["frame", "detection", *coords]], extra], ignore_index=True)
    shuffled = table.copy()
    later = shuffled["frame"].to_numpy() > 0
    rng = np.random.default_rng(0)
    shuffled.loc[later, "pred_id"] = rng.permutation(shuffled.loc[later, "pred_id"].to_numpy())
    shuffled.loc[later, "pred_valid"] = rng.random(int(later.sum())) < 0.5
    renamed = detections.assign(detection=rng.permutation(len(detections)))
    _, clean = RegisteredDistance().register(table, detections)
    _, scrambled = RegisteredDistance().register(shuffled, renamed)
    np.testing.assert_array_equal(clean.positions, scrambled.positions)
    # the one-to-one assignment too: every row's detection goes to the same anchor point
    first, second = RegisteredDistance(), RegisteredDistance()
    first.score(table, detections)
    second.score(shuffled, renamed)
    assert (first.last_claimant >= 0).mean() > 0.9
    np.testing.assert_array_equal(first.last_claimant, second.last_claimant)
    # the merged-anchor rule too: which (frame, anchor) are merged is the same under scrambled
    # ids, and a row abstains as merged exactly where its own claimed anchor is merged at its
    # frame, whatever the other rows claim (m = 8, so that this scene has merged anchors)
    from trackverify.verifiers.registered_distance import merged_anchors

    merged = merged_anchors(clean.positions, clean.sigma, 8.0)
    np.testing.assert_array_equal(merged, merged_anchors(scrambled.positions, scrambled.sigma, 8.0))
    assert merged.sum() > 100
    for observed in (table, shuffled):
        verifier = RegisteredDistance(merge_k=8.0)
        verifier.score(observed, detections)
        which = pd.Index(table.loc[table["frame"] == 0, "pred_id"]).get_indexer(observed["pred_id"])
        frames = observed["frame"].to_numpy()
        own = (which >= 0) & observed["pred_valid"].to_numpy() & merged[frames, np.maximum(which, 0)]
        assert own.sum() > 0
        np.testing.assert_array_equal(verifier.last_merged, own)
    # and the fit itself reads only frame and coordinates of the detection table
    anchor = table.loc[table["frame"] == 0, coords].to_numpy()
    direct = fit_registration(anchor, NoIdentities(detections), 30)
    np.testing.assert_allclose(direct.positions, clean.positions, rtol=0, atol=1e-9)


def test_fitted_outlier_weight_by_hand():
    from trackverify.verifiers.registered_distance import fitted_outlier_weight

    # 70 anchor points, frames of 100, 120, 140 detections: median 120 -> 1 - 70/120 = 5/12
    assert fitted_outlier_weight(70, np.array([100, 140, 120])) == pytest.approx(5 / 12)
    # as many detections as anchor points: the floor
    assert fitted_outlier_weight(70, np.array([70, 70])) == 0.1
    assert fitted_outlier_weight(70, np.array([70]), floor=0.2) == 0.2
    # far more detections than anchor points: capped at 0.9
    assert fitted_outlier_weight(5, np.array([1000])) == 0.9


def test_better_start_keeps_the_start_nearer_the_detections():
    from trackverify.verifiers.registered_distance import _better_start

    x = np.array([[0.0, 0.0], [10.0, 0.0]])
    still, moving = x + [1.0, 0.0], x + [3.0, 0.0]
    # costs: min(1, 5)^2 = 1 for the first, min(3, 5)^2 = 9 for the second
    assert _better_start((still, moving), x, spacing=5.0) is still
    assert _better_start((moving, still), x, spacing=5.0) is still
    # one point lost far away is capped at the spacing: 1 point at 0 + 1 at 5 -> (0 + 25) / 2
    # beats 2 points at 4 -> 16 (cost 12.5 < 16)
    lost = np.array([[0.0, 0.0], [10.0, 40.0]])
    near = x + [4.0, 0.0]
    assert _better_start((near, lost), x, spacing=5.0) is lost
def test_ambiguity_band_is_strict_at_its_edge():
    """The scene of the ambiguous pair above. With k chosen so that k * sigma[1] equals the
    pair's |margin| exactly (in floating point), the row is *not* ambiguous (|alt - d| < k
    sigma is strict) and keeps its score; one ulp more of k makes it abstain; one less keeps
    it. The margin and sigma are read from the verifier; the rule under test is the band."""
    table = grid_table(frames=2)
    pair = table["detection"].to_numpy() == 1
    table.loc[pair, "z_um"] = 1.0
    probe = RegisteredDistance(ambiguity_k=0.0)
    probe.score(table)
    _, registration = probe.register(table)
    row = int(np.flatnonzero((table["frame"].to_numpy() == 1) & pair)[0])
    margin, sigma = abs(float(probe.last_margin[row])), float(registration.sigma[1])
    k = margin / sigma
    for _ in range(8):  # the k whose product with sigma is exactly the margin
        if k * sigma == margin:
            break
        k = np.nextafter(k, np.inf if k * sigma < margin else -np.inf)
    assert k * sigma == margin
    above, below = k, k
    while above * sigma <= margin:  # the next k whose band reaches past the margin
        above = np.nextafter(above, np.inf)
    while below * sigma >= margin:
        below = np.nextafter(below, -np.inf)
    for kk, ambiguous in ((k, False), (above, True), (below, False)):
        scores = RegisteredDistance(ambiguity_k=float(kk)).score(table)
        assert np.isnan(scores[row]) == ambiguous, (kk, kk * sigma, margin)


def test_assignment_gives_a_detection_to_the_point_that_fits_the_frame():
    """Frame 1: anchor points q = 0 at x = 0 and p = 1 at x = 3; detections j at 1.8, k at 4.5
    and one at 50; c = 10.

    j is nearer p (1.2) than q (1.8), but the cheapest one-to-one assignment is q -> j, p -> k
    (1.8 + 1.5 = 3.3; p -> j leaves q on k (4.5) or alone (10): 5.7 or 11.2). The point at 50
    is farther than c from both: nobody's. Frame 2 is unregistered (NaN): nobody's.
    The claim "p is j" is refused: exchanging the two costs (1.2 + 4.5) - (1.8 + 1.5) = 2.4 > 0.
    """
    registered = np.zeros((3, 2, 3))
    registered[1, 1, 0] = 3.0
    registered[2] = np.nan
    frames = np.array([1, 1, 1, 2])
    points = np.zeros((4, 3))
    points[:, 0] = [1.8, 4.5, 50.0, 0.0]
    owner, held = assign_detections(registered, frames, points, cap=10.0)
    np.testing.assert_array_equal(owner, [0, 1, -1, -1])
    np.testing.assert_array_equal(held, [[-1, -1], [0, 1], [-1, -1]])
    # claims (frame, anchor point, detection): p on j, q on j, p on k, p on the far point
    refused = contradicted_claims(registered, points, owner, held, 10.0,
                                  np.array([1, 1, 1, 1]), np.array([1, 0, 1, 1]),
                                  np.array([0, 0, 1, 2]))
    np.testing.assert_array_equal(refused, [True, False, False, False])


def test_assignment_tie_refuses_no_claim():
    """Two points at x = -1 and x = 1, one detection at 0, c = 10: either assignment costs
    1 + 10. Whichever point the solver picks, exchanging costs (1 + 10) - (1 + 10) = 0: a tie,
    so neither claim is refused."""
    registered = np.zeros((2, 2, 3))
    registered[1, :, 0] = [-1.0, 1.0]
    points = np.zeros((1, 3))
    owner, held = assign_detections(registered, np.array([1]), points, cap=10.0)
    assert owner[0] in (0, 1) and (held[1] >= 0).sum() == 1
    refused = contradicted_claims(registered, points, owner, held, 10.0, np.array([1, 1]),
                                  np.array([0, 1]), np.array([0, 0]))
    assert not refused.any()


def test_detection_of_points_and_anchor_spacing_by_hand():
    det_frames = np.array([1, 2, 1, 2])
    det_points = np.array([[0.0, 0, 0], [0, 0, 0], [5, 0, 0], [5, 0, 0]])
    # frame 1: (4.9, 0, 0) sits on detection 2, frame 2: (0.1, 0, 0) on detection 1;
    # frame 3 has no detection
    np.testing.assert_array_equal(
        detection_of_points(det_frames, det_points, np.array([1, 2, 3]),
                            np.array([[4.9, 0, 0], [0.1, 0, 0], [0, 0, 0]])), [2, 1, -1])
    # nearest-neighbour distances 1, 1, 2 (points at 0, 1, 3): median 1
    assert anchor_spacing(np.array([[0.0, 0, 0], [1, 0, 0], [3, 0, 0]])) == 1.0
    assert anchor_spacing(np.zeros((1, 3))) == float("inf")


def test_detection_of_points_by_id_falls_back_to_coordinates():
    """Ids that agree with the coordinates are used; an id pointing elsewhere is ignored."""
    det_frames = np.array([1, 1])
    det_points = np.array([[0.0, 0, 0], [5, 0, 0]])
    points = np.array([[5.0, 0, 0], [0.0, 0, 0]])
    # ids 8, 9 for the detections; the first point carries 9 (right), the second 9 (wrong:
    # it sits on detection 0)
    found = detection_of_points(det_frames, det_points, np.array([1, 1]), points,
                                np.array([8, 9]), np.array([9, 9]))
    np.testing.assert_array_equal(found, [1, 0])


def test_ambiguity_k_is_the_quantile_of_the_pooled_ratios():
    from trackverify.verifiers.registered_distance import ambiguity_k_from_ratios

    ratios = [np.array([1.0, 3.0]), np.array([2.0])]
    assert ambiguity_k_from_ratios(ratios) == 2.0            # the median by default
    assert ambiguity_k_from_ratios(ratios, quantile=1.0) == 3.0
    for empty in ([], [np.zeros(0)]):
        with pytest.raises(ValueError, match="^no clean row beyond the anchor frame could be scored$"):
            ambiguity_k_from_ratios(empty)


def test_constant_velocity_by_hand():
    """previous (2, 0), before (1, 0): one unit per frame. Two frames ahead of a step of 1
    frame -> (4, 0); of a step over 2 frames -> (3, 0); momentum 0.5 halves the move; no
    step (behind 0) keeps the last position."""
    from trackverify.verifiers.registered_distance import constant_velocity

    prev, before = np.array([2.0, 0.0]), np.array([1.0, 0.0])
    assert constant_velocity(prev, before, 2, 1).tolist() == [4.0, 0.0]
    assert constant_velocity(prev, before, 2, 2).tolist() == [3.0, 0.0]
    assert constant_velocity(prev, before, 2, 1, momentum=0.5).tolist() == [3.0, 0.0]
    assert constant_velocity(prev, before, 2, 0).tolist() == [2.0, 0.0]


def test_nearest_other_skips_the_point_itself():
    """Frame 0 anchors (0, 0), (10, 0), (0, 5); frame 1 anchors (0, 0), (1, 0), (50, 50).
    (0.1, 0) in frame 0, own 0: nearest other is (0, 5) at sqrt(0.01 + 25); (9, 0), own
    none: (10, 0) at 1; (0.2, 0) in frame 1, own 1: its nearest, (0, 0) at 0.2, is another."""
    from trackverify.verifiers.registered_distance import nearest_other

    registered = np.array([[[0.0, 0.0], [10.0, 0.0], [0.0, 5.0]],
                           [[0.0, 0.0], [1.0, 0.0], [50.0, 50.0]]])
    frames = np.array([1, 0, 0])
    points = np.array([[0.2, 0.0], [0.1, 0.0], [9.0, 0.0]])
    index, distance = nearest_other(registered, frames, points, np.array([1, 0, -1]))
    assert index.tolist() == [0, 2, 1]
    assert distance.dtype == np.float64
    np.testing.assert_allclose(distance, [0.2, np.sqrt(0.01 + 25.0), 1.0], rtol=1e-12)


def test_score_registers_onto_the_detection_table_given():
    """With a detection table the registration reads it, not the scored rows: a detection
    table without frame 2 leaves frame 2 unregistered, so its 18 rows abstain for missing
    evidence; without one, the rows' own detections register frame 2 and every row is
    scored (a rigid 1 um per frame translation: d about 0)."""
    table = grid_table(shift=1.0)
    detections = table.loc[table["frame"] < 2, ["frame", "detection", "x_um", "y_um", "z_um"]]
    verifier = RegisteredDistance()
    scores = verifier.score(table, detections)
    in_frame_2 = table["frame"].to_numpy() == 2
    assert np.isnan(scores[in_frame_2]).all() and np.isfinite(scores[~in_frame_2]).all()
    assert verifier.abstentions[-1].missing_evidence == 18
    # each row of frames 0 and 1 is its own detection, given to its own anchor point (row i
    # of a frame is detection i, anchor i: the registration is a translation); frame 2's
    # rows have no detection: -1
    claimant = verifier.last_claimant
    assert claimant.dtype == np.int64
    assert claimant[~in_frame_2].tolist() == list(range(18)) * 2
    assert claimant[in_frame_2].tolist() == [-1] * 18
    own = RegisteredDistance().score(table)
    assert np.isfinite(own).all() and np.nanmax(own) < 0.1
    # without the assignment there is no claimant
    plain = RegisteredDistance(one_to_one=False)
    plain.score(table)
    assert plain.last_claimant is None


def test_frame_groups_by_hand():
    """Groups by frame, frames ascending, each group in the order the rows are given."""
    groups = frame_groups(np.array([2, 0, 2, 1, 0]))
    assert [g.tolist() for g in groups] == [[1, 4], [3], [0, 2]]
    groups = frame_groups(np.array([2, 0, 2, 1, 0]), np.array([4, 2, 0, 3]))
    assert [g.tolist() for g in groups] == [[4], [3], [2, 0]]
    # many ties (beyond the sizes a sort handles by insertion): still the given order
    frames = np.random.default_rng(3).integers(0, 3, 200)
    rows = np.arange(200)[::-1]
    assert [g.tolist() for g in frame_groups(frames, rows)] == \
        [rows[frames[rows] == f].tolist() for f in range(3)]


def test_anchor_spacing_of_two_points_is_their_distance():
    assert anchor_spacing(np.array([[0.0, 0, 0], [3, 4, 0]])) == 5.0


def test_assignment_skips_frames_it_cannot_use_and_keeps_pairs_below_the_cap():
    """c = 3. Frame 0 (the anchor frame, assigned like any other): points at x = 0 and 10,
    detections at 0 (point 0, distance 0) and 13 (point 1 at exactly c: not kept). Frame 1
    has a NaN point: skipped. Frame 2: the detection at 7.5 is 2.5 from point 1: kept.
    Frame 3 lies beyond the registration: skipped."""
    registered = np.zeros((3, 2, 3))
    registered[:, 1, 0] = 10.0
    registered[1, 1] = np.nan
    frames = np.array([0, 0, 1, 2, 3])
    points = np.zeros((5, 3))
    points[:, 0] = [0.0, 13.0, 0.0, 7.5, 0.0]
    owner, held = assign_detections(registered, frames, points, cap=3.0)
    assert owner.tolist() == [0, -1, -1, 1, -1]
    assert held.tolist() == [[0, -1], [-1, -1], [-1, 3]]
    # no detection, or no anchor point: nothing is assigned
    owner, held = assign_detections(registered, np.zeros(0, np.int64), np.zeros((0, 3)), 3.0)
    assert owner.shape == (0,) and held.tolist() == [[-1, -1]] * 3
    owner, held = assign_detections(np.zeros((2, 0, 3)), np.array([0, 1]), np.zeros((2, 3)), 3.0)
    assert owner.tolist() == [-1, -1] and held.shape == (2, 0)


def test_contradicted_claims_of_anchor_point_zero_holding_detection_zero():
    """The scene of the assignment test above with the roles of the indices exchanged: p = 0
    at x = 3 holds k = detection 0 (x = 4.5), q = 1 at x = 0 owns j = detection 1 (x = 1.8).
    The claim "p is j": (1.2 + 4.5) - (1.8 + 1.5) = 2.4 > 0, refused; q's own claim on j is
    not. A row without an anchor point (-1) or without a detection (-1) claims nothing."""
    registered = np.zeros((2, 2, 3))
    registered[1, 0, 0] = 3.0
    points = np.zeros((2, 3))
    points[:, 0] = [4.5, 1.8]
    owner, held = assign_detections(registered, np.array([1, 1]), points, cap=10.0)
    assert owner.tolist() == [0, 1] and held[1].tolist() == [0, 1]
    refused = contradicted_claims(registered, points, owner, held, 10.0, np.array([1, 1, 1, 1]),
                                  np.array([0, 1, -1, 0]), np.array([1, 1, 1, -1]))
    assert refused.tolist() == [True, False, False, False]


@pytest.mark.parametrize("epsilon, refused", [(5e-9, False), (2e-8, True)])
def test_contradicted_claims_tolerance_is_1e_9_cap(epsilon, refused):
    """Points at x = 4 (q) and 6 + epsilon (p), one detection at 5, c = 10: q gets it, p
    holds nothing. Exchanging costs ((1 + epsilon) + 10) - (1 + 10) = epsilon: a tie below
    1e-9 c = 1e-8, a refusal above (the claim made by two rows: each row on its own)."""
    registered = np.zeros((2, 2, 3))
    registered[1, :, 0] = [4.0, 6.0 + epsilon]
    points = np.array([[5.0, 0, 0]])
    owner, held = assign_detections(registered, np.array([1]), points, cap=10.0)
    assert owner.tolist() == [0] and held[1].tolist() == [0, -1]
    got = contradicted_claims(registered, points, owner, held, 10.0, np.array([1, 1]),
                              np.array([1, 1]), np.array([0, 0]))
    assert got.tolist() == [refused, refused]


def test_detection_of_points_ids_on_one_side_only_or_repeated():
    """Ids only for the points (the detection table has none): coordinates decide. Ids that
    repeat in a frame (8 twice) identify nothing: coordinates decide. Every point found by
    its id: the ids decide, even between two detections at the same place. One detection
    and an id it does not carry: coordinates."""
    det_frames = np.array([1, 1, 1])
    det_points = np.array([[0.0, 0, 0], [5, 0, 0], [5, 0, 0]])
    points = np.array([[5.0, 0, 0], [0.0, 0, 0]])
    frames = np.array([1, 1])
    found = detection_of_points(det_frames, det_points, frames, points, None, np.array([7, 8]))
    assert found.tolist() == [1, 0]
    found = detection_of_points(det_frames, det_points, frames, points, np.array([8, 8, 9]),
                                np.array([9, 8]))
    assert found.tolist() == [1, 0]
    found = detection_of_points(det_frames, det_points, frames, points, np.array([7, 8, 9]),
                                np.array([9, 7]))
    assert found.tolist() == [2, 0]
    found = detection_of_points(np.array([1]), np.array([[1.0, 0, 0]]), np.array([1]),
                                np.array([[0.0, 0, 0]]), np.array([3]), np.array([4]))
    assert found.tolist() == [0]


def test_detection_of_points_by_id_between_coincident_detections():
    """Detections 0 and 19 of a 20-detection frame lie at the same place: the point carrying
    detection 0's id is detection 0 (its id, and it lies exactly there), whatever a k-d tree
    would pick between the two. A second point whose id points elsewhere (it sits on
    detection 5, its id is detection 7's) goes by coordinates: 5; the first keeps its id."""
    rng = np.random.default_rng(0)
    det_points = rng.uniform(0, 100, (20, 3))
    det_points[19] = det_points[0]
    det_frames, det_ids = np.ones(20, np.int64), 100 + np.arange(20)
    found = detection_of_points(det_frames, det_points, np.array([1]), det_points[[0]],
                                det_ids, np.array([100]))
    assert found.tolist() == [0]
    found = detection_of_points(det_frames, det_points, np.array([1, 1]), det_points[[0, 5]],
                                det_ids, np.array([100, 107]))
    assert found.tolist() == [0, 5]
    # the point carrying detection 19's id is 19 (by coordinates the tie rule would give 0),
    # also next to a point whose id points elsewhere
    found = detection_of_points(det_frames, det_points, np.array([1, 1]), det_points[[19, 5]],
                                det_ids, np.array([119, 107]))
    assert found.tolist() == [19, 5]


def test_detection_of_points_tie_goes_to_the_first_detection_in_row_order():
    """Frame 1's detections 2 (1, 0, 0), 4 (-1, 0, 0) and 5 (0, 0, 1) are all exactly 1 from
    the origin (detection 1 is 2 away): the smallest index, 2. Frame 2's detections 0 and 3
    lie at one place: 0. The same table in reverse row order (index i becomes 5 - i): the
    tie goes to the first row again, now detection 0 (the old 5) and 2 (the old 3)."""
    det_frames = np.array([2, 1, 1, 2, 1, 1])
    det_points = np.array([[7.0, 7, 0], [0, 2, 0], [1, 0, 0], [7, 7, 0], [-1, 0, 0], [0, 0, 1]])
    frames, points = np.array([1, 2]), np.array([[0.0, 0, 0], [7, 7, 0]])
    assert detection_of_points(det_frames, det_points, frames, points).tolist() == [2, 0]
    assert detection_of_points(det_frames[::-1], det_points[::-1], frames,
                               points).tolist() == [0, 2]


def test_detection_of_points_tie_among_many():
    """Frame 1: detections 0-2 at distance 3 from the origin, 3-8 on the six axes at distance
    exactly 1: detection 3, the first of six tied (more than the 2 and 4 nearest asked for
    first). Frame 2: 40 detections, 25 of them (shuffled row positions) at one place: the
    smallest of the 25 indices. Frame 3 has one detection: it."""
    axes = np.vstack([np.eye(3), -np.eye(3)])
    frame1 = np.vstack([[[3.0, 0, 0], [0, -3, 0], [0, 0, 3]], axes[[4, 0, 5, 2, 1, 3]]])
    rng = np.random.default_rng(3)
    frame2 = rng.uniform(10, 20, (40, 3))
    same = rng.permutation(40)[:25]
    frame2[same] = [15.0, 15, 15]
    det_points = np.vstack([frame1, frame2, [[0.0, 0, 0]]])
    det_frames = np.repeat([1, 2, 3], [9, 40, 1])
    frames, points = np.array([1, 2, 3]), np.array([[0.0, 0, 0], [15, 15, 15], [4, 4, 4]])
    found = detection_of_points(det_frames, det_points, frames, points)
    assert found.tolist() == [3, 9 + same.min(), 49]
    # the helper itself: indices into the candidates, as int64
    got = nearest_smallest_index(det_points, np.arange(9), np.zeros((1, 3)))
    assert got.tolist() == [3] and got.dtype == np.int64


def test_contradicted_claims_each_row_on_its_own_and_an_exchange_tie():
    """One call, three frames, c = 10 (1-D unless said). Frame 1: q = 0 at 0 owns j at 1.8,
    p = 1 at 3 holds k at 4.5: "p is j" costs (1.2 + 4.5) - (1.8 + 1.5) = 2.4 > 0, refused.
    Frame 2: p = 0 at 0 holds k at 8, q = 1 at 20 owns j at 19: "p is j" costs
    (19 + min(12, 10)) - (1 + 8) = 20, refused. Frame 3 (2-D): q, p at (0, 0), (2, 0) and
    detections at (1, 1), (1, -1), every distance sqrt 2: whichever way the tie is assigned,
    exchanging costs 0, so neither point's claim on the other's detection is refused."""
    registered = np.zeros((4, 2, 3))
    registered[1, :, 0] = [0.0, 3.0]
    registered[2, :, 0] = [0.0, 20.0]
    registered[3, 1, 0] = 2.0
    frames = np.array([1, 1, 2, 2, 3, 3])
    points = np.zeros((6, 3))
    points[:, 0] = [1.8, 4.5, 8.0, 19.0, 1.0, 1.0]
    points[4:, 1] = [1.0, -1.0]
    owner, held = assign_detections(registered, frames, points, cap=10.0)
    assert owner[:4].tolist() == [0, 1, 0, 1] and sorted(owner[4:].tolist()) == [0, 1]
    other = 1 - owner[4:]  # the point that does not own each frame-3 detection
    refused = contradicted_claims(registered, points, owner, held, 10.0,
                                  np.array([1, 2, 3, 3]), np.r_[1, 0, other],
                                  np.array([0, 3, 4, 5]))
    assert refused.tolist() == [True, True, False, False]


def test_contradicted_claims_at_exactly_1e_9_cap():
    """c = 1e9, so the tolerance 1e-9 c is exactly 1. q at 0 owns the detection at 1; p at 3
    holds nothing: exchanging costs (2 + c) - (1 + c) = 1 exactly, not above 1: no refusal."""
    registered = np.zeros((2, 2, 3))
    registered[1, 1, 0] = 3.0
    points = np.array([[1.0, 0, 0]])
    owner, held = assign_detections(registered, np.array([1]), points, cap=1e9)
    assert owner.tolist() == [0] and held[1].tolist() == [0, -1]
    assert contradicted_claims(registered, points, owner, held, 1e9, np.array([1]),
                               np.array([1]), np.array([0])).tolist() == [False]


def test_a_single_anchor_point_is_scored():
    """Only detection 0 is trusted in the anchor frame: one anchor point. Its rows are
    scored (the grid translates rigidly: d about 0, no other anchor to be nearer); every
    other row's id has no anchor: 3 x 17 = 51 rows abstain for missing evidence."""
    table = grid_table(shift=1.0)
    table.loc[(table["frame"] == 0) & (table["detection"] != 0), "pred_valid"] = False
    verifier = RegisteredDistance()
    scores = verifier.score(table)
    own = table["detection"].to_numpy() == 0
    assert np.isfinite(scores[own]).all() and np.nanmax(scores[own]) < 0.1
    assert np.isnan(scores[~own]).all()
    assert verifier.abstentions[-1] == Abstentions(rows=54, ambiguous=0, missing_evidence=51,
                                                   ambiguity_k=0.0, contradicted=0)


def test_two_predictions_on_one_detection_register_it_once():
    """A second (invalid) prediction row on detection 3 of frame 1 adds no detection: the
    registration fitted on the table is exactly the one without that row."""
    table = grid_table(shift=1.0)
    extra = table[(table["frame"] == 1) & (table["detection"] == 3)].assign(pred_id=999,
                                                                         pred_valid=False)
    doubled = pd.concat([table, extra], ignore_index=True)
    _, once = RegisteredDistance().register(table)
    _, twice = RegisteredDistance().register(doubled)
    np.testing.assert_array_equal(twice.positions, once.positions)


def test_detections_of_the_scored_rows_without_and_with_detection_ids():
    """Without a detection column the rows' own detections are one per (frame, coordinates):
    the registration is the one fitted on the grid's detections. With detection ids, two
    detections at the same place (detection 1 moved onto detection 0 in frame 1) are two
    points: the fit equals the one on that explicit detection table."""
    table = grid_table(shift=1.0)
    coords = ["x_um", "y_um", "z_um"]
    detections = table[["frame", "detection", *coords]]
    _, given = RegisteredDistance().register(table, detections)
    _, without_ids = RegisteredDistance().register(table.drop(columns="detection"))
    np.testing.assert_array_equal(without_ids.positions, given.positions)
    moved = table.copy()
    onto = (moved["frame"] == 1) & (moved["detection"] == 1)
    moved.loc[onto, coords] = moved.loc[(moved["frame"] == 1) & (moved["detection"] == 0),
                                        coords].to_numpy()
    _, own = RegisteredDistance().register(moved)
    _, explicit = RegisteredDistance().register(moved, moved[["frame", "detection", *coords]])
    np.testing.assert_array_equal(own.positions, explicit.positions)


def test_score_rows_on_two_detections_at_one_place_keep_their_own_detections():
    """Frame 2: detections 0 and 1 (ids 100, 101) both moved to (2, 0, 5), half way between
    their anchors; the scored rows carry their detection ids. Each row's detection is its
    own id's (it lies exactly there), so the two rows claim two detections, which the
    assignment gives to the two anchor points: their claimants are anchor points 0 and 1,
    one each, whichever way the exact tie between the two detections is assigned. Scored
    without a detection column (the rows' own coordinates as detections), every row of the
    translated grid stays near 0."""
    table = grid_table(shift=1.0)
    both = (table["frame"] == 2) & table["detection"].isin([0, 1])
    table.loc[both, ["x_um", "y_um", "z_um"]] = [2.0, 0.0, 5.0]
    verifier = RegisteredDistance()
    verifier.score(table)
    assert sorted(verifier.last_claimant[both.to_numpy()].tolist()) == [0, 1]
    plain = RegisteredDistance().score(grid_table(shift=1.0).drop(columns="detection"))
    assert np.isfinite(plain).all() and np.nanmax(plain) < 0.1


#: The three-point scene's 2-D points and the y offsets of their frame-1 rows.
SCENE_POINTS = np.array([[0.0, 0.0], [4.0, 0.0], [20.0, 0.0]])
SCENE_OFFSETS = np.array([1.0, 0.0, 3.0])


def three_point_scene(order=(0, 1, 2)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """2-D anchor ids 0, 1, 2 at ``SCENE_POINTS[order]`` (by default (0, 0), (4, 0),
    (20, 0)), still in frame 1 (the frame-1 detections are the anchor positions); the
    frame-1 rows of the points (0, 0) and (20, 0) sit 1 um and 3 um off their detections,
    at (0, 1) and (20, 3)."""
    anchor = SCENE_POINTS[list(order)]
    moved = anchor + np.c_[np.zeros(3), SCENE_OFFSETS[list(order)]]
    rows = [(0, i, i, *anchor[i]) for i in range(3)] + [(1, i, i, *moved[i]) for i in range(3)]
    table = pd.DataFrame(rows, columns=["frame", "detection", "pred_id", "x_um", "y_um"])
    table = table.assign(recording="r", pred_valid=True)
    detections = pd.DataFrame({"frame": [0, 0, 0, 1, 1, 1], "detection": [0, 1, 2] * 2,
                               "x_um": np.tile(anchor[:, 0], 2), "y_um": np.tile(anchor[:, 1], 2)})
    return table, detections


def test_relative_score_orders_two_rows_unlike_the_distance():
    """Three-point scene by hand: spacings s = (4, 4, 16) (nearest other anchor), median
    c = 4, factors c / s = (1, 1, 0.25). Frame 1 is still, so the registered anchor is the
    anchor. Row of id 0: d = 1, nearest other anchor (4, 0) at sqrt(17) > 1, its detection
    its own -> distance score 1, relative 1 x 1 = 1. Row of id 2: d = 3, nearest other
    (4, 0) at sqrt(265) > 3 -> distance score 3, relative 3 x 0.25 = 0.75. By distance id 2's
    row is the more suspicious, by the relative score id 0's (3 um in a 16 um gap is less
    than 1 um in a 4 um one)."""
    table, detections = three_point_scene()
    np.testing.assert_allclose(identity_spacings(np.array([[0.0, 0], [4, 0], [20, 0]])),
                               [4.0, 4.0, 16.0])
    np.testing.assert_allclose(spacing_factors(np.array([[0.0, 0], [4, 0], [20, 0]])),
                               [1.0, 1.0, 0.25])
    later = table["frame"].to_numpy() == 1
    distance = RegisteredDistance(score="distance").score(table, detections)[later]
    relative = RegisteredDistance(score="relative").score(table, detections)[later]
    np.testing.assert_allclose(distance, [1.0, 0.0, 3.0], atol=1e-3)
    np.testing.assert_allclose(relative, [1.0, 0.0, 0.75], atol=1e-3)
    assert distance[0] < distance[2] and relative[0] > relative[2]


def test_spacing_reads_the_anchor_frame_coordinates_only():
    """The relative score's spacings come from the anchor frame's identities: scrambling
    every later frame's pred_id and pred_valid and moving every later row leaves the factors
    bit-identical; moving one anchor-frame point changes them."""
    table = animal_observations(SpecimenConfig(frames=20, motion="free"), 0)
    changed, later = scrambled_after_the_anchor(table, 1)
    changed.loc[later, "x_um"] += np.random.default_rng(2).normal(0, 5.0, int(later.sum()))
    verifier, other = RegisteredDistance(), RegisteredDistance()
    verifier.register(table)
    other.register(changed)
    np.testing.assert_array_equal(verifier.spacing_factor, other.spacing_factor)
    first = np.flatnonzero(~later)[0]
    changed.loc[first, "x_um"] += 50.0
    other.register(changed)
    assert not np.array_equal(verifier.spacing_factor, other.spacing_factor)


def test_identities_on_one_anchor_position_abstain_under_the_relative_score():
    """Detection 1 (id 101) sits on detection 0 (id 100) in every frame: both ids have
    s_p = 0, so their 2 x 3 rows abstain for missing evidence with the relative score (and
    are scored with the distance); the other 16 x 3 rows are scored."""
    table = grid_table(shift=1.0)
    on = table["detection"].to_numpy() == 1
    table.loc[on, ["x_um", "y_um", "z_um"]] = table.loc[table["detection"] == 0,
                                                        ["x_um", "y_um", "z_um"]].to_numpy()
    pair = np.isin(table["detection"].to_numpy(), [0, 1])
    verifier = RegisteredDistance(score="relative")
    scores = verifier.score(table)
    assert np.isnan(scores[pair]).all() and np.isfinite(scores[~pair]).all()
    counts = verifier.abstentions[-1]
    # the pair's rows are missing evidence, not ambiguous or contradicted (k = 0; every other
    # detection is its own identity's)
    assert (counts.missing_evidence, counts.ambiguous, counts.contradicted) == (6, 0, 0)
    assert np.isfinite(RegisteredDistance(score="distance").score(table)[pair]).all()


def test_unknown_score_is_refused():
    with pytest.raises(ConfigError, match="score must be one of"):
        RegisteredDistance(score="ratio")


def test_identity_spacings_and_factors_at_their_edges():
    """By hand: one point has no neighbour (inf); a spacing below 1 um is a spacing; two
    identities on one anchor position have none (factor NaN, silently: only the division by
    zero is expected); two coincident points alone have no median spacing either."""
    assert identity_spacings(np.array([[3.0, 4.0]])).tolist() == [np.inf]
    np.testing.assert_allclose(spacing_factors(np.array([[0.0, 0], [0.5, 0], [2, 0]])),
                               [1.0, 1.0, 1 / 3])  # s = (0.5, 0.5, 1.5), c = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factors = spacing_factors(np.array([[0.0, 0], [0, 0], [4, 0], [9, 0]]))
    # s = (0, 0, 4, 5), c = 2: (NaN, NaN, 2 / 4, 2 / 5)
    np.testing.assert_allclose(factors, [np.nan, np.nan, 0.5, 0.4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0 / 0: the median spacing is 0 too
        assert np.isnan(spacing_factors(np.array([[1.0, 1], [1, 1]]))).all()


def test_relative_factor_is_the_claimed_identitys_own_and_the_counts_stay():
    """The three-point scene with its points listed from the far one: id 0 at (20, 0), id 1
    at (0, 0), id 2 at (4, 0); factors c / s = (0.25, 1, 1). Frame 1: id 0's row 3 um off,
    id 1's 1 um off -> relative scores 3 x 0.25 = 0.75 and 1 x 1 = 1. The factor of each row
    is kept (``last_factor``: 1 everywhere under the distance), and with k = 0 and every
    detection its own identity's, no row is ambiguous or contradicted under either score."""
    table, detections = three_point_scene(order=(2, 0, 1))
    relative, distance = RegisteredDistance(score="relative"), RegisteredDistance(score="distance")
    later = table["frame"].to_numpy() == 1
    np.testing.assert_allclose(relative.score(table, detections)[later], [0.75, 1.0, 0.0],
                               atol=1e-3)
    np.testing.assert_allclose(distance.score(table, detections)[later], [3.0, 1.0, 0.0],
                               atol=1e-3)
    np.testing.assert_allclose(relative.last_factor[later], [0.25, 1.0, 1.0])
    assert distance.last_factor.tolist() == [1.0] * 6
    for verifier in (relative, distance):
        counts = verifier.abstentions[-1]
        assert (counts.ambiguous, counts.contradicted) == (0, 0)


def test_relative_score_without_anchor_identities_abstains_on_every_row():
    """No valid row in the anchor frame: no anchor identity, no spacing; all 6 rows abstain
    for missing evidence under the relative score, as under the distance."""
    table, _ = three_point_scene(order=(2, 0, 1))
    table = table.assign(pred_valid=table["frame"] > 0)
    for kind in ("relative", "distance"):
        verifier = RegisteredDistance(score=kind)
        assert np.isnan(verifier.score(table)).all()
        assert verifier.abstentions[-1] == Abstentions(6, 0, 6, 0.0, 0)


# --- merged anchors (merge_k; docs/reference/verifiers.md "Merged anchors") ---------------------------

def test_merged_anchors_by_hand():
    """Frame 1: anchors at (0, 0), (1, 0), (10, 0), sigma 1: the first two are 1.0 apart,
    under 2 sigma = 2.0, so both are merged; the third's nearest other is 9 away. Frame 2: the
    same with the pair 3.0 apart: nothing merged. Frame 3: the pair exactly 2.0 apart (the
    rule is strict): nothing. Frame 4 was not registered (NaN), frame 0 is the anchor (sigma
    0): nothing. With m = 0 nothing anywhere; with m = 4 (radius 4) frame 2's pair too."""
    from trackverify.verifiers.registered_distance import merged_anchors

    registered = np.array([
        [[0.0, 0.0], [5.0, 0.0], [10.0, 0.0]],
        [[0.0, 0.0], [1.0, 0.0], [10.0, 0.0]],
        [[0.0, 0.0], [3.0, 0.0], [10.0, 0.0]],
        [[0.0, 0.0], [2.0, 0.0], [10.0, 0.0]],
        [[np.nan, np.nan]] * 3])
    sigma = np.array([0.0, 1.0, 1.0, 1.0, np.nan])
    merged = merged_anchors(registered, sigma, 2.0)
    assert merged.tolist() == [[False] * 3, [True, True, False], [False] * 3, [False] * 3,
                               [False] * 3]
    assert not merged_anchors(registered, sigma, 0.0).any()
    assert merged_anchors(registered, sigma, 4.0)[2].tolist() == [True, True, False]
    # two anchor points at one place: merged at any positive sigma; one point alone never
    assert merged_anchors(np.zeros((2, 2, 3)), np.array([0.0, 0.5]), 2.0).tolist() == [
        [False, False], [True, True]]
    assert merged_anchors(np.zeros((2, 1, 3)), np.array([0.0, 1.0]), 2.0).tolist() == [
        [False], [False]]


def three_id_table() -> pd.DataFrame:
    """Ids 10, 11, 12 in frames 0-2 (2-D), each row on its registered anchor of
    :func:`fixed_registration` except id 12, 0.5 um off along x in frames 1 and 2."""
    anchors = {0: [[0.0, 0.0], [5.0, 0.0], [10.0, 0.0]], 1: [[0.0, 0.0], [1.0, 0.0], [10.5, 0.0]],
               2: [[0.0, 0.0], [3.0, 0.0], [10.5, 0.0]]}
    rows = [{"recording": "r", "frame": t, "detection": i, "x_um": p[0], "y_um": p[1],
             "pred_id": 10 + i, "pred_valid": True}
            for t, points in anchors.items() for i, p in enumerate(points)]
    return pd.DataFrame(rows)


def fixed_registration(monkeypatch):
    """Make the verifier's fit return a registration set by hand: frame 1's anchors 0 and 1
    are 1.0 apart, frame 2's 3.0 apart, sigma 1 in both (anchor 2 at x = 10)."""
    from trackverify.verifiers import registered_distance as module

    positions = np.array([[[0.0, 0.0], [5.0, 0.0], [10.0, 0.0]],
                          [[0.0, 0.0], [1.0, 0.0], [10.0, 0.0]],
                          [[0.0, 0.0], [3.0, 0.0], [10.0, 0.0]]])
    fixed = module.Registration(positions, np.array([0.0, 1.0, 1.0]))
    monkeypatch.setattr(module, "fit_registration", lambda *args, **kwargs: fixed)


def test_a_row_whose_identity_is_merged_abstains_with_its_own_reason(monkeypatch):
    """By hand on :func:`fixed_registration`: every row sits on its own registered anchor
    (d = 0, score 0) except id 12 in frames 1-2 (d = 0.5, nearest other 9.5 away: score 0.5).
    With m = 2, frame 1's ids 10 and 11 are merged (1.0 < 2 sigma = 2.0): their two rows
    abstain (NaN) and are counted as merged, not ambiguous; frame 2's pair (3.0 apart) is
    not. With m = 0 the same rows keep the scores of before, exactly."""
    fixed_registration(monkeypatch)
    table = three_id_table()
    expected_off = np.array([0, 0, 0, 0, 0, 0.5, 0, 0, 0.5])
    off = RegisteredDistance(track_window=0, merge_k=0.0)
    np.testing.assert_array_equal(off.score(table), expected_off)
    assert off.abstentions[-1] == Abstentions(9, 0, 0, 0.0, 0, 0)
    assert not off.last_merged.any()
    on = RegisteredDistance(track_window=0, merge_k=2.0)
    scores = on.score(table)
    np.testing.assert_array_equal(scores, [0, 0, 0, np.nan, np.nan, 0.5, 0, 0, 0.5])
    assert on.abstentions[-1] == Abstentions(rows=9, ambiguous=0, missing_evidence=0,
                                             ambiguity_k=0.0, contradicted=0, merged=2)
    assert np.flatnonzero(on.last_merged).tolist() == [3, 4]
    # the run's breakdown carries the reason
    from trackverify.verifiers import abstention_breakdown

    assert abstention_breakdown(on) == {"ambiguous": 0, "missing_evidence": 0,
                                        "contradicted": 0, "merged": 2}
    # the default: the rule off, so the scores of before
    assert RegisteredDistance().merge_k == 0.0
    np.testing.assert_array_equal(RegisteredDistance(track_window=0).score(table), expected_off)
    # pooled along the tracks, the merged rows stay abstained
    assert np.isnan(RegisteredDistance(merge_k=2.0).score(table)[[3, 4]]).all()


def test_a_merged_row_the_band_already_abstains_on_stays_ambiguous(monkeypatch):
    """Frame 1, id 10 (on its anchor): d = 0, alt = 1.0 -> |margin| 1 < k sigma with k = 1.5:
    ambiguous by the band; id 11 likewise. So with both rules on, the band's reason comes
    first: 2 ambiguous, 0 merged (frame 2's pair: margin 3 > 1.5, not merged at m = 2)."""
    fixed_registration(monkeypatch)
    verifier = RegisteredDistance(ambiguity_k=1.5, track_window=0, merge_k=2.0)
    scores = verifier.score(three_id_table())
    assert np.isnan(scores[[3, 4]]).all() and np.isfinite(np.delete(scores, [3, 4])).all()
    assert (verifier.abstentions[-1].ambiguous, verifier.abstentions[-1].merged) == (2, 0)


def test_the_audit_names_the_merged_reason(monkeypatch):
    """The audit of the same scene: frame 1's rows of ids 10 and 11 are abstained with reason
    'merged', and audit.json's counts say so."""
    import trackverify

    fixed_registration(monkeypatch)
    result = trackverify.audit(three_id_table(), threshold_um=1.0,
                               verifier=RegisteredDistance(track_window=0, merge_k=2.0))
    obs = result.observations
    merged = obs["reason"].eq("merged").to_numpy()
    assert np.flatnonzero(merged).tolist() == [3, 4]
    assert (obs["verdict"].to_numpy()[merged] == "abstained").all()
    assert result.summary["counts"]["abstained_by_reason"] == {"merged": 2}
    assert result.summary["verifier_options"]["merge_k"] == 2.0


@pytest.mark.parametrize("bad", [-1, -0.5, float("nan"), float("inf"), True, "2", None])
def test_merge_k_must_be_a_finite_number_of_at_least_zero(bad):
    with pytest.raises(ConfigError, match="merge_k must be a finite number >= 0"):
        RegisteredDistance(merge_k=bad)
