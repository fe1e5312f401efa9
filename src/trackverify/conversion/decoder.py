"""The linear neural decoder of converted datasets (EVALUATORS B6; paper B, Appendix D).

Model. Trials are concatenated along time within each session; a per-trial (1-D) input
or output is repeated over the trial's T bins. Session s has a projection
``W_s`` (p x N_s, p = 10); for each output k a shared linear classifier
``logits_k = A_k z_t + b_k`` acts on ``z_t = [W_s x_t ; u_t]`` with ``C_k`` = (max training
label + 1) classes.

Initialisation. ``W_s`` = the top-p right singular vectors of the session's training
(time x neuron) matrix, no mean-centring; above ``svd_max_samples`` (5e4) timepoints a
random subset of timepoints is used, above ``svd_max_neurons`` (2e3) neurons the data are
first multiplied by a Gaussian ``P`` (N_s x 2000, entries N(0, 1/2000)) and
``W_s = (P V[:, :p])^T``. Sessions with fewer than p neurons or timepoints get zero rows.
Classifier weights and biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's default).

Loss. Class-balanced cross-entropy: class weights ``w_c = total / (C_k max(count_c, 1))``
from the pooled training bins, normalised to sum to 1; per session and output
``L_sk = sum_t w_{y_t} l_t / sum_t w_{y_t}``; total ``sum_s sum_k L_sk + l1 sum_s |W_s|_1``
with l1 = 1e-4 (only the projections are penalised, as in the authors' code).

Training. Full batch, one Adam step (lr 1e-3, betas 0.9/0.999, eps 1e-8) per epoch,
200 epochs. Split: within each session a random permutation of trials,
``n_train = min(max(1, floor(0.7 n)), n - 1)``, from ``numpy.random.default_rng(seed)``.

Evaluation. Argmax per bin; per output, balanced accuracy over all test bins pooled
across sessions; chance = 1/C_k; chance-normalised = (BA - chance) / (1 - chance).

Engines: ``numpy`` (default; analytic gradients, float64) and ``torch`` (extra
``decoder``; autograd, float64, same initial parameters), which train the same model.
Both run with ``threads`` (default 1) BLAS / torch threads: the products are small, and on
a shared machine more threads spin against each other (20x slower under load, measured).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from trackverify.conversion import MAX_EPOCHS
from trackverify.errors import ConfigError, InputError
from trackverify.scoring import balanced_accuracy
from trackverify.values import is_integer, is_real



@dataclass(frozen=True)
class DecoderConfig:
    """The decoder's settings (see the module), checked on construction: ``epochs`` an
    integer in [1, MAX_EPOCHS]; ``p``, ``svd_max_samples``, ``svd_max_neurons``, ``threads``
    integers >= 1; ``seed`` an integer >= 0; ``frac_train`` in [0, 1]; ``lr`` > 0; ``l1``
    >= 0 (finite numbers); ``engine`` numpy or torch. Anything else: :class:`ConfigError`."""

    p: int = 10
    l1: float = 1e-4
    lr: float = 1e-3
    epochs: int = 200
    frac_train: float = 0.7
    seed: int = 0
    svd_max_samples: int = 50_000
    svd_max_neurons: int = 2_000
    engine: str = "numpy"
    threads: int = 1  # BLAS / torch threads: the products are small, more threads mostly contend

    def __post_init__(self) -> None:
        _check_integer("epochs", self.epochs, 1, MAX_EPOCHS)
        for name in ("p", "svd_max_samples", "svd_max_neurons", "threads"):
            _check_integer(name, getattr(self, name), 1)
        _check_integer("seed", self.seed, 0)  # numpy's generators take non-negative seeds
        _check_number("frac_train", self.frac_train, 0.0, 1.0)
        _check_number("lr", self.lr, 0.0, strict=True)
        _check_number("l1", self.l1, 0.0)
        if self.engine not in ("numpy", "torch"):
            raise ConfigError(f"unknown decoder engine '{self.engine}' (use numpy or torch)")


def _check_integer(name: str, value: Any, low: int, high: int | None = None) -> None:
    """An int (not a bool) in ``[low, high]`` (``>= low`` without ``high``)."""
    if not is_integer(value, low, high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ConfigError(f"decoder {name} {value!r} must be an integer {bound}")


def _check_number(name: str, value: Any, low: float, high: float | None = None,
                  strict: bool = False) -> None:
    """A finite real number (not a bool) ``>= low`` (``> low`` if ``strict``), ``<= high``."""
    if not is_real(value, low, high, strict=strict):  # an int is finite (even past float)
        bound = f"{'>' if strict else '>='} {low}" if high is None else f"in [{low}, {high}]"
        raise ConfigError(f"decoder {name} {value!r} must be a finite number {bound}")


@dataclass
class Session:
    """One session's bins: X (N, T), U (d_in, T), Y (d_out, T) int, trial (T,) index."""

    X: np.ndarray
    U: np.ndarray
    Y: np.ndarray
    trial: np.ndarray


