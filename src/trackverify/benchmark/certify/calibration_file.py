"""``calibration.json``: a fitted threshold that another run can apply, with its guarantee.

Schema ``trackverify-calibration/1`` (JSON object; every key is required):

============================  ==============================================================
``format``                    ``"trackverify-calibration/1"``
``trackverify_version``       the version that fitted it
``verifier``                  ``{"name", "evidence", "options": {"ambiguity_k"[, "score"][,
                              "track_window"][, "merge_k"]}}``:
                              the verifier whose scores the threshold applies to, and its
                              fitted options (``ambiguity_k`` null unless registered_distance
                              ran; ``score`` = registered_distance's score, ``"relative"`` or
                              ``"distance"``, present when that verifier fitted the threshold;
                              absent in files written before the relative score, whose
                              threshold is of ``"distance"``; ``track_window`` = its track
                              pooling window ``h``, an integer >= 0, present likewise; absent
                              in files written before the pooling: 0; ``merge_k`` = its
                              merged-anchor factor ``m``, a finite number >= 0, present
                              likewise; absent in files written before the rule: 0, off)
``threshold_um``              the threshold; a row is certified when its score is finite and
                              ``<= threshold_um``
``target``                    ``{"kind", "level", "method", "delta"}`` (``kind`` is
                              ``target_false_certification_rate`` or
                              ``target_selective_risk``; ``method`` ``crc``/``ltt``/null)
``guarantee``                 the guarantee in words (or "No guarantee: ...")
``assumption``                the assumption it rests on, in words (null for selective risk)
``calibration_animals``       animals the loss was computed on (with >= 1 labelled error);
                              null for selective risk
``smallest_reachable_target`` the smallest target reachable with those animals (null for
                              selective risk)
``fit``                       the whole fit record of ``results.json`` -> ``calibration``
``partitions_sha256``         the partitions file the fit animals came from
``sha256``                    SHA-256 of the canonical JSON of everything else
                              (:func:`trackverify.benchmark.partitions.content_hash`)
============================  ==============================================================

:func:`load_calibration` checks the format, the hash and the types, and returns a
:class:`Calibration`; ``audit --calibration FILE`` is meant to apply ``threshold_um`` to
the same verifier's scores and quote ``guarantee`` and ``assumption``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from trackverify.benchmark.certify.targets import METHODS, FCR_TARGET, SELECTIVE_RISK_TARGET, CalibrationTarget
from trackverify.errors import InputError
from trackverify.io.atomic import write_json_atomic
from trackverify.benchmark.partitions import content_hash, pop_content_hash, read_format_json
from trackverify.values import is_integer, is_real

CALIBRATION_FORMAT = "trackverify-calibration/1"
KEYS = ("format", "trackverify_version", "verifier", "threshold_um", "target", "guarantee",
        "assumption", "calibration_animals", "smallest_reachable_target", "fit",
        "partitions_sha256")


@dataclass(frozen=True)
class Calibration:
    """A loaded ``calibration.json`` (see the module docstring for the fields)."""

    verifier: str
    evidence: str
    ambiguity_k: float | None
    threshold_um: float
    target: CalibrationTarget
    guarantee: str
    assumption: str | None
    calibration_animals: int | None
    smallest_reachable_target: float | None
    content: dict
    score: str | None = None  # registered_distance's score the threshold is of (else None)
    track_window: int | None = None  # registered_distance's track pooling window (else None)
    merge_k: float | None = None  # registered_distance's merged-anchor factor (else None)

    def verifier_options(self) -> dict:
        """The options to build the calibrated verifier with (``load_verifier(verifier,
        options)``): every recorded option that is not null, so the threshold is applied to
        the scores it was fitted on (the fields carry the recorded names of
        :data:`trackverify.verifiers.RECORDED_OPTIONS`)."""
        from trackverify.verifiers import RECORDED_OPTIONS

        recorded = {name: getattr(self, name) for name in RECORDED_OPTIONS}
        return {k: v for k, v in recorded.items() if v is not None}


def calibration_content(*, version: str, verifier: str, evidence: str, ambiguity_k: float | None,
                        record: dict, target: CalibrationTarget, partitions_sha256: str | None,
                        score: str | None = None, track_window: int | None = None,
                        merge_k: float | None = None) -> dict:
    """The file's content (without ``sha256``) from a run's calibration record (``score``:
    the fitted verifier's score kind, ``track_window`` its track pooling window, ``merge_k``
    its merged-anchor factor; each recorded when given)."""
    fcr = target.kind == FCR_TARGET
    options = {"ambiguity_k": ambiguity_k, **({} if score is None else {"score": score}),
               **({} if track_window is None else {"track_window": int(track_window)}),
               **({} if merge_k is None else {"merge_k": float(merge_k)})}
    return {
        "format": CALIBRATION_FORMAT,
        "trackverify_version": version,
        "verifier": {"name": verifier, "evidence": evidence, "options": options},
        "threshold_um": float(record["threshold"]),
        "target": target.to_json(),
        "guarantee": record["guarantee"],
        "assumption": record["assumption"] if fcr else None,
        "calibration_animals": record["animals_with_errors"] if fcr else None,
        "smallest_reachable_target": record["smallest_reachable_target"] if fcr else None,
        "fit": record,
        "partitions_sha256": partitions_sha256,
    }


def write_calibration(path: str | os.PathLike, content: dict) -> Path:
    """Write ``content`` plus its ``sha256`` atomically."""
    return write_json_atomic(Path(path), {**content, "sha256": content_hash(content)})


def _bad(source: str, message: str) -> InputError:
    return InputError(f"not a valid calibration file: {message}", source=source)


def _finite_number(value) -> bool:
    """A finite real number (:func:`trackverify.values.is_real`) within the float range
    ``[-max, max]`` (``sys.float_info.max``): the file's numbers are read as floats, and an
    integer past that range (JSON writes any integer, ``10 ** 400`` in 401 digits) has no float."""
    return is_real(value, -sys.float_info.max, sys.float_info.max)


def _short(value) -> str:
    """``repr(value)`` cut to 60 characters (a message stays one short line)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _registered_option(source: str, verifier: str, options: dict, key: str):
    """registered_distance's recorded option ``key`` (``score``, ``track_window`` or
    ``merge_k``), checked; when absent, the value a registered_distance file written before
    the option existed means (``"distance"``: its threshold is of the plain distance; ``0``:
    of unpooled scores; ``0.0``: no merged-anchor abstention), and None for another verifier."""
    from trackverify.verifiers.registered_distance import RegisteredDistance, SCORES

    before, valid, expected = {
        "score": ("distance", lambda v: v in SCORES, f"one of {list(SCORES)}"),
        "track_window": (0, lambda v: is_integer(v, 0), "an integer >= 0"),
        "merge_k": (0.0, lambda v: is_real(v, 0.0, float_range=True), "a finite number >= 0"),
    }[key]
    value = options.get(key)
    if value is None:
        return before if verifier == RegisteredDistance.name else None
    if not valid(value):
        raise _bad(source, f"'verifier.options.{key}' must be {expected}, got {value!r}")
    return value


