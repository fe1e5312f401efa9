"""``trackverify audit``: which identities of a tracker's output can be trusted (docs/audit.md).

``trackverify.audit(tracks, ...)`` is :func:`trackverify.audit.core.audit`. Importing the
subpackage makes ``trackverify.audit`` name this package (Python sets a parent's attribute to
each imported subpackage), so the package itself is callable and calls that function:
``trackverify.audit(...)`` works whichever of the two the name holds.
"""

import sys
import types

from trackverify.audit.core import AuditResult, audit, load_calibration

__all__ = ["AuditResult", "audit", "load_calibration"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
