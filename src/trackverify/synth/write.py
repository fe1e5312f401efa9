"""Write a synthetic specimen to disk in the layout ``trackverify run --data`` reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from trackverify.io.atomic import write_json_atomic
from trackverify.io.tabular import write_table
from trackverify.synth.specimen import (SpecimenConfig, animal_detections, iter_specimen,
                                        provenance, recording_table)


def write_specimen(config: SpecimenConfig, out: str | Path) -> int:
    """Write ``observations.parquet``, ``recordings.csv`` and ``provenance.json`` (and
    ``detections.parquet`` at a level with a recording model); return observation rows."""
    out = Path(out)
    observations = pd.concat(list(iter_specimen(config)), ignore_index=True)
    write_table(observations, out / "observations.parquet")
    detections = [animal_detections(config, i) for i in range(config.animals)]
    if detections[0] is not None:
        write_table(pd.concat(detections, ignore_index=True), out / "detections.parquet")
    write_table(recording_table(config), out / "recordings.csv")
    write_json_atomic(out / "provenance.json", provenance(config))
    return len(observations)
