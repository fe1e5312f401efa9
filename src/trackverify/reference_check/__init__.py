"""The reference check: likely label errors in reference tracks (docs/reference-check.md)."""

from trackverify.reference_check.core import (
    CheckSettings, ReferenceCheck, anchor_contradictions, check_recording, check_reference)

__all__ = ["CheckSettings", "anchor_contradictions", "ReferenceCheck", "check_recording", "check_reference"]
