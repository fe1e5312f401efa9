"""A7 statistics by hand: the CSV reader (values, its boundaries, every refusal with its
message) and the evaluation (lines in natural order, cells per alpha, warnings at p = alpha,
the partial threshold at, below and above 0.9, a missing submission file)."""

from __future__ import annotations

import math

import pytest

from trackverify.errors import InputError
from trackverify.stages.stats import ImpossibleValue, StatsConfig, evaluate, read_stats_csv

HEADER = "metric,value\n"


def csv_text(p_slow="0.2", p_fast="0.03", u_slow="500", u_fast="600", sig=None) -> str:
    """The 10 rows; ``sig`` the 6 booleans (slow 0.05, 0.01, 0.001, fast ...), by default
    the ones of p_slow 0.2 and p_fast 0.03 (False x 3; True, False, False)."""
    sig = sig or ("False", "False", "False", "True", "False", "False")
    names = [f"sig_{s}_{a}" for s in ("slow", "fast") for a in ("0.05", "0.01", "0.001")]
    rows = [("u_statistic_slow", u_slow), ("p_value_slow", p_slow),
            ("u_statistic_fast", u_fast), ("p_value_fast", p_fast), *zip(names, sig)]
    return HEADER + "".join(f"{m},{v}\n" for m, v in rows)


