"""Corpus cases of the converted-dataset verifier (``trackverify conversion check``,
docs/reference/conversion.md).

A small valid synthetic dataset is broken once per B2 format error code (the package's own
``malformed_variants``, each breaking one rule) and once per unreadable pickle. A broken
*submission* is a documented verdict: exit 1, ``conversion.json`` written whole with the
``format`` check failed and the error code under the file's name. A broken or missing
*reference* and a missing submission folder are refused with exit 2.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from tests.corpus.make_corpus import PICKLE_BREAKS, Case, RunsCommand, generator
from trackverify.conversion import synthetic as C

DATA = "converted_data.pkl"


def _check(root: Path, name: str, submission: Path, code: int, fragments: list[str],
           reference: Path | None = None) -> Case:
    out = root / name / "out"
    args = ["conversion", "check", str(submission), "--out", str(out)]
    if reference is not None:
        args += ["--reference", str(reference)]
    if code == 1:
        return Case(name, args, 1, [], out, out / "conversion.json",
                    ['"format"', f'"{DATA}"', *fragments])
    return Case(name, args, code, fragments, out)


@generator
def conversion_cases(root: Path) -> list[Case]:
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    cases = []
    for code, variant in C.malformed_variants(data).items():
        name = f"conversion_{code}"
        submission = C.write_submission(root / name / "submission", variant)
        cases.append(_check(root, name, submission, 1, [f'"{code}"']))
    valid = pickle.dumps(data, protocol=4)
    sentinel = root / "conversion_runs_os_system" / "submission" / "EXECUTED"
    breaks = [(n, mutate(valid), fragment) for n, mutate, fragment in PICKLE_BREAKS]
    breaks.append(("runs_os_system", pickle.dumps(RunsCommand(f"touch {sentinel}")),
                   "refused to load posix.system"))
    for label, raw, fragment in breaks:
        name = f"conversion_{label}"
        submission = C.write_submission(root / name / "submission", data)
        (submission / DATA).write_bytes(raw)
        cases.append(_check(root, name, submission, 1, [fragment]))
    # Refused (exit 2): no submission folder, a reference missing, unreadable or invalid.
    valid_submission = C.write_submission(root / "conversion_world" / "submission", data)
    missing = root / "conversion_no_submission" / "nope"
    cases.append(_check(root, "conversion_no_submission", missing, 2,
                        [str(missing), "folder not found"]))
    references = {
        "reference_missing": (None, "file not found"),
        "reference_truncated": (valid[: len(valid) // 2], "pickle data was truncated"),
        "reference_runs_os_system": (pickle.dumps(RunsCommand("echo executed")),
                                     "refused to load posix.system"),
        "reference_non_finite": (pickle.dumps(C.malformed_variants(data)["non_finite"]),
                                 "non_finite"),
        "reference_not_dict": (pickle.dumps([1, 2, 3]), "not_dict"),
    }
    for label, (raw, fragment) in references.items():
        name = f"conversion_{label}"
        reference = root / name / "reference" / DATA
        reference.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            reference.write_bytes(raw)
        cases.append(_check(root, name, valid_submission, 2, [str(reference), fragment],
                            reference))
    empty_folder = root / "conversion_reference_folder_without_data" / "reference"
    empty_folder.mkdir(parents=True, exist_ok=True)
    cases.append(_check(root, "conversion_reference_folder_without_data", valid_submission, 2,
                        [str(empty_folder), f"no {DATA}"], empty_folder))
    return cases
