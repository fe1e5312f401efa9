"""The review page's web application: a WSGI callable with an explicit route table.

Every request must carry the folder's token (the ``X-Token`` header, or ``?token=`` where a
header cannot be set: the page's own address, an image): anything else gets 403 and an empty
body before any route is looked at. A path that is not in :data:`ROUTES` gets 404, a method
the path does not take 405 (empty bodies). A handler's refusal is a JSON body
``{"error": "..."}``: 400 for a malformed request or an item that does not exist, 413 for a
body over :attr:`Limits.body_bytes`, 409 when review.csv cannot be used as it is now (edited
into an invalid file, deleted, its sampled rows changed: the line is printed on the terminal
too), 500 for a defect (one line on the terminal, no traceback).

To add a route: a function ``handler(review, request) -> Response`` and one line in
:data:`ROUTES` (parameters through :meth:`Request.param` / :meth:`Request.int_param`, a JSON
body through :meth:`Request.json`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np

from trackverify.errors import InputError, one_line
from trackverify.review.items import load_items
from trackverify.review.page import PAGE
from trackverify.review.sheet import Sheet, read_sheet, write_decision


@dataclass(frozen=True)
class Limits:
    """What one request and the server may take (the guide lists them)."""

    #: Largest request body; a longer one (any Content-Length, chunked too) gets 413.
    body_bytes: int = 10_000
    #: Deepest nesting of arrays and objects in a JSON body (a decision needs 1).
    json_depth: int = 8
    #: Largest request line and headers; longer gets 431.
    header_bytes: int = 65_536
    #: A request must arrive whole within this many seconds of its first byte.
    read_seconds: float = 15.0
    #: A connection with no request under way is closed after this many idle seconds ...
    idle_seconds: float = 30.0
    #: ... and after this many when all :attr:`connections` are open (others are waiting).
    crowded_idle_seconds: float = 1.0
    #: Connections open at once; more wait in the listen queue (:attr:`backlog`).
    connections: int = 64
    backlog: int = 1024
    #: Requests served at once.
    threads: int = 4


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    kind: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


class Refused(Exception):
    """A request a handler refuses: HTTP ``status`` and the message of the JSON body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def json_response(value, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode())


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def json_depth(data: bytes) -> int:
    """Deepest nesting of arrays and objects in the JSON text ``data``: the running sum of
    ``[``/``{`` (+1) and ``]``/``}`` (-1) outside strings, at its maximum (0 for a scalar)."""
    codes = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)
    step = np.isin(codes, np.frombuffer(b"[{", np.uint8)).astype(np.int64)
    step -= np.isin(codes, np.frombuffer(b"]}", np.uint8))
    return int(np.cumsum(step).max(initial=0))


