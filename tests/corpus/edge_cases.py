"""Corpus cases of the readers' edges: results read silently wrong, defects caught only at the
top ("a defect of trackverify"), valid files refused, and messages of more than one line
(docs/reference/robustness.md, "Read at the edge").

Each case failed on the code before its fix:

* **silent results** -- ids typed differently in the two files of ``evaluate`` (integers in
  one, text in the other) met with no word said; integers above 2^53 beside a null in a
  Parquet file (pandas reads them as float64: 2^53 + 1 became 2^53), plain and
  dictionary-encoded; a decimal id ``9007199254740993.0`` read as 9007199254740992; MOT ids
  and ZephIR float ids of 2^53 or more (two tracks became one);
* **defects** -- an ``.npz`` member that is not a ``.npy`` array (numpy hands back its
  bytes), compressed with a method Python cannot read, encrypted, a bzip2 bomb, a corrupt
  deflate stream; walking labels whose bout spans 2^41 frames (16 TiB);
* **valid files refused, or refused without saying why** -- an NWB table column (non-ASCII
  track names) stored without its NWB type; an NWB frame name of 5,000 digits;
* **messages** -- an NWB frame index of 2^63 (a numpy warning and a wrong reason), a GEFF
  frame of 1e300 (the same), the pixel warning printed once per file when one
  ``--pixel-size`` answers both;
* **found by attacking every reader again** (:func:`attacker_cases`) -- TrackMate and btrack
  frames beyond any frame, a TrackMate TRACK_ID beyond int64, btrack spans that overlap, and
  an ``.npz`` member named without ``.npy`` (numpy reads it; the header check skipped it).
"""

from __future__ import annotations

import io
import pickle
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from tests.corpus.bounded_cases import huge_npy_header
from tests.corpus.evaluate_cases import predictions, reference
from tests.corpus.make_corpus import Case, _raw, _write, generator
from tests.corpus.stage_cases import EXP, _world, _write_files

BIG = 2**53  # the first integer float64 cannot tell from its successor


def _evaluate(root: Path, name: str, ref: Path, pred: Path, code: int, fragments: list[str],
              report: list[str] | None = None, extra: tuple[str, ...] = ()) -> Case:
    out = root / name / "out"
    args = ["evaluate", "--reference", str(ref), "--predictions", str(pred), *extra,
            "--out", str(out)]
    if report is None:
        return Case(name, args, code, fragments, out)
    return Case(name, args, code, fragments, out, out / "results.json", report)


