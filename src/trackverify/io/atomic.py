"""Outputs are written to a temporary name in the target folder and renamed into place.

A run killed midway therefore leaves either the previous complete file or none, never a
truncated one. ``os.replace`` is atomic on POSIX file systems. A folder (a zarr store) is
written the same way: into a temporary folder, renamed into place once whole.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from trackverify import stop
from trackverify.errors import InputError


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def ensure_folder(folder: str | os.PathLike) -> Path:
    """Create the output ``folder`` and its parents; refuse (:class:`InputError`) when a
    regular file stands where a folder must be, or the folder cannot be created."""
    from trackverify.io.paths import check_not_under_file

    folder = Path(folder)
    check_not_under_file(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder ({exc.strerror or exc})",
                         source=str(folder)) from None
    return folder


def missing_folders(folder: str | os.PathLike) -> list[Path]:
    """``folder`` and those of its ancestors that do not exist yet, deepest first (what
    :func:`ensure_folder` would create)."""
    folder, missing = Path(folder).absolute(), []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first) while they are empty: an output folder created for
    a job that failed is not left behind; a folder holding anything is kept."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


#: The temporary files :func:`temporary_beside` made in this process that are neither renamed
#: into place nor removed yet: :func:`remove_pending` removes them when a command stops.
_pending: set[Path] = set()


def temporary_beside(path: Path, folder: bool = False) -> Path:
    """A new empty temporary file (``folder``: folder) in ``path``'s folder (same file system,
    so rename is atomic), named ``.<name>.<random>.tmp`` with ``<name>`` cut to its first 100
    bytes: a file name may have 255 bytes, the temporary one too. SIGTERM is held while it is
    made and noted, so a stop at any moment after finds it among the pending files."""
    ensure_folder(path.parent)
    name = os.fsencode(path.name)[:100].decode("utf-8", errors="ignore")
    mask = getattr(signal, "pthread_sigmask", None)  # POSIX; elsewhere the window stays
    held = mask(signal.SIG_BLOCK, {signal.SIGTERM}) if mask else None
    try:
        if folder:
            tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=path.parent)
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
        _pending.add(Path(tmp))
    finally:
        if mask:
            mask(signal.SIG_SETMASK, held)
    return Path(tmp)


def discard_temporary(tmp_path: Path) -> None:
    """Remove a temporary file or folder of :func:`temporary_beside` (gone already: nothing
    to do)."""
    if tmp_path.is_dir() and not tmp_path.is_symlink():
        shutil.rmtree(tmp_path, ignore_errors=True)
    else:
        tmp_path.unlink(missing_ok=True)
    _pending.discard(tmp_path)


def remove_pending() -> None:
    """Remove every temporary file of this process not renamed into place: the command
    line's last step after a SIGTERM or Ctrl-C, wherever the stop interrupted the work
    (even between making a temporary file and the code that would clean it up)."""
    for tmp_path in sorted(_pending):
        discard_temporary(tmp_path)


def commit_temporary(tmp_path: Path, path: Path) -> Path:
    """Flush ``tmp_path`` to disk, give it ordinary permissions and rename it to ``path``.

    What is at ``path`` that a rename cannot replace (a folder; anything, for a temporary
    folder: a file or a link, never followed) is renamed aside first, put back if the rename
    into place fails, and removed after it.
    After a SIGTERM nothing is renamed into place: the temporary file is removed and
    :class:`trackverify.stop.Terminated` raised (see :mod:`trackverify.stop`).
    """
    if stop.requested():
        discard_temporary(tmp_path)
        stop.raise_if_requested()
    folder = tmp_path.is_dir()
    if not folder:
        with open(tmp_path, "rb+") as handle:
            os.fsync(handle.fileno())
    os.chmod(tmp_path, (0o777 if folder else 0o666) & ~_UMASK)
    aside = None
    if os.path.lexists(path) and (folder or (path.is_dir() and not path.is_symlink())):
        aside = Path(tempfile.mkdtemp(prefix=f".{tmp_path.name}.", suffix=".old",
                                      dir=path.parent))
        os.replace(path, aside / "old")
    try:
        os.replace(tmp_path, path)
    except OSError:
        if aside is not None:
            os.replace(aside / "old", path)
            aside.rmdir()
        raise
    _pending.discard(tmp_path)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    return path


def write_atomic(path: str | os.PathLike, write: Callable[[Path], None],
                 folder: bool = False) -> Path:
    """Call ``write(tmp_path)`` and rename ``tmp_path`` to ``path`` once it is complete
    (``folder``: ``tmp_path`` is an empty folder to write into, e.g. a zarr store)."""
    path = Path(path)
    tmp_path = temporary_beside(path, folder=folder)
    try:
        write(tmp_path)
        return commit_temporary(tmp_path, path)
    except BaseException:
        discard_temporary(tmp_path)
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def to_jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, NaN/inf become None (undefined = null)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def dumps_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, fixed indentation, no NaN."""
    return json.dumps(to_jsonable(value), indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_json_atomic(path: str | os.PathLike, value: Any) -> Path:
    return write_text_atomic(path, dumps_json(value))
