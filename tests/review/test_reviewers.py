"""Who decided, how, and whether two reviewers agree: the record of each decision, another
reviewer's sheet, Cohen's kappa by hand, triage decisions said by `audit estimate`, and the
methods paragraph."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import run_cli
from tests.review.conftest import ROOT
from trackverify.errors import InputError
from trackverify.review.record import cohen_kappa
from trackverify.review.sheet import read_sheet, second_sheet, set_decision

#: Ten rows decided by two reviewers (the second left the last one undecided). Over the 9
#: rows both decided: (c, c) x 4, (c, w), (w, w) x 2, (w, c), (u, u): 7 agree, p_o = 7/9;
#: each reviewer's marginals are c 5, w 3, u 1, so p_e = (25 + 9 + 1) / 81 = 35/81 and
#: kappa = (63/81 - 35/81) / (46/81) = 28/46 = 14/23.
FIRST = ["correct"] * 5 + ["wrong"] * 3 + ["unsure", "correct"]
SECOND = ["correct"] * 3 + ["wrong", "correct", "wrong", "wrong", "correct", "unsure", ""]


def test_cohen_kappa_by_hand():
    first = ["correct", "correct", "correct", "correct", "correct", "wrong", "wrong", "wrong", "unsure", "correct"]
    second = ["correct", "correct", "correct", "wrong", "correct", "wrong", "wrong", "correct", "unsure", ""]
    assert (first, second) == (FIRST, SECOND)
    got = cohen_kappa(first, second)
    assert got["rows"] == 9 and got["observed"] == pytest.approx(7 / 9)
    assert got["chance"] == pytest.approx(35 / 81) and got["kappa"] == pytest.approx(14 / 23)
    assert got["table"]["correct"] == {"correct": 4, "wrong": 1, "unsure": 0}
    assert got["table"]["wrong"] == {"correct": 1, "wrong": 2, "unsure": 0}
    # no row decided by both, or one same decision everywhere: undefined, never 0
    assert cohen_kappa(["correct", ""], ["", "wrong"])["kappa"] is None
    assert cohen_kappa(["wrong"] * 3, ["wrong"] * 3) == {
        "rows": 3, "observed": 1.0, "chance": 1.0, "kappa": None,
        "table": {"correct": {"correct": 0, "wrong": 0, "unsure": 0},
                  "wrong": {"correct": 0, "wrong": 3, "unsure": 0},
                  "unsure": {"correct": 0, "wrong": 0, "unsure": 0}}}
    # opposite on every row: p_o = 0, p_e = 1/2, kappa = -1
    assert cohen_kappa(["correct", "wrong"], ["wrong", "correct"])["kappa"] == pytest.approx(-1.0)


@pytest.fixture()
def sampled(audit_dir):
    from trackverify.review.design import draw_sample

    for name in ("review.csv", "review-bob.csv", "estimate.json"):
        (audit_dir / name).unlink(missing_ok=True)
    draw_sample(audit_dir, 30, seed=3)
    return audit_dir


def test_a_second_reviewer_sheet_and_the_agreement_in_estimate_json(sampled):
    path = second_sheet(sampled, "bob")
    assert path.name == "review-bob.csv"
    first, other = read_sheet(sampled / "review.csv"), read_sheet(path)
    assert other.sample() == first.sample() and set(other.decisions) == {""}
    for index, (a, b) in enumerate(zip(FIRST, SECOND)):
        set_decision(sampled / "review.csv", index, a, {"reviewer": "ann", "mode": "blind",
                                                        "shown": "images", "seconds": "4.0"})
        set_decision(path, index, b, {"reviewer": "bob", "mode": "triage" if index < 2 else "blind",
                                      "shown": "images"})
    # the first reviewer's last two decisions were made in triage mode
    for index in (8, 9):
        set_decision(sampled / "review.csv", index, FIRST[index], {"reviewer": "ann", "mode": "triage",
                                                                   "shown": "images", "seconds": "2.0"})
    assert second_sheet(sampled, "bob") == path and read_sheet(path).decisions[:10] == SECOND  # kept
    done = run_cli("audit", "estimate", sampled)
    assert done.returncode == 0, done.stderr
    assert "2 of 10 decisions were made in triage mode (the page showed the audit's verdicts): " \
           "the review is not blind" in done.stdout
    assert "agreement of review.csv and review-bob.csv: Cohen's kappa 0.61 over the 9 rows both decided" in done.stdout
    result = json.loads((sampled / "estimate.json").read_text())
    assert result["review"] == {"decided": 10, "mode": {"blind": 8, "triage": 2, "not recorded": 0},
                                "shown": {"images": 10, "positions": 0, "not recorded": 0},
                                "reviewers": ["ann"], "seconds": {"recorded": 10, "total": 36.0, "median": 4.0}}
    [pair] = result["agreement"]
    assert pair["sheets"] == ["review.csv", "review-bob.csv"] and pair["reviewers"] == [["ann"], ["bob"]]
    assert pair["kappa"] == pytest.approx(14 / 23) and pair["rows"] == 9
    methods = result["methods"]
    for said in ("partly blind (2 of 10 decisions made with the audit's verdicts shown)",
                 "on the raw image volumes", "by ann and stopped after 10 of 30 rows",
                 "A second reviewer (bob) decided 9 of the same rows independently: Cohen's kappa 0.61",
                 "anytime-valid confidence sequence", "seed 3"):
        assert said in methods, said


def test_another_reviewers_sheet_of_other_rows_is_refused(sampled):
    path = second_sheet(sampled, "bob")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([lines[0], lines[2], lines[1], *lines[3:]]))
    done = run_cli("audit", "estimate", sampled)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"trackverify: error: {path}, row 1: does not hold review.csv's rows "
                                   "in its order (another reviewer's sheet is made by `trackverify "
                                   "review --second-reviewer`)")


def test_a_reviewer_name_must_be_plain(sampled):
    for name in ("", "../x", "a,b", "a b", "é", "x" * 65):
        with pytest.raises(InputError, match="letters, digits"):
            second_sheet(sampled, name)
    done = run_cli("review", sampled, "--reviewer", "../../etc")
    assert done.returncode == 2 and "reviewer '../../etc': letters, digits" in done.stderr
    assert not list(sampled.parent.glob("*etc*"))


def test_two_reviewers_serve_their_own_sheets_at_once(sampled, launcher):
    first = launcher.start(sampled, settings={"reviewer": "ann"})
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    second = subprocess.Popen([sys.executable, "-m", "trackverify", "review", str(sampled),
                               "--second-reviewer", "--reviewer", "bob", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = second.stdout.readline()
        assert line.startswith("review page: http://127.0.0.1:"), second.stderr.read()
        url = line.split()[2]
        assert url != first.url and (sampled / ".review-bob.lock").exists()
        from tests.review.test_server import post

        assert post(url.split("/?")[0], url.split("token=")[1], 0, "wrong")[0] == 200
        assert post(first.url.split("/?")[0], first.token, 0, "correct")[0] == 200
    finally:
        second.terminate()
        second.wait(timeout=30)
        first.kill()
    assert read_sheet(sampled / "review-bob.csv").rows[0]["reviewer"] == "bob"
    assert read_sheet(sampled / "review-bob.csv").decisions[0] == "wrong"
    assert read_sheet(sampled / "review.csv").rows[0]["reviewer"] == "ann"
    assert read_sheet(sampled / "review.csv").decisions[0] == "correct"


def test_the_guide_quotes_the_methods_paragraph_estimate_json_writes():
    """docs/guide/error-rate.md's paragraph, its placeholders filled in, is what
    :func:`trackverify.review.record.methods` writes for the same review."""
    import re

    from trackverify.review.record import methods

    block = lambda **k: {"estimate": None, "low": None, "high": None, "N": 0, "target_met": None, **k}
    result = {"trackverify": "9.9.9", "n_decided": 150, "n_rows": 200, "complete": False, "target": 0.03,
              "interval": "anytime-valid confidence sequence (...)",
              "review": {"decided": 150, "mode": {"blind": 150, "triage": 0, "not recorded": 0},
                         "shown": {"images": 150, "positions": 0, "not recorded": 0}, "reviewers": ["ann"]},
              "agreement": [{"sheets": ["review.csv", "review-bob.csv"], "reviewers": [["ann"], ["bob"]],
                             "rows": 40, "kappa": 0.8125, "observed": 0.95}],
              "all": block(estimate=0.071, low=0.05, high=0.093, N=39220, target_met=True),
              "certified": block(upper_one_sided=0.021)}
    design = {"seed": 7, "allocation": {"planning_rate": {"certified": 0.05, "flagged": 0.5}, "floor": 10}}
    guide = (ROOT / "docs" / "guide" / "error-rate.md").read_text()
    quoted = " ".join(line[2:] for line in guide.split("## 4.")[1].splitlines() if line.startswith("> "))
    for placeholder, value in (("version X", "version 9.9.9"), ("K of", "150 of"), ("R of", "40 of"),
                               ("kappa 0.xx", "kappa 0.81"), ("agreement A %", "agreement 95.0 %"),
                               ("in E %", "in 7.1 %"), ("the N audited", "the 39220 audited"),
                               ("L % to H %", "5.0 % to 9.3 %"), ("most U %", "most 2.1 %")):
        assert placeholder in quoted, placeholder
        quoted = quoted.replace(placeholder, value)
    assert methods(result, design) == re.sub(r"\s+", " ", quoted)
