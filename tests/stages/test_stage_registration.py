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
