"""A4 per-frame features: hand-computed ratios (13 standard, absdv_cor, joint corfrac)."""

from __future__ import annotations

import numpy as np
import pytest

from trackverify.stages import synthetic as S


def _write_features(folder, feats):
    for name, arrays in feats.items():
        S.write_pickle(folder / "perframe" / f"{name}.pkl", arrays)


@pytest.fixture
def world(tmp_path):
    refs = []
    for k in range(2):
        t = S.fly_experiment(10 + k, n_flies=3, n_frames=150)
        S.write_pickle(tmp_path / "ref" / f"exp_{k + 1}" / "registered_trx.pkl", S.file_trx(t))
        feats = S.perframe_features(t)
        _write_features(tmp_path / "ref" / f"exp_{k + 1}", feats)
        refs.append(feats)
    return tmp_path, refs


def _submit(root, feats_by_exp):
    for k, feats in enumerate(feats_by_exp):
        _write_features(root / "sub" / f"exp_{k + 1}", feats)


def test_perfect_submission_scores_the_maximum(world, run_stage):
    root, refs = world
    _submit(root, refs)
    res = run_stage("features", root)
    # 13 standard units and corfrac at the cap 2, absdv_cor at most 1: (13*2 + 1 + 2) / 15
    assert res.score == pytest.approx(29 / 15) and res.verdict == "pass"
    res16 = run_stage("features", root, corfrac_units=2)
    assert res16.score == pytest.approx(31 / 16)


def test_offset_feature_and_wrapped_yaw(world, run_stage):
    root, refs = world
    subs = []
    for feats in refs:
        sigma = np.std(np.concatenate(feats["du_ctr"]))
        sub = dict(feats)
        sub["du_ctr"] = [a + 0.02 * sigma for a in feats["du_ctr"]]   # MAE = 0.02 sigma
        sub["yaw"] = [a + 2 * np.pi for a in feats["yaw"]]            # same angle
        subs.append(sub)
    _submit(root, subs)
    res = run_stage("features", root)
    for e in ("exp_1", "exp_2"):
        assert res.per_experiment[e]["units"]["du_ctr"]["ratio"] == pytest.approx(0.5)
        assert res.per_experiment[e]["units"]["yaw"]["ratio"] == 2.0
    assert res.score == pytest.approx((12 * 2 + 0.5 + 1 + 2) / 15)
    assert res.verdict == "partial"          # no experiment passes; score 1.83 >= 1


def test_absdv_cor_self_consistency(world, run_stage):
    root, refs = world
    subs = [dict(f, absdv_cor=[np.abs(a) + 1e-3 for a in f["dv_cor"]]) for f in refs]
    _submit(root, subs)
    res = run_stage("features", root)
    assert res.criteria["absdv_cor"]["mean_capped_ratio"] == 0.0
    assert res.score == pytest.approx(28 / 15)


def test_corfrac_excess_loss_hand_computed(tmp_path, run_stage):
    # One fly turning 90 degrees in place about its centroid: theta 0 -> pi/2, a_mm = 0.5.
    trx = {"x_mm": [np.zeros(2)], "y_mm": [np.zeros(2)], "theta_mm": [np.array([0, np.pi / 2])],
           "a_mm": [np.full(2, 0.5)], "b_mm": [np.full(2, 0.2)], "dt": [np.full(1, 0.01)],
           "firstframe": np.array([0]), "endframe": np.array([1]), "nframes": np.array([2]),
           "ntargets": 1}
    S.write_pickle(tmp_path / "ref" / "exp_1" / "registered_trx.pkl", trx)
    ref = S.perframe_features(trx, corfrac=(0.0, 0.0))      # the centroid: L_ref = 0
    _write_features(tmp_path / "ref" / "exp_1", ref)
    # corfrac_maj = 0.1: P_0 = 0.1 * 2 * 0.5 * (1, 0) = (0.1, 0); P_1 = (0, 0.1) -> L = 0.02
    _write_features(tmp_path / "sub" / "exp_1", dict(ref, corfrac_maj=[np.array([0.1])]))
    res = run_stage("features", tmp_path)
    unit = res.per_experiment["exp_1"]["units"]["corfrac"]
    assert unit["error"] == pytest.approx(0.02)
    assert unit["ratio"] == pytest.approx(1e-3 / 0.02)


