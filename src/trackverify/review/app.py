"""The review page's web application: a WSGI callable with an explicit route table.

Routes: the page (``/``), the list of items (``/api/items``), one item's detail
(``/api/item?index=``), a crop of the volume as a PNG (``/api/image?index=&panel=&view=&step=
&low=&high=``: its extent in micrometres in the ``X-Extent`` header; with ``--images`` only)
and the decisions (``POST /api/decision``). Every parameter is an integer within the
item's bounds or one of a fixed set of names; nothing a client sends names a file. Blind
(the default), no answer holds the audit's judgement (:mod:`.items`).

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

import functools
import json
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np

from trackverify.errors import InputError, one_line
from trackverify.review.images import VIEWS, ImageSource, ReviewImages, open_images
from trackverify.review.items import ReviewItems
from trackverify.review.page import page_html
from trackverify.review.folder import SHEET_NAME
from trackverify.review.sheet import REVIEWER, Sheet, read_sheet, with_record, write_decision


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
    #: Longest time (s) a decision may say its item was on screen (a week).
    seconds: float = 604_800.0


@dataclass(frozen=True)
class Settings:
    """How a review is run: the ``images`` (None: geometric only), ``triage`` (show the
    audit's judgement; decisions are recorded as made in triage mode), the ``reviewer``
    recorded with each decision, the ``target`` half-width the page reports on and the
    ``sheet`` (review.csv, or another reviewer's ``review-<name>.csv``)."""

    images: ImageSource | None = None
    triage: bool = False
    reviewer: str = "reviewer"
    target: float | None = None
    sheet: str = SHEET_NAME

    @property
    def mode(self) -> str:
        return "triage" if self.triage else "blind"


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

    def choice(self, name: str, names) -> str:
        """Query parameter ``name`` as one of ``names`` (else 400)."""
        text = self.param(name)
        if text not in names:
            raise Refused(400, f"parameter {name!r} must be one of {', '.join(names)}")
        return text

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
    """What the handlers share: the sheet's ``path``, the ``start`` sheet and the ``items``
    the page draws (both read when the server started), the ``settings``, the ``design``
    (sample.json, or None), the opened ``images`` (or None), and the ``lock`` every write
    takes."""

    path: Path
    start: Sheet
    items: ReviewItems
    settings: Settings = Settings()
    design: dict | None = None
    images: ReviewImages | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        self.detail = functools.lru_cache(maxsize=64)(self.items.detail)
        voxels = None if self.images is None else self.images.voxels(_table(self.start))
        self.listing = self.items.listing(voxels)

    def sheet(self) -> Sheet:
        """The sheet as it is now, refused (:class:`InputError`) unless its sampled rows are
        the ones the page shows."""
        sheet = read_sheet(self.path)
        sheet.check_same_sample(self.start)
        return sheet

    def interval(self, decisions: list[str]) -> dict | None:
        """The anytime-valid interval so far (``all``; ``certified`` too in triage mode), or
        None without a design that fits the sheet."""
        from trackverify.review.estimate import interval_so_far

        if self.design is None:
            return None
        try:
            blocks = interval_so_far(self.design, decisions, self.settings.target)
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        return blocks if self.settings.triage else {"all": blocks["all"]}


def _table(sheet: Sheet):
    """The sheet's rows as a table of recording, frame and micrometres."""
    import pandas as pd

    table = pd.DataFrame(sheet.rows, columns=sheet.header)
    columns = [c for c in ("frame", "x_um", "y_um", "z_um") if c in table]
    table[columns] = table[columns].apply(pd.to_numeric, errors="coerce")
    return table.assign(frame=table["frame"].fillna(-1).astype("int64"))


def _progress(review: Review, sheet: Sheet) -> dict:
    return {"decided": sum(bool(d) for d in sheet.decisions), "decisions": sheet.decisions,
            "interval": review.interval(sheet.decisions)}


#: What the page's Content-Security-Policy allows: its own inline script and style, images
#: from data: URLs, requests to this server.
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
          "img-src 'self' data:; connect-src 'self'")


def page(review: Review, request: Request) -> Response:
    return Response(200, page_html(review.settings.triage).encode(), "text/html; charset=utf-8",
                    (("Content-Security-Policy", POLICY),))


def items(review: Review, request: Request) -> Response:
    """The list: each item's recording, frame, claimed id, where and decision; the first
    undecided; the mode, the reviewer, the images and the interval so far."""
    from trackverify.io.volumes import PLANES_HALF

    sheet = review.sheet()
    listed = [{**item, "decision": d} for item, d in zip(review.listing, sheet.decisions)]
    images = review.images
    shown = None if images is None else {
        "source": Path(images.source.source).name, "shows": [images.recording],
        "alignment": images.alignment.sentence, "aligned": images.alignment.aligned,
        "extent_um": images.frame_extent()}
    voxel = None if images is None else images.volume.voxel_um
    slab = {"xy": 4.0, "xz": 4.0, "plane": 1.0} if voxel is None else {
        "xy": (PLANES_HALF + 0.5) * voxel["z"],
        "xz": (round(PLANES_HALF * voxel["z"] / voxel["y"]) + 0.5) * voxel["y"],
        "plane": 0.5 * voxel["z"]}
    return json_response({**_progress(review, sheet), "items": listed,
                          "start": sheet.first_undecided(), "mode": review.settings.mode,
                          "reviewer": review.settings.reviewer, "target": review.settings.target,
                          "images": shown, "slab_um": slab,
                          "interval_note": None if review.design is not None else
                          "no interval: the folder has no sample.json that draws this sheet's "
                          "rows in their order (the terminal says why)"})


def _index(review: Review, request: Request) -> int:
    if not len(review.items):
        raise Refused(400, "the sheet has no rows")
    return request.int_param("index", 0, len(review.items) - 1)


def item(review: Review, request: Request) -> Response:
    """One item's detail (:meth:`ReviewItems.detail`)."""
    return json_response(review.detail(_index(review, request)))


#: The panels of an item an image is asked for.
PANELS = ("observed", "anchor", "start")


def image(review: Review, request: Request) -> Response:
    """A crop (or the whole frame: ``view=overview``) as a PNG at the item's contrast:
    ``panel`` observed (at track ``step``), anchor or start; ``low`` / ``high`` the
    contrast's percentiles in tenths of a percent."""
    images = review.images
    if images is None:
        raise Refused(404, "this review has no images (start it with --images SOURCE)")
    index = _index(review, request)
    panel, view = request.choice("panel", PANELS), request.choice("view", VIEWS)
    low, high = request.int_param("low", 0, 999), request.int_param("high", 1, 1000)
    if low >= high:
        raise Refused(400, "parameter 'low' must be below 'high'")
    detail = review.detail(index)
    if detail["recording"] != images.recording:
        raise Refused(404, f"the volume shows recording {images.recording}, not "
                           f"{detail['recording']}")
    frame, centre = _where(detail, panel, request)
    crop = images.crop(frame, centre, view)
    if crop is None:
        raise Refused(404, f"frame {frame} is not in the volume" if not images.holds(frame)
                      else "a volume without a z axis has no x-z view")
    references = [images.crop(f, c, "xy") for f, c in (
        _where(detail, "observed", None), _where(detail, "anchor", None, missing=None))
        if c is not None]
    limits = images.limits(references if view != "overview" else [crop], low / 10, high / 10)
    extent = ",".join(f"{v:.6g}" for v in crop.extent_um)
    return Response(200, images.png(crop, limits), "image/png", (("X-Extent", extent),))


def _where(detail: dict, panel: str, request: Request | None, missing: object = "refuse"):
    """(frame, centre) of a panel of ``detail``; observed at the request's ``step`` (its
    observation without a request)."""
    if panel == "observed":
        steps = detail["steps"]
        step = detail["at"] if request is None else request.int_param("step", 0, len(steps) - 1)
        frame, place = steps[step]["frame"], steps[step]["place"]
    else:
        block = detail[panel]
        frame, place = (None, None) if block is None else (block["frame"], block["place"])
    if place is None:
        if missing != "refuse":
            return None, None
        raise Refused(404, f"this item has no {panel} place")
    return int(frame), tuple(place[a] for a in detail["dims"])


def _shown(review: Review, index) -> str:
    """What the page showed of item ``index``: ``images`` when the volume holds its frame."""
    images = review.images
    if images is None or type(index) is not int or not 0 <= index < len(review.listing):
        return "positions"
    item = review.listing[index]
    return "images" if item["recording"] == images.recording and images.holds(item["frame"]) \
        else "positions"


def decision(review: Review, request: Request) -> Response:
    """``{"index": i, "decision": "correct" | "wrong" | "unsure" | "", "seconds": s}``: row
    ``i``'s decision and its record (the reviewer, the mode, ``s`` seconds on screen, the
    time) written to the sheet before the answer (the decisions as now written and the
    interval so far)."""
    body = request.json()
    if not {"index", "decision"} <= set(body) <= {"index", "decision", "seconds"}:
        raise Refused(400, 'the body must be {"index": ..., "decision": ...[, "seconds": ...]}')
    seconds = body.get("seconds", "")
    if seconds != "":
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
                math.isfinite(seconds) and 0 <= seconds <= request.limits.seconds):
            raise Refused(400, f"seconds must be a number of seconds in 0..{request.limits.seconds:g}")
        seconds = f"{seconds:.1f}"
    record = {"reviewer": review.settings.reviewer, "mode": review.settings.mode,
              "shown": _shown(review, body["index"]), "seconds": seconds,
              "decided_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with review.lock:
        try:
            sheet = write_decision(review.sheet(), body["index"], body["decision"], record)
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror or exc})", source=str(review.path)) from None
    return json_response(_progress(review, sheet))


