"""A7 statistics: per-cell agreement with the p-value tolerance (hand-computed)."""

from __future__ import annotations

import pytest

from trackverify.stages import synthetic as S


def _write(root, who, line, p_slow, p_fast):
    S.write_stats_csv(root / who / f"{line}.csv", S.stats_rows(p_slow, p_fast))


def test_cells_lines_and_verdict(tmp_path, run_stage):
    _write(tmp_path, "ref", "line_1", 0.2, 0.03)
    _write(tmp_path, "sub", "line_1", 0.2, 0.03)
    # p 0.0104 vs 0.0099: sig_slow_0.01 differs but 0.0104/0.0099 = 1.05 <= 1.1 -> correct
    _write(tmp_path, "ref", "line_2", 0.0099, 0.5)
    _write(tmp_path, "sub", "line_2", 0.0104, 0.5)
    # p 0.0004 vs 0.002: sig_fast_0.001 differs and the ratio is 5 -> wrong
    _write(tmp_path, "ref", "line_3", 0.5, 0.002)
    _write(tmp_path, "sub", "line_3", 0.5, 0.0004)
    res = run_stage("stats", tmp_path)
    assert res.per_experiment["line_2"]["line_ok"] is True
    assert res.per_experiment["line_3"]["cells"]["sig_fast_0.001"] is False
    assert res.score == pytest.approx(2 / 3)
    assert res.criteria["cells_correct"]["value"] == pytest.approx(17 / 18)
    assert res.verdict == "fail"
    assert run_stage("stats", tmp_path, delta_p=4.0).score == 1.0   # 5 <= 1 + 4


def test_nine_of_ten_is_partial_and_perfect_passes(tmp_path, run_stage):
    for k in range(10):
        _write(tmp_path, "ref", f"line_{k}", 0.04, 0.2)
        _write(tmp_path, "sub", f"line_{k}", 0.04, 0.2)
    res = run_stage("stats", tmp_path)
    assert res.score == 1.0 and res.verdict == "pass"
    _write(tmp_path, "sub", "line_9", 0.06, 0.2)     # ratio 1.5, sig_slow_0.05 differs
    res = run_stage("stats", tmp_path)
    assert res.score == pytest.approx(0.9) and res.verdict == "partial"


def test_non_positive_p_uses_only_the_boolean(tmp_path, run_stage):
    _write(tmp_path, "ref", "line_1", 0.0, 0.5)
    rows = S.stats_rows(0.0, 0.5)
    rows[4] = ("sig_slow_0.05", "False")             # disagrees; p = 0 cannot forgive it
    S.write_stats_csv(tmp_path / "sub" / "line_1.csv", rows)
    res = run_stage("stats", tmp_path)
    assert res.per_experiment["line_1"]["cells"]["sig_slow_0.05"] is False
    assert res.per_experiment["line_1"]["warnings"]


@pytest.mark.parametrize("content, reason", [
    (None, "file not found"),
    ("metric,value\nu_statistic_slow,1\n", "missing metric"),
    ("metric;value\n", "header"),
])
def test_broken_csv_fails_with_reason(tmp_path, run_stage, content, reason):
    _write(tmp_path, "ref", "line_1", 0.2, 0.2)
    (tmp_path / "sub").mkdir()
    if content is not None:
        (tmp_path / "sub" / "line_1.csv").write_text(content)
    res = run_stage("stats", tmp_path)
    assert res.verdict == "fail" and reason in res.problems[0]


def test_bad_boolean_names_row(tmp_path, run_stage):
    _write(tmp_path, "ref", "line_1", 0.2, 0.2)
    rows = S.stats_rows(0.2, 0.2)
    rows[6] = ("sig_slow_0.001", "maybe")
    S.write_stats_csv(tmp_path / "sub" / "line_1.csv", rows)
    res = run_stage("stats", tmp_path)
    assert "row 7" in res.problems[0] and "True/False" in res.problems[0]


def test_cell_correct_p_term_only_for_positive_p_values():
    """Significance differs, so only the p term can make the cell correct: it needs both p
    values positive and finite (p = 0 or p* = 0 has no ratio), and max(p/p*, p*/p) <= 1 +
    delta_p with equality allowed (0.02 / 0.01 = 2 = 1 + 1)."""
    from trackverify.stages.stats import cell_correct

    assert cell_correct(True, True, 0.0, 0.5, 0.1)            # same significance decides
    assert not cell_correct(True, False, 0.0, 0.5, 10.0)
    assert not cell_correct(True, False, 0.5, 0.0, 10.0)
    assert not cell_correct(True, False, float("nan"), 0.5, 10.0)
    assert cell_correct(True, False, 0.02, 0.01, 1.0)
    assert cell_correct(True, False, 0.01, 0.02, 1.0)
    assert not cell_correct(True, False, 0.02, 0.01, 0.999)
