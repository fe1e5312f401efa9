"""Partitions: disjointness by animal and group, quarantine, the frozen file, the CLI."""

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trackverify.cli.app import main
from trackverify.errors import ConfigError, InputError
from trackverify.benchmark.partitions import (PARTITION_NAMES, apportion, load_partitions,
                                    make_partitions, parse_fractions, pop_content_hash,
                                    write_partitions)

FRACTIONS = "train=0.5,calibration=0.2,test=0.3"


def cohort(n_animals=10, per_animal=3, groups=3):
    """Each animal has several recordings; animals are dealt to groups in turn."""
    rows = []
    for a in range(n_animals):
        for k in range(per_animal):
            rows.append({"recording": f"a{a}r{k}", "animal_id": f"animal{a}",
                         "provenance_group": f"lab{a % groups}", "source_folds": f"fold{k}"})
    return pd.DataFrame(rows)


def owner(parts, column, table):
    """Map each value of ``column`` to the set of partitions holding its recordings."""
    where = {r: name for name in PARTITION_NAMES for r in parts.partitions[name]}
    out = {}
    for rec, value in zip(table["recording"], table[column]):
        if rec in where:
            out.setdefault(value, set()).add(where[rec])
    return out


def test_every_recording_of_an_animal_lands_in_one_partition():
    table = cohort()
    parts = make_partitions(table, fractions=FRACTIONS, seed=3)
    assert all(len(p) == 1 for p in owner(parts, "animal_id", table).values())
    # 10 animals at 0.5/0.2/0.3 -> 5/2/3 animals, 3 recordings each.
    assert [len(parts.partitions[n]) for n in ("train", "calibration", "test")] == [15, 6, 9]
    assert parts.partitions["validation"] == () and parts.partitions["development"] == ()
    all_members = [r for n in PARTITION_NAMES for r in parts.partitions[n]]
    assert sorted(all_members) == sorted(table["recording"])


def test_split_by_group_keeps_each_group_whole():
    table = cohort(n_animals=12, groups=4)
    parts = make_partitions(table, by="provenance_group", fractions="train=0.5,test=0.5", seed=1)
    assert all(len(p) == 1 for p in owner(parts, "provenance_group", table).values())
    assert len(parts.partitions["train"]) == len(parts.partitions["test"]) == 18


def test_an_animal_in_two_groups_merges_them():
    table = cohort(n_animals=4, per_animal=1, groups=4)
    table.loc[len(table)] = ["extra", "animal0", "lab3", ""]  # animal0 also recorded in lab3
    for seed in range(10):
        parts = make_partitions(table, by="provenance_group", fractions="train=0.5,test=0.5",
                                seed=seed)
        assert len(owner(parts, "animal_id", table)["animal0"]) == 1
        assert parts.partition_of("a0r0") == parts.partition_of("a3r0")


def test_deterministic_given_seed_and_seed_matters():
    table = cohort(n_animals=20)
    a = make_partitions(table, fractions=FRACTIONS, seed=7)
    assert a.to_json() == make_partitions(table.sample(frac=1, random_state=0),
                                          fractions=FRACTIONS, seed=7).to_json()
    assert a.partitions != make_partitions(table, fractions=FRACTIONS, seed=8).partitions


def test_source_folds_are_metadata_only():
    table = cohort()
    other = table.assign(source_folds="x" + table["source_folds"].str[::-1])
    a = make_partitions(table, fractions=FRACTIONS, seed=3)
    b = make_partitions(other, fractions=FRACTIONS, seed=3)
    assert a.partitions == b.partitions
    assert a.recordings["a0r1"]["source_folds"] == "fold1"


