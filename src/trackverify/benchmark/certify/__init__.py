"""Certification with a stated guarantee: thresholds calibrated on animals.

The exchangeable unit is the animal (one swap spans hundreds of frames, so rows of one
animal are not independent). For a threshold ``t`` (a row is certified when its score is
finite and ``<= t``), animal ``i``'s loss is its false-certification rate

    L_i(t) = (labelled errors of animal i with a finite score <= t) / (labelled errors of animal i)

pooled over all its recordings and conditions. ``L_i`` lies in ``[0, 1]`` (``B = 1``) and is
non-decreasing in ``t``. An animal with no labelled error has no false-certification rate
(undefined, SPEC section 6); it is left out of the calibration, and the guarantee is about a
new animal that has at least one labelled error (see :mod:`trackverify.benchmark.certify.guarantees`).

- :mod:`~trackverify.benchmark.certify.targets`: the ``--calibrate`` targets and their parsing;
- :mod:`~trackverify.benchmark.certify.guarantees`: per-animal losses, conformal risk control,
  Learn-then-Test with the Hoeffding-Bentkus p-value, the smallest reachable target;
- :mod:`~trackverify.benchmark.certify.fit`: the fit on train/calibration animals (through
  :class:`~trackverify.benchmark.partitions.FitData`) and the check on the evaluated animals;
- :mod:`~trackverify.benchmark.certify.calibration_file`: ``calibration.json`` (write and load).
"""

from trackverify.benchmark.certify.calibration_file import (CALIBRATION_FORMAT, Calibration, calibration_content,
                                                  load_calibration, write_calibration)
from trackverify.benchmark.certify.guarantees import (animal_losses, crc_threshold, hoeffding_bentkus_p_value,
                                            ltt_threshold, smallest_target)
from trackverify.benchmark.certify.targets import (ASSUMPTION, FCR_TARGET, SELECTIVE_RISK_TARGET,
                                         CalibrationTarget, parse_target)

__all__ = [
    "ASSUMPTION", "CALIBRATION_FORMAT", "Calibration", "CalibrationTarget", "FCR_TARGET",
    "SELECTIVE_RISK_TARGET", "animal_losses", "calibration_content", "crc_threshold",
    "hoeffding_bentkus_p_value", "load_calibration", "ltt_threshold", "parse_target",
    "smallest_target", "write_calibration",
]
