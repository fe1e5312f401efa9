"""Old module paths of trackverify 0.1 (before the package was grouped into rooms), kept
importable for one release: ``import trackverify.mot`` gives :mod:`trackverify.metrics.mot`
with a :class:`DeprecationWarning` naming the new path."""

from __future__ import annotations

import importlib
import sys
import warnings
from importlib.machinery import ModuleSpec

#: old path (under ``trackverify.``) -> new path
MOVED = {
    "mot": "metrics.mot",
    "tracking_gt": "metrics.tracking",
    "associate": "metrics.association",
    "graph": "metrics.graph",
    "config": "benchmark.config",
    "dataset": "benchmark.dataset",
    "corrupt": "benchmark.corrupt",
    "partitions": "benchmark.partitions",
    "selective": "benchmark.selective",
    "pooled": "benchmark.pooled",
    "intervals": "benchmark.intervals",
    "evidence": "benchmark.evidence",
    "run": "benchmark.run",
    "verification": "benchmark.verification",
    "manifest": "benchmark.manifest",
    "protocols": "benchmark.protocols",
    "certify": "benchmark.certify",
    "cli_inputs": "cli.options",
    "tracking_cli": "cli.evaluate",
    "evidence_cli": "cli.evidence",
    "hygiene_commands": "cli.hygiene",
    "audit.cli": "cli.audit",
    "review.cli": "cli.review",
    "reference_check.cli": "cli.reference_check",
    "andi.cli": "cli.andi",
    "stages.cli": "cli.stages",
    "conversion.cli": "cli.conversion",
    "audit.review.design": "review.design",
    "audit.review.estimate": "review.estimate",
    "audit.review.simulation": "review.simulation",
    "audit.inputs": "io.tracks",
    "audit.review": "review",
}


def new_name(fullname: str) -> str | None:
    """The new path of an old module path (or of a module inside an old package path)."""
    parts = fullname.split(".")
    for end in range(len(parts), 1, -1):
        old = ".".join(parts[1:end])
        if parts[0] == "trackverify" and old in MOVED:
            return ".".join(["trackverify", MOVED[old], *parts[end:]])
    return None


class _Alias:
    """A meta-path finder and loader (the protocol of :mod:`importlib.abc`, not imported: it
    costs start-up time) that finds an old path and loads it as the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):
        return ModuleSpec(fullname, self) if new_name(fullname) is not None else None

    def create_module(self, spec):
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} is now {new}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        pass


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once: a module inside an old package path
    (``trackverify.graph.ctc``) is the new module, never a second copy of it."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
