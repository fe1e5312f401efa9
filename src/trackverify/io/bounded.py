"""Reads that end: no special file is opened, and no size a file declares is believed.

Every reader of trackverify goes through here before it opens an input:

* :func:`regular_file` refuses anything that is not a regular file *before opening it*
  (``os.stat`` and ``S_ISREG``, symbolic links followed): a FIFO would block forever, a
  character device such as ``/dev/zero`` never ends, a socket cannot be read. The message
  names the path and what it is.
* :func:`read_text` / :func:`read_bytes` read a regular file whole, refusing one larger
  than a stated cap (:data:`MAX_TEXT_BYTES` for configuration and metadata files).
* :func:`inside` refuses a file reached through a symbolic link that leaves the input
  folder (a chunk of a zarr store or a label image linked to ``/etc/passwd`` or to another
  input), and :func:`folder_files` applies it and :func:`regular_file` to every file
  under a folder read as one input (a GEFF store); :func:`companion` applies both to a
  file looked for beside an input (TrackMate's edges table, laptrack's split table).
* :func:`parse_nested` parses JSON or TOML and turns the ``RecursionError`` of a document
  nested deeper than the parser's recursion limit (``[[[[...`` 10^5 deep) into one clean
  error; such input fails in milliseconds. :func:`read_json` reads and parses a JSON file
  with both bounds.
* :func:`check_declared_bytes` compares the bytes a header declares (shape x item size)
  with the bytes the file can hold, and :func:`check_npy` applies it to ``.npy`` files and
  to every member of an ``.npz`` archive (a 128-byte header claiming 336 GB is refused
  before anything is allocated).

Together these bound the time any input can take before a clear error: nothing is read
that is not a regular file, nothing is allocated that the file cannot fill.
"""

from __future__ import annotations

import lzma
import os
import stat
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trackverify.errors import InputError

MAX_TEXT_BYTES = 64 * 1024 * 1024
"""Largest configuration / metadata file (TOML, JSON, text) read whole: 64 MiB."""

MAX_LABEL_VOXELS = 200_000_000
"""Largest label volume read or written (NWB label volumes, CTC label images): 2e8 voxels."""

MAX_COMPRESSION = 1100
"""Most bytes one stored byte of compressed data may stand for (an HDF5 dataset, a zip member
of an ``.npz`` archive): deflate, the usual method of both, inflates at most about 1032:1;
more declared data is not in the file (or is a decompression bomb)."""

MAX_LAYOUT_CELLS = 5 * 10**7
"""Largest dense per-frame layout (frame span x identities) built for one recording (the
registration of ``registered_distance``, the NWB writer's frames): 5e7 cells, the bound of
``tracking_gt.MAX_IDENTITY_CELLS`` (400 MB of float64). Frames are laid out by number, so a
recording of frames 0 and 2**31 - 1 would otherwise ask for 2**31 slots per identity."""

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


def _raise(error: type[Exception], source: str, problem: str):
    if issubclass(error, InputError):
        raise error(problem, source=source)
    raise error(f"{source}: {problem}")


def regular_file(path: str | os.PathLike, *, what: str = "file",
                 error: type[Exception] = InputError) -> Path:
    """``path`` as a :class:`Path` if it is a regular file (links followed); else raise
    ``error`` naming the path: not found, a folder, a FIFO, a device or a socket."""
    source = str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        _raise(error, source, f"{what} not found")
    except OSError as exc:
        _raise(error, source, f"cannot read the {what} ({exc.strerror or exc})")
    if stat.S_ISREG(mode):
        return Path(path)
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    _raise(error, source, f"expected a regular {what}, found {kind}; trackverify reads "
                          "regular files only")


def inside(path: str | os.PathLike, root: str | os.PathLike, *, what: str = "file",
           error: type[Exception] = InputError) -> Path:
    """``path`` if its real path (symbolic links resolved) lies in ``root``'s; else ``error``
    naming the path and where it leads: a link out of an input folder is not followed."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, base]) != base:
        _raise(error, str(path), f"the {what} is a link to {real}, outside {root}; links out "
                                 "of an input are not followed")
    return Path(path)


def companion(*paths: str | os.PathLike, what: str = "file",
              error: type[Exception] = InputError) -> Path | None:
    """A file looked for beside an input, under one or more names (``paths``, in order of
    preference): None when nothing has any of them; else the first path that exists, if it
    is a regular file inside its folder (:func:`inside`, :func:`regular_file`), or ``error``
    naming it: a FIFO, socket, folder, broken link or link out of the folder under the
    companion's name is refused, not skipped as absent."""
    for path in paths:
        if os.path.lexists(path):
            inside(path, os.path.dirname(os.path.abspath(path)), what=what, error=error)
            return regular_file(path, what=what, error=error)
    return None


