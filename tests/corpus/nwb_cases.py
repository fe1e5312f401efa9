"""Corpus cases of the NWB reader (``trackverify convert IN --to parquet``, io/nwb.py).

Two valid files are written once with the package's own writer (ROI layout with neuron
names, and the label-volume layout) and each case breaks a copy with h5py: missing groups
and links, wrong shapes, labels that do not decode, files that are not HDF5. Every case is
refused with exit 2 and a message naming the file and the group. Without the ``nwb`` extra
the generator makes no case.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.corpus.make_corpus import Case, _raw, clean_observations, generator

SEG = "processing/CalciumActivity/CalciumSeriesSegmentation"
LABELS = "processing/CalciumActivity/NeuronIDs"
VOLUME = "general/optophysiology/ImagingVolume"
ROWS = 3


def _replace(f, path: str, data, options: dict | None = None, keep_attrs: bool = True) -> None:
    """Replace dataset ``path`` of open file ``f`` by ``data`` (``options``: of create_dataset),
    keeping its attributes (its NWB type, namespace and object id) unless ``keep_attrs`` is
    false: the content is what is wrong, not the object pynwb builds from it."""
    parent, name = path.rsplit("/", 1)
    attrs = dict(f[path].attrs) if keep_attrs else {}
    del f[path]
    f[parent].create_dataset(name, data=data, **(options or {})).attrs.update(attrs)


def _ragged(h5py, values: list[np.ndarray], dtype) -> tuple[np.ndarray, dict]:
    data = np.empty(len(values), dtype=object)
    data[:] = values
    return data, {"dtype": h5py.vlen_dtype(dtype)}


def _mutations(h5py) -> dict[str, tuple[str, Callable, str]]:
    """``name: (base file, edit of the open file, fragment naming the group)``."""
    t1 = f"{SEG}/Seg_tpoint_1"
    structured = np.zeros(ROWS, dtype=[("x", "<u4"), ("y", "<u4"), ("weight", "<f4")])
    return {
        "no_module": ("rois", lambda f: f.__delitem__("processing/CalciumActivity"), SEG),
        "no_segmentation": ("rois", lambda f: f.__delitem__(SEG), SEG),
        "no_frames": ("rois", lambda f: [f[SEG].__delitem__(n) for n in list(f[SEG])],
                      "holds no Seg_tpoint_{t}"),
        "segmentation_is_dataset": ("rois", lambda f: (f.__delitem__(SEG), f.create_dataset(
            SEG, data=np.zeros(3))), f"'{SEG}' (ValueError: No data_type found)"),
        # A PlaneSegmentation without voxel masks (pynwb builds it; the layout needs them).
        "no_voxel_mask": ("rois", lambda f: (
            f.__delitem__(f"{t1}/voxel_mask"), f.__delitem__(f"{t1}/voxel_mask_index"),
            f[t1].attrs.__setitem__("colnames", [c for c in f[t1].attrs["colnames"]
                                                 if c not in ("voxel_mask", b"voxel_mask")])),
            "Seg_tpoint_1' has no 'voxel_mask'"),
        # pynwb fails on the dangling reference without naming it; the reader names it.
        "voxel_mask_deleted_under_its_index": ("rois", lambda f: f.__delitem__(
            f"{t1}/voxel_mask"), "Seg_tpoint_1/voxel_mask_index' (its attribute 'target' "
            "refers to an object that is not in the file)"),
        "no_voxel_mask_index": ("rois", lambda f: f.__delitem__(f"{t1}/voxel_mask_index"),
                                "Seg_tpoint_1' has no 'voxel_mask_index'"),
        "voxel_mask_two_columns": ("rois", lambda f: _replace(f, f"{t1}/voxel_mask",
                                                              np.zeros((ROWS, 2))),
                                   "Seg_tpoint_1/voxel_mask' must be (voxels, 4)"),
        "voxel_mask_complex": ("rois", lambda f: _replace(f, f"{t1}/voxel_mask",
                                                          np.ones((ROWS, 4)) + 1j),
                               "Seg_tpoint_1/voxel_mask' must be (voxels, 4) x, y, z, weight of "
                               "real numbers; found shape (3, 4), complex128"),
        "voxel_mask_without_z": ("rois", lambda f: _replace(f, f"{t1}/voxel_mask", structured),
                                 "Seg_tpoint_1/voxel_mask' has no field 'z'"),
        "voxel_mask_index_past_end": ("rois", lambda f: _replace(
            f, f"{t1}/voxel_mask_index", np.array([1, 2, 7])),
            "Seg_tpoint_1/voxel_mask_index' does not index voxel_mask"),
        "voxel_mask_index_decreasing": ("rois", lambda f: _replace(
            f, f"{t1}/voxel_mask_index", np.array([2, 1, 3])),
            "Seg_tpoint_1/voxel_mask_index' does not index voxel_mask"),
        "frame_with_fewer_rows": ("rois", lambda f: [
            _replace(f, f"{t1}/{name}", f[f"{t1}/{name}"][:2])
            for name in ("id", "voxel_mask_index", "voxel_mask", "track", "detection", "pred_id",
                         "pred_valid")], "Seg_tpoint_1' has 2 rows but the first frame has 3"),
        "track_column_short": ("rois", lambda f: _replace(f, f"{t1}/track", np.arange(2)),
                               "Seg_tpoint_1' (PlaneSegmentation: Columns must be the same "
                               "length)"),
        "no_imaging_plane_link": ("rois", lambda f: f.__delitem__(
            f"{SEG}/Seg_tpoint_0/imaging_plane"),
            "Seg_tpoint_0/imaging_plane' (PlaneSegmentation: missing argument 'imaging_plane')"),
        "no_grid_spacing": ("rois", lambda f: f.__delitem__(f"{VOLUME}/grid_spacing"),
                            "has no grid_spacing"),
        "grid_spacing_two_values": ("rois", lambda f: _replace(
            f, f"{VOLUME}/grid_spacing", np.array([1.0, 1.0])),
            "ImagingVolume/grid_spacing' must hold 3 finite numbers"),
        "grid_spacing_nan": ("rois", lambda f: _replace(
            f, f"{VOLUME}/grid_spacing", np.array([1.0, np.nan, 1.0])),
            "ImagingVolume/grid_spacing' must hold 3 finite numbers"),
        "grid_spacing_zero": ("rois", lambda f: _replace(
            f, f"{VOLUME}/grid_spacing", np.zeros(3)), "grid_spacing' must be > 0"),
        "grid_spacing_unknown_unit": ("rois", lambda f: f[f"{VOLUME}/grid_spacing"].attrs
                                      .__setitem__("unit", "furlongs"),
                                      "grid_spacing' has unknown unit 'furlongs'"),
        "labels_dataset_missing": ("rois", lambda f: f.__delitem__(f"{LABELS}/labels"),
                                   f"'{LABELS}/labels' (SegmentationLabels: missing argument "
                                   "'labels')"),
        "labels_undecodable_bytes": ("rois", lambda f: _replace(
            f, f"{LABELS}/labels", np.array([b"\xff\xfe", b"AVAR", b"x"])),
            f"'{LABELS}/labels' cannot be decoded as text"),
        "labels_ragged_floats": ("rois", lambda f: _replace(f, f"{LABELS}/labels", *_ragged(
            h5py, [np.array([65.5, 86.0]), np.array([1.0]), np.array([])], np.float64)),
            f"'{LABELS}/labels' cannot be decoded as text"),
        "labels_three_dimensional": ("rois", lambda f: _replace(
            f, f"{LABELS}/labels", np.full((ROWS, 2, 2), 65, dtype=np.uint8)),
            f"'{LABELS}/labels' (SegmentationLabels: incorrect shape for 'labels' (got "
            "'(3, 2, 2)'"),
        "labels_too_few": ("rois", lambda f: _replace(f, f"{LABELS}/labels", np.array([b"AVAL"])),
                           f"'{LABELS}/labels' has 1 labels for 3 neurons"),
        # Read as something else before: a character code that is no character (a surrogate
        # crashed the writer), one number per neuron (65 read as the name 'A'), UTF-8 bytes
        # of one ragged row that do not decode (read as Latin-1), a NeuronIDs that is no
        # SegmentationLabels (names silently dropped; then refused without saying which layout
        # is expected, now with the type and the attributes that make it one).
        "labels_surrogate_codes": ("rois", lambda f: _replace(
            f, f"{LABELS}/labels", np.full((ROWS, 2), 0xD800, dtype=np.int32)),
            f"'{LABELS}/labels' cannot be decoded as text (row 0 holds character code 55296"),
        "labels_one_number_per_row": ("rois", lambda f: _replace(
            f, f"{LABELS}/labels", np.array([65, 66, 67])),
            f"'{LABELS}/labels' cannot be decoded as text (one int64 number per neuron"),
        "labels_ragged_bytes_not_utf8": ("rois", lambda f: _replace(
            f, f"{LABELS}/labels", *_ragged(h5py, [np.array([0xC4], np.uint8),
                                                   np.array([66], np.uint8),
                                                   np.array([67], np.uint8)], np.uint8)),
            f"'{LABELS}/labels' cannot be decoded as text (row 0: 'utf-8' codec"),
        "labels_group_untyped": ("rois", lambda f: [
            f[LABELS].attrs.__delitem__(k) for k in list(f[LABELS].attrs)],
            f"'{LABELS}' is a group without an NWB type (no neurodata_type attribute), which "
            "NWB readers do not see; the WormID layout keeps the neuron names in a "
            "SegmentationLabels"),
        "volume_three_dimensional": ("labels", lambda f: _replace(
            f, f"{SEG}/data", np.zeros((2, 4, 4), dtype=np.uint16)),
            "CalciumSeriesSegmentation/data' (MultiChannelVolumeSeries: incorrect shape for "
            "'data' (got '(2, 4, 4)'"),
        "volume_float_labels": ("labels", lambda f: _replace(
            f, f"{SEG}/data", np.ones((2, 4, 4, 1))),
            "CalciumSeriesSegmentation/data' must hold integer labels"),
        "volume_negative_labels": ("labels", lambda f: _replace(
            f, f"{SEG}/data", np.full((2, 4, 4, 1), -1, dtype=np.int16)),
            "CalciumSeriesSegmentation/data' holds negative labels"),
        "volume_all_background": ("labels", lambda f: _replace(
            f, f"{SEG}/data", np.zeros((2, 4, 4, 1), dtype=np.uint16)),
            "CalciumSeriesSegmentation/data' holds no labelled voxel"),
        "volume_no_imaging_volume_link": ("labels", lambda f: f.__delitem__(
            f"{SEG}/imaging_volume"), "CalciumSeriesSegmentation/imaging_volume' "
            "(MultiChannelVolumeSeries: missing argument 'imaging_volume')"),
        # Read as valid before: every value below came back as pred_valid = True.
        "pred_valid_text": ("rois", lambda f: _replace(
            f, f"{t1}/pred_valid", np.array([b"False"] * ROWS)),
            "Seg_tpoint_1/pred_valid' must hold booleans (or 0/1), found |S5"),
        "pred_valid_two": ("rois", lambda f: _replace(f, f"{t1}/pred_valid", np.full(ROWS, 2)),
                           "Seg_tpoint_1/pred_valid' must hold booleans (or 0/1), found int64; "
                           "row 0 holds 2"),
        "pred_valid_half": ("rois", lambda f: _replace(
            f, f"{t1}/pred_valid", np.full(ROWS, 0.5)),
            "Seg_tpoint_1/pred_valid' must hold booleans (or 0/1), found float64; row 0 holds 0.5"),
        # Frame names: a padded twin, non-ASCII (Arabic-Indic) digits.
        "frame_name_padded": ("rois", lambda f: _twin(f, t1, f"{SEG}/Seg_tpoint_01"),
                              "Seg_tpoint_01': a frame is named Seg_tpoint_{t} with t in plain"),
        "frame_name_arabic_indic": ("rois", lambda f: f.move(t1, f"{SEG}/Seg_tpoint_\u0661"),
                                    "a frame is named Seg_tpoint_{t} with t in plain ASCII"),
        "grid_spacing_text": ("rois", lambda f: _replace(
            f, f"{VOLUME}/grid_spacing", np.array([b"1", b"1", b"x"])),
            "grid_spacing' must hold 3 numbers, found |S1"),
        # Links: dangling, external, a loop.
        "imaging_plane_dangling": ("rois", lambda f: (
            f.__delitem__(f"{SEG}/Seg_tpoint_0/imaging_plane"),
            f.__setitem__(f"{SEG}/Seg_tpoint_0/imaging_plane", h5py.SoftLink("/general/nope"))),
            "Seg_tpoint_0/imaging_plane' is a dangling link to '/general/nope'"),
        "imaging_plane_external": ("rois", lambda f: (
            f.__delitem__(f"{SEG}/Seg_tpoint_0/imaging_plane"),
            f.__setitem__(f"{SEG}/Seg_tpoint_0/imaging_plane",
                          h5py.ExternalLink("elsewhere.nwb", "/general/optophysiology/v"))),
            "Seg_tpoint_0/imaging_plane' is an external link to 'elsewhere.nwb'"),
        "soft_link_loop": ("rois", lambda f: (
            f.__setitem__(f"{SEG}/loop_a", h5py.SoftLink(f"/{SEG}/loop_b")),
            f.__setitem__(f"{SEG}/loop_b", h5py.SoftLink(f"/{SEG}/loop_a"))),
            "CalciumSeriesSegmentation/loop_a' is a soft link that cannot be resolved"),
        "hard_link_cycle": ("rois", lambda f: f.__setitem__(f"{SEG}/Seg_tpoint_0/up", f[SEG]),
                            "not a valid NWB file"),
        # Data kept outside the file: read, they would open another file (anywhere).
        "voxel_mask_external_storage": ("rois", lambda f: _replace(
            f, f"{t1}/voxel_mask", None, {"shape": f[f"{t1}/voxel_mask"].shape,
                                          "dtype": f[f"{t1}/voxel_mask"].dtype,
                                          "external": [("outside.bin", 0, h5py.h5f.UNLIMITED)]}),
            "Seg_tpoint_1/voxel_mask' keeps its data in external file(s) ['outside.bin']"),
        # Sizes the file declares but does not hold.
        "volume_huge_time_axis": ("labels", lambda f: _replace(
            f, f"{SEG}/data", None, {"shape": (10 ** 11, 4, 4, 1), "dtype": np.uint16,
                                     "chunks": (1, 4, 4, 1)}),
            "data' declares a label volume of shape (100000000000, 4, 4, 1)"),
        "volume_declared_not_stored": ("labels", lambda f: _replace(
            f, f"{SEG}/data", None, {"shape": (10 ** 6, 4, 4, 1), "dtype": np.uint16,
                                     "chunks": (1, 4, 4, 1)}),
            "data' (shape (1000000, 4, 4, 1), uint16) declares 32000000 bytes"),
        "voxel_mask_declared_not_stored": ("rois", lambda f: _replace(
            f, f"{t1}/voxel_mask", None, {"shape": (10 ** 9,), "chunks": (1024,),
                                          "dtype": f[f"{t1}/voxel_mask"].dtype}),
            "Seg_tpoint_1/voxel_mask' (shape (1000000000,)"),
        "corrupt_gzip_chunk": ("rois", lambda f: _corrupt_chunk(f, f"{t1}/voxel_mask"),
                               "cannot read the file's data"),
        # Notes that are not trackverify's: read by the schema (no dimensionality note, the
        # identifier as recording), so the fragment is the next problem, a short track column.
        "notes_nested_deeply": ("rois", lambda f: (
            _replace(f, "general/notes", "[" * 100_000 + "]" * 100_000),
            _replace(f, f"{t1}/track", np.arange(2))), "Columns must be the same length"),
        "notes_not_a_mapping": ("rois", lambda f: (
            _replace(f, "general/notes", '{"trackverify": "x"}'),
            _replace(f, f"{t1}/track", np.arange(2))), "Columns must be the same length"),
    }


def _twin(f, path: str, to: str) -> None:
    """A copy of group ``path`` at ``to`` whose index references its own voxel mask and
    whose objects have their own ids (pynwb then builds both)."""
    import uuid

    f.copy(f[path], to)
    f[f"{to}/voxel_mask_index"].attrs["target"] = f[f"{to}/voxel_mask"].ref
    for name in [None, *f[to]]:
        obj = f[to] if name is None else f[f"{to}/{name}"]
        if "object_id" in obj.attrs:
            obj.attrs["object_id"] = str(uuid.uuid4())


def _corrupt_chunk(f, path: str) -> None:
    """Rewrite ``path`` gzip-compressed, then overwrite its first chunk's bytes with 0xFF."""
    data = f[path][()]
    _replace(f, path, data, {"compression": "gzip", "chunks": (len(data),)})
    info = f[path].id.get_chunk_info(0)
    f.flush()
    with open(f.filename, "r+b") as handle:
        handle.seek(info.byte_offset)
        handle.write(b"\xff" * info.size)


