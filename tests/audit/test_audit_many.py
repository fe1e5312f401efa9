"""Many recordings on all cores: the recordings of one file judged ``jobs`` at a time, and
several files audited by one command, give exactly the outputs of one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trackverify
from trackverify.errors import InputError
from tests.conftest import run_cli

OUTPUTS = ("audit.parquet", "events.csv", "segments.csv", "tracks.csv", "joins.csv",
           "audit.json", "report.html")


def worm(recording: str, seed: int, frames: int = 12) -> pd.DataFrame:
    """Twelve neurons on a jittered grid drifting in x; from frame 6 two ids swap."""
    rng = np.random.default_rng(seed)
    grid = np.array([(x, y) for x in range(0, 32, 8) for y in range(0, 24, 8)], float)
    grid += rng.normal(0, 0.5, grid.shape)
    rows = []
    for t in range(frames):
        for i, (x, y) in enumerate(grid):
            pid = {0: 1, 1: 0}.get(i, i) if t >= 6 else i
            rows.append((recording, t, pid, x + 0.3 * t, y))
    return pd.DataFrame(rows, columns=["recording", "frame", "pred_id", "x_um", "y_um"])


def test_recordings_judged_at_once_give_the_result_of_one_at_a_time():
    tracks = pd.concat([worm(f"w{k}", k) for k in range(3)], ignore_index=True)
    one = trackverify.audit(tracks)
    two = trackverify.audit(tracks, jobs=2)
    pd.testing.assert_frame_equal(one.observations, two.observations)
    pd.testing.assert_frame_equal(one.events, two.events)
    assert one.summary == two.summary
    assert one.summary["counts"]["flagged"] > 0  # the swaps are seen


def test_several_files_audited_at_once_are_each_as_audited_alone(tmp_path):
    files = []
    for k in range(3):
        path = tmp_path / f"worm{k}.csv"
        worm("w", k).drop(columns="recording").to_csv(path, index=False)
        files.append(path)
    done = run_cli("audit", *map(str, files), "--jobs", "2", "--out", str(tmp_path / "all"))
    assert done.returncode == 0, done.stderr
    listed = pd.read_csv(tmp_path / "all" / "audits.csv")
    assert listed["file"].tolist() == [str(f) for f in files]
    for path in files:
        alone = tmp_path / f"alone-{path.stem}"
        done = run_cli("audit", str(path), "--out", str(alone))
        assert done.returncode == 0, done.stderr
        for name in OUTPUTS:
            assert (tmp_path / "all" / path.stem / name).read_bytes() == \
                (alone / name).read_bytes(), name
        counts = trackverify.audit(path).summary["counts"]
        row = listed.set_index("file").loc[str(path)]
        assert (row["audited"], row["flagged"], row["events"]) == (
            counts["audited"], counts["flagged"], counts["events"])


def test_several_files_refuse_one_detections_table_and_two_files_of_one_name(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        worm("w", 0).to_csv(tmp_path / folder / "tracks.csv", index=False)
    from trackverify.audit.batch import audit_files

    with pytest.raises(InputError, match="would write the same file"):
        audit_files([tmp_path / "a" / "tracks.csv", tmp_path / "b" / "tracks.csv"],
                    tmp_path / "out")
    with pytest.raises(InputError, match="--detections holds one file's detections"):
        audit_files([tmp_path / "a" / "tracks.csv"], tmp_path / "out2",
                    detections=tmp_path / "a" / "tracks.csv")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()
