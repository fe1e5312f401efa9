"""One contrast for crops shown side by side, and a crop as a PNG (no pyplot)."""

from __future__ import annotations

import numpy as np

from trackverify.errors import InputError
from trackverify.io.png import png_pixels

LOW, HIGH = 1.0, 99.5
"""Default percentiles of :func:`contrast_limits`: dark at the 1st, bright at the 99.5th."""


def contrast_limits(*images: np.ndarray, low: float = LOW,
                    high: float = HIGH) -> tuple[float, float] | None:
    """``(lo, hi)``: the ``low`` and ``high`` percentiles (linear interpolation) of the finite
    pixels of all ``images`` pooled, so that two crops normalised by them share one contrast;
    None when no pixel is finite. ``hi > lo`` always (a flat image gets ``hi = lo + 1``)."""
    if not 0 <= low < high <= 100:
        raise InputError(f"contrast percentiles must satisfy 0 <= low < high <= 100, got "
                         f"{low}, {high}")
    values = np.concatenate([np.asarray(i, dtype=np.float64).ravel() for i in images]) \
        if images else np.empty(0)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    lo, hi = np.percentile(values, [low, high])
    return float(lo), float(hi if hi > lo else lo + 1.0)


def normalise(image: np.ndarray, limits: tuple[float, float] | None) -> np.ndarray:
    """``clip((image - lo) / (hi - lo), 0, 1)`` as float32; NaN stays NaN (outside the volume)."""
    image = np.asarray(image, dtype=np.float32)
    if limits is None:
        return np.full(image.shape, np.nan, dtype=np.float32)
    lo, hi = limits
    return np.clip((image - np.float32(lo)) / np.float32(hi - lo), 0, 1).astype(np.float32)


def png_bytes(image: np.ndarray) -> bytes:
    """An 8-bit greyscale PNG of a 2-D ``image`` in [0, 1] (grey ``round(255 * v)``; NaN pixels
    transparent, as grey + alpha). Row 0 is the PNG's top row."""
    image = np.asarray(image, dtype=np.float64)
    if image.ndim != 2 or 0 in image.shape:
        raise InputError(f"a PNG is made of a non-empty 2-D image, not shape {image.shape}")
    blank = ~np.isfinite(image)
    grey = np.round(np.clip(np.where(blank, 0, image), 0, 1) * 255).astype(np.uint8)
    if blank.any():
        return png_pixels(np.stack([grey, np.where(blank, 0, 255).astype(np.uint8)], -1))
    return png_pixels(grey)
