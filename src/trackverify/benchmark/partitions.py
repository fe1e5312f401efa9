"""Partitions without leakage: animal / provenance-group splits, quarantine, the fit guard.

A *partition file* assigns every usable recording to one of ``train``, ``calibration``,
``validation``, ``test`` or ``development`` (SPEC section 8):

* The split is made over *units*, never over recordings: with ``by="animal"`` a unit is one
  physical animal (every recording sharing an ``animal_id``); with
  ``by="provenance_group"`` a unit is a whole provenance group, and groups that share an
  ``animal_id`` are merged into one unit (an animal is never split across partitions).
  ``animal_id`` is read as a global id: two labs that both call an animal ``worm1`` are
  kept together (conservative; give them distinct ids to separate them).
* Two recordings listed as possibly the same animal (``recording_a, recording_b``) whose
  ``animal_id`` differ are *unresolved*: both are quarantined, and so is every other
  recording of their two animals (otherwise a sibling of ``a`` in ``train`` and a sibling
  of ``b`` in ``test`` would leak if the animals are one). Quarantined recordings are in
  no partition and are listed with the reason. A pair that shares an ``animal_id`` is
  resolved (same animal, already kept together).
* ``source_folds`` is carried as metadata in the file and never used.
* Units are sorted (by their smallest recording id), shuffled with
  ``numpy.random.Generator(PCG64(seed))`` and dealt in the order of
  :data:`PARTITION_NAMES`: partition ``k`` gets ``n_k`` units, where ``n_k`` are the
  largest-remainder apportionment of ``fraction_k * n_units`` (ties to the earlier name).
  Fractions are therefore fractions of *units* (animals or groups), not of recordings.
  Without fractions every usable recording is ``development`` (the alpha).

The file is frozen: it records ``sha256``, the SHA-256 of the canonical JSON (sorted keys,
``(",", ":")`` separators, UTF-8) of everything but ``sha256`` itself.
:func:`load_partitions` refuses a file whose hash does not match (a hand edit), and
:func:`write_partitions` refuses to replace an existing file with different content.

Fit steps see labels only through :class:`FitData`, which keeps the rows of ``train`` and
``calibration`` recordings and drops every other row when it is built, so ``test`` and
``validation`` rows cannot be reached through it; asking for them raises
:class:`~trackverify.errors.LeakageError`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError, InputError, LeakageError
from trackverify.io.atomic import dumps_json, to_jsonable, write_text_atomic
from trackverify.report.numbers import fmt
from trackverify.io.bounded import parse_nested, read_text
from trackverify.benchmark.selective import risk_coverage_curve
from trackverify.tables import RECORDINGS, id_column, ids_as_text, plain, validate
from trackverify.values import is_integer

PARTITION_NAMES = ("train", "calibration", "validation", "test", "development")
FIT_PARTITIONS = ("train", "calibration")
SPLIT_BY = ("animal", "provenance_group")
FORMAT = "trackverify-partitions/1"
DEFAULT_SEED = 20261007
DEVELOPMENT_NOTE = ("no train/calibration/validation/test partitions: every usable recording "
                    "is development, and nothing is fitted")

Recording = int | str


# ----------------------------------------------------------------------------- the file


@dataclass(frozen=True)
class Partitions:
    """A frozen partition of recordings (see the module docstring).

    ``partitions`` maps every name of :data:`PARTITION_NAMES` to a sorted tuple of
    recording ids; ``quarantine`` lists ``{"recording", "reason"}``; ``recordings`` holds
    each recording's provenance metadata (``animal_id``, ``provenance_group``,
    ``source_folds``); ``settings`` the split settings used.
    """

    partitions: Mapping[str, tuple[Recording, ...]]
    quarantine: tuple[Mapping[str, Any], ...] = ()
    recordings: Mapping[Recording, Mapping[str, Any]] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def content(self) -> dict[str, Any]:
        """Everything the file holds except its hash."""
        return {
            "format": FORMAT,
            "partitions": {name: list(self.partitions.get(name, ())) for name in PARTITION_NAMES},
            "quarantine": [dict(q) for q in self.quarantine],
            "recordings": [{"recording": r, **dict(meta)} for r, meta in self.recordings.items()],
            "settings": dict(self.settings),
        }

    @property
    def sha256(self) -> str:
        return content_hash(self.content())

    def to_json(self) -> dict[str, Any]:
        return {**self.content(), "sha256": self.sha256}

    def partition_of(self, recording: Recording) -> str | None:
        """The partition holding ``recording``; None if quarantined or unknown."""
        return self._lookup().get(_plain(recording))

    def _lookup(self) -> dict[Recording, str]:
        return {r: name for name in PARTITION_NAMES for r in self.partitions.get(name, ())}

    def is_development_only(self) -> bool:
        return not any(self.partitions.get(name) for name in PARTITION_NAMES[:-1])

    def summary(self) -> dict[str, Any]:
        """Recordings and animals per partition; empty partitions are reported as such."""
        out: dict[str, Any] = {}
        for name in PARTITION_NAMES:
            members = self.partitions.get(name, ())
            animals = {self.recordings[r]["animal_id"] for r in members if r in self.recordings}
            out[name] = {"recordings": len(members), "animals": len(animals),
                         "empty": len(members) == 0}
        out["quarantined"] = len(self.quarantine)
        out["note"] = DEVELOPMENT_NOTE if self.is_development_only() else None
        return out


def content_hash(content: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``content``."""
    canonical = json.dumps(to_jsonable(content), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def pop_content_hash(data: dict[str, Any]) -> bool | None:
    """Remove the recorded ``sha256`` from a frozen file's object ``data`` (in place) and
    say whether it is :func:`content_hash` of what remains: None when none is recorded (no
    ``sha256``, or one that is not a string). Each reader raises its own error."""
    recorded = data.pop("sha256", None)
    if not isinstance(recorded, str):
        return None
    return content_hash(data) == recorded


def write_partitions(partitions: Partitions, path: str | os.PathLike) -> Path:
    """Write the frozen file; refuse to replace an existing file with different content.

    Writing the identical content again (the same recordings, settings and seed) is
    allowed and leaves the file as it is.
    """
    path = Path(path)
    text = dumps_json(partitions.to_json())
    if path.exists():
        if path.is_dir():
            raise InputError("expected a partitions file path, found a folder", source=str(path))
        if path.read_bytes() == text.encode("utf-8"):
            return path
        raise InputError("a different partitions file already exists here; partition files are "
                         "frozen and are never replaced. Write the new partitions to a new path",
                         source=str(path))
    return write_text_atomic(path, text)


def read_format_json(path: str | os.PathLike, what: str, expected_format: str) -> dict[str, Any]:
    """A JSON object file whose ``format`` is ``expected_format`` (InputError naming ``what``)."""
    source = str(path)
    text = read_text(path, what=what)
    try:
        data = parse_nested(json.loads, text, source=source, kind="JSON")
    except json.JSONDecodeError as exc:
        raise InputError(f"not a readable JSON file ({exc})", source=source) from exc
    if not isinstance(data, dict) or data.get("format") != expected_format:
        raise InputError(f"not a trackverify {what} (expected format {expected_format!r})",
                         source=source)
    return data


def load_partitions(path: str | os.PathLike) -> Partitions:
    """Read a partitions file and verify its structure and content hash."""
    source = str(path)
    data = read_format_json(path, "partitions file", FORMAT)
    matches = pop_content_hash(data)
    if matches is None:
        raise InputError("the partitions file has no sha256 content hash", source=source)
    if not matches:
        raise InputError("the partitions file was modified after it was written (its content "
                         "does not match its sha256); partition files are frozen, regenerate it "
                         "with 'trackverify split' to a new path", source=source)
    return _from_content(data, source)


def _is_id(value: Any) -> bool:
    """A recording / animal / group id of the file: a non-empty string or an integer."""
    return (isinstance(value, str) and value != "") or is_integer(value)


def _from_content(data: dict[str, Any], source: str) -> Partitions:
    """The partitions of a file's content, every type checked, and the file's own metadata
    checked for leakage (no animal, and with ``by = provenance_group`` no group, in two
    partitions)."""
    raw = data.get("partitions")
    if not isinstance(raw, dict) or set(raw) != set(PARTITION_NAMES):
        raise InputError(f"'partitions' must map exactly {list(PARTITION_NAMES)} to lists",
                         source=source)
    seen: dict[Recording, str] = {}
    for name in PARTITION_NAMES:
        members = raw[name]
        if not isinstance(members, list):
            raise InputError(f"partition {name!r} must be a list of recording ids, found "
                             f"{_kind(members)} {members!r:.60}", source=source)
        for recording in members:
            if not _is_id(recording):
                raise InputError(f"partition {name!r} holds {_kind(recording)} "
                                 f"{recording!r:.60}; recording ids are non-empty strings or "
                                 "integers", source=source)
            if recording in seen:
                raise InputError(f"recording {recording!r} is in both {seen[recording]!r} and "
                                 f"{name!r}", source=source)
            seen[recording] = name
    quarantine = data.get("quarantine", [])
    if not isinstance(quarantine, list):
        raise InputError("'quarantine' must be a list", source=source)
    for entry in quarantine:
        if not isinstance(entry, dict) or set(entry) != {"recording", "reason"} \
                or not _is_id(entry["recording"]) or not isinstance(entry["reason"], str):
            raise InputError("each quarantine entry must be {recording: id, reason: text}",
                             source=source)
        if entry["recording"] in seen:
            raise InputError(f"quarantined recording {entry.get('recording')!r} is also in a "
                             "partition", source=source)
    rows = data.get("recordings", [])
    if not isinstance(rows, list) or not all(
            isinstance(row, dict) and _is_id(row.get("recording")) for row in rows):
        raise InputError("'recordings' must be a list of {recording: id, ...} entries",
                         source=source)
    recordings = {row["recording"]: {k: v for k, v in row.items() if k != "recording"}
                  for row in rows}
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise InputError("'settings' must be a mapping", source=source)
    parts = Partitions({name: tuple(raw[name]) for name in PARTITION_NAMES}, tuple(quarantine),
                       recordings, settings)
    own = [(r, meta.get("animal_id"), meta.get("provenance_group"))
           for r, meta in recordings.items()]
    _check_disjoint(parts, own, settings.get("by"), source, "by the file's own metadata")
    return parts


def _kind(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
            dict: "a mapping", list: "a list", type(None): "null"}.get(type(value),
                                                                       type(value).__name__)


def _check_disjoint(partitions: Partitions, rows: Iterable[tuple[Any, Any, Any]],
                    by: Any, source: str, basis: str) -> None:
    """Refuse an animal (and, when split by provenance group, a group) whose recordings
    ``rows`` = ``(recording, animal_id, provenance_group)`` lie in two partitions."""
    lookup, rows = partitions._lookup(), list(rows)
    keys = [("animal", 1)] + ([("provenance group", 2)] if by == "provenance_group" else [])
    for label, index in keys:
        first: dict[Any, tuple[Recording, str]] = {}
        for row in rows:
            value, where = row[index], lookup.get(_plain(row[0]))
            if where is None or value is None or (isinstance(value, float) and np.isnan(value)):
                continue
            value = _plain(value)
            recording, other = first.setdefault(value, (_plain(row[0]), where))
            if other != where:
                raise InputError(
                    f"leakage: {label} {value!r} is in two partitions {basis}: recording "
                    f"{recording!r} in {other!r} and recording {_plain(row[0])!r} in "
                    f"{where!r}", source=source)


def check_against_recordings(partitions: Partitions, recordings: pd.DataFrame, *,
                             source: str) -> None:
    """Check a partitions file against the recording table of the run that uses it.

    Every recording of ``recordings`` must be known to the file (in a partition or
    quarantined; recordings the file lists but the run does not have are allowed, a
    run may use part of a cohort). By the *data's* ``animal_id``, no animal may have
    recordings in two partitions, and when the file was split by provenance group, no
    group either: the file's own metadata may be wrong or re-sealed, the data decides.
    Raises :class:`InputError` naming the file, the animal (or group), two of its
    recordings and their two partitions.
    """
    lookup = partitions._lookup()
    quarantined = {_plain(q["recording"]) for q in partitions.quarantine}
    ids = [_plain(r) for r in recordings["recording"]]
    unknown = [r for r in ids if r not in lookup and r not in quarantined]
    if unknown:
        raise InputError(f"recording {unknown[0]!r} of the data is in no partition and not "
                         f"quarantined ({len(unknown)} such recording(s)); the partitions file "
                         "was made for other recordings", source=source)
    groups = (recordings["provenance_group"] if "provenance_group" in recordings.columns
              else [None] * len(ids))
    _check_disjoint(partitions, zip(ids, recordings["animal_id"], groups),
                    partitions.settings.get("by"), source, "by the data's recording table")


# ----------------------------------------------------------------------------- the split


def parse_fractions(text: str | Mapping[str, float] | None) -> dict[str, float]:
    """``"train=0.5,calibration=0.2,test=0.3"`` -> dict; they must be >= 0 and sum to 1."""
    if text is None:
        return {"development": 1.0}
    if isinstance(text, Mapping):
        items = list(text.items())
    else:
        items = []
        for part in str(text).split(","):
            name, sep, value = part.partition("=")
            if not sep:
                raise ConfigError(f"fractions: expected name=value, got {part.strip()!r}")
            try:
                items.append((name.strip(), float(value)))
            except ValueError as exc:
                raise ConfigError(f"fractions: {value.strip()!r} is not a number") from exc
    fractions: dict[str, float] = {}
    for name, value in items:
        if name not in PARTITION_NAMES:
            raise ConfigError(f"fractions: unknown partition {name!r} "
                              f"(choose from {', '.join(PARTITION_NAMES)})")
        if name in fractions:
            raise ConfigError(f"fractions: {name!r} is given twice")
        if not np.isfinite(value) or value < 0:
            raise ConfigError(f"fractions: {name}={value} must be a finite number >= 0")
        fractions[name] = float(value)
    total = sum(fractions.values())
    if abs(total - 1.0) > 1e-9:
        raise ConfigError(f"fractions: they must sum to 1, they sum to {total:g}")
    return {name: fractions[name] for name in PARTITION_NAMES if name in fractions}


def apportion(fractions: Mapping[str, float], n_units: int) -> dict[str, int]:
    """Largest-remainder apportionment of ``n_units`` (ties go to the earlier name)."""
    names = [n for n in PARTITION_NAMES if n in fractions]
    quotas = np.array([fractions[n] * n_units for n in names])
    counts = np.floor(quotas + 1e-9).astype(np.int64)
    remainders = quotas - counts
    left = n_units - int(counts.sum())
    order = np.lexsort((np.arange(len(names)), -np.round(remainders, 12)))
    counts[order[:left]] += 1
    return dict(zip(names, counts.tolist()))


def make_partitions(recordings: pd.DataFrame, *, by: str = "animal",
                    fractions: str | Mapping[str, float] | None = None,
                    same_animal_candidates: pd.DataFrame | Iterable[tuple] | None = None,
                    seed: int = DEFAULT_SEED, source: str = "<recordings>",
                    candidates_source: str = "<same-animal candidates>") -> Partitions:
    """Split a recording table into frozen partitions (see the module docstring)."""
    if by not in SPLIT_BY:
        raise ConfigError(f"split by {by!r}: choose one of {', '.join(SPLIT_BY)}")
    table = validate(recordings, RECORDINGS, source=source)
    if len(table) == 0:
        raise InputError("the recording table has no rows", source=source)
    fractions = parse_fractions(fractions)
    ids = [_plain(r) for r in table["recording"]]
    animals = [_plain(a) for a in table["animal_id"]]
    groups = [_plain(g) for g in table["provenance_group"]]
    folds = (table["source_folds"] if "source_folds" in table.columns
             else pd.Series([None] * len(table)))
    meta = {r: {"animal_id": a, "provenance_group": g, "source_folds": _fold(f)}
            for r, a, g, f in zip(ids, animals, groups, folds)}

    units = _units(ids, animals, groups if by == "provenance_group" else None)
    pairs = _candidate_pairs(same_animal_candidates, set(ids), candidates_source)
    quarantine = _quarantine(pairs, ids, animals)
    quarantined = {q["recording"] for q in quarantine}

    unit_members: dict[int, list[Recording]] = {}
    for recording, unit in zip(ids, units):
        if recording not in quarantined:
            unit_members.setdefault(unit, []).append(recording)
    ordered = sorted((sorted(m) for m in unit_members.values()), key=lambda m: m[0])
    rng = np.random.Generator(np.random.PCG64(seed))
    shuffled = [ordered[i] for i in rng.permutation(len(ordered))]
    counts = apportion(fractions, len(shuffled))
    result: dict[str, tuple[Recording, ...]] = {}
    start = 0
    for name in PARTITION_NAMES:
        take = counts.get(name, 0)
        result[name] = tuple(sorted(r for unit in shuffled[start:start + take] for r in unit))
        start += take
    settings = {
        "by": by,
        "fractions": fractions,
        "fractions_of": "animals" if by == "animal" else "provenance groups",
        "seed": int(seed),
        "units": len(shuffled),
        "same_animal_candidates": [list(p) for p in pairs],
        "source_folds": "carried as metadata, never used to split",
    }
    return Partitions(result, tuple(quarantine), dict(sorted(meta.items())), settings)


def development_only(recordings: pd.DataFrame, source: str = "<recordings>") -> Partitions:
    """The alpha: every recording is ``development``; the other partitions are empty."""
    return make_partitions(recordings, fractions=None, source=source)


def _plain(value: Any) -> Recording:
    """numpy scalars to Python int / str (ids are integers or strings, tables.py)."""
    if is_integer(value):
        return int(value)
    return str(value)


def _fold(value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return plain(value)


def _units(ids: list, animals: list, groups: list | None) -> list[int]:
    """Connected components of recordings linked by a shared animal (and group)."""
    parent = list(range(len(ids)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for keys in (animals, groups) if groups is not None else (animals,):
        first: dict[Any, int] = {}
        for i, key in enumerate(keys):
            j = first.setdefault(key, i)
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [find(i) for i in range(len(ids))]


def _candidate_pairs(candidates, known: set, source: str) -> list[tuple[Recording, Recording]]:
    if candidates is None:
        return []
    columns = ["recording_a", "recording_b"]
    if isinstance(candidates, pd.DataFrame):
        missing = [c for c in columns if c not in candidates.columns]
        if missing:
            raise InputError("missing required column of the same-animal candidate table; found "
                             f"columns {[str(c) for c in candidates.columns]}", source=source,
                             column=missing[0])
    else:
        candidates = pd.DataFrame([tuple(p) for p in candidates], columns=columns)
    # The recording table's ids are text (tables.validate); the candidates' are read by the
    # same id rule and compared as written (docs/reference/robustness.md, "Ids as written").
    written = [ids_as_text(id_column(candidates[c], c, source)) for c in columns]
    pairs = set()
    for row, pair in enumerate(zip(*written), start=1):
        resolved = []
        for column, value in zip(columns, pair):
            if value not in known:
                raise InputError(f"recording {value!r} is not in the recording table",
                                 source=source, column=column, row=row)
            resolved.append(value)
        if resolved[0] == resolved[1]:
            raise InputError("a recording is paired with itself", source=source,
                             column="recording_b", row=row)
        pairs.add(tuple(sorted(resolved)))
    return sorted(pairs)


def _quarantine(pairs, ids: list, animals: list) -> list[dict[str, Any]]:
    animal_of = dict(zip(ids, animals))
    reasons: dict[Recording, list[str]] = {}
    flagged_animals: dict[Any, list[Recording]] = {}
    for a, b in pairs:
        if animal_of[a] == animal_of[b]:
            continue  # resolved: the same animal, kept together anyway
        for this, other in ((a, b), (b, a)):
            reasons.setdefault(this, []).append(
                f"possibly the same animal as recording {other!r} (unresolved)")
            flagged_animals.setdefault(animal_of[this], []).append(this)
    for recording, animal in zip(ids, animals):
        if animal in flagged_animals and recording not in reasons:
            listed = ", ".join(repr(r) for r in sorted(set(flagged_animals[animal])))
            reasons[recording] = [f"same animal {animal!r} as quarantined recording(s) {listed}"]
    return [{"recording": r, "reason": "; ".join(reasons[r])} for r in sorted(reasons)]


# ----------------------------------------------------------------------------- the guard


@dataclass(frozen=True)
class FittedThreshold:
    """A verifier threshold fitted to reach a target selective risk (None = undefined)."""

    threshold: float | None
    target_risk: float
    selective_risk: float | None
    accepted: int
    labelled: int
    partitions: tuple[str, ...] = ()
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return to_jsonable(self.__dict__)


def threshold_for_risk(scores: np.ndarray, errors: np.ndarray, target_risk: float
                       ) -> tuple[float | None, float | None, int, str | None]:
    """The largest threshold whose selective risk on accepted labelled rows is <= target.

    Over labelled rows (``error`` is 0 or 1, not NaN) with a finite score, a threshold
    ``tau`` accepts the rows with ``score <= tau`` and has selective risk
    ``risk(tau) = sum(error[accepted]) / |accepted|``. Candidates are the distinct finite
    scores (rows with equal scores are accepted together, so a tie is never split); the
    result is the largest candidate with ``risk <= target_risk``, searched over *all*
    candidates (risk is not monotone in ``tau``). Unlabelled and abstained (non-finite)
    rows never count (SPEC section 6 divides by every accepted row, labelled or not; a fit
    can only use labelled rows). The curve is
    :func:`trackverify.benchmark.selective.risk_coverage_curve` over the labelled rows. Undefined
    (``None`` and a reason) when there is no labelled row
    with a finite score, or when even the smallest score's group exceeds the target.
    Returns ``(threshold, risk, accepted, reason)``.
    """
    if not (0.0 <= target_risk <= 1.0):
        raise ConfigError(f"target selective risk {target_risk} must be in [0, 1]")
    scores = np.asarray(scores, dtype=np.float64)
    errors = np.asarray(errors, dtype=np.float64)
    keep = np.isfinite(scores) & ~np.isnan(errors)
    if not keep.any():
        return None, None, 0, "no labelled row with a finite score to fit on"
    # The SPEC section 6 curve over labelled rows only: risk = accepted errors / accepted.
    curve = risk_coverage_curve(errors[keep], scores[keep])
    risk = curve["selective_risk"]
    accepted = np.rint(curve["coverage"] * keep.sum()).astype(np.int64)
    ok = np.flatnonzero(risk <= target_risk + 1e-12)
    if ok.size == 0:
        return None, None, 0, (f"no threshold reaches selective risk <= {target_risk:g} "
                               f"(the lowest-scored rows already have risk {fmt(risk[0])})")
    best = ok[-1]
    return float(curve["threshold"][best]), float(risk[best]), int(accepted[best]), None


class FitData:
    """The only door through which fit steps get labelled rows.

    Built from the partitions and an observation table (with a ``recording`` column, and
    whatever label columns the fit needs). On construction it keeps a copy of the rows of
    ``train`` and ``calibration`` recordings only; the rows of every other partition,
    quarantined and unknown recordings are not kept (only their counts), so no method can
    return them. Asking for any other partition raises :class:`LeakageError`, and so does
    a fit request when there are no train/calibration rows (nothing is ever silently
    fitted on test or development data).
    """

    def __init__(self, partitions: Partitions, observations: pd.DataFrame):
        if "recording" not in observations.columns:
            raise InputError("the observation table has no 'recording' column",
                             column="recording")
        lookup = partitions._lookup()
        names = observations["recording"].map(lookup).fillna("unpartitioned").to_numpy(dtype=object)
        self._partitions = partitions
        self._rows = {name: observations.loc[names == name].reset_index(drop=True).copy()
                      for name in FIT_PARTITIONS}
        self.row_counts = {name: int(np.sum(names == name))
                           for name in (*PARTITION_NAMES, "unpartitioned")}

    def labels_for_fit(self, partitions: Sequence[str] | str = FIT_PARTITIONS) -> pd.DataFrame:
        """A copy of the rows of the requested fit partitions (train and/or calibration)."""
        requested = (partitions,) if isinstance(partitions, str) else tuple(partitions)
        if not requested:
            raise ConfigError("labels_for_fit: no partition requested")
        for name in requested:
            if name not in PARTITION_NAMES:
                raise ConfigError(f"unknown partition {name!r} "
                                  f"(choose from {', '.join(PARTITION_NAMES)})")
            if name not in FIT_PARTITIONS:
                raise LeakageError(
                    f"a fit step asked for {name!r} labels; fit steps may only see "
                    f"{' and '.join(FIT_PARTITIONS)} recordings (SPEC section 8)")
        rows = pd.concat([self._rows[name] for name in requested], ignore_index=True)
        if len(rows) == 0:
            have = ", ".join(f"{n}={self.row_counts[n]}" for n in PARTITION_NAMES)
            raise LeakageError(
                f"nothing to fit on: no rows in {' / '.join(requested)} (rows per partition: "
                f"{have}); fitting is only allowed on train/calibration recordings, never on "
                "test, validation or development")
        return rows.copy()

    def fit_threshold(self, target_risk: float, *, partitions: Sequence[str] = FIT_PARTITIONS,
                      score: str = "score", error: str = "error") -> FittedThreshold:
        """Fit a verifier threshold reaching ``target_risk`` (see :func:`threshold_for_risk`)."""
        rows = self.labels_for_fit(partitions)
        for column in (score, error):
            if column not in rows.columns:
                raise InputError(f"the fit rows have no {column!r} column", column=column)
        threshold, risk, accepted, reason = threshold_for_risk(
            rows[score].to_numpy(dtype=np.float64),
            pd.to_numeric(rows[error], errors="coerce").to_numpy(dtype=np.float64),
            target_risk)
        labelled = int((rows[error].notna() & np.isfinite(
            rows[score].to_numpy(dtype=np.float64))).sum())
        return FittedThreshold(threshold, float(target_risk), risk, accepted, labelled,
                               tuple(partitions) if not isinstance(partitions, str)
                               else (partitions,), reason)

    def summary(self) -> dict[str, Any]:
        """Rows per partition and whether anything may be fitted."""
        fit_rows = sum(self.row_counts[n] for n in FIT_PARTITIONS)
        return {"rows": dict(self.row_counts), "fit_allowed": fit_rows > 0,
                "note": None if fit_rows else DEVELOPMENT_NOTE
                if self._partitions.is_development_only()
                else "no train/calibration rows: nothing is fitted"}


def rows_of_partition(partitions: Partitions, observations: pd.DataFrame,
                      name: str) -> pd.DataFrame:
    """The rows of one partition, for *evaluation* (never hand these to a fit step)."""
    if name not in PARTITION_NAMES:
        raise ConfigError(f"unknown partition {name!r} (choose from {', '.join(PARTITION_NAMES)})")
    mask = observations["recording"].isin(list(partitions.partitions.get(name, ()))).to_numpy()
    return observations.loc[mask].reset_index(drop=True)

