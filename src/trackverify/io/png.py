"""A small PNG writer (zlib, no imaging library): the reports' raster images and the review's
volume crops."""

from __future__ import annotations

import struct
import zlib

import numpy as np

from trackverify.errors import InputError

#: PNG colour type by the number of channels: grey, grey + alpha, RGB, RGBA.
COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + \
        struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_pixels(pixels: np.ndarray) -> bytes:
    """An 8-bit PNG of ``pixels`` (``uint8``, ``H x W`` grey or ``H x W x C`` with ``C`` 1
    grey, 2 grey + alpha, 3 RGB, 4 RGBA); row 0 is the PNG's top row. Deterministic bytes.

    >>> png_pixels(np.zeros((1, 2, 3), np.uint8))[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    pixels = np.asarray(pixels)
    if pixels.ndim == 2:
        pixels = pixels[..., np.newaxis]
    if (pixels.dtype != np.uint8 or pixels.ndim != 3 or 0 in pixels.shape[:2]
            or pixels.shape[2] not in COLOUR_TYPES):
        raise InputError(f"a PNG is made of a non-empty uint8 image of 1-4 channels, not "
                         f"{pixels.dtype} of shape {pixels.shape}")
    height, width, channels = pixels.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)],
                          axis=1)  # filter type 0 (none) on every row
    header = struct.pack(">IIBBBBB", width, height, 8, COLOUR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(np.ascontiguousarray(rows).tobytes(), 6))
            + _chunk(b"IEND", b""))
