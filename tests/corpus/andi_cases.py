"""Corpus cases of the AnDi 2 scoring program (``trackverify andi score``, docs/reference/andi.md).

The base input is one experiment and one FOV of track 2 with two single-segment
trajectories (as in tests/andi/test_scoring_program.py). A malformed submission is a
documented verdict: exit 0, scored by the official rule, every problem listed by file and
line in ``OUTPUT_DIR/summary.md`` (the scores themselves are checked by hand values in
tests/andi). A missing ``ref/`` or ``res/`` is refused with exit 2.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.corpus.make_corpus import Case, generator

TRUE = ["0,1.0,0.5,2,200", "1,2.0,1.5,1,200"]
ENSEMBLE = "model: single_state; num_state: 1 \n0.8;0.05;1.0;0.1;1\n"
FOV = "res/track_2/exp_0/fov_0.txt"
NO_PREDICTION = "fov_0.txt: trajectory 1 has no valid prediction"

# name: (submitted fov_0.txt, fragments of summary.md; "{fov}" is the file's full path)
LINE_CASES: dict[str, tuple[bytes, list[str]]] = {
    "short_line": (b"0,1.0,0.5,2,200\n1,2.0,1.5\n", ["{fov}:2: 3 fields", NO_PREDICTION]),
    "text_in_d": (b"0,1.0,0.5,2,200\n1,abc,1.5,1,200\n",
                  ["{fov}:2: field 2 ('abc') is not a number", NO_PREDICTION]),
    "text_in_alpha": (b"0,1.0,0.5,2,200\n1,2.0,fast,1,200\n",
                      ["{fov}:2: field 3 ('fast') is not a number", NO_PREDICTION]),
    "text_in_length": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,end\n",
                       ["{fov}:2: field 5 ('end') is not a number", NO_PREDICTION]),
    "text_in_index": (b"0,1.0,0.5,2,200\none,2.0,1.5,1,200\n",
                      ["{fov}:2: field 1 ('one') is not a number", NO_PREDICTION]),
    "extra_field": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,200,3\n", ["{fov}:2: 6 fields", NO_PREDICTION]),
    "four_k_fields": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,200,2.0,1.5,1\n",
                      ["{fov}:2: 8 fields (a multiple of 4)"]),
    "semicolons": (b"0,1.0,0.5,2,200\n1;2.0;1.5;1;200\n",
                   ["{fov}:2: field 1 ('1;2.0;1.5;1;200') is not a number", NO_PREDICTION]),
    "nan_changepoint": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,nan\n",
                        ["{fov}:2: a changepoint is not finite; line rejected", NO_PREDICTION]),
    "zero_length": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,0\n",
                    ["{fov}:2: trajectory length 0 < 1; line rejected", NO_PREDICTION]),
    "missing_trajectory": (b"0,1.0,0.5,2,200\n", ["{fov}: trajectory 1 has no valid prediction"]),
    "predicted_twice": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,200\n1,2.0,1.5,1,200\n",
                        ["{fov}:3: trajectory 1 predicted again"]),
    "unknown_trajectory": (b"0,1.0,0.5,2,200\n1,2.0,1.5,1,200\n7,2.0,1.5,1,200\n",
                           ["{fov}:3: trajectory 7 is not in the reference"]),
    "blank_line": (b"0,1.0,0.5,2,200\n\n1,2.0,1.5,1,200\n", ["{fov}:2: blank line ignored"]),
    "undecodable_bytes": (b"\xff\xfe\x00garbage\n1,2.0,1.5,1,200\n",
                          ["{fov}:1: field 1 (", "{fov}: trajectory 0 has no valid"]),
    "empty_file": (b"", ["{fov}: trajectory 0 has no valid prediction", NO_PREDICTION]),
}


def _base(folder: Path) -> None:
    """A valid input folder (reference and a perfect submission)."""
    ref = folder / "ref" / "track_2" / "exp_0"
    res = folder / "res" / "track_2" / "exp_0"
    ref.mkdir(parents=True, exist_ok=True)
    res.mkdir(parents=True, exist_ok=True)
    (ref / "traj_labs_fov_0.txt").write_text("\n".join(TRUE) + "\n")
    (ref / "ensemble_labels.txt").write_text(ENSEMBLE)
    (res / "ensemble_labels.txt").write_text(ENSEMBLE)
    (res / "fov_0.txt").write_text("\n".join(TRUE) + "\n")


def _score(root: Path, name: str, fragments: list[str], code: int = 0,
           stderr: list[str] | None = None) -> Case:
    folder, out = root / name / "input", root / name / "out"
    fov = folder / FOV
    return Case(name, ["andi", "score", str(folder), str(out)], code,
                stderr or [], out, out / "summary.md" if code == 0 else None,
                [f.format(fov=fov, res=folder / "res") for f in fragments])


@generator
def andi_cases(root: Path) -> list[Case]:
    cases = []
    for name, (data, fragments) in LINE_CASES.items():
        _base(root / f"andi_{name}" / "input")
        (root / f"andi_{name}" / "input" / FOV).write_bytes(data)
        cases.append(_score(root, f"andi_{name}", fragments))
    # Whole files and folders of the submission.
    removals = {
        "missing_fov_file": (FOV, ["{fov}: missing file"]),
        "missing_experiment": ("res/track_2/exp_0", ["{fov}: missing file",
                                                     "exp_0/ensemble_labels.txt: cannot score"]),
        "missing_track": ("res/track_2", ["{res}/track_2: no submission for this track"]),
        "missing_ensemble_file": ("res/track_2/exp_0/ensemble_labels.txt",
                                  ["exp_0/ensemble_labels.txt: cannot score the ensemble"]),
    }
    for name, (rel, fragments) in removals.items():
        _base(root / f"andi_{name}" / "input")
        target = root / f"andi_{name}" / "input" / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        cases.append(_score(root, f"andi_{name}", fragments))
    for name, text in {"ensemble_text": "model: single_state\nnot;numbers;at;all;x\n",
                       "ensemble_empty": ""}.items():
        _base(root / f"andi_{name}" / "input")
        (root / f"andi_{name}" / "input" / "res/track_2/exp_0/ensemble_labels.txt").write_text(text)
        cases.append(_score(root, f"andi_{name}",
                            ["exp_0/ensemble_labels.txt: cannot score the ensemble prediction"]))
    # A stray reference folder beside exp_0 (scored as experiment 0 again before): ignored.
    for name, stray in [("stray_reference_folder", "exp_0_old"), ("stray_negative", "exp_-0")]:
        folder = root / f"andi_{name}" / "input"
        _base(folder)
        shutil.copytree(folder / "ref/track_2/exp_0", folder / "ref/track_2" / stray)
        cases.append(_score(root, f"andi_{name}", [
            f"{folder / 'ref/track_2' / stray}: not an experiment folder; ignored"]))
    # A stray copy of a reference FOV file (counted as FOV 1 before: maximum errors).
    folder = root / "andi_stray_fov_file" / "input"
    _base(folder)
    shutil.copy(folder / "ref/track_2/exp_0/traj_labs_fov_0.txt",
                folder / "ref/track_2/exp_0/traj_labs_fov_0.txt.bak")
    cases.append(_score(root, "andi_stray_fov_file", ["Problems (0 errors, 0 warnings)"]))
    # Refused: the input folder lacks ref/ or res/.
    for name, rel, fragment in [("no_ref_folder", "ref", "no reference folder 'ref'"),
                                ("no_res_folder", "res", "no submission folder 'res'")]:
        folder = root / f"andi_{name}" / "input"
        _base(folder)
        shutil.rmtree(folder / rel)
        cases.append(_score(root, f"andi_{name}", [], 2, [str(folder), fragment]))
    return cases