def test_unresolved_same_animal_pairs_are_quarantined_with_their_animals():
    table = cohort(n_animals=6)
    pairs = pd.DataFrame({"recording_a": ["a0r0", "a2r0"], "recording_b": ["a1r2", "a2r1"]})
    parts = make_partitions(table, fractions="train=0.5,test=0.5", same_animal_candidates=pairs)
    quarantined = {q["recording"]: q["reason"] for q in parts.quarantine}
    # a0r0 ~ a1r2 is unresolved: both animals (6 recordings) are out; a2r0 ~ a2r1 share
    # an animal id, so that pair is resolved and stays.
    assert sorted(quarantined) == ["a0r0", "a0r1", "a0r2", "a1r0", "a1r1", "a1r2"]
    assert "'a1r2'" in quarantined["a0r0"] and "unresolved" in quarantined["a0r0"]
    assert "quarantined recording(s) 'a0r0'" in quarantined["a0r1"]
    members = [r for n in PARTITION_NAMES for r in parts.partitions[n]]
    assert not set(members) & set(quarantined)
    assert len(members) == 12


def test_candidate_pairs_must_name_known_recordings():
    pairs = pd.DataFrame({"recording_a": ["a0r0"], "recording_b": ["nope"]})
    with pytest.raises(InputError, match="column 'recording_b', row 1.*'nope'"):
        make_partitions(cohort(), same_animal_candidates=pairs, candidates_source="pairs.csv")


def test_no_fractions_means_everything_is_development():
    table = cohort(n_animals=3)
    parts = make_partitions(table)
    assert sorted(parts.partitions["development"]) == sorted(table["recording"])
    summary = parts.summary()
    assert all(summary[n]["empty"] for n in ("train", "calibration", "validation", "test"))
    assert summary["note"] and "development" in summary["note"]


def test_fractions_parsing_and_apportionment():
    assert parse_fractions("test=0.3, train=0.7") == {"train": 0.7, "test": 0.3}
    for bad in ("train=0.5", "bogus=1", "train=1.5,test=-0.5", "train", "train=x"):
        with pytest.raises(ConfigError):
            parse_fractions(bad)
    # Largest remainder: 7 units at 0.5/0.2/0.3 -> quotas 3.5/1.4/2.1 -> 4/1/2.
    assert apportion({"train": 0.5, "calibration": 0.2, "test": 0.3}, 7) == \
        {"train": 4, "calibration": 1, "test": 2}


def test_file_records_its_hash_and_refuses_hand_edits(tmp_path):
    parts = make_partitions(cohort(), fractions=FRACTIONS, seed=3)
    path = write_partitions(parts, tmp_path / "p.json")
    loaded = load_partitions(path)
    assert loaded.partitions == parts.partitions and loaded.sha256 == parts.sha256
    data = json.loads(path.read_text())
    assert data["sha256"] == parts.sha256 and len(data["sha256"]) == 64
    # Move one recording from test to train by hand.
    data["partitions"]["train"].append(data["partitions"]["test"].pop())
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="modified after it was written"):
        load_partitions(path)


# SHA-256 of the canonical JSON text '{"a":1}' (sorted keys, no spaces), by sha256sum
HASH_A1 = "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"


@pytest.mark.parametrize("data, expected", [
    ({"a": 1, "sha256": HASH_A1}, True),
    ({"sha256": HASH_A1, "a": 1}, True),           # key order does not count
    ({"a": 2, "sha256": HASH_A1}, False),          # edited after it was hashed
    ({"a": 1, "sha256": HASH_A1.upper()}, False),  # another text is another hash
    ({"a": 1}, None),                              # no hash recorded
    ({"a": 1, "sha256": None}, None),
    ({"a": 1, "sha256": 7}, None),                 # not a string
])
def test_the_recorded_hash_is_popped_and_compared(data, expected):
    assert pop_content_hash(data) is expected
    assert data == ({"a": 1} if data.get("a") == 1 else {"a": 2})  # sha256 removed


