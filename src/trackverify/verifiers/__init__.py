"""The verifier protocol and the built-in verifiers.

A verifier scores every observation of one recording (lower = more trustworthy) or
abstains (NaN). It sees one recording's table with the columns of
:data:`VERIFIER_COLUMNS` only: never ``track``, ``error``, ``condition`` or any label.
Each verifier declares the kind of evidence it uses:

- ``independent``: evidence that does not come from the candidate tracks themselves;
- ``consistency``: a diagnostic of agreement with an assumption (e.g. small deformation),
  not an independent certificate.

Write your own::

    class MyVerifier:
        name = "my_verifier"
        evidence = "independent"          # or "consistency"

        def score(self, table: pandas.DataFrame) -> numpy.ndarray:
            ...                           # one float per row, NaN = abstain

and run it with ``trackverify run --verifier mypackage.module:MyVerifier``.

A verifier whose ``score`` declares a ``detections`` parameter also receives, when the data
have a detection table, every source detection of the recording (columns of
:data:`DETECTION_COLUMNS`, labelled or not): identity-free evidence such as a registration
should use all of them. Without a detection table it receives ``None``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError

VERIFIER_COLUMNS = ("recording", "frame", "detection", "x_um", "y_um", "z_um", "pred_id",
                    "pred_valid")
DETECTION_COLUMNS = ("frame", "detection", "x_um", "y_um", "z_um")
EVIDENCE_KINDS = ("independent", "consistency")
#: The settings a verifier object may carry that change its scores: the name they are
#: given and recorded under (its constructor's keyword, ``calibration.json``'s
#: ``verifier.options`` key, the audit summary's ``verifier_options`` key) -> the attribute
#: that holds it.
RECORDED_OPTIONS = {"ambiguity_k": "ambiguity_k", "score": "score_kind",
                    "track_window": "track_window", "merge_k": "merge_k"}


@runtime_checkable
class Verifier(Protocol):
    """One recording's table in, one score per row out (NaN = abstain)."""

    name: str
    evidence: str

    def score(self, table: pd.DataFrame) -> np.ndarray: ...


def verifier_view(table: pd.DataFrame) -> pd.DataFrame:
    """The columns a verifier may see (a copy: a verifier cannot alter the caller's table)."""
    return table[[c for c in VERIFIER_COLUMNS if c in table.columns]].copy()


def builtin_verifiers() -> dict[str, type]:
    from trackverify.verifiers.fixed_distance import FixedDistance
    from trackverify.verifiers.registered_distance import RegisteredDistance

    return {FixedDistance.name: FixedDistance, RegisteredDistance.name: RegisteredDistance}


def verifier_class(spec: str):
    """The class a verifier spec names: a built-in verifier's name, or ``module:Class`` of
    the user's own (its module is imported, so its code runs). :class:`ConfigError` when
    the spec names no class: an unknown name, a module or attribute that cannot be
    loaded, a value that cannot be called."""
    builtins = builtin_verifiers()
    if spec in builtins:
        cls = builtins[spec]
    elif ":" in spec:
        module_name, _, class_name = spec.partition(":")
        if not all(part.isidentifier() for part in module_name.split(".")):
            raise ConfigError(f"cannot load verifier '{spec}': '{module_name}' is not a module "
                              "name (dotted Python identifiers; no path, no relative import)")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"cannot load verifier '{spec}': {exc}") from exc
    else:
        raise ConfigError(f"unknown verifier '{spec}'; built-in: {sorted(builtins)}, "
                          "or give module:Class")
    if not callable(cls):
        raise ConfigError(f"verifier '{spec}' is a {type(cls).__name__}, not a class")
    return cls


