"""The order the suite runs in: the longest modules and tests first, spread over the xdist
workers' first shares, so that the run ends on short tests that an idle worker can take.

pytest-xdist's ``worksteal`` gives each of the k workers a contiguous share of the collected
tests (the first ``n // k``, the next, ...); a worker that runs out takes the last half of the
pending tests of the busiest one. A long test met late leaves one worker busy alone at the
end; met first, it runs while the other worker goes through short tests. :func:`order` puts
the groups of :data:`SLOW` (a module, kept whole so its module-scoped fixtures are built once,
or one test) at the head of the share with the least known work so far (longest group first,
the lowest share on a tie) and fills each share up to its size with the other tests in their
collected order. The order depends only on the collected ids and k, so every worker collects
the same list.
"""

from __future__ import annotations

#: Seconds a module or a test took (the ``--durations=80`` entries, setup and call summed by
#: module, of ``CI=true pytest -q -p no:cacheprovider -n 2 --dist worksteal`` on the 2-core
#: development machine, 5 December 2026, 21:41; the guides are listed by example, the rest
#: by module). Only the order matters: a missing or renamed entry makes a test run in its
#: collected place.
SLOW: dict[str, float] = {
    "tests/test_field.py": 120,  # added 7 December 2026: its nested run, measured alone
    "tests/test_cohort.py": 86,
    "tests/graph/test_ctc_parity.py": 66,
    "tests/test_run.py": 60,
    "tests/test_safety.py": 31,
    "tests/test_guides.py::test_every_example_of_the_guide_runs[scale-out.md]": 26,
    "tests/certify/test_certify_run.py": 24,
    "tests/graph/test_graph_parity.py": 22,
    "tests/audit/test_audit.py": 21,
    "tests/test_detections_gaps_repeats.py": 21,
    "tests/audit/test_events.py": 14,
    "tests/test_guides.py::test_every_example_of_the_guide_runs[audit.md]": 13,
    "tests/audit/test_audit_input.py": 13,
    "tests/review/test_browser.py": 12,
    "tests/test_guides.py::test_every_example_of_the_guide_runs[error-rate.md]": 11,
    "tests/andi/test_parity.py": 11,
    "tests/audit/test_error_rate_sequence.py": 20,
    "tests/audit/test_error_rate.py": 10,
    "tests/test_guides.py::test_every_example_of_the_guide_runs[calibrate.md]": 10,
    "tests/test_guides.py::test_every_example_of_the_guide_runs[README.md]": 10,
    "tests/test_docs_site.py": 18,  # added 7 December 2026: the site's build and 21 --help runs, measured alone
    "tests/test_evidence_window.py": 8,
    "tests/test_ids.py": 8,
    "tests/test_timeline.py": 7,
    "tests/conversion/test_checks_cli.py": 7,
    "tests/test_registered_distance.py": 7,
}


def _group(nodeid: str) -> str | None:
    """The :data:`SLOW` entry ``nodeid`` belongs to: the test itself, else its module."""
    if nodeid in SLOW:
        return nodeid
    module = nodeid.split("::", 1)[0]
    return module if module in SLOW else None


def share_sizes(n: int, k: int) -> list[int]:
    """The sizes of the k first shares of n tests, as ``worksteal`` hands them out."""
    sizes = []
    for i in range(k):
        sizes.append(n // (k - i))
        n -= sizes[-1]
    return sizes


def order(items: list, k: int) -> list:
    """``items`` (each with a ``nodeid``) in run order for ``k`` workers (see the module)."""
    groups: dict[str, list] = {}
    rest = []
    for item in items:
        key = _group(item.nodeid)
        (groups.setdefault(key, []) if key else rest).append(item)
    heads: list[list] = [[] for _ in range(k)]
    load = [0.0] * k
    for key in sorted(groups, key=lambda g: (-SLOW[g], g)):
        share = load.index(min(load))
        heads[share] += groups[key]
        load[share] += SLOW[key]
    out, start = [], 0
    for share, size in enumerate(share_sizes(len(items), k)):
        fill = len(rest) - start if share == k - 1 else min(max(0, size - len(heads[share])),
                                                            len(rest) - start)
        out += heads[share] + rest[start:start + fill]
        start += fill
    return out
