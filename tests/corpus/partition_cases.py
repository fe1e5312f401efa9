"""Corpus cases of partitions files (``trackverify run --partitions``, partitions.py).

A valid file is made with ``trackverify split``'s library function for the data's own
recording table, then broken: a partition whose value is a string, an integer, null or a
mapping; re-sealed files (the hash recomputed, so only the content checks can refuse
them) whose own metadata put one animal in two partitions; and valid files whose split
disagrees with the run's recording table (an animal in two partitions by the data's
animal ids, a provenance group split across partitions, a recording the file does not
know). Every case is refused with exit 2 naming the file, and for leakage the animal
(or group) and both partitions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.corpus.make_corpus import Case, _raw, _write, clean_observations, generator
from trackverify.benchmark.partitions import content_hash, make_partitions

RECORDINGS = pd.DataFrame({"recording": ["r1", "r2", "r3", "r4"],
                           "animal_id": ["w1", "w2", "w3", "w4"],
                           "provenance_group": ["labA", "labA", "labB", "labB"]})


def _observations() -> pd.DataFrame:
    parts = []
    for name in RECORDINGS["recording"]:
        part = clean_observations(frames=4, tracks=3)
        part["recording"] = name
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def sealed(content: dict) -> str:
    """The JSON text of ``content`` with a freshly computed (matching) sha256."""
    return json.dumps({**content, "sha256": content_hash(content)})


def base_content(by: str = "animal") -> dict:
    """r1, r2 -> train; r3, r4 -> test (fixed, so the cases below know where each is)."""
    parts = make_partitions(RECORDINGS, by=by, fractions="train=0.5,test=0.5", seed=0)
    content = parts.content()
    content["partitions"]["train"], content["partitions"]["test"] = ["r1", "r2"], ["r3", "r4"]
    return content


@generator
def partition_cases(root: Path) -> list[Case]:
    cases = []

    def case(name: str, partitions_text: str, fragments: list[str],
             recordings: pd.DataFrame = RECORDINGS) -> None:
        folder = root / f"partitions_{name}"
        _write(_observations(), folder / "data" / "observations.csv")
        _write(recordings, folder / "data" / "recordings.csv")
        path = _raw(root, folder.name, "partitions.json", partitions_text.encode())
        out = folder / "out"
        cases.append(Case(folder.name, ["run", "--data", str(folder / "data"), "--partitions",
                                        str(path), "--calibrate", "target_selective_risk=0.5", "--out", str(out)], 2,
                          [str(path), *fragments], out))

    for name, value, kind in [("string", "r1", "a string"), ("integer", 7, "an integer"),
                              ("null", None, "null"), ("mapping", {"r1": 1}, "a mapping")]:
        content = base_content()
        content["partitions"]["train"] = value
        case(f"train_is_{name}", sealed(content),
             [f"partition 'train' must be a list of recording ids, found {kind}"])
    for name, value, kind in [("float", 1.5, "a number"), ("null", None, "null"),
                              ("list", ["r1"], "a list"), ("empty", "", "a string")]:
        content = base_content()
        content["partitions"]["test"] = ["r3", value]
        case(f"member_is_{name}", sealed(content), [f"partition 'test' holds {kind}"])
    # Re-sealed: the file's own metadata says r3 (test) is the animal of r1 (train).
    content = base_content()
    next(r for r in content["recordings"] if r["recording"] == "r3")["animal_id"] = "w1"
    case("resealed_animal_in_two", sealed(content),
         ["leakage: animal 'w1' is in two partitions by the file's own metadata",
          "'r1' in 'train'", "'r3' in 'test'"])
    content = base_content(by="provenance_group")
    content["partitions"]["train"], content["partitions"]["test"] = ["r1"], ["r2", "r3", "r4"]
    case("resealed_group_in_two", sealed(content),
         ["leakage: provenance group 'labA' is in two partitions by the file's own metadata",
          "'r1' in 'train'", "'r2' in 'test'"])
    # Valid files that disagree with the data.
    shared = RECORDINGS.assign(animal_id=["w1", "w2", "w1", "w4"])  # r3 is animal w1 too
    case("data_animal_in_two", sealed(base_content()),
         ["leakage: animal 'w1' is in two partitions by the data's recording table",
          "'r1' in 'train'", "'r3' in 'test'"], recordings=shared)
    content = base_content(by="provenance_group")
    content["partitions"]["train"], content["partitions"]["test"] = ["r1"], ["r2", "r3", "r4"]
    for row in content["recordings"]:
        row["provenance_group"] = "labA" if row["recording"] == "r1" else "labB"
    case("data_group_in_two", sealed(content),
         ["leakage: provenance group 'labA' is in two partitions by the data's"],
         recordings=RECORDINGS)
    content = base_content()
    content["partitions"]["test"] = ["r3"]
    content["recordings"] = [r for r in content["recordings"] if r["recording"] != "r4"]
    case("data_recording_unknown", sealed(content),
         ["recording 'r4' of the data is in no partition and not quarantined"])
    return cases
