"""Pickles run code when loaded. This unpickler admits only numpy arrays, numpy scalars
and plain containers, by design rather than by a deny-list; anything else is refused with
a clear error before it runs.

Used by every reader of the pickle-based formats (fly trajectories, per-frame features,
converted neural datasets). The policy (docs/reference/robustness.md, "Pickle policy"):

* **Opcodes.** The loader is :class:`pickle._Unpickler` (the pure-Python one) with its
  opcode table narrowed: ``INST``, ``OBJ``, ``NEWOBJ``, ``NEWOBJ_EX``, ``PERSID``,
  ``BINPERSID`` and the ``EXT1/2/4`` extension-registry opcodes are refused outright;
  ``APPEND(S)`` only extend a ``list``, ``SETITEM(S)`` only fill a ``dict`` or
  ``OrderedDict``, ``ADDITEMS`` only fill a ``set`` (never a method looked up on another
  object).
* **Names.** ``GLOBAL`` / ``STACK_GLOBAL`` resolve only the exact ``(module, name)`` pairs
  of :data:`ADMITTED` (no module prefixes, and a name containing ``.`` is refused before the
  table is consulted, so protocol 4's dotted look-ups never happen). Nothing is imported by
  name: each pair maps to an object held by this module, and :meth:`find_class` checks that
  what it returns *is* one of those objects.
* **Calls.** ``REDUCE`` calls only the guarded constructors below (identity check), each of
  which accepts exactly the arguments numpy and the pickler emit for admitted data and
  refuses anything else: e.g. ``numpy.dtype`` only for the plain dtypes of
  :data:`DTYPE_SPECS`, always as a copy (``copy=False`` would hand back numpy's shared
  descriptor, which a following ``BUILD`` could then alter for the whole process).
* **State.** ``BUILD`` only sets the state of a ``numpy.ndarray`` (version 1, a shape of
  non-negative ints, an admitted dtype, raw bytes of exactly ``prod(shape) * itemsize``, or
  for an object dtype a list of exactly ``prod(shape)`` elements, themselves unpickled by
  this same loader) or of a ``numpy.dtype`` (exactly the state numpy writes for it: no
  fields, no sub-array, no metadata).

numpy pickles a dtype *instance* as ``numpy.dtype(spec, False, True)`` plus that state; the
``numpy.dtypes.<Name>DType`` classes appear only when a DType *class* itself is pickled,
which no admitted file holds, so none is admitted.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import re
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.bounded import regular_file

try:  # numpy >= 2
    from numpy._core import multiarray as _np_multiarray
    from numpy._core import numeric as _np_numeric
except ImportError:  # pragma: no cover - numpy 1.26
    from numpy.core import multiarray as _np_multiarray  # type: ignore[no-redef]
    from numpy.core import numeric as _np_numeric  # type: ignore[no-redef]

# The plain dtypes an admitted array or scalar may have (numpy's own pickle spelling):
# bool, signed and unsigned ints, floats (long double included), complex, fixed-width unicode
# and bytes (``U0`` / ``S0``: the empty ``np.str_('')`` / ``np.bytes_(b'')``), object. Not
# admitted: structured and void dtypes, datetimes, numpy 2's variable-width StringDType.
DTYPE_SPECS = re.compile(r"(b1|[iu][1248]|f(2|4|8|12|16)|c(8|16|24|32)"
                         r"|U[0-9]{1,9}|S[0-9]{1,9}|O[48])")
_MAX_NDIM = 32


class Refused(pickle.UnpicklingError):
    """The pickle asked for something outside the policy (never executed)."""


def _refuse(what: str) -> None:
    raise Refused(f"refused to {what}: only numpy arrays, numpy scalars and plain "
                  "containers are allowed")


def _is_int(value: Any) -> bool:
    return type(value) is int


def _check_shape(shape: Any) -> int:
    if (type(shape) is not tuple or len(shape) > _MAX_NDIM
            or not all(_is_int(n) and n >= 0 for n in shape)):
        _refuse(f"use the array shape {shape!r}")
    return math.prod(shape)


def _check_plain_dtype(dtype: Any, what: str) -> np.dtype:
    if not isinstance(dtype, np.dtype):
        _refuse(f"{what} with dtype {type(dtype).__name__}")
    if dtype.fields is not None or dtype.subdtype is not None or dtype.metadata is not None:
        _refuse(f"{what} with the structured dtype {dtype}")
    return dtype


# ---- guarded constructors: the only callables REDUCE may call ---------------------------

def _make_dtype(spec: Any, align: Any = False, copy: Any = True) -> np.dtype:
    """``numpy.dtype(spec, False, True)`` for a plain ``spec`` (:data:`DTYPE_SPECS`)."""
    if type(spec) is not str or not DTYPE_SPECS.fullmatch(spec) or align is not False \
            or copy is not True:
        _refuse(f"call numpy.dtype{(spec, align, copy)!r}")
    return np.dtype(spec, False, True)


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    """numpy's array skeleton ``_reconstruct(ndarray, (0,), b'b')``, filled by ``BUILD``."""
    if subtype is not np.ndarray or shape != (0,) or type(shape) is not tuple \
            or dtype not in (b"b", "b"):
        _refuse(f"call numpy _reconstruct with {(subtype, shape, dtype)!r}")
    return _np_multiarray._reconstruct(np.ndarray, (0,), b"b")


