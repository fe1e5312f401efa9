"""Cell Tracking Challenge results: ``res_track.txt`` / ``man_track.txt`` + label TIFFs.

The track file has one line ``L B E P`` per track: label ``L`` is present from frame ``B``
to frame ``E`` (inclusive) and ``P`` is the parent track's label (0 = none). The label
images are the TIFFs beside it (``mask###.tif`` for results, ``man_track###.tif`` for the
reference), the number being the frame. Read: one point per label per frame, at the
centroid of the label's pixels (the mean of their indices, by ``np.bincount``: x = column,
y = row, z = plane for 3-D stacks). ``track = L``, ``parent_track = P`` (null for 0).

Give the track file, the folder holding it, or a reference ``*_GT`` folder holding ``TRA/``. Label images are read with ``tifffile``
(LZW / deflate compression needs ``imagecodecs``; both in the ``formats`` extra). Units are
pixels: the files carry no calibration, so give ``--pixel-size``. The folder is validated as the
Challenge validates results (:func:`validate_tracks`: no label outside or missing inside its
``B..E`` range, none missing from the track file, parents known and ending before their
children begin); a break is one error naming the file, the label and the frame.

Safety: a label image must be a regular file in the track file's folder (no FIFO, no link
out of it), and is read only when it has at most :data:`MAX_LABEL_PAGES` pages and its
declared size at most ``MAX_LABEL_VOXELS`` = 2e8 voxels (a compressed TIFF of a few MB can
declare 10^10 pixels, which tifffile would allocate before decoding).
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.extras import require
from trackverify.io.bounded import MAX_LABEL_VOXELS, companion, inside, regular_file
from trackverify.io.formats.base import Calibration, Tracks
from trackverify.io.formats.convert import parent_ids
from trackverify.tables import lookup

TRACK_FILES = ("res_track.txt", "man_track.txt")
IMAGE_NAME = re.compile(r"^(?:mask|man_track)(\d+)\.tiff?$", re.IGNORECASE)
MAX_LABEL = 2**24
"""Highest label value read (the Challenge's labels are 16-bit): a label image holding a
larger value is refused, as is a negative one."""
MAX_LABEL_PAGES = 10_000
"""Most pages (2-D planes) of one label image: far more z planes than a microscope stack."""


def track_file(path: Path) -> Path | None:
    """The track file of a result folder or of a reference ``*_GT`` folder's ``TRA/`` (a FIFO or a link out of the folder under its name
    is refused, not reported absent: :func:`companion`), or ``path`` if it is a file."""
    if path.is_dir():
        if (path / "TRA").is_dir():  # a reference *_GT folder: TRA/ (and SEG/)
            path = path / "TRA"
        return companion(*(path / n for n in TRACK_FILES), what="track file")
    return path if path.is_file() else None


def sniff(path: Path) -> bool:
    """A ``*_track.txt`` whose first line is four integers, or that is empty (a result with
    no tracks) with label images beside it: the folder's layout says CTC."""
    found = track_file(path)
    if found is None or not found.name.lower().endswith("_track.txt"):
        return False
    with open(found, "rb") as handle:
        head = handle.read(256)
    line = head.split(b"\n", 1)[0].split()
    if not head.strip():
        return any(IMAGE_NAME.match(p.name) for p in found.parent.iterdir())
    return len(line) == 4 and all(part.isdigit() for part in line)


