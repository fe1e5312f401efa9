"""Verification of neural datasets converted into one decoding format (paper B's verifier).

Checks (EVALUATORS B1-B7): required files, format validation, summary statistics against a
reference, variable matching, output class counts and the linear decoder; plus the
agreement of an agent judge with manual ratings (B9). See ``docs/conversion.md``.
"""

from trackverify.conversion.checks import run_checks
from trackverify.conversion.decoder import DecoderConfig, run_decoder
from trackverify.conversion.format import validate_format
from trackverify.conversion.judge import judge_agreement

__all__ = ["DecoderConfig", "judge_agreement", "run_checks", "run_decoder", "validate_format"]
