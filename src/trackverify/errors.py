"""The one exception family of trackverify.

Every error a user can cause derives from :class:`TrackverifyError`; the CLI turns
it into a one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re
from collections.abc import Iterator


#: Longest problem text an :class:`InputError` carries: a value quoted from a hostile file
#: (a 10 MB attribute, a library message that repeats a whole line) is cut to its start and end.
MAX_PROBLEM_CHARS = 1000


def bounded(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """``text``, or its first and last characters with the count of those cut between."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}...[{len(text) - head - tail} characters cut]...{text[-tail:]}"


#: Runs of more digits than this are shortened in a one-line error (:func:`short_values`):
#: longer than any 64-bit integer (19 digits), so no value a program could use is touched.
MAX_ECHOED_DIGITS = 20
_LONG_DIGITS = re.compile(r"\d{%d,}" % (MAX_ECHOED_DIGITS + 1))


def short_values(text: str) -> str:
    """``text`` with every run of more than :data:`MAX_ECHOED_DIGITS` digits (a value echoed
    back, e.g. a 401-digit ``--repeats``) cut in the middle: ``1234...(401 digits)...789``."""
    return _LONG_DIGITS.sub(lambda m: f"{m[0][:4]}...({len(m[0])} digits)...{m[0][-3:]}", text)


def one_line(message: str) -> str:
    """An error message as the one line the CLI (and the review server) prints: whitespace
    runs (newlines too) become one space, and long numbers echoed back are cut in the middle
    (:func:`short_values`)."""
    return short_values(" ".join(message.split()))


class TrackverifyError(Exception):
    """Base class of every error trackverify raises on purpose."""


class InputError(TrackverifyError):
    """A file or table that cannot be used as given.

    The message names the file, and where there is one, the column and the first
    offending row (1-based data row; the header of a CSV file is not a row) and, for a text
    file, that row's line in the file (``row 76 (line 77)``).
    """

    def __init__(self, problem: str, *, source: str | None = None,
                 column: str | None = None, row: int | None = None, line: int | None = None):
        problem = bounded(problem)
        self.problem = problem
        self.source = source
        self.column = column
        self.row = row
        self.line = line
        where = []
        if source is not None:
            where.append(str(source))
        if column is not None:
            where.append(f"column '{column}'")
        if row is not None:
            where.append(f"row {row}" + ("" if line is None else f" (line {line})"))
        super().__init__(f"{': '.join([', '.join(where), problem]) if where else problem}")

    def named(self, source: str) -> "InputError":
        """The same error naming ``source`` (a subclass keeps its own type and details)."""
        return InputError(self.problem, source=source, column=self.column, row=self.row,
                          line=self.line)

    def at_line(self, line: int) -> "InputError":
        """The same error with its row's line in the file."""
        return InputError(self.problem, source=self.source, column=self.column, row=self.row,
                          line=line)


@contextlib.contextmanager
def naming_input(data: str | os.PathLike | None) -> Iterator[None]:
    """An :class:`InputError` raised inside that names no file (one about a recording, e.g.
    too short for a condition) is raised again naming ``data``, the file or folder it came
    from."""
    try:
        yield
    except InputError as exc:
        if exc.source is not None or data is None:
            raise
        raise exc.named(str(data)) from None


def naming_argument(name: str):
    """A decorator: :func:`naming_input` around each call, naming the file or folder its
    argument ``name`` holds (a command's ``tracks``, a function's ``reference_source``)."""
    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def named(*args, **kwargs):
            with naming_input(signature.bind_partial(*args, **kwargs).arguments.get(name)):
                return function(*args, **kwargs)
        return named
    return decorate


class ConfigError(TrackverifyError):
    """A run configuration value that is unknown, of the wrong type or out of range."""


class LeakageError(TrackverifyError):
    """A fit step asked for labels of recordings it must never see (e.g. ``test``)."""


class MissingExtraError(TrackverifyError):
    """An optional dependency (an extra) is not installed; the message gives the install command."""
