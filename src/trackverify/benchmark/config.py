"""The frozen run configuration: SPEC defaults, overridable by a TOML file and by CLI flags.

Documented for users in docs/reference/configuration.md (example file: docs/examples/run.toml).

Precedence: defaults < ``--config FILE`` < explicit flags. Unknown keys, wrong types and
out-of-range values are :class:`~trackverify.errors.ConfigError` (CLI exit 2).

TOML layout::

    [run]
    seed = 20261007                               # >= 0
    start = 300
    recovery_end = 700
    threshold_um = 5.0
    zero_distance_um = 5.0
    falsification_share = 0.05
    verifier = "fixed_distance"
    compare_verifiers = ["fixed_distance", "registered_distance"]  # side by side, same conditions
    ambiguity_k = 0.0                             # registered_distance's uniqueness band
    fit_ambiguity_k = false                       # with --calibrate: fit that band too
    conditions = [...]                            # default: the seven of SPEC section 4; must
                                                  # include "control", each name once
    repeats = 1                                   # draws of the suite: seeds seed, seed+1, ...

    [specimen]            # only used when no data are given
    frames = 1000
    motion = "moderate"
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from trackverify.errors import ConfigError
from trackverify.io.bounded import parse_nested, read_text
from trackverify.synth.specimen import SpecimenConfig
from trackverify.values import INT64_MAX, INT64_MIN, is_integer, is_real

#: The alpha suite (SPEC section 4): what a run uses unless ``conditions`` says otherwise.
DEFAULT_CONDITIONS = ("control", "single_frame_swap", "persistent_swap", "swap_and_recovery",
                      "nearby_swap", "fragmentation", "dropout")
#: Every known condition: the alpha suite, then the harder ones of SPEC section 9 (opt-in).
CONDITIONS = DEFAULT_CONDITIONS + ("smooth_drift", "duplicate_identity", "long_gap_reassociation")


#: The most draws of the corruption suite a run takes (and ``evidence --draws``): the largest
#: 1-2-5 number whose run on the 40-frame, 189-neuron specimen takes at most 30 s of CPU, half
#: of a 60 s budget on a shared core (a draw costs about 0.35 s there: 100 draws took 34 s of
#: CPU and 99 s of wall time at load 5; docs/evidence/robustness.md). Over 50 draws the
#: standard error of a mean is 14 % of the between-draw spread.
MAX_REPEATS = 50


@dataclass(frozen=True)
class RunConfig:
    """Every value a run uses. Defaults are those of SPEC.md; each one is recorded."""

    seed: int = 20261007
    start: int = 300
    recovery_end: int = 700
    threshold_um: float = 5.0
    zero_distance_um: float = 5.0
    falsification_share: float = 0.05
    verifier: str = "fixed_distance"
    compare_verifiers: tuple[str, ...] = ("fixed_distance", "registered_distance")
    ambiguity_k: float = 0.0  # registered_distance's band (verifiers.registered_distance)
    #: With ``run --calibrate``: replace ``ambiguity_k`` by the median clean ``d / sigma`` of
    #: the fit recordings (``run._calibrate``); otherwise calibration keeps the declared band.
    fit_ambiguity_k: bool = False
    #: Check the reference for likely label errors and score every condition also on the rows
    #: the check does not question (docs/guide/reference-check.md).
    check_reference: bool = False
    conditions: tuple[str, ...] = DEFAULT_CONDITIONS
    repeats: int = 1
    specimen: SpecimenConfig = field(default_factory=SpecimenConfig)
    #: The consistency rule's own declared threshold (None: ``threshold_um``). A calibrated run
    #: sets it to the declared ``threshold_um`` before fitting, so the small-deformation verdict
    #: never uses a fitted verifier threshold. Not settable from a file or flag.
    consistency_threshold_um: float | None = None

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0 (numpy seeds are non-negative), got {self.seed}")
        if self.seed + self.repeats - 1 > INT64_MAX:  # every draw's seed is recorded as int64
            raise ConfigError(f"seed + repeats - 1 must be at most 2^63 - 1 = {INT64_MAX} (the "
                              f"last draw's seed), got seed {self.seed} and repeats {self.repeats}")
        if self.start < 1:
            raise ConfigError(f"start must be >= 1 (frame 0 is the anchor), got {self.start}")
        if self.recovery_end <= self.start:
            raise ConfigError(f"recovery_end ({self.recovery_end}) must be > start ({self.start})")
        for name in ("threshold_um", "zero_distance_um"):
            if not 0 < getattr(self, name) < float("inf"):
                raise ConfigError(f"{name} must be > 0 and finite, got {getattr(self, name)}")
        if not 0 <= self.falsification_share <= 1:
            raise ConfigError(f"falsification_share must be in [0, 1], got {self.falsification_share}")
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise ConfigError(f"repeats must be between 1 and {MAX_REPEATS}, got {self.repeats}")
        if not 0 <= self.ambiguity_k < float("inf"):
            raise ConfigError(f"ambiguity_k must be >= 0 and finite, got {self.ambiguity_k}")
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown:
            raise ConfigError(f"unknown condition(s) {unknown}; known: {list(CONDITIONS)}")
        if "control" not in self.conditions:
            raise ConfigError(f"conditions must include 'control' (the consistency diagnostic "
                              f"and every comparison use it), got {list(self.conditions)}")
        twice = sorted({c for c in self.conditions if self.conditions.count(c) > 1})
        if twice:
            raise ConfigError(f"conditions lists {twice} twice; name each condition once")

    def to_dict(self) -> dict[str, Any]:
        """Every value, for results and manifest. ``repeats`` appears only when above 1 and
        ``fit_ambiguity_k`` only when true, so outputs that use neither stay byte-identical
        to those of releases without them."""
        out = dataclasses.asdict(self)
        for key in _RECORDED_WHEN_SET:
            if out[key] == getattr(RunConfig, key):
                del out[key]
        return out

    def draw_seeds(self) -> list[int]:
        """The corruption seeds of the repeated draws: ``seed, seed + 1, ..., seed + N - 1``."""
        return [self.seed + k for k in range(self.repeats)]


#: Settings recorded only when they differ from their default (:meth:`RunConfig.to_dict`).
_RECORDED_WHEN_SET = ("repeats", "fit_ambiguity_k", "check_reference")


def _coerce(cls: type, name: str, value: Any, source: str) -> Any:
    """Check ``value`` against the declared type of field ``name`` of dataclass ``cls``."""
    declared = {f.name: f for f in fields(cls)}[name]
    default = declared.default if declared.default is not dataclasses.MISSING else None
    where = (f"{source}: --{name.replace('_', '-')}" if source == "command line"
             else f"{source}: '{name}'")
    if isinstance(default, bool) or declared.type == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if not is_integer(value):
            raise ConfigError(f"{where} must be an integer, got {value!r}")
        if not is_integer(value, INT64_MIN, INT64_MAX):
            raise ConfigError(f"{where} must be a 64-bit integer (-2^63 to 2^63 - 1 = "
                              f"{INT64_MAX}), got {value}")
        return value
    if isinstance(default, float):
        if not is_real(value, finite=False):  # NaN and infinities: each setting's own check
            raise ConfigError(f"{where} must be a number, got {value!r}")
        try:
            return float(value)
        except OverflowError:  # an integer beyond the float range
            raise ConfigError(f"{where} must be a number within the float range, got an "
                              f"integer of {len(str(abs(value)))} digits") from None
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a string, got {value!r}")
        return value
    if name in ("conditions", "compare_verifiers"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of names, got {value!r}")
        return tuple(value)
    raise ConfigError(f"{where} cannot be set")  # pragma: no cover - every field is typed


def build_config(overrides: dict[str, Any] | None = None, config_file: str | Path | None = None,
                 source: str = "command line") -> RunConfig:
    """Defaults, then the TOML file, then ``overrides`` (None values are ignored)."""
    run_values: dict[str, Any] = {}
    specimen_values: dict[str, Any] = {}
    given: dict[str, str] = {}  # run setting -> where its value was read
    if config_file is not None:
        run_values, specimen_values = _read_toml(Path(config_file))
        given = dict.fromkeys(run_values, f"{Path(config_file)} [run]")
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key.startswith("specimen."):
            specimen_values[key.split(".", 1)[1]] = _coerce(SpecimenConfig, key.split(".", 1)[1], value, source)
        else:
            run_values[key] = _coerce(RunConfig, key, value, source)
            given[key] = source
    origin = f"{config_file} or {source}" if config_file is not None else source
    try:
        config = RunConfig(**run_values, specimen=SpecimenConfig(**specimen_values))
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from exc
    _check_verifiers(config, given)
    return config


def verifier_options(config: "RunConfig") -> dict:
    """Run settings a verifier may take in its constructor."""
    return {"ambiguity_k": config.ambiguity_k}


def _check_verifiers(config: "RunConfig", given: dict[str, str]) -> None:
    """Each verifier setting names a verifier the run can build (a built-in name, or
    ``module:Class`` whose module imports and holds a class that constructs from the run's
    :func:`verifier_options` and meets the protocol: :func:`trackverify.verifiers.load_verifier`),
    else a ConfigError naming where the setting was given and its key."""
    from trackverify.verifiers import load_verifier

    for key, specs in (("verifier", (config.verifier,)),
                       ("compare_verifiers", config.compare_verifiers)):
        for spec in specs:
            try:
                load_verifier(spec, verifier_options(config))
            except ConfigError as exc:  # the defaults are built-in: a failing spec was given
                raise ConfigError(f"{given[key]}: '{key}': {exc}") from exc


def _read_toml(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    source = str(path)
    text = read_text(path, what="config file", error=ConfigError)
    try:
        data = parse_nested(tomllib.loads, text, source=source, kind="TOML", error=ConfigError)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from exc
    unknown_tables = sorted(set(data) - {"run", "specimen"})
    if unknown_tables:
        raise ConfigError(f"{source}: unknown section(s) {unknown_tables}; use [run] and [specimen]")
    sections = []
    for table, cls, skip in (("run", RunConfig, {"specimen"}), ("specimen", SpecimenConfig, set())):
        values = data.get(table, {})
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: [{table}] must be a table")
        known = {f.name for f in fields(cls)} - skip
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown} in [{table}]; known: {sorted(known)}")
        sections.append({k: _coerce(cls, k, v, f"{source} [{table}]") for k, v in values.items()})
    return sections[0], sections[1]
