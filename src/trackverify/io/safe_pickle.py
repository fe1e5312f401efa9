"""Pickles run code when loaded. This unpickler admits only numpy arrays, numpy scalars
and plain containers; anything else is refused with a clear error.

Used by every reader of the pickle-based formats (fly trajectories, per-frame features,
converted neural datasets).
"""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path
from typing import Any

from trackverify.errors import InputError
from trackverify.io.bounded import regular_file

_ALLOWED = {
    ("builtins", "dict"), ("builtins", "list"), ("builtins", "tuple"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "int"), ("builtins", "float"), ("builtins", "str"),
    ("builtins", "bytes"), ("builtins", "bool"), ("builtins", "complex"), ("builtins", "slice"),
    ("builtins", "bytearray"), ("collections", "OrderedDict"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "float64"), ("numpy", "float32"), ("numpy", "int64"), ("numpy", "int32"),
    ("numpy", "int16"), ("numpy", "int8"), ("numpy", "uint8"), ("numpy", "uint16"),
    ("numpy", "uint32"), ("numpy", "uint64"), ("numpy", "bool_"), ("numpy", "str_"),
}
# numpy pickles its dtypes as ``numpy.dtype`` plus ``numpy.dtypes.<Name>DType`` classes.
_ALLOWED_MODULE_PREFIXES = ("numpy.dtypes",)


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED or module in _ALLOWED_MODULE_PREFIXES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refused to load {module}.{name}: only numpy arrays, numpy scalars and plain "
            "containers are allowed")


def loads_restricted(data: bytes, source: str = "<bytes>") -> Any:
    """Unpickle ``data`` through the restricted unpickler."""
    try:
        return _RestrictedUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as exc:
        raise InputError(f"unsafe or corrupt pickle: {exc}", source=source) from exc
    except (EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError,
            KeyError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise InputError(f"not a readable pickle ({type(exc).__name__}: {exc})",
                         source=source) from exc


def load_restricted(path: str | os.PathLike) -> Any:
    """Load a pickle file through the restricted unpickler."""
    path = regular_file(path)
    return loads_restricted(path.read_bytes(), source=str(path))