def test_missing_file_and_wrong_length_fail_with_reason(world, run_stage):
    root, refs = world
    _submit(root, refs)
    (root / "sub" / "exp_1" / "perframe" / "velmag.pkl").unlink()
    bad = [a[:-1] for a in refs[1]["dtheta"]]
    S.write_pickle(root / "sub" / "exp_2" / "perframe" / "dtheta.pkl", bad)
    res = run_stage("features", root)
    assert res.verdict == "fail"
    assert any("velmag.pkl" in p and "not found" in p for p in res.problems)
    assert any("dtheta.pkl" in p and "length" in p for p in res.problems)
    assert res.criteria["velmag"]["mean_capped_ratio"] == pytest.approx(1.0)   # (0 + 2) / 2


def test_submitted_nan_gives_zero(world, run_stage):
    root, refs = world
    subs = [dict(f) for f in refs]
    subs[0]["velmag"] = [a.copy() for a in refs[0]["velmag"]]
    subs[0]["velmag"][0][3] = np.nan
    _submit(root, subs)
    res = run_stage("features", root)
    assert res.per_experiment["exp_1"]["units"]["velmag"]["ratio"] == 0.0
    assert res.criteria["velmag"]["mean_capped_ratio"] == pytest.approx(1.0)


def _fly(x, th, a=1.0, b=0.5):
    n = len(x)
    return {"x_mm": np.asarray(x, float), "y_mm": np.zeros(n), "theta_mm": np.asarray(th, float),
            "a_mm": np.full(n, a), "b_mm": np.full(n, b)}


def test_corfrac_loss_with_both_axes_by_hand():
    """Point = centre + r1 * 2a (cos, sin) + r2 * 2b (-sin, cos), r1 = 0.25, r2 = 0.5,
    a = 1, b = 0.5. Frame 0 at (0, 0), theta pi/2 -> (-0.5, 0.5); frames 1 and 2 at (1, 0),
    theta 0 -> (1.5, 0.5). Squared steps: 4 and 0."""
    from trackverify.stages.features import corfrac_loss

    fly = _fly([0.0, 1.0, 1.0], [np.pi / 2, 0.0, 0.0])
    trx = {"ntargets": 1, **{k: [v] for k, v in fly.items()}}
    loss = corfrac_loss(trx, [np.full(2, 0.25)], [np.full(2, 0.5)])
    np.testing.assert_allclose(loss, [4.0, 0.0], rtol=0, atol=1e-12)
    assert corfrac_loss({"ntargets": 0}, [], []).shape == (0,)


def test_corfrac_lengths_are_checked_on_both_axes():
    from trackverify.errors import InputError
    from trackverify.stages.features import corfrac_loss

    trx = {"ntargets": 1, **{k: [v] for k, v in _fly([0.0, 1.0], [0.0, 0.0]).items()}}
    with pytest.raises(InputError, match=r"^fly 0: corfrac length 1/2, expected nframes - 1 = 1$"):
        corfrac_loss(trx, [np.zeros(1)], [np.zeros(2)])


