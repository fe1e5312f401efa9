"""The linear decoder (EVALUATORS B6, seed Appendix D)."""

import numpy as np
import pytest

from trackverify.conversion.decoder import (DecoderConfig, Session, _Model,
                                            _numpy_loss_and_grads, class_weights,
                                            init_projection, run_decoder, split_trials)
from trackverify.conversion.synthetic import SyntheticSpec, make_dataset, shuffle_outputs
from trackverify.errors import ConfigError

SMALL = SyntheticSpec(n_sessions=3, n_trials=30, n_neurons=20, n_bins=20)


def test_split_sizes_by_hand():
    train, test = split_trials([10, 2, 3], 0.7, np.random.default_rng(0))
    assert [len(t) for t in train] == [7, 1, 2]   # floor(7), max(1, floor(1.4)), cap at n - 1
    assert [len(t) for t in test] == [3, 1, 1]
    for tr, te, n in zip(train, test, [10, 2, 3]):
        assert sorted(np.concatenate([tr, te]).tolist()) == list(range(n))


def test_class_weights_by_hand():
    # counts 3, 1, 0 of 4 labels: 4/(3*3), 4/(3*1), 4/(3*1) -> normalised 1/7, 3/7, 3/7
    np.testing.assert_allclose(class_weights([np.array([0, 0]), np.array([0, 1])], 3),
                               [1 / 7, 3 / 7, 3 / 7])


def test_init_projection_is_uncentred_pca():
    from sklearn.decomposition import TruncatedSVD  # uncentred SVD, an independent reference

    rng = np.random.default_rng(1)
    X = rng.poisson(3.0, size=(15, 400)).astype(float)
    W = init_projection(X, 4, rng, 50_000, 2_000)
    ref = TruncatedSVD(n_components=4, algorithm="arpack").fit(X.T).components_
    np.testing.assert_allclose(np.abs(W @ ref.T), np.eye(4), atol=1e-6)


def test_init_projection_compressed_and_subsampled_shapes():
    rng = np.random.default_rng(2)
    W = init_projection(rng.normal(size=(30, 120)), 10, rng, max_samples=50, max_neurons=20)
    assert W.shape == (10, 30) and np.isfinite(W).all() and np.abs(W).sum() > 0
    W = init_projection(rng.normal(size=(3, 40)), 10, rng, 50_000, 2_000)
    assert W.shape == (10, 3) and not W[3:].any()   # fewer neurons than p: zero rows


def test_analytic_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    sessions = [Session(rng.normal(size=(5, 12)), rng.normal(size=(2, 12)),
                        rng.integers(0, 3, size=(2, 12)), np.zeros(12, int)) for _ in range(2)]
    model = _Model([rng.normal(size=(4, 5)) for _ in range(2)],
                   [rng.normal(size=(3, 6)) for _ in range(2)], [rng.normal(size=3) for _ in range(2)])
    weights = [np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.25, 0.25])]
    _, grads = _numpy_loss_and_grads(model, sessions, weights, l1=0.01)
    h = 1e-6
    for param, grad in zip(model.params(), grads):
        for idx in [(0,) * param.ndim, tuple(s - 1 for s in param.shape)]:
            old = param[idx]
            param[idx] = old + h
            up, _ = _numpy_loss_and_grads(model, sessions, weights, 0.01)
            param[idx] = old - h
            down, _ = _numpy_loss_and_grads(model, sessions, weights, 0.01)
            param[idx] = old
            assert grad[idx] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-8)


def test_decodable_dataset_is_decoded_and_shuffled_is_not():
    data = make_dataset(SMALL)
    good = run_decoder(data)               # the real 200 epochs
    assert good.n_classes == [3, 2]
    assert min(good.balanced_accuracy) > 0.8
    assert good.loss[-1] < good.loss[0]
    bad = run_decoder(shuffle_outputs(data))
    assert bad.balanced_accuracy[0] < 0.5 and bad.balanced_accuracy[1] < 0.65
    assert good.n_train_trials == 3 * 21 and good.n_test_trials == 3 * 9


def test_per_trial_outputs_are_repeated_over_time():
    data = make_dataset(SMALL)
    data["output"] = [[y[:, 0] for y in session] for session in data["output"]]
    result = run_decoder(data, DecoderConfig(epochs=5))
    assert result.n_classes == [3, 2] and all(ba is not None for ba in result.balanced_accuracy)


def test_same_seed_same_result():
    data = make_dataset(SMALL)
    a = run_decoder(data, DecoderConfig(epochs=10))
    b = run_decoder(data, DecoderConfig(epochs=10))
    assert a.balanced_accuracy == b.balanced_accuracy and a.loss == b.loss


def test_unknown_engine():
    with pytest.raises(ConfigError):
        run_decoder(make_dataset(SMALL), DecoderConfig(engine="jax"))


def test_numpy_and_torch_engines_train_the_same_model():
    pytest.importorskip("torch")
    data = make_dataset(SMALL)
    a = run_decoder(data, DecoderConfig(engine="numpy"))
    b = run_decoder(data, DecoderConfig(engine="torch"))
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9)
    assert [round(x, 3) for x in a.balanced_accuracy] == [round(x, 3) for x in b.balanced_accuracy]
