"""The tracker table of ``certify.transfer`` is user input: read by the project's reader."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trackverify.benchmark.certify.transfer import real_error_scores
from trackverify.errors import InputError

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fdnc-nerve-freely-moving"


@pytest.mark.skipif(not DATA.is_dir(), reason="real data not present")
def test_a_tracker_parquet_with_a_column_twice_is_refused(tmp_path):
    folder = tmp_path / "fdnc"
    shutil.copytree(DATA, folder)
    tracker = pq.read_table(folder / "tracker_cpd.parquet")
    # pred_id twice (pd.read_parquet raised pyarrow's 'Multiple matches for FieldRef')
    twice = pa.table(tracker.columns + [tracker.column("pred_id")],
                     names=tracker.column_names + ["pred_id"])
    pq.write_table(twice, folder / "tracker_cpd.parquet")
    with pytest.raises(InputError, match=r"tracker_cpd.parquet.*column 'pred_id'.*appears twice"):
        real_error_scores(folder)
