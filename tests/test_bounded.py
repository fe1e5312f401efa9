"""Bounded reads: special files are refused unopened, declared sizes are checked first."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from tests.corpus.bounded_cases import huge_npy_header
from trackverify.conversion.decoder import MAX_EPOCHS, DecoderConfig
from trackverify.errors import ConfigError, InputError
from trackverify.io.bounded import check_npy, companion, parse_nested, read_text, regular_file

posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")


@posix
def test_a_fifo_is_refused_without_opening_it(tmp_path):
    # Opening a FIFO for reading blocks until a writer comes; none ever does here, so a
    # reader that opened it would never return. os.stat does not open it.
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"config.toml: expected a regular config file, "
                                          r"found a FIFO"):
        read_text(fifo, what="config file", error=ConfigError)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_character_device_behind_a_link_is_refused(tmp_path):
    link = tmp_path / "ensemble_labels.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="ensemble_labels.txt: expected a regular file, found "
                                         "a character device"):
        regular_file(link)


def test_folders_missing_files_and_size_caps(tmp_path):
    with pytest.raises(InputError, match="found a folder"):
        regular_file(tmp_path)
    with pytest.raises(InputError, match="nope.json: file not found"):
        regular_file(tmp_path / "nope.json")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 11)
    with pytest.raises(InputError, match="big.toml: the file is 11 bytes; at most 10"):
        read_text(big, max_bytes=10)
    assert read_text(big, max_bytes=11) == "#" * 11


def test_deep_nesting_is_one_clean_error():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputError, match=r"p.json: not valid JSON \(nested too deeply"):
        parse_nested(json.loads, text, source="p.json", kind="JSON")
    assert parse_nested(json.loads, "[[1]]", source="p.json", kind="JSON") == [[1]]


def test_npy_header_larger_than_the_file(tmp_path):
    path = tmp_path / "pts.npy"
    path.write_bytes(huge_npy_header())
    # 14e9 x 3 float64 = 336e9 bytes declared; the file holds 24 data bytes.
    with pytest.raises(InputError, match="declares 336000000000 bytes but the file holds only 24"):
        check_npy(path)
    np.save(path, np.zeros((3, 3)))
    assert check_npy(path) == path


def test_npz_member_header_larger_than_the_member(tmp_path):
    path = tmp_path / "kp.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("keypoints.npy", huge_npy_header())
    with pytest.raises(InputError, match="member 'keypoints.npy' declares 336000000000 bytes"):
        check_npy(path)
    buffer = io.BytesIO()
    np.savez(buffer, keypoints=np.zeros((2, 3)))
    path.write_bytes(buffer.getvalue())
    assert check_npy(path) == path


def test_decoder_epochs_have_a_stated_maximum():
    assert DecoderConfig(epochs=MAX_EPOCHS).epochs == 10_000
    for bad in (0, MAX_EPOCHS + 1, 10 ** 12, 2.5, True):
        with pytest.raises(ConfigError, match=r"decoder epochs .* must be an integer in "
                                              r"\[1, 10000\]"):
            DecoderConfig(epochs=bad)


def test_a_companion_is_absent_regular_or_refused(tmp_path):
    assert companion(tmp_path / "run_edges.csv") is None
    (tmp_path / "run_edges.csv").write_text("x\n")
    assert companion(tmp_path / "run_edges.csv") == tmp_path / "run_edges.csv"
    (tmp_path / "split_df.csv").symlink_to(tmp_path / "gone.csv")  # a broken link: not absent
    with pytest.raises(InputError, match="split_df.csv: laptrack table not found"):
        companion(tmp_path / "split_df.csv", what="laptrack table")


def test_a_pair_layout_of_points_by_partners_stops_at_the_stated_cells():
    from trackverify.io.bounded import MAX_LAYOUT_CELLS, check_pair_layout

    assert MAX_LAYOUT_CELLS == 5 * 10**7
    check_pair_layout(5000, 2, partners=5000, what="x")  # 5e7 cells: exactly the bound
    check_pair_layout(10**6, 2, partners=25, what="x")  # 5e7: many points, few partners
    with pytest.raises(InputError) as info:
        check_pair_layout(10**6, 2, partners=26, what="the layout", recording="r",
                          where="frame 7", source="t.csv")
    assert str(info.value) == ("t.csv: recording 'r' has 1000000 identities in frame 7: the "
                               "layout lays out every pair of them, 5.2e+07 cells (1000000 x 26 "
                               "x 2), more than the 5e+07 allowed (at most 5000 identities)")


def _crowded(n: int, id_column: str):
    import pandas as pd

    points = np.random.default_rng(3).uniform(0, 2000, (n, 2))
    return pd.DataFrame({"recording": "r", "frame": np.repeat([0, 1], n),
                         id_column: np.tile(np.arange(n), 2),
                         "x_um": np.r_[points[:, 0], points[:, 0] + 0.5],
                         "y_um": np.r_[points[:, 1], points[:, 1]]})


def test_the_reference_check_refuses_frames_too_crowded_for_its_neighbour_search():
    # before: two frames of 10^4 tracks asked for 1.6 GB of distances (10^5: 149 GiB)
    from trackverify.reference_check import check_reference

    with pytest.raises(InputError) as info:
        check_reference(_crowded(5001, "track"))
    assert str(info.value) == ("recording 'r' has 5001 identities in frame 0: the reference "
                               "check (each track's nearest neighbours) lays out every pair of "
                               "them, 5e+07 cells (5001 x 5001 x 2), more than the 5e+07 "
                               "allowed (at most 5000 identities)")


def test_audit_refuses_a_crowded_frame_before_any_verifier_runs(monkeypatch):
    import trackverify.verifiers
    from trackverify.audit.core import audit

    def never(*_, **__):
        raise AssertionError("the verifier ran before the refusal")

    monkeypatch.setattr(trackverify.verifiers, "run_verifier", never)
    with pytest.raises(InputError) as info:
        audit(_crowded(5001, "pred_id"), verifier="fixed_distance", threshold_um=1.0,
              source="tracks.csv")
    assert str(info.value).startswith("tracks.csv: recording 'r' has 5001 identities in frame 0")


def test_audit_takes_at_most_its_stated_count_of_recordings(tmp_path):
    # before: 10^5 one-row recordings, about 40 ms each, ran past an hour
    import pandas as pd

    from trackverify.audit.core import MAX_RECORDINGS, _check_recordings, audit

    assert MAX_RECORDINGS == 1000

    def one_row_each(n: int) -> pd.DataFrame:
        return pd.DataFrame({"recording": [f"r{i}" for i in range(n)], "frame": 0,
                             "pred_id": 1, "x_um": np.arange(n, dtype=float), "y_um": 0.0})

    _check_recordings(MAX_RECORDINGS, "t.csv")  # the bound itself is taken
    with pytest.raises(InputError) as info:
        audit(one_row_each(MAX_RECORDINGS + 1), threshold_um=1.0, source="t.csv",
              out=tmp_path / "out")
    assert str(info.value) == ("t.csv, column 'recording': 1001 recordings, more than the 1000 "
                               "one audit takes (each is scored on its own, about 40 ms each "
                               "even for one row): audit the recordings in parts")
    assert not (tmp_path / "out").exists()


def test_the_anchor_layout_is_bounded_from_row_counts_as_the_check_lays_it_out():
    import pandas as pd

    from trackverify.reference_check.core import check_anchor_layout

    # the anchor frame holds 10 ids, the next 10^4: at most 10^4 x 10 x 2 distances, taken
    rows = pd.DataFrame({"frame": np.r_[np.zeros(10), np.ones(10**4)].astype(int),
                         "pred_id": np.r_[np.arange(10), np.arange(10**4)],
                         "x_um": np.arange(10**4 + 10, dtype=float), "y_um": 0.0})
    check_anchor_layout(rows, "pred_id")
    # frames past the anchor window (the anchor frame and the 2 present frames after it) are
    # not counted; from a later anchor_frame they are
    small = pd.DataFrame({"frame": [0, 0, 1, 1, 2, 2], "pred_id": [1, 2] * 3,
                          "x_um": [0.0, 9.0] * 3, "y_um": 0.0})
    late = pd.concat([small, _crowded(5001, "pred_id").drop(columns="recording").assign(
        frame=lambda t: t["frame"] + 5)])
    check_anchor_layout(late, "pred_id")
    with pytest.raises(InputError, match=r"^recording '' has 5001 identities in frame 5: "):
        check_anchor_layout(late, "pred_id", anchor_frame=5)
