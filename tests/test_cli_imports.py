"""The command line stays light: importing it, and every command's -h, pulls in none of the
heavy libraries (no timing here; benchmarks/bench_cli_help.py measures the time)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

HEAVY = ("scipy", "pandas", "pyarrow", "matplotlib")
PROBE = """
import sys
{body}
heavy = [m for m in {heavy!r} if m in sys.modules]
print("HEAVY:" + ",".join(heavy))
"""


def heavy_after(body: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
                         capture_output=True, text=True, check=True).stdout
    line = out.rsplit("HEAVY:", 1)[1].strip()
    return [m for m in line.split(",") if m]


def test_importing_the_cli_imports_no_heavy_module():
    assert heavy_after("import trackverify.cli.app") == []


def test_splitting_and_refusing_a_run_do_not_import_scikit_learn():
    # the commands that read partitions (split, a run refused before it scores) skip the
    # 0.9 s import; scikit-learn comes with the first AUROC
    probe = "import sys, trackverify.benchmark.partitions, trackverify.benchmark.certify, trackverify.benchmark.run\n" \
            "print('SKLEARN:' + str('sklearn' in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.rsplit("SKLEARN:", 1)[1].strip() == "False"


def commands() -> list[str]:
    from trackverify.cli.app import FAMILIES, cli

    return sorted({*cli.commands, *FAMILIES})


@pytest.mark.parametrize("command", [None, *commands()])
def test_help_imports_no_heavy_module(command):
    args = ["-h"] if command is None else [command, "-h"]
    body = ("from trackverify.cli.app import cli\n"
            "try:\n"
            f"    cli.main(args={args!r}, prog_name='trackverify', standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass")
    assert heavy_after(body) == []


def test_lazy_command_summaries_match_the_commands():
    from trackverify.cli.app import FAMILIES

    for name, (module, attribute, summary) in FAMILIES.items():
        command = getattr(importlib.import_module(module), attribute)
        assert command.get_short_help_str(limit=200) == summary, name


def test_evidence_levels_are_the_motion_levels():
    from trackverify.cli.evidence import LEVELS
    from trackverify.synth.motion import MOTION_LEVELS

    assert LEVELS == tuple(MOTION_LEVELS)


def test_evidence_scores_are_the_verifiers_scores():
    from trackverify.cli.evidence import SCORES
    from trackverify.verifiers.registered_distance import SCORES as VERIFIER_SCORES

    assert SCORES == VERIFIER_SCORES


def test_evidence_draws_are_bounded_as_a_run_s_repeats():
    from trackverify.benchmark.config import MAX_REPEATS
    from trackverify.cli.evidence import MAX_DRAWS

    assert MAX_DRAWS == MAX_REPEATS == 50
