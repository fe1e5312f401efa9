"""Verification of neural datasets converted into one decoding format (paper B's verifier).

Checks (EVALUATORS B1-B7): required files, format validation, summary statistics against a
reference, variable matching, output class counts and the linear decoder; plus the
agreement of an agent judge with manual ratings (B9). See ``docs/reference/conversion.md``.

The public names are imported on first use, so that ``trackverify --help`` stays fast.
"""

from __future__ import annotations

import importlib

#: The decoder's largest number of epochs (Adam steps): a bound on its run time (about 8 s
#: on the synthetic default specification); the command line refuses more.
MAX_EPOCHS = 10_000

_PUBLIC = {
    "DecoderConfig": "decoder", "run_decoder": "decoder", "run_checks": "checks",
    "validate_format": "format", "judge_agreement": "judge",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"trackverify.conversion.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'trackverify.conversion' has no attribute '{name}'")
