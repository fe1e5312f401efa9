"""A stop at any moment leaves no temporary file: the command line removes every temporary
file of its process that was not renamed into place (io.atomic.remove_pending)."""

from __future__ import annotations

import warnings

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


def test_a_folder_is_written_whole_and_replaces_the_folder_there(tmp_path):
    store = tmp_path / "volume.zarr"
    store.mkdir()
    (store / "old.txt").write_text("old")

    def write(folder):
        assert folder != store and folder.is_dir() and list(folder.iterdir()) == []
        (folder / "new.txt").write_text("new")
        assert (store / "old.txt").read_text() == "old"  # untouched until renamed

    assert atomic.write_atomic(store, write, folder=True) == store
    assert sorted(p.name for p in store.iterdir()) == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["volume.zarr"]  # no .tmp, no .old


def test_a_failed_folder_write_keeps_the_old_folder_and_leaves_no_temporary(tmp_path):
    store = tmp_path / "volume.zarr"
    store.mkdir()
    (store / "old.txt").write_text("old")

    def fail(folder):
        (folder / "half.txt").write_text("half")
        raise ValueError("disk full")

    with pytest.raises(ValueError, match="disk full"):
        atomic.write_atomic(store, fail, folder=True)
    assert [p.name for p in tmp_path.iterdir()] == ["volume.zarr"]
    assert sorted(p.name for p in store.iterdir()) == ["old.txt"]


def test_a_stop_leaves_no_temporary_folder(tmp_path):
    folder = atomic.temporary_beside(tmp_path / "volume.zarr", folder=True)
    (folder / "0").mkdir()
    (folder / "0" / "chunk").write_bytes(b"\0" * 10)
    assert _leftovers(tmp_path) == [folder.name]
    atomic.remove_pending()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["zarr", "tiff", "hdf5", "nwb"])
def test_synth_volume_renames_its_volume_into_place_through_io_atomic(tmp_path, kind):
    from trackverify.synth.volume import SUFFIX, write_specimen_volume
    from trackverify.synth.specimen import SpecimenConfig

    config = SpecimenConfig(frames=2, neurons=5)
    for _ in range(2):  # the second run replaces the first volume
        with warnings.catch_warnings():
            # pynwb's warning about a file name not ending in .nwb: not for the temporary one
            warnings.filterwarnings("error", message="The file path provided")
            image, tracks = write_specimen_volume(config, tmp_path, kind)
    assert image == tmp_path / f"volume{SUFFIX[kind]}" and image.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([image.name, tracks.name])


def test_a_folder_that_cannot_be_renamed_into_place_puts_the_old_one_back(tmp_path, monkeypatch):
    store = tmp_path / "volume.zarr"
    store.mkdir()
    (store / "old.txt").write_text("old")
    replace = atomic.os.replace

    def refuse_the_new_one(src, dst):
        if str(src).endswith(".tmp"):
            raise PermissionError("refused")
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", refuse_the_new_one)
    with pytest.raises(PermissionError):
        atomic.write_atomic(store, lambda folder: (folder / "new.txt").write_text("new"),
                            folder=True)
    assert [p.name for p in tmp_path.iterdir()] == ["volume.zarr"]
    assert sorted(p.name for p in store.iterdir()) == ["old.txt"]


@pytest.mark.parametrize("there", ["link", "file"])
def test_a_folder_replaces_a_link_or_a_file_and_never_writes_through_the_link(tmp_path, there):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    store = out / "volume.zarr"
    if there == "link":
        store.symlink_to(elsewhere, target_is_directory=True)
    else:
        store.write_text("an old file")
    atomic.write_atomic(store, lambda folder: (folder / "new.txt").write_text("new"),
                        folder=True)
    assert store.is_dir() and not store.is_symlink()
    assert sorted(p.name for p in store.iterdir()) == ["new.txt"]
    assert [p.name for p in out.iterdir()] == ["volume.zarr"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]  # the target untouched
