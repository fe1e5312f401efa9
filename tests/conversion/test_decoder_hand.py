"""The decoder's pieces by hand (EVALUATORS B6): the configuration's range, the split, the
class weights, the log-softmax, the loss and its gradients on a 2-class, 2-bin model written
out, Adam's steps, the projection's compressed and subsampled paths, the session layout, and
the evaluation on a model whose parameters are set by hand."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from trackverify.conversion import MAX_EPOCHS, decoder
from trackverify.conversion.decoder import (DecoderConfig, Session, _log_softmax, _Model,
                                            _numpy_loss_and_grads, _train_numpy, class_weights,
                                            init_projection, prepare_sessions, run_decoder,
                                            split_trials)
from trackverify.errors import ConfigError, InputError


@pytest.mark.parametrize("epochs", [1, MAX_EPOCHS, np.int64(3)])
def test_epochs_in_range_are_accepted(epochs):
    assert DecoderConfig(epochs=epochs).epochs == epochs


@pytest.mark.parametrize("epochs", [0, -1, MAX_EPOCHS + 1, True, 2.0, "5", None])
def test_epochs_out_of_range_or_not_integers_are_refused(epochs):
    with pytest.raises(ConfigError) as caught:
        DecoderConfig(epochs=epochs)
    assert str(caught.value) == (f"decoder epochs {epochs!r} must be an integer in "
                                 f"[1, {MAX_EPOCHS}]")


@pytest.mark.parametrize("settings", [
    {"p": 1}, {"svd_max_samples": 1}, {"svd_max_neurons": 1}, {"threads": 1}, {"seed": 0},
    {"seed": np.int64(2) ** 40}, {"frac_train": 0.0}, {"frac_train": 1}, {"lr": 5e-324},
    {"lr": np.float32(0.5)}, {"l1": 0}, {"l1": 10 ** 400}, {"engine": "torch"}])
def test_settings_at_their_limits_are_accepted(settings):
    config = DecoderConfig(**settings)
    assert all(getattr(config, k) == v for k, v in settings.items())


@pytest.mark.parametrize("name, value, bound", [
    ("p", 0, "an integer >= 1"), ("p", 2.0, "an integer >= 1"), ("p", True, "an integer >= 1"),
    ("svd_max_samples", 0, "an integer >= 1"), ("svd_max_neurons", -5, "an integer >= 1"),
    ("threads", 0, "an integer >= 1"), ("threads", None, "an integer >= 1"),
    ("seed", -1, "an integer >= 0"), ("seed", 0.5, "an integer >= 0"),
    ("frac_train", -0.01, "a finite number in [0.0, 1.0]"),
    ("frac_train", 1.0000000000000002, "a finite number in [0.0, 1.0]"),
    ("frac_train", float("nan"), "a finite number in [0.0, 1.0]"),
    ("frac_train", False, "a finite number in [0.0, 1.0]"),
    ("frac_train", "0.5", "a finite number in [0.0, 1.0]"),
    ("lr", 0.0, "a finite number > 0.0"), ("lr", float("inf"), "a finite number > 0.0"),
    ("lr", -1, "a finite number > 0.0"),
    ("l1", -1e-300, "a finite number >= 0.0"), ("l1", float("-inf"), "a finite number >= 0.0"),
    ("l1", np.float64("nan"), "a finite number >= 0.0"),
])
def test_settings_out_of_range_are_refused_by_name(name, value, bound):
    with pytest.raises(ConfigError) as caught:
        DecoderConfig(**{name: value})
    assert str(caught.value) == f"decoder {name} {value!r} must be {bound}"


def test_split_counts_for_a_stated_fraction():
    # n = 10, 4, 2, 1, 0 at frac 0.5: floor(5), floor(2), max(1, floor(1)), cap at n - 1 = 0,
    # nothing
    train, test = split_trials([10, 4, 2, 1, 0], 0.5, np.random.default_rng(0))
    assert [len(t) for t in train] == [5, 2, 1, 0, 0]
    assert [len(t) for t in test] == [5, 2, 1, 1, 0]
    # frac 0.9 of 5 = floor(4.5) = 4; frac 0.1 of 5 = max(1, 0) = 1; frac 1.0 of 3 caps at 2
    for frac, n_train in [(0.9, 4), (0.1, 1), (1.0, 2)]:
        train, test = split_trials([5 if frac < 1 else 3], frac, np.random.default_rng(0))
        assert len(train[0]) == n_train


def test_split_takes_the_permutation_of_the_seeded_generator_in_session_order():
    # the documented draw: one permutation per session from numpy.random.default_rng(seed),
    # the first n_train of it for training; both parts sorted
    train, test = split_trials([6, 5], 0.5, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    first, second = rng.permutation(6), rng.permutation(5)
    assert train[0].tolist() == sorted(first[:3]) and test[0].tolist() == sorted(first[3:])
    assert train[1].tolist() == sorted(second[:2]) and test[1].tolist() == sorted(second[2:])


def test_class_weights_for_counts_one_and_three():
    # labels 0, 1, 1, 1: w = 4 / (2 * 1) = 2 and 4 / (2 * 3) = 2/3; sum 8/3 -> 3/4, 1/4
    np.testing.assert_allclose(class_weights([np.array([1, 0]), np.array([1, 1])], 2),
                               [0.75, 0.25], rtol=1e-15)


def test_class_weights_of_labels_beyond_the_classes_count_only_the_classes():
    # counts of 0 and 1 are 1 and 1 (label 2 is not a class); total 4:
    # w = 4 / (2 * 1) each -> 1/2, 1/2
    np.testing.assert_allclose(class_weights([np.array([0, 1, 2, 2])], 2), [0.5, 0.5])


def test_class_weights_of_no_labels_are_undefined():
    # total 0: w = 0 / (C * 1) = 0 for each class, normalised 0 / 0: NaN, not a weight
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(class_weights([], 2), [np.nan, np.nan])


def test_log_softmax_by_hand_and_without_overflow():
    # column [0, ln 3]: softmax [1/4, 3/4]; the same shifted by 1000 (exp would overflow)
    logits = np.array([[0.0, 1000.0], [math.log(3), 1000.0 + math.log(3)]])
    expected = np.log([[0.25, 0.25], [0.75, 0.75]])
    np.testing.assert_allclose(_log_softmax(logits), expected, rtol=1e-12)


def hand_model(extra_bin: bool = False):
    """One session, one neuron, p = 1, no input variable: W = [[0.5]], X = [[2, -2]] so
    z = [1, -1]; A = [[1], [0]], b = 0 so the logits are [z, 0]; labels [0, 1]. With
    ``extra_bin`` a third bin (z = 2.5) carries label 2, a class unseen in training."""
    X = np.array([[2.0, -2.0, 5.0]]) if extra_bin else np.array([[2.0, -2.0]])
    Y = np.array([[0, 1, 2]]) if extra_bin else np.array([[0, 1]])
    T = X.shape[1]
    session = Session(X, np.zeros((0, T)), Y, np.zeros(T, dtype=np.int64))
    model = _Model([np.array([[0.5]])], [np.array([[1.0], [0.0]])], [np.zeros(2)])
    return model, [session]


@pytest.mark.parametrize("extra_bin", [False, True])
def test_loss_and_gradients_of_two_classes_two_bins_by_hand(extra_bin):
    """Weights [0.2, 0.6] (sum of the bins' weights 0.8; the loss divides by it).

    Bin 0: logits [1, 0], label 0: -log p = log(1 + e^-1); bin 1: logits [-1, 0], label 1:
    -log p = log(1 + e^-1). Loss = (0.2 + 0.6) log(1 + e^-1) / 0.8 + l1 |0.5|.
    With q = 1 / (1 + e): d = softmax - onehot, times w / 0.8 = [0.25, 0.75]:
    bin 0 [-q, q] / 4, bin 1 [q, -q] * 3/4. gA = d z^T = [-q, q]; gb = [q/2, -q/2];
    gZ = A^T d = [-q/4, 3q/4]; gW = gZ X^T + l1 sign(W) = -q/2 - 3q/2 + l1 = -2q + l1.
    A third bin with an unseen label carries no loss and no gradient.
    """
    model, sessions = hand_model(extra_bin)
    l1 = 0.01
    loss, (gW, gA, gb) = _numpy_loss_and_grads(model, sessions, [np.array([0.2, 0.6])], l1)
    q = 1.0 / (1.0 + math.e)
    assert loss == pytest.approx(math.log1p(math.exp(-1.0)) + l1 * 0.5, rel=1e-14)
    np.testing.assert_allclose(gA, [[-q], [q]], rtol=1e-14)
    np.testing.assert_allclose(gb, [q / 2, -q / 2], rtol=1e-14)
    np.testing.assert_allclose(gW, [[-2 * q + l1]], rtol=1e-14)


def test_a_session_whose_labels_are_all_unseen_carries_no_loss():
    model, sessions = hand_model()
    sessions[0].Y[:] = 5  # no class of the model's 2
    loss, (gW, gA, gb) = _numpy_loss_and_grads(model, sessions, [np.array([0.2, 0.6])], 0.01)
    assert loss == 0.01 * 0.5  # the penalty only
    assert gW.tolist() == [[0.01]] and not gA.any() and not gb.any()


def test_an_output_without_loss_does_not_end_the_session():
    """Output 0 of the session has only unseen labels (no loss); output 1 is the hand
    model's: the loss and gradients are output 1's alone."""
    model, sessions = hand_model()
    sessions[0].Y = np.array([[7, 7], [0, 1]])
    model.A, model.b = [np.zeros((2, 1)), *model.A], [np.zeros(2), *model.b]
    weights = [np.array([0.5, 0.5]), np.array([0.2, 0.6])]
    loss, (gW, gA0, gA1, gb0, gb1) = _numpy_loss_and_grads(model, sessions, weights, 0.01)
    q = 1.0 / (1.0 + math.e)
    assert loss == pytest.approx(math.log1p(math.exp(-1.0)) + 0.005, rel=1e-14)
    assert not gA0.any() and not gb0.any()
    np.testing.assert_allclose(gA1, [[-q], [q]], rtol=1e-14)
    np.testing.assert_allclose(gW, [[-2 * q + 0.01]], rtol=1e-14)


def test_penalty_sums_every_projection_and_its_gradient_is_the_sign():
    # two sessions without loss (labels unseen): l1 (|1| + |-2| + |0| + |3|) = 0.6
    W = [np.array([[1.0, -2.0]]), np.array([[0.0, 3.0]])]
    sessions = [Session(np.ones((2, 2)), np.zeros((0, 2)), np.full((1, 2), 9), np.zeros(2, int))
                for _ in W]
    model = _Model(W, [np.zeros((2, 1))], [np.zeros(2)])
    loss, grads = _numpy_loss_and_grads(model, sessions, [np.array([0.5, 0.5])], 0.1)
    assert loss == pytest.approx(0.6, rel=1e-15)
    assert grads[0].tolist() == [[0.1, -0.1]] and grads[1].tolist() == [[0.0, 0.1]]


def test_adam_steps_by_hand(monkeypatch):
    """Gradients 1 then 3 of one parameter at 0, lr 0.1 (Kingma & Ba, Algorithm 1):
    step 1: m = 0.1, v = 0.001, m^ = 1, v^ = 1: q = -0.1 / (1 + 1e-8);
    step 2: m = 0.09 + 0.3 = 0.39, v = 0.000999 + 0.009 = 0.009999, m^ = 0.39 / 0.19,
    v^ = 0.009999 / 0.001999: q -= 0.1 m^ / (sqrt(v^) + 1e-8)."""
    grads = iter([1.0, 3.0])
    losses = iter([7.0, 5.0])

    def fake(model, sessions, weights, l1):
        assert l1 == 0.25
        return next(losses), [np.array([next(grads)])]

    monkeypatch.setattr(decoder, "_numpy_loss_and_grads", fake)
    model = _Model([np.zeros(1)], [], [])
    history = _train_numpy(model, [], [], DecoderConfig(epochs=2, lr=0.1, l1=0.25))
    assert history == [7.0, 5.0]
    step1 = 0.1 * 1.0 / (1.0 + 1e-8)
    step2 = 0.1 * (0.39 / 0.19) / (math.sqrt(0.009999 / 0.001999) + 1e-8)
    assert model.W[0][0] == pytest.approx(-step1 - step2, rel=1e-12)


def test_projection_of_many_neurons_is_the_documented_gaussian_compression():
    """N = 30 > max_neurons = 20: P (30 x 20, N(0, 1/20)) is the generator's first draw;
    W = (P V)^T with V the top right singular vectors of X^T P (sklearn's TruncatedSVD, an
    independent SVD; rows equal up to sign)."""
    from sklearn.decomposition import TruncatedSVD

    X = np.random.default_rng(5).normal(size=(30, 60))
    W = init_projection(X, 3, np.random.default_rng(9), 50_000, 20)
    P = np.random.default_rng(9).normal(0.0, 1.0 / np.sqrt(20), size=(30, 20))
    V = TruncatedSVD(n_components=3, algorithm="arpack").fit(X.T @ P).components_
    np.testing.assert_allclose(np.abs(W), np.abs(V @ P.T), atol=1e-7)


def test_projection_of_many_timepoints_uses_the_documented_subset():
    """T = 120 > max_samples = 50: the timepoints ``rng.choice(120, 50, replace=False)``."""
    from sklearn.decomposition import TruncatedSVD

    X = np.random.default_rng(6).normal(size=(8, 120))
    W = init_projection(X, 3, np.random.default_rng(4), 50, 2_000)
    rows = np.random.default_rng(4).choice(120, size=50, replace=False)
    V = TruncatedSVD(n_components=3, algorithm="arpack").fit(X.T[rows]).components_
    np.testing.assert_allclose(np.abs(W), np.abs(V), atol=1e-7)


@pytest.mark.parametrize("T, N", [(50, 8), (40, 20)])
def test_projection_at_the_limits_is_the_plain_svd(T, N):
    """T = max_samples (50) or N = max_neurons (20): neither subset nor compression."""
    from sklearn.decomposition import TruncatedSVD

    X = np.random.default_rng(T).normal(size=(N, T))
    W = init_projection(X, 3, np.random.default_rng(0), 50, 20)
    V = TruncatedSVD(n_components=3, algorithm="arpack").fit(X.T).components_
    np.testing.assert_allclose(np.abs(W), np.abs(V), atol=1e-7)


def test_projection_of_fewer_timepoints_than_p_has_zero_rows():
    # T = 2 timepoints, N = 4, p = 3: the SVD has 2 right singular vectors; row 3 is zero
    X = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0]])
    W = init_projection(X, 3, np.random.default_rng(0), 50, 20)
    # X^T = [[1, 0, 0, 0], [0, 2, 0, 0]]: right singular vectors e2 (sigma 2), e1 (sigma 1)
    np.testing.assert_allclose(np.abs(W), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])


def test_prepare_sessions_concatenates_the_kept_trials_along_time():
    data = {"neural": [[np.array([[1.0, 2.0]], dtype=np.float32), np.array([[3.0]]),
                        np.array([[4.0, 5.0, 6.0]])],
                       [np.array([[7.0], [8.0]])]],
            "input": [[np.array([0.5]), np.array([[1.5]]), np.array([2.5])],
                      [np.array([9.0])]],
            "output": [[np.array([0.9999]), np.array([[2.0]]), np.array([1.0000001])],
                       [np.array([[3.0]])]]}
    first, second = prepare_sessions(data)
    assert first.X.dtype == np.float64 and first.X.tolist() == [[1, 2, 3, 4, 5, 6]]
    assert first.U.tolist() == [[0.5, 0.5, 1.5, 2.5, 2.5, 2.5]]
    assert first.Y.dtype == np.int64 and first.Y.tolist() == [[1, 1, 2, 1, 1, 1]]
    assert first.trial.tolist() == [0, 0, 1, 2, 2, 2]
    assert second.X.tolist() == [[7], [8]] and second.Y.tolist() == [[3]]
    # only trials 2 and 0 of session 0 (in that order); session 1 keeps none: skipped
    (only,) = prepare_sessions(data, [np.array([2, 0]), np.array([], dtype=int)])
    assert only.X.tolist() == [[4, 5, 6, 1, 2]] and only.trial.tolist() == [2, 2, 2, 0, 0]
    assert only.U.tolist() == [[2.5, 2.5, 2.5, 0.5, 0.5]]
    # session 0 keeps none (skipped), session 1 its only trial
    (only,) = prepare_sessions(data, [np.array([], dtype=int), np.array([0])])
    assert only.X.tolist() == [[7], [8]] and only.U.tolist() == [[9.0]]


def test_prepare_sessions_computes_in_float64_whatever_the_float_type():
    data = {"neural": [[np.array([[1.5, 2.5]], dtype=np.float32)] * 2],
            "input": [[np.array([[0.25, 0.5]], dtype=np.float32)] * 2],
            "output": [[np.array([1.0], dtype=np.float32)] * 2]}
    (session,) = prepare_sessions(data)
    assert session.X.dtype == np.float64 and session.U.dtype == np.float64
    assert session.X.tolist() == [[1.5, 2.5, 1.5, 2.5]] and session.Y.tolist() == [[1] * 4]


def test_a_session_of_one_trial_is_refused():
    # the split needs 2 trials (format rule OQ-B2.2): with 1 the session has no training
    # trial, so no trained projection to decode its test trial with
    data = {"neural": [[np.ones((1, 2))] * 3, [np.ones((2, 2))]],
            "input": [[np.zeros(1)] * 3, [np.zeros(1)]],
            "output": [[np.zeros(1)] * 3, [np.zeros(1)]]}
    with pytest.raises(InputError) as caught:
        run_decoder(data, DecoderConfig(epochs=1))
    assert str(caught.value) == ("session 1 has 1 trial; the decoder's train/test split needs "
                                 "at least 2")


def test_torch_engine_without_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    model, sessions = hand_model()
    with pytest.raises(ConfigError) as caught:
        decoder._train_torch(model, sessions, [np.array([0.5, 0.5])], DecoderConfig(epochs=1))
    assert str(caught.value) == ("the torch decoder engine needs the 'decoder' extra: "
                                 "pip install 'trackverify[decoder]'")


@pytest.mark.parametrize("extra_bin", [False, True])
def test_torch_engine_takes_the_same_steps_as_the_analytic_gradients(extra_bin):
    """torch's autograd and Adam against the analytic gradients and the hand-written Adam
    (two independent implementations), on the hand model, with a label unseen in training
    in one variant; 3 steps at lr 0.1 so the parameters move."""
    pytest.importorskip("torch")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # the trainer runs with cfg.threads = 1, then restores 2
    results = []
    for trainer in (decoder._train_numpy, decoder._train_torch):
        model, sessions = hand_model(extra_bin)
        history = trainer(model, sessions, [np.array([0.2, 0.6])],
                          DecoderConfig(epochs=3, lr=0.1, l1=0.01))
        results.append((history, model.params()))
    (h_np, p_np), (h_t, p_t) = results
    assert len(h_t) == 3 and h_t[0] == pytest.approx(math.log1p(math.exp(-1)) + 0.005, rel=1e-14)
    np.testing.assert_allclose(h_t, h_np, rtol=1e-12)
    for a, b in zip(p_np, p_t, strict=True):
        assert type(b) is np.ndarray
        np.testing.assert_allclose(b, a, rtol=1e-10)
    assert torch.get_num_threads() == 2  # restored
    torch.set_num_threads(threads)


def separable_data(signs=(1.0, -1.0), empty_first=False, d_in=0):
    """Sessions of 4 identical trials of 2 bins, one neuron, ``d_in`` zero inputs. Bin 0:
    output 0 class 0, output 1 class 0; bin 1: classes 1 and 2. The neuron reads -sign in
    bin 0 and +sign in bin 1 (by default session 0 sign +1, session 1 sign -1). With
    ``empty_first`` a session of 0 trials comes first."""
    neural, inputs, outputs = ([[]], [[]], [[]]) if empty_first else ([], [], [])
    for sign in signs:
        neural.append([np.array([[-sign, sign]]) for _ in range(4)])
        inputs.append([np.zeros((d_in, 2)) for _ in range(4)])
        outputs.append([np.array([[0, 1], [0, 2]]) for _ in range(4)])
    return {"neural": neural, "input": inputs, "output": outputs}


def set_right(model, sessions, weights, cfg):
    """W_s = the sign of its session; output 0 logits [-z, z], output 1 [-z, -1/2, z]."""
    model.W = [np.array([[1.0]]), np.array([[-1.0]])][:len(sessions)]
    model.A = [np.array([[-1.0], [1.0]]), np.array([[-1.0], [0.0], [1.0]])]
    model.b = [np.zeros(2), np.array([0.0, -0.5, 0.0])]
    return [1.0]


def test_evaluation_of_a_model_set_by_hand(monkeypatch):
    """The trainer replaced by one that sets W_s = the sign of session s (so z = -1 in bin 0,
    +1 in bin 1 in both sessions; session 1 with session 0's W would read the opposite) and
    output 0's classifier to logits [-z, z] (class 1 iff z > 0), output 1's to
    [-z, -1/2, z] (class 0 when z = -1, class 2 when z = 1, never 1). Split at 0.7 of 4:
    2 train, 2 test trials per session. Output 0: every test bin right, BA 1, chance 1/2,
    normalised 1. Output 1 (largest training label 2: C = 3): classes 0 and 2 right, BA over
    the present classes = 1, chance 1/3, normalised 1."""
    def set_by_hand(model, sessions, weights, cfg):
        assert [s.X.shape for s in sessions] == [(1, 4), (1, 4)]  # 2 trials x 2 bins each
        return set_right(model, sessions, weights, cfg)

    monkeypatch.setattr(decoder, "_train_numpy", set_by_hand)
    result = run_decoder(separable_data(), DecoderConfig(p=1, epochs=1))
    assert result.n_classes == [2, 3]
    assert result.balanced_accuracy == [1.0, 1.0]
    assert result.chance == [0.5, pytest.approx(1 / 3, rel=1e-15)]
    assert result.chance_normalised == [1.0, pytest.approx(1.0, rel=1e-15)]
    assert (result.n_train_trials, result.n_test_trials) == (4, 4)
    assert result.output_names == ["output_0", "output_1"]
    out = result.to_dict()
    assert out["outputs"]["output_0"] == {"balanced_accuracy": 1.0, "chance": 0.5,
                                          "chance_normalised": 1.0, "n_classes": 2}
    assert out["final_loss"] == 1.0 and out["config"]["p"] == 1
    assert out["config"] == {"p": 1, "l1": 1e-4, "lr": 1e-3, "epochs": 1, "frac_train": 0.7,
                             "seed": 0, "svd_max_samples": 50_000, "svd_max_neurons": 2_000,
                             "engine": "numpy", "threads": 1}
    assert (out["n_train_trials"], out["n_test_trials"]) == (4, 4)


def test_evaluation_of_a_wrong_model_and_named_outputs(monkeypatch):
    """The classifier of output 0 flipped (logits [z, -z]): every test bin wrong, BA 0,
    normalised (0 - 1/2) / (1 - 1/2) = -1. Output 1 predicts class 1 everywhere (logit 1 on
    class 1): each present class has recall 0 -> BA 0, normalised (0 - 1/3) / (2/3) = -1/2.
    A dataset's ``output_names`` name the outputs."""
    def set_by_hand(model, sessions, weights, cfg):
        model.W = [np.array([[1.0]]), np.array([[-1.0]])]
        model.A = [np.array([[1.0], [-1.0]]), np.zeros((3, 1))]
        model.b = [np.zeros(2), np.array([0.0, 1.0, 0.0])]
        return []

    monkeypatch.setattr(decoder, "_train_numpy", set_by_hand)
    data = {**separable_data(), "output_names": ("side", "level")}
    result = run_decoder(data, DecoderConfig(p=1, epochs=1))
    assert result.output_names == ["side", "level"]
    assert result.balanced_accuracy == [0.0, 0.0]
    assert result.chance_normalised == [-1.0, pytest.approx(-0.5, rel=1e-15)]
    assert result.to_dict()["final_loss"] is None


def test_sessions_of_zero_trials_are_skipped_without_shifting_the_projections(monkeypatch):
    """As the model set by hand, after a first session of 0 trials: session 1 takes the
    first projection (sign +1), session 2 the second (-1); every test bin right."""
    monkeypatch.setattr(decoder, "_train_numpy", set_right)
    result = run_decoder(separable_data(empty_first=True), DecoderConfig(p=1, epochs=1))
    assert result.balanced_accuracy == [1.0, 1.0]
    assert (result.n_train_trials, result.n_test_trials) == (4, 4)


def test_only_the_test_trials_are_scored(monkeypatch):
    """2 test trials x 2 bins in each of 2 sessions: 8 bins per output reach the balanced
    accuracy (16 would be every trial)."""
    seen = []

    def recording(y_true, y_pred):
        seen.append((y_true.tolist(), y_pred.tolist()))
        return 0.5

    monkeypatch.setattr(decoder, "balanced_accuracy", recording)
    monkeypatch.setattr(decoder, "_train_numpy", set_right)
    run_decoder(separable_data(), DecoderConfig(p=1, epochs=1))
    assert seen == [([0, 1] * 4, [0, 1] * 4), ([0, 2] * 4, [0, 2] * 4)]


def test_one_session_and_the_torch_engine(monkeypatch):
    """One session: its own projection and classifier set by hand; engine "torch" calls the
    torch trainer (replaced by the hand-set one here)."""
    calls = []

    def torch_trainer(model, sessions, weights, cfg):
        calls.append(cfg.engine)
        return set_right(model, sessions, weights, cfg)

    monkeypatch.setattr(decoder, "_train_torch", torch_trainer)
    result = run_decoder(separable_data(signs=(1.0,)), DecoderConfig(p=1, epochs=1,
                                                                     engine="torch"))
    assert calls == ["torch"]
    assert result.balanced_accuracy == [1.0, 1.0] and result.n_classes == [2, 3]
    assert (result.n_train_trials, result.n_test_trials) == (2, 2)


def test_initial_parameters_follow_the_documented_draws(monkeypatch):
    """p = 3, one input variable: fan_in 4, bound 1/2. The generator of ``seed`` draws the
    split (one permutation per session), then no projection draw (1 neuron, 8 bins), then
    A_k ~ U(-1/2, 1/2) of shape (C_k, 4) for each output, then b_k ~ U(-1/2, 1/2)."""
    start = {}

    def record(model, sessions, weights, cfg):
        start["A"], start["b"] = [a.copy() for a in model.A], [c.copy() for c in model.b]
        start["weights"] = [w.copy() for w in weights]
        return []

    monkeypatch.setattr(decoder, "_train_numpy", record)
    run_decoder(separable_data(d_in=1), DecoderConfig(p=3, epochs=1, seed=11))
    rng = np.random.default_rng(11)
    rng.permutation(4), rng.permutation(4)
    A = [rng.uniform(-0.5, 0.5, size=(c, 4)) for c in (2, 3)]
    b = [rng.uniform(-0.5, 0.5, size=c) for c in (2, 3)]
    for got, want in zip([*start["A"], *start["b"]], [*A, *b], strict=True):
        np.testing.assert_array_equal(got, want)
    # class weights from the pooled training bins: output 0 counts 4, 4 -> 1/2, 1/2;
    # output 1 counts 4, 0, 4 -> 8/(3*4), 8/(3*1), 8/(3*4) normalised 1/6, 2/3, 1/6
    np.testing.assert_allclose(start["weights"][0], [0.5, 0.5])
    np.testing.assert_allclose(start["weights"][1], [1 / 6, 2 / 3, 1 / 6])


def test_projection_gets_the_run_settings_and_generator(monkeypatch):
    calls = []
    original = decoder.init_projection

    def record(X, p, rng, max_samples, max_neurons):
        calls.append((X.shape, p, type(rng), max_samples, max_neurons))
        return original(X, p, rng, max_samples, max_neurons)

    monkeypatch.setattr(decoder, "init_projection", record)
    monkeypatch.setattr(decoder, "_train_numpy", lambda *args: [])
    run_decoder(separable_data(), DecoderConfig(p=2, epochs=1, svd_max_samples=7,
                                                svd_max_neurons=9))
    assert calls == [((1, 4), 2, np.random.Generator, 7, 9)] * 2


@pytest.mark.parametrize("T, N", [(50, 8), (40, 20)])
def test_projection_at_the_limits_draws_nothing(T, N):
    """T = max_samples or N = max_neurons: no subset and no compression, so the run's
    generator is left where it was (the classifier's initial draws follow)."""
    rng = np.random.default_rng(3)
    init_projection(np.random.default_rng(T).normal(size=(N, T)), 3, rng, 50, 20)
    assert rng.random() == np.random.default_rng(3).random()


def test_an_output_of_one_class_has_no_chance_normalised_accuracy(monkeypatch):
    """Output 0 all class 0: C = 1, chance 1; the argmax of one class is always right: BA 1,
    (BA - chance) / (1 - chance) undefined (None)."""
    data = separable_data()
    data["output"] = [[np.zeros((1, 2)) for _ in session] for session in data["output"]]

    def one_class(model, sessions, weights, cfg):
        return []

    monkeypatch.setattr(decoder, "_train_numpy", one_class)
    result = run_decoder(data, DecoderConfig(p=1, epochs=1))
    assert result.n_classes == [1] and result.chance == [1.0]
    assert result.balanced_accuracy == [1.0] and result.chance_normalised == [None]


@pytest.mark.parametrize("sessions", [0, 2])
def test_a_dataset_without_trials_is_refused(sessions):
    data = {"neural": [[]] * sessions, "input": [[]] * sessions, "output": [[]] * sessions}
    with pytest.raises(InputError) as caught:
        run_decoder(data, DecoderConfig(epochs=1))
    assert str(caught.value) == f"the dataset holds no trial ({sessions} session(s))"


def test_unknown_engine_is_named():
    with pytest.raises(ConfigError) as caught:
        run_decoder(separable_data(), DecoderConfig(engine="jax"))
    assert str(caught.value) == "unknown decoder engine 'jax' (use numpy or torch)"


def test_training_runs_with_the_configured_blas_threads(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return sorted({pool["num_threads"] for pool in threadpool_info()
                       if pool["user_api"] == "blas"})

    seen = []
    monkeypatch.setattr(decoder, "_run_decoder",
                        lambda data, config: seen.append(blas_threads()))
    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
    if not blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can limit")
    with threadpool_limits(limits=2, user_api="blas"):
        run_decoder({}, DecoderConfig(threads=1))
    assert seen == [[1]]
