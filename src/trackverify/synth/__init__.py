"""Development specimens: anatomy, deformation over time, detection noise."""

from trackverify.synth.specimen import SpecimenConfig, animal_observations, iter_specimen

__all__ = ["SpecimenConfig", "animal_observations", "iter_specimen"]
