"""A lab's raw microscope volumes, read lazily for the review (docs/guide/volumes.md).

``open_volume(source, ...)`` -> :class:`Volume` (TIFF, folder of TIFFs, zarr / OME-Zarr,
HDF5, NWB acquisition); ``Volume.crop`` / ``Volume.overview`` -> :class:`Crop`;
``contrast_limits`` / ``normalise`` / ``png_bytes`` to show crops side by side at one
contrast; ``check_alignment`` to check the tracker's micrometres against the image.

Memory bound of one volume: its decoded-chunk cache (``cache_bytes``, default 256 MiB) + one
chunk (at most 64 MiB decoded) + the box one crop reads (at most 256 MiB; a crop of a few
dozen micrometres is kilobytes). Nothing else of the file is held.
"""

from trackverify.io.volumes.alignment import Alignment, check_alignment
from trackverify.io.volumes.chunks import CACHE_BYTES, MAX_CHUNK_BYTES, MAX_REGION_BYTES
from trackverify.io.volumes.contrast import contrast_limits, normalise, png_bytes
from trackverify.io.volumes.reader import open_volume
from trackverify.io.volumes.volume import PLANES_HALF, VIEWS, Crop, Volume

__all__ = ["open_volume", "Volume", "Crop", "VIEWS", "PLANES_HALF", "contrast_limits",
           "normalise", "png_bytes", "check_alignment", "Alignment", "CACHE_BYTES",
           "MAX_CHUNK_BYTES", "MAX_REGION_BYTES"]