@dataclass
class DecoderResult:
    output_names: list[str]
    balanced_accuracy: list[float | None]
    chance: list[float]
    chance_normalised: list[float | None]
    n_classes: list[int]
    n_train_trials: int
    n_test_trials: int
    loss: list[float] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"outputs": {name: {"balanced_accuracy": ba, "chance": ch,
                                   "chance_normalised": cn, "n_classes": c}
                            for name, ba, ch, cn, c in zip(self.output_names,
                                                           self.balanced_accuracy, self.chance,
                                                           self.chance_normalised,
                                                           self.n_classes)},
                "n_train_trials": self.n_train_trials, "n_test_trials": self.n_test_trials,
                "final_loss": self.loss[-1] if self.loss else None, "config": self.config}


def _as_time(v: np.ndarray, T: int) -> np.ndarray:
    return v if v.ndim == 2 else np.repeat(v[:, None], T, axis=1)


def prepare_sessions(data: dict[str, Any], trials: list[np.ndarray] | None = None
                     ) -> list[Session]:
    """Concatenate trials along time (only ``trials[s]`` of session s when given)."""
    sessions = []
    for s, session in enumerate(data["neural"]):
        keep = range(len(session)) if trials is None else trials[s]
        xs, us, ys, ids = [], [], [], []
        for t in keep:
            x = np.asarray(session[t], dtype=np.float64)
            T = x.shape[1]
            xs.append(x)
            us.append(_as_time(np.asarray(data["input"][s][t], dtype=np.float64), T))
            ys.append(_as_time(np.rint(data["output"][s][t]).astype(np.int64), T))
            ids.append(np.full(T, t, dtype=np.int64))
        if not xs:
            continue
        sessions.append(Session(np.concatenate(xs, 1), np.concatenate(us, 1),
                                np.concatenate(ys, 1), np.concatenate(ids)))
    return sessions


def split_trials(n_trials: list[int], frac_train: float, rng: np.random.Generator
                 ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per-session random split: n_train = min(max(1, floor(frac n)), n - 1)."""
    train, test = [], []
    for n in n_trials:
        perm = rng.permutation(n)
        n_train = min(max(1, int(np.floor(frac_train * n))), max(n - 1, 0))
        train.append(np.sort(perm[:n_train]))
        test.append(np.sort(perm[n_train:]))
    return train, test


def init_projection(X: np.ndarray, p: int, rng: np.random.Generator, max_samples: int,
                    max_neurons: int) -> np.ndarray:
    """PCA (uncentred SVD) initialisation of a session's p x N projection (see module)."""
    N, T = X.shape
    data = X.T  # time x neuron
    if T > max_samples:
        data = data[np.sort(rng.choice(T, size=max_samples, replace=False))]
    P = None
    if N > max_neurons:
        P = rng.normal(0.0, 1.0 / np.sqrt(max_neurons), size=(N, max_neurons))
        data = data @ P
    _, _, vt = np.linalg.svd(data, full_matrices=False)
    V = vt[:p].T  # (columns of data) x k
    if P is not None:
        V = P @ V
    W = np.zeros((p, N))
    W[:V.shape[1]] = V.T
    return W


def class_weights(labels: list[np.ndarray], n_classes: int) -> np.ndarray:
    """``w_c = total / (C max(count_c, 1))`` over the pooled labels, normalised to sum 1."""
    pooled = np.concatenate(labels) if labels else np.zeros(0, dtype=np.int64)
    counts = np.bincount(pooled, minlength=n_classes)[:n_classes]
    w = pooled.size / (n_classes * np.maximum(counts, 1))
    return w / w.sum()


class _Model:
    """Parameters: W (per session), A (per output), b (per output)."""

    def __init__(self, W: list[np.ndarray], A: list[np.ndarray], b: list[np.ndarray]):
        self.W, self.A, self.b = W, A, b

    def params(self) -> list[np.ndarray]:
        return [*self.W, *self.A, *self.b]

    def features(self, s: int, sess: Session) -> np.ndarray:
        return np.concatenate([self.W[s] @ sess.X, sess.U], axis=0)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=0, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=0, keepdims=True))


