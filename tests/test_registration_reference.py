"""The fast registration of registered_distance computes what the float64 code before it did.

The reference is that code itself, kept callable in ``tests/registration_reference.py`` (a
copy of the fit, its dense E-step ``_posterior`` and the per-frame assignment distances as of
commit 60c053d, before the E-step was summed through one product, the M-step's sums through
one basis and the exponents floored at -700). Stated tolerance: registered positions within
1e-9 of the anchor's RMS radius and sigma within 1e-9 relative (measured: about 1e-11 and
1e-12 on 1,000 frames x 189 ids, ``benchmarks/bench_registration.py``); the one-to-one
assignment, the verdicts, the reasons and the events identical; scores within 1e-9 um.
Scenes: the development specimen at every motion level (seeded), positions only, with a
window of swapped ids, small enough to run in seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trackverify
import trackverify.verifiers.registered_distance as rd
from tests import registration_reference as reference
from trackverify.anchors import anchor_positions
from trackverify.synth.motion import MOTION_LEVELS
from trackverify.synth.specimen import SpecimenConfig, animal_observations


def specimen(motion: str, frames: int = 40, neurons: int = 40) -> pd.DataFrame:
    """One seeded animal of the specimen, positions only, ids swapped in pairs in frames 15-24
    (a tracker's errors, so that some rows are flagged)."""
    table = animal_observations(SpecimenConfig(frames=frames, motion=motion, neurons=neurons,
                                               seed=11), 0)
    table = table.drop(columns=["track", "detection"])
    window = table["frame"].between(15, 24).to_numpy()
    ids = np.sort(table["pred_id"].unique())
    swap = dict(zip(ids[0:8:2], ids[1:8:2])) | dict(zip(ids[1:8:2], ids[0:8:2]))
    table.loc[window, "pred_id"] = table.loc[window, "pred_id"].map(lambda p: swap.get(p, p))
    return table


def fits(table: pd.DataFrame):
    _, anchor = anchor_positions(table)
    detections = table[["frame", "x_um", "y_um", "z_um"]]
    return anchor, rd.fit_registration(anchor, detections), \
        reference.fit_registration(anchor, detections)


@pytest.mark.parametrize("motion", sorted(MOTION_LEVELS))
def test_the_fit_equals_the_float64_reference(motion):
    table = specimen(motion)
    anchor, new, old = fits(table)
    radius = np.sqrt(((anchor - anchor.mean(axis=0)) ** 2).sum(axis=1).mean())
    registered = np.isfinite(old.positions).all(axis=(1, 2))
    assert registered.sum() > 30  # the scene is registered, not skipped
    np.testing.assert_array_equal(np.isfinite(new.positions), np.isfinite(old.positions))
    np.testing.assert_allclose(new.positions[registered], old.positions[registered],
                               rtol=0, atol=1e-9 * radius)
    np.testing.assert_allclose(new.sigma[registered], old.sigma[registered], rtol=1e-9, atol=0)


@pytest.mark.parametrize("motion", ["moderate", "freely_moving"])
def test_the_assignment_equals_the_reference_on_the_same_registration(motion):
    table = specimen(motion)
    anchor, new, _ = fits(table)
    frames = table["frame"].to_numpy()
    points = table[["x_um", "y_um", "z_um"]].to_numpy()
    cap = rd.anchor_spacing(anchor)
    for got, expected in zip(rd.assign_detections(new.positions, frames, points, cap),
                             reference.assign_detections(new.positions, frames, points, cap)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("motion", ["still", "fast", "freely_moving"])
def test_the_audit_verdicts_equal_those_of_the_reference_registration(motion, monkeypatch):
    table = specimen(motion, frames=60)
    new = trackverify.audit(table).observations
    monkeypatch.setattr(rd, "fit_registration", reference.fit_registration)
    monkeypatch.setattr(rd, "assign_detections", reference.assign_detections)
    old = trackverify.audit(table).observations
    assert (old["verdict"] == "flagged").sum() > 0  # the swaps are seen
    for column in ("verdict", "reason", "event", "segment", "lookalike_id"):
        pd.testing.assert_series_equal(new[column], old[column])
    np.testing.assert_allclose(new["score"], old["score"], rtol=0, atol=1e-9)


def test_cell_keys_order_the_cells_as_unique_rows_do():
    """Seeded cells with negative and repeated rows: the keys' unique order is that of
    ``np.unique(axis=0)``, the counts the same; spans beyond int64 keep the rows' order too."""
    rng = np.random.default_rng(5)
    for dims in (2, 3):
        cells = rng.integers(-6, 7, size=(400, dims))
        _, inverse, counts = np.unique(rd._cell_keys(cells), return_inverse=True,
                                       return_counts=True)
        _, row_inverse, row_counts = np.unique(cells, axis=0, return_inverse=True,
                                               return_counts=True)
        np.testing.assert_array_equal(inverse.ravel(), row_inverse.ravel())
        np.testing.assert_array_equal(counts, row_counts)
    huge = np.array([[-2 ** 40, 0, 5], [2 ** 40, 1, 5], [-2 ** 40, 0, 5], [0, -2 ** 40, 0]])
    _, inverse = np.unique(rd._cell_keys(huge), return_inverse=True)
    np.testing.assert_array_equal(inverse.ravel(),
                                  np.unique(huge, axis=0, return_inverse=True)[1].ravel())