def _arrow_parquet(df: pd.DataFrame, path: Path, integers: dict[str, list],
                   dictionary: bool = False) -> Path:
    """``df`` as Parquet written by pyarrow itself (no pandas metadata, as other tools write
    it), with ``integers`` as int64 columns holding nulls (dictionary-encoded if asked)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df.drop(columns=[c for c in integers if c in df]),
                                 preserve_index=False)
    for name, values in integers.items():
        column = pa.array(values, pa.int64())
        table = table.append_column(name, column.dictionary_encode() if dictionary else column)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(None), path)
    return path


def silent_cases(root: Path) -> list[Case]:
    cases = []
    # Ids typed differently by the two files meet by the integers' text: said, not silent.
    ref, pred = reference(), predictions()
    folder = root / "edge_recording_ids_integers_and_text"
    ref_int = _write(ref.assign(recording=ref["recording"].str[1:].astype(int)),
                     folder / "ref.parquet")
    pred_text = _write(pred.assign(recording=pred["recording"].str[1:]), folder / "pred.parquet")
    said = f"the recording ids are integers in {ref_int} and text in {pred_text}"
    cases.append(_evaluate(root, folder.name, ref_int, pred_text, 0, [said],
                           [said, '"correct_observation_rate": 1.0']))
    folder = root / "edge_detection_ids_integers_and_text"
    pred_text = _write(pred.assign(detection=pred["detection"].astype(str)),
                       folder / "pred.parquet")
    ref_plain = _write(ref, folder / "ref.parquet")
    said = f"the detection ids are integers in {ref_plain} and text in {pred_text}"
    cases.append(_evaluate(root, folder.name, ref_plain, pred_text, 0, [said], [said]))
    # Six ids from 2^53 beside a null, int64 in Parquet: read exactly (float64 made them 3).
    ids = [BIG + i for i in range(6)]
    for name, dictionary in (("edge_pred_id_above_2_53_null_parquet", False),
                             ("edge_pred_id_above_2_53_null_dictionary_parquet", True)):
        folder = root / name
        frames = 4
        grid = [(x, y) for y in (0.0, 8.0) for x in (0.0, 8.0, 16.0)]
        rows = pd.DataFrame([(t, i, x + 0.3 * t, y) for t in range(frames)
                             for i, (x, y) in enumerate(grid)],
                            columns=["frame", "detection", "x_um", "y_um"])
        pred_ids = [ids[d] for d in rows["detection"]]
        pred_ids[-1] = None
        tracks = _arrow_parquet(rows.assign(pred_valid=[v is not None for v in pred_ids]),
                                folder / "tracks.parquet", {"pred_id": pred_ids}, dictionary)
        out = folder / "out"
        cases.append(Case(name, ["audit", str(tracks), "--out", str(out)], 0, [], out,
                          out / "tracks.csv", [f",{i}," for i in ids]))
    # A decimal id of 2^53 + 1: float64 reads 2^53, another id than the one written.
    folder = root / "edge_decimal_id_2_53_plus_1_csv"
    obs = pd.DataFrame({"recording": "r1", "frame": np.repeat(np.arange(12), 2),
                        "track": np.tile(["1.0", f"{BIG + 1}.0"], 12),
                        "detection": np.tile([0, 1], 12), "x_um": np.tile([0.0, 10.0], 12),
                        "y_um": 0.0, "pred_id": np.tile([100, 101], 12), "pred_valid": True})
    path = _write(obs, folder / "obs.csv")
    cases.append(Case(folder.name, ["verify", "--observations", str(path), "--start", "3",
                                    "--recovery-end", "8", "--out", str(folder / "out")], 2,
                      [str(path), "column 'track', row 2", "of 2^53 or more"], folder / "out"))
    # MOT ids 2^53 and 2^53 + 1: two tracks read as one through float64.
    folder = root / "edge_mot_ids_above_2_53"
    lines = "".join(f"{t},{i},{10.0 * k},5.0,2,2,1,-1,-1,-1\n" for t in (1, 2)
                    for k, i in enumerate((BIG, BIG + 1)))
    path = _raw(root, folder.name, "tracks.txt", lines.encode())
    cases.append(Case(folder.name, ["convert", str(path), "--format", "mot", "--to", "parquet",
                                    "--out", str(folder / "out")], 2,
                      [str(path), "column 'id', row 1", "below 2^53, found '9007199254740992'"],
                      folder / "out"))
    # ZephIR worldline ids stored as floats of 2^53: maybe 2^53 + 1 (refused, not merged).
    import h5py

    from tests.corpus.bounded_cases import zephir_annotations

    folder = root / "edge_zephir_float_ids_2_53"
    path = zephir_annotations(folder / "annotations.h5")
    with h5py.File(path, "a") as h5:
        del h5["worldline_id"]
        h5["worldline_id"] = np.array([BIG, BIG], dtype=np.float64)
    _raw(root, folder.name, "metadata.json", b'{"shape_x": 10, "shape_y": 10, "shape_z": 1}')
    cases.append(Case(folder.name, ["convert", str(path), "--format", "zephir", "--to",
                                    "parquet", "--out", str(folder / "out")], 2,
                      [str(path), "'worldline_id' must hold whole numbers below 2^53"],
                      folder / "out"))
    return cases


def _npz_member(data: bytes, name: str = "pred.npy", method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as archive:
        archive.writestr(name, data)
    return buf.getvalue()


def _patched(archive: bytes, *, method: int | None = None, flags: int | None = None) -> bytes:
    """``archive`` (one member) with the member's compression method or flag bits rewritten
    in its local header and in the central directory."""
    data = bytearray(archive)
    for magic, method_at, flags_at in ((b"PK\x03\x04", 8, 6), (b"PK\x01\x02", 10, 8)):
        at = data.find(magic)
        if method is not None:
            data[at + method_at:at + method_at + 2] = method.to_bytes(2, "little")
        if flags is not None:
            data[at + flags_at:at + flags_at + 2] = flags.to_bytes(2, "little")
    return bytes(data)


def _corrupt_deflate(array_bytes: bytes) -> bytes:
    """A deflate member whose stream is damaged after its first kilobyte."""
    data = bytearray(_npz_member(array_bytes, method=zipfile.ZIP_DEFLATED))
    start = data.find(b"PK\x03\x04") + 30 + len("pred.npy")
    data[start + 1024:start + 1088] = b"\xff" * 64
    return bytes(data)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def stage_defect_cases(root: Path) -> list[Case]:
    world = _world()
    base = root / "edge_stage_world"
    for role in ("ref", "gt", "sub"):
        _write_files(base / role, world[role])
    pred = np.load(io.BytesIO(world["sub"][f"{EXP}/keypoint_preds.npz"]))["pred"]
    noisy = np.random.default_rng(50).normal(size=(400, 21, 2))  # deflate cannot shrink it much
    bomb = _npz_member(_npy(np.zeros(2 * 10**6)), method=zipfile.ZIP_BZIP2)  # 16 MB of zeros
    cases = []
    for name, role, content, fragment in [
        ("member_bytes", "sub", _npz_member(b"these are not numpy bytes"),
         "member 'pred.npy' is not a .npy array"),
        ("member_bytes_gt", "gt", _npz_member(b"not numpy", "keypoints.npy"),
         "member 'keypoints.npy' is not a .npy array"),
        ("member_zstandard", "sub", _patched(_npz_member(_npy(pred)), method=93),
         "member 'pred.npy' is compressed with zip method 93, which cannot be read"),
        ("member_encrypted", "sub", _patched(_npz_member(_npy(pred)), flags=1),
         "member 'pred.npy' is encrypted"),
        ("member_bzip2_bomb", "sub", bomb,
         "more than 1100 per stored byte: the archive is damaged or a decompression bomb"),
        ("member_without_suffix_huge_header", "sub",  # np.load reads 'pred' too; the
         _npz_member(huge_npy_header((10**12, 21, 2)), "pred"),  # header check skipped it
         "the header of member 'pred' declares 336000000000000 bytes"),
        ("member_deflate_damaged", "sub", _corrupt_deflate(_npy(noisy)),
         "member 'pred.npy' cannot be read (Error -3 while decompressing data"),
    ]:
        case = f"edge_stage_keypoints_{name}"
        folders = {r: base / r for r in ("ref", "gt", "sub")}
        folders[role] = root / case / role
        shutil.copytree(base / role, folders[role])
        rel = f"{EXP}/keypoints_gt.npz" if role == "gt" else f"{EXP}/keypoint_preds.npz"
        path = folders[role] / rel
        path.write_bytes(content)
        out = root / case / "out"
        args = ["stage", "keypoints", *(f"--{flag}={folders[r]}" for flag, r in
                                        (("submission", "sub"), ("reference", "ref"),
                                         ("ground-truth", "gt"))), "--out", str(out)]
        if role == "sub":  # a broken submission is a verdict: fail, the reason in stage.json
            cases.append(Case(case, args, 1, [], out, out / "stage.json",
                              [str(path), fragment, '"fail"']))
        else:
            cases.append(Case(case, args, 2, [str(path), fragment], out))
    labels = world["gt"]["labels.pkl"]
    case = "edge_stage_walking_bout_of_2_41_frames"
    gt = root / case / "gt"
    shutil.copytree(base / "gt", gt)
    t1s = [[np.r_[t[:-1], 2**41] for t in sample] for sample in labels["t1s"]]
    (gt / "labels.pkl").write_bytes(pickle.dumps({**labels, "t1s": t1s}))
    out = root / case / "out"
    cases.append(Case(case, ["stage", "walking", "--submission", str(base / "sub"),
                             "--reference", str(base / "ref"), "--ground-truth", str(gt),
                             "--out", str(out)], 2,
                      [str(gt / "labels.pkl"), "t1s[0][0][0] = 2199023255552: with this bout "
                       "the labels cover more than the 10000000 frames"], out))
    return cases


def nwb_edge_cases(root: Path) -> list[Case]:
    try:
        import h5py

        from trackverify.io.nwb import write_nwb
    except ImportError:
        return []
    from tests.corpus.make_corpus import clean_observations
    from tests.corpus.nwb_cases import SEG, _replace

    names = np.array(["Ä0", "神経", "b"], dtype=object)
    obs = clean_observations(frames=3, tracks=3)
    obs = obs.assign(track=names[obs["track"]], pred_id=names[obs["track"]])
    base = write_nwb(obs, root / "edge_nwb_base" / "unicode.nwb")
    cases = []

    def case(name: str, edit, fragment: str) -> None:
        path = _raw(root, name, "w.nwb", base.read_bytes())
        with h5py.File(path, "a") as f:
            edit(f)
        out = root / name / "out"
        cases.append(Case(name, ["convert", str(path), "--to", "parquet", "--out", str(out)], 2,
                          [str(path), fragment], out))

    case("edge_nwb_track_column_untyped", lambda f: [
        _replace(f, f"{SEG}/Seg_tpoint_{t}/track", list(names), {"dtype": h5py.string_dtype()},
                 keep_attrs=False) for t in range(3)],
        f"'{SEG}/Seg_tpoint_0/track' (listed in the table's colnames, stored without an NWB "
        "type: every column of an NWB table is a VectorData")
    case("edge_nwb_frame_2_63", lambda f: f.move(f"{SEG}/Seg_tpoint_1",
                                                 f"{SEG}/Seg_tpoint_{2**63}"),
         f"Seg_tpoint_{2**63}': frame {2**63} is implausibly large (frames are at most "
         "2147483647)")
    case("edge_nwb_frame_of_5000_digits", lambda f: f.move(f"{SEG}/Seg_tpoint_1",
                                                           f"{SEG}/Seg_tpoint_{'9' * 5000}"),
         "is implausibly large (frames are at most 2147483647)")
    return cases


def message_edge_cases(root: Path) -> list[Case]:
    cases = []
    # A 2-D prediction in pixels against a 3-D reference in pixels (trackers' formats without
    # a calibration): one --pixel-size answers both, so the warning is one line naming both
    # files (it was printed once per file).
    folder = root / "edge_pixel_warning_once"
    ref = reference()
    ref = ref[ref["recording"] == "r1"]
    ref = pd.DataFrame({"z": ref["z_um"], "y": ref["y_um"], "x": ref["x_um"], "mass": 1.0,
                        "size": 1.0, "ecc": 0.0, "signal": 1.0, "raw_mass": 1.0, "ep": 0.0,
                        "frame": ref["frame"], "particle": ref["track"]})
    ref_path = _write(ref, folder / "ref.csv")
    pred = predictions()
    pred = pred[pred["recording"] == "r1"]
    lines = "".join(f"{f + 1},{i},{x - 1},{y - 1},2,2,1,-1,-1,-1\n" for f, i, x, y in
                    zip(pred["frame"], pred["pred_id"], pred["x_um"], pred["y_um"]))
    pred_path = _raw(root, folder.name, "pred.txt", lines.encode())
    cases.append(_evaluate(root, folder.name, ref_path, pred_path, 2, [
        f"{ref_path} and {pred_path}: coordinates are in pixel and both files have no "
        "calibration", "predictions are 2-D but the reference is 3-D"],
        extra=("--reference-format", "trackpy", "--predictions-format", "mot")))
    # A GEFF frame of 1e300: cast to int64 with numpy's warning, then "frame must be >= 0".
    from tests.corpus.bounded_cases import geff_store

    folder = root / "edge_geff_frame_1e300"
    store = geff_store(folder / "g.zarr", t_dtype="float64")
    frames = np.array([0.0, 0.0, 1e300, 1.0], "<f8")
    (store / "nodes/props/t/values/0").write_bytes(frames.tobytes())
    zarray = store / "nodes/props/t/values/.zarray"
    zarray.write_text(zarray.read_text().replace('"<i8"', '"<f8"'))
    out = folder / "out"
    cases.append(Case(folder.name, ["convert", str(store), "--format", "geff", "--to",
                                    "parquet", "--out", str(out)], 2,
                      [str(store), "column 't': node 3 has frame 1.0000000000000001e+300, "
                       "not a whole number in 0..2147483647"], out))
    return cases


TRACKMATE = ('<?xml version="1.0" encoding="UTF-8"?>\n<TrackMate version="7"><Model '
             'spatialunits="micron" timeunits="s"><AllSpots><SpotsInFrame frame="0">'
             '<Spot ID="20" FRAME="0" POSITION_X="0" POSITION_Y="0" POSITION_Z="0" name="a"/>'
             '<Spot ID="21" FRAME="{frame}" POSITION_X="1" POSITION_Y="0" POSITION_Z="0" '
             'name="b"/></SpotsInFrame></AllSpots><AllTracks><Track TRACK_ID="{track}">'
             '<Edge SPOT_SOURCE_ID="20" SPOT_TARGET_ID="21"/></Track></AllTracks>'
             '<FilteredTracks><TrackID TRACK_ID="{track}"/></FilteredTracks></Model>'
             '<Settings><ImageData nslices="1"/></Settings></TrackMate>\n')


def _btrack(path: Path, *, spans: np.ndarray | None = None, t: float = 1.0) -> Path:
    """A btrack HDF5 file of one track of two objects (frames 0 and ``t``), or with the
    track map ``spans`` over as many objects as the spans reach."""
    import h5py

    n = 2 if spans is None else int(spans.max())
    coords = np.zeros((n, 5))
    coords[1, 0] = t
    spans = np.array([[0, 2]]) if spans is None else spans
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as h5:
        h5["objects/obj_type_1/coords"] = coords
        h5["tracks/obj_type_1/tracks"] = np.arange(n)
        h5["tracks/obj_type_1/map"] = spans
        h5["tracks/obj_type_1/LBEPR"] = np.tile([1, 0, 1, 1, 1, 0], (len(spans), 1))
    return path


def attacker_cases(root: Path) -> list[Case]:
    """Found by attacking every reader once more: a TrackMate FRAME of 1e300 (a numpy
    warning, then 'frame must be >= 0') and a TRACK_ID beyond int64 (OverflowError);
    btrack track maps whose spans overlap (10^5 spans of all 10^5 objects, a 2.4 MB file,
    asked for 80 GB) and an object at frame inf."""
    cases = []

    def convert(name: str, path: Path, fmt: str, fragments: list[str]) -> None:
        out = root / name / "out"
        cases.append(Case(name, ["convert", str(path), "--format", fmt, "--to", "parquet",
                                 "--out", str(out)], 2, [str(path), *fragments], out))

    for name, frame, track, fragment in [
        ("frame_1e300", "1e300", "5", "column 'FRAME': node 2 has frame "
         "1.0000000000000001e+300, not a whole number in 0..2147483647"),
        ("track_id_2_63", "1", str(2**63), f"column 'TRACK_ID': TRACK_ID {2**63} is beyond "
         "the 64-bit range")]:
        path = _raw(root, f"edge_trackmate_{name}", "t.xml",
                    TRACKMATE.format(frame=frame, track=track).encode())
        convert(f"edge_trackmate_{name}", path, "trackmate", [fragment])
    n = 10**5
    path = _btrack(root / "edge_btrack_spans_overlap" / "tracks.h5",
                   spans=np.tile([0, n], (n, 1)))
    convert("edge_btrack_spans_overlap", path, "btrack",
            [f"tracks/obj_type_1/map spans {n * n} entries of tracks/obj_type_1/tracks, which "
             f"holds {n}: the spans overlap"])
    path = _btrack(root / "edge_btrack_frame_inf" / "tracks.h5", t=np.inf)
    convert("edge_btrack_frame_inf", path, "btrack",
            ["column 'objects/obj_type_1/coords t': node 2 has frame inf"])
    return cases


@generator
def edge_cases(root: Path) -> list[Case]:
    return [*silent_cases(root), *stage_defect_cases(root), *nwb_edge_cases(root),
            *message_edge_cases(root), *attacker_cases(root)]