def _scalar(dtype: Any, data: Any = None) -> Any:
    """A numpy scalar from its dtype and exactly ``itemsize`` raw bytes."""
    dtype = _check_plain_dtype(dtype, "make a numpy scalar")
    if dtype.hasobject or type(data) is not bytes or len(data) != dtype.itemsize:
        _refuse(f"make a numpy scalar of {dtype} from {type(data).__name__}")
    return _np_multiarray.scalar(dtype, data)


def _frombuffer(buffer: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
    """A protocol-5 array from exactly ``prod(shape) * itemsize`` bytes."""
    dtype = _check_plain_dtype(dtype, "make an array from a buffer")
    size = _check_shape(shape)
    if isinstance(buffer, pickle.PickleBuffer):
        buffer = buffer.raw()
    if (dtype.hasobject or not isinstance(buffer, (bytes, bytearray, memoryview))
            or order not in ("C", "F") or memoryview(buffer).nbytes != size * dtype.itemsize):
        _refuse(f"make an array of {dtype}, shape {shape!r} from a buffer")
    return _np_numeric._frombuffer(buffer, dtype, shape, order)


def _latin1(text: Any, encoding: Any = None) -> bytes:
    """Protocols 0-2 write ``bytes`` as ``_codecs.encode(text, 'latin1')``."""
    if type(text) is not str or encoding != "latin1":
        _refuse(f"call _codecs.encode{(type(text).__name__, encoding)!r}")
    return text.encode("latin-1")


def _make_empty_bytes(*args: Any) -> bytes:
    """Protocols 0-2 write ``b''`` as ``bytes()``."""
    if args:
        _refuse("call bytes with arguments")
    return b""


def _make_set(items: Any = ()) -> set:
    if type(items) is not list:
        _refuse(f"make a set from {type(items).__name__}")
    return set(items)


def _make_frozenset(items: Any = ()) -> frozenset:
    if type(items) is not list:
        _refuse(f"make a frozenset from {type(items).__name__}")
    return frozenset(items)


def _make_bytearray(data: Any = b"", encoding: Any = None) -> bytearray:
    if type(data) is bytes and encoding is None:
        return bytearray(data)
    if type(data) is str and encoding == "latin-1":
        return bytearray(data, "latin-1")
    _refuse(f"make a bytearray from {type(data).__name__}")


def _make_complex(real: Any = 0.0, imag: Any = 0.0) -> complex:
    if not all(type(v) in (int, float) for v in (real, imag)):
        _refuse("make a complex number from non-numbers")
    return complex(real, imag)


def _make_ordered_dict(*args: Any) -> OrderedDict:
    """``OrderedDict()``: the pickler writes the items afterwards (``SETITEMS``)."""
    if args:
        _refuse("make an OrderedDict from arguments")
    return OrderedDict()


# ---- the exact (module, name) pairs, and the object each one stands for ------------------

_NUMPY_MODULES = ("numpy._core.multiarray", "numpy.core.multiarray")
ADMITTED: Mapping[tuple[str, str], Any] = MappingProxyType({
    ("numpy", "ndarray"): np.ndarray,  # only ever an argument of _reconstruct
    ("numpy", "dtype"): _make_dtype,
    **{(m, "_reconstruct"): _reconstruct for m in _NUMPY_MODULES},
    **{(m, "scalar"): _scalar for m in _NUMPY_MODULES},
    ("numpy._core.numeric", "_frombuffer"): _frombuffer,
    ("numpy.core.numeric", "_frombuffer"): _frombuffer,
    ("_codecs", "encode"): _latin1,
    ("collections", "OrderedDict"): _make_ordered_dict,
    **{(b, "set"): _make_set for b in ("builtins", "__builtin__")},
    **{(b, "frozenset"): _make_frozenset for b in ("builtins", "__builtin__")},
    **{(b, "bytes"): _make_empty_bytes for b in ("builtins", "__builtin__")},
    **{(b, "bytearray"): _make_bytearray for b in ("builtins", "__builtin__")},
    **{(b, "complex"): _make_complex for b in ("builtins", "__builtin__")},
})
"""Every global a pickle may name, as the exact ``(module, name)`` pair numpy 1.26 / 2.x and
the pickler write for admitted data (``__builtin__`` is protocol 0-2's spelling)."""

_EXPECTED_IDS = frozenset(id(obj) for obj in ADMITTED.values())
_CALLABLE = tuple(obj for obj in ADMITTED.values() if obj is not np.ndarray)


def _is_callable_target(func: Any) -> bool:
    return any(func is target for target in _CALLABLE)


class _RestrictedUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def find_class(self, module: str, name: str) -> Any:
        if type(module) is not str or type(name) is not str or "." in name:
            _refuse(f"load {module!s}.{name!s} (a dotted or non-text name)")
        obj = ADMITTED.get((module, name))
        if obj is None or id(obj) not in _EXPECTED_IDS:
            _refuse(f"load {module}.{name}")
        return obj

    # -- refused opcodes: each can call or look up something outside the table
    def _refused_opcode(self, opcode: str) -> None:
        _refuse(f"run the {opcode} opcode")

    def load_inst(self):
        self._refused_opcode("INST")

    def load_obj(self):
        self._refused_opcode("OBJ")

    def load_newobj(self):
        self._refused_opcode("NEWOBJ")

    def load_newobj_ex(self):
        self._refused_opcode("NEWOBJ_EX")

    def load_persid(self):
        self._refused_opcode("PERSID")

    def load_binpersid(self):
        self._refused_opcode("BINPERSID")

    def load_ext(self):
        self._refused_opcode("EXT")

    # -- calls and state
    def load_reduce(self):
        stack = self.stack
        args = stack.pop()
        func = stack[-1]
        if not _is_callable_target(func):
            _refuse(f"call {_describe(func)}")
        if type(args) is not tuple:
            _refuse(f"call {getattr(func, '__name__', func)} with {type(args).__name__} arguments")
        stack[-1] = func(*args)

    def load_build(self):
        stack = self.stack
        state = stack.pop()
        inst = stack[-1]
        if type(inst) is np.ndarray:
            _check_array_state(inst, state)
        elif isinstance(inst, np.dtype):
            _check_dtype_state(inst, state)
        else:
            _refuse(f"set the state of {_describe(inst)}")
        inst.__setstate__(state)

    # -- containers: only their own type's methods, never an attribute of another object
    def load_append(self):
        value = self.stack.pop()
        _require(self.stack[-1], (list,), "APPEND")
        self.stack[-1].append(value)

    def load_appends(self):
        items = self.pop_mark()
        _require(self.stack[-1], (list,), "APPENDS")
        self.stack[-1].extend(items)

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        _require(self.stack[-1], (dict, OrderedDict), "SETITEM")
        self.stack[-1][key] = value

    def load_setitems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        _require(target, (dict, OrderedDict), "SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def load_additems(self):
        items = self.pop_mark()
        _require(self.stack[-1], (set,), "ADDITEMS")
        self.stack[-1].update(items)


for _code, _method in ((pickle.INST, "load_inst"), (pickle.OBJ, "load_obj"),
                       (pickle.NEWOBJ, "load_newobj"), (pickle.NEWOBJ_EX, "load_newobj_ex"),
                       (pickle.PERSID, "load_persid"), (pickle.BINPERSID, "load_binpersid"),
                       (pickle.EXT1, "load_ext"), (pickle.EXT2, "load_ext"),
                       (pickle.EXT4, "load_ext"), (pickle.REDUCE, "load_reduce"),
                       (pickle.BUILD, "load_build"), (pickle.APPEND, "load_append"),
                       (pickle.APPENDS, "load_appends"), (pickle.SETITEM, "load_setitem"),
                       (pickle.SETITEMS, "load_setitems"), (pickle.ADDITEMS, "load_additems")):
    _RestrictedUnpickler.dispatch[_code[0]] = getattr(_RestrictedUnpickler, _method)
del _code, _method


def _describe(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{getattr(obj, '__module__', None) or type(obj).__module__}.{name}"


def _require(target: Any, types: tuple[type, ...], opcode: str) -> None:
    if type(target) not in types:
        _refuse(f"run {opcode} on {_describe(target)}")


def _check_array_state(array: np.ndarray, state: Any) -> None:
    """numpy's ndarray state: ``(1, shape, dtype, is_fortran, raw bytes | list of objects)``."""
    if type(state) is not tuple or len(state) != 5 or state[0] != 1 or type(state[0]) is not int:
        _refuse("set an array state other than numpy's (1, shape, dtype, fortran, data)")
    _, shape, dtype, fortran, data = state
    size = _check_shape(shape)
    dtype = _check_plain_dtype(dtype, "fill an array")
    if type(fortran) is not bool or array.size != 0:
        _refuse("set an array state twice or with a non-boolean order flag")
    if dtype.hasobject:
        if type(data) is not list or len(data) != size:
            _refuse(f"fill an object array of {size} elements from {type(data).__name__}")
    elif type(data) not in (bytes, bytearray) or len(data) != size * dtype.itemsize:
        _refuse(f"fill an array of {size} {dtype} from {type(data).__name__} of another size")


def _check_dtype_state(dtype: np.dtype, state: Any) -> None:
    """Exactly the state numpy writes for this plain dtype in one of its byte orders."""
    _check_plain_dtype(dtype, "set a dtype state")
    expected = {dtype.newbyteorder(order).__reduce__()[2] for order in "<>|="}
    if type(state) is not tuple or state not in expected:
        _refuse(f"set the state {state!r} of dtype {dtype}")


def loads_restricted(data: bytes, source: str = "<bytes>") -> Any:
    """Unpickle ``data`` through the restricted unpickler (policy in the module docstring).

    Raises :class:`InputError` naming ``source`` for anything refused or unreadable.
    """
    try:
        return _RestrictedUnpickler(io.BytesIO(data)).load()
    except Refused as exc:
        raise InputError(f"unsafe pickle: {exc}", source=source) from None
    except (pickle.UnpicklingError, EOFError) as exc:
        if isinstance(exc, EOFError) or "exhausted" in str(exc) or "truncated" in str(exc):
            raise InputError("not a readable pickle: pickle data was truncated"
                             + (" (empty file)" if not data else ""), source=source) from None
        raise InputError(f"unsafe or corrupt pickle: {exc}", source=source) from None
    except (RecursionError, MemoryError) as exc:
        raise InputError(f"not a readable pickle ({type(exc).__name__})", source=source) from None
    except Exception as exc:  # noqa: BLE001 - nothing outside the policy ran; the bytes are bad
        raise InputError(f"not a readable pickle ({type(exc).__name__}: {exc})",
                         source=source) from None


def load_restricted(path: str | os.PathLike) -> Any:
    """Load a pickle file through the restricted unpickler."""
    path = regular_file(path)
    return loads_restricted(path.read_bytes(), source=str(path))


__all__ = ["ADMITTED", "DTYPE_SPECS", "Refused", "load_restricted", "loads_restricted"]
