"""The calibration targets of `run --calibrate`: parsing, range boundaries, the words."""

from __future__ import annotations

import pytest

from trackverify.benchmark.certify.targets import (DEFAULT_DELTA, FCR_TARGET, SELECTIVE_RISK_TARGET,
                                         CalibrationTarget, parse_target)
from trackverify.errors import ConfigError

FCR = "target_false_certification_rate"
SR = "target_selective_risk"


def as_tuple(target):
    return (target.kind, target.level, target.method, target.delta)


def test_names_and_default_delta():
    assert (FCR_TARGET, SELECTIVE_RISK_TARGET, DEFAULT_DELTA) == (FCR, SR, 0.1)


def test_none_is_no_target():
    assert parse_target(None) is None


@pytest.mark.parametrize("text, expected", [
    (f"{FCR}=0.1", (FCR, 0.1, "crc", None)),
    (f"{FCR}=0.1,method=crc", (FCR, 0.1, "crc", None)),
    (f"{FCR}=0.2,delta=0.05", (FCR, 0.2, "ltt", 0.05)),           # delta given -> ltt
    (f"{FCR}=0.2,method=ltt", (FCR, 0.2, "ltt", 0.1)),            # ltt, default delta
    (f"{FCR}=0.2,delta=0.05,method=ltt", (FCR, 0.2, "ltt", 0.05)),
    (f" {FCR} = 0.3 , method = ltt , delta = 0.2 ", (FCR, 0.3, "ltt", 0.2)),  # spaces stripped
    (f"{SR}=0.01", (SR, 0.01, None, None)),
])
def test_parse(text, expected):
    assert as_tuple(parse_target(text)) == expected


@pytest.mark.parametrize("text, level", [
    # A in (0, 1]: 1 is allowed, the smallest positive float too
    (f"{FCR}=1", 1.0), (f"{FCR}=5e-324", 5e-324),
    # R in [0, 1]: both ends allowed
    (f"{SR}=0", 0.0), (f"{SR}=1", 1.0),
])
def test_levels_at_the_ends_of_their_range(text, level):
    assert parse_target(text).level == level


@pytest.mark.parametrize("text", [f"{FCR}=0.1,delta=1", f"{FCR}=0.1,delta=5e-324"])
def test_delta_at_the_ends_of_its_range(text):
    assert parse_target(text).delta == float(text.rpartition("=")[2])


@pytest.mark.parametrize("text, message", [
    (f"{FCR}=0", rf"^--calibrate: {FCR}=0 must be in \(0, 1\]$"),
    (f"{FCR}=-0.1", rf"^--calibrate: {FCR}=-0.1 must be in \(0, 1\]$"),
    (f"{FCR}=1.0001", rf"^--calibrate: {FCR}=1.0001 must be in \(0, 1\]$"),
    (f"{SR}=-1e-9", rf"^--calibrate: {SR}=-1e-09 must be in \[0, 1\]$"),
    (f"{SR}=1.5", rf"^--calibrate: {SR}=1.5 must be in \[0, 1\]$"),
    (f"{FCR}=0.1,delta=0", r"^--calibrate: delta=0 must be in \(0, 1\]$"),
    (f"{FCR}=0.1,delta=1.5", r"^--calibrate: delta=1.5 must be in \(0, 1\]$"),
    (f"{FCR}= x ", rf"^--calibrate: {FCR}='x' is not a number$"),
    (f"{FCR}=0.1,delta=d", r"^--calibrate: delta='d' is not a number$"),
    # the first "=" separates the name from its value
    (f"{FCR}=0.1=0.2", rf"^--calibrate: {FCR}='0.1=0.2' is not a number$"),
])
def test_out_of_range_and_not_a_number(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_target(text)


USAGE = (f"use --calibrate {FCR}=A[,delta=D][,method=crc|ltt] or --calibrate {SR}=R")


@pytest.mark.parametrize("text, message", [
    ("risk", "--calibrate: expected name=value, got 'risk'; " + USAGE),
    (f"{FCR}= ", f"--calibrate: expected name=value, got '{FCR}='; " + USAGE),
    (f"{FCR}=0.1,", "--calibrate: expected name=value, got ''; " + USAGE),
    (f"{FCR}=0.1,{FCR}=0.2", f"--calibrate: '{FCR}' is given twice"),
    (f"{SR}=0.1,delta=0.1,method=ltt", f"--calibrate: {SR} takes no other option (got delta, method)"),
    (f"method=crc,{SR}=0.1", f"--calibrate: {SR} takes no other option (got method)"),
    ("delta=0.1", "--calibrate: no target given; " + USAGE),
    (f"{FCR}=0.1,foo=1,bar=2", "--calibrate: unknown option(s) ['bar', 'foo']; " + USAGE),
    (f"{FCR}=0.1,method=bayes", "--calibrate: method='bayes'; choose crc or ltt"),
    (f"{FCR}=0.1,method=crc,delta=0.1",
     "--calibrate: delta applies to method=ltt only (crc bounds the expected "
     "false-certification rate)"),
])
def test_refusals_say_what_is_wrong(text, message):
    with pytest.raises(ConfigError) as raised:
        parse_target(text)
    assert str(raised.value) == message


def test_json_and_words():
    crc = CalibrationTarget(FCR, 0.2, "crc", None)
    assert crc.to_json() == {"kind": FCR, "level": 0.2, "method": "crc", "delta": None}
    assert crc.describe() == ("expected false-certification rate of a new animal <= 0.2 "
                              "(conformal risk control)")
    ltt = CalibrationTarget(FCR, 0.25, "ltt", 0.05)
    assert ltt.describe() == ("P(false-certification rate of new animals > 0.25) <= 0.05 "
                              "(Learn-then-Test, Hoeffding-Bentkus)")
    sr = CalibrationTarget(SR, 0.01)
    assert (sr.method, sr.delta) == (None, None)
    assert sr.describe() == "selective risk <= 0.01 on the fit rows (no guarantee)"
