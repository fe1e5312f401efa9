"""One rich progress-bar style for long work, on stderr, quiet when not a terminal; and
:func:`step`, which says what the work is doing now to the bar of the process showing one.

Work that runs in this process (``--jobs 1``) names each step, and the bar shows it, e.g.
``rec000: nearby_swap (5/7)``; in a worker process there is no bar and :func:`step` does
nothing, so the bar then advances by recording only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

_shown: list[Callable[[str], None]] = []  # the showing bar's callback, innermost last


def progress_bar() -> Progress:
    console = Console(file=sys.stderr)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True,
                    disable=not console.is_terminal)


@contextmanager
def showing_steps(bar: Progress, task) -> Iterator[None]:
    """While inside, :func:`step` texts become ``task``'s description on ``bar``."""
    def show(text: str) -> None:
        bar.update(task, description=text)
        bar.refresh()
    _shown.append(show)
    try:
        yield
    finally:
        _shown.remove(show)


def step(text: str) -> None:
    """Say what the work is doing now (shown by the innermost :func:`showing_steps` bar)."""
    if _shown:
        _shown[-1](text)
