"""The review page's server: standard-library ``http.server`` on 127.0.0.1 only.

No dependency, works offline, a small attack surface for a page one person uses on their
own machine. A random free port (port 0) and a one-time token (``secrets.token_urlsafe``)
required on every request (``?token=`` or the ``X-Token`` header): anything else gets 403.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from trackverify.review.items import load_items
from trackverify.review.page import PAGE
from trackverify.review.sheet import read_sheet, set_decision


def make_server(audit_dir: str | os.PathLike, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """A server for AUDIT_DIR's review.csv (checked here) and its URL with the token."""
    audit_dir = Path(audit_dir)
    sheet_path = audit_dir / "review.csv"
    items = load_items(audit_dir, read_sheet(sheet_path))
    token, lock = secrets.token_urlsafe(24), threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet: the terminal shows only the URL
            pass

        def _allowed(self) -> bool:
            query = parse_qs(urlparse(self.path).query)
            given = self.headers.get("X-Token") or (query.get("token") or [""])[0]
            return secrets.compare_digest(given.encode(), token.encode())

        def _send(self, code: int, body: bytes = b"", kind: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if not self._allowed():
                return self._send(403)
            route = urlparse(self.path).path
            if route == "/":
                return self._send(200, PAGE.encode(), "text/html; charset=utf-8")
            if route == "/api/items":
                with lock:
                    sheet = read_sheet(sheet_path)
                for item, decision in zip(items, sheet.decisions):
                    item["decision"] = decision
                body = {"items": items, "start": sheet.first_undecided()}
                return self._send(200, json.dumps(body).encode())
            return self._send(404)

        def do_POST(self):
            if not self._allowed():
                return self._send(403)
            if urlparse(self.path).path != "/api/decision":
                return self._send(404)
            try:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(min(length, 10000)) or b"{}")
                with lock:
                    sheet = set_decision(sheet_path, request.get("index"),
                                         request.get("decision"))
            except (ValueError, AttributeError) as exc:
                return self._send(400, json.dumps({"error": str(exc)}).encode())
            decided = sum(bool(d) for d in sheet.decisions)
            return self._send(200, json.dumps({"decided": decided}).encode())

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}/?token={token}"
