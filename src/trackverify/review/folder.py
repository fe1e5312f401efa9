"""One review server per sheet of a folder, and what a restart of it keeps.

``AUDIT_DIR/.review.lock`` (for review.csv; ``.review-<name>.lock`` for another reviewer's
``review-<name>.csv``) is held locked (``fcntl.flock``; ``msvcrt.locking`` on Windows)
by the one server of the folder for as long as its process lives: the operating system drops
the lock when the process ends, however it ends (SIGKILL too), so a second server on the
same folder, from any process, is refused with a line naming the first (its process id and
address), and nothing is ever stale. The file also keeps, from one run to the next, the
server's token and port (``{"pid", "port", "token"}``, readable by its owner only): a
restarted server takes the same address and token when the port is free, so a page left
open goes on saving. Claiming the folder also removes the temporary copies of review.csv a
killed server left (``.review.csv.*.tmp``: only the holder of the lock writes them).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from trackverify.errors import InputError

LOCK_NAME = ".review.lock"
SHEET_NAME = "review.csv"
#: A token as :func:`secrets.token_urlsafe` (24 bytes) writes it; anything else read back
#: from the lock file is replaced by a new one.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")
#: Windows locks byte ranges and refuses reads inside a locked one: lock a byte far past
#: the file's few bytes of JSON.
_WINDOWS_LOCK_OFFSET = 1 << 20


@dataclass
class Claim:
    """The lock on a review folder (open file ``fd``), the ``token`` to use and the
    ``port`` of the previous run (None: none recorded)."""

    folder: Path
    fd: int
    token: str
    port: int | None

    def record(self, port: int) -> None:
        """Write this process's id, ``port`` and token into the lock file (in place: the
        file must stay the one locked)."""
        text = json.dumps({"pid": os.getpid(), "port": port, "token": self.token}).encode()
        os.lseek(self.fd, 0, os.SEEK_SET)
        os.write(self.fd, text)
        os.ftruncate(self.fd, len(text))
        os.fsync(self.fd)

    def release(self) -> None:
        """Close the lock file, which drops the lock (the file and its token stay)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _try_lock(fd: int, path: Path) -> bool:
    """Lock ``fd`` without waiting: False when another process holds it; an
    :class:`InputError` when the file system cannot lock at all."""
    try:
        if os.name == "nt":  # pragma: no cover (no Windows in CI)
            import msvcrt

            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):  # held (PermissionError: Windows' answer)
        return False
    except OSError as exc:
        os.close(fd)
        raise InputError(f"cannot lock ({exc.strerror or exc}): this file system does not "
                         "let the review server make sure it is the only one", source=str(path)) from None
    return True


def _recorded(fd: int) -> dict:
    """The lock file's JSON object ({} when empty or unreadable)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        value = json.loads(os.read(fd, 4096) or b"{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _port(recorded: dict) -> int | None:
    port = recorded.get("port")
    return port if type(port) is int and 0 < port < 65536 else None


def lock_name(sheet: str = SHEET_NAME) -> str:
    """The lock file of ``sheet`` (a file name in the folder): :data:`LOCK_NAME` for
    review.csv, ``.review-<name>.lock`` for ``review-<name>.csv``."""
    return f".{Path(sheet).stem}.lock"


def remove_stale_temporaries(folder: Path, sheet: str = SHEET_NAME) -> None:
    """Remove the temporary copies of ``sheet`` in ``folder`` (only the lock's holder may:
    a running server's copy is in use)."""
    for path in folder.glob(f".{sheet}.*.tmp"):
        try:
            path.unlink()
        except OSError:
            pass


def claim_folder(folder: str | os.PathLike, sheet: str = SHEET_NAME) -> Claim:
    """Lock ``folder``'s ``sheet`` for one review server, or raise an :class:`InputError`
    naming the process that holds it; remove stale temporary copies of the sheet."""
    folder = Path(folder)
    path = folder / lock_name(sheet)
    try:
        # not through a symbolic link: the file is truncated and written
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise InputError(f"cannot open the lock file ({exc.strerror or exc})",
                         source=str(path)) from None
    locked = _try_lock(fd, path)
    recorded = _recorded(fd)  # written once by each holder, at its start
    if not locked:
        os.close(fd)
        pid, port = recorded.get("pid"), _port(recorded)
        holder = f"process {pid}" if type(pid) is int else "another process"
        where = f" at http://127.0.0.1:{port}/" if port else ""
        raise InputError(f"already being reviewed by {holder}{where} (one server per review "
                         "folder: use its page, or stop it first)",
                         source=str(folder if sheet == SHEET_NAME else folder / sheet))
    token = recorded.get("token")
    remove_stale_temporaries(folder, sheet)
    return Claim(folder, fd, token if isinstance(token, str) and _TOKEN.fullmatch(token)
                 else secrets.token_urlsafe(24), _port(recorded))