def read_track_table(path: Path) -> pd.DataFrame:
    """The ``L B E P`` lines of a track file (none for a result with no tracks: an empty
    file; a reference without tracks is refused by its reader, :func:`trackverify.graph.ctc.
    ctc_folder`, or by the reference table's validation)."""
    where = str(path)
    try:
        table = pd.read_csv(path, sep=r"\s+", header=None, names=["L", "B", "E", "P"],
                            dtype=np.int64, comment="#")
    except (ValueError, OverflowError, pd.errors.ParserError) as exc:  # OverflowError: beyond int64
        raise InputError(f"not a CTC track file of 'L B E P' integer lines ({exc})",
                         source=where) from exc
    bad = (table["L"] < 1) | (table["B"] < 0) | (table["E"] < table["B"]) | (table["P"] < 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        L, B, E, P = (int(v) for v in table.iloc[i])
        raise InputError(f"label {L} (frames {B}..{E}, parent {P}) breaks L >= 1, B >= 0, "
                         "E >= B, P >= 0", source=where, row=i + 1)
    if table["L"].duplicated().any():
        i = int(np.flatnonzero(table["L"].duplicated().to_numpy())[0])
        raise InputError(f"label {int(table['L'].iloc[i])} appears twice (second line from "
                         f"frame {int(table['B'].iloc[i])})", source=where, column="L",
                         row=i + 1)
    return table


def label_centroids(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels >= 1 present, centroids (n, ndim) in x, y[, z] order)`` of one label image.

    Only foreground pixels are visited: their flat indices give the pixel coordinates
    (``np.unravel_index``) and one weighted ``np.bincount`` per axis sums them per label.
    """
    flat = labels.ravel()
    foreground = np.flatnonzero(flat)
    values = flat[foreground]
    problem = label_range_problem(values)
    if problem:
        raise ValueError(problem)
    values = values.astype(np.int64, copy=False)
    counts = np.bincount(values)
    present = np.flatnonzero(counts)
    coordinates = np.unravel_index(foreground, labels.shape)
    sums = [np.bincount(values, weights=c.astype(np.float64), minlength=len(counts))[present]
            for c in coordinates]
    # array axes are (z,) y, x; the points are x, y(, z)
    return present, np.stack(sums[::-1], axis=1) / counts[present][:, None]


def label_range_problem(values: np.ndarray) -> str | None:
    """Why label values are refused (negative, or above :data:`MAX_LABEL`), or None."""
    if not values.size:
        return None
    low, high = int(values.min()), int(values.max())
    if low < 0:
        return f"negative label values (lowest {low}; 0 is background, cells are >= 1)"
    if high > MAX_LABEL:
        return f"label values above {MAX_LABEL} (highest {high})"
    return None


def _declared(tiff, image: Path) -> None:
    """Refuse a label image with more than :data:`MAX_LABEL_PAGES` pages or whose first
    series declares more than ``MAX_LABEL_VOXELS`` voxels, before it is decoded."""
    pages = len(tiff.pages)  # follows the page offsets only; 10^6 pages take about a second
    if pages > MAX_LABEL_PAGES:
        raise InputError(f"the label image has {pages} pages; at most {MAX_LABEL_PAGES} are "
                         "read", source=str(image))
    shape = tuple(int(n) for n in tiff.series[0].shape) if tiff.series else ()
    if math.prod(shape) > MAX_LABEL_VOXELS:
        raise InputError(f"the label image declares shape {shape} ({math.prod(shape)} voxels); "
                         f"at most {MAX_LABEL_VOXELS} are read", source=str(image))


def _quiet_imread(tifffile, image: Path) -> np.ndarray:
    """The label image's first series, its size checked first (:func:`_declared`), without
    tifffile's log lines: a damaged TIFF makes tifffile log what it skipped on stderr before
    it raises, which would precede the one error line."""
    log = logging.getLogger("tifffile")
    disabled, log.disabled = log.disabled, True
    try:
        with tifffile.TiffFile(image) as tiff:
            _declared(tiff, image)
            return np.asarray(tiff.asarray())
    finally:
        log.disabled = disabled


def read_label_image(tifffile, image: Path, folder: Path) -> np.ndarray:
    """One label image of a CTC folder: a regular file inside ``folder``, its declared size
    checked (:func:`_quiet_imread`), a 2-D or 3-D integer array of labels 0..
    :data:`MAX_LABEL` (:func:`label_range_problem`); else one named error."""
    regular_file(inside(image, folder, what="label image"), what="label image")
    try:
        data = _quiet_imread(tifffile, image)
    except InputError:
        raise
    except Exception as exc:  # tifffile raises many types for damaged or exotic files
        hint = " (compressed TIFFs need imagecodecs: pip install 'trackverify[formats]')" \
            if "imagecodecs" in str(exc) else ""
        raise InputError(f"not a readable label image ({exc}){hint}", source=str(image)) from exc
    if data.ndim not in (2, 3) or not np.issubdtype(data.dtype, np.integer):
        raise InputError(f"a label image must be a 2-D or 3-D integer array, got "
                         f"{data.dtype} {data.shape}", source=str(image))
    problem = label_range_problem(data)
    if problem:
        raise InputError(problem, source=str(image))
    return data


def validate_tracks(tracks: pd.DataFrame, frame: np.ndarray, label: np.ndarray, found: Path,
                    images: dict) -> None:
    """The Challenge's validity rules for a track file and the labels its images hold
    (``frame``, ``label``: one entry per label present in an image). Each break is one
    :class:`InputError` naming the file, the label and the frame:

    - every image label is a track of the file, inside its frames ``B..E``;
    - every track is in every image of its frames ``B..E`` (no gap, no line without masks);
    - a parent is a track of the file and ends before its child begins (``E_P < B``).

    (``L >= 1``, unique labels, ``B <= E``, ``P >= 0``: :func:`read_track_table`.)"""
    L, B, E, P = (tracks[c].to_numpy(np.int64) for c in ("L", "B", "E", "P"))
    known = np.isin(label, L)
    if not known.all():
        i = int(np.flatnonzero(~known)[0])
        raise InputError(f"label {label[i]} of frame {frame[i]} is not in {found.name}",
                         source=str(images[int(frame[i])]))
    at = lookup(L, label)
    outside = (frame < B[at]) | (frame > E[at])
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(f"label {label[i]} is in frame {frame[i]}, outside its frames "
                         f"{B[at[i]]}..{E[at[i]]} in {found.name}",
                         source=str(images[int(frame[i])]))
    has_parent = P > 0
    p_at = lookup(L, P)
    unknown = has_parent & (p_at < 0)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"label {L[i]} (frame {B[i]}) has parent {P[i]}, which is not a track "
                         "of the file", source=str(found), column="P", row=i + 1)
    late = has_parent & ~unknown & (E[p_at] >= B)
    if late.any():
        i = int(np.flatnonzero(late)[0])
        raise InputError(f"label {L[i]} begins in frame {B[i]} but its parent {P[i]} ends in "
                         f"frame {E[p_at[i]]} (a parent must end before its child begins)",
                         source=str(found), column="P", row=i + 1)
    span = E - B + 1
    if int(span.sum()) > 10**8:
        raise InputError("the track file declares more than 10^8 label-frames",
                         source=str(found))
    want_label = np.repeat(L, span)
    want_frame = np.repeat(B, span) + np.arange(int(span.sum())) - np.repeat(
        np.cumsum(span) - span, span)
    n = int(max(L.max(initial=0), label.max(initial=0))) + 1
    missing = lookup(frame * n + label, want_frame * n + want_label) < 0
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        t, lab = int(want_frame[i]), int(want_label[i])
        row = int(np.flatnonzero(L == lab)[0])
        where = f"frame {t}" if t in images else f"frame {t}, which has no label image,"
        raise InputError(f"label {lab} is missing from {where} inside its frames "
                         f"{B[row]}..{E[row]} in {found.name}",
                         source=str(images.get(t, found)))


def read(path: Path) -> Tracks:
    found = track_file(path)
    if found is None:
        raise InputError(f"no {' or '.join(TRACK_FILES)} here", source=str(path))
    tracks = read_track_table(found)
    images = sorted((int(m.group(1)), p) for p in found.parent.iterdir()
                    if (m := IMAGE_NAME.match(p.name)))
    if not images:
        raise InputError("no label images (mask###.tif or man_track###.tif) beside the track "
                         "file: CTC positions come from the label images", source=str(found))
    tifffile = require("tifffile", "formats", "reading Cell Tracking Challenge label images")
    frames, labels, points = [], [], []
    for frame, image in images:
        data = read_label_image(tifffile, image, found.parent)
        try:
            present, centroid = label_centroids(data)
        except ValueError as exc:
            raise InputError(str(exc), source=str(image)) from exc
        frames.append(np.full(len(present), frame, dtype=np.int64))
        labels.append(present)
        points.append(centroid)
    ndims = {p.shape[1] for p in points if len(p)}
    if len(ndims) > 1:
        raise InputError("the label images mix 2-D and 3-D", source=str(found.parent))
    ndim = ndims.pop() if ndims else 2
    frame = np.concatenate(frames)
    label = np.concatenate(labels)
    xyz = np.concatenate([p.reshape(-1, ndim) for p in points])
    validate_tracks(tracks, frame, label, found, dict(images))
    by_label = tracks.set_index("L")
    parent = by_label.loc[label, "P"].to_numpy()
    table = pd.DataFrame({"frame": frame, "track": label})
    for axis, name in enumerate("xyz"[:ndim]):
        table[name] = xyz[:, axis]
    table["parent_track"] = parent_ids(parent, parent == 0)
    table = table.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    details = {"track_file": str(found), "label_images": len(images),
               "tracks": int(len(tracks)), "tracks_with_parent": int((tracks["P"] > 0).sum())}
    return Tracks(table, Calibration("pixel", None, "none (CTC files carry no pixel size)"), details)
