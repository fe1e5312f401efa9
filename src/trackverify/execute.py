"""Where per-recording work runs: in this process, a process pool, or a Ray cluster.

Every executor yields results in task order, so outputs are byte-identical whatever the
executor and the number of jobs. At most ``2 * jobs`` tasks are in flight, so memory does
not grow with the cohort.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from trackverify.errors import ConfigError

EXECUTORS = ("local", "process", "ray")

#: The most jobs a run takes: each is a process (or a Ray worker). Above the hardware threads
#: of any one machine (the largest two-socket servers have 384-512); the process pool starts
#: all its workers at once (fork), so ``--jobs 1000000`` forked until the machine was full.
MAX_JOBS = 1000


def ordered_map(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int = 1,
                executor: str = "process") -> Iterator[Any]:
    """``map(fn, tasks)`` on the chosen executor, in order, with a bounded window."""
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor '{executor}'; choose from {list(EXECUTORS)}")
    if not 1 <= jobs <= MAX_JOBS:
        raise ConfigError(f"jobs must be between 1 and {MAX_JOBS}, got {jobs}")
    if executor == "ray":
        yield from _ray_map(fn, tasks, jobs)
    elif executor == "local" or jobs == 1:
        yield from map(fn, tasks)
    else:
        if hasattr(tasks, "__len__"):  # never more workers than tasks
            jobs = max(1, min(jobs, len(tasks)))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            yield from _windowed(lambda task: pool.submit(fn, task), lambda f: f.result(), tasks, jobs)


def _windowed(submit, collect, tasks: Iterable[Any], jobs: int) -> Iterator[Any]:
    pending: deque = deque()
    for task in tasks:
        pending.append(submit(task))
        if len(pending) >= 2 * jobs:
            yield collect(pending.popleft())
    while pending:
        yield collect(pending.popleft())


def _ray_map(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int) -> Iterator[Any]:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--executor ray needs the 'ray' extra: pip install 'trackverify[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    remote = ray.remote(fn)
    try:
        yield from _windowed(lambda task: remote.remote(task), ray.get, tasks, jobs)
    finally:
        if started_here:
            ray.shutdown()
