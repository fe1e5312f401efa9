"""What the seeded fuzz sweep (``tests/corpus/fuzz.py``) found, kept as fixed cases.

Each case is one hostile variant the sweep derived from a real file (rebuilt here with the
sweep's own mutation, so the bytes are the same), run in-process through
``trackverify.cli.app.main``: exit 2 with exactly one ``trackverify: error:`` line naming the
file and the problem (before the fixes: the "a defect of trackverify" net, a message over
several lines, a 10 MB line, or a KeyError), or exit 0 where the input is valid. The
sweep's own judgement and its variants' determinism are checked too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.corpus import fuzz
from tests.formats.formats_data import FORMATS, shared
from trackverify.cli.app import main


def _run(args: list[str], capsys) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    return exit_info.value.code, [line for line in err.splitlines() if line.strip()]


def _refused(args, capsys, path: Path, *fragments: str) -> str:
    code, lines = _run(args, capsys)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("trackverify: error:"), lines
    assert "a defect of trackverify" not in lines[0] and str(path) in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _ctc_copy(tmp_path: Path) -> Path:
    res = tmp_path / "res"
    shutil.copytree(shared(FORMATS / "ctc" / "java-ctcmetrics_test_data" / "res"), res)
    return res


def test_ctc_label_beyond_int64_is_one_line(tmp_path, capsys):
    # before: 'unexpected OverflowError: Overflow (a defect of trackverify ...)'
    res = _ctc_copy(tmp_path)
    track = res / "res_track.txt"
    lines = track.read_text().splitlines()
    lines[1] = "99999999999999999999999 0 5 0"
    track.write_text("\n".join(lines) + "\n")
    _refused(["convert", res, "--to", "parquet", "--out", tmp_path / "out"], capsys, track,
             "not a CTC track file of 'L B E P' integer lines")
    assert not (tmp_path / "out").exists()


def test_ctc_line_with_five_fields_is_one_line(tmp_path, capsys):
    # before: pandas' message 'Expected 4 fields in line 3, saw 5\n' split the error over two lines
    res = _ctc_copy(tmp_path)
    track = res / "res_track.txt"
    lines = track.read_text().splitlines()
    lines[2] += " 7"
    track.write_text("\n".join(lines) + "\n")
    _refused(["evaluate", "--reference", res, "--predictions", res], capsys, track,
             "Expected 4 fields in line 3, saw 5")


def test_reference_with_pred_id_and_no_pred_valid_is_read(tmp_path, capsys):
    # before: 'unexpected KeyError: 'pred_valid'' (a reference may carry pred_id as an extra column)
    table = pd.DataFrame({"frame": np.repeat(np.arange(4), 3), "track": np.tile([1, 2, 3], 4),
                          "x_um": np.tile([0.0, 20.0, 40.0], 4), "y_um": 1.0})
    table["pred_id"] = table["track"]
    path = tmp_path / "tracks.csv"
    table.to_csv(path, index=False)
    code, lines = _run(["evaluate", "--reference", path, "--predictions", path,
                        "--out", tmp_path / "out"], capsys)
    assert code == 0, lines
    assert (tmp_path / "out" / "results.json").is_file()
    # a valid prediction still needs its pred_id
    broken = table.assign(pred_valid=True).astype({"pred_id": "Int64"})
    broken.loc[4, "pred_id"] = pd.NA
    broken.to_csv(path, index=False)
    _refused(["evaluate", "--reference", path, "--predictions", path], capsys, path,
             "column 'pred_id', row 5", "pred_id is null on a valid prediction")


def _geff_variant(tmp_path: Path, store: str, label: str) -> Path:
    pytest.importorskip("geff")
    original = shared(FORMATS / "geff" / store)
    edits = dict(fuzz._geff_mutations(original))
    copy = tmp_path / store
    shutil.copytree(original, copy)
    edits[label](copy)
    return copy


@pytest.mark.parametrize("store, label, fragment", [
    # before: 'unexpected ValueError: Per-column arrays must each be 1-dimensional'
    ("mouse-20250719.zarr", "shape_2d_tracks/nodes/props/t/values",
     "node property 't' must hold one value per node (37009), found shape (37009, 1)"),
    ("mouse-20250719.zarr", "shape_2d_tracks/nodes/ids",
     "the node ids must be a 1-D array of numbers, found float64 (37009, 1)"),
])
def test_geff_properties_of_the_wrong_shape_or_type_are_named(tmp_path, capsys, store, label,
                                                              fragment):
    copy = _geff_variant(tmp_path, store, label)
    _refused(["convert", copy, "--to", "parquet", "--out", tmp_path / "out"], capsys, copy, fragment)


def test_trackmate_attribute_of_ten_megabytes_is_cut_in_the_message(tmp_path, capsys):
    # before: the whole 10 MB value was quoted on the error line (and read in quadratic time)
    original = shared(FORMATS / "trackmate_xml" / "Celegans-5pc-17timepoints.xml")
    variants = dict(fuzz._xml_mutations(original, np.random.default_rng(fuzz.SEED)))
    path = tmp_path / original.name
    path.write_bytes(variants["attr_POSITION_Z_xxxxxxxxxxxx"])
    line = _refused(["convert", path, "--to", "parquet", "--out", tmp_path / "out"], capsys, path,
                    "a spot's POSITION_Z is not a number: 'xxx", "characters cut")
    assert len(line) < 1200 + len(str(path))


def test_an_error_message_is_bounded_and_keeps_both_ends():
    from trackverify.errors import MAX_PROBLEM_CHARS, InputError

    error = InputError("start " + "x" * 5000 + " end", source="f.csv", column="c", row=3)
    assert str(error).startswith("f.csv, column 'c', row 3: start xxx")
    assert str(error).endswith("xxx end") and "characters cut" in str(error)
    assert len(error.problem) < MAX_PROBLEM_CHARS + 40
    assert InputError("short").problem == "short"


def test_the_sweep_judges_outcomes():
    base = fuzz.Base("b", Path("/d/in/obs.csv"), "table", Path("/d/in/obs.csv"))
    v = fuzz.Variant("b__x", base, Path("/v/in/obs.csv"), Path("/v"))
    ok = "trackverify: error: /v/in/obs.csv, column 'frame', row 3: not a number\n"
    assert fuzz.judge("convert", v, "exit", 2, ok) is None
    assert fuzz.judge("convert", v, "exit", 0, "") is None
    assert fuzz.judge("convert", v, "timeout", None, "") == "hang"
    assert fuzz.judge("convert", v, "exit", 2, ok + "second line\n") == "more than one line"
    warned = "trackverify: warning: /v/in/obs.csv: coordinates are in pixel ...\n" + ok
    assert fuzz.judge("convert", v, "exit", 2, warned) is None  # a documented warning first
    assert fuzz.judge("convert", v, "exit", 2, "trackverify: error: x: unexpected KeyError: 'a' "
                      "(a defect of trackverify; rerun ...)\n") == "net"
    assert fuzz.judge("convert", v, "exit", 2, "trackverify: error: bad\n") == "file not named"
    assert fuzz.judge("convert", v, "exit", 1, ok) == "exit 1"
    # exit 1 is a documented verdict only from stage / conversion check, with its file written
    assert fuzz.judge("stage_sub", v, "exit", 1, "", verdict=True) is None
    assert fuzz.judge("stage_sub", v, "exit", 1, "") == "exit 1"
    assert fuzz.judge("conversion_decode", v, "exit", 1, "", verdict=True) == "exit 1"
    assert fuzz.judge("convert", v, "exit", 2, "Traceback (most recent call last):\n") == "traceback"
    assert fuzz.judge("api_audit", v, "exit", 65, "KeyError: 'a'") is not None
    assert fuzz.judge("api_audit", v, "exit", 64, "InputError: x") is None


def test_the_same_seed_gives_the_same_variants():
    text = "frame,track,x_um\n" + "".join(f"{i},{i % 3},{i * 1.5}\n" for i in range(12))

    def draw(seed):
        return list(fuzz._csv_text_mutations(text, np.random.default_rng(seed)))

    first, again, other = draw(7), draw(7), draw(8)
    assert first == again
    assert [name for name, _ in first] == [name for name, _ in other]
    assert first != other  # the seed picks the rows and bytes that are broken


def test_unlinked_tracks_beyond_the_identity_bound_are_refused_at_once(tmp_path, capsys):
    # before: a GEFF store whose edges were emptied (37,009 one-point tracks) asked the dense
    # identity alignments for 37,009^2 cells (11 GB each): evaluate, verify and run never ended
    from trackverify.metrics.tracking import MAX_IDENTITY_CELLS

    n = int(MAX_IDENTITY_CELLS ** 0.5) + 1  # n tracks x n ids > the bound
    table = pd.DataFrame({"frame": np.arange(n) // 100, "track": np.arange(n),
                          "detection": np.arange(n) % 100, "x_um": (np.arange(n) % 100) * 10.0,
                          "y_um": 0.0, "pred_id": np.arange(n), "pred_valid": True})
    path = tmp_path / "observations.csv"
    table.to_csv(path, index=False)
    fragment = f"recording 'recording' has {n} reference tracks and {n} predicted ids"
    _refused(["evaluate", "--reference", path, "--predictions", path], capsys, path, fragment)
    _refused(["verify", "--observations", path, "--conditions", "control",
              "--out", tmp_path / "out"], capsys, path, fragment)
    assert not any((tmp_path / "out").rglob("*.json"))
    small = table[table["track"] < 50]  # well under the bound: scored
    small.to_csv(path, index=False)
    code, lines = _run(["evaluate", "--reference", path, "--predictions", path], capsys)
    assert code == 0, lines


def test_evaluate_checks_the_lineage_before_it_prints(tmp_path, capsys):
    # before: a napari graph.json making track 2 the child of a track that has not ended
    # printed the whole metrics table, then refused the file (a refusal after results)
    napari = tmp_path / "napari"
    napari.mkdir()
    rows = [(track, t, 10.0 * track, 5.0) for track in (1, 2, 3) for t in range(4)]
    pd.DataFrame(rows, columns=["ID", "t", "y", "x"]).to_csv(napari / "tracks.csv", index=False)
    (napari / "graph.json").write_text('{"2": [3], "3": [2]}')
    path = napari / "tracks.csv"
    code, lines = _run(["evaluate", "--reference", path, "--predictions", path,
                        "--format", "napari", "--pixel-size", "1"], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"trackverify: error: {path}, column 'parent_track', row ")
    assert "not after its parent" in lines[0]


def test_audit_without_two_anchor_identities_names_the_file(tmp_path, capsys):
    # before: 'trackverify: error: column 'frame': the anchor frame holds fewer than two
    # identities ...' named no file (found on a MOT file whose first frame became -0)
    rows = [(0, 1, 0.0, 0.0)] + [(f, i, 10.0 * i, 0.0) for f in (1, 2) for i in (1, 2)]
    path = tmp_path / "tracks.csv"
    pd.DataFrame(rows, columns=["frame", "pred_id", "x_um", "y_um"]).to_csv(path, index=False)
    _refused(["audit", path, "--out", tmp_path / "out"], capsys, path,
             "column 'frame'", "the anchor frame 0 holds fewer than two identities")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("values", [[True, False, True], [b"1\xff", b"2", b"3"],
                                    [{"v": 1}, {"v": 2}, {"v": 3}]],
                         ids=["bool", "binary", "struct"])
def test_parquet_whose_pandas_metadata_names_another_dtype(tmp_path, capsys, values):
    # before: 'unexpected TypeError: Expected array of Int64 type, got bool instead': the
    # pandas metadata of the file still said Int64 for a column rewritten with other values
    # (a struct column: 'unexpected NotImplementedError: struct<v: int64>')
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"frame": [0, 0, 0], "pred_id": pd.array([1, 2, 3], dtype="Int64"),
                          "x_um": [0.0, 10.0, 20.0], "y_um": 0.0})
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.set_column(1, "pred_id", pa.array(values))
    path = tmp_path / "tracks.parquet"
    pq.write_table(table, path)
    _refused(["audit", path, "--out", tmp_path / "out"], capsys, path,
             "column 'pred_id', row 1: ids must be integers or strings")


def _hdf5_variant(tmp_path: Path, original: Path, label: str, beside: tuple[str, ...] = ()) -> Path:
    pytest.importorskip("h5py")
    import h5py

    folder = tmp_path / "in"
    folder.mkdir()
    for name in beside:
        shutil.copy(original.parent / name, folder / name)
    path = folder / ("annotations.h5" if beside else original.name)
    shutil.copy(original, path)
    edits = dict(fuzz._hdf5_mutations(path, np.random.default_rng(fuzz.SEED)))
    with h5py.File(path, "r+") as h5:
        edits[label](h5)
    return path


@pytest.mark.parametrize("label, fragment", [
    # before: 'unexpected TypeError: len() of unsized object' / 'unexpected ValueError:
    # Per-column arrays must each be 1-dimensional'
    ("scalar_x", "'x' must be a 1-D array, found shape ()"),
    ("extradim_t_idx", "'t_idx' must be a 1-D array, found shape (46, 1)"),
    ("str_worldline_id", "'worldline_id' must hold numbers, found dtype |S8"),
    ("nan_t_idx", "'t_idx' must hold whole numbers below 2^53, found nan"),
])
def test_zephir_datasets_of_the_wrong_shape_or_type_are_named(tmp_path, capsys, label, fragment):
    from tests.formats.formats_data import ZEPHIR

    path = _hdf5_variant(tmp_path, shared(ZEPHIR / "annotations-2.h5"), label,
                         beside=("metadata.json", "worldlines.h5"))
    _refused(["convert", path, "--format", "zephir", "--to", "parquet",
              "--out", tmp_path / "out"], capsys, path, fragment)


@pytest.mark.parametrize("label, fragment", [
    ("str_tracks/obj_type_1/LBEPR", "'tracks/obj_type_1/LBEPR' must hold numbers"),
    ("scalar_objects/obj_type_1/coords", "'objects/obj_type_1/coords' must be a 2-D array"),
    ("flat_tracks/obj_type_1/map", "'tracks/obj_type_1/map' must be a 2-D array"),
])
def test_btrack_datasets_of_the_wrong_shape_or_type_are_named(tmp_path, capsys, label, fragment):
    path = _hdf5_variant(tmp_path, shared(FORMATS / "btrack_hdf5" / "tracks.h5"), label)
    _refused(["convert", path, "--format", "btrack", "--to", "parquet",
              "--out", tmp_path / "out"], capsys, path, fragment)


def test_pred_valid_of_undecodable_bytes_is_named(tmp_path, capsys):
    # before: 'unexpected UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff'; the row is
    # the undecodable value's (the second, 1-based), not the first bytes value's
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "tracks.parquet"
    pq.write_table(pa.table({"frame": [0, 0, 1], "pred_id": [1, 2, 1], "x_um": [0.0, 10.0, 0.0],
                             "y_um": [0.0] * 3, "pred_valid": pa.array([b"true", b"\xff", b"true"])}),
                   path)
    _refused(["audit", path, "--out", tmp_path / "out"], capsys, path,
             "column 'pred_valid', row 2: expected true/false, found bytes that are not UTF-8")


@pytest.mark.parametrize("label, fragment", [
    # before: 'unexpected ValueError: Length of values (11) does not match length of index (23)'
    ("short_name", "'name' must hold one name per 'id' (23), found shape (11,)"),
    ("scalar_id", "'id' must be a 1-D array, found shape ()"),
])
def test_zephir_worldline_names_that_do_not_match_the_ids(tmp_path, capsys, label, fragment):
    import h5py

    from tests.formats.formats_data import ZEPHIR

    folder = tmp_path / "in"
    shutil.copytree(shared(ZEPHIR), folder)
    shutil.copy(folder / "annotations-2.h5", folder / "annotations.h5")
    edits = dict(fuzz._hdf5_mutations(folder / "worldlines.h5", np.random.default_rng(fuzz.SEED)))
    with h5py.File(folder / "worldlines.h5", "r+") as h5:
        edits[label](h5)
    line = _refused(["convert", folder / "annotations.h5", "--format", "zephir", "--to", "parquet",
                     "--out", tmp_path / "out"], capsys, folder, fragment)
    assert "worldlines.h5" in line


def test_a_damaged_label_image_is_one_line_without_tifffile_logging(tmp_path, capsys):
    # before: tifffile logged what it skipped ('<tifffile.TiffPage 0 @2548> missing data
    # offset tag', ...) on stderr, three lines before the error line
    import logging

    res = _ctc_copy(tmp_path)
    mask = res / "mask002.tif"
    mask.write_bytes(mask.read_bytes()[:-1])
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("tifffile").addHandler(handler)
    try:
        _refused(["convert", res, "--to", "parquet", "--out", tmp_path / "out"], capsys, mask,
                 "not a readable label image")
    finally:
        logging.getLogger("tifffile").removeHandler(handler)
    assert records == []


@pytest.mark.parametrize("offset", [132, 682])
def test_a_damaged_hdf5_link_table_is_one_line(tmp_path, capsys, offset):
    # before: 'unexpected RuntimeError: Unable to synchronously check link existence (bad
    # local heap signature)': h5py raises RuntimeError walking a damaged file's links
    pytest.importorskip("h5py")
    data = bytearray(shared(FORMATS / "btrack_hdf5" / "tracks.h5").read_bytes())
    data[offset] ^= 0xFF  # inside the root group's link heap
    path = tmp_path / "tracks.h5"
    path.write_bytes(bytes(data))
    _refused(["convert", path, "--to", "parquet", "--out", tmp_path / "out"], capsys, path,
             "not a readable HDF5 file: reading 'objects' failed")
    _refused(["audit", path, "--out", tmp_path / "out2"], capsys, path, "not a readable HDF5 file")


def _calibration_variant(tmp_path: Path, label: str) -> Path:
    """The sweep's calibration.json variant ``label`` (re-hashed, so only the bad value is wrong)."""
    from trackverify.benchmark.certify.calibration_file import write_calibration

    base = write_calibration(tmp_path / "base.json", fuzz.CALIBRATION)
    payload = dict(fuzz._calibration_mutations(base.read_text()))[label]
    path = tmp_path / "calibration.json"
    path.write_text(payload)
    return path