def load_verifier(spec: str, options: Mapping[str, Any] | None = None) -> Verifier:
    """A built-in verifier by name, or ``module:Class`` of the user's own
    (:func:`verifier_class`), constructed.

    ``options`` (run settings such as ``ambiguity_k``) are passed to the constructor as
    keyword arguments when, and only when, it declares a parameter of that name.
    """
    cls = verifier_class(spec)
    try:
        accepted = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        accepted = {}
    try:
        verifier = cls(**{k: v for k, v in (options or {}).items() if k in accepted})
    except TypeError as exc:  # a constructor that needs arguments the run cannot give
        raise ConfigError(f"cannot construct verifier '{spec}': {exc}") from exc
    if not isinstance(verifier, Verifier) or verifier.evidence not in EVIDENCE_KINDS:
        raise ConfigError(f"verifier '{spec}' must have name, evidence in {EVIDENCE_KINDS} "
                          "and a score(table) method")
    return verifier


def recorded_options(verifier) -> dict:
    """The :data:`RECORDED_OPTIONS` that ``verifier`` carries, by recorded name:
    ``{name: getattr(verifier, attribute)}`` for each attribute it has."""
    return {name: getattr(verifier, attribute) for name, attribute in RECORDED_OPTIONS.items()
            if hasattr(verifier, attribute)}


#: The counts :func:`abstention_breakdown` reports: rows abstained as ambiguous, rows
#: abstained for missing evidence, scored rows whose claim the verifier's own evidence
#: contradicts (registered_distance: the one-to-one assignment gives the row's detection to
#: another identity; not an abstention, the row keeps its penalised score), and rows
#: abstained because their claimed identity is merged with another at their frame
#: (registered_distance's ``merge_k``: two registered anchors closer than ``merge_k sigma``).
ABSTENTION_COUNTS = ("ambiguous", "missing_evidence", "contradicted", "merged")


def abstention_breakdown(verifier: Verifier) -> dict | None:
    """Why the last ``score`` call abstained, when the verifier says (``abstentions`` list):
    each of :data:`ABSTENTION_COUNTS`, None for a count its record does not carry."""
    record = getattr(verifier, "abstentions", None)
    if not record:
        return None
    last = record[-1]
    return {key: None if getattr(last, key, None) is None else int(getattr(last, key))
            for key in ABSTENTION_COUNTS}


def add_counts(values) -> int | None:
    """The sum of counts, None (undefined) if any of them is None."""
    values = list(values)
    return None if any(v is None for v in values) else int(sum(values))


def takes_detections(verifier: Verifier) -> bool:
    """Whether ``verifier.score`` declares a ``detections`` parameter."""
    try:
        return "detections" in inspect.signature(verifier.score).parameters
    except (TypeError, ValueError):
        return False


def run_verifier(verifier: Verifier, table: pd.DataFrame,
                 detections: pd.DataFrame | None = None, **options) -> np.ndarray:
    """Scores for ``table``'s rows, checked: one float per row, a non-finite one (inf,
    -inf, NaN) read as NaN (abstain). Scores that are not numbers, or not one per row, raise
    :class:`ConfigError` naming the verifier.

    ``detections`` (one recording's detection table, or None) reaches verifiers that take it,
    as a copy with the columns of :data:`DETECTION_COLUMNS` only; ``options`` (e.g. the
    audit's ``claims``) reach ``score`` as keywords.
    """
    if takes_detections(verifier):
        view = None if detections is None else detections[
            [c for c in DETECTION_COLUMNS if c in detections.columns]].copy()
        raw = verifier.score(verifier_view(table), detections=view, **options)
    else:
        raw = verifier.score(verifier_view(table), **options)
    try:
        scores = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"verifier '{verifier.name}' returned scores that are not numbers "
                          f"({exc})") from exc
    if scores.ndim != 1:
        raise ConfigError(f"verifier '{verifier.name}' returned an array of shape "
                          f"{scores.shape}, not one score per row ({len(table)} rows)")
    if len(scores) != len(table):
        raise ConfigError(f"verifier '{verifier.name}' returned {len(scores)} scores for "
                          f"{len(table)} rows")
    return np.where(np.isfinite(scores), scores, np.nan)
