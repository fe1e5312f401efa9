"""Corpus cases of bounded reads (src/trackverify/io/bounded.py, docs/reference/robustness.md).

Inputs that would block, never end, or ask for more memory than the machine has: a FIFO
or ``/dev/zero`` where a file is expected, JSON and TOML nested 10^5 deep, a ``.npy``
header claiming 336 GB, ``--epochs`` far beyond the decoder's stated maximum. Each is
refused (exit 2, or the AnDi verdict naming the file) before anything is read from it.
"""

from __future__ import annotations

import io
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.corpus.andi_cases import _base, _score
from tests.corpus.make_corpus import Case, _raw, _write, clean_observations, generator
from tests.corpus.tracker_csv_cases import LAPTRACK_SPLIT, LAPTRACK_TRACKS, v7_edges, v7_spots
from trackverify.conversion import synthetic as C

DEEP = 100_000


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


def huge_npy_header(shape=(14_000_000_000, 3)) -> bytes:
    """A ``.npy`` file whose header claims ``shape`` float64 (336 GB) followed by 24 bytes."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue() + np.zeros(3).tobytes()


@generator
def bounded_cases(root: Path) -> list[Case]:
    if not hasattr(os, "mkfifo"):  # pragma: no cover - POSIX only
        return []
    cases = []
    specials = {"fifo": _fifo, "dev_zero": _zero}
    for kind, make in specials.items():
        name = f"bounded_config_{kind}"
        config = make(root / name / "run.toml")
        cases.append(Case(name, ["run", "--config", str(config), "--out", str(root / name / "out")],
                          2, [str(config), "expected a regular config file"], root / name / "out"))
        name = f"bounded_table_{kind}"
        table = make(root / name / "obs.csv")
        cases.append(Case(name, ["run", "--data", str(table), "--out", str(root / name / "out")],
                          2, [str(table), "expected a regular file"], root / name / "out"))
        name = f"bounded_partitions_{kind}"
        data = _write(clean_observations(), root / name / "obs.csv")
        partitions = make(root / name / "partitions.json")
        cases.append(Case(name, ["run", "--data", str(data), "--partitions", str(partitions),
                                 "--out", str(root / name / "out")], 2,
                          [str(partitions), "expected a regular partitions file"],
                          root / name / "out"))
        for side in ("res", "ref"):  # the submission's ensemble file, the reference's
            name = f"bounded_andi_{'ensemble' if side == 'res' else 'reference'}_{kind}"
            folder = root / name / "input"
            _base(folder)
            special = folder / side / "track_2/exp_0/ensemble_labels.txt"
            special.unlink()
            make(special)
            cases.append(
                _score(root, name, ["exp_0/ensemble_labels.txt: cannot score the ensemble",
                                    "expected a regular file"]) if side == "res" else
                _score(root, name, [], 2, [str(special), "expected a regular reference"]))
        name = f"bounded_andi_vip_{kind}"  # track 1's reference VIP indices
        folder = root / name / "input"
        _base(folder)
        for side in ("ref", "res"):
            (folder / side / "track_2").rename(folder / side / "track_1")
        vip = make(folder / "ref/track_1/exp_0/vip_idx_fov_0.txt")
        cases.append(_score(root, name, [], 2, [str(vip), "expected a regular reference file"]))
    for name, text, fragment in [
        ("toml_deep_array", "[run]\nconditions = " + "[" * DEEP + "]" * DEEP + "\n", "TOML"),
        ("toml_deep_table", "[run]\nseed = " + "{a=" * DEEP + "1" + "}" * DEEP + "\n", "TOML"),
    ]:
        config = _raw(root, f"bounded_{name}", "run.toml", text.encode())
        out = root / f"bounded_{name}" / "out"
        cases.append(Case(f"bounded_{name}", ["run", "--config", str(config), "--out", str(out)],
                          2, [str(config), fragment, "nested too deeply"], out))
    name = "bounded_partitions_deep_json"
    data = _write(clean_observations(), root / name / "obs.csv")
    partitions = _raw(root, name, "partitions.json", ("[" * DEEP + "]" * DEEP).encode())
    cases.append(Case(name, ["run", "--data", str(data), "--partitions", str(partitions), "--out",
                             str(root / name / "out")], 2,
                      [str(partitions), "nested too deeply"], root / name / "out"))
    name = "bounded_npy_header_336_gb"
    pairs = root / name / "pairs"
    for example, array in (("a", "pts_tar"), ("b", "pts_gt"), ("b", "pts_tar")):
        np.save(_raw(root, name, f"pairs/{example}/{array}.npy", b""), np.zeros((3, 3)))
    gt = _raw(root, name, "pairs/a/pts_gt.npy", huge_npy_header())
    cases.append(Case(name, ["evidence", "--pairs", str(pairs), "--levels", "", "--grid",
                             "default", "--out", str(root / name / "out")], 2,
                      [str(gt), "declares 336000000000 bytes"], root / name / "out"))
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    for command in ("decode", "check"):
        name = f"bounded_decoder_epochs_{command}"
        submission = C.write_submission(root / name / "submission", data)
        target = submission / "converted_data.pkl" if command == "decode" else submission
        out = root / name / ("out/decoder.json" if command == "decode" else "out")
        cases.append(Case(name, ["conversion", command, str(target), "--epochs", str(10 ** 12),
                                 "--out", str(out)], 2, ["--epochs", "10000"], root / name / "out"))
    return cases


# Container formats: a GEFF zarr store, CTC label TIFFs, the JSON beside napari and ZephIR
# files, a folder where a file is expected (src/trackverify/io/formats, docs/reference/robustness.md).

GEFF_AXES = [{"name": "t", "type": "time"}, {"name": "x", "type": "space", "unit": "micrometer"},
             {"name": "y", "type": "space", "unit": "micrometer"}]


def _zarray(shape, chunks, dtype: str) -> str:
    return json.dumps({"shape": list(shape), "chunks": list(chunks), "dtype": dtype,
                       "fill_value": 0, "order": "C", "filters": None, "compressor": None,
                       "dimension_separator": ".", "zarr_format": 2})


def geff_store(folder: Path, nodes: int = 4, t_dtype: str = "int64") -> Path:
    """A GEFF 1.1 store (zarr v2, uncompressed; metadata the geff library accepts) of two
    tracks of two nodes: node i at frame i // 2, x = i, y = 2 i; links 0 -> 2 and 1 -> 3.
    ``nodes`` > 4 declares that many nodes (the arrays' shapes) while the chunk files stay
    those of four; ``t_dtype``: the frame property's declared type."""
    props = {name: {"identifier": name, "dtype": dtype, "varlength": False}
             for name, dtype in (("t", t_dtype), ("x", "float64"), ("y", "float64"))}
    files = {".zgroup": '{"zarr_format": 2}',
             ".zattrs": json.dumps({"geff": {"geff_version": "1.1", "directed": True,
                                             "axes": GEFF_AXES, "node_props_metadata": props,
                                             "edge_props_metadata": {}}}),
             "edges/ids/.zarray": _zarray((2, 2), (2, 2), "<i8"),
             "edges/ids/0.0": np.array([[0, 2], [1, 3]], "<i8").tobytes(),
             "nodes/ids/.zarray": _zarray((nodes,), (4,), "<i8"),
             "nodes/ids/0": np.arange(4, dtype="<i8").tobytes()}
    for name, values in (("t", np.arange(4) // 2), ("x", np.arange(4.0)), ("y", np.arange(4.0) * 2)):
        dtype = "<i8" if values.dtype.kind == "i" else "<f8"
        files[f"nodes/props/{name}/values/.zarray"] = _zarray((nodes,), (4,), dtype)
        files[f"nodes/props/{name}/values/0"] = values.astype(dtype).tobytes()
        files[f"nodes/props/{name}/.zgroup"] = '{"zarr_format": 2}'
    for group in ("edges", "nodes", "nodes/props"):
        files[f"{group}/.zgroup"] = '{"zarr_format": 2}'
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


def ctc_folder(folder: Path, image=None) -> Path:
    """A CTC result: track 1 in frame 0, its label image ``mask000.tif`` (8 x 8, label 1 on
    four pixels) unless ``image`` is given (then ``image(path)`` makes it)."""
    import tifffile

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "res_track.txt").write_text("1 0 0 0\n")
    path = folder / "mask000.tif"
    if image is None:
        labels = np.zeros((8, 8), np.uint16)
        labels[2:4, 2:4] = 1
        tifffile.imwrite(path, labels)
    else:
        image(path)
    return folder


def _labels_as(dtype) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        import tifffile

        labels = np.zeros((8, 8), dtype)
        labels[2:4, 2:4] = -1 if np.dtype(dtype).kind == "i" else 1.5
        tifffile.imwrite(path, labels)
    return write


def _tiled_bomb(path: Path) -> None:
    """20000 x 20000 uint16 (4e8 pixels, 800 MB) in zlib tiles of zeros: about 0.9 MB (the
    tile of zeros is compressed once and written 400 times)."""
    import tifffile

    tile = zlib.compress(np.zeros((1024, 1024), np.uint16).tobytes())
    with tifffile.TiffWriter(path) as tiff:
        tiff.write((tile for _ in range(20 * 20)), shape=(20_000, 20_000), dtype=np.uint16,
                   tile=(1024, 1024), compression="zlib")


def _many_pages(path: Path) -> None:
    """10,001 pages of 1 x 1 pixel, label 1 on the first: one page more than is read."""
    import tifffile

    pages = np.zeros((10_001, 1, 1), np.uint8)
    pages[0] = 1
    with tifffile.TiffWriter(path) as tiff:
        tiff.write(pages, metadata=None)


def zephir_annotations(path: Path) -> Path:
    """A ZephIR annotations.h5 of one worldline in two frames."""
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as h5:
        for name, values in (("t_idx", [0, 1]), ("worldline_id", [0, 0]), ("x", [0.5, 0.6]),
                             ("y", [0.5, 0.5]), ("z", [0.0, 0.0]), ("provenance", [b"ZEIR"] * 2)):
            h5[name] = np.array(values)
    return path


@generator
def bounded_container_cases(root: Path) -> list[Case]:
    cases = []

    def case(name: str, source: Path, fmt: str, fragments: list[str]) -> None:
        out = root / name / "out"
        cases.append(Case(name, ["convert", str(source), "--format", fmt, "--to", "parquet",
                                 "--out", str(out)], 2, fragments, out))

    secret = _raw(root, "bounded_geff_chunk_link_outside", "secret.bin", b"SECRET!!" * 4)
    name = "bounded_geff_chunk_link_outside"  # a chunk linked to a file beside the store
    store = geff_store(root / name / "g.zarr")
    chunk = store / "nodes/props/x/values/0"
    chunk.unlink()
    chunk.symlink_to(secret)
    case(name, store, "geff", [str(chunk), f"a link to {secret}", "not followed"])
    # the store's .zattrs linked to a file outside: refused before it is opened (detection
    # read its first 64 KiB; a file without "geff" gave "not a GEFF store")
    name = "bounded_geff_zattrs_link_outside"
    secret = _raw(root, name, "secret.txt", b"not json, not geff\n")
    store = geff_store(root / name / "g.zarr")
    (store / ".zattrs").unlink()
    (store / ".zattrs").symlink_to(secret)
    case(name, store, "geff", [str(store / ".zattrs"), f"a link to {secret}", "not followed"])
    if hasattr(os, "mkfifo"):
        name = "bounded_geff_chunk_fifo"
        store = geff_store(root / name / "g.zarr")
        chunk = store / "nodes/props/x/values/0"
        chunk.unlink()
        _fifo(chunk)
        case(name, store, "geff", [str(chunk), "found a FIFO"])
    name = "bounded_geff_declared_2_gib"  # 2^28 nodes declared, chunks of four nodes stored
    store = geff_store(root / name / "g.zarr", nodes=2**28)
    case(name, store, "geff", [str(store), "array 'nodes/ids' declares shape [268435456]",
                               "at most 1073741824"])
    name = "bounded_geff_zattrs_deep"
    store = geff_store(root / name / "g.zarr")
    (store / ".zattrs").write_text('{"geff": {"extra": ' + "[" * DEEP + "]" * DEEP + "}}")
    case(name, store, "geff", [str(store / ".zattrs"), "nested too deeply"])
    name = "bounded_geff_shape_nan"
    store = geff_store(root / name / "g.zarr")
    text = (store / "nodes/ids/.zarray").read_text().replace('"shape": [4]', '"shape": [NaN]')
    (store / "nodes/ids/.zarray").write_text(text)
    case(name, store, "geff", [str(store), "Expected an iterable of integers"])

    name = "bounded_ctc_tiff_bomb"
    folder = ctc_folder(root / name / "ctc", _tiled_bomb)
    case(name, folder, "ctc", [str(folder / "mask000.tif"), "(20000, 20000)",
                               "at most 200000000"])
    name = "bounded_ctc_tiff_10001_pages"
    folder = ctc_folder(root / name / "ctc", _many_pages)
    case(name, folder, "ctc", [str(folder / "mask000.tif"), "10001 pages; at most 10000"])
    outside = ctc_folder(root / "bounded_ctc_image_link_outside" / "other")
    name = "bounded_ctc_image_link_outside"  # the image of another result folder
    folder = ctc_folder(root / name / "ctc", lambda p: p.symlink_to(outside / "mask000.tif"))
    case(name, folder, "ctc", [str(folder / "mask000.tif"), "outside", "not followed"])
    if hasattr(os, "mkfifo"):
        name = "bounded_ctc_image_fifo"
        folder = ctc_folder(root / name / "ctc", _fifo)
        case(name, folder, "ctc", [str(folder / "mask000.tif"), "found a FIFO"])
    if hasattr(os, "mkfifo"):  # a FIFO res_track.txt: was "no res_track.txt or man_track.txt here"
        name = "bounded_ctc_track_file_fifo"
        folder = ctc_folder(root / name / "ctc")
        (folder / "res_track.txt").unlink()
        _fifo(folder / "res_track.txt")
        case(name, folder, "ctc", [str(folder / "res_track.txt"), "expected a regular track file, "
                                   "found a FIFO"])
    for kind, dtype in (("float", np.float32), ("complex", np.complex64), ("negative", np.int16)):
        name = f"bounded_ctc_{kind}_labels"
        folder = ctc_folder(root / name / "ctc", _labels_as(dtype))
        case(name, folder, "ctc", [str(folder / "mask000.tif"),
                                   "negative label values" if kind == "negative" else
                                   f"integer array, got {np.dtype(dtype)}"])

    name = "bounded_napari_graph_deep"
    tracks = _raw(root, name, "tracks.csv", b"ID,t,y,x\n1,0,2.0,3.0\n2,1,2.5,3.5\n")
    graph = _raw(root, name, "graph.json", ('{"2": ' + "[" * DEEP + "]" * DEEP + "}").encode())
    case(name, tracks, "napari", [str(graph), "nested too deeply"])
    if hasattr(os, "mkfifo"):  # a FIFO where the graph JSON is: refused, no longer skipped
        name = "bounded_napari_graph_fifo"
        tracks = _raw(root, name, "tracks.csv", b"ID,t,y,x\n1,0,2.0,3.0\n2,1,2.5,3.5\n")
        graph = _fifo(root / name / "graph.json")
        case(name, tracks, "napari", [str(graph), "found a FIFO"])
    for name, make, fragment in (
            ("bounded_zephir_metadata_deep",
             lambda p: p.write_text('{"shape_x": ' + "[" * DEEP + "]" * DEEP + "}"),
             "nested too deeply"),
            ("bounded_zephir_worldlines_fifo", _fifo, "found a FIFO")):
        annotations = zephir_annotations(root / name / "annotations.h5")
        special = root / name / ("metadata.json" if "metadata" in name else "worldlines.h5")
        if "metadata" not in name:
            (root / name / "metadata.json").write_text('{"shape_x": 10, "shape_y": 10, "shape_z": 1}')
        if make is not _fifo or hasattr(os, "mkfifo"):
            make(special)
            case(name, annotations, "zephir", [str(special), fragment])
    # ZephIR's metadata.json linked to a file out of the annotations' folder: was followed
    name = "bounded_zephir_metadata_link_outside"
    other = _raw(root, name, "elsewhere/metadata.json",
                 b'{"shape_x": 10, "shape_y": 10, "shape_z": 1}')
    annotations = zephir_annotations(root / name / "in" / "annotations.h5")
    (annotations.parent / "metadata.json").symlink_to(other)
    case(name, annotations, "zephir", [str(annotations.parent / "metadata.json"),
                                       f"a link to {other}", "not followed"])
    # A companion file looked for beside the input (TrackMate's edges table, laptrack's split
    # table, napari's graph): a FIFO or a link out of the folder under its name is refused,
    # not skipped as absent (the tracks were read without their links, exit 0).
    edges = v7_edges([(0, 0, 1), (0, 1, 2), (1, 3, 4), (1, 4, 5)])
    for fmt, input_name, text, name_beside, beside_text in (
            ("trackmate_csv", "run_spots.csv", v7_spots(), "run_edges.csv", edges),
            ("laptrack", "l.csv", LAPTRACK_TRACKS, "l_split.csv", LAPTRACK_SPLIT),
            ("napari", "tracks.csv", "ID,t,y,x\n1,0,2.0,3.0\n2,1,2.5,3.5\n", "graph.json",
             '{"2": [1]}')):
        stem = fmt
        other = _raw(root, f"bounded_{stem}_companion_link_outside", "elsewhere/" + name_beside,
                     beside_text.encode())
        name = f"bounded_{stem}_companion_link_outside"
        source = _raw(root, name, "in/" + input_name, text.encode())
        (source.parent / name_beside).symlink_to(other)
        case(name, source, fmt, [str(source.parent / name_beside), f"a link to {other}",
                                 "not followed"])
        cases[-1].args += ["--pixel-size", "1"] if fmt == "napari" else []
        if hasattr(os, "mkfifo") and fmt != "napari":  # napari's FIFO graph: case above
            name = f"bounded_{stem}_companion_fifo"
            source = _raw(root, name, input_name, text.encode())
            _fifo(source.parent / name_beside)
            case(name, source, fmt, [str(source.parent / name_beside), "found a FIFO"])
    name = "bounded_trackmate_folder"  # a folder given to a reader of one file
    folder = root / name / "tracks.xml"
    folder.mkdir(parents=True)
    case(name, folder, "trackmate", [str(folder), "expected a regular file, found a folder"])
    return cases


@generator
def span_cases(root: Path) -> list[Case]:
    """A recording whose frame numbers span 2**31 (frames 0, 1 and 2**31 - 1; 12 rows) and
    settings that name a layout or a module that cannot exist. Each ended in the net's
    ``MemoryError`` (registered_distance laid out 2**31 frames) or ``TypeError`` before."""
    cases = []
    far = clean_observations(frames=3, tracks=4)
    far["frame"] = far["frame"].replace({2: 2**31 - 1})
    name = "bounded_frames_span_2_31_verify"
    table = _write(far, root / name / "obs.csv")
    cases.append(Case(name, ["verify", "--observations", str(table), "--conditions", "control",
                             "--out", str(root / name / "out")], 2,
                      [str(table), "recording 'r1' spans 2147483648 frame numbers",
                       "registration of registered_distance", "more than the 5e+07"],
                      root / name / "out"))
    name = "bounded_frames_span_2_31_audit"
    table = _write(far.drop(columns=["track"]), root / name / "tracks.csv")
    cases.append(Case(name, ["audit", str(table), "--out", str(root / name / "out")], 2,
                      [str(table), "recording 'r1' spans 2147483648 frame numbers"],
                      root / name / "out"))
    name = "bounded_verifier_relative_module"
    table = _write(clean_observations(), root / name / "obs.csv")
    cases.append(Case(name, ["verify", "--observations", str(table), "--conditions", "control",
                             "--verifier", "../../etc:passwd", "--out", str(root / name / "out")],
                      2, ["'../../etc' is not a module name"], root / name / "out"))
    name = "bounded_calibration_number_of_5001_digits"  # Python's int_max_str_digits: 4300
    tracks = _write(clean_observations().drop(columns=["track"]), root / name / "tracks.csv")
    calibration = root / name / "calibration.json"
    calibration.write_text('{"threshold_um": 1' + "0" * 5000 + "}")
    cases.append(Case(name, ["audit", str(tracks), "--calibration", str(calibration),
                             "--out", str(root / name / "out")], 2,
                      [str(calibration), "not valid JSON", "value has 5001 digits"],
                      root / name / "out"))
    return cases