def test_a_partitions_file_without_a_hash_is_refused(tmp_path):
    path = write_partitions(make_partitions(cohort(), fractions=FRACTIONS, seed=3),
                            tmp_path / "p.json")
    data = json.loads(path.read_text())
    del data["sha256"]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        load_partitions(path)
    assert str(caught.value) == f"{path}: the partitions file has no sha256 content hash"


def test_existing_partitions_are_never_replaced(tmp_path):
    table = cohort()
    path = tmp_path / "p.json"
    write_partitions(make_partitions(table, fractions=FRACTIONS, seed=3), path)
    before = path.read_bytes()
    write_partitions(make_partitions(table, fractions=FRACTIONS, seed=3), path)  # identical
    with pytest.raises(InputError, match="new path"):
        write_partitions(make_partitions(table, fractions=FRACTIONS, seed=4), path)
    assert path.read_bytes() == before


def test_split_command(tmp_path, capsys):
    table = cohort()
    table.to_csv(tmp_path / "recordings.csv", index=False)
    pd.DataFrame({"recording_a": ["a0r0"], "recording_b": ["a9r1"]}).to_csv(
        tmp_path / "pairs.csv", index=False)
    args = ["split", "--recordings", str(tmp_path / "recordings.csv"), "--fractions", FRACTIONS,
            "--same-animal-candidates", str(tmp_path / "pairs.csv"), "--seed", "5",
            "--out", str(tmp_path / "p.json")]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 0
    parts = load_partitions(tmp_path / "p.json")
    assert len(parts.quarantine) == 6 and parts.settings["seed"] == 5
    with pytest.raises(SystemExit) as exit_info:
        main(args)  # identical regeneration is fine
    assert exit_info.value.code == 0
    with pytest.raises(SystemExit) as exit_info:
        main(args[:-4] + ["--seed", "6", "--out", str(tmp_path / "p.json")])
    assert exit_info.value.code == 2
    assert "new path" in capsys.readouterr().err


def test_command_defaults_match_the_module():
    from trackverify.cli import hygiene as hygiene_commands
    from trackverify.benchmark import partitions
    assert hygiene_commands.SPLIT_BY == partitions.SPLIT_BY
    assert hygiene_commands.DEFAULT_SEED == partitions.DEFAULT_SEED


@settings(max_examples=60, deadline=None)
@given(animals=st.lists(st.integers(0, 8), min_size=1, max_size=30),
       groups=st.lists(st.integers(0, 3), min_size=30, max_size=30),
       cut=st.floats(0, 1), by=st.sampled_from(["animal", "provenance_group"]),
       seed=st.integers(0, 2**32 - 1), pair=st.tuples(st.integers(0, 29), st.integers(0, 29)))
def test_no_animal_or_group_ever_spans_partitions(animals, groups, cut, by, seed, pair):
    table = pd.DataFrame({"recording": [f"r{i}" for i in range(len(animals))],
                          "animal_id": [f"a{a}" for a in animals],
                          "provenance_group": [f"g{g}" for g in groups[:len(animals)]]})
    a, b = (p % len(animals) for p in pair)
    pairs = [(f"r{a}", f"r{b}")] if a != b else None
    parts = make_partitions(table, by=by, fractions={"train": cut, "test": 1 - cut},
                            same_animal_candidates=pairs, seed=seed)
    quarantined = {q["recording"] for q in parts.quarantine}
    members = [r for n in PARTITION_NAMES for r in parts.partitions[n]]
    assert len(members) == len(set(members))
    assert set(members) | quarantined == set(table["recording"])
    assert not set(members) & quarantined
    assert all(len(p) == 1 for p in owner(parts, "animal_id", table).values())
    if by == "provenance_group":
        assert all(len(p) == 1 for p in owner(parts, "provenance_group", table).values())
    if pairs and animals[a] != animals[b]:
        # Both animals of an unresolved pair are wholly quarantined.
        flagged = {f"a{animals[a]}", f"a{animals[b]}"}
        assert {r for r, x in zip(table["recording"], table["animal_id"])
                if x in flagged} <= quarantined
