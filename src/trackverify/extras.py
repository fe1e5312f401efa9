"""Optional dependencies (extras): import them, or fail with one line naming the install.

A missing extra is a :class:`~trackverify.errors.MissingExtraError` (CLI exit 2) such as
``convert --to nwb needs the 'nwb' extra: pip install 'trackverify[nwb]'``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from trackverify.errors import MissingExtraError


def install_command(extra: str) -> str:
    """The exact command that installs ``extra``."""
    return f"pip install 'trackverify[{extra}]'"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise one line: ``{purpose} needs the '{extra}' extra: pip ...``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f"{purpose} needs the '{extra}' extra ({module} is not "
                                f"installed): {install_command(extra)}") from exc