def test_standard_ratio_fields_and_an_empty_reference():
    """Submitted NaN where the reference is finite: ratio 0 with a note. No finite
    reference value: MAE 0 and sigma 0 (tau 0, err 0 -> ratio per tolerance_ratio)."""
    from trackverify.stages.features import FeaturesConfig, _standard_ratio

    config = FeaturesConfig()
    bad = _standard_ratio(np.array([np.nan, 1.0]), np.array([0.0, 1.0]), False, config)
    assert bad == {"ratio": 0.0, "tolerance": None, "error": None,
                   "note": "submitted NaN/inf where the reference is finite"}
    ref = np.array([0.0, 2.0])          # sigma 1
    got = _standard_ratio(np.array([0.5, 2.5]), ref, False, config)   # MAE 0.5
    assert set(got) == {"ratio", "tolerance", "error", "sigma"}
    assert got["error"] == 0.5 and got["sigma"] == 1.0 and got["tolerance"] == config.delta_z
    # not an angle: an error of 4 stays 4; an angle: 2 pi - 0.1 against 0 wraps to 0.1
    assert _standard_ratio(np.array([4.0, 2.0]), ref, False, config)["error"] == 2.0
    wrapped = _standard_ratio(np.array([2 * np.pi - 0.1, 2.0]), ref, True, config)
    assert wrapped["error"] == pytest.approx(0.05)
    empty = _standard_ratio(np.array([1.0]), np.array([np.nan]), False, config)
    assert (empty["error"], empty["sigma"], empty["tolerance"]) == (0.0, 0.0, 0.0)


# One fly, 3 frames: centre (0, 0), theta pi/2, then (1, 0), theta 0 twice; a = 1, b = 0.5.
_GOLD = {"ntargets": 1,
         **{k: [v] for k, v in _fly([0.0, 1.0, 1.0], [np.pi / 2, 0.0, 0.0]).items()}}
_MISSING = {"ratio": 0.0, "tolerance": None, "error": None, "note": "structural failure"}


def _experiment(tmp_path, sub_changes, drop=()):
    """Reference features: every standard feature, dv_cor and absdv_cor (0, 1, 2); corfrac
    (maj, min) = (0, NaN) and (0, 0) -> L_ref = (1, NaN) (the centroid steps by 1, then NaN).
    The submission is the reference with ``sub_changes`` and without the files in ``drop``."""
    from trackverify.stages.features import ALL_FEATURES

    ref = {f: [np.array([0.0, 1.0, 2.0])] for f in ALL_FEATURES}
    ref["corfrac_maj"], ref["corfrac_min"] = [np.array([0.0, np.nan])], [np.zeros(2)]
    sub = {f: v for f, v in {**ref, **sub_changes}.items() if f not in drop}
    for side, feats in (("ref", ref), ("sub", sub)):
        for f in list(feats):
            (tmp_path / side / "perframe" / f"{f}.pkl").unlink(missing_ok=True)
        _write_features(tmp_path / side, feats)
    return tmp_path / "sub", tmp_path / "ref"


def test_score_experiment_records_by_hand(tmp_path):
    """The per-unit records of one experiment: wrapped features from a comma-separated list,
    the absdv_cor self-consistency record, the joint corfrac excess over the finite
    reference losses only."""
    from trackverify.stages.features import FeaturesConfig, score_experiment

    config = FeaturesConfig(wrapped_features="dphi, yaw")
    sigma = np.sqrt(2 / 3)                      # std (ddof 0) of (0, 1, 2)
    # corfrac (0.25, 0.5) on both steps: L_sub = (4, 0)
    # (test_corfrac_loss_with_both_axes_by_hand);
    # excess over the finite L_ref = 1 only: 4 - 1 = 3
    base = np.array([0.0, 1.0, 2.0])
    sub, ref = _experiment(tmp_path, {
        "dphi": [base + 2 * np.pi], "yaw": [base - 2 * np.pi], "velmag": [base + 2 * np.pi],
        "dv_cor": [np.array([np.nan, -1.0, 2.0])], "absdv_cor": [np.array([np.nan, 1.0, 2.0])],
        "corfrac_maj": [np.full(2, 0.25)], "corfrac_min": [np.full(2, 0.5)]})
    out, problems = score_experiment(sub, ref, _GOLD, config)
    assert problems == []
    for f in ("dphi", "yaw"):                   # 2 pi apart: the same angle
        assert out[f]["error"] == pytest.approx(0.0, abs=1e-12), f
    assert out["velmag"]["error"] == pytest.approx(2 * np.pi)      # not an angle
    assert out["velmag"]["ratio"] == pytest.approx(0.01 * sigma / (2 * np.pi))
    assert out["du_ctr"] == {"ratio": np.inf, "tolerance": pytest.approx(0.01 * sigma),
                             "error": 0.0, "sigma": pytest.approx(sigma)}
    # |absdv_cor| == |dv_cor| element-wise, NaN in the same place counting as equal
    assert out["absdv_cor"] == {"ratio": 1.0, "tolerance": None, "error": None,
                                "self_consistent": True}
    assert out["corfrac"] == {"ratio": pytest.approx(1e-3 / 3), "tolerance": 1e-3, "error": 3.0}