#: (method, path) -> handler.
ROUTES: dict[tuple[str, str], Callable[[Review, Request], Response]] = {
    ("GET", "/"): page,
    ("GET", "/api/items"): items,
    ("GET", "/api/item"): item,
    ("GET", "/api/image"): image,
    ("POST", "/api/decision"): decision,
}

_HEADERS = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer")]


class ReviewApp:
    """The WSGI application of one review folder (see the module docstring); ``report``
    receives the one-line problems the terminal shows (each once while it lasts)."""

    def __init__(self, audit_dir: str | os.PathLike, token: str, limits: Limits = Limits(),
                 report: Callable[[str], None] = print, settings: Settings = Settings()):
        self.review = open_review(audit_dir, settings, report)
        self.token, self.limits, self._report, self._last = token, limits, report, None

    def close(self) -> None:
        if self.review.images is not None:
            self.review.images.close()

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


def open_review(audit_dir: str | os.PathLike, settings: Settings,
                report: Callable[[str], None] = print) -> Review:
    """The review of ``audit_dir``'s sheet: the sheet (given the record columns it lacks),
    its items, sample.json when it fits, the images opened and checked on the anchor frame
    (the check's sentence reported)."""
    from trackverify.review.estimate import check_order, read_design

    audit_dir = Path(audit_dir)
    if not REVIEWER.fullmatch(settings.reviewer):
        raise InputError(f"reviewer {settings.reviewer!r}: letters, digits, '.', '_' or '-' "
                         "(at most 64, starting with a letter or digit)", source="--reviewer")
    start = with_record(audit_dir / settings.sheet)
    design = None
    if (audit_dir / "sample.json").is_file():
        try:
            design = read_design(audit_dir / "sample.json")
            if "order" not in design:
                raise InputError("has no review order (drawn before it): no interval on the page",
                                 source=str(audit_dir / "sample.json"))
            check_order(design, _table(start), start.path)
        except InputError as exc:
            design = None
            report(f"trackverify review: no interval on the page: {one_line(str(exc))}")
    items = ReviewItems(audit_dir, start, settings.triage, design)
    images = None
    if settings.images is not None:
        images = open_images(settings.images, items.audit, items.anchors)
        report(f"trackverify review: images {settings.images.source} show recording "
               f"{images.recording}; {images.alignment.sentence}")
        missing = sorted({int(float(r["frame"])) for r in start.rows
                          if r["recording"] == images.recording
                          and not images.holds(int(float(r["frame"])))})
        if missing:
            report(f"trackverify review: {len(missing)} sampled frame(s) are not in the volume "
                   f"(first {missing[0]}): their items are shown as points only")
    try:
        return Review(start.path, start, items, settings, design, images)
    except BaseException:
        if images is not None:
            images.close()
        raise
