"""Evaluators of the seven stages of the fly behaviour pipeline (EVALUATORS.md A1-A7).

Each stage module has a frozen ``*Config`` (every constant and open-question default, all
overridable) and ``evaluate(submission, reference, ground_truth, config) -> StageResult``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the light package imports the result type only when it is needed
    from trackverify.stages.common import StageResult


STAGES: dict[str, tuple[str, str]] = {
    "body-tracking": ("body_tracking", "BodyTrackingConfig"),
    "registration": ("registration", "RegistrationConfig"),
    "keypoints": ("keypoints", "KeypointsConfig"),
    "features": ("features", "FeaturesConfig"),
    "walking": ("walking", "WalkingConfig"),
    "gait": ("gait", "GaitConfig"),
    "stats": ("stats", "StatsConfig"),
}


def stage_module(stage: str):
    return importlib.import_module(f"trackverify.stages.{STAGES[stage][0]}")


def default_config(stage: str) -> Any:
    return getattr(stage_module(stage), STAGES[stage][1])()


def evaluate_stage(stage: str, submission: Path, reference: Path,
                   ground_truth: Path | None = None,
                   overrides: dict[str, Any] | None = None) -> StageResult:
    """Score ``submission`` for ``stage`` (see the stage modules for formulas and formats)."""
    from trackverify.stages.common import apply_overrides

    config = apply_overrides(default_config(stage), overrides)
    return stage_module(stage).evaluate(Path(submission), Path(reference),
                                        None if ground_truth is None else Path(ground_truth),
                                        config)


def failed_result(stage: str, problems: list[str],
                  overrides: dict[str, Any] | None = None) -> StageResult:
    """Score 0, verdict ``fail``: a submission that cannot be evaluated at all."""
    from trackverify.stages.common import StageResult, apply_overrides, config_record

    config = apply_overrides(default_config(stage), overrides)
    return StageResult(stage, 0.0, "fail", {}, {}, config_record(config), list(problems))


def __getattr__(name: str):
    # Lazy (numpy): `trackverify stage -h` only needs STAGES.
    if name == "StageResult":
        from trackverify.stages.common import StageResult

        return StageResult
    raise AttributeError(f"module 'trackverify.stages' has no attribute {name!r}")


__all__ = ["STAGES", "StageResult", "default_config", "evaluate_stage", "failed_result"]
