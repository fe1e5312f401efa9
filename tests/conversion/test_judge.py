"""Judge agreement (EVALUATORS B9): the seed's Table 2 and Table S7 reproduced from their counts."""

import json

import numpy as np
import pandas as pd
import pytest

from trackverify.cli.app import main
from trackverify.conversion import judge_agreement
from trackverify.conversion.judge import agreement_table, binarise, confusion_counts
from trackverify.errors import InputError

# Table 2 of the seed: TP, FP, FN, TN -> Bal. Acc., d', Recall, Prec., F1
TABLE_2 = [
    ((38, 87, 12, 367), (0.784, 1.559, 0.760, 0.304, 0.434)),   # supervised, Claude
    ((42, 199, 8, 255), (0.701, 1.122, 0.840, 0.174, 0.289)),   # supervised, Codex
    ((15, 41, 35, 419), (0.605, 0.827, 0.300, 0.268, 0.283)),   # unsupervised, Claude
    ((23, 89, 27, 371), (0.633, 0.764, 0.460, 0.205, 0.284)),   # unsupervised, Codex
]
# Table S7 of the seed (judge x target): TP, FP, FN, TN -> Bal. Acc., d'
TABLE_S7 = [
    ((25, 36, 4, 187), (0.850, 2.019)), ((13, 51, 8, 180), (0.699, 1.054)),
    ((29, 102, 0, 121), (0.771, 2.235)), ((13, 97, 8, 134), (0.600, 0.490)),
    ((9, 26, 27, 193), (0.566, 0.519)), ((6, 15, 8, 226), (0.683, 1.354)),
    ((15, 50, 21, 169), (0.594, 0.536)), ((8, 39, 6, 202), (0.705, 1.149)),
]
KEYS = ("balanced_accuracy", "d_prime", "recall", "precision", "f1")


@pytest.mark.parametrize("counts, expected", TABLE_2)
def test_table_2_rows(counts, expected):
    got = judge_agreement(*counts)
    assert tuple(round(got[k], 3) for k in KEYS) == expected


@pytest.mark.parametrize("counts, expected", TABLE_S7)
def test_table_s7_rows(counts, expected):
    got = judge_agreement(*counts)
    assert (round(got["balanced_accuracy"], 3), round(got["d_prime"], 3)) == expected


def test_uncorrected_d_prime_would_be_infinite_where_fn_is_zero():
    # Table S7 row 3 has FN = 0: only the log-linear correction gives a finite d'.
    assert np.isfinite(judge_agreement(29, 102, 0, 121)["d_prime"])


def test_undefined_ratios_are_none():
    got = judge_agreement(0, 0, 0, 10)
    assert got["recall"] is None and got["precision"] is None and got["f1"] is None
    assert got["balanced_accuracy"] is None
    # Phi^-1(0.5) - Phi^-1(0.5/11); Phi(-1.6906) = 0.04545 from a normal table
    assert got["d_prime"] == pytest.approx(1.6906, abs=2e-4)


def test_negative_counts_refused():
    with pytest.raises(ValueError):
        judge_agreement(-1, 0, 0, 0)


def test_binarise_and_counts():
    judge = binarise(["Incorrect", "ok", "concerning", "MATCH", "better"])
    manual = binarise(["concerning", "concerning", "ok", "ok", "better"])
    assert judge.tolist() == [True, False, True, False, False]
    assert confusion_counts(judge, manual) == {"tp": 1, "fp": 1, "fn": 1, "tn": 2}


def test_unknown_rating_names_row():
    with pytest.raises(InputError, match="row 2"):
        binarise(["ok", "great"], source="r.csv", column="judge_rating")


def _ratings_frame():
    # 2 judges; judge A: TP 2, FP 1, FN 1, TN 2; judge B: TP 1, FP 0, FN 0, TN 1.
    rows = [("A", "incorrect", "concerning"), ("A", "concerning", "incorrect"),
            ("A", "concerning", "ok"), ("A", "ok", "incorrect"), ("A", "ok", "match"),
            ("A", "better", "better"), ("B", "incorrect", "incorrect"), ("B", "ok", "ok")]
    return pd.DataFrame(rows, columns=["judge", "judge_rating", "manual_rating"])


