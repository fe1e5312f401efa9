"""Per-animal losses, conformal risk control, Learn-then-Test: values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import xlogy
from scipy.stats import binom

from trackverify.benchmark.certify import (animal_losses, crc_threshold, hoeffding_bentkus_p_value,
                                 ltt_threshold, parse_target, smallest_target)
from trackverify.benchmark.certify.guarantees import check_reachable, per_animal_fcr, round_up
from trackverify.errors import ConfigError

# animal a: errors at scores 1, 2 and one abstained error (m = 3); a correct row at 0.5
# animal b: one error at 3 (m = 1) and a correct row at 1; animal c: no error at all.
ANIMAL = ["a", "a", "a", "a", "b", "b", "c"]
SCORE = [1.0, 2.0, np.nan, 0.5, 3.0, 1.0, 0.0]
ERROR = [1, 1, 1, 0, 1, 0, 0]


def test_loss_curve_by_hand():
    curve = animal_losses(ANIMAL, SCORE, ERROR)
    assert (curve.n, curve.n_without_errors) == (2, 1)
    assert curve.jumps.tolist() == [1.0, 2.0, 3.0]
    # R(1) = (1/3 + 0)/2, R(2) = (2/3 + 0)/2, R(3) = (2/3 + 1)/2
    assert curve.risk == pytest.approx([1 / 6, 1 / 3, 5 / 6])
    assert curve.risk_at(0.99) == 0.0 and curve.risk_at(2.5) == pytest.approx(1 / 3)
    assert per_animal_fcr(ANIMAL, SCORE, ERROR, 2.0) == pytest.approx({"a": 2 / 3, "b": 0.0})


def test_crc_by_hand():
    curve = animal_losses(ANIMAL, SCORE, ERROR)
    # n = 2: bound(t) = 2/3 R(t) + 1/3. A = 0.4: 1/3 <= 0.4 below 1, 4/9 > 0.4 at 1.
    fit = crc_threshold(curve, 0.4)
    assert fit.refused_at == 1.0 and fit.threshold < 1.0 and fit.threshold == np.nextafter(1.0, 0)
    assert fit.risk == 0.0
    # A = 0.7: bounds 4/9, 5/9 pass; 8/9 at 3 fails.
    fit = crc_threshold(curve, 0.7)
    assert fit.refused_at == 3.0 and 2.0 <= fit.threshold < 3.0 and fit.risk == pytest.approx(1 / 3)
    assert fit.statistic == pytest.approx(5 / 9)
    # A = 0.95: 8/9 passes everywhere -> every finite score.
    assert math.isinf(crc_threshold(curve, 0.95).threshold)


def test_unreachable_target_names_the_smallest():
    # Six animals, each with one error: 1/(6+1) = 0.1428... -> the smallest one may ask for is 0.15.
    curve = animal_losses(list("abcdef"), [1.0] * 6, [1] * 6)
    with pytest.raises(ConfigError, match=r"with 6 calibration animal.*FCR <= 0\.1 .*smallest is 0\.15"):
        crc_threshold(curve, 0.1)
    assert crc_threshold(curve, 0.15).threshold < 1.0
    assert smallest_target(6, "crc") == pytest.approx(1 / 7)
    # LTT: (1 - A)^6 <= 0.1 <=> A >= 1 - 0.1 ** (1/6) = 0.3187...
    assert smallest_target(6, "ltt", 0.1) == pytest.approx(0.31870793)
    with pytest.raises(ConfigError, match="smallest is 0.32"):
        ltt_threshold(curve, 0.31, 0.1)
    assert round_up(1 / 7) == 0.15 and round_up(0.3187) == 0.32


def test_hoeffding_bentkus_by_hand():
    # n = 20, A = 0.3. R = 0: Hoeffding 0.7^20 (Bentkus is e times that).
    # R = 0.1: Hoeffding exp(-20 (0.1 ln(1/3) + 0.9 ln(9/7))); Bentkus e P(Bin(20, .3) <= 2).
    bentkus = math.e * sum(math.comb(20, k) * 0.3 ** k * 0.7 ** (20 - k) for k in range(3))
    hoeffding = math.exp(-20 * (0.1 * math.log(1 / 3) + 0.9 * math.log(0.9 / 0.7)))
    p = hoeffding_bentkus_p_value([0.0, 0.1, 0.3, 0.5], 20, 0.3)
    assert p[0] == pytest.approx(0.7 ** 20)
    assert p[1] == pytest.approx(min(bentkus, hoeffding))
    assert p[2] == 1.0 and p[3] == 1.0


def test_ltt_fixed_sequence_stops_at_first_failure():
    # 40 animals, one error each, at scores 1..40: R(k) = k/40. A = 0.2, delta = 0.1.
    n = 40
    curve = animal_losses([str(i) for i in range(n)], np.arange(1.0, n + 1), [1] * n)
    p = hoeffding_bentkus_p_value(np.arange(1, n + 1) / n, n, 0.2)
    first_bad = int(np.flatnonzero(p > 0.1)[0])
    fit = ltt_threshold(curve, 0.2, 0.1)
    assert fit.refused_at == first_bad + 1.0 and fit.risk == pytest.approx(first_bad / n)
    assert first_bad + 1.0 > fit.threshold >= first_bad


def test_parse_target():
    t = parse_target("target_false_certification_rate=0.1")
    assert (t.kind, t.level, t.method, t.delta) == ("target_false_certification_rate", 0.1, "crc", None)
    t = parse_target("target_false_certification_rate=0.2,delta=0.05")
    assert (t.method, t.delta) == ("ltt", 0.05)
    assert parse_target("target_false_certification_rate=0.2,method=ltt").delta == 0.1
    assert parse_target("target_selective_risk=0.01").kind == "target_selective_risk"
    for bad in ("risk=high", "target_false_certification_rate=0", "target_false_certification_rate=x",
                "target_false_certification_rate=0.1,method=crc,delta=0.1",
                "target_false_certification_rate=0.1,method=bayes",
                "target_false_certification_rate=0.1,foo=1", "target_selective_risk=2"):
        with pytest.raises(ConfigError):
            parse_target(bad)


# --------------------------------------------------------------- boundaries, by hand


def test_risk_at_a_jump_counts_the_jump():
    # certified: finite score <= threshold, so at exactly 1.0 the first jump is in
    curve = animal_losses(ANIMAL, SCORE, ERROR)
    assert curve.risk_at(1.0) == pytest.approx(1 / 6)
    assert curve.risk_at(np.nextafter(1.0, 0)) == 0.0 and curve.risk_at(3.0) == pytest.approx(5 / 6)


def test_abstained_rows_may_be_given_as_none():
    # a plain list with None for the abstained score: read as NaN (never certified)
    curve = animal_losses(ANIMAL, [1.0, 2.0, None, 0.5, 3.0, 1.0, 0.0], ERROR)
    assert curve.jumps.tolist() == [1.0, 2.0, 3.0]
    assert curve.risk == pytest.approx([1 / 6, 1 / 3, 5 / 6])
    assert per_animal_fcr(ANIMAL, [1.0, 2.0, None, 0.5, 3.0, 1.0, 0.0], ERROR, 9.0) == \
        pytest.approx({"a": 2 / 3, "b": 1.0})


def test_equal_scores_of_different_animals_are_one_jump():
    # a: errors at 1, 1, 2 (m = 3); b: errors at 1, 3 (m = 2).
    # R(1) = (2/3 + 1/2)/2 = 7/12, R(2) = (1 + 1/2)/2 = 3/4, R(3) = 1.
    curve = animal_losses(list("aaabb"), [1.0, 1.0, 2.0, 1.0, 3.0], [1] * 5)
    assert curve.jumps.tolist() == [1.0, 2.0, 3.0]
    assert curve.risk == pytest.approx([7 / 12, 3 / 4, 1.0])
    assert curve.jumps.dtype == np.float64


def test_no_finite_error_score_is_an_empty_curve():
    curve = animal_losses(["a", "a", "b"], [np.nan, 1.0, 2.0], [1, 0, 0])
    assert (curve.n, curve.n_without_errors, curve.jumps.size, curve.risk.size) == (1, 1, 0, 0)
    assert curve.risk_at(100.0) == 0.0
    nobody = animal_losses(["a", "b"], [1.0, 2.0], [0, np.nan])
    assert (nobody.n, nobody.n_without_errors, nobody.jumps.size) == (0, 2, 0)


def test_risk_never_exceeds_one():
    # 2 animals with 9 errors each at 18 distinct scores: 18 steps of 1/9 sum, in floating
    # point, to a hair above 2, and R_n to a hair above 1; every error certified is R_n = 1.
    curve = animal_losses(["a"] * 9 + ["b"] * 9, np.arange(18.0), [1] * 18)
    assert np.cumsum(np.full(18, 1 / 9))[-1] / 2 > 1.0  # the rounding this guards against
    assert curve.risk[-1] == 1.0 and curve.risk_at(17.0) == 1.0


def test_per_animal_fcr_at_the_threshold():
    # a: errors at 1 and 2 and an abstained one; b: an error at 3; c: no error (left out).
    assert per_animal_fcr(ANIMAL, SCORE, ERROR, 1.0) == pytest.approx({"a": 1 / 3, "b": 0.0})
    assert per_animal_fcr(ANIMAL, SCORE, ERROR, np.nextafter(1.0, 0)) == {"a": 0.0, "b": 0.0}
    assert per_animal_fcr(ANIMAL, SCORE, ERROR, 3.0) == pytest.approx({"a": 2 / 3, "b": 1.0})
    # error NaN (unlabelled) is not an error
    assert per_animal_fcr(["a", "a"], [1.0, 1.0], [1, np.nan], 1.0) == {"a": 1.0}


def test_crc_five_animals_with_the_n_plus_one_correction():
    """Five animals, one error each, at scores 1..5: R_n(k) = k / 5 and the CRC bound
    n/(n+1) R_n + 1/(n+1) = 5/6 * k/5 + 1/6 = (k + 1) / 6. A = 0.5 = 3/6 is reached
    *exactly* at the second jump (bound <= A admits it) and exceeded at the third."""
    curve = animal_losses(list("abcde"), [1.0, 2.0, 3.0, 4.0, 5.0], [1] * 5)
    fit = crc_threshold(curve, 0.5)
    assert fit.refused_at == 3.0 and fit.threshold == np.nextafter(3.0, -np.inf)
    assert fit.risk == pytest.approx(2 / 5) and fit.statistic == 0.5
    # one side: A a hair below 1/2 refuses the second jump; the other: A = 4/6 admits the third
    below = crc_threshold(curve, np.nextafter(0.5, 0))
    assert below.refused_at == 2.0 and below.risk == pytest.approx(1 / 5)
    above = crc_threshold(curve, 4 / 6 + 1e-12)
    assert above.refused_at == 4.0 and above.statistic == pytest.approx(4 / 6)


def test_crc_statistic_when_the_first_jump_or_none_is_refused():
    curve = animal_losses(ANIMAL, SCORE, ERROR)
    # n = 2, A = 0.4: refused at the first jump; the bound there is at t = -inf: 1/(n+1) = 1/3
    first = crc_threshold(curve, 0.4)
    assert first.risk == 0.0 and first.statistic == pytest.approx(1 / 3)
    # A = 0.95: no jump refused: the risk and the bound at the last jump (R = 5/6, 2/3 * 5/6 + 1/3)
    none = crc_threshold(curve, 0.95)
    assert (none.threshold, none.refused_at) == (math.inf, None)
    assert none.risk == pytest.approx(5 / 6) and none.statistic == pytest.approx(8 / 9)
    # every error abstained: no jump at all; risk 0 and the bound at -inf, 1/(1+1)
    empty = crc_threshold(animal_losses(["a", "a"], [np.nan, 1.0], [1, 0]), 0.6)
    assert (empty.threshold, empty.risk, empty.statistic, empty.refused_at) == (math.inf, 0.0, 0.5, None)


def _hoeffding(r, n, level):
    a = min(r, level)
    h = (a * math.log(a / level) if a > 0 else 0.0) + (1 - a) * math.log((1 - a) / (1 - level))
    return math.exp(-n * h)


def _bentkus(k, n, level):
    return math.e * binom.cdf(k, n, level)


@pytest.mark.parametrize("r, n, level, k, decides", [
    (0.28, 50, 0.3, 14, "hoeffding"),    # 0.953 < e P(Bin(50, .3) <= 14) = 1.21
    (0.1, 10, 0.2, 1, "hoeffding"),      # 0.693 < 1.02
    (0.2, 100, 0.3, 20, "bentkus"),      # e P(Bin(100, .3) <= 20) = 0.0448 < 0.0763
    (0.125, 20, 0.3, 3, "hoeffding"),    # n r = 2.5 -> ceil 3: Bentkus 0.291 > Hoeffding 0.180
    (0.1 + 0.2, 10, 0.5, 3, "hoeffding"),  # n r = 3.0000000000000004 is 3, not 4
    ((3 + 3e-10) / 20, 20, 0.3, 3, "bentkus"),  # n r within 1e-9 of 3 is 3: 0.291, not e P(<= 4)
])
def test_hoeffding_bentkus_against_scipy(r, n, level, k, decides):
    hoeffding, bentkus = _hoeffding(r, n, level), _bentkus(k, n, level)
    assert (hoeffding < bentkus) == (decides == "hoeffding")
    assert hoeffding_bentkus_p_value(r, n, level)[0] == pytest.approx(min(hoeffding, bentkus), rel=1e-12)


def test_p_value_at_level_one_and_never_above_one():
    # A = 1: R > 1 is impossible; Hoeffding is exp(0) = 1, Bentkus e P(Bin(n, 1) <= k): 0 for
    # k < n, e for k = n; so p = 0 below R = 1 and 1 at R = 1.
    assert hoeffding_bentkus_p_value([0.0, 0.5, 1.0], 10, 1.0).tolist() == [0.0, 0.0, 1.0]
    # R two ulps below A = 0.1: h(a, A) rounds to -2.2e-17 < 0, so exp(-n h) is
    # 1.0000000000000002 (and Bentkus e P(Bin(10, .1) <= 1) = 2.0): p is capped at 1.
    r = 0.09999999999999998
    assert np.exp(-10 * (xlogy(r, r / 0.1) + xlogy(1 - r, (1 - r) / 0.9))) > 1.0
    assert hoeffding_bentkus_p_value(r, 10, 0.1)[0] == 1.0


def test_ltt_stops_where_p_first_exceeds_delta_exactly_at_delta():
    """20 animals, one error each at scores 1..20: R_n(k) = k/20, A = 0.3. The p-values
    (Bentkus decides at k = 1..3): e P(Bin(20, .3) <= k) = 0.0181.., 0.0965.., 0.291..
    With delta *equal* to the second p-value the second jump is admitted (p <= delta)
    and the sequence stops at the third."""
    n = 20
    curve = animal_losses([str(i) for i in range(n)], np.arange(1.0, n + 1), [1] * n)
    delta = math.e * binom.cdf(2, n, 0.3)
    assert _hoeffding(0.1, n, 0.3) > delta  # Hoeffding (0.0976) does not decide
    fit = ltt_threshold(curve, 0.3, delta)
    assert fit.refused_at == 3.0 and fit.threshold == np.nextafter(3.0, -np.inf)
    assert fit.risk == pytest.approx(0.1) and fit.statistic == delta
    # a hair below: the second jump is refused; delta = 0.3 admits the third (0.291), not the fourth
    assert ltt_threshold(curve, 0.3, np.nextafter(delta, 0)).refused_at == 2.0
    fit = ltt_threshold(curve, 0.3, 0.3)
    assert fit.refused_at == 4.0 and fit.statistic == pytest.approx(_bentkus(3, n, 0.3))


def test_ltt_refused_at_the_first_jump_keeps_the_p_value_at_minus_inf():
    # 10 animals, one error each at 1..10; A = 0.3, delta = 0.1: p(-inf) = 0.7^10 = 0.028 is
    # admitted, the first jump (R = 0.1: Hoeffding exp(-10 h(0.1, 0.3)) = 0.313) is not.
    curve = animal_losses([str(i) for i in range(10)], np.arange(1.0, 11.0), [1] * 10)
    assert _hoeffding(0.1, 10, 0.3) == pytest.approx(0.3125, abs=1e-4)
    fit = ltt_threshold(curve, 0.3, 0.1)
    assert fit.refused_at == 1.0 and fit.risk == 0.0
    assert fit.statistic == pytest.approx(0.7 ** 10, rel=1e-12)
    # A = 1: p = 0 at every jump below R = 1 (Bentkus: P(Bin(n, 1) <= k < n) = 0), and 1 at
    # R = 1 (the last jump, every error certified), which is refused.
    one = ltt_threshold(curve, 1.0, 0.1)
    assert (one.refused_at, one.risk, one.statistic) == (10.0, pytest.approx(0.9), 0.0)
    # an eleventh animal whose one error is abstained keeps R below 1: nothing refused, the
    # last jump's p-value (0)
    curve = animal_losses([str(i) for i in range(11)], [*np.arange(1.0, 11.0), np.nan], [1] * 11)
    everything = ltt_threshold(curve, 1.0, 0.1)
    assert (everything.threshold, everything.refused_at, everything.statistic) == (math.inf, None, 0.0)
    assert everything.risk == pytest.approx(10 / 11)


def test_smallest_target_edges():
    assert smallest_target(0, "crc") is None and smallest_target(-1, "ltt", 0.1) is None
    assert smallest_target(1, "crc") == 0.5 and smallest_target(1, "ltt", 0.1) == pytest.approx(0.9)
    with pytest.raises(ConfigError, match=r"^unknown certification method 'bayes'$"):
        smallest_target(3, "bayes")


@pytest.mark.parametrize("value, digits, expected", [
    (0.15, 2, 0.15),        # 0.15 * 100 is 15.000000000000002 in floating point: stays 0.15
    (0.07, 2, 0.07),        # 0.07 * 1000 = 70.00000000000001: stays 0.07
    (0.1501, 2, 0.16), (0.0123, 2, 0.013), (0.31870793, 2, 0.32), (1 / 7, 3, 0.143),
    (0.0, 2, 0.0), (-0.5, 2, -0.5),
])
def test_round_up(value, digits, expected):
    assert round_up(value, digits) == expected


def test_check_reachable_at_its_boundaries():
    # crc: 1/(n+1) <= A; n = 4: A = 0.2 exactly is reachable, a hair below and 0.19 are not
    check_reachable(4, 0.2, "crc", None)
    for level in (np.nextafter(0.2, 0), 0.19):
        with pytest.raises(ConfigError) as raised:
            check_reachable(4, level, "crc", None)
        assert str(raised.value) == (f"with 4 calibration animal(s) with errors no threshold can "
                                     f"guarantee FCR <= {level:g} (crc); the smallest is 0.2")
    # ltt: p(-inf) = (1 - A)^n <= delta; n = 2, A = 0.5: 0.25, reachable at delta = 0.25 exactly
    check_reachable(2, 0.5, "ltt", 0.25)
    with pytest.raises(ConfigError) as raised:
        check_reachable(2, 0.5, "ltt", np.nextafter(0.25, 0), "calibration animal(s)")
    # the smallest: 1 - 0.25^(1/2) = 0.5
    assert str(raised.value) == ("with 2 calibration animal(s) no threshold can guarantee "
                                 "FCR <= 0.5 (ltt at delta=0.25); the smallest is 0.5")
    with pytest.raises(ConfigError) as raised:
        check_reachable(0, 0.5, "crc", None)
    assert str(raised.value) == ("calibration failed: no calibration animal has a labelled error, "
                                 "so no false-certification rate can be estimated")


def test_ltt_at_level_one_refuses_only_the_jump_where_every_error_is_certified():
    # two animals, one error each, scores 0.2 (a) and 0.7 (b): R_n is 1/2 at 0.2 and 1 at 0.7.
    # At A = 1: p(0.2) = min(exp(-2 h(1/2, 1)) = 0, e * P(Bin(2, 1) <= 1) = 0, 1) = 0;
    # p(0.7) = min(exp(-2 h(1, 1)) = 1, e * P(Bin(2, 1) <= 2) = e, 1) = 1 > delta
    curve = animal_losses(["a", "b"], [0.2, 0.7], [1, 1])
    assert list(hoeffding_bentkus_p_value(curve.risk, curve.n, 1.0)) == [0.0, 1.0]
    fit = ltt_threshold(curve, 1.0, 0.1)
    assert fit.threshold == np.nextafter(0.7, -np.inf) and fit.refused_at == 0.7
    assert (fit.risk, fit.statistic) == (0.5, 0.0)