def folder_files(root: str | os.PathLike, *, what: str = "file",
                 error: type[Exception] = InputError) -> list[Path]:
    """Every file under the folder ``root``, each checked before anything opens it: no
    symbolic link (to a file or a folder) may lead out of ``root`` (:func:`inside`) and
    every file must be a regular file (:func:`regular_file`: no FIFO, device or socket)."""
    files = []
    for folder, folders, names in os.walk(root):  # links to folders are listed, not entered
        for name in folders:
            if os.path.islink(os.path.join(folder, name)):
                inside(os.path.join(folder, name), root, what="folder", error=error)
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                inside(path, root, what=what, error=error)
            files.append(regular_file(path, what=what, error=error))
    return files


def check_size(path: Path, max_bytes: int, what: str) -> None:
    """Refuse ``path`` (an :class:`InputError`) when it is larger than ``max_bytes``: for a
    reader that streams the file rather than reading it whole (:func:`read_bytes`)."""
    if path.stat().st_size > max_bytes:
        raise InputError(f"the {what} is larger than {max_bytes} bytes", source=str(path))


def read_bytes(path: str | os.PathLike, *, max_bytes: int = MAX_TEXT_BYTES, what: str = "file",
               error: type[Exception] = InputError) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (else ``error``)."""
    path = regular_file(path, what=what, error=error)
    size = path.stat().st_size
    if size > max_bytes:
        _raise(error, str(path), f"the {what} is {size} bytes; at most {max_bytes} are read")
    with open(path, "rb") as handle:
        return handle.read(max_bytes + 1)


def read_text(path: str | os.PathLike, *, max_bytes: int = MAX_TEXT_BYTES, what: str = "file",
              error: type[Exception] = InputError, encoding: str = "utf-8") -> str:
    """A regular file of at most ``max_bytes`` decoded as ``encoding`` (else ``error``)."""
    data = read_bytes(path, max_bytes=max_bytes, what=what, error=error)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        _raise(error, str(path), f"not {encoding} text ({exc.reason} at byte {exc.start})")


def parse_nested(parse: Callable[[str], Any], text: str, *, source: str, kind: str,
                 error: type[Exception] = InputError) -> Any:
    """``parse(text)`` (``json.loads``, ``tomllib.loads``) with a document nested deeper
    than the parser can follow refused as ``error`` instead of a ``RecursionError``."""
    try:
        return parse(text)
    except RecursionError:
        _raise(error, source, f"not valid {kind} (nested too deeply to parse)")
    except ValueError as exc:  # a number of more than 4300 digits (int_max_str_digits)
        if type(exc) is not ValueError:  # the parser's own decode error: its caller's
            raise
        _raise(error, source, f"not valid {kind} ({str(exc).split(';')[0]})")


def read_json(path: str | os.PathLike, *, max_bytes: int = MAX_TEXT_BYTES, what: str = "file",
              error: type[Exception] = InputError) -> Any:
    """A regular JSON file of at most ``max_bytes``, parsed: not JSON, not UTF-8 or nested
    deeper than the parser can follow is ``error`` naming the file."""
    import json

    text = read_text(path, max_bytes=max_bytes, what=what, error=error)
    try:
        return parse_nested(json.loads, text, source=str(path), kind="JSON", error=error)
    except json.JSONDecodeError as exc:
        _raise(error, str(path), f"not valid JSON ({exc})")


def check_declared_bytes(declared: int, available: int, *, source: str, what: str,
                         error: type[Exception] = InputError) -> None:
    """Refuse a header that declares more bytes than the file can hold.

    ``declared`` and ``available`` are Python ints (no overflow); ``what`` says which
    header (e.g. "the array header (shape (10**11, 4), float64)").
    """
    if declared > available:
        _raise(error, source, f"{what} declares {declared} bytes but the file holds only "
                              f"{available}; the file is truncated or its header is false")


def check_frame_layout(n_frames: int, n_identities: int, *, what: str,
                       recording: object = None, source: str | None = None) -> None:
    """Refuse one recording whose frame span x ``n_identities`` (the values laid out per
    frame) exceeds :data:`MAX_LAYOUT_CELLS`; ``what`` names the layout."""
    cells = int(n_frames) * max(int(n_identities), 1)
    if cells > MAX_LAYOUT_CELLS:
        name = "" if recording is None else f"recording '{recording}' "
        raise InputError(f"{name}spans {int(n_frames)} frame numbers: {what} lays them out "
                         f"by number, {cells:.3g} cells ({int(n_frames)} x "
                         f"{max(int(n_identities), 1)}), more than the {MAX_LAYOUT_CELLS:.0e} "
                         "allowed (are the frames numbered in time units?)", source=source)


def check_pair_layout(n_points: int, n_axes: int, *, what: str, recording: object = None,
                      source: str | None = None, partners: int | None = None,
                      where: str = "its anchor frame") -> None:
    """Refuse ``n_points`` whose (points x ``partners`` x ``n_axes``) layout (every pair of
    them; ``partners`` None: the points themselves) exceeds :data:`MAX_LAYOUT_CELLS`;
    ``what`` names the layout, ``where`` the frame holding the points."""
    n, axes = int(n_points), max(int(n_axes), 1)
    m = n if partners is None else int(partners)
    cells = n * m * axes
    if cells > MAX_LAYOUT_CELLS:
        name = "" if recording is None else f"recording '{recording}' "
        largest = int((MAX_LAYOUT_CELLS / axes) ** 0.5)
        raise InputError(f"{name}has {n} identities in {where}: {what} lays out every "
                         f"pair of them, {cells:.3g} cells ({n} x {m} x {axes}), more than the "
                         f"{MAX_LAYOUT_CELLS:.0e} allowed (at most {largest} identities)",
                         source=source)


#: What ``np.load`` (and numpy's header parser) raises on a damaged ``.npy`` / ``.npz`` file:
#: a flipped header byte reaches Python's tokenizer (``tokenize.TokenError``, ``SyntaxError``).
NPY_LOAD_ERRORS = (OSError, ValueError, TypeError, EOFError, SyntaxError, tokenize.TokenError,
                   zipfile.BadZipFile, zlib.error, lzma.LZMAError)
NPY_MAGIC = b"\x93NUMPY"


def _npy_declared(handle) -> tuple[int, int] | None:
    """``(declared data bytes, header length)`` of the ``.npy`` stream at ``handle``, or
    None when the header cannot be read."""
    import numpy as np
    from numpy.lib import format as npy_format

    start = handle.tell()
    try:
        version = npy_format.read_magic(handle)
        header = (npy_format.read_array_header_1_0 if version == (1, 0)
                  else npy_format.read_array_header_2_0)(handle)
    except NPY_LOAD_ERRORS:
        return None  # an unreadable header: the loader refuses it and names the file
    shape, _, dtype = header
    count = 1
    for n in shape:
        count *= int(n)
    if dtype.hasobject:
        return 0, handle.tell() - start  # refused by allow_pickle=False when loaded
    return count * int(np.dtype(dtype).itemsize), handle.tell() - start


def check_npy(path: str | os.PathLike) -> Path:
    """Refuse an ``.npy`` file (or an ``.npz`` member) whose header declares more data than
    the file holds. Other files (not starting with the ``.npy`` or zip magic) are left to
    the loader, which names them."""
    path = regular_file(path)
    source = str(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        magic = handle.read(6)
        handle.seek(0)
        if magic == NPY_MAGIC:
            found = _npy_declared(handle)
            if found is not None:
                check_declared_bytes(found[0], size - found[1], source=source,
                                     what="the array header")
        elif magic[:4] == b"PK\x03\x04":
            try:
                archive = zipfile.ZipFile(handle)
            except (zipfile.BadZipFile, OSError, ValueError):
                return path  # the loader names a broken archive
            with archive:
                for info in archive.infolist():
                    if not info.is_dir():
                        _check_npz_member(archive, info, source)
    return path


#: The compression methods of a zip member Python reads (numpy's ``np.savez`` writes the
#: first, ``np.savez_compressed`` the second).
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
               zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA"}


def _check_npz_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> None:
    """Refuse an ``.npz`` member that cannot be read as an array, before numpy reads it
    (numpy raised NotImplementedError on an unknown compression method, RuntimeError on an
    encrypted member, and handed back the raw bytes of a member that is not a ``.npy``
    array): a compression method other than :data:`ZIP_METHODS`, encryption, more
    uncompressed bytes than :data:`MAX_COMPRESSION` per stored byte (a decompression bomb),
    content that is not a ``.npy`` array (``np.savez`` writes nothing else), and an array
    header declaring more data than the member holds."""
    what = f"member '{info.filename}'"
    if info.compress_type not in ZIP_METHODS:
        raise InputError(f"{what} is compressed with zip method {info.compress_type}, which "
                         f"cannot be read (readable: {', '.join(ZIP_METHODS.values())}; np.savez "
                         "writes stored or deflate)", source=source)
    if info.flag_bits & 0x1:
        raise InputError(f"{what} is encrypted (an .npz archive is read without a password)",
                         source=source)
    inflation = 1 if info.compress_type == zipfile.ZIP_STORED else MAX_COMPRESSION
    if info.file_size > info.compress_size * inflation:
        raise InputError(f"{what} declares {info.file_size} bytes from {info.compress_size} "
                         f"stored ({ZIP_METHODS[info.compress_type]}), more than {inflation} per "
                         "stored byte: the archive is damaged or a decompression bomb",
                         source=source)
    try:
        with archive.open(info) as member:
            magic = member.read(len(NPY_MAGIC))
            found = None
            if magic == NPY_MAGIC:
                member.seek(0)
                found = _npy_declared(member)
    except NPY_LOAD_ERRORS as exc:
        raise InputError(f"{what} cannot be read ({exc})", source=source) from None
    if magic != NPY_MAGIC:
        raise InputError(f"{what} is not a .npy array (it does not start with numpy's magic "
                         "bytes; np.savez writes only .npy members)", source=source)
    if found is not None:
        check_declared_bytes(found[0], info.file_size - found[1], source=source,
                             what=f"the header of {what}")


__all__ = ["MAX_TEXT_BYTES", "MAX_LABEL_VOXELS", "MAX_COMPRESSION", "regular_file", "inside", "companion",
           "folder_files",
           "read_bytes", "read_text", "read_json", "parse_nested",
           "check_declared_bytes", "check_npy"]
