"""trackverify: can these tracking and trajectory results be trusted?

The public entry points are re-exported here; see ``docs/architecture.md`` for the shape.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from trackverify import moved
from trackverify.errors import ConfigError, InputError, LeakageError, TrackverifyError

moved.install()  # the old module paths, for one release

try:
    __version__ = version("trackverify")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "AuditResult",
    "ConfigError",
    "audit",
    "check_reference",
    "estimate_error_rate",
    "evaluate",
    "Evaluation",
    "evaluate_ctc",
    "evaluate_tracking",
    "evaluate_wormnd",
    "load_verifier",
    "sample_review",
    "verify",
    "VerificationResult",
    "InputError",
    "LeakageError",
    "TrackverifyError",
    "__version__",
]


#: Public name -> (module, attribute); imported on first use so that ``import trackverify``
#: stays light (the work pulls in scipy and pandas).
_LAZY = {
    "audit": ("trackverify.audit", "audit"),
    "AuditResult": ("trackverify.audit", "AuditResult"),
    "check_reference": ("trackverify.reference_check", "check_reference"),
    "estimate_error_rate": ("trackverify.review.estimate", "estimate_error_rate"),
    "evaluate": ("trackverify.metrics.evaluate", "evaluate"),
    "Evaluation": ("trackverify.metrics.evaluate", "Evaluation"),
    "evaluate_ctc": ("trackverify.metrics.graph.ctc", "evaluate_ctc"),
    "evaluate_tracking": ("trackverify.metrics.tracking", "evaluate_tracking"),
    "evaluate_wormnd": ("trackverify.metrics.graph.wormnd", "evaluate_wormnd"),
    "load_verifier": ("trackverify.verifiers", "load_verifier"),
    "sample_review": ("trackverify.review.design", "draw_sample"),
    "verify": ("trackverify.benchmark.verification", "verify"),
    "VerificationResult": ("trackverify.benchmark.verification", "VerificationResult"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'trackverify' has no attribute {name!r}")
