"""Numbers printed for people are rounded to 4 significant digits; JSON keeps every digit
(issue 18, item 7). Expected strings are written by hand."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.conftest import run_cli
from trackverify.report.numbers import SIGNIFICANT_DIGITS, fmt, fmt_each

DECIMAL = re.compile(r"\d+\.\d+")


def too_long(text: str) -> list[str]:
    """Decimal numbers in ``text`` with more than 4 significant digits (0.4000000000000001)."""
    return [n for n in DECIMAL.findall(text) if len(n.replace(".", "").lstrip("0")) > 4]


def test_too_long_finds_what_it_should():
    found = too_long("AUROC 0.4000000000000001, risk 0.000326, 12.35, v1.2")
    assert found == ["0.4000000000000001"]


@pytest.mark.parametrize("value, text", [
    (0.4000000000000001, "0.4"), (0.1 + 0.2, "0.3"), (2 / 3, "0.6667"), (1 / 3, "0.3333"),
    (0.5, "0.5"), (1.0, "1"), (0.0, "0"), (-0.0, "0"), (12345.678, "12350"),
    (123456.0, "123500"), (999999.9, "1e+06"), (1e6, "1e+06"), (0.00012345, "0.0001234"),
    (0.000012345, "1.234e-05"), (9.99996, "10"), (-1234.56, "-1235"), (1e-300, "1e-300"),
    (float("inf"), "inf"), (float("-inf"), "-inf"), (np.float32(0.1), "0.1"),
    (np.float64(0.98765), "0.9877"), (7, "7"), (np.int64(123456789), "123456789"),
    (True, "True"), (np.bool_(False), "False"), ("text", "text"),
])
def test_fmt_hand_chosen_values(value, text):
    assert fmt(value) == text


def test_undefined_values_use_the_callers_word():
    assert SIGNIFICANT_DIGITS == 4
    assert fmt(None) == "null" and fmt(float("nan")) == "null"
    assert fmt(None, undefined="-") == "-" and fmt(np.nan, undefined="n/a") == "n/a"
    assert fmt(2 / 3, digits=2) == "0.67"


def test_run_summary_and_report_are_rounded_and_json_is_not(tmp_path):
    result = run_cli("run", "--frames", 60, "--start", 10, "--recovery-end", 40,
                     "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert too_long(result.stdout) == [], result.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    auroc = results["anatomical_verification"]["pooled"]["all_conditions"]["auroc"]
    star = results["verifier_comparison"]["fixed_distance"]["populations"]["six_corruptions"][
        "auroc_abstain_as_error"]
    assert f"AUROC* {fmt(star)};" in result.stdout
    assert repr(star) in (tmp_path / "out" / "results.json").read_text()  # every digit
    report = (tmp_path / "out" / "report.html").read_text()
    assert too_long(re.sub(r"<svg.*?</svg>", "", report, flags=re.S)) == []
    assert f"<td>{fmt(auroc)}</td>" in report


def test_evaluate_table_is_rounded(tmp_path):
    import pandas as pd

    # one track of 3 frames; the prediction follows it for 2 of them, then another id:
    # correct observation rate 2/3 and IDF1 2/3 in the table as 0.6667
    ref = pd.DataFrame({"recording": "r", "frame": [0, 1, 2], "track": 1, "detection": [0, 1, 2],
                        "x_um": 0.0, "y_um": 0.0})
    pred = pd.DataFrame({"recording": "r", "frame": [0, 1, 2], "pred_id": [5, 5, 6],
                         "detection": [0, 1, 2]})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    result = run_cli("evaluate", "--reference", tmp_path / "ref.csv", "--predictions",
                     tmp_path / "pred.csv", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "0.6667" in result.stdout and "0.66666" not in result.stdout
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert 2 / 3 in [v for v in saved["tracking_gt"]["r"].values() if isinstance(v, float)]


def test_andi_summary_is_rounded_and_scores_txt_keeps_every_digit(tmp_path):
    from trackverify.andi.codalab import Report, _markdown

    rep = Report()
    rep.scores = [("tr1.ta1.alpha", 0.4000000000000001), ("tr1.ta2.D", 2 / 3)]
    assert rep.scores_text() == "tr1.ta1.alpha: 0.4000000000000001\ntr1.ta2.D: 0.6666666666666666\n"
    assert rep.scores_text(rounded=True) == "tr1.ta1.alpha: 0.4\ntr1.ta2.D: 0.6667\n"
    summary = _markdown(rep, corrected=False)
    assert "| tr1.ta1.alpha | 0.4 |" in summary and "| tr1.ta2.D | 0.6667 |" in summary


def test_stage_table_is_rounded(capsys):
    from types import SimpleNamespace

    from trackverify.cli.stages import _print_table

    result = SimpleNamespace(stage="walking", score=0.4000000000000001, verdict="fail",
                             criteria={"f1": {"mean_capped_ratio": 2 / 3,
                                              "experiments_within_tolerance": 1,
                                              "experiments": 2}}, problems=[])
    _print_table(result)
    out = capsys.readouterr().out
    assert "score 0.4 - fail" in out and "0.6667" in out and "1/2" in out
    assert too_long(out) == []


def test_fmt_each_formats_every_value_as_fmt_does():
    floats = fmt_each(np.array([2 / 3, 12345.678, float("nan"), -0.0, 2 / 3, 0.000012345]))
    assert floats.dtype == object
    assert floats.tolist() == ["0.6667", "12350", "null", "0", "0.6667", "1.234e-05"]
    assert fmt_each(np.array([3, 4])).tolist() == ["3", "4"]
    assert fmt_each(np.array([None, 1.5], dtype=object)).tolist() == ["null", "1.5"]
    assert fmt_each(np.zeros(0)).tolist() == []
