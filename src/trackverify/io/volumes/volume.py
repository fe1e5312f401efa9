"""A lab's raw volume read lazily: axes, channel, voxel size, frames, and the crops a reviewer
looks at.

Coordinates: a voxel's *centre* is at ``origin_um + index * voxel_um`` on each spatial axis
(OME-NGFF's scale and translation; origin 0 unless the file states one), the tracker's
``x_um, y_um, z_um`` in the same micrometres. A crop is a 2-D float32 image in voxels whose
row 0 is the smallest coordinate of its vertical axis, with its ``extent_um`` = (left, right,
bottom, top) edges: ``(h_min, h_max, v_min, v_max)``, so that a point ``(h, v)`` is drawn at
column ``(h - h_min) / (h_max - h_min) * width`` and row ``(v - v_min) / (v_max - v_min) *
height`` (pixels are not square when the voxels are not: scale the image by its extent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.volumes.chunks import (CACHE_BYTES, ChunkCache, Chunked, chunk_ranges,
                                           read_region)

AXES = "tczyx"
SPATIAL = ("x", "y", "z")
VIEWS = ("xy", "xz", "plane")

PLANES_HALF = 2
"""The x-y view is the maximum over the plane nearest the centre and ``PLANES_HALF`` = 2
planes either side (5 planes; 7.5 um at 1.5 um a plane); the x-z view is the maximum over
the rows within the same depth (``PLANES_HALF`` z spacings) either side of the centre."""

OVERVIEW_PIXELS = 256
"""The overview's longer side, at most: the frame's maximum projection over z, block maxima."""

MAX_OVERVIEW_VOXELS = 1_000_000_000
"""Largest frame (z x y x x of one channel) an overview reads: 1e9 voxels, chunk by chunk."""


@dataclass(frozen=True)
class Crop:
    """A 2-D view of a volume (module docstring): ``image`` (rows = ``axes[0]``, columns =
    ``axes[1]``; NaN outside the volume) and ``extent_um`` = ``(h_min, h_max, v_min, v_max)``,
    the outer edges of the first and last columns and rows in micrometres."""

    image: np.ndarray
    extent_um: tuple[float, float, float, float]
    axes: tuple[str, str]
    frame: int
    view: str
    planes: tuple[int, int] | None = None  # z index range [first, last] projected (xy, plane)

    @property
    def pixel_um(self) -> tuple[float, float]:
        """(row height, column width) in micrometres."""
        h0, h1, v0, v1 = self.extent_um
        rows, cols = self.image.shape
        return (v1 - v0) / rows, (h1 - h0) / cols


@dataclass
class Volume:
    """A lazily read volume; built by :func:`~trackverify.io.volumes.open_volume`."""

    array: Chunked
    axes: str
    voxel_um: dict[str, float]
    origin_um: dict[str, float]
    channel: int | None = None
    channel_names: list[str] | None = None
    frame_numbers: np.ndarray | None = None
    found: dict[str, str] = field(default_factory=dict)  # where each setting came from
    cache_bytes: int = CACHE_BYTES
    closers: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.cache = ChunkCache(self.cache_bytes)
        if self.frame_numbers is None:
            self.frame_numbers = np.arange(self.size("t"), dtype=np.int64)

    # -- geometry
    @property
    def source(self) -> str:
        return self.array.source

    def size(self, axis: str) -> int:
        """The volume's extent along ``axis`` (1 for an axis it does not have)."""
        return int(self.array.shape[self.axes.index(axis)]) if axis in self.axes else 1

    @property
    def frame_shape(self) -> tuple[int, int, int]:
        """(z, y, x) voxels of one frame."""
        return self.size("z"), self.size("y"), self.size("x")

    def frame_index(self, frame: int) -> int:
        """The time index of the tracker's ``frame`` (InputError naming the frames held)."""
        numbers = self.frame_numbers
        at = int(np.searchsorted(numbers, frame))
        if at >= len(numbers) or numbers[at] != frame:
            raise InputError(f"frame {frame} is not in the volume, which holds "
                             f"{len(numbers)} frame(s) numbered {numbers[0]}..{numbers[-1]}"
                             if len(numbers) else "the volume holds no frame",
                             source=self.source)
        return at

    def check_frames(self, frames, what: str = "the tracks") -> None:
        """Refuse when ``frames`` (the tracker's frame numbers) are not all in the volume."""
        frames = np.unique(np.asarray(frames, dtype=np.int64))
        missing = frames[~np.isin(frames, self.frame_numbers)]
        if missing.size:
            raise InputError(f"{what} have {missing.size} frame(s) the volume does not hold "
                             f"(first {int(missing[0])}); its time axis holds "
                             f"{len(self.frame_numbers)} frame(s) numbered "
                             f"{int(self.frame_numbers[0])}..{int(self.frame_numbers[-1])}"
                             " (give frames= for another numbering)", source=self.source)

    def to_voxels(self, points_um) -> np.ndarray:
        """``(n, 3)`` x, y, z micrometres -> fractional voxel indices (x, y, z)."""
        points = np.asarray(points_um, dtype=np.float64).reshape(-1, 3)
        origin = np.array([self.origin_um[a] for a in SPATIAL])
        step = np.array([self.voxel_um[a] for a in SPATIAL])
        return (points - origin) / step

    def describe(self) -> dict[str, Any]:
        """The volume as read: shape by axis, voxel size, channel, frames, where each came from."""
        return {"source": self.source, "axes": self.axes,
                "shape": dict(zip(self.axes, map(int, self.array.shape))),
                "dtype": str(self.array.dtype), "chunks": list(map(int, self.array.chunks)),
                "voxel_um": dict(self.voxel_um), "origin_um": dict(self.origin_um),
                "channel": self.channel, "channel_names": self.channel_names,
                "frames": [int(self.frame_numbers[0]), int(self.frame_numbers[-1])]
                if len(self.frame_numbers) else None, "found": dict(self.found)}

    # -- reading
    def read(self, frame: int, z: range, y: range, x: range) -> np.ndarray:
        """The (z, y, x) box of ``frame`` (ranges within the frame), of the volume's dtype."""
        return self._box(self.frame_index(frame), z, y, x)

    def _region(self, t: int, z: range, y: range, x: range) -> tuple[slice, ...]:
        wanted = {"t": range(t, t + 1), "c": range(self.channel or 0, (self.channel or 0) + 1),
                  "z": z, "y": y, "x": x}
        return tuple(slice(wanted[a].start, wanted[a].stop) for a in self.axes)

    def _box(self, t: int, z: range, y: range, x: range, keep: bool = True) -> np.ndarray:
        data = read_region(self.array, self._region(t, z, y, x), self.cache, keep)
        order = [self.axes.index(a) for a in AXES if a in self.axes]
        data = data.transpose(order)
        return data.reshape(len(z), len(y), len(x))

    def _centre(self, center_um) -> dict[str, int]:
        centre = np.asarray(center_um, dtype=np.float64).ravel()
        if centre.size not in (2, 3) or not np.all(np.isfinite(centre)):
            raise InputError("a crop's centre is 2 or 3 finite micrometre values (x, y[, z])")
        values = dict(zip(SPATIAL, centre))
        if "z" not in self.axes:  # a 2-D volume: every z is its one plane
            values["z"] = self.origin_um["z"]
        values.setdefault("z", self.origin_um["z"])
        return {a: int(np.floor((values[a] - self.origin_um[a]) / self.voxel_um[a] + 0.5))
                for a in SPATIAL}

    def _span(self, axis: str, index: int, half: int) -> tuple[range, range]:
        """The wanted index range ``index +- half`` and its part inside the volume."""
        wanted = range(index - half, index + half + 1)
        inside = range(max(wanted.start, 0), min(wanted.stop, self.size(axis)))
        return wanted, inside if len(inside) else range(0)

    def _edges(self, axis: str, wanted: range) -> tuple[float, float]:
        o, d = self.origin_um[axis], self.voxel_um[axis]
        return o + (wanted.start - 0.5) * d, o + (wanted.stop - 0.5) * d

    def crop(self, frame: int, center_um, half_width_um: float, view: str = "xy") -> Crop:
        """A square crop of ``frame`` around ``center_um`` (x, y[, z] um), ``half_width_um`` on
        each side of the centre voxel, as ``view``: ``xy`` (maximum over the 2 * PLANES_HALF
        + 1 planes around the centre), ``plane`` (the plane nearest the centre) or ``xz``
        (rows z, columns x; maximum over the rows within PLANES_HALF z spacings of the
        centre's y). Voxels outside the volume are NaN; the extent is the requested one."""
        if view not in VIEWS:
            raise InputError(f"unknown view '{view}' (one of {', '.join(VIEWS)})")
        if not (isinstance(half_width_um, (int, float)) and 0 < half_width_um < math.inf):
            raise InputError(f"a crop's half width is a positive number of um, not "
                             f"{half_width_um!r}")
        t = self.frame_index(frame)
        centre = self._centre(center_um)
        half = {a: int(math.ceil(half_width_um / self.voxel_um[a] - 1e-9)) for a in SPATIAL}
        depth = {"z": PLANES_HALF if view == "xy" else 0,
                 "y": int(round(PLANES_HALF * self.voxel_um["z"] / self.voxel_um["y"]))}
        if view == "xz":
            if "z" not in self.axes:
                raise InputError("a volume without a z axis has no x-z view", source=self.source)
            spans = {"x": self._span("x", centre["x"], half["x"]),
                     "y": self._span("y", centre["y"], depth["y"]),
                     "z": self._span("z", centre["z"], half["z"])}
            rows, reduce_axis, axes = "z", 1, ("z", "x")
        else:
            spans = {"x": self._span("x", centre["x"], half["x"]),
                     "y": self._span("y", centre["y"], half["y"]),
                     "z": self._span("z", centre["z"], depth["z"])}
            rows, reduce_axis, axes = "y", 0, ("y", "x")
        wanted_rows, wanted_cols = spans[rows][0], spans["x"][0]
        image = np.full((len(wanted_rows), len(wanted_cols)), np.nan, dtype=np.float32)
        if all(len(spans[a][1]) for a in SPATIAL):
            box = self._box(t, spans["z"][1], spans["y"][1], spans["x"][1])
            flat = box.max(axis=reduce_axis).astype(np.float32)
            r0 = spans[rows][1].start - wanted_rows.start
            c0 = spans["x"][1].start - wanted_cols.start
            image[r0:r0 + flat.shape[0], c0:c0 + flat.shape[1]] = flat
        extent = (*self._edges("x", wanted_cols), *self._edges(rows, wanted_rows))
        planes = None if view == "xz" or not len(spans["z"][1]) else \
            (spans["z"][1].start, spans["z"][1].stop - 1)
        return Crop(image, tuple(float(e) for e in extent), axes, int(frame), view, planes)

    def overview(self, frame: int, pixels: int = OVERVIEW_PIXELS) -> Crop:
        """The whole of ``frame``: its maximum projection over z, reduced by block maxima to
        at most ``pixels`` on the longer side; chunks are read one at a time and not kept
        (memory: one chunk and one chunk-sized plane besides the output)."""
        t = self.frame_index(frame)
        nz, ny, nx = self.frame_shape
        if nz * ny * nx > MAX_OVERVIEW_VOXELS:
            raise InputError(f"a frame of {nz} x {ny} x {nx} voxels is larger than the "
                             f"{MAX_OVERVIEW_VOXELS:.0e} an overview reads", source=self.source)
        step = max(1, math.ceil(max(ny, nx) / pixels))
        out = np.full((math.ceil(ny / step), math.ceil(nx / step)), -np.inf, dtype=np.float32)
        region = self._region(t, range(nz), range(ny), range(nx))
        dims = {a: i for i, a in enumerate(self.axes)}
        grid = chunk_ranges(self.array, region)
        size = {a: self.array.chunks[dims[a]] if a in dims else 1 for a in "zyx"}
        spans = {a: [range(i * size[a], min((i + 1) * size[a], n)) for i in
                     (grid[dims[a]] if a in dims else range(1))]
                 for a, n in zip("zyx", (nz, ny, nx))}
        for y in spans["y"]:
            for x in spans["x"]:
                plane = np.full((len(y), len(x)), -np.inf, dtype=np.float32)
                for z in spans["z"]:  # one chunk at a time, not kept
                    np.maximum(plane, self._box(t, z, y, x, keep=False).max(axis=0), out=plane)
                _block_max(out, plane, y.start, x.start, step)
        extent = (*self._edges("x", range(0, out.shape[1] * step)),
                  *self._edges("y", range(0, out.shape[0] * step)))
        return Crop(out, tuple(float(e) for e in extent), ("y", "x"), int(frame), "overview",
                    (0, nz - 1))

    def close(self) -> None:
        """Close the files the readers hold open."""
        while self.closers:
            self.closers.pop()()

    def __enter__(self) -> "Volume":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _block_max(out: np.ndarray, plane: np.ndarray, y0: int, x0: int, step: int) -> None:
    """``out[i, j] = max(out[i, j], max of plane's voxels in block (i, j))`` for the blocks
    of ``step`` x ``step`` voxels of the whole frame that ``plane`` (starting at y0, x0) meets."""
    rows = np.arange(y0, y0 + plane.shape[0]) // step
    cols = np.arange(x0, x0 + plane.shape[1]) // step
    row_starts = np.flatnonzero(np.r_[True, np.diff(rows) > 0])
    col_starts = np.flatnonzero(np.r_[True, np.diff(cols) > 0])
    blocks = np.maximum.reduceat(np.maximum.reduceat(plane, row_starts, axis=0), col_starts,
                                 axis=1)
    target = np.ix_(rows[row_starts], cols[col_starts])
    out[target] = np.maximum(out[target], blocks)
