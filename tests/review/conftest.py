"""The review tests' shared pieces: an audited folder, its review.csv, a server in this
process, a launcher of server processes and a raw HTTP client."""

from __future__ import annotations

import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from tests.conftest import built_once, run_cli
from tests.review.launcher import Launcher
from trackverify.review.app import Limits, Settings
from trackverify.review.server import make_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "real-tracker"
#: Limits small enough for a test to see each one act within a second or two.
QUICK = {"read_seconds": 0.5, "idle_seconds": 0.5, "crowded_idle_seconds": 0.2}


def write_review_csv(audit_dir: Path, n: int) -> Path:
    """review.csv in the sample layout: every 97th audited observation, decision empty."""
    import pandas as pd

    audit = pd.read_parquet(audit_dir / "audit.parquet")
    rows = audit[audit["verdict"].isin(["certified", "flagged"])].iloc[::97].head(n)
    sheet = rows[["recording", "frame", "pred_id", "detection", "x_um", "y_um", "z_um"]].assign(
        stratum=rows["verdict"].to_numpy(), decision="")
    path = audit_dir / "review.csv"
    sheet.to_csv(path, index=False)
    return path


def with_cell(line: str, header: str, column: str, value: str) -> str:
    """One line of a review.csv without quoted fields, with ``column``'s cell set to ``value``."""
    cells = line.rstrip("\n").split(",")
    cells[header.rstrip("\n").split(",").index(column)] = value
    return ",".join(cells) + "\n"


def _audit(out: Path) -> Path:
    done = run_cli("audit", EXAMPLE / "tracker_cpd.parquet", "--detections",
                   EXAMPLE / "detections.parquet", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def audit_dir(tmp_path_factory) -> Path:
    """The audit of the real tracker output (run once for the suite), copied for this module:
    its reviews write review.csv beside it."""
    out = tmp_path_factory.mktemp("audit") / "audit"
    shutil.copytree(built_once(tmp_path_factory, "review-audit", _audit), out)
    return out


class Served:
    """A server of a folder in this process (a thread runs it): ``url``, ``base``,
    ``token``, ``port`` and the lines it reported for the terminal."""

    def __init__(self, folder: Path, port: int | None = None, settings: Settings = Settings(),
                 **limits):
        self.reported: list[str] = []
        self.server = make_server(folder, port, Limits(**limits), report=self.reported.append,
                                  settings=settings)
        self.url, self.port = self.server.url, self.server.port
        self.base, self.token = self.url.split("/?token=")
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.close()


@pytest.fixture()
def served(audit_dir):
    """A server of a fresh 20-row review.csv in this process (the default limits: a test
    process slowed by a busy machine is not taken for an idle client)."""
    write_review_csv(audit_dir, 20)
    served = Served(audit_dir, 0)
    yield served
    served.close()


@pytest.fixture()
def quick(audit_dir):
    """The same with :data:`QUICK` limits, for the tests of the timeouts."""
    write_review_csv(audit_dir, 20)
    served = Served(audit_dir, 0, **QUICK)
    yield served
    served.close()


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    launcher = Launcher(tmp_path_factory.mktemp("servers"))
    yield launcher
    launcher.close()


def exchange(port: int, request: bytes, timeout: float = 20) -> tuple[int | None, dict, bytes]:
    """Send raw ``request`` bytes, read until the server closes; (status or None when it
    closed without an answer, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it may refuse before all is sent: its answer is still there to read
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    if not data:
        return None, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def request(method: str, path: str, body: bytes = b"", headers: dict | None = None) -> bytes:
    """An HTTP/1.1 request that asks the server to close after answering."""
    headers = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
    if body and "Content-Length" not in headers and "Transfer-Encoding" not in headers:
        headers["Content-Length"] = str(len(body))
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def empty_or_json(body: bytes) -> bool:
    """An error body as the server promises: empty, or a JSON object with an ``error``."""
    return body == b"" or isinstance(json.loads(body).get("error"), str)