@pytest.mark.parametrize("absdv, same", [
    ([np.nan, 1.0, 2.0 * (1 + 5e-10)], True),  # relative 5e-10 <= rtol 1e-9
    ([np.nan, 1.0, 2.0 * (1 + 1e-7)], False),  # relative 1e-7 > rtol 1e-9 (numpy's default 1e-5)
    ([1e-10, 1.0, 2.0], False),                # |0 - 1e-10| > atol 1e-12 (numpy's default 1e-8)
    ([0.0, 1.0, 2.0], False),                  # a number where dv_cor is NaN
])
def test_absdv_cor_tolerances(tmp_path, absdv, same):
    from trackverify.stages.features import FeaturesConfig, score_experiment

    dv = [0.0, 1.0, 2.0] if absdv[0] == 1e-10 else [np.nan, -1.0, 2.0]
    sub, ref = _experiment(tmp_path, {"dv_cor": [np.array(dv)], "absdv_cor": [np.array(absdv)]})
    out, _ = score_experiment(sub, ref, _GOLD, FeaturesConfig())
    assert out["absdv_cor"] == {"ratio": float(same), "tolerance": None, "error": None,
                                "self_consistent": same}


def test_score_experiment_corfrac_edge_records(tmp_path):
    """A submitted NaN where the reference loss is finite gives 0 with a note; no finite
    reference loss leaves no excess (error 0, ratio +inf before the cap)."""
    from trackverify.stages.features import FeaturesConfig, score_experiment

    config = FeaturesConfig()
    sub, ref = _experiment(tmp_path, {"corfrac_maj": [np.array([np.nan, 0.0])]})
    out, _ = score_experiment(sub, ref, _GOLD, config)
    assert out["corfrac"] == {"ratio": 0.0, "tolerance": 1e-3, "error": None,
                              "note": "submitted NaN where the reference loss is finite"}
    # a NaN only where the reference loss is NaN too is not counted
    sub, ref = _experiment(tmp_path, {"corfrac_maj": [np.array([0.0, np.nan])],
                                      "corfrac_min": [np.array([0.0, np.nan])]})
    assert score_experiment(sub, ref, _GOLD, config)[0]["corfrac"]["error"] == 0.0
    gold = {**_GOLD, "x_mm": [np.array([0.0, np.nan, 1.0])]}     # L_ref = (NaN, NaN)
    out, _ = score_experiment(sub, ref, gold, config)
    assert out["corfrac"] == {"ratio": np.inf, "tolerance": 1e-3, "error": 0.0}


@pytest.mark.parametrize("drop, missing", [
    (("dv_cor", "corfrac_min"), ("dv_cor", "absdv_cor", "corfrac")),
    (("absdv_cor", "corfrac_maj"), ("absdv_cor", "corfrac")),
])
def test_score_experiment_missing_files(tmp_path, drop, missing):
    """A missing file is a structural problem; the units that need it score 0."""
    from trackverify.stages.features import FeaturesConfig, score_experiment

    sub, ref = _experiment(tmp_path, {}, drop=drop)
    out, problems = score_experiment(sub, ref, _GOLD, FeaturesConfig())
    assert len(problems) == len(drop)
    assert all(f"{f}.pkl" in p for f, p in zip(sorted(drop), problems, strict=True))
    for unit in missing:
        assert out[unit] == _MISSING, unit
    assert [u for u, rec in out.items() if rec == _MISSING] == sorted(missing, key=list(out).index)