class Request:
    """One request as the handlers see it: ``method``, ``path``, the ``query`` (first value
    of each name) and the body, read only when asked for and never past the limit."""

    def __init__(self, environ: dict, limits: Limits):
        self.environ, self.limits = environ, limits
        self.method = environ.get("REQUEST_METHOD", "")
        self.path = environ.get("PATH_INFO", "")
        try:
            parsed = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True,
                              max_num_fields=64)
        except ValueError:
            parsed = {}
        self.query = {name: values[0] for name, values in parsed.items()}

    def token(self) -> str:
        return self.environ.get("HTTP_X_TOKEN") or self.query.get("token", "")

    def param(self, name: str) -> str:
        if name not in self.query:
            raise Refused(400, f"parameter {name!r} is missing")
        return self.query[name]

    def int_param(self, name: str, low: int, high: int) -> int:
        """Query parameter ``name`` as an integer in ``low..high`` (else 400)."""
        text = self.param(name)
        if not re.fullmatch(r"-?[0-9]{1,18}", text) or not low <= int(text) <= high:
            raise Refused(400, f"parameter {name!r} must be an integer in {low}..{high}")
        return int(text)

    def body(self) -> bytes:
        text = self.environ.get("CONTENT_LENGTH") or "0"
        if not re.fullmatch(r"[0-9]+", text):
            raise Refused(400, "Content-Length is not a non-negative integer")
        length = int(text)
        if length > self.limits.body_bytes:
            raise Refused(413, f"the body is longer than {self.limits.body_bytes} bytes")
        return self.environ["wsgi.input"].read(length)

    def json(self) -> dict:
        """The body as a JSON object (400 unless it is one, nested at most
        :attr:`Limits.json_depth` deep)."""
        data = self.body()
        if json_depth(data) > self.limits.json_depth:
            raise Refused(400, f"the JSON body is nested deeper than {self.limits.json_depth}")
        try:
            value = json.loads(data)
        except ValueError as exc:  # UnicodeDecodeError too
            raise Refused(400, f"the body is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise Refused(400, "the body must be a JSON object")
        return value


@dataclass
class Review:
    """What the handlers share: review.csv's ``path``, the ``start`` sheet and the
    ``items`` the page draws (both read when the server started) and the ``lock`` every
    write takes."""

    path: Path
    start: Sheet
    items: list[dict]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sheet(self) -> Sheet:
        """review.csv as it is now, refused (:class:`InputError`) unless its sampled rows are
        the ones the page shows."""
        sheet = read_sheet(self.path)
        sheet.check_same_sample(self.start)
        return sheet


def _progress(sheet: Sheet) -> dict:
    return {"decided": sum(bool(d) for d in sheet.decisions), "decisions": sheet.decisions}


def page(review: Review, request: Request) -> Response:
    return Response(200, PAGE.encode(), "text/html; charset=utf-8",
                    (("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; "
                      "style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'"),))


def items(review: Review, request: Request) -> Response:
    sheet = review.sheet()
    listed = [{**item, "decision": d} for item, d in zip(review.items, sheet.decisions)]
    return json_response({"items": listed, "start": sheet.first_undecided()})


def decision(review: Review, request: Request) -> Response:
    """``{"index": i, "decision": "correct" | "wrong" | "unsure" | ""}``: row ``i``'s decision
    written to review.csv before the answer (the decisions as now written)."""
    body = request.json()
    if set(body) != {"index", "decision"}:
        raise Refused(400, 'the body must be {"index": ..., "decision": ...}')
    with review.lock:
        try:
            sheet = write_decision(review.sheet(), body["index"], body["decision"])
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror or exc})", source=str(review.path)) from None
    return json_response(_progress(sheet))


#: (method, path) -> handler.
ROUTES: dict[tuple[str, str], Callable[[Review, Request], Response]] = {
    ("GET", "/"): page,
    ("GET", "/api/items"): items,
    ("POST", "/api/decision"): decision,
}

_HEADERS = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer")]


class ReviewApp:
    """The WSGI application of one review folder (see the module docstring); ``report``
    receives the one-line problems the terminal shows (each once while it lasts)."""

    def __init__(self, audit_dir: str | os.PathLike, token: str, limits: Limits = Limits(),
                 report: Callable[[str], None] = print):
        path = Path(audit_dir) / "review.csv"
        start = read_sheet(path)
        self.review = Review(path, start, load_items(audit_dir, start))
        self.token, self.limits, self._report, self._last = token, limits, report, None

    def report(self, line: str | None) -> None:
        if line is not None and line != self._last:
            self._report(line)
        self._last = line

    def respond(self, request: Request) -> Response:
        if not secrets.compare_digest(request.token().encode(), self.token.encode()):
            return Response(403)
        methods = {m: h for (m, p), h in ROUTES.items() if p == request.path}
        if not methods:
            return Response(404)
        if request.method not in methods:
            return Response(405, headers=(("Allow", ", ".join(sorted(methods))),))
        try:
            response = methods[request.method](self.review, request)
        except Refused as exc:
            return json_response({"error": str(exc)}, exc.status)
        except InputError as exc:
            self.report(f"trackverify review: error: {one_line(str(exc))}")
            return json_response({"error": one_line(str(exc))}, 409)
        except Exception as exc:  # a defect: one line, the page goes on
            self.report(f"trackverify review: unexpected {type(exc).__name__}: "
                        f"{one_line(str(exc))} (a defect of trackverify)")
            return json_response({"error": "unexpected error (a defect of trackverify; "
                                           "the terminal says which)"}, 500)
        self.report(None)
        return response

    def __call__(self, environ: dict, start_response):
        response = self.respond(Request(environ, self.limits))
        headers = [("Content-Length", str(len(response.body))), *_HEADERS, *response.headers]
        if response.body:
            headers.insert(0, ("Content-Type", response.kind))
        start_response(f"{response.status} {HTTPStatus(response.status).phrase}", headers)
        return [response.body]