def _numpy_loss_and_grads(model: _Model, sessions: list[Session], weights: list[np.ndarray],
                          l1: float) -> tuple[float, list[np.ndarray]]:
    p = model.W[0].shape[0]
    gW = [np.zeros_like(w) for w in model.W]
    gA = [np.zeros_like(a) for a in model.A]
    gb = [np.zeros_like(b) for b in model.b]
    total = 0.0
    for s, sess in enumerate(sessions):
        Z = model.features(s, sess)
        gZ = np.zeros_like(Z)
        T = Z.shape[1]
        for k, (A, b) in enumerate(zip(model.A, model.b)):
            y = sess.Y[k]
            valid = y < A.shape[0]  # labels unseen in training carry no loss
            wt = np.where(valid, weights[k][np.minimum(y, A.shape[0] - 1)], 0.0)
            norm = wt.sum()
            if norm <= 0:
                continue
            logp = _log_softmax(A @ Z + b[:, None])
            cols = np.arange(T)
            yc = np.minimum(y, A.shape[0] - 1)
            total += float(-(wt * logp[yc, cols]).sum() / norm)
            d = np.exp(logp)
            d[yc, cols] -= 1.0
            d *= wt / norm
            gA[k] += d @ Z.T
            gb[k] += d.sum(axis=1)
            gZ += A.T @ d
        gW[s] += gZ[:p] @ sess.X.T
    for s, W in enumerate(model.W):
        total += l1 * float(np.abs(W).sum())
        gW[s] += l1 * np.sign(W)
    return total, [*gW, *gA, *gb]


def _train_numpy(model: _Model, sessions, weights, cfg: DecoderConfig) -> list[float]:
    params = model.params()
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    history = []
    for step in range(1, cfg.epochs + 1):
        loss, grads = _numpy_loss_and_grads(model, sessions, weights, cfg.l1)
        history.append(loss)
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        for q, g, mq, vq in zip(params, grads, m, v):
            mq *= b1
            mq += (1 - b1) * g
            vq *= b2
            vq += (1 - b2) * g * g
            q -= (cfg.lr / bc1) * mq / (np.sqrt(vq / bc2) + eps)
    return history


def _train_torch(model: _Model, sessions, weights, cfg: DecoderConfig) -> list[float]:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigError("the torch decoder engine needs the 'decoder' extra: "
                          "pip install 'trackverify[decoder]'") from exc
    dt = torch.float64
    W = [torch.tensor(w, dtype=dt, requires_grad=True) for w in model.W]
    A = [torch.tensor(a, dtype=dt, requires_grad=True) for a in model.A]
    b = [torch.tensor(c, dtype=dt, requires_grad=True) for c in model.b]
    Xs = [torch.tensor(sess.X, dtype=dt) for sess in sessions]
    Us = [torch.tensor(sess.U, dtype=dt) for sess in sessions]
    # Labels unseen in training (>= C_k) carry no loss: keep only the other bins.
    keep = [[None if (y < a.shape[0]).all() else torch.from_numpy(np.flatnonzero(y < a.shape[0]))
             for y, a in zip(sess.Y, model.A)] for sess in sessions]
    Ys = [[torch.tensor(y[y < a.shape[0]], dtype=torch.long) for y, a in zip(sess.Y, model.A)]
          for sess in sessions]
    cw = [torch.tensor(w, dtype=dt) for w in weights]
    opt = torch.optim.Adam([*W, *A, *b], lr=cfg.lr)
    history: list[float] = []
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        for _ in range(cfg.epochs):
            opt.zero_grad()
            loss = cfg.l1 * sum(w.abs().sum() for w in W)
            for s in range(len(sessions)):
                Z = torch.cat([W[s] @ Xs[s], Us[s]], dim=0)
                for k in range(len(A)):
                    if Ys[s][k].numel():
                        Zk = Z if keep[s][k] is None else Z[:, keep[s][k]]
                        logits = (A[k] @ Zk + b[k][:, None]).T
                        loss = loss + torch.nn.functional.cross_entropy(
                            logits, Ys[s][k], weight=cw[k])
            loss.backward()
            opt.step()
            history.append(float(loss.detach()))
    finally:
        torch.set_num_threads(threads)
    model.W = [w.detach().numpy().copy() for w in W]
    model.A = [a.detach().numpy().copy() for a in A]
    model.b = [c.detach().numpy().copy() for c in b]
    return history


