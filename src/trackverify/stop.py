"""A SIGTERM stops the work, and no output is renamed into place after it.

:func:`on_sigterm` (installed by the command line) raises :class:`Terminated`, a
``BaseException`` like ``KeyboardInterrupt``, so that no ``except Exception`` of a reader or
scorer can swallow it and the temporary files are cleaned up on the way out. It also records
the request: a library that swallows every exception (``except BaseException: pass``) cannot
lose it, because :func:`trackverify.io.atomic.commit_temporary` asks :func:`raise_if_requested`
before each rename, and the command line asks once more when the command returns.
"""

from __future__ import annotations

import signal

_requested = False


class Terminated(BaseException):
    """The process received SIGTERM; nothing more is committed."""


def requested() -> bool:
    """Whether a SIGTERM has arrived in this process."""
    return _requested


def record() -> None:
    """Note that a SIGTERM arrived (the handlers call it first)."""
    global _requested
    _requested = True


def on_sigterm(signum, frame) -> None:
    """The run's handler: one-shot (a second SIGTERM must not interrupt the cleanup)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    record()
    raise Terminated()


def raise_if_requested() -> None:
    """Raise :class:`Terminated` if a SIGTERM has arrived (even one whose exception was lost)."""
    if _requested:
        raise Terminated()