def test_agreement_table_by_group():
    rows = agreement_table(_ratings_frame(), by=("judge",))
    assert [(r["judge"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("A", 2, 1, 1, 2), ("B", 1, 0, 0, 1)]
    assert rows[0]["balanced_accuracy"] == pytest.approx(0.5 * (2 / 3 + 2 / 3))


def test_cli_judge_agreement(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    _ratings_frame().to_csv(path, index=False)
    out = tmp_path / "agreement.json"
    with pytest.raises(SystemExit) as exc:
        main(["conversion", "judge-agreement", str(path), "--out", str(out)])
    assert exc.value.code == 0
    rows = json.loads(out.read_text())
    assert (rows[0]["tp"], rows[0]["fp"], rows[0]["fn"], rows[0]["tn"]) == (3, 1, 1, 3)
    assert "balanced_accuracy" in capsys.readouterr().out


def test_cli_judge_agreement_missing_column(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    _ratings_frame().drop(columns="manual_rating").to_csv(path, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["conversion", "judge-agreement", str(path)])
    assert exc.value.code == 2
    assert "manual_rating" in capsys.readouterr().err


@pytest.mark.parametrize("counts", [(5, 3, 2, 10), (1, 0, 4, 7), (12, 30, 1, 2)])
def test_against_sklearn(counts):
    from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

    tp, fp, fn, tn = counts
    truth = np.array([1] * tp + [0] * fp + [1] * fn + [0] * tn)
    pred = np.array([1] * tp + [1] * fp + [0] * fn + [0] * tn)
    got = judge_agreement(*counts)
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, pred))
    assert got["recall"] == pytest.approx(recall_score(truth, pred))
    assert got["precision"] == pytest.approx(precision_score(truth, pred))
    assert got["f1"] == pytest.approx(f1_score(truth, pred))


def test_grade_spread():
    from trackverify.conversion.judge import grade_spread

    table = pd.DataFrame({"agent": ["A"] * 3 + ["B"] * 3,
                          "rating": ["match", "incorrect", "ok", "ok", "OK", "ok"]})
    spread = grade_spread(table, "rating", ("agent",))
    assert spread.to_dict("records") == [{"agent": "A", "spread": 3}, {"agent": "B", "spread": 0}]


def test_negative_counts_message():
    with pytest.raises(ValueError, match=r"^confusion counts must be >= 0, got \[1, -2, 0, 0\]$"):
        judge_agreement(1, -2, 0, 0)


def test_binarise_message_names_the_default_source_and_every_rating():
    with pytest.raises(InputError) as exc:
        binarise(["ok", "Great "])
    assert str(exc.value) == ("ratings, row 2: 'great' is not a rating "
                              "(incorrect, concerning, ok, match, better)")


def test_confusion_counts_of_0_1_labels():
    # judge 1 0 0 1, manual 1 0 1 0: TP 1 (row 1), TN 1 (row 2), FN 1 (row 3), FP 1 (row 4)
    assert confusion_counts([1, 0, 0, 1], [1, 0, 1, 0]) == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    assert confusion_counts([0, 0], [0, 0]) == {"tp": 0, "fp": 0, "fn": 0, "tn": 2}


def test_agreement_table_errors_name_file_column_and_first_row():
    table = _ratings_frame()
    with pytest.raises(InputError) as exc:
        agreement_table(table.drop(columns="judge"), by=("judge",), source="r.csv")
    assert str(exc.value) == "r.csv: missing column 'judge' (columns: judge_rating, manual_rating)"
    with pytest.raises(InputError) as exc:
        agreement_table(table.drop(columns="judge"), by=("judge",))
    assert str(exc.value).startswith("ratings: missing column 'judge'")  # the default source
    missing = table.copy()
    missing.loc[[2, 5], "manual_rating"] = None
    with pytest.raises(InputError) as exc:
        agreement_table(missing, source="r.csv")
    assert str(exc.value) == "r.csv, column 'manual_rating', row 3: missing rating"
    for column in ("judge_rating", "manual_rating"):
        bad = table.copy()
        bad.loc[4, column] = "fine"
        with pytest.raises(InputError) as exc:
            agreement_table(bad, source="r.csv")
        assert str(exc.value).startswith(f"r.csv, column '{column}', row 5: 'fine' is not")


def test_agreement_table_groups_in_sorted_order_with_their_size():
    """Groups come out sorted by their key whatever the row order; a column named
    'index' in the ratings (as a saved DataFrame has) is just another column."""
    table = _ratings_frame().iloc[::-1].set_index(np.arange(10, 18))
    table.insert(0, "index", range(8))
    rows = agreement_table(table, by=("judge",))
    assert [(r["judge"], r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("A", 6, 2, 1, 1, 2), ("B", 2, 1, 0, 0, 1)]
    assert agreement_table(table)[0]["n"] == 8


def test_grade_spread_errors_and_group_order():
    from trackverify.conversion.judge import grade_spread

    table = pd.DataFrame({"agent": ["B", "B", "A", "A"], "rating": ["ok", "ok", "better", "match"]})
    assert grade_spread(table, "rating", ("agent",)).to_dict("records") == [
        {"agent": "A", "spread": 1}, {"agent": "B", "spread": 0}]
    with pytest.raises(InputError) as exc:
        grade_spread(table, "rating", ("judge",))
    assert str(exc.value) == "ratings: missing column 'judge'"
    with pytest.raises(InputError) as exc:
        grade_spread(table.assign(rating=["ok", "meh", "ok", "ok"]), "rating", ("agent",),
                     source="g.csv")
    assert str(exc.value).startswith("g.csv, column 'rating', row 2: 'meh' is not a rating")
