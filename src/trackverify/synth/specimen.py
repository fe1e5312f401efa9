"""The built-in development specimen: reference tracks, fixed detections, clean predictions.

One recording per animal. Each animal gets its own anatomy (the c302 head-ganglion model
with jitter and a minimum spacing), its own deformation over time (see
:mod:`trackverify.synth.motion`) and occasional missed detections (never in the anchor
frame, which is curated). Detection ids are a random permutation within each frame, so
they carry no identity. The predictions are clean (the tracker is right): every
observation's ``pred_id`` is a fixed relabelling of its reference track.

Everything is drawn from one ``numpy.random.Generator(PCG64(seed))`` per animal, seeded
from ``(seed, animal index)``, so one animal can be regenerated alone and the same config
gives the same table on every machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from trackverify.errors import ConfigError
from trackverify.synth.anatomy import animal_anatomy, head_ganglion_neurons
from trackverify.synth.motion import MOTION_LEVELS, deform
from trackverify.synth.recording import (RECORDING_MODELS, principal_body, record,
                                         shuffled_rank_within)

ANATOMY_SOURCE = ("OpenWorm c302 0.12.1 soma positions (MIT; model from WormBase VirtualWorm, "
                  "public domain), head-ganglion neurons (y <= -226 um)")


#: The most observations (animals x frames x neurons) a specimen may have: at about 100
#: bytes a row in the run's tables, 5e7 rows take several GB; more would exhaust memory.
MAX_SPECIMEN_ROWS = 50_000_000


@dataclass(frozen=True)
class SpecimenConfig:
    """Every knob of the development specimen; all are recorded in the provenance."""

    animals: int = 1
    groups: int = 1
    frames: int = 1000
    motion: str = "moderate"
    seed: int = 20261007
    neurons: int = 189
    animal_jitter_um: float = 1.0
    min_spacing_um: float = 2.0
    neuron_jitter_um: float = 0.3
    localisation_noise_um: float = 0.3
    miss_rate: float = 0.002

    def __post_init__(self) -> None:
        if self.motion not in MOTION_LEVELS:
            raise ConfigError(f"motion must be one of {sorted(MOTION_LEVELS)}, got '{self.motion}'")
        for name in ("animals", "groups", "frames", "neurons"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0 (numpy seeds are non-negative), got {self.seed}")
        head = len(head_ganglion_neurons())
        if not 2 <= self.neurons <= head:
            raise ConfigError(f"neurons must be between 2 and {head} (the head ganglion's "
                              f"neurons), got {self.neurons}")
        rows = self.animals * self.frames * self.neurons
        if rows > MAX_SPECIMEN_ROWS:
            raise ConfigError(f"animals x frames x neurons = {rows:.3g} observations exceeds the "
                              f"specimen's limit of {MAX_SPECIMEN_ROWS:.0e} (several GB of memory)")
        if self.groups > self.animals:
            raise ConfigError(f"groups ({self.groups}) cannot exceed animals ({self.animals})")
        for name in ("animal_jitter_um", "min_spacing_um", "neuron_jitter_um",
                     "localisation_noise_um"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.miss_rate < 1:
            raise ConfigError(f"miss_rate must be in [0, 1), got {self.miss_rate}")


def recording_table(config: SpecimenConfig) -> pd.DataFrame:
    """Provenance of each synthetic recording: one animal each, groups assigned in turn."""
    index = np.arange(config.animals)
    return pd.DataFrame({
        "recording": [f"rec{i:03d}" for i in index],
        "animal_id": [f"animal{i:03d}" for i in index],
        "provenance_group": [f"synthetic-{g}" for g in index % config.groups],
        "source_folds": "",
        "motion": config.motion,
        "frames": config.frames,
    })


def animal_observations(config: SpecimenConfig, index: int) -> pd.DataFrame:
    """The observation table of animal ``index`` (one recording)."""
    if config.motion in RECORDING_MODELS:
        return animal_tables(config, index)[0]
    rng = np.random.Generator(np.random.PCG64([config.seed, index]))
    base = head_ganglion_neurons(config.neurons)[["x_um", "y_um", "z_um"]].to_numpy()
    anatomy = animal_anatomy(base, rng, config.animal_jitter_um, config.min_spacing_um)
    positions = deform(anatomy, MOTION_LEVELS[config.motion], config.frames, rng,
                       config.neuron_jitter_um, config.localisation_noise_um)
    frames, neurons = positions.shape[:2]
    frame = np.repeat(np.arange(frames), neurons)
    track = np.tile(np.arange(neurons), frames)
    observed = rng.random(frames * neurons) >= config.miss_rate
    observed[frame == 0] = True
    flat = positions.reshape(-1, 3)[observed]
    frame, track = frame[observed], track[observed]
    pred_of_track = 1000 + rng.permutation(neurons)
    return pd.DataFrame({
        "recording": f"rec{index:03d}",
        "frame": frame.astype(np.int64),
        "track": track.astype(np.int64),
        "detection": shuffled_rank_within(frame, rng),
        "x_um": flat[:, 0],
        "y_um": flat[:, 1],
        "z_um": flat[:, 2],
        "pred_id": pred_of_track[track].astype(np.int64),
        "pred_valid": True,
    })


def animal_detections(config: SpecimenConfig, index: int) -> pd.DataFrame | None:
    """The detection table of animal ``index`` (every point of each frame, labelled or not),
    or None where the level has no recording model (its detections are the observation rows)."""
    return animal_tables(config, index)[1] if config.motion in RECORDING_MODELS else None


def animal_tables(config: SpecimenConfig, index: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(observations, detections)`` of animal ``index`` at a level with a recording model
    (:mod:`trackverify.synth.recording`): the anatomy on its principal axes, scaled to the
    real body, moved by the level, then seen as a real recording sees it (fresh copies)."""
    observations, detections = _recorded_animal(config, index)
    return observations.copy(), detections.copy()


