"""Corpus cases of bounded reads (src/trackverify/io/bounded.py, docs/robustness.md).

Inputs that would block, never end, or ask for more memory than the machine has: a FIFO
or ``/dev/zero`` where a file is expected, JSON and TOML nested 10^5 deep, a ``.npy``
header claiming 336 GB, ``--epochs`` far beyond the decoder's stated maximum. Each is
refused (exit 2, or the AnDi verdict naming the file) before anything is read from it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from tests.corpus.andi_cases import _base, _score
from tests.corpus.make_corpus import Case, _raw, _write, clean_observations, generator
from trackverify.conversion import synthetic as C

DEEP = 100_000


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


def huge_npy_header(shape=(14_000_000_000, 3)) -> bytes:
    """A ``.npy`` file whose header claims ``shape`` float64 (336 GB) followed by 24 bytes."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue() + np.zeros(3).tobytes()


@generator
def bounded_cases(root: Path) -> list[Case]:
    if not hasattr(os, "mkfifo"):  # pragma: no cover - POSIX only
        return []
    cases = []
    specials = {"fifo": _fifo, "dev_zero": _zero}
    for kind, make in specials.items():
        name = f"bounded_config_{kind}"
        config = make(root / name / "run.toml")
        cases.append(Case(name, ["run", "--config", str(config), "--out", str(root / name / "out")],
                          2, [str(config), "expected a regular config file"], root / name / "out"))
        name = f"bounded_table_{kind}"
        table = make(root / name / "obs.csv")
        cases.append(Case(name, ["run", "--data", str(table), "--out", str(root / name / "out")],
                          2, [str(table), "expected a regular file"], root / name / "out"))
        name = f"bounded_partitions_{kind}"
        data = _write(clean_observations(), root / name / "obs.csv")
        partitions = make(root / name / "partitions.json")
        cases.append(Case(name, ["run", "--data", str(data), "--partitions", str(partitions),
                                 "--out", str(root / name / "out")], 2,
                          [str(partitions), "expected a regular partitions file"],
                          root / name / "out"))
        for side in ("res", "ref"):  # the submission's ensemble file, the reference's
            name = f"bounded_andi_{'ensemble' if side == 'res' else 'reference'}_{kind}"
            folder = root / name / "input"
            _base(folder)
            special = folder / side / "track_2/exp_0/ensemble_labels.txt"
            special.unlink()
            make(special)
            cases.append(
                _score(root, name, ["exp_0/ensemble_labels.txt: cannot score the ensemble",
                                    "expected a regular file"]) if side == "res" else
                _score(root, name, [], 2, [str(special), "expected a regular reference"]))
        name = f"bounded_andi_vip_{kind}"  # track 1's reference VIP indices
        folder = root / name / "input"
        _base(folder)
        for side in ("ref", "res"):
            (folder / side / "track_2").rename(folder / side / "track_1")
        vip = make(folder / "ref/track_1/exp_0/vip_idx_fov_0.txt")
        cases.append(_score(root, name, [], 2, [str(vip), "expected a regular reference file"]))
    for name, text, fragment in [
        ("toml_deep_array", "[run]\nconditions = " + "[" * DEEP + "]" * DEEP + "\n", "TOML"),
        ("toml_deep_table", "[run]\nseed = " + "{a=" * DEEP + "1" + "}" * DEEP + "\n", "TOML"),
    ]:
        config = _raw(root, f"bounded_{name}", "run.toml", text.encode())
        out = root / f"bounded_{name}" / "out"
        cases.append(Case(f"bounded_{name}", ["run", "--config", str(config), "--out", str(out)],
                          2, [str(config), fragment, "nested too deeply"], out))
    name = "bounded_partitions_deep_json"
    data = _write(clean_observations(), root / name / "obs.csv")
    partitions = _raw(root, name, "partitions.json", ("[" * DEEP + "]" * DEEP).encode())
    cases.append(Case(name, ["run", "--data", str(data), "--partitions", str(partitions), "--out",
                             str(root / name / "out")], 2,
                      [str(partitions), "nested too deeply"], root / name / "out"))
    name = "bounded_npy_header_336_gb"
    pairs = root / name / "pairs"
    for example, array in (("a", "pts_tar"), ("b", "pts_gt"), ("b", "pts_tar")):
        np.save(_raw(root, name, f"pairs/{example}/{array}.npy", b""), np.zeros((3, 3)))
    gt = _raw(root, name, "pairs/a/pts_gt.npy", huge_npy_header())
    cases.append(Case(name, ["evidence", "--pairs", str(pairs), "--levels", "", "--grid",
                             "default", "--out", str(root / name / "out")], 2,
                      [str(gt), "declares 336000000000 bytes"], root / name / "out"))
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    for command in ("decode", "check"):
        name = f"bounded_decoder_epochs_{command}"
        submission = C.write_submission(root / name / "submission", data)
        target = submission / "converted_data.pkl" if command == "decode" else submission
        out = root / name / ("out/decoder.json" if command == "decode" else "out")
        cases.append(Case(name, ["conversion", command, str(target), "--epochs", str(10 ** 12),
                                 "--out", str(out)], 2, ["--epochs", "10000"], root / name / "out"))
    return cases
