"""Per-animal false-certification losses and the two finite-sample guarantees.

**Loss.** For calibration animal ``i`` with ``m_i >= 1`` labelled errors (rows with
``error == 1``, over all its recordings and conditions) and threshold ``t``:

    L_i(t) = #{error rows of i with a finite score <= t} / m_i   in [0, 1] (B = 1)

Abstained error rows (no finite score) are never certified and stay in ``m_i``. ``L_i`` is a
non-decreasing, right-continuous step function of ``t`` that jumps only at the animal's
finite error scores. Animals with ``m_i = 0`` have no false-certification rate (undefined)
and are left out: the ``n`` below counts the animals *with* errors, and the guarantees are
about a new animal that has at least one labelled error. (Scoring such animals as loss 0
instead would give a valid but weaker, diluted statement: ``E[FCR * 1{errors}] <= A``, not
"the share of a new animal's wrong identities that are certified".)

``R_n(t) = mean_i L_i(t)`` is the calibration risk. It jumps only at the pooled distinct
finite error scores ``u_1 < ... < u_m``; below ``u_1`` it is 0.

**Conformal risk control** (Angelopoulos, Bates, Fisch, Lei, Schuster, ICLR 2024): with
``lambda = -t`` the loss is non-increasing in ``lambda``; the rule
``lambda_hat = inf{lambda : n/(n+1) R_n(lambda) + B/(n+1) <= A}`` needs a right-continuous
loss in ``lambda``, i.e. certification ``score < t`` (strict). So ``t_hat = u_k*`` with strict
acceptance, where ``k*`` is the first jump with ``n/(n+1) R_n(u_k) + 1/(n+1) > A``; with the
non-strict rule of SPEC section 6 this is ``threshold = nextafter(u_k*, -inf)`` (every score
below ``u_k*`` is certified, none at or above it). Then ``E[L_{n+1}(t_hat)] <= A`` for a new
exchangeable animal. Reachable only when ``1/(n+1) <= A`` (the bound at ``t = -inf``).

**Learn-then-Test** (Angelopoulos, Bates, Candes, Jordan, Lei 2021), with the
Hoeffding-Bentkus p-value of the null ``H_t: R(t) > A`` (``R`` = expected loss of a new
animal; losses in [0, 1], animals i.i.d.):

    p_H(t) = exp(-n h(min(R_n(t), A), A)),  h(a, b) = a log(a/b) + (1-a) log((1-a)/(1-b))
    p_B(t) = e * P(Binomial(n, A) <= ceil(n R_n(t)))
    p(t)   = min(p_H(t), p_B(t), 1)

(Bentkus's inequality is stated for losses in [0, 1], not only binary ones.) Thresholds are
tested in a fixed sequence from the most conservative (``t = -inf``, certify nothing)
upward, stopping at the first ``p > delta``. ``p`` is non-decreasing in ``R_n``, and
``R_n`` in ``t``, so the sequence over the continuum of thresholds stops at the first jump
``u_k*`` with ``p(u_k*) > delta``, and ``threshold = nextafter(u_k*, -inf)``. Then
``P(R(t_hat) > A) <= delta`` over the calibration animals. Reachable only when
``p(-inf) = (1 - A)^n <= delta``, i.e. ``A >= 1 - delta^(1/n)``.

At ``A = 1`` the formulas are followed as written: ``h(a, 1)`` is infinite for ``a < 1`` and
``P(Binomial(n, 1) <= k) = 0`` for ``k < n``, so ``p = 0`` at every jump with ``R_n < 1``; at
the jump where ``R_n`` reaches 1 (every calibration error certified) ``h(1, 1) = 0`` and
``p = min(1, e, 1) = 1 > delta``, so that last jump is refused. The null ``R > 1`` is empty,
so any threshold would be valid there; refusing the last jump is conservative (it certifies
less, never more) and a target of 1 promises nothing, so it is kept rather than special-cased.

If no jump fails, every calibration error score is admissible and the threshold is
``+inf`` here (the fit step caps it at the largest finite calibration score, which only
certifies less).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import xlogy
from scipy.stats import binom

from trackverify.errors import ConfigError


@dataclass(frozen=True)
class LossCurve:
    """The calibration risk ``R_n`` as a step function of the threshold.

    ``jumps`` are the distinct finite error scores (ascending); ``risk[k]`` is
    ``R_n(jumps[k])`` with ``score <= jumps[k]`` certified; ``n`` the animals with errors.
    """

    n: int
    n_without_errors: int
    jumps: np.ndarray
    risk: np.ndarray

    def risk_at(self, threshold: float) -> float:
        """``R_n(threshold)`` (certified: finite score ``<= threshold``)."""
        k = int(np.searchsorted(self.jumps, threshold, side="right"))
        return float(self.risk[k - 1]) if k else 0.0


def animal_losses(animal, score, error) -> LossCurve:
    """The calibration risk curve from rows (``animal`` id, ``score``, ``error`` 1/0/NaN)."""
    animal = np.asarray(animal).astype(str)
    score = np.asarray(score, dtype=np.float64)
    error = np.asarray(error, dtype=np.float64)
    names, codes = np.unique(animal, return_inverse=True)
    is_error = error == 1
    m = np.bincount(codes[is_error], minlength=len(names))
    n = int(np.count_nonzero(m))
    weight = np.zeros(len(names))
    weight[m > 0] = 1.0 / m[m > 0]
    certifiable = is_error & np.isfinite(score)
    # Each distinct finite error score is one jump; equal scores (of any animals) jump together.
    jumps, group = np.unique(score[certifiable], return_inverse=True)
    step = np.bincount(group, weights=weight[codes[certifiable]], minlength=len(jumps))
    # n = 0 leaves no error row: an empty curve (empty / 0 is empty).
    risk = np.cumsum(step) / n
    return LossCurve(n, int(len(names) - n), jumps, np.minimum(risk, 1.0))


def per_animal_fcr(animal, score, error, threshold: float) -> dict[str, float]:
    """Each animal's false-certification rate at ``threshold`` (animals without errors left out)."""
    animal = np.asarray(animal).astype(str)
    score = np.asarray(score, dtype=np.float64)
    is_error = np.asarray(error, dtype=np.float64) == 1
    names, codes = np.unique(animal, return_inverse=True)
    m = np.bincount(codes[is_error], minlength=len(names))
    certified = is_error & np.isfinite(score) & (score <= threshold)
    c = np.bincount(codes[certified], minlength=len(names))
    return {str(name): float(c[k] / m[k]) for k, name in enumerate(names) if m[k]}


