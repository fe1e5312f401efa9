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
