"""A2 registration: hand-computed ratios on synthetic experiments (px/mm 18.9)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from trackverify.errors import InputError
from trackverify.stages import synthetic as S

PXPERMM = 18.9


def _write(root, name, trx):
    S.write_pickle(root / name / "registered_trx.pkl", S.file_trx(trx))


@pytest.fixture
def experiments_pair(tmp_path):
    refs = [S.fly_experiment(seed, n_flies=4, n_frames=200, pxpermm=PXPERMM) for seed in (1, 2)]
    for k, t in enumerate(refs):
        _write(tmp_path / "ref", f"exp_{k + 1}", t)
    return tmp_path, refs


def _shift_x_mm(trx, delta):
    out = copy.deepcopy(trx)
    out["x_mm"] = [x + delta for x in out["x_mm"]]
    return out


def test_perfect_submission_scores_two(experiments_pair, run_stage):
    root, refs = experiments_pair
    for k, t in enumerate(refs):
        perm = copy.deepcopy(t)        # trajectories in another order: Hungarian alignment
        for key in ("x", "y", "theta", "a", "b", "x_mm", "y_mm", "theta_mm", "a_mm", "b_mm",
                    "dt", "off", "pxpermm"):
            perm[key] = perm[key][::-1]
        _write(root / "sub", f"exp_{k + 1}", perm)
    res = run_stage("registration", root)
    assert res.score == pytest.approx(2.0) and res.verdict == "pass" and not res.problems
    assert res.per_experiment["exp_1"]["coverage"]["coverage"] == pytest.approx(1.0)


def test_shifted_x_mm_hand_computed(experiments_pair, run_stage):
    root, refs = experiments_pair
    _write(root / "sub", "exp_1", _shift_x_mm(refs[0], 0.1))   # 0.1 mm = 1.89 px
    _write(root / "sub", "exp_2", refs[1])
    res = run_stage("registration", root)
    crit = res.per_experiment["exp_1"]["criteria"]
    # x residual: max = mean = 0.1 mm; tau_max = 5/18.9 mm, tau_mean = 2.5/18.9 mm
    assert crit["x_mm_mean_residual"]["ratio"] == pytest.approx(2.5 / 18.9 / 0.1)
    assert crit["x_mm_max_residual"]["ratio"] == 2.0            # 2.646 capped
    # implied centre moves by s * 0.1 = 1.89 px: r = 5 / 1.89 = 2.65 -> 2
    assert crit["center_error"]["error"] == pytest.approx(1.89)
    expected = (14 * 2.0 + (2.5 / 18.9 / 0.1 + 2.0) / 2) / 15
    assert res.score == pytest.approx(expected)
    assert res.verdict == "pass"
    assert res.per_experiment["exp_1"]["pixel_fields_max_abs_difference_px"] == \
        {"x": 0.0, "y": 0.0}


def test_large_shift_is_partial_then_fail(experiments_pair, run_stage):
    root, refs = experiments_pair
    _write(root / "sub", "exp_1", _shift_x_mm(refs[0], 0.2))
    _write(root / "sub", "exp_2", refs[1])
    res = run_stage("registration", root)
    # exp_1: x mean residual r = (2.5/18.9)/0.2 = 0.661 < 1 -> exp_1 fails (1 of 2 pass);
    # criterion average (0.661 + 2)/2 = 1.33 >= 1 for every criterion -> partial
    assert res.per_experiment["exp_1"]["criteria"]["x_mm_mean_residual"]["ratio"] == \
        pytest.approx(2.5 / 18.9 / 0.2)
    assert res.per_experiment["exp_1"]["passed"] is False
    assert res.verdict == "partial"
    _write(root / "sub", "exp_2", _shift_x_mm(refs[1], 0.2))
    assert run_stage("registration", root).verdict == "fail"


def test_radius_and_scale(experiments_pair, run_stage):
    root, refs = experiments_pair
    t = copy.deepcopy(refs[0])
    t["pxpermm"][0] = np.array([PXPERMM + 0.001])      # one fly with another px/mm
    _write(root / "sub", "exp_1", t)
    _write(root / "sub", "exp_2", refs[1])
    crit = run_stage("registration", root).per_experiment["exp_1"]["criteria"]
    # range = 0.001, tau = 1e-5 * median(18.9, 18.9, 18.9, 18.901) = 1.89e-4
    assert crit["scale_consistency"]["ratio"] == pytest.approx(1.89e-4 / 0.001)
    assert crit["radius"]["ratio"] == 2.0                # median unchanged -> error 0


def test_missing_fly_lowers_coverage(experiments_pair, run_stage):
    root, refs = experiments_pair
    t = copy.deepcopy(refs[0])
    for key in ("x", "y", "theta", "a", "b", "x_mm", "y_mm", "theta_mm", "a_mm", "b_mm", "dt",
                "off", "pxpermm"):
        t[key] = t[key][:3]
    for key in ("firstframe", "endframe", "nframes", "id", "fps"):
        t[key] = t[key][:3]
    t["ntargets"] = 3
    _write(root / "sub", "exp_1", t)
    _write(root / "sub", "exp_2", refs[1])
    with pytest.raises(InputError, match=r"incomplete submission: 600 of 800 fly-frames .*75%"):
        run_stage("registration", root)          # below min_fly_frames_share = 0.9: refused
    res = run_stage("registration", root, min_fly_frames_share="0.7")
    assert res.per_experiment["exp_1"]["coverage"]["coverage"] == pytest.approx(0.75)
    assert res.score == pytest.approx(2.0)       # coverage is reported apart


@pytest.mark.parametrize("breakage, reason", [
    ("drop_key", "missing key"), ("nan", "contains NaN"), ("short", "len(y_mm[1])"),
    ("nframes", "endframe - firstframe + 1"),
])
def test_broken_format_fails_with_reason(experiments_pair, run_stage, breakage, reason):
    root, refs = experiments_pair
    t = S.file_trx(copy.deepcopy(refs[0]))
    if breakage == "drop_key":
        del t["x_mm"]
    elif breakage == "nan":
        t["x"][2][5] = np.nan
    elif breakage == "short":
        t["y_mm"][1] = t["y_mm"][1][:-1]
    else:
        t["nframes"] = t["nframes"] + 1
    S.write_pickle(root / "sub" / "exp_1" / "registered_trx.pkl", t)
    _write(root / "sub", "exp_2", refs[1])
    res = run_stage("registration", root)
    assert res.verdict == "fail"
    assert any(reason in p for p in res.problems), res.problems
    assert res.score == pytest.approx(1.0)       # v(exp_1) = 0: (0 + 2) / 2 per criterion


def test_range_rel_denominator_setting(experiments_pair, run_stage):
    from trackverify.errors import ConfigError

    root, refs = experiments_pair
    for k, t in enumerate(refs):
        _write(root / "sub", f"exp_{k + 1}", t)
    assert run_stage("registration", root, range_rel_denominator="radius").score == \
        pytest.approx(2.0)
    with pytest.raises(ConfigError):
        run_stage("registration", root, range_rel_denominator="mean")


def test_range_rel_by_hand():
    """Span of the centre coordinate over its denominator: |median| ("median") or the arena
    radius ("radius"); no sample -> NaN; a zero denominator gives 0 for a zero span and
    infinity otherwise."""
    from trackverify.stages.registration import RegistrationConfig, _range_rel

    median, radius = RegistrationConfig(), RegistrationConfig(range_rel_denominator="radius")
    c = np.array([9.0, 11.0, 10.0])
    assert _range_rel(c, -10.0, 4.0, median) == 0.2
    assert _range_rel(c, -10.0, 4.0, radius) == 0.5
    assert _range_rel(c, 0.5, 4.0, median) == 4.0
    assert _range_rel(np.array([5.0]), 5.0, 4.0, median) == 0.0
    assert np.isnan(_range_rel(np.zeros(0), 5.0, 4.0, median))
    assert _range_rel(np.array([3.0, 3.0]), 0.0, 4.0, median) == 0.0
    assert _range_rel(c, 0.0, 4.0, median) == np.inf


def _small_config():
    from trackverify.stages.registration import RegistrationConfig

    return RegistrationConfig(
        arena_radius_mm=2.0, delta_scale=0.1, tau_radius_px=1.0, delta_center=0.5,
        tau_center_px=1.0, tau_xy_max_px=4.0, tau_xy_mean_px=2.0, tau_ab_max_frac=0.5,
        tau_ab_mean_frac=0.25, tau_theta_max_rad=0.2, tau_theta_mean_rad=0.1,
        coverage_target=0.5, cap=2.0)


def _small_reference(make_trx):
    """R0 on frames 0-2, R1 on frames 1-3, px/mm 10, arena centre (100, 200) px."""
    return make_trx([0, 1], {
        "x": [[110, 120, 130], [90, 80, 70]], "y": [[200, 200, 200], [210, 210, 210]],
        "x_mm": [[1, 2, 3], [-1, -2, -3]], "y_mm": [[0, 0, 0], [1, 1, 1]],
        "a_mm": [[2, 2, 2], [4, 4, 4]], "b_mm": [[1, 1, 1], [1, 1, 1]],
        "theta_mm": [[0, 0, 0], [3, 3, 3]], "pxpermm": [[10], [10]]})


def test_score_experiment_by_hand(make_trx):
    """Every criterion of one experiment, computed by hand on two submitted trajectories that
    match the two reference ones in swapped order (see the comments for each number)."""
    from trackverify.stages.registration import CRITERIA, score_experiment

    config, ref = _small_config(), _small_reference(make_trx)
    # submission: S0 (frames 1-3, px/mm 12) follows R1, S1 (frames 0-1, px/mm 11) follows R0
    sub = make_trx([1, 0], {
        "x": [[90, 80, 71], [110, 120]], "y": [[210, 210, 210], [200, 203]],
        "x_mm": [[-1, -2.5, -3], [1, 2.25]], "y_mm": [[1, 1, 1.25], [0, 0]],
        "a_mm": [[4, 4, 5], [2, 2.5]], "b_mm": [[1, 1, 1], [1, 4]],
        "theta_mm": [[3, 3 - 2 * np.pi + 0.1, 3], [0, -0.05]], "pxpermm": [[12], [11]]})
    ratios, detail = score_experiment(sub, ref, config)
    # scale: median(12, 11) = 11.5, range 1 -> tau 0.1 * 11.5 = 1.15
    # radius: 2 * 11.5 = 23 px against 2 * 10 = 20 px -> error 3
    # implied centres x - s x_mm: S0 (102, 110, 107), S1 (99, 95.25); y - s y_mm: S0 (198,
    # 198, 195), S1 (200, 203) -> medians (102, 198), spans 14.75 and 8; reference (100, 200)
    # residuals over the common frames (S0-R1 on frames 1-3, S1-R0 on frames 0-1):
    # x_mm |d| = (0, .5, 0, 0, .25), y_mm (0, 0, .25, 0, 0), a_mm (0, 0, 1, 0, .5),
    # b_mm (0, 0, 0, 0, 3), theta_mm (0, .1 wrapped, 0, 0, .05); tolerances x/y 4/10 and
    # 2/10 mm, a/b 0.5 and 0.25 times the reference median a_mm 3, theta 0.2 and 0.1 rad
    expected = {
        "scale_consistency": (1.15, 1.0), "radius": (1.0, 3.0),
        "center_consistency_x": (0.5, 14.75 / 102), "center_consistency_y": (0.5, 8 / 198),
        "center_error": (1.0, np.hypot(2, 2)),
        "x_mm_max_residual": (0.4, 0.5), "x_mm_mean_residual": (0.2, 0.15),
        "y_mm_max_residual": (0.4, 0.25), "y_mm_mean_residual": (0.2, 0.05),
        "a_mm_max_residual": (1.5, 1.0), "a_mm_mean_residual": (0.75, 0.3),
        "b_mm_max_residual": (1.5, 3.0), "b_mm_mean_residual": (0.75, 0.6),
        "theta_mm_max_residual": (0.2, 0.1), "theta_mm_mean_residual": (0.1, 0.03)}
    assert list(expected) == CRITERIA
    for i, (c, (tau, err)) in enumerate(expected.items()):
        entry = detail["criteria"][c]
        assert entry["tolerance"] == pytest.approx(tau, rel=1e-12), c
        assert entry["error"] == pytest.approx(err, rel=1e-9), c
        assert ratios[i] == pytest.approx(tau / err, rel=1e-9), c      # uncapped
        assert entry["ratio"] == pytest.approx(min(2.0, tau / err), rel=1e-9), c
    # 5 of the 6 reference fly-frames are covered by a matched trajectory
    assert detail["coverage"] == {"coverage": pytest.approx(5 / 6), "target": 0.5,
                                  "ratio": pytest.approx(5 / 3), "matched_trajectories": 2,
                                  "reference_trajectories": 2, "submitted_trajectories": 2}
    assert detail["pixel_fields_max_abs_difference_px"] == {"x": 1.0, "y": 3.0}
    assert detail["pxpermm"] == 11.5 and detail["reference_pxpermm"] == 10.0
    np.testing.assert_allclose(detail["center_px"], [102, 198], rtol=1e-12)
    np.testing.assert_allclose(detail["reference_center_px"], [100, 200], rtol=1e-12)


_NO_TRAJECTORY = {k: [] for k in ("x", "y", "x_mm", "y_mm", "a_mm", "b_mm", "theta_mm",
                                  "pxpermm")}


def test_score_experiment_without_submitted_trajectories(make_trx):
    """No submitted trajectory: no scale, radius or centre (NaN errors and tolerances), no
    matched pair (NaN residuals, no pixel difference), coverage 0 of 6; every ratio is 0
    (a NaN error or tolerance gives 0), and nothing warns (no mean of an empty slice)."""
    import warnings

    from trackverify.stages.registration import CRITERIA, score_experiment

    config = _small_config()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ratios, detail = score_experiment(make_trx([], _NO_TRAJECTORY),
                                          _small_reference(make_trx), config)
    assert ratios.tolist() == [0.0] * 15
    errors = [detail["criteria"][c]["error"] for c in CRITERIA]
    assert all(np.isnan(e) for e in errors)
    assert np.isnan(detail["criteria"]["scale_consistency"]["tolerance"])
    assert detail["criteria"]["x_mm_max_residual"]["tolerance"] == pytest.approx(0.4)
    assert detail["coverage"]["coverage"] == 0.0 and detail["coverage"]["ratio"] == 0.0
    assert detail["coverage"]["matched_trajectories"] == 0
    assert detail["coverage"]["submitted_trajectories"] == 0
    assert detail["pixel_fields_max_abs_difference_px"] == {"x": None, "y": None}
    assert np.isnan(detail["pxpermm"]) and detail["reference_pxpermm"] == 10.0
    assert detail["center_px"].shape == (2,) and np.isnan(detail["center_px"]).all()
    np.testing.assert_allclose(detail["reference_center_px"], [100, 200], rtol=1e-12)


def test_score_experiment_of_an_empty_experiment(make_trx):
    """No trajectory on either side: every tolerance that rests on the reference (px/mm,
    median a_mm) is NaN, coverage is undefined (NaN, not 0), and every ratio is 0."""
    import warnings

    from trackverify.stages.registration import CRITERIA, score_experiment

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = make_trx([], _NO_TRAJECTORY)
        ratios, detail = score_experiment(empty, empty, _small_config())
    assert ratios.tolist() == [0.0] * 15
    for c in CRITERIA[5:11]:          # x, y, a, b residuals: tolerances from the reference
        assert np.isnan(detail["criteria"][c]["tolerance"]), c
    assert detail["criteria"]["theta_mm_max_residual"]["tolerance"] == 0.2
    assert np.isnan(detail["coverage"]["coverage"]) and np.isnan(detail["coverage"]["ratio"])
    assert detail["coverage"]["reference_trajectories"] == 0
    assert np.isnan(detail["reference_pxpermm"])
    assert np.isnan(detail["reference_center_px"]).all()