def hoeffding_bentkus_p_value(risk, n: int, level: float) -> np.ndarray:
    """The Hoeffding-Bentkus p-value of ``H: R > level`` from ``n`` losses in [0, 1] with mean ``risk``."""
    r = np.atleast_1d(np.asarray(risk, dtype=np.float64))
    a = np.minimum(r, level)
    h = xlogy(a, a / level) + xlogy(1.0 - a, (1.0 - a) / (1.0 - level)) if level < 1 else 0.0
    hoeffding = np.exp(-n * h)
    # ceil(n R_n): R_n is a mean of n ratios; a float n*R_n a hair above an integer is that integer.
    k = np.ceil(np.round(n * r, 9))
    bentkus = math.e * binom.cdf(k, n, level)
    return np.minimum(np.minimum(hoeffding, bentkus), 1.0)


def smallest_target(n: int, method: str, delta: float | None = None) -> float | None:
    """The smallest ``A`` any threshold can guarantee with ``n`` calibration animals (None if n = 0).

    ``crc``: ``1 / (n + 1)``. ``ltt``: ``1 - delta^(1/n)`` (``(1 - A)^n <= delta``).
    """
    if n <= 0:
        return None
    if method == "crc":
        return 1.0 / (n + 1)
    if method == "ltt":
        return 1.0 - float(delta) ** (1.0 / n)
    raise ConfigError(f"unknown certification method {method!r}")


def round_up(value: float, digits: int = 2) -> float:
    """``value`` rounded up to ``digits`` significant digits (a target one may ask for)."""
    if value <= 0:
        return value
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(value)))
    return math.ceil(value * scale - 1e-9) / scale


@dataclass(frozen=True)
class Fitted:
    """A certified threshold: ``threshold`` (``+inf``: every finite score), the calibration risk
    there, the bound or p-value that admitted it, and the first refused jump (None if none)."""

    threshold: float
    risk: float
    statistic: float
    refused_at: float | None


def _fit(curve: LossCurve, ok: np.ndarray, statistic: np.ndarray, at_minus_inf: float) -> Fitted:
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return Fitted(math.inf, float(curve.risk[-1]) if len(curve.risk) else 0.0,
                      float(statistic[-1]) if len(statistic) else at_minus_inf, None)
    k = int(bad[0])
    return Fitted(float(np.nextafter(curve.jumps[k], -np.inf)),
                  float(curve.risk[k - 1]) if k else 0.0,
                  float(statistic[k - 1]) if k else at_minus_inf, float(curve.jumps[k]))


def check_reachable(n: int, level: float, method: str, delta: float | None,
                    animals: str = "calibration animal(s) with errors") -> None:
    """ConfigError (exit 2) naming the smallest reachable target when ``level`` is below it."""
    smallest = smallest_target(n, method, delta)
    if smallest is None:
        raise ConfigError("calibration failed: no calibration animal has a labelled error, so no "
                          "false-certification rate can be estimated")
    feasible = (1.0 / (n + 1) <= level if method == "crc"
                else float(hoeffding_bentkus_p_value(0.0, n, level)[0]) <= delta)
    if not feasible:
        extra = f" at delta={delta:g}" if method == "ltt" else ""
        raise ConfigError(
            f"with {n} {animals} no threshold can guarantee FCR <= {level:g} ({method}{extra}); "
            f"the smallest is {round_up(smallest, 2):g}")


def _reachable(curve: LossCurve, level: float, method: str, delta: float | None) -> None:
    check_reachable(curve.n, level, method, delta)


def crc_threshold(curve: LossCurve, level: float) -> Fitted:
    """Conformal risk control (module docstring): the largest ``t`` with
    ``n/(n+1) R_n(t) + 1/(n+1) <= level``. ConfigError when ``1/(n+1) > level``."""
    _reachable(curve, level, "crc", None)
    n = curve.n
    bound = n / (n + 1) * curve.risk + 1.0 / (n + 1)
    return _fit(curve, bound <= level, bound, 1.0 / (n + 1))


def ltt_threshold(curve: LossCurve, level: float, delta: float) -> Fitted:
    """Learn-then-Test, fixed sequence from ``t = -inf`` (module docstring); ConfigError when
    ``(1 - level)^n > delta``."""
    _reachable(curve, level, "ltt", delta)
    p = hoeffding_bentkus_p_value(curve.risk, curve.n, level)
    return _fit(curve, p <= delta, p, float(hoeffding_bentkus_p_value(0.0, curve.n, level)[0]))
