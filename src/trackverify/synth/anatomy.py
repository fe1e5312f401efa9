"""Anatomy of the development specimen: the head-ganglion neurons of the OpenWorm/c302 model.

The vendored table (``trackverify/data/c302_soma_positions.csv``, MIT, see
``c302_NOTICE.txt``) holds the soma positions of the 302 hermaphrodite neurons of one
idealised model animal. The head ganglia occupy the anterior end of the body axis (y from
about -312 to -226 um); the 189 somata with ``y <= -226 um`` are the head-ganglion neurons.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist, squareform

HEAD_Y_LIMIT_UM = -226.0
HEAD_NEURONS = 189


@lru_cache(maxsize=1)
def c302_positions() -> pd.DataFrame:
    """The vendored c302 table: ``neuron, x_um, y_um, z_um, soma_diameter_um, cell_type_note``."""
    with files("trackverify.data").joinpath("c302_soma_positions.csv").open("r") as handle:
        return pd.read_csv(handle)


def head_ganglion_neurons(n: int | None = None) -> pd.DataFrame:
    """The head-ganglion neurons, most anterior first; ``n`` keeps the first ``n`` of them."""
    table = c302_positions()
    head = table[table["y_um"] <= HEAD_Y_LIMIT_UM].sort_values(["y_um", "neuron"], kind="stable")
    if n is not None:
        if not 2 <= n <= len(head):
            raise ValueError(f"neurons must be between 2 and {len(head)}, got {n}")
        head = head.iloc[:n]
    return head.reset_index(drop=True)


def animal_anatomy(base_um: np.ndarray, rng: np.random.Generator, jitter_um: float,
                   min_spacing_um: float, max_iterations: int = 500) -> np.ndarray:
    """One animal's neuron positions: the model plus isotropic jitter, then pushed apart.

    Every pair closer than ``min_spacing_um`` is moved apart symmetrically along the line
    joining it until no pair is closer (the model has near-coincident somata).
    """
    positions = base_um + rng.normal(0.0, jitter_um, size=base_um.shape)
    if min_spacing_um <= 0:
        return positions
    for _ in range(max_iterations):
        distance = squareform(pdist(positions))
        np.fill_diagonal(distance, np.inf)
        if distance.min() >= min_spacing_um:
            return positions
        # Aim slightly past the spacing so that chains of close pairs settle quickly.
        deficit = np.clip(min_spacing_um * 1.05 - distance, 0.0, None)
        direction = positions[:, None, :] - positions[None, :, :]
        norm = np.where(np.isfinite(distance) & (distance > 0), distance, 1.0)[..., None]
        # Coincident points get a deterministic direction drawn once.
        coincident = (distance == 0)
        if coincident.any():
            direction[coincident] = rng.normal(size=(int(coincident.sum()), 3))
        push = (direction / norm) * (deficit[..., None] / 2.0)
        positions = positions + push.sum(axis=1)
    raise RuntimeError("could not reach the minimum spacing; lower min_spacing_um")


def nearest_neighbour_spacing(positions: np.ndarray) -> np.ndarray:
    """Distance from each point to its nearest neighbour."""
    distance = squareform(pdist(positions))
    np.fill_diagonal(distance, np.inf)
    return distance.min(axis=1)
