"""The verification benchmark (``trackverify run`` / ``verify`` / ``evidence``): where a run's
recordings come from (:mod:`.dataset`, :mod:`.config`), the seeded corruption suite
(:mod:`.corrupt`), the protocols (:mod:`.protocols`), the certification metrics and their
pooling (:mod:`.selective`, :mod:`.pooled`), partitions and calibration (:mod:`.partitions`,
:mod:`.certify`), intervals by animal (:mod:`.intervals`), the run itself (:mod:`.run`,
:mod:`.verification`), its report and manifest, and the evidence comparison
(:mod:`.evidence`)."""