def run_decoder(data: dict[str, Any], config: DecoderConfig = DecoderConfig()) -> DecoderResult:
    """Train the decoder on the training trials of ``data`` and score the test trials.

    ``data`` must have passed format validation. Sessions with 0 trials are skipped; a
    session with 1 trial (refused by the format check, OQ-B2.2) raises :class:`InputError`
    (its only trial would be a test trial without a trained projection), and so does a
    dataset without any trial.
    """
    with threadpool_limits(limits=config.threads, user_api="blas"):
        return _run_decoder(data, config)


def _run_decoder(data: dict[str, Any], config: DecoderConfig) -> DecoderResult:
    rng = np.random.default_rng(config.seed)
    n_trials = [len(session) for session in data["neural"]]
    if 1 in n_trials:  # no training trial, so no trained projection for the test trial
        raise InputError(f"session {n_trials.index(1)} has 1 trial; the decoder's train/test "
                         "split needs at least 2")
    if not any(n_trials):
        raise InputError(f"the dataset holds no trial ({len(n_trials)} session(s))")
    train_idx, test_idx = split_trials(n_trials, config.frac_train, rng)
    # Every session with trials has at least 2, so 1 <= n_train <= n - 1: train[i] and
    # test[i] are the same session, the i-th with trials (sessions of 0 trials are skipped).
    train = prepare_sessions(data, train_idx)
    test = prepare_sessions(data, test_idx)
    d_out = train[0].Y.shape[0]
    n_classes = [int(max(sess.Y[k].max() for sess in train)) + 1 for k in range(d_out)]
    weights = [class_weights([sess.Y[k] for sess in train], n_classes[k]) for k in range(d_out)]
    W = [init_projection(sess.X, config.p, rng, config.svd_max_samples, config.svd_max_neurons)
         for sess in train]
    fan_in = config.p + train[0].U.shape[0]
    bound = 1.0 / np.sqrt(fan_in)
    A = [rng.uniform(-bound, bound, size=(c, fan_in)) for c in n_classes]
    b = [rng.uniform(-bound, bound, size=c) for c in n_classes]
    model = _Model(W, A, b)
    trainer = _train_numpy if config.engine == "numpy" else _train_torch
    history = trainer(model, train, weights, config)

    y_true: list[list[np.ndarray]] = [[] for _ in range(d_out)]
    y_pred: list[list[np.ndarray]] = [[] for _ in range(d_out)]
    for pos, sess in enumerate(test):
        Z = model.features(pos, sess)
        for k in range(d_out):
            y_true[k].append(sess.Y[k])
            y_pred[k].append(np.argmax(model.A[k] @ Z + model.b[k][:, None], axis=0))
    bas = [balanced_accuracy(np.concatenate(t), np.concatenate(p))
           for t, p in zip(y_true, y_pred)]
    chance = [1.0 / c for c in n_classes]
    normed = [None if ch >= 1 else (ba - ch) / (1 - ch)
              for ba, ch in zip(bas, chance)]
    names = list(data.get("output_names", [f"output_{k}" for k in range(d_out)]))
    return DecoderResult(names, bas, chance, normed, n_classes,
                         int(sum(len(t) for t in train_idx)), int(sum(len(t) for t in test_idx)),
                         history, {k: getattr(config, k) for k in config.__dataclass_fields__})