def _convert(root: Path, case: str, source: Path, fragments: list[str]) -> Case:
    out = root / case / "out"
    return Case(case, ["convert", str(source), "--to", "parquet", "--out", str(out)], 2,
                fragments, out)


@generator
def nwb_cases(root: Path) -> list[Case]:
    try:
        import h5py

        from trackverify.io.nwb import write_nwb
    except ImportError:
        return []
    obs = clean_observations(frames=3, tracks=ROWS)
    obs["neuron_name"] = ["AVAL", "AVAR?", ""] * 3
    base = {"rois": write_nwb(obs, root / "nwb_base" / "rois.nwb"),
            "labels": write_nwb(obs.drop(columns="neuron_name"), root / "nwb_base" / "labels.nwb",
                                layout="labels", voxel_um=5.0)}
    data = {layout: path.read_bytes() for layout, path in base.items()}
    cases = []
    for name, (layout, edit, fragment) in _mutations(h5py).items():
        case = f"nwb_{name}"
        path = _raw(root, case, "w.nwb", data[layout])
        with h5py.File(path, "a") as f:
            edit(f)
        cases.append(_convert(root, case, path, [str(path), fragment]))
    for name, raw, fragment in [
        ("empty_file", b"", "not a readable NWB (HDF5) file"),
        ("text_file", b"recording,frame\nr1,0\n", "not a readable NWB (HDF5) file"),
        ("truncated", data["rois"][: len(data["rois"]) // 3], "not a readable NWB (HDF5) file"),
    ]:
        path = _raw(root, f"nwb_{name}", "w.nwb", raw)
        cases.append(_convert(root, f"nwb_{name}", path, [str(path), fragment]))
    # Writing: a voxel size or coordinates that would overflow the voxel grid or collapse
    # positions (convert --to nwb of a valid table).
    table = clean_observations(frames=2, tracks=ROWS)
    far = table.assign(x_um=table["x_um"] + 1e300 * (table["track"] == 1))
    for name, frame, extra, fragment in [
        ("write_voxel_tiny", table, ["--voxel-um", "1e-300"], "positions span too many voxels"),
        # refused by the table's coordinate bound (beyond 1e9 um) before the writer sees them
        ("write_coordinates_1e300", far, [], "coordinate is implausibly large"),
        ("write_coordinates_1e19", table.assign(x_um=table["x_um"] * 1e18), ["--voxel-um", "1"],
         "coordinate is implausibly large"),
    ]:
        source = _raw(root, f"nwb_{name}", "obs.csv", frame.to_csv(index=False).encode())
        out = root / f"nwb_{name}" / "out"
        cases.append(Case(f"nwb_{name}", ["convert", str(source), "--to", "nwb", "--out",
                                          str(out), *extra], 2, [fragment], out))
    # Two files of one folder with the same identifier (duplicate rows before).
    folder = root / "nwb_folder_same_identifier" / "in"  # beside out: never around it
    _raw(root, "nwb_folder_same_identifier/in", "a.nwb", data["rois"])
    twin = _raw(root, "nwb_folder_same_identifier/in", "b.nwb", data["rois"])
    cases.append(_convert(root, "nwb_folder_same_identifier", folder,
                          [str(twin), "holds recording 'r1'"]))
    # A folder of NWB files: the broken one is named.
    # (the folder beside the case's out folder: --out may not lie inside an input)
    folder = root / "nwb_folder_one_broken" / "in"
    _raw(root, "nwb_folder_one_broken/in", "a.nwb", data["rois"])
    broken = _raw(root, "nwb_folder_one_broken/in", "b.nwb", b"\x89HDF\r\n\x1a\n broken")
    cases.append(_convert(root, "nwb_folder_one_broken", folder,
                          [str(broken), "not a readable NWB (HDF5) file"]))
    return cases
