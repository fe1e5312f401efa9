"""The executors' stated bound on jobs (src/trackverify/execute.py, docs/reference/robustness.md)."""

from __future__ import annotations

import pytest

from trackverify.errors import ConfigError
from trackverify.execute import MAX_JOBS, ordered_map


@pytest.mark.parametrize("jobs", [0, MAX_JOBS + 1, 10**6])
def test_jobs_outside_1_to_max_are_refused_before_any_worker_starts(jobs):
    # no task, so nothing would be forked even without the bound: the refusal is the check
    with pytest.raises(ConfigError, match=f"jobs must be between 1 and {MAX_JOBS}"):
        list(ordered_map(abs, [], jobs, "process"))


def test_results_keep_task_order_with_more_jobs_than_tasks():
    # 3 tasks, 4 jobs asked: 3 workers at most; results in task order
    assert list(ordered_map(abs, [-3, -1, -2], 4, "process")) == [3, 1, 2]