@pytest.mark.parametrize("label, fragment", [
    ("rehash_verifier.options_list", "'verifier.options' must be an object, got [1, 'a']"),
    ("rehash_verifier.options_true", "'verifier.options' must be an object, got True"),
    ("rehash_target.level_str", "'target.level' must be a finite number, got 'abc'"),
    ("rehash_drop_target.level", "'target.level' must be a finite number, got None"),
    ("rehash_assumption_list", "'assumption' must be a string or null, got [1, 'a']"),
    # 10 ** 30, 31 digits: echoed cut in the middle (errors.short_values)
    ("rehash_guarantee_huge", "'guarantee' must be a string, got 1000...(31 digits)...000"),
    ("rehash_calibration_animals_neg", "'calibration_animals' must be an integer >= 0 or null, got -1"),
    ("rehash_verifier.name_str", "its verifier: unknown verifier 'abc'"),
])
def test_calibration_values_of_the_wrong_type_are_named(tmp_path, capsys, label, fragment):
    # before: 'unexpected AttributeError / TypeError / KeyError' (the net), or, for an unknown
    # verifier, a message that did not name the calibration file
    path = _calibration_variant(tmp_path, label)
    tracks = tmp_path / "tracks.csv"
    pd.DataFrame({"frame": np.repeat(np.arange(3), 2), "pred_id": np.tile([1, 2], 3),
                  "x_um": np.tile([0.0, 20.0], 3), "y_um": 1.0}).to_csv(tracks, index=False)
    before = path.read_bytes()
    _refused(["audit", tracks, "--calibration", path, "--out", tmp_path / "out"], capsys, path,
             "not a valid calibration file" if "name" not in label else "its verifier", fragment)
    assert path.read_bytes() == before and not (tmp_path / "out").exists()