def load_calibration(path: str | os.PathLike) -> Calibration:
    """Read and check a ``calibration.json`` (format, hash, types); InputError otherwise."""
    source = str(path)
    data = read_format_json(path, "calibration file", CALIBRATION_FORMAT)
    missing = [k for k in KEYS if k not in data]  # KEYS holds no "sha256"
    if missing:
        raise _bad(source, f"missing key(s) {missing}")
    if not pop_content_hash(data):  # none recorded (None), or another content's (False)
        raise _bad(source, "its content does not match its sha256 (it was edited after it was written)")
    verifier, target = data["verifier"], data["target"]
    threshold = data["threshold_um"]
    if not _finite_number(threshold):
        raise _bad(source, "'threshold_um' must be a finite number")
    if not isinstance(verifier, dict) or not isinstance(verifier.get("name"), str):
        raise _bad(source, "'verifier' must hold a 'name'")
    if not isinstance(target, dict) or target.get("kind") not in (FCR_TARGET, SELECTIVE_RISK_TARGET) \
            or target.get("method") not in (*METHODS, None):
        raise _bad(source, "'target' must have a known 'kind' and 'method'")
    options = verifier.get("options")
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise _bad(source, f"'verifier.options' must be an object, got {_short(options)}")
    for key, value, nullable in (("target.level", target.get("level"), False),
                                 ("target.delta", target.get("delta"), True),
                                 ("verifier.options.ambiguity_k", options.get("ambiguity_k"), True),
                                 ("smallest_reachable_target", data["smallest_reachable_target"], True)):
        if not (value is None and nullable) and not _finite_number(value):
            raise _bad(source, f"'{key}' must be a finite number{' or null' if nullable else ''}, "
                               f"got {_short(value)}")
    for key, value, nullable in (("guarantee", data["guarantee"], False),
                                 ("assumption", data["assumption"], True),
                                 ("verifier.evidence", verifier.get("evidence"), True)):
        if not (value is None and nullable) and not isinstance(value, str):
            raise _bad(source, f"'{key}' must be a string{' or null' if nullable else ''}, "
                               f"got {_short(value)}")
    animals = data["calibration_animals"]
    if animals is not None and not is_integer(animals, 0):
        raise _bad(source, f"'calibration_animals' must be an integer >= 0 or null, got {_short(animals)}")
    score = _registered_option(source, verifier["name"], options, "score")
    track_window = _registered_option(source, verifier["name"], options, "track_window")
    merge_k = _registered_option(source, verifier["name"], options, "merge_k")
    return Calibration(
        score=score, track_window=track_window, merge_k=None if merge_k is None else float(merge_k),
        verifier=verifier["name"], evidence=str(verifier.get("evidence")),
        ambiguity_k=options.get("ambiguity_k"), threshold_um=float(threshold),
        target=CalibrationTarget(target["kind"], float(target["level"]), target.get("method"),
                                 target.get("delta")),
        guarantee=str(data["guarantee"]), assumption=data["assumption"],
        calibration_animals=data["calibration_animals"],
        smallest_reachable_target=data["smallest_reachable_target"], content=data)
