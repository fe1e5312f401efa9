"""A stop at any moment leaves no temporary file: the command line removes every temporary
file of its process that was not renamed into place (io.atomic.remove_pending)."""

from __future__ import annotations

import pandas as pd
import pytest

from trackverify import stop
from trackverify.io import atomic, tabular


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_stop_between_making_a_temporary_file_and_its_cleanup_is_removed(tmp_path, monkeypatch):
    # the stream's temporary file is made in __enter__; a SIGTERM that lands just after it
    # (before the with-block, whose __exit__ would clean up) left it behind
    made = atomic.temporary_beside

    def made_then_stopped(path):
        made(path)
        raise stop.Terminated()

    monkeypatch.setattr(tabular, "temporary_beside", made_then_stopped)
    with pytest.raises(stop.Terminated):
        with tabular.ParquetStream(tmp_path / "rows.parquet") as rows:
            rows.write(pd.DataFrame({"a": [1]}))
    assert len(_leftovers(tmp_path)) == 1  # what the stop left
    atomic.remove_pending()
    assert _leftovers(tmp_path) == [] and list(tmp_path.iterdir()) == []


def test_the_command_line_removes_what_a_stopped_command_left(tmp_path, monkeypatch):
    from trackverify.cli import app

    def stopped(**_):
        atomic.temporary_beside(tmp_path / "results.json")
        raise stop.Terminated()

    monkeypatch.setattr(app.cli, "main", stopped)
    with pytest.raises(SystemExit) as exit_:
        app.main(["run", "--out", str(tmp_path)])
    assert exit_.value.code == 143
    assert _leftovers(tmp_path) == []


def test_files_renamed_into_place_or_removed_are_no_longer_pending(tmp_path):
    atomic.write_text_atomic(tmp_path / "a.txt", "a")
    with tabular.ParquetStream(tmp_path / "b.parquet") as rows:
        rows.write(pd.DataFrame({"a": [1]}))
    with pytest.raises(ValueError):
        atomic.write_atomic(tmp_path / "c.txt", lambda tmp: (_ for _ in ()).throw(ValueError()))
    atomic.remove_pending()  # must not touch what was committed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.parquet"]
