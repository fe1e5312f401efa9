"""The fit guard: test labels are unreachable, fitting needs train/calibration rows."""

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import LeakageError
from trackverify.benchmark.partitions import (FitData, make_partitions, rows_of_partition,
                                    threshold_for_risk)


def recordings(n=10):
    return pd.DataFrame({"recording": [f"r{i}" for i in range(n)],
                         "animal_id": [f"a{i}" for i in range(n)],
                         "provenance_group": "lab"})


def observations(n=10, rows=4):
    rec = np.repeat([f"r{i}" for i in range(n)], rows)
    return pd.DataFrame({"recording": rec, "score": np.tile([1.0, 2.0, 3.0, 4.0], n),
                         "error": np.tile([0, 0, 1, 1], n),
                         "marker": np.arange(n * rows)})


def test_fit_rows_are_train_and_calibration_only():
    parts = make_partitions(recordings(), fractions="train=0.4,calibration=0.2,test=0.4", seed=1)
    obs = observations()
    fit = FitData(parts, obs)
    rows = fit.labels_for_fit()
    allowed = set(parts.partitions["train"]) | set(parts.partitions["calibration"])
    assert set(rows["recording"]) == allowed and len(rows) == 4 * len(allowed)
    cal = fit.labels_for_fit(partitions=("calibration",))
    assert set(cal["recording"]) == set(parts.partitions["calibration"])
    assert fit.row_counts["test"] == 16


@pytest.mark.parametrize("name", ["test", "validation", "development"])
def test_asking_for_other_labels_is_an_error(name):
    parts = make_partitions(recordings(), fractions="train=0.5,test=0.5", seed=1)
    fit = FitData(parts, observations())
    with pytest.raises(LeakageError, match=repr(name)):
        fit.labels_for_fit(partitions=("train", name))
    with pytest.raises(LeakageError):
        fit.fit_threshold(0.1, partitions=(name,))


def test_test_rows_are_physically_unreachable():
    parts = make_partitions(recordings(), fractions="train=0.5,test=0.5", seed=1)
    obs = observations()
    fit = FitData(parts, obs)
    test_markers = set(rows_of_partition(parts, obs, "test")["marker"])
    assert len(test_markers) == 20
    # Nothing the object holds, at any depth, contains a test row.
    held = [v for v in vars(fit).values() if isinstance(v, dict)]
    frames = [df for d in held for df in d.values() if isinstance(df, pd.DataFrame)]
    assert frames and all(not (set(df["marker"]) & test_markers) for df in frames)
    # Mutating what the guard returned does not reach the guard or the input.
    rows = fit.labels_for_fit()
    rows.loc[:, "error"] = 99
    assert (fit.labels_for_fit()["error"] <= 1).all() and (obs["error"] <= 1).all()


def test_no_fit_partitions_means_nothing_is_fitted():
    only_dev = make_partitions(recordings())
    fit = FitData(only_dev, observations())
    assert fit.summary()["fit_allowed"] is False
    assert "development" in fit.summary()["note"]
    with pytest.raises(LeakageError, match="nothing to fit on"):
        fit.labels_for_fit()
    only_test = make_partitions(recordings(), fractions="test=1")
    with pytest.raises(LeakageError, match="nothing to fit on"):
        FitData(only_test, observations()).fit_threshold(0.2)


def test_threshold_for_risk_by_hand():
    # sorted scores 1,2,2,3,5 with errors 0,0,1,0,1 (NaN score and unlabelled rows ignored)
    scores = np.array([2.0, 1.0, 3.0, 2.0, 5.0, np.nan, 0.5])
    errors = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, np.nan])
    # risk at 1: 0/1; at 2: 1/3 (the tie enters together); at 3: 1/4; at 5: 2/5
    assert threshold_for_risk(scores, errors, 0.25) == (3.0, 0.25, 4, None)
    assert threshold_for_risk(scores, errors, 0.30) == (3.0, 0.25, 4, None)
    assert threshold_for_risk(scores, errors, 0.40) == (5.0, 0.4, 5, None)
    # 0.2: only threshold 1 qualifies (risk is not monotone, 3 has 0.25 > 0.2)
    assert threshold_for_risk(scores, errors, 0.2)[:3] == (1.0, 0.0, 1)
    undefined = threshold_for_risk(np.array([1.0, 2.0]), np.array([1.0, 0.0]), 0.1)
    assert undefined[0] is None and "no threshold" in undefined[3]
    assert threshold_for_risk(np.array([np.nan]), np.array([1.0]), 0.1)[0] is None


def test_fit_threshold_uses_fit_rows():
    parts = make_partitions(recordings(), fractions="train=0.5,test=0.5", seed=1)
    fitted = FitData(parts, observations()).fit_threshold(0.34)
    # per recording errors 0,0,1,1 at scores 1..4: risk 0, 0, 1/3, 1/2 -> threshold 3
    assert (fitted.threshold, fitted.accepted, fitted.labelled) == (3.0, 15, 20)
    assert fitted.selective_risk == pytest.approx(1 / 3)
