"""Partitions files are type-checked and checked against the data they are used with."""

from __future__ import annotations

import pytest

from tests.corpus.partition_cases import RECORDINGS, base_content, sealed
from trackverify.errors import InputError
from trackverify.benchmark.partitions import check_against_recordings, load_partitions


def _load(tmp_path, content):
    path = tmp_path / "p.json"
    path.write_text(sealed(content), encoding="utf-8")
    return load_partitions(path)


@pytest.mark.parametrize("value, kind", [("r0", "a string"), (3, "an integer"),
                                         (None, "null"), ({"r0": 1}, "a mapping")])
def test_a_partition_must_be_a_list(tmp_path, value, kind):
    content = base_content()
    content["partitions"]["train"] = value
    with pytest.raises(InputError, match=f"p.json: partition 'train' must be a list of "
                                         f"recording ids, found {kind}"):
        _load(tmp_path, content)


def test_a_string_is_not_read_as_its_characters(tmp_path):
    content = base_content()
    content["partitions"]["train"] = "r1"  # not the recordings 'r' and '1'
    with pytest.raises(InputError, match="found a string 'r1'"):
        _load(tmp_path, content)


@pytest.mark.parametrize("member", [True, 1.0, None, "", ["r1"]])
def test_members_are_ids(tmp_path, member):
    content = base_content()
    content["partitions"]["test"].append(member)
    with pytest.raises(InputError, match="partition 'test' holds .*; recording ids are"):
        _load(tmp_path, content)


def test_resealed_file_whose_metadata_leaks_is_refused(tmp_path):
    content = base_content()
    for row in content["recordings"]:
        if row["recording"] == "r4":
            row["animal_id"] = "w2"  # r2 is in train, r4 in test
    with pytest.raises(InputError, match="leakage: animal 'w2' is in two partitions by the "
                                         "file's own metadata: recording 'r2' in 'train' and "
                                         "recording 'r4' in 'test'"):
        _load(tmp_path, content)


def test_the_data_decides_which_animal_a_recording_is(tmp_path):
    parts = _load(tmp_path, base_content())
    check_against_recordings(parts, RECORDINGS, source="p.json")  # the file's own view: fine
    data = RECORDINGS.assign(animal_id=["w1", "w2", "w3", "w1"])
    with pytest.raises(InputError, match="p.json: leakage: animal 'w1' is in two partitions by "
                                         "the data's recording table: recording 'r1' in "
                                         "'train' and recording 'r4' in 'test'"):
        check_against_recordings(parts, data, source="p.json")


def test_groups_are_checked_when_split_by_group(tmp_path):
    content = base_content(by="provenance_group")
    parts = _load(tmp_path, content)
    check_against_recordings(parts, RECORDINGS, source="p.json")
    data = RECORDINGS.assign(provenance_group=["labA", "labB", "labB", "labB"])
    with pytest.raises(InputError, match="provenance group 'labB' is in two partitions by the "
                                         "data's recording table: recording 'r2' in 'train' "
                                         "and recording 'r3' in 'test'"):
        check_against_recordings(parts, data, source="p.json")
    # Split by animal, a group may span partitions.
    check_against_recordings(_load(tmp_path, base_content()), data, source="p.json")


def test_every_recording_of_the_data_must_be_known(tmp_path):
    content = base_content()
    content["partitions"]["test"] = ["r3"]
    parts = _load(tmp_path, content)
    with pytest.raises(InputError, match="recording 'r4' of the data is in no partition"):
        check_against_recordings(parts, RECORDINGS, source="p.json")
    # A run over part of the cohort is fine.
    check_against_recordings(parts, RECORDINGS.iloc[:3], source="p.json")
