"""``dataset.tracker_predictions``: a tracker's ids joined onto the observations, validated."""

from __future__ import annotations

import pandas as pd
import pytest

from trackverify.benchmark.dataset import tracker_predictions
from trackverify.errors import InputError


def observations() -> pd.DataFrame:
    """Two frames (input frames 5 and 6, loaded as 0 and 1) of tracks 1 and 2."""
    return pd.DataFrame({"recording": "r", "frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
                         "detection": [10, 11, 20, 21], "x_um": [0.0, 5.0, 0.5, 5.5],
                         "y_um": 0.0, "pred_id": [1, 2, 1, 2], "pred_valid": True})


def tracker() -> pd.DataFrame:
    """Input frame numbers: at 6 the tracker swapped 1 and 2 and gave detection 21 nothing."""
    return pd.DataFrame({"recording": "r", "frame": [5, 5, 6, 6], "detection": [10, 11, 20, 21],
                         "pred_id": pd.array([1, 2, 2, None], dtype="Int64"),
                         "pred_valid": [True, True, True, False]})


def test_the_tracker_ids_replace_the_predictions_on_the_input_frame_numbers():
    obs, ids = observations(), tracker()
    before = obs.copy(), ids.copy()
    joined = tracker_predictions(obs, ids, first_frame=5)
    assert joined["pred_id"].tolist() == [1, 2, 2, -1]
    assert joined["pred_valid"].tolist() == [True, True, True, False]
    assert joined["track"].tolist() == [1, 2, 1, 2] and str(joined["pred_id"].dtype) == "int64"
    pd.testing.assert_frame_equal(obs, before[0])  # neither input is modified
    pd.testing.assert_frame_equal(ids, before[1])


def test_an_observation_the_tracker_gave_no_row_is_unlabelled_and_pred_valid_may_be_absent():
    ids = tracker().drop(columns="pred_valid").iloc[:3]  # detection 21 has no tracker row
    joined = tracker_predictions(observations(), ids, first_frame=5)
    assert joined["pred_id"].tolist() == [1, 2, 2, -1]
    assert joined["pred_valid"].tolist() == [True, True, True, False]


@pytest.mark.parametrize("mutate, fragment", [
    (lambda t: t.drop(columns="pred_id"), "missing required column"),
    (lambda t: t.assign(detection=[10, 10, 20, 21]), "row 2"),  # detection 10 twice at frame 5
    (lambda t: t.assign(pred_id=pd.array([1, None, 2, None], dtype="Int64")), "row 2"),
])
def test_a_table_that_is_not_a_tracker_table_is_refused_by_name(mutate, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        tracker_predictions(observations(), mutate(tracker()), 5, source="cpd.parquet")
    assert "cpd.parquet" in str(info.value)