def write(folder, line, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{line}.csv").write_text(text, encoding="utf-8")


def test_read_stats_csv_by_hand(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(("\ufeff metric , value \n"
                      "u_statistic_slow, 12.5 \np_value_slow,1\nu_statistic_fast,\n"
                      "p_value_fast,0\nsig_slow_0.05,TRUE\nsig_slow_0.01, false\n"
                      "sig_slow_0.001,False\nsig_fast_0.05,true\nsig_fast_0.01,True\n"
                      "sig_fast_0.001,FALSE\n").encode("utf-8"))
    values = read_stats_csv(path)
    assert math.isnan(values.pop("u_statistic_fast"))  # empty: NaN
    assert values == {"u_statistic_slow": 12.5, "p_value_slow": 1.0, "p_value_fast": 0.0,
                      "sig_slow_0.05": True, "sig_slow_0.01": False, "sig_slow_0.001": False,
                      "sig_fast_0.05": True, "sig_fast_0.01": True, "sig_fast_0.001": False}
    assert all(type(values[k]) is bool for k in values if k.startswith("sig_"))


@pytest.mark.parametrize("p", ["0", "1", "0.0", "1.0", "-0.0", ""])
def test_p_values_at_the_ends_of_zero_one_are_accepted(tmp_path, p):
    write(tmp_path, "a", csv_text(p_slow=p))
    assert read_stats_csv(tmp_path / "a.csv")["p_value_slow"] == pytest.approx(
        float(p) if p else math.nan, nan_ok=True)


@pytest.mark.parametrize("u", ["0", "-0.0", "0.5"])
def test_u_statistics_from_zero_are_accepted(tmp_path, u):
    write(tmp_path, "a", csv_text(u_fast=u))
    assert read_stats_csv(tmp_path / "a.csv")["u_statistic_fast"] == float(u)


@pytest.mark.parametrize("field, value, message", [
    ("p_slow", "1.0000000000000002", "column 'value', row 2: p_value_slow = 1.0000000000000002 "
                                     "is outside [0, 1] (a p-value is a probability)"),
    ("p_fast", "-1e-300", "column 'value', row 4: p_value_fast = -1e-300 is outside [0, 1] "
                          "(a p-value is a probability)"),
    ("p_fast", "inf", "column 'value', row 4: p_value_fast = inf is outside [0, 1] (a p-value "
                      "is a probability)"),
    ("u_slow", "-1e-9", "column 'value', row 1: u_statistic_slow = -1e-9 is negative (a "
                        "Mann-Whitney U counts pairs)"),
])
def test_impossible_values_are_refused_with_row_and_column(tmp_path, field, value, message):
    write(tmp_path, "a", csv_text(**{field: value}))
    with pytest.raises(ImpossibleValue) as caught:
        read_stats_csv(tmp_path / "a.csv")
    assert str(caught.value) == f"{tmp_path / 'a.csv'}, {message}"


@pytest.mark.parametrize("ending", ["\n", "\n\n", "\n\n\n", "\r\n\r\n"])
def test_blank_lines_at_the_end_are_accepted(tmp_path, ending):
    # the 10 rows of csv_text(), then the file ends with blank lines
    write(tmp_path, "a", csv_text().rstrip("\n") + ending)
    assert read_stats_csv(tmp_path / "a.csv") == {
        "u_statistic_slow": 500.0, "p_value_slow": 0.2, "u_statistic_fast": 600.0,
        "p_value_fast": 0.03, "sig_slow_0.05": False, "sig_slow_0.01": False,
        "sig_slow_0.001": False, "sig_fast_0.05": True, "sig_fast_0.01": False,
        "sig_fast_0.001": False}


def test_a_blank_line_before_the_end_is_still_refused(tmp_path):
    lines = csv_text().splitlines(keepends=True)  # header, then data rows 1..10
    write(tmp_path, "a", "".join(lines[:4]) + "\n" + "".join(lines[4:]) + "\n")
    with pytest.raises(InputError) as caught:
        read_stats_csv(tmp_path / "a.csv")
    assert str(caught.value) == f"{tmp_path / 'a.csv'}, row 4: expected 2 fields"


@pytest.mark.parametrize("content, message", [
    (b"", ": the header must be 'metric,value'"),
    (b"\n\n", ": the header must be 'metric,value'"),
    (b"metric;value\n", ": the header must be 'metric,value'"),
    (b"value,metric\n", ": the header must be 'metric,value'"),
    (b"metric,value\nu_statistic_slow,1,2\n", ", row 1: expected 2 fields"),
    (b"metric,value\np_value_slow,0.5\np_value_fast,0.5\np_value_slow,0.4\n",
     ", row 3: metric 'p_value_slow' appears twice"),
    (b"metric,value\nsig_slow_0.05,yes\n", ", column 'value', row 1: 'yes' is not True/False"),
    (b"metric,value\nsig_slow_0.05,\n", ", column 'value', row 1: '' is not True/False"),
    (b"metric,value\np_value_slow,0.5\nu_statistic_fast,many\n",
     ", column 'value', row 2: 'many' is not a number"),
    # a quoted value keeps its carriage return as written (the file is read with newline="")
    (b'metric,value\nu_statistic_slow,"1\r2"\n',
     ", column 'value', row 1: '1\r2' is not a number"),
    (b"metric,value\np_value_slow,0.5\n",
     ": missing metric(s) ['u_statistic_slow', 'u_statistic_fast', 'p_value_fast', "
     "'sig_slow_0.05', 'sig_slow_0.01', 'sig_slow_0.001', 'sig_fast_0.05', 'sig_fast_0.01', "
     "'sig_fast_0.001']"),
])
def test_unreadable_files_are_refused_with_their_reason(tmp_path, content, message):
    """The message: the file, then the column and row where there are (1-based data rows)."""
    path = tmp_path / "a.csv"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_stats_csv(path)
    assert not isinstance(caught.value, ImpossibleValue)
    assert str(caught.value) == f"{path}{message}"


def test_a_file_that_is_not_utf8_or_absent_is_refused(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b"metric,value\np_value_slow,\xff\n")
    with pytest.raises(InputError, match=r"a\.csv: not a readable CSV file \('utf-8' codec "):
        read_stats_csv(path)
    with pytest.raises(InputError) as caught:
        read_stats_csv(tmp_path / "b.csv")
    assert str(caught.value) == f"{tmp_path / 'b.csv'}: file not found"
    with pytest.raises(InputError, match="file not found"):
        read_stats_csv(tmp_path)  # a folder


def test_lines_cells_and_warnings_by_hand(tmp_path):
    """Lines line_2 and line_10 (natural order: 2 before 10), alphas 0.05 and 0.01 only.

    line_2: p_slow 0.05 = alpha with sig True (p < alpha is False: a warning, and the cell
    disagrees with the reference's False; ratio 0.05/0.05 = 1 -> correct); p_fast 0.03 as
    the reference. line_10: p_fast 0.009 vs the reference's 0.03 (sig_fast_0.01 True vs
    False, ratio 3.33 > 1.1 -> wrong); no warning (True agrees with 0.009 < 0.01)."""
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    for line in ("line_2", "line_10"):
        write(ref, line, csv_text(p_slow="0.05"))
    write(sub, "line_2", csv_text(p_slow="0.05",
                                  sig=("True", "False", "False", "True", "False", "False")))
    write(sub, "line_10", csv_text(p_slow="0.05", p_fast="0.009",
                                   sig=("False", "False", "False", "True", "True", "False")))
    res = evaluate(sub, ref, None, StatsConfig(alphas=" 0.05, 0.01,"))
    assert list(res.per_experiment) == ["line_2", "line_10"]
    assert res.per_experiment["line_2"] == {
        "valid": True, "line_ok": True,
        "warnings": ["sig_slow_0.05 = True disagrees with p = 0.05"],
        "cells": {"sig_slow_0.05": True, "sig_slow_0.01": True, "sig_fast_0.05": True,
                  "sig_fast_0.01": True}}
    assert res.per_experiment["line_10"] == {
        "valid": True, "line_ok": False, "warnings": [],
        "cells": {"sig_slow_0.05": True, "sig_slow_0.01": True, "sig_fast_0.05": True,
                  "sig_fast_0.01": False}}
    assert res.score == 0.5 and res.verdict == "fail" and res.problems == []
    assert res.criteria == {"lines_correct": {"value": 0.5, "lines": 2},
                            "cells_correct": {"value": 7 / 8, "cells": 8}}
    assert res.config == {"delta_p": 0.10, "alphas": " 0.05, 0.01,", "partial_threshold": 0.9}
    assert res.stage == "stats"


def test_no_warning_without_a_finite_p(tmp_path):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    write(ref, "l", csv_text())
    write(sub, "l", csv_text(p_slow="", sig=("True", "True", "True", "True", "False", "False")))
    res = evaluate(sub, ref, None, StatsConfig())
    line = res.per_experiment["l"]
    assert line["warnings"] == []
    # the three slow cells disagree and have no p ratio: wrong
    assert [line["cells"][f"sig_slow_{a}"] for a in ("0.05", "0.01", "0.001")] == [False] * 3


@pytest.mark.parametrize("n_lines, n_ok, verdict", [
    (9, 8, "fail"),       # 8/9 = 0.889 < 0.9
    (10, 9, "partial"),   # 9/10 = 0.9, the threshold itself
    (11, 10, "partial"),  # 10/11 = 0.909
    (4, 4, "pass"),
])
def test_partial_threshold_at_and_either_side(tmp_path, n_lines, n_ok, verdict):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    wrong = csv_text(p_fast="0.3", sig=("False",) * 6)  # sig_fast_0.05 wrong, ratio 10
    for k in range(n_lines):
        write(ref, f"l{k}", csv_text())
        write(sub, f"l{k}", csv_text() if k < n_ok else wrong)
    res = evaluate(sub, ref, None, StatsConfig())
    assert res.score == n_ok / n_lines and res.verdict == verdict


def test_partial_threshold_is_the_configured_one(tmp_path):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    for k in range(2):
        write(ref, f"l{k}", csv_text())
    write(sub, "l0", csv_text())
    write(sub, "l1", csv_text(p_fast="0.3", sig=("False",) * 6))
    assert evaluate(sub, ref, None, StatsConfig(partial_threshold=0.5)).verdict == "partial"
    assert evaluate(sub, ref, None, StatsConfig(partial_threshold=0.51)).verdict == "fail"
    # delta_p reaches the cells: 0.3 / 0.03 = 10 = 1 + 9
    assert evaluate(sub, ref, None, StatsConfig(delta_p=9.0)).verdict == "pass"


def test_a_missing_submission_file_is_a_structural_failure(tmp_path):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    for line in ("a", "b"):
        write(ref, line, csv_text())
    write(sub, "b", csv_text())
    res = evaluate(sub, ref, None, StatsConfig())
    reason = f"{sub / 'a.csv'}: file not found"
    assert res.per_experiment["a"] == {"valid": False, "reason": reason, "line_ok": False}
    assert res.problems == [reason]
    assert res.score == 0.5 and res.verdict == "fail"
    assert res.criteria["cells_correct"] == {"value": 1.0, "cells": 6}


def test_a_missing_file_fails_the_run_even_when_the_share_would_be_partial(tmp_path):
    # 9 of 10 lines right is partial (the threshold test), but the tenth missing is a
    # structural failure: fail
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    for k in range(10):
        write(ref, f"l{k}", csv_text())
        if k:
            write(sub, f"l{k}", csv_text())
    res = evaluate(sub, ref, None, StatsConfig())
    assert res.score == 0.9 and res.verdict == "fail" and len(res.problems) == 1


def test_no_valid_line_leaves_the_share_of_cells_undefined(tmp_path):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    write(ref, "a", csv_text())
    sub.mkdir()
    res = evaluate(sub, ref, None, StatsConfig())
    assert res.criteria["cells_correct"] == {"value": None, "cells": 0}
    assert res.score == 0.0 and res.verdict == "fail"


def test_impossible_submission_value_and_bad_reference_raise(tmp_path):
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    with pytest.raises(InputError) as caught:
        evaluate(sub, ref, None, StatsConfig())
    assert str(caught.value) == f"{ref}: reference folder not found"
    ref.mkdir()
    (ref / "notes.txt").write_text("x")
    with pytest.raises(InputError) as caught:
        evaluate(sub, ref, None, StatsConfig())
    assert str(caught.value) == f"{ref}: no <line>.csv files in the reference folder"
    write(ref, "a", csv_text())
    write(sub, "a", csv_text(p_slow="2"))
    with pytest.raises(ImpossibleValue):
        evaluate(sub, ref, None, StatsConfig())
    write(sub, "a", csv_text())
    with pytest.raises(InputError) as caught:
        evaluate(sub, ref, None, StatsConfig(alphas="0.05,0.1"))
    assert str(caught.value) == (f"{ref / 'a.csv'}: metric 'sig_slow_0.1' is missing "
                                 "(alphas setting)")
    # present on one side only (an extra row the reader accepts): still missing
    extra = "sig_slow_0.1,False\nsig_fast_0.1,True\n"
    write(sub, "a", csv_text() + extra)
    with pytest.raises(InputError) as caught:
        evaluate(sub, ref, None, StatsConfig(alphas="0.05,0.1"))
    assert str(caught.value) == (f"{ref / 'a.csv'}: metric 'sig_slow_0.1' is missing "
                                 "(alphas setting)")
    write(sub, "a", csv_text())
    write(ref, "a", csv_text() + extra)
    with pytest.raises(InputError) as caught:
        evaluate(sub, ref, None, StatsConfig(alphas="0.05,0.1"))
    assert str(caught.value) == (f"{ref / 'a.csv'}: metric 'sig_slow_0.1' is missing "
                                 "(alphas setting)")
