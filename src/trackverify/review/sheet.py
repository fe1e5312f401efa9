"""review.csv: the sampled observations and a person's decision on each.

The file is read as text and only the ``decision`` field of the decided row and its
*record* (:data:`RECORD`: who decided, in which mode, the seconds the item was on screen,
when; columns after ``decision``, optional) are rewritten; every other byte (other
columns, quoting, number spelling, line endings) stays as written. The new file replaces
the old atomically (:func:`trackverify.io.atomic.write_text_atomic`), so a server killed at
any moment leaves the previous or the new complete file.

Several reviewers: ``review.csv`` is the sheet the error rate is estimated from; another
reviewer decides the same rows in ``review-<name>.csv`` (:func:`second_sheet`: a copy of the
sample with every decision empty), and ``trackverify audit estimate`` gives their agreement.
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
#: The record of each decision (optional columns, after ``decision``): the reviewer, the mode
#: the page was in (:data:`MODES`), what it showed (:data:`SHOWN`), the seconds the item was
#: on screen before it was decided (summed over visits) and the time it was written (UTC,
#: ISO 8601). Cleared with the decision.
RECORD = ("reviewer", "mode", "shown", "seconds", "decided_at")
#: ``blind``: the page showed nothing of the audit's verdicts; ``triage``: it showed them.
MODES = ("blind", "triage")
#: What the page showed: crops of the lab's volumes, or positions only.
SHOWN = ("images", "positions")
#: A reviewer's name: letters, digits, ``.``, ``_``, ``-`` (a login name; it names a file).
REVIEWER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Another reviewer's sheet of the same sample.
SECOND_SHEET = re.compile(r"review-([A-Za-z0-9][A-Za-z0-9._-]{0,63})\.csv")
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

    def column(self, name: str) -> list[str]:
        """The cells of column ``name`` (empty strings when the sheet has no such column)."""
        return [row.get(name, "") for row in self.rows]

    def sample(self) -> list[str]:
        """Each line (the header first) as written, without its line ending and the text of
        its decision and record fields: which observations were sampled."""
        columns = sorted((self.header.index(c) for c in ("decision", *RECORD) if c in self.header),
                         reverse=True)
        out = []
        for line in self.lines:
            body = line.rstrip("\r\n")
            spans = _spans(body)
            for column in columns:
                start, end = spans[column]
                body = body[:start] + body[end:]
            out.append(body)
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
        for name, allowed in (("mode", MODES), ("shown", SHOWN)):
            if row.get(name, "") not in ("", *allowed):
                raise InputError(f"{name} {row[name]!r} is not one of {', '.join(allowed)} (or "
                                 "empty)", source=str(path), column=name, row=number)
        rows.append(row)
    return Sheet(path, lines, header, rows)


def login_name() -> str:
    """The reviewer recorded by default: the login name (an :class:`InputError` asking for
    ``--reviewer`` when it is unknown or not a :data:`REVIEWER` name)."""
    import getpass

    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    if not REVIEWER.fullmatch(name):
        raise InputError(f"the login name {name!r} cannot name a reviewer: give --reviewer NAME "
                         "(letters, digits, '.', '_', '-')")
    return name


def with_record(path: str | os.PathLike) -> Sheet:
    """review.csv at ``path`` with the :data:`RECORD` columns: those it lacks are added after
    its last column, empty in every row (one atomic rewrite; nothing else changes)."""
    sheet = read_sheet(path)
    added = _recorded(sheet)
    if added is not sheet:
        write_text_atomic(sheet.path, "".join(added.lines))
    return added


def _recorded(sheet: Sheet) -> Sheet:
    """``sheet`` with the :data:`RECORD` columns it lacks added (in memory; itself when it
    has them all)."""
    missing = [name for name in RECORD if name not in sheet.header]
    if not missing:
        return sheet
    lines = []
    for number, line in enumerate(sheet.lines):
        body = line.rstrip("\r\n")
        added = ",".join(missing) if number == 0 else "," * (len(missing) - 1)
        lines.append(f"{body},{added}{line[len(body):]}")
    rows = [{**row, **dict.fromkeys(missing, "")} for row in sheet.rows]
    return Sheet(sheet.path, lines, [*sheet.header, *missing], rows)


def second_sheet(audit_dir: str | os.PathLike, reviewer: str) -> Path:
    """``AUDIT_DIR/review-<reviewer>.csv``: the rows of review.csv with every decision and
    record empty, for another reviewer (made once; an existing one is kept as it is;
    review.csv itself is not touched)."""
    if not REVIEWER.fullmatch(reviewer):
        raise InputError(f"reviewer {reviewer!r}: letters, digits, '.', '_' or '-' (at most "
                         "64, starting with a letter or digit)", source="--reviewer")
    path = Path(audit_dir) / f"review-{reviewer}.csv"
    if path.exists():
        return path
    sheet = _recorded(read_sheet(Path(audit_dir) / "review.csv"))
    for index in range(len(sheet.rows)):
        sheet = _written(sheet, index, {"decision": "", **dict.fromkeys(RECORD, "")})
    write_text_atomic(path, "".join(sheet.lines))
    return path


def set_decision(path: str | os.PathLike, index: int, decision: str,
                 record: dict | None = None) -> Sheet:
    """Write ``decision`` ('' clears it) into row ``index`` (0-based) of review.csv at
    ``path``, with its ``record`` (:data:`RECORD` names -> text; cleared with the decision)
    in the record columns the sheet has, atomically, changing no other byte; returns the
    sheet as now written. A ``ValueError`` names an index or value out of range."""
    return write_decision(read_sheet(path), index, decision, record)


def write_decision(sheet: Sheet, index: int, decision: str, record: dict | None = None) -> Sheet:
    """:func:`set_decision` on ``sheet`` as already read."""
    if decision not in ("", *DECISIONS):
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)} or empty, "
                         f"got {decision!r}")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(sheet.rows):
        raise ValueError(f"index must be an integer in 0..{len(sheet.rows) - 1}, got {index!r}")
    record = record or {}
    if set(record) - set(RECORD) or record.get("mode", "") not in ("", *MODES) or \
            record.get("shown", "") not in ("", *SHOWN) or any(
            not isinstance(v, str) or not _PLAIN.fullmatch(v) for v in record.values()):
        raise ValueError(f"a record is {', '.join(RECORD)} as plain text, got {record!r}")
    cells = {"decision": decision,
             **{name: record.get(name, "") if decision else "" for name in RECORD}}
    sheet = _written(sheet, index, cells)
    write_text_atomic(sheet.path, "".join(sheet.lines))
    return sheet


#: A record cell written as is: no comma, quote or line break (nothing to quote).
_PLAIN = re.compile(r'[^,"\r\n]{0,64}')


def _written(sheet: Sheet, index: int, cells: dict[str, str]) -> Sheet:
    """``sheet`` with row ``index``'s ``cells`` (columns it has) replaced, in memory."""
    line = sheet.lines[index + 1]
    body = line.rstrip("\r\n")
    spans = _spans(body)
    for name in sorted((c for c in cells if c in sheet.header), key=sheet.header.index,
                       reverse=True):
        start, end = spans[sheet.header.index(name)]
        body = body[:start] + cells[name] + body[end:]
    lines = list(sheet.lines)
    lines[index + 1] = body + line[len(line.rstrip("\r\n")):]
    rows = list(sheet.rows)
    rows[index] = {**rows[index], **{k: v for k, v in cells.items() if k in sheet.header}}
    return Sheet(sheet.path, lines, sheet.header, rows)