@lru_cache(maxsize=2)
def _recorded_animal(config: SpecimenConfig, index: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    return recorded_animal(config, index)


def recorded_animal(config: SpecimenConfig, index: int, level=None,
                    model=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`animal_tables` uncached, with the level's motion and recording model replaced by
    ``level`` / ``model`` when given (for fitting them: benchmarks/real_motion_stats.py)."""
    model = RECORDING_MODELS[config.motion] if model is None else model
    level = MOTION_LEVELS[config.motion] if level is None else level
    rng = np.random.Generator(np.random.PCG64([config.seed, index]))
    base = head_ganglion_neurons(config.neurons)[["x_um", "y_um", "z_um"]].to_numpy()
    anatomy = principal_body(animal_anatomy(base, rng, config.animal_jitter_um,
                                            config.min_spacing_um), model.axis_scale)
    positions = deform(anatomy, level, config.frames, rng, model.neuron_jitter_um,
                       model.localisation_noise_um, model.jitter_correlation,
                       model.jitter_length_um)
    return record(positions, model, rng, f"rec{index:03d}")


def iter_specimen(config: SpecimenConfig) -> Iterator[pd.DataFrame]:
    """One observation table per animal, generated lazily (memory does not grow with N)."""
    for index in range(config.animals):
        yield animal_observations(config, index)


def provenance(config: SpecimenConfig) -> dict:
    """The record that travels with a synthetic specimen."""
    level = MOTION_LEVELS[config.motion]
    out = {
        "generator": "trackverify.synth",
        "config": asdict(config),
        "anatomy": ANATOMY_SOURCE,
        # fields a level does not use (None) are left out: each level's record keeps its bytes
        "motion_level": {k: v for k, v in asdict(level).items() if v is not None},
        "predictions": "clean (pred_id is a fixed relabelling of the reference track)",
    }
    if config.motion in RECORDING_MODELS:  # only then: other levels keep their record's bytes
        out["recording_model"] = asdict(RECORDING_MODELS[config.motion])
    return out
