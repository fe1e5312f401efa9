"""The restricted unpickler refuses every known pickle attack before anything runs, and
still reads every legitimate pickle the project reads (issue 18, item 1).

The attacks are assembled opcode by opcode in ``tests/corpus/pickle_attacks.py``; the
corpus also runs them through ``trackverify stage`` and ``trackverify conversion check``.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import textwrap
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from tests.corpus.pickle_attacks import ATTACKS, Attack, _plant
from trackverify.conversion import synthetic as C
from trackverify.errors import InputError
from trackverify.io import safe_pickle
from trackverify.io.safe_pickle import ADMITTED, load_restricted, loads_restricted
from trackverify.stages import synthetic as S

REPO = Path(__file__).resolve().parents[1]


def _planted(tmp_path: Path, attack: Attack) -> tuple[Path, Path]:
    sentinel = _plant(tmp_path / "in", "attack.pkl", attack)
    return tmp_path / "in" / "attack.pkl", sentinel


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_refused_before_it_runs(attack, tmp_path):
    path, sentinel = _planted(tmp_path, attack)
    defaults = safe_pickle._make_dtype.__defaults__
    with pytest.raises(InputError) as refused:
        load_restricted(path)
    assert str(path) in str(refused.value)
    assert not sentinel.exists()
    # nothing the loader holds was altered: numpy's shared float64 descriptor, the
    # guarded constructors' defaults
    assert np.dtype("f8").byteorder == "=" and np.dtype("f8").isnative
    assert safe_pickle._make_dtype.__defaults__ == defaults


def test_the_attacks_are_real(tmp_path):
    """Every attack marked ``real`` does run its payload under the standard ``pickle.loads``
    (in a throw-away subprocess): the corpus is made of working attacks, not of bytes that
    any loader would reject."""
    real = [a for a in ATTACKS if a.real]
    assert len(real) >= 20
    sentinels = []
    for i, attack in enumerate(real):
        path, sentinel = _planted(tmp_path / f"a{i}", attack)
        sentinels.append((attack.name, path, sentinel))
    script = textwrap.dedent("""
        import pickle, sys
        for path in sys.argv[1:]:
            try:
                pickle.loads(open(path, "rb").read())
            except Exception:
                pass
    """)
    subprocess.run([sys.executable, "-c", script, *[str(p) for _, p, _ in sentinels]],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    deadline = time.monotonic() + 30  # the Popen gadget's child touches its file on its own
    while time.monotonic() < deadline and not all(s.exists() for _, _, s in sentinels):
        time.sleep(0.05)
    assert [name for name, _, s in sentinels if not s.exists()] == []


def test_issue_reproduction_runs_under_the_previous_policy(tmp_path):
    """The issue's 100-byte pickle: admitting the whole ``numpy.dtypes`` module (the previous
    policy) lets protocol 4 resolve ``__builtins__.get`` -> ``eval``."""
    attack = next(a for a in ATTACKS if a.name == "issue_numpy_dtypes_builtins_get")
    path, sentinel = _planted(tmp_path, attack)
    assert len(path.read_bytes()) < 200

    class PreviousPolicy(pickle.Unpickler):
        def find_class(self, module, name):
            if module == "numpy.dtypes":
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"refused {module}.{name}")

    PreviousPolicy(io.BytesIO(path.read_bytes())).load()
    assert sentinel.exists()
    sentinel.unlink()
    with pytest.raises(InputError, match="dotted"):
        load_restricted(path)
    assert not sentinel.exists()


def test_admitted_pairs_are_exact_and_dotless():
    assert all("." not in name and "\n" not in module for module, name in ADMITTED)
    assert not any(module.startswith("numpy.dtypes") for module, _ in ADMITTED)
    # the only class handed out is ndarray (an argument of _reconstruct, never called)
    assert [obj for obj in ADMITTED.values() if isinstance(obj, type)] == [np.ndarray]


class _Spy(pickle.Unpickler):
    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.names: set[tuple[str, str]] = set()

    def find_class(self, module, name):
        self.names.add((module, name))
        return super().find_class(module, name)


def _legitimate() -> dict[str, object]:
    """The pickles the project reads, from the project's synthetic generators."""
    t = S.fly_experiment(3, n_flies=2, n_frames=30)
    trx = S.file_trx(t)
    return {
        "raw trx": S.file_trx(t, mm=False),
        "registered trx": trx,
        "perframe features": S.perframe_features(t)["velmag"],
        "walking labels": S.walking_labels([t], ["exp_1"], seed=0),
        "walking predictions": S.walking_predictions(t),
        "converted data": C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=3,
                                                         n_neurons=3, n_bins=4)),
        "every admitted kind": {
            "bool": np.array([True, False]), "ints": [np.arange(3, dtype=d) for d in
                                                      ("i1", "i2", "i4", "i8", "u1", "u2",
                                                       "u4", "u8")],
            "floats": [np.linspace(0, 1, 4, dtype=d) for d in ("f2", "f4", "f8")],
            "complex": np.array([1 + 2j], dtype="c16"), "c8": np.array([1j], dtype="c8"),
            "text": np.array(["ab", ""]), "bytes": np.array([b"x"]),
            "object": np.array([np.arange(2), "s", None, 1.5], dtype=object),
            "big endian": np.array([1.5, 2.5], dtype=">f8"),
            "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
            "strided": np.arange(10.0)[::3], "empty": np.zeros((0, 3)),
            "zero-d": np.array(4.0), "scalars": (np.float64(0.1), np.int32(-3), np.bool_(True),
                                                np.str_("fly"), np.uint8(7), np.float32(2),
                                                np.str_(""), np.bytes_(b""), np.longdouble(1.5),
                                                np.clongdouble(2j)),
            "python": [1, 2.5, "a", b"b", b"", None, True, 1 + 2j, (1,), {3}, frozenset({4}),
                       bytearray(b"z"), OrderedDict(a=1), {"k": [1]}, 10 ** 30],
        },
    }


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (type(b) is np.ndarray and a.dtype.newbyteorder("=") == b.dtype.newbyteorder("=")
                and a.shape == b.shape and (a.size == 0 or a.dtype.hasobject and all(
                    _same(x, y) for x, y in zip(a.ravel(), b.ravel())) or np.array_equal(
                    a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and (a == b or a != a and b != b)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("kind", list(_legitimate()))
def test_legitimate_pickles_still_load(kind, protocol):
    obj = _legitimate()[kind]
    data = pickle.dumps(obj, protocol=protocol)
    reference = pickle.loads(data)  # the standard loader is the reference
    assert _same(reference, loads_restricted(data))
    # and the names numpy and the pickler wrote are all admitted, none from numpy.dtypes
    spy = _Spy(data)
    spy.load()
    assert spy.names <= set(ADMITTED)
    assert not any(module == "numpy.dtypes" for module, _ in spy.names)


def test_protocol_5_out_of_band_buffers_are_refused():
    data = pickle.dumps(np.arange(3.0), protocol=5, buffer_callback=lambda b: False)
    with pytest.raises(InputError, match="unsafe or corrupt pickle"):
        loads_restricted(data)


def test_truncated_and_empty_pickles_name_the_problem():
    data = pickle.dumps(S.walking_predictions(S.fly_experiment(1, n_frames=20)), protocol=4)
    with pytest.raises(InputError, match="pickle data was truncated"):
        loads_restricted(data[: len(data) // 2], source="walk_preds.pkl")
    with pytest.raises(InputError, match="empty file"):
        loads_restricted(b"")


@pytest.mark.parametrize("command", ["stage", "conversion"])
def test_the_issue_reproduction_is_refused_by_the_command_line(command, tmp_path):
    """Through ``python -m trackverify`` itself: the submission is scored ``fail`` (exit 1)
    and the reference refused (exit 2); the payload never runs."""
    attack = next(a for a in ATTACKS if a.name == "issue_numpy_dtypes_builtins_get")
    if command == "stage":
        t = S.fly_experiment(7, n_flies=2, n_frames=40)
        for role in ("sub", "ref", "gt"):
            S.write_pickle(tmp_path / role / "exp_1" / "trx.pkl", S.file_trx(t, mm=False))
        sides = {"sub": (tmp_path / "sub" / "exp_1", "trx.pkl", 1),
                 "ref": (tmp_path / "ref" / "exp_1", "trx.pkl", 2)}
        args = ["stage", "body-tracking", "--submission", str(tmp_path / "sub"),
                "--reference", str(tmp_path / "ref"), "--ground-truth", str(tmp_path / "gt")]
    else:
        data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=3, n_neurons=3, n_bins=4))
        C.write_submission(tmp_path / "sub", data)
        (tmp_path / "ref").mkdir()
        (tmp_path / "ref" / "converted_data.pkl").write_bytes(pickle.dumps(data, protocol=4))
        sides = {"sub": (tmp_path / "sub", "converted_data.pkl", 1),
                 "ref": (tmp_path / "ref", "converted_data.pkl", 2)}
        args = ["conversion", "check", str(tmp_path / "sub"), "--reference",
                str(tmp_path / "ref" / "converted_data.pkl")]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    for side, (folder, name, code) in sides.items():
        original = (folder / name).read_bytes()
        sentinel = _plant(folder, name, attack)
        result = subprocess.run([sys.executable, "-m", "trackverify", *args, "--out",
                                 str(tmp_path / f"out-{side}")], capture_output=True,
                                text=True, env=env, timeout=120)
        assert result.returncode == code, result.stderr
        assert "Traceback" not in result.stderr and not sentinel.exists()
        if code == 2:
            assert str(folder / name) in result.stderr and "unsafe pickle" in result.stderr
        (folder / name).write_bytes(original)
