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


def test_the_audit_imports_what_it_uses():
    """An audit imports neither the development specimen (nor its scipy.signal), the
    benchmark, scipy.stats, scikit-learn nor matplotlib, and neither does writing its outputs: the
    report's figures are SVG written directly."""
    probe = ("import sys, pandas as pd, trackverify\n"
             "grid = [(x, y) for x in range(0, 40, 8) for y in range(0, 40, 8)]\n"
             "swap = {0: 1, 1: 0}  # ids 0 and 1 swapped from frame 3: flagged rows, events\n"
             "rows = [(t, swap.get(i, i) if t >= 3 else i, x + 0.2 * t, y)\n"
             "        for t in range(6) for i, (x, y) in enumerate(grid)]\n"
             "tracks = pd.DataFrame(rows, columns=['frame', 'pred_id', 'x_um', 'y_um'])\n"
             "result = trackverify.audit(tracks)\n"
             "assert result.summary['counts']['flagged'] > 0\n"
             "def loaded():\n"
             "    return sorted({m.split('.')[0] if not m.startswith('trackverify') else\n"
             "                   '.'.join(m.split('.')[:2]) for m in sys.modules\n"
             "                   if m.startswith(('trackverify.synth', 'trackverify.benchmark',\n"
             "                                    'scipy.signal', 'scipy.stats', 'sklearn', 'matplotlib'))})\n"
             "print('BEFORE:' + ','.join(loaded()))\n"
             "from trackverify.audit.write import write_outputs\n"
             "import tempfile, pathlib\n"
             "write_outputs(result, pathlib.Path(tempfile.mkdtemp()) / 'out')\n"
             "print('AFTER:' + ','.join(loaded()))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    before = out.split("BEFORE:", 1)[1].split("\n", 1)[0]
    after = out.split("AFTER:", 1)[1].split("\n", 1)[0]
    assert before == "" and after == ""
