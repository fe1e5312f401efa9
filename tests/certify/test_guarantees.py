"""Per-animal losses, conformal risk control, Learn-then-Test: values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trackverify.certify import (animal_losses, crc_threshold, hoeffding_bentkus_p_value,
                                 ltt_threshold, parse_target, smallest_target)
from trackverify.certify.guarantees import per_animal_fcr, round_up
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
