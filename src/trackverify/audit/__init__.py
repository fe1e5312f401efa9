"""``trackverify audit``: which identities of a tracker's output can be trusted (docs/guide/audit.md).

``trackverify.audit(tracks, ...)`` is :func:`trackverify.audit.core.audit`. Importing the
subpackage makes ``trackverify.audit`` name this package (Python sets a parent's attribute to
each imported subpackage), so the package itself is callable and calls that function:
``trackverify.audit(...)`` works whichever of the two the name holds. The work (numpy,
pandas) is imported on first use, so ``trackverify audit -h`` stays light.
"""

import sys
import types

__all__ = ["AuditResult", "audit", "calibration_threshold"]


def __getattr__(name: str):
    if name == "audit":
        from trackverify.audit.core import audit

        return audit
    if name == "AuditResult":
        from trackverify.audit.result import AuditResult

        return AuditResult
    if name == "calibration_threshold":
        from trackverify.audit.verdicts import calibration_threshold

        return calibration_threshold
    raise AttributeError(f"module 'trackverify.audit' has no attribute {name!r}")


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from trackverify.audit.core import audit

        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
