"""review.csv: the sampled observations and a person's decision on each.

The file is read as text and only the ``decision`` field of the decided row is rewritten;
every other byte (other columns, quoting, number spelling, line endings) stays as written.
The new file replaces the old atomically (:func:`trackverify.io.atomic.write_text_atomic`),
so a server killed at any moment leaves the previous or the new complete file.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

from trackverify.errors import InputError
from trackverify.io.atomic import write_text_atomic

#: Columns review.csv must hold (``z_um`` and ``stratum`` are read when present).
REQUIRED = ("recording", "frame", "pred_id", "x_um", "y_um", "decision")
#: The values a decision may take; empty is "not decided yet".
DECISIONS = ("correct", "wrong", "unsure")
_FIELD = re.compile(r'"(?:[^"]|"")*"|[^,"\r\n]*')


@dataclass(frozen=True)
class Sheet:
    """review.csv as read: its ``lines`` (each with its line ending), the ``header`` names,
    the parsed ``rows`` (dicts of text cells) and the ``decision`` column's position."""

    path: Path
    lines: list[str]
    header: list[str]
    rows: list[dict[str, str]]

    @property
    def decisions(self) -> list[str]:
        return [row["decision"] for row in self.rows]

    def first_undecided(self) -> int:
        """Index of the first row with no decision (``len(rows)`` when all are decided)."""
        return next((i for i, d in enumerate(self.decisions) if not d), len(self.rows))

    def sample(self) -> list[str]:
        """Each line (the header first) as written, without its line ending and the text of
        its decision field: which observations were sampled."""
        column = self.header.index("decision")
        out = []
        for line in self.lines:
            body = line.rstrip("\r\n")
            start, end = _spans(body)[column]
            out.append(body[:start] + body[end:])
        return out

    def check_same_sample(self, before: "Sheet") -> None:
        """Raise an :class:`InputError` when this sheet's header or observations are not
        ``before``'s (naming the first row that differs): decisions posted by index would
        land on the wrong observation."""
        now, then = self.sample(), before.sample()
        if now == then:
            return
        restart = " (restart `trackverify review` to review the file as it is now)"
        if now[0] != then[0]:
            problem, row = "its header changed", None
        elif len(now) != len(then):
            problem, row = f"it now has {len(now) - 1} rows, not {len(then) - 1}", None
        else:
            problem = "this row holds another observation"
            row = next(k for k, (a, b) in enumerate(zip(now, then)) if a != b)
        raise InputError(f"changed since the review page started: {problem}{restart}",
                         source=str(self.path), row=row)


def _spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each comma-separated field of one CSV ``line`` (no line ending)."""
    spans, pos = [], 0
    while True:
        match = _FIELD.match(line, pos)
        spans.append(match.span())
        pos = match.end()
        if pos >= len(line) or line[pos] != ",":
            return spans if pos == len(line) else []
        pos += 1


def read_sheet(path: str | os.PathLike) -> Sheet:
    """Read and check ``path`` (review.csv): the :data:`REQUIRED` columns, one record per
    line, and each decision empty or one of :data:`DECISIONS`; an :class:`InputError`
    names the file, column and (1-based data) row otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("not found (write it with `trackverify audit sample AUDIT_DIR --n N`)",
                         source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", source=str(path)) from None
    lines = text.splitlines(keepends=True)
    if not lines:
        raise InputError("empty file: no header", source=str(path))
    header = next(csv.reader([lines[0]]))
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=str(path),
                         column=missing[0])
    rows = []
    for number, line in enumerate(lines[1:], start=1):
        cells = next(csv.reader([line]), [])
        if len(cells) != len(header) or not _spans(line.rstrip("\r\n")):
            raise InputError(f"{len(cells)} fields where the header has {len(header)} "
                             "(one record per line)", source=str(path), row=number)
        row = dict(zip(header, cells))
        if row["decision"] not in ("", *DECISIONS):
            raise InputError(f"decision {row['decision']!r} is not one of "
                             f"{', '.join(DECISIONS)} (or empty)", source=str(path),
                             column="decision", row=number)
        rows.append(row)
    return Sheet(path, lines, header, rows)


def set_decision(path: str | os.PathLike, index: int, decision: str) -> Sheet:
    """Write ``decision`` ('' clears it) into row ``index`` (0-based) of review.csv at
    ``path``, atomically, changing no other byte; returns the sheet as now written.
    A ``ValueError`` names an index or value out of range."""
    return write_decision(read_sheet(path), index, decision)


def write_decision(sheet: Sheet, index: int, decision: str) -> Sheet:
    """:func:`set_decision` on ``sheet`` as already read."""
    if decision not in ("", *DECISIONS):
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)} or empty, "
                         f"got {decision!r}")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(sheet.rows):
        raise ValueError(f"index must be an integer in 0..{len(sheet.rows) - 1}, got {index!r}")
    line = sheet.lines[index + 1]
    body = line.rstrip("\r\n")
    start, end = _spans(body)[sheet.header.index("decision")]
    lines = list(sheet.lines)
    lines[index + 1] = body[:start] + decision + body[end:] + line[len(body):]
    write_text_atomic(sheet.path, "".join(lines))
    rows = list(sheet.rows)
    rows[index] = {**rows[index], "decision": decision}
    return Sheet(sheet.path, lines, sheet.header, rows)
