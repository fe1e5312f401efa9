"""The suite's run order (tests/schedule.py), on made-up test ids."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests import schedule


def _items(*ids):
    return [SimpleNamespace(nodeid=i) for i in ids]


def _ids(items):
    return [i.nodeid for i in items]


def test_shares_are_the_sizes_worksteal_hands_out():
    assert schedule.share_sizes(11, 2) == [5, 6]
    assert schedule.share_sizes(10, 3) == [3, 3, 4]
    assert schedule.share_sizes(7, 1) == [7]


def test_slow_groups_head_the_least_loaded_share_and_modules_stay_whole(monkeypatch):
    monkeypatch.setattr(schedule, "SLOW", {"m/a.py": 10, "m/b.py::t[x]": 7, "m/c.py": 5})
    items = _items("m/z.py::1", "m/c.py::1", "m/a.py::1", "m/z.py::2", "m/b.py::t[y]",
                   "m/a.py::2", "m/b.py::t[x]", "m/z.py::3", "m/c.py::2", "m/z.py::4")
    # a (10) heads share 0; b[x] (7) goes to share 1 (0 < 10), then c (5) too (7 < 10).
    # Share 0 is 5 long: a's two tests, then the first three others; share 1: b[x], c's two
    # tests, then the remaining others.
    assert _ids(schedule.order(items, 2)) == [
        "m/a.py::1", "m/a.py::2", "m/z.py::1", "m/z.py::2", "m/b.py::t[y]",
        "m/b.py::t[x]", "m/c.py::1", "m/c.py::2", "m/z.py::3", "m/z.py::4"]


def test_one_worker_runs_the_slow_groups_first_longest_first(monkeypatch):
    monkeypatch.setattr(schedule, "SLOW", {"m/a.py": 1, "m/b.py": 2})
    items = _items("m/a.py::1", "m/c.py::1", "m/b.py::1", "m/c.py::2")
    assert _ids(schedule.order(items, 1)) == ["m/b.py::1", "m/a.py::1", "m/c.py::1", "m/c.py::2"]


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_every_test_is_kept_once(k):
    items = _items(*(f"tests/test_run.py::t{i}" for i in range(5)),
                   *(f"tests/x.py::t{i}" for i in range(40)))
    assert sorted(_ids(schedule.order(items, k))) == sorted(_ids(items))
