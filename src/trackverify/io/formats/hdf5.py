"""HDF5 at the edge: open read-only with h5py and never follow external links.

Every group and dataset is reached through :func:`dataset`, which walks the path one link
at a time and refuses an ``ExternalLink`` (it would open another file, possibly anywhere)
and any link that is not a plain hard or soft link inside the file.
"""

from __future__ import annotations

from pathlib import Path

from trackverify.errors import InputError
from trackverify.extras import require


def open_h5(path: Path, purpose: str):
    h5py = require("h5py", "formats", purpose)
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"not a readable HDF5 file ({exc})", source=str(path)) from exc


def has(handle, name: str) -> bool:
    try:
        dataset(handle, name)
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
        if not isinstance(node, h5py.Group) or part not in node:
            raise InputError(f"no '{'/'.join(walked)}' in the file", source=handle.file.filename)
        link = node.get(part, getlink=True)
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
    return node


def array(handle, name: str):
    """The whole dataset ``name`` as a numpy array."""
    import h5py
    import numpy as np

    node = dataset(handle, name)
    if not isinstance(node, h5py.Dataset):
        raise InputError(f"'{name}' is a group, expected a dataset", source=handle.file.filename)
    return np.asarray(node[()])
