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
