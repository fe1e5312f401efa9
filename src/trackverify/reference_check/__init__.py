"""The reference check: likely label errors in reference tracks (docs/guide/reference-check.md).

Light: the work (pandas, scipy) is imported on first use, so ``check-reference -h`` stays fast.
"""

from __future__ import annotations

__all__ = ["CheckSettings", "ReferenceCheck", "anchor_contradictions", "check_recording",
           "check_reference"]


def __getattr__(name: str):
    if name in __all__:
        from trackverify.reference_check import core

        return getattr(core, name)
    raise AttributeError(f"module 'trackverify.reference_check' has no attribute {name!r}")
