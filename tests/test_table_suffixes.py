"""How ``read_table`` picks a reader: by suffix, and by content for ``.txt`` and
extensionless files (a CSV named ``.txt`` was refused by the commands; a Parquet file
without an extension was read as CSV)."""

from __future__ import annotations

import pandas as pd
import pytest

from trackverify.cli.app import main
from trackverify.errors import InputError
from trackverify.io.tabular import read_table, table_kind

TABLE = pd.DataFrame({"recording": ["r1", "r1"], "frame": [0, 1], "x_um": [1.5, 2.5]})


def _write(path, how):
    if how == "parquet":
        TABLE.to_parquet(path, index=False)
    else:
        TABLE.to_csv(path, index=False, sep="\t" if how == "tsv" else ",")
    return path


@pytest.mark.parametrize("name", ["obs.txt", "obs", "OBS.TXT"])
@pytest.mark.parametrize("how", ["csv", "tsv", "parquet"])
def test_txt_and_extensionless_files_are_read_by_content(tmp_path, name, how):
    path = _write(tmp_path / name, how)
    assert table_kind(path) == how
    table = read_table(path)
    assert table["recording"].tolist() == ["r1", "r1"] and table["frame"].tolist() == [0, 1]
    assert table["x_um"].tolist() == [1.5, 2.5]


def test_suffixes_decide_for_named_formats(tmp_path):
    # a .csv is read as CSV even if it holds a tab-separated header (validation then names
    # the one column it found), and .xlsx is not a table format
    assert table_kind(_write(tmp_path / "a.csv", "tsv")) == "csv"
    assert table_kind(tmp_path / "a.pq") == "parquet"
    assert table_kind(tmp_path / "a.xlsx") is None
    with pytest.raises(InputError, match=r"a.xlsx: unknown table format '.xlsx' \(use .csv, "
                                         r".tsv or .parquet; a .txt or extensionless file is "
                                         r"read by its content\)"):
        read_table(_write(tmp_path / "a.xlsx", "csv"))


@pytest.mark.parametrize("name, data, message", [
    ("obs.txt", b"PAR1 not really", "not a readable Parquet file .* \\(read as Parquet: the "
                                    "file starts with the bytes PAR1\\)"),
    ("obs", b"x,\xff\xfe\n1,2\n", "obs: not UTF-8 text .*\\(read as CSV: the file does not "
                                   "start with Parquet's PAR1 and its header line holds a "
                                   "comma or no tab\\)"),
    ("obs.txt", b"a\ta\n1\t2\n", "obs\\.txt, column 'a': .*\\(read as TSV: the file does "
                                 "not start with Parquet's PAR1 and its header line holds tabs"),
])
def test_an_error_says_how_a_sniffed_file_was_read(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError, match=message):
        read_table(path)


def test_a_csv_named_txt_runs_through_verify(tmp_path, capsys):
    import numpy as np

    frames = np.repeat(np.arange(12), 3)
    tracks = np.tile(np.arange(3), 12)
    obs = pd.DataFrame({"recording": "r1", "frame": frames, "track": tracks,
                        "detection": tracks, "x_um": tracks * 10.0, "y_um": 0.0,
                        "pred_id": tracks, "pred_valid": True})
    obs.to_csv(tmp_path / "obs.txt", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", "--observations", str(tmp_path / "obs.txt"), "--conditions", "control",
              "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 0
    assert (tmp_path / "out" / "results.json").is_file()
