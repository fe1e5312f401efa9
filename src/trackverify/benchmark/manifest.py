"""The run manifest: config, package version, input hashes, random choices, timestamps.

Timestamps live only here, never in ``results.json``, so results stay byte-identical.
"""

from __future__ import annotations

import hashlib
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from trackverify import __version__


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def input_hashes(path: str | Path | None) -> dict[str, str]:
    """SHA-256 of every input file (a folder: every file in it, relative names)."""
    if path is None:
        return {}
    path = Path(path)
    if path.is_file():
        return {path.name: sha256_file(path)}
    return {str(p.relative_to(path)): sha256_file(p)
            for p in sorted(path.rglob("*")) if p.is_file()}


def build_manifest(config: dict[str, Any], source: dict[str, Any], inputs: dict[str, str],
                   random_choices: dict[str, Any]) -> dict[str, Any]:
    return {
        "trackverify_version": __version__,
        "python": platform.python_version(),
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": config,
        "source": source,
        "input_sha256": inputs,
        "corruptions": random_choices,
    }
