"""trackverify: can these tracking and trajectory results be trusted?

The public entry points are re-exported here; see ``docs/architecture.md`` for the shape.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from trackverify.errors import ConfigError, InputError, LeakageError, TrackverifyError

try:
    __version__ = version("trackverify")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ConfigError",
    "evaluate_tracking",
    "InputError",
    "LeakageError",
    "TrackverifyError",
    "__version__",
]


def __getattr__(name: str):
    # Lazy: importing trackverify stays light; the tracking evaluation pulls in scipy.
    if name == "evaluate_tracking":
        from trackverify.tracking_gt import evaluate_tracking

        return evaluate_tracking
    raise AttributeError(f"module 'trackverify' has no attribute {name!r}")
