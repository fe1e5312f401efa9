"""Where outputs may go: file names built from input data stay inside ``--out``, and
``--out`` never overlaps an input (docs/reference/robustness.md, "Output-path policy").

* :func:`safe_name` / :func:`child_path` turn an input-derived name (a recording id, an
  experiment folder name) into one plain file name inside the output folder, or refuse it:
  empty, ``.`` / ``..``, a path separator (``/`` or ``\\``), NUL or another control
  character, a character that does not show as itself (a bidirectional override, a
  zero-width space, a C1 control, a line separator), a drive or stream colon, a character
  Windows refuses (``< > " | ? *``), a Windows reserved device name (``CON``, ``NUL``,
  ``COM1`` ... with any extension), a trailing dot or space (which Windows drops), more
  than 255 bytes, or a name whose real path is not directly inside the real output folder
  (an existing symbolic link). Two names of one output folder may not differ only by case or
  Unicode normal form (:func:`child_paths`).
* :func:`check_out_dir` / :func:`check_out_file` refuse an ``--out`` that is an input, lies
  inside an input folder, or contains an input file or folder (real paths: symbolic links
  resolved), and an ``--out`` folder that exists as a regular file or lies under one.

Every refusal is an :class:`~trackverify.errors.InputError` (exit 2) naming both paths or
the offending name. The checks run before anything is written.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from trackverify.errors import InputError
from trackverify.values import describe_character, hidden_character

_RESERVED = re.compile(r"(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³]|CONIN\$|CONOUT\$)(\..*)?",
                       re.IGNORECASE)
_MAX_NAME_BYTES = 255
_NOT_ON_WINDOWS = '<>"|?*'


def _name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one plain file name (None if it can)."""
    if not name or not name.strip():
        return "the name is empty"
    if name in (".", ".."):
        return f"'{name}' is not a file name"
    if "/" in name or "\\" in name:
        return "the name contains a path separator"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "the name contains a NUL or control character"
    hidden = hidden_character(name)
    if hidden is not None:
        return (f"the name contains {describe_character(hidden)}, "
                "an invisible or control character that changes how the name reads")
    if ":" in name:
        return "the name contains ':' (a drive or stream on Windows)"
    if any(c in _NOT_ON_WINDOWS for c in name):
        return f"the name contains one of {_NOT_ON_WINDOWS} (not allowed in a file name on Windows)"
    if _RESERVED.fullmatch(name.strip()):
        return "the name is a reserved device name on Windows"
    if name[-1] in ". ":
        return "the name ends in a dot or a space (dropped on Windows)"
    if len(name.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES:
        return f"the name is longer than {_MAX_NAME_BYTES} bytes"
    return None


def safe_name(name: object, suffix: str = "", *, what: str = "recording",
              source: str | None = None) -> str:
    """``str(name) + suffix`` if that is one plain file name; else InputError naming it."""
    text = str(name)
    problem = _name_problem(text) or _name_problem(text + suffix)
    if problem is not None:
        raise InputError(f"{what} {text!r} cannot name an output file: {problem}",
                         source=source)
    return text + suffix


def child_path(out: str | os.PathLike, name: object, suffix: str = "", *,
               what: str = "recording", source: str | None = None) -> Path:
    """``out / (name + suffix)``, refused unless it is a file directly inside ``out``."""
    out = Path(out)
    path = out / safe_name(name, suffix, what=what, source=source)
    if Path(os.path.realpath(path)).parent != Path(os.path.realpath(out)):
        raise InputError(f"{what} {str(name)!r}: {path} resolves outside the output folder "
                         f"{out}", source=source)
    return path


def child_paths(out: str | os.PathLike, names: Iterable[object], suffix: str = "", *,
                what: str = "recording", source: str | None = None) -> list[Path]:
    """:func:`child_path` of every name; two names that would share a file (compared
    case-insensitively, as on macOS and Windows, and in one Unicode normal form, as on
    macOS: ``'caf\u00e9'`` and ``'cafe\u0301'`` are one name there) are refused."""
    names = list(names)
    paths = [child_path(out, n, suffix, what=what, source=source) for n in names]
    seen: dict[str, object] = {}
    for name, path in zip(names, paths):
        key = unicodedata.normalize("NFD", unicodedata.normalize("NFD", path.name).casefold())
        if key in seen:
            first, second = str(seen[key]), str(name)
            show = ascii if unicodedata.normalize("NFC", first) == \
                unicodedata.normalize("NFC", second) else repr  # else they print alike
            raise InputError(f"{what}s {show(first)} and {show(second)} would write the "
                             f"same file {path}", source=source)
        seen[key] = name
    return paths


def _real(path: str | os.PathLike) -> Path:
    return Path(os.path.normcase(os.path.realpath(os.path.abspath(path))))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _under_a_file(out: Path) -> Path | None:
    """The regular file that ``out`` (or one of its parents) is, if any."""
    for candidate in [out, *out.parents]:
        if candidate.exists() or candidate.is_symlink():
            return None if candidate.is_dir() else candidate
    return None


def check_not_under_file(out: str | os.PathLike, folder: bool = True) -> None:
    """Refuse an output that is (``folder``: a folder wanted) or lies under a regular file."""
    out = Path(out)
    blocking = _under_a_file(Path(os.path.abspath(out)))
    if blocking is not None and (folder or blocking != Path(os.path.abspath(out))):
        where = "is a regular file" if blocking == Path(os.path.abspath(out)) else \
            f"lies under the regular file {blocking}"
        raise InputError(f"--out {out} {where}; give a folder", source=str(out))


def _check(out: str | os.PathLike, inputs: Iterable[str | os.PathLike | None],
           folder: bool) -> None:
    out = Path(out)
    check_not_under_file(out, folder)
    if not folder and out.is_dir():
        raise InputError(f"--out {out} is a folder; give a file name", source=str(out))
    real_out = _real(out)
    for given in inputs:
        if given is None:
            continue
        real_in = _real(given)
        if real_out == real_in:
            relation = "is the input"
        elif _inside(real_out, real_in):
            relation = "lies inside the input"
        elif _inside(real_in, real_out):
            relation = "contains the input"
        else:
            continue
        raise InputError(f"--out {out} {relation} {given}; write outputs elsewhere "
                         "(inputs are never modified)", source=str(out))


def check_out_dir(out: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> None:
    """Refuse an output folder that overlaps an input, is a regular file or lies under one.

    Overlap, on real paths (symbolic links resolved, case folded where the OS does): ``out``
    equal to an input, inside an input folder, or containing an input file or folder.
    ``None`` inputs (options not given) are skipped.
    """
    _check(out, inputs, folder=True)


def check_out_file(out: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> None:
    """Refuse an output *file* that is an input, lies inside an input folder, is an existing
    folder, or lies under a regular file."""
    _check(out, inputs, folder=False)


def check_out_overlap(out: str | os.PathLike, inputs: dict) -> None:
    """Refuse an output folder that is, lies inside or contains one of ``inputs`` (name ->
    path, label or table): :func:`check_out_dir` on those that name an existing file or folder
    (a label such as ``<tracks>`` or a DataFrame names none)."""
    check_out_dir(out, [p for p in inputs.values()
                        if isinstance(p, (str, os.PathLike)) and os.path.exists(p)])
