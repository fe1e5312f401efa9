"""The review page's server: the WSGI application of :mod:`.app` served by waitress on
127.0.0.1 only.

waitress (pure Python, no dependency, maintained by the Pylons project) replaces the
standard library's ``http.server``, which has no limit of its own: it parses each request
in one I/O thread (an idle or slow connection costs a socket, not a thread), refuses a body
over :attr:`Limits.body_bytes` whatever its Content-Length (missing, negative: 400; too
large: 413 before reading it) and chunked bodies as they arrive (413), caps the open
connections (:attr:`Limits.connections`; more wait in a :attr:`Limits.backlog` listen
queue), serves :attr:`Limits.threads` requests at once and never prints a traceback for a
client that goes away. What it lacks is added here with its own extension points (a
channel and a server subclass, an error task):

* a read deadline: a request not whole :attr:`Limits.read_seconds` after its first byte is
  dropped (a request line without its blank line, a slowloris body);
* idle connections closed after :attr:`Limits.idle_seconds`, and after
  :attr:`Limits.crowded_idle_seconds` when every connection is taken, so idle sockets
  cannot keep a person's page out;
* waitress's own refusals (400, 413, 431, 500) with a JSON body ``{"error": ...}`` instead
  of text;
* the terminal shows one line per problem (waitress's log too), never a traceback.

The folder is claimed first (:func:`.folder.claim_folder`: one server per folder, the token
and port kept for a restart).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from trackverify.errors import InputError
from trackverify.review.app import Limits, ReviewApp, Settings
from trackverify.review.folder import Claim, claim_folder
from trackverify.review.sheet import read_sheet

HOST = "127.0.0.1"
#: Seconds the I/O loop waits for an event before it checks the timeouts and a stop.
LOOP_SECONDS = 0.2


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _ErrorTask(ErrorTask):
    """waitress's refusal of a request it could not parse or accept, as JSON."""

    def execute(self):
        error = self.request.error
        body = json.dumps({"error": f"{error.reason}: {error.body}"}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(HTTPChannel):
    """A connection that notes when the request it is receiving began."""

    error_task_class = _ErrorTask
    request_started = 0.0

    def received(self, data):
        if self.request is None and data:
            self.request_started = time.monotonic()
        return super().received(data)


class _Server(TcpWSGIServer):
    """waitress's server with the read deadline and the idle rules of the module docstring."""

    channel_class = _Channel

    def __init__(self, application, limits: Limits, socket_map: dict, **kw):
        self.limits, self.socket_map = limits, socket_map
        super().__init__(application, map=socket_map, **kw)

    def maintenance(self, now):
        crowded = len(self.socket_map) >= self.adj.connection_limit  # waitress's own test
        idle = self.limits.crowded_idle_seconds if crowded else self.limits.idle_seconds
        clock = time.monotonic()
        for channel in list(self.active_channels.values()):
            if channel.requests:  # a response is being made
                continue
            if channel.request is None:
                expired = channel.last_activity < now - idle
            else:
                expired = channel.request_started < clock - self.limits.read_seconds
            if expired:
                channel.will_close = True


class _OneLine(logging.Handler):
    """waitress's log as one line each (no traceback)."""

    def __init__(self, report: Callable[[str], None]):
        super().__init__(logging.ERROR)
        self.report = report

    def emit(self, record):
        exc = record.exc_info[1] if record.exc_info else None
        cause = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
        self.report(f"trackverify review: {record.getMessage()}{cause}")


class ReviewServer:
    """A claimed folder served on 127.0.0.1: :attr:`url` (with the token), :meth:`run`
    until :meth:`shutdown` (or Ctrl-C), then :meth:`close`."""

    def __init__(self, claim: Claim, server: _Server, app: ReviewApp):
        self.claim, self.server, self.app = claim, server, app
        self.port = int(server.effective_port)
        self.url = f"http://{HOST}:{self.port}/?token={claim.token}"
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.is_set():
            wasyncore.loop(timeout=LOOP_SECONDS, map=self.server.socket_map, use_poll=True, count=1)

    def shutdown(self) -> None:
        """Make :meth:`run` return (from another thread)."""
        self._stop.set()

    def close(self) -> None:
        """Stop serving, close every connection and release the folder."""
        self._stop.set()
        self.server.task_dispatcher.shutdown(timeout=5)
        wasyncore.close_all(self.server.socket_map)
        self.app.close()
        self.claim.release()


def _bind(app: ReviewApp, port: int, limits: Limits) -> _Server:
    adjustments = Adjustments(
        # connection_limit counts the listening socket and waitress's wake-up pipe too
        host=HOST, port=port, threads=limits.threads, connection_limit=limits.connections + 2,
        backlog=limits.backlog, max_request_body_size=limits.body_bytes + 1,
        # the timeouts are _Server.maintenance's, run at every turn of the loop
        max_request_header_size=limits.header_bytes, cleanup_interval=0,
        asyncore_use_poll=True, log_socket_errors=False,
        expose_tracebacks=False, ident="trackverify")
    socket_map, dispatcher = {}, ThreadedTaskDispatcher()
    try:
        server = _Server(app, limits, socket_map, dispatcher=dispatcher, adj=adjustments)
    except BaseException:
        wasyncore.close_all(socket_map)
        raise
    dispatcher.set_thread_count(limits.threads)
    return server


def _bind_port(app: ReviewApp, port: int | None, claim: Claim, limits: Limits,
               report: Callable[[str], None]) -> _Server:
    """Bind ``port``; None: the folder's last port when free, else a free one."""
    if port is None and claim.port is not None:
        try:
            return _bind(app, claim.port, limits)
        except OSError as exc:
            report(f"trackverify review: the last run's port {claim.port} is taken "
                   f"({exc.strerror}); a page left open there must be opened again at the new address")
    try:
        return _bind(app, port or 0, limits)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} of {HOST} is in use by another program: choose "
                             "another --port, or leave --port out for a free one") from None
        raise InputError(f"cannot listen on {HOST} port {port} ({exc.strerror or exc})") from None


def make_server(audit_dir: str | os.PathLike, port: int | None = None, limits: Limits = Limits(),
                report: Callable[[str], None] = _stderr,
                settings: Settings = Settings()) -> ReviewServer:
    """A server of AUDIT_DIR's sheet (``settings.sheet``, review.csv by default; checked
    here) on ``port`` (None: the sheet's last port when free, else a free one; 0: a free
    one); ``report`` receives the one-line problems the terminal shows."""
    audit_dir = Path(audit_dir)
    read_sheet(audit_dir / settings.sheet)  # refused before the folder is claimed
    claim = claim_folder(audit_dir, settings.sheet)
    app = None
    try:
        app = ReviewApp(audit_dir, claim.token, limits, report, settings)
        server = _bind_port(app, port, claim, limits, report)
        claim.record(int(server.effective_port))
    except BaseException:
        if app is not None:
            app.close()
        claim.release()
        raise
    waitress_log = logging.getLogger("waitress")
    waitress_log.handlers, waitress_log.propagate = [_OneLine(report)], False
    waitress_log.setLevel(logging.ERROR)
    return ReviewServer(claim, server, app)
