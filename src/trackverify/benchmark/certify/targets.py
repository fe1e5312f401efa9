"""The calibration targets of ``run --calibrate`` and their parsing.

``target_false_certification_rate=A[,delta=D][,method=crc|ltt]`` (the default target): at
most a share ``A`` of a new animal's wrong identities may be certified.

- ``method=crc`` (the default without ``delta``): conformal risk control; the expected
  false-certification rate of a new animal is ``<= A``.
- ``method=ltt`` (the default when ``delta`` is given; ``delta`` defaults to 0.1):
  Learn-then-Test; with probability ``>= 1 - delta`` over the calibration animals, the
  expected false-certification rate of new animals at the fitted threshold is ``<= A``.

``target_selective_risk=R`` stays (accepted errors / accepted ``<= R`` on the fit rows); it
carries no guarantee, and with error prevalence at or below ``R`` it is met by certifying
everything (the run says so in words).
"""

from __future__ import annotations

from dataclasses import dataclass

from trackverify.errors import ConfigError

FCR_TARGET = "target_false_certification_rate"
SELECTIVE_RISK_TARGET = "target_selective_risk"
METHODS = ("crc", "ltt")
DEFAULT_DELTA = 0.1
USAGE = (f"use --calibrate {FCR_TARGET}=A[,delta=D][,method=crc|ltt] "
         f"or --calibrate {SELECTIVE_RISK_TARGET}=R")

ASSUMPTION = ("The calibration animals and the new (test) animals are exchangeable: drawn from "
              "the same population of animals, recorded, tracked, corrupted and scored the same "
              "way. Rows within an animal need not be independent; the animal is the unit.")


@dataclass(frozen=True)
class CalibrationTarget:
    """What the threshold is fitted to reach.

    ``kind`` is :data:`FCR_TARGET` or :data:`SELECTIVE_RISK_TARGET`; ``level`` is ``A``
    (or ``R``); ``delta`` and ``method`` only for the false-certification target
    (``delta`` is None for ``crc``).
    """

    kind: str
    level: float
    method: str | None = None
    delta: float | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "level": self.level, "method": self.method, "delta": self.delta}

    def describe(self) -> str:
        if self.kind == SELECTIVE_RISK_TARGET:
            return f"selective risk <= {self.level:g} on the fit rows (no guarantee)"
        if self.method == "crc":
            return (f"expected false-certification rate of a new animal <= {self.level:g} "
                    "(conformal risk control)")
        return (f"P(false-certification rate of new animals > {self.level:g}) <= {self.delta:g} "
                "(Learn-then-Test, Hoeffding-Bentkus)")


def _number(name: str, text: str, low: float, high: float, open_low: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"--calibrate: {name}={text.strip()!r} is not a number") from None
    if not (low < value if open_low else low <= value) or not value <= high:
        bracket = "(" if open_low else "["
        raise ConfigError(f"--calibrate: {name}={value:g} must be in {bracket}{low:g}, {high:g}]")
    return value


def parse_target(text: str | None) -> CalibrationTarget | None:
    """``"target_false_certification_rate=0.1,delta=0.05,method=ltt"`` -> a target (None -> None)."""
    if text is None:
        return None
    items: dict[str, str] = {}
    for part in str(text).split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise ConfigError(f"--calibrate: expected name=value, got {part.strip()!r}; {USAGE}")
        if key in items:
            raise ConfigError(f"--calibrate: {key!r} is given twice")
        items[key] = value.strip()
    if SELECTIVE_RISK_TARGET in items:
        if len(items) > 1:
            raise ConfigError(f"--calibrate: {SELECTIVE_RISK_TARGET} takes no other option "
                              f"(got {', '.join(k for k in items if k != SELECTIVE_RISK_TARGET)})")
        return CalibrationTarget(SELECTIVE_RISK_TARGET,
                                 _number(SELECTIVE_RISK_TARGET, items[SELECTIVE_RISK_TARGET], 0, 1))
    if FCR_TARGET not in items:
        raise ConfigError(f"--calibrate: no target given; {USAGE}")
    unknown = sorted(set(items) - {FCR_TARGET, "delta", "method"})
    if unknown:
        raise ConfigError(f"--calibrate: unknown option(s) {unknown}; {USAGE}")
    level = _number(FCR_TARGET, items[FCR_TARGET], 0, 1, open_low=True)
    method = items.get("method", "ltt" if "delta" in items else "crc")
    if method not in METHODS:
        raise ConfigError(f"--calibrate: method={method!r}; choose crc or ltt")
    if method == "crc":
        if "delta" in items:
            raise ConfigError("--calibrate: delta applies to method=ltt only (crc bounds the "
                              "expected false-certification rate)")
        return CalibrationTarget(FCR_TARGET, level, "crc", None)
    delta = _number("delta", items["delta"], 0, 1, open_low=True) if "delta" in items else DEFAULT_DELTA
    return CalibrationTarget(FCR_TARGET, level, "ltt", delta)
