"""HDF5 at the edge: open read-only with h5py and never follow external links.

Every group and dataset is reached through :func:`dataset`, which walks the path one link
at a time and refuses an ``ExternalLink`` (it would open another file, possibly anywhere)
and any link that is not a plain hard or soft link inside the file.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from trackverify.errors import InputError
from trackverify.extras import require
from trackverify.io.bounded import MAX_COMPRESSION


MAGIC = b"\x89HDF\r\n\x1a\n"


def is_hdf5(path: Path) -> bool:
    """Whether ``path`` is a file that starts with the HDF5 signature."""
    if not path.is_file():
        return False
    with open(path, "rb") as handle:
        return handle.read(8) == MAGIC


def open_h5(path: Path, purpose: str):
    """``path`` opened read-only with h5py; a FIFO, device or folder is refused unopened."""
    from trackverify.io.bounded import regular_file

    h5py = require("h5py", "formats", purpose)
    path = regular_file(path, what="HDF5 file")
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"not a readable HDF5 file ({exc})", source=str(path)) from exc


class DamagedFile(InputError):
    """h5py could not read the file's structure or data (a damaged or truncated file)."""


# What h5py raises on a damaged file while walking links or reading data ("Unable to
# synchronously check link existence (unable to offset into local heap data block)", "Can't
# read data", "bad object header version number", ...).
_DAMAGE = (RuntimeError, OSError, ValueError, KeyError)


def _damaged(handle, what: str, exc: Exception) -> DamagedFile:
    return DamagedFile(f"not a readable HDF5 file: reading '{what}' failed "
                       f"({str(exc).strip() or type(exc).__name__})", source=handle.file.filename)


@contextmanager
def _reading(handle, what: str):
    try:
        yield
    except _DAMAGE as exc:
        raise _damaged(handle, what, exc) from exc


def has(handle, name: str) -> bool:
    """Whether ``name`` is in the file (a damaged file is an error, not an absence)."""
    try:
        dataset(handle, name)
    except DamagedFile:
        raise
    except InputError:
        return False
    return True


def dataset(handle, name: str):
    """``handle[name]`` reached link by link; external or unknown links are refused."""
    import h5py

    node = handle
    walked = []
    for part in name.strip("/").split("/"):
        walked.append(part)
        with _reading(handle, "/".join(walked)):
            present = isinstance(node, h5py.Group) and part in node
            link = node.get(part, getlink=True) if present else None
        if not present:
            raise InputError(f"no '{'/'.join(walked)}' in the file", source=handle.file.filename)
        if isinstance(link, h5py.ExternalLink):
            raise InputError(f"'{'/'.join(walked)}' is an external link to "
                             f"{link.filename!r}; external links are not followed",
                             source=handle.file.filename)
        if not isinstance(link, (h5py.HardLink, h5py.SoftLink)):
            raise InputError(f"'{'/'.join(walked)}' is not a plain link", source=handle.file.filename)
        try:
            node = node[part]
        except KeyError as exc:  # a dangling soft link
            raise InputError(f"'{'/'.join(walked)}' is a dangling link",
                             source=handle.file.filename) from exc
        except _DAMAGE as exc:
            raise _damaged(handle, "/".join(walked), exc) from exc
    return node


def array(handle, name: str):
    """The whole dataset ``name`` as a numpy array."""
    import h5py
    import numpy as np

    node = dataset(handle, name)
    if not isinstance(node, h5py.Dataset):
        raise InputError(f"'{name}' is a group, expected a dataset", source=handle.file.filename)
    with _reading(handle, name):
        check_storage(node, name)
        return np.asarray(node[()])


def declared_allowed(dataset) -> tuple[int, int]:
    """``(declared, allowed)`` bytes of an h5py dataset: shape x item size (Python ints),
    against the bytes it stores (:data:`MAX_COMPRESSION` times them when compressed)."""
    import numpy as np

    declared = int(np.prod(dataset.shape, dtype=object)) * int(dataset.dtype.itemsize) \
        if dataset.shape else int(dataset.dtype.itemsize)
    stored = int(dataset.id.get_storage_size())
    return declared, stored * (MAX_COMPRESSION if dataset.compression else 1) + 4096


def check_in_file(node, name: str, source: str | None = None) -> None:
    """Refuse a dataset whose data are kept outside the file: external raw storage or a
    virtual dataset's sources (reading it would open other files, possibly anywhere).
    ``source`` names the file in the message (default: the file's own name)."""
    where = source or node.file.filename
    if node.is_virtual:
        raise InputError(f"'{name}' is a virtual dataset (its data live in other files); "
                         "virtual datasets are not followed", source=where)
    if node.external:
        raise InputError(f"'{name}' keeps its data in external file(s) "
                         f"{[e[0] for e in node.external]!r}; external storage is not read",
                         source=where)


def check_storage(node, name: str) -> None:
    """:func:`check_in_file`, then refuse a declared size the stored bytes cannot fill
    (``np.asarray`` would allocate it all before reading)."""
    from trackverify.io.bounded import check_declared_bytes

    check_in_file(node, name)
    declared, allowed = declared_allowed(node)
    check_declared_bytes(declared, allowed, source=node.file.filename,
                         what=f"dataset '{name}' (shape {node.shape}, {node.dtype})")


def numbers(handle, name: str, ndim: int, integer: bool = False):
    """Dataset ``name`` as an ``ndim``-D array of numbers: int64 when ``integer`` (every value
    whole and within int64; stored as floats, finite and below 2^53), else float64. Text, another shape or a scalar is an
    :class:`InputError` naming the dataset (``astype`` would raise, or wrap silently)."""
    import numpy as np

    values = array(handle, name)
    where = handle.file.filename
    if values.ndim != ndim:
        raise InputError(f"'{name}' must be a {ndim}-D array, found shape {values.shape}",
                         source=where)
    if values.dtype.kind not in "iuf":
        raise InputError(f"'{name}' must hold numbers, found dtype {values.dtype}", source=where)
    if not integer:
        return values.astype(np.float64)
    if values.dtype.kind == "f":  # exact below 2^53 only (2^53 + 1 is stored as 2^53)
        whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**53)
        if not whole.all():
            bad = float(values[~whole].flat[0])
            raise InputError(f"'{name}' must hold whole numbers below 2^53, found {bad!r}",
                             source=where)
    elif values.dtype.kind == "u" and values.size and int(values.max()) >= 2**63:
        raise InputError(f"'{name}' holds a value beyond int64", source=where)
    return values.astype(np.int64)