def test_a_npy_header_with_a_flipped_byte_is_one_line(tmp_path, capsys):
    # before: 'unexpected TokenError: ('EOF in multi-line statement', (2, 0))' (the net): numpy
    # parses the header's dict with Python's tokenizer
    pairs = tmp_path / "pairs"
    for ex in ("ex1", "ex2"):
        shutil.copytree(shared(fuzz.SHARED / "targettrack-point-pairs" / ex), pairs / ex)
    gt = pairs / "ex1" / "pts_gt.npy"
    data = bytearray(gt.read_bytes())
    data[data.index(b"}")] = ord("(")  # the header dict is never closed
    gt.write_bytes(bytes(data))
    _refused(["evidence", "--pairs", pairs, "--levels", "", "--grid", "default",
              "--out", tmp_path / "out"], capsys, gt, "cannot read a numpy array")


def test_a_calibration_naming_a_module_of_its_own_runs_no_code(tmp_path, capsys, monkeypatch):
    # A calibration file may come from someone else: a verifier given as module:Class would be
    # imported, i.e. its code run, on `audit --calibration` alone. It is refused unless the
    # user names the same verifier (--verifier), and nothing of the module runs.
    import copy
    import sys

    from trackverify.benchmark.certify.calibration_file import write_calibration

    marker = tmp_path / "ran.txt"
    (tmp_path / "evilcal_mod.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nclass Evil:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    body = copy.deepcopy(fuzz.CALIBRATION)
    body["verifier"]["name"] = "evilcal_mod:Evil"
    path = write_calibration(tmp_path / "calibration.json", body)
    tracks = tmp_path / "tracks.csv"
    pd.DataFrame({"frame": np.repeat(np.arange(3), 2), "pred_id": np.tile([1, 2], 3),
                  "x_um": np.tile([0.0, 20.0], 3), "y_um": 1.0}).to_csv(tracks, index=False)
    _refused(["audit", tracks, "--calibration", path, "--out", tmp_path / "out"], capsys, path,
             "not a built-in one", "--verifier evilcal_mod:Evil")
    assert not marker.exists() and "evilcal_mod" not in sys.modules
    assert not (tmp_path / "out").exists()
    # named by the user as well, it is the user's own verifier and is loaded (here: refused
    # as not a verifier, after its module ran)
    _refused(["audit", tracks, "--calibration", path, "--verifier", "evilcal_mod:Evil",
              "--out", tmp_path / "out"], capsys, path, "its verifier")
    assert marker.exists()


def test_the_stage_readers_refuse_a_npy_header_numpy_cannot_tokenize(tmp_path):
    # before: the gait and keypoint loaders caught a narrower list than the other .npy readers,
    # so numpy's TokenError on an unclosed header dict reached the net
    import io
    import zipfile

    from trackverify.errors import InputError
    from trackverify.stages.gait import load_swing_stance
    from trackverify.stages.keypoints import load_npz_array

    buf = io.BytesIO()
    np.save(buf, np.zeros((4, 2)))
    broken = bytearray(buf.getvalue())
    broken[broken.index(b"}")] = ord("(")  # the header dict is never closed
    npy = tmp_path / "swing.npy"
    npy.write_bytes(bytes(broken))
    with pytest.raises(InputError, match="not a readable .npy array") as err:
        load_swing_stance(npy)
    assert str(npy) in str(err.value)
    npz = tmp_path / "points.npz"
    with zipfile.ZipFile(npz, "w") as archive:
        archive.writestr("points.npy", bytes(broken))
    with pytest.raises(InputError, match="not a readable .npz file") as err:
        load_npz_array(npz, "points", (2,))
    assert str(npz) in str(err.value)


def test_evidence_recording_too_short_names_its_folder(tmp_path, capsys):
    # before: 'recording 'rec000' has 40 frames, too short for ...' named no folder
    # (--start 300 given: without it evidence scales the window to a short recording)
    data = tmp_path / "data"
    with pytest.raises(SystemExit):
        main(["synth", "--out", str(data), "--frames", "40"])
    capsys.readouterr()
    _refused(["evidence", "--recordings", data, "--levels", "", "--draws", "1", "--start", "300",
              "--out", tmp_path / "out"], capsys, data, "recording 'rec000' spans 40 frame numbers")


def test_conversion_names_that_are_not_text_are_a_format_error(tmp_path, capsys):
    # before: 'unexpected NotRenderableError: unable to render int' from decode's table
    from trackverify.conversion import synthetic as C

    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    submission = C.write_submission(tmp_path / "sub", {**data, "output_names": [1, "a"]})
    pkl = submission / "converted_data.pkl"
    _refused(["conversion", "decode", pkl, "--epochs", "5"], capsys, pkl,
             "name_not_text: output_names[0] is not a string (int)")


def _stage_folder(tmp_path: Path) -> Path:
    """One experiment folder holding every stage's files (the sweep's stage base)."""
    from tests.corpus.stage_cases import _world, _write_files

    world = _world()
    folder = tmp_path / "stages"
    _write_files(folder, {**world["sub"], "labels.pkl": world["gt"]["labels.pkl"]})
    return folder


def _walking(valid: Path, sub: Path, gt: Path, out: Path) -> list:
    return ["stage", "walking", "--submission", sub, "--reference", valid, "--ground-truth", gt,
            "--out", out]


@pytest.mark.parametrize("label, edit, found", [
    ("flies_dict", lambda lab: {**lab, "flies": {"a": 1}}, "KeyError: 0"),
    ("label_huge", lambda lab: {**lab, "labels": [[np.array([10 ** 30]), *lab["labels"][0][1:]]]},
     "OverflowError"),
])
def test_walking_labels_of_the_wrong_structure_are_named(tmp_path, capsys, label, edit, found):
    # before: 'unexpected KeyError: 0' / 'unexpected OverflowError: Python int too large'
    import pickle

    valid = _stage_folder(tmp_path)
    gt = tmp_path / "gt"
    shutil.copytree(valid, gt)
    labels = gt / "labels.pkl"
    labels.write_bytes(pickle.dumps(edit(pickle.loads(labels.read_bytes())), protocol=4))
    _refused(_walking(valid, valid, gt, tmp_path / "out"), capsys, labels,
             "malformed walking labels", found)


def test_walking_prediction_empty_for_a_fly_counts_its_frames_as_wrong(tmp_path, capsys):
    # before: 'unexpected IndexError: index 0 is out of bounds for axis 0 with size 0'
    import json
    import pickle

    valid = _stage_folder(tmp_path)
    sub = tmp_path / "sub"
    shutil.copytree(valid, sub)
    preds = sub / "exp_1" / "walk_preds.pkl"
    walk = pickle.loads(preds.read_bytes())
    preds.write_bytes(pickle.dumps([np.zeros(0)] + list(walk[1:]), protocol=4))
    code, lines = _run(_walking(valid, sub, valid, tmp_path / "out"), capsys)
    assert code in (0, 1) and not any("error" in line for line in lines), lines
    labels = pickle.loads((valid / "labels.pkl").read_bytes())
    fly = labels["flies"][0].index(1)  # the first fly (1-based in the labels)
    bouts = np.asarray(labels["t1s"][0][fly]) - np.asarray(labels["t0s"][0][fly])  # t1 exclusive
    record = json.loads((tmp_path / "out" / "stage.json").read_text())
    assert record["per_experiment"]["exp_1"]["frames_without_prediction"] == int(bouts.sum())


@pytest.mark.parametrize("code", [1e7, 1e308, 2 ** 64 - 1])
def test_conversion_class_code_too_large_is_a_format_error(tmp_path, capsys, code):
    # before: 1e308 and 2^64 - 1 'unexpected ValueError: 'list' argument must have no negative
    # elements' (np.bincount of the int64 cast); 1e7 a 916 MiB weight matrix for the decoder
    from trackverify.conversion import synthetic as C

    data = C.copy_dataset(C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4,
                                                         n_bins=5)))
    y = data["output"][0][0].astype(np.uint64 if code == 2 ** 64 - 1 else np.float64)
    y.flat[5] = code
    data["output"][0][0] = y
    pkl = C.write_submission(tmp_path / "sub", data) / "converted_data.pkl"
    _refused(["conversion", "decode", pkl, "--epochs", "5"], capsys, pkl,
             "output_code_too_large: session 0, trial 0: output holds class code")
