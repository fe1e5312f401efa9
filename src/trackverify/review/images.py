"""The lab's raw volumes in the review: crops around each sampled observation, at one scale
and one contrast, read lazily through :mod:`trackverify.io.volumes` (docs/guide/volumes.md).

A volume is one recording (:attr:`ImageSource.recording`, else the audit's only one). When
it is opened for a review the tracker's micrometres are checked against the image on the
anchor frame (:func:`trackverify.io.volumes.check_alignment`): its sentence is said on the
terminal and on the page, and a mapping that does not put the detections on bright blobs is
said, not refused (the reviewer sees the crops).

Crops: a square of :data:`HALF_UM` on each side of the centre voxel, as ``xy`` (maximum over
5 planes), ``xz`` and ``plane`` (:meth:`Volume.crop`), and the whole frame (``overview``).
Contrast: one pair of limits per item, the ``low`` and ``high`` percentiles of the item's
two reference crops pooled (the x-y crops of the observation and of the claimed identity's
anchor place: :func:`~trackverify.io.volumes.contrast_limits`), applied to every crop of the
item; the overview takes the same percentiles of its own pixels.

Memory: the volume's bound (its decoded-chunk cache, :data:`~trackverify.io.volumes.CACHE_BYTES`
by default, + one chunk + the box one read takes) + the crops kept for reuse, at most
:data:`KEPT_BYTES`. Reads are serialised by one lock (the readers are not thread-safe).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.volumes import (Crop, Volume, check_alignment, contrast_limits, normalise,
                                    open_volume, png_bytes)

#: Half the side of a crop, in micrometres (24 um wide: a neuron and its neighbours).
HALF_UM = 12.0
#: Views of a crop, and the overview of the whole frame.
VIEWS = ("xy", "xz", "plane", "overview")
#: Bytes of crops kept for reuse (an item's panels are asked for again when stepped through).
KEPT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class ImageSource:
    """Where the volume is and how to read it (``open_volume``'s arguments; docs/guide/volumes.md;
    ``trackverify.cli.options.VOLUME``),
    and the ``recording`` of the audit it shows (None: the audit's only one)."""

    source: str
    dataset: str | None = None
    axes: str | None = None
    voxel_um: tuple[float, ...] | None = None
    channel: str | None = None
    first_frame: int | None = None
    recording: str | None = None

    @classmethod
    def given(cls, images: str | None, **options) -> "ImageSource | None":
        """The source the command line gives (``--images`` and :data:`VOLUME` options), or None."""
        return None if images is None else cls(str(images), **options)

    def open(self) -> Volume:
        return open_volume(self.source, axes=self.axes, channel=self.channel,
                           voxel_um=self.voxel_um, dataset=self.dataset, frames=self.first_frame)

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def shown_recording(source: ImageSource, recordings) -> str:
    """The recording ``source`` shows: the one it names (which must be in ``recordings``), else
    the only one."""
    recordings = sorted({str(r) for r in recordings})
    if source.recording is not None:
        if source.recording not in recordings:
            raise InputError(f"recording {source.recording!r} is not in the audit (it holds "
                             f"{', '.join(recordings[:5])}{' ...' if len(recordings) > 5 else ''})",
                             source="--recording")
        return source.recording
    if len(recordings) != 1:
        raise InputError(f"the audit holds {len(recordings)} recordings and a volume shows one: "
                         "name it with --recording", source=source.source)
    return recordings[0]


class ReviewImages:
    """An opened volume for a review: :meth:`crop`, :meth:`png`, :meth:`voxels`; the
    ``alignment`` checked on ``anchor_frame`` with ``anchor_rows`` (the tracker's rows there)."""

    def __init__(self, source: ImageSource, recording: str, anchor_rows: pd.DataFrame,
                 anchor_frame: int):
        self.source, self.recording = source, recording
        self.volume = source.open()
        try:
            self.alignment = check_alignment(self.volume, anchor_rows, anchor_frame)
        except BaseException:
            self.volume.close()
            raise
        self.lock = threading.Lock()
        self._kept: OrderedDict = OrderedDict()
        self._kept_bytes = 0

    def describe(self) -> dict:
        """How the volume was read and whether the tracks sit on it (sample.json, the page)."""
        return {"given": self.source.as_dict(), "recording": self.recording,
                "volume": self.volume.describe(), "alignment": self.alignment.as_dict()}

    @property
    def kept_bytes(self) -> int:
        """Bytes of the crops kept for reuse (at most :data:`KEPT_BYTES`)."""
        return self._kept_bytes

    def frame_extent(self) -> list[float]:
        """A frame's outer edges in micrometres, ``[x_min, x_max, y_min, y_max]``."""
        volume = self.volume
        return [volume.origin_um[a] + (e - 0.5) * volume.voxel_um[a]
                for a in "xy" for e in (0, volume.size(a))]

    def holds(self, frame: int) -> bool:
        numbers = self.volume.frame_numbers
        at = int(np.searchsorted(numbers, frame))
        return at < len(numbers) and int(numbers[at]) == int(frame)

    def crop(self, frame: int, centre_um, view: str) -> Crop | None:
        """The ``view`` of ``frame`` around ``centre_um`` (x, y[, z]); None when the volume does
        not hold the frame (or has no z for ``xz``). Kept for reuse within :data:`KEPT_BYTES`."""
        if view not in VIEWS:
            raise InputError(f"unknown view '{view}' (one of {', '.join(VIEWS)})")
        if not self.holds(frame) or (view == "xz" and "z" not in self.volume.axes):
            return None
        key = (int(frame), view, None if view == "overview" else
               tuple(np.round(np.asarray(centre_um, dtype=float), 6)))
        with self.lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            crop = (self.volume.overview(frame) if view == "overview"
                    else self.volume.crop(frame, centre_um, HALF_UM, view))
            self._kept[key] = crop
            self._kept_bytes += crop.image.nbytes
            while self._kept_bytes > KEPT_BYTES and len(self._kept) > 1:
                self._kept_bytes -= self._kept.popitem(last=False)[1].image.nbytes
        return crop

    def limits(self, references: list[Crop | None], low: float,
               high: float) -> tuple[float, float] | None:
        """One contrast for an item: the percentiles of its reference crops pooled."""
        images = [c.image for c in references if c is not None]
        return contrast_limits(*images, low=low, high=high) if images else None

    @staticmethod
    def png(crop: Crop, limits) -> bytes:
        return png_bytes(normalise(crop.image, limits))

    def voxels(self, table: pd.DataFrame) -> pd.DataFrame:
        """``t_index, x_voxel, y_voxel, z_voxel`` of each row of ``table`` (recording, frame,
        x_um, y_um[, z_um]): the volume's time index and fractional voxel indices (voxel
        ``i``'s centre at ``i``), rounded to 0.01; empty for rows of another recording or a
        frame the volume does not hold."""
        xyz = np.column_stack([table[f"{a}_um"].to_numpy(float) if f"{a}_um" in table
                               else np.zeros(len(table)) for a in "xyz"])
        index = np.round(self.volume.to_voxels(xyz), 2)
        numbers = self.volume.frame_numbers
        frames = table["frame"].to_numpy(np.int64)
        at = np.minimum(np.searchsorted(numbers, frames), len(numbers) - 1)
        shown = (table["recording"].astype(str).to_numpy() == self.recording) & (
            numbers[at] == frames) & np.isfinite(index).all(axis=1)
        out = pd.DataFrame({"t_index": pd.array(np.where(shown, at, 0), dtype="Int64"),
                            **{f"{a}_voxel": index[:, k] for k, a in enumerate("xyz")}},
                           index=table.index)
        out.loc[~shown, :] = None
        if "z" not in self.volume.axes:
            out["z_voxel"] = np.nan
        return out

    def close(self) -> None:
        self.volume.close()


def open_images(source: ImageSource, audit: pd.DataFrame, anchors: dict[str, int]) -> ReviewImages:
    """``source`` opened for the review of ``audit`` (audit.parquet's rows), checked on the
    anchor frame (``anchors``: recording -> anchor frame) of the recording it shows."""
    recording = shown_recording(source, anchors)
    anchor = anchors[recording]
    rows = audit[(audit["recording"].astype(str) == recording)
                 & (audit["frame"].to_numpy() == anchor)]
    rows = rows[rows["pred_valid"].to_numpy(dtype=bool)] if "pred_valid" in rows else rows
    return ReviewImages(source, recording, rows, anchor)
