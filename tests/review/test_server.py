"""The review server under faults and hostile clients (all traffic on 127.0.0.1): one
writer per folder, what a restart keeps, bounded requests and connections, errors as 4xx /
5xx with an empty or JSON body, review.csv whole and never behind an acknowledged decision."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import run_cli
from tests.review.conftest import (QUICK, ROOT, Served, empty_or_json, exchange, request, with_cell,
                                   write_review_csv)
from trackverify.review.app import ROUTES, json_depth
from trackverify.review.folder import LOCK_NAME
from trackverify.review.sheet import DECISIONS, read_sheet


#: SO_LINGER on, 0 s: close() resets the connection (the server's reads and writes fail).
RESET = struct.pack("ii", 1, 0)


def post(base: str, token: str, index, value, timeout: float = 10) -> tuple[int, dict]:
    data = json.dumps({"index": index, "decision": value}).encode()
    call = urllib.request.Request(f"{base}/api/decision", data=data, headers={"X-Token": token})
    try:
        with urllib.request.urlopen(call, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def test_a_second_server_on_the_folder_is_refused_and_a_restart_keeps_address_and_token(
        audit_dir, launcher):
    write_review_csv(audit_dir, 20)
    first = launcher.start(audit_dir)
    # a second process on the same folder (a timeout: one that starts would serve forever)
    done = subprocess.run([sys.executable, "-m", "trackverify", "review", str(audit_dir)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"trackverify: error: {audit_dir}: already being reviewed by process {first.pid} at "
        f"http://127.0.0.1:{first.port}/ (one server per review folder: use its page, or stop "
        "it first)"]
    assert post(first.url.split("/?")[0], first.token, 0, "wrong")[0] == 200  # the first serves on
    first.kill()
    again = launcher.start(audit_dir)
    assert again.url == first.url  # same port and token: an open page goes on saving
    assert post(again.url.split("/?")[0], again.token, 1, "unsure")[0] == 200
    assert read_sheet(audit_dir / "review.csv").decisions[:3] == ["wrong", "unsure", ""]
    again.kill()


def test_killed_mid_write_review_csv_stays_whole_and_holds_every_acknowledged_decision(
        audit_dir, launcher):
    """16 SIGKILLs at seeded random moments while one client posts decisions back to back:
    after each, review.csv reads whole, holds the last acknowledged value of every item (the
    one post in flight may have landed or not) and the next server leaves no temporary copy."""
    path = write_review_csv(audit_dir, 20)
    rng = random.Random(53)
    acknowledged: dict[int, str] = {}
    in_flight: list = [None]
    refused: list = []
    k = 0
    server = launcher.start(audit_dir)
    for _ in range(16):
        stop = threading.Event()

        def client(base=server.url.split("/?")[0], token=server.token):
            nonlocal k
            while not stop.is_set():
                index, value = k % 20, (*DECISIONS, "")[(k // 20 + k) % 4]
                in_flight[0] = (index, value)
                try:
                    status, _ = post(base, token, index, value, timeout=5)
                except (OSError, http.client.HTTPException):
                    return  # the server is gone: this post may or may not have landed
                if status != 200:
                    refused.append(status)
                    return
                acknowledged[index] = value
                in_flight[0] = None
                k += 1

        thread = threading.Thread(target=client)
        thread.start()
        time.sleep(rng.uniform(0.02, 0.15))
        server.kill()
        stop.set()
        thread.join(timeout=30)
        assert not refused
        decisions = read_sheet(path).decisions  # whole: a torn file would not read
        for index, value in acknowledged.items():
            allowed = {value} | ({in_flight[0][1]} if in_flight[0] and in_flight[0][0] == index else set())
            assert decisions[index] in allowed, (index, decisions[index], allowed)
        acknowledged.update({i: d for i, d in enumerate(decisions)})  # what the next run starts from
        server = launcher.start(audit_dir)
        assert not list(audit_dir.glob(".review.csv.*.tmp"))
    server.kill()
    assert k > 16  # decisions were made between the kills


def test_stale_temporary_copies_are_removed_at_start_and_only_by_the_holder(audit_dir):
    write_review_csv(audit_dir, 20)
    stale = audit_dir / ".review.csv.k3j2h1.tmp"
    stale.write_text("half a file")
    served = Served(audit_dir, 0)
    try:
        assert not stale.exists()
        stale.write_text("a running server's copy")
        with pytest.raises(Exception, match="already being reviewed"):
            Served(audit_dir, 0)
        assert stale.exists()  # the refused one removed nothing
    finally:
        served.close()
        stale.unlink(missing_ok=True)


def test_concurrent_decisions_from_two_tabs_lose_nothing(served, audit_dir):
    """Two clients post 120 decisions each at once, on their own items (0-9, 10-19) and on
    shared ones (0-4 twice over): every answer is 200 and review.csv holds each own item's
    last acknowledged value, each shared item one of the values acknowledged for it."""
    acknowledged: dict[int, list[str]] = {i: [] for i in range(20)}
    lock, answers = threading.Lock(), []

    def tab(offset: int, seed: int):
        rng = random.Random(seed)
        for _ in range(120):
            index = rng.choice([offset + rng.randrange(10), rng.randrange(5)])
            value = rng.choice(DECISIONS)
            status, body = post(served.base, served.token, index, value)
            with lock:
                answers.append((status, len(body.get("decisions", []))))
                if status == 200:
                    acknowledged[index].append(value)

    threads = [threading.Thread(target=tab, args=(offset, seed)) for offset, seed in ((0, 1), (10, 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    decisions = read_sheet(audit_dir / "review.csv").decisions
    assert answers == [(200, 20)] * 240
    for index, values in acknowledged.items():
        if index >= 5 and values:  # one writer
            assert decisions[index] == values[-1]
        elif values:
            assert decisions[index] in values


def _post_raw(served, body: bytes, **headers) -> bytes:
    return request("POST", "/api/decision", body, {"X-Token": served.token, **headers})


def test_request_bodies_are_bounded_whatever_they_claim(served, audit_dir):
    path = audit_dir / "review.csv"
    before = path.read_bytes()
    valid = json.dumps({"index": 0, "decision": "wrong"}).encode()
    cases = {
        "nested 9,000 deep": (_post_raw(served, b"[" * 9000), 400),
        "nested object": (_post_raw(served, b'{"index": 0, "decision": ' + b'{"a":' * 20 + b"1" + b"}" * 21), 400),
        "Content-Length -1": (_post_raw(served, valid, **{"Content-Length": "-1"}), 400),
        "Content-Length 10^12": (_post_raw(served, b"", **{"Content-Length": str(10**12)}), 413),
        "100 MB declared, 10 KB valid JSON sent": (
            _post_raw(served, valid + b" " * (10_000 - len(valid)), **{"Content-Length": str(100 * 2**20)}), 413),
        "no Content-Length": (_post_raw(served, b"", **{}), 400),
        "not JSON": (_post_raw(served, b"index=0&decision=wrong"), 400),
        "not an object": (_post_raw(served, b'[0, "wrong"]'), 400),
        "other keys": (_post_raw(served, b'{"index": 0, "decision": "wrong", "x": 1}'), 400),
        "an item that does not exist": (_post_raw(served, b'{"index": 20, "decision": "wrong"}'), 400),
        "an index with ..": (_post_raw(served, b'{"index": "../review.csv", "decision": "wrong"}'), 400),
        "invalid UTF-8": (_post_raw(served, b'{"index": 0, "decision": "\xff"}'), 400),
    }
    for name, (raw, expected) in cases.items():
        status, _, body = exchange(served.port, raw)
        assert status == expected and empty_or_json(body), (name, status, body[:200])
    assert path.read_bytes() == before


def test_malformed_requests_and_a_defect_get_a_status_and_an_empty_or_json_body(served, monkeypatch):
    token = served.token
    cases = {
        b"GARBAGE\r\n\r\n": 400,
        b"GET / HTTP/1.1\r\nBad Header\r\n\r\n": 400,
        request("GET", f"/?token={token}", headers={"X-Pad": "a" * 70_000}): 431,
        request("POST", "/api/decision", b"{}", {"X-Token": token, "Transfer-Encoding": "gzip"}): 501,
        request("POST", "/api/decision", b"zz\r\n", {"X-Token": token, "Transfer-Encoding": "chunked"}): 400,
    }
    for raw, expected in cases.items():
        status, _, body = exchange(served.port, raw)
        assert status == expected and empty_or_json(body) and body, (raw[:60], status, body[:200])

    def broken(review, request):
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setitem(ROUTES, ("GET", "/api/items"), broken)
    status, _, body = exchange(served.port, request("GET", f"/api/items?token={token}"))
    assert (status, json.loads(body)) == (500, {"error": "unexpected error (a defect of trackverify; "
                                                         "the terminal says which)"})
    assert served.reported == ["trackverify review: unexpected RuntimeError: a bug over two lines "
                               "(a defect of trackverify)"]


def test_a_chunked_body_of_100_mb_is_refused_once_past_the_limit(served):
    sent = 0
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(request("POST", "/api/decision", b"",
                             {"X-Token": served.token, "Transfer-Encoding": "chunked"}))
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        try:
            while sent < 100 * 2**20:
                sock.sendall(chunk)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while data := sock.recv(65536):
                answer += data
        except ConnectionResetError:
            pass
    assert sent < 100 * 2**20  # it stopped reading long before the end
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert empty_or_json(answer.partition(b"\r\n\r\n")[2])


def test_a_json_depth_is_counted_outside_strings():
    # {"a": [1, {"b": []}]}: { [ { [ open, nothing closes before the fourth
    assert [json_depth(t) for t in (b"1", b"[]", b'{"a": [1, {"b": []}]}', b'"[[[["', b'["\\"[", []]')] == [
        0, 1, 4, 0, 2]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "HEAD", "FOO"])
def test_other_methods_get_403_without_the_token_and_405_with_it(served, method):
    status, _, body = exchange(served.port, request(method, "/api/decision"))
    assert (status, body) == (403, b"")
    status, headers, body = exchange(served.port, request(method, "/api/decision", headers={"X-Token": served.token}))
    assert (status, body, headers["Allow"]) == (405, b"", "POST")


def test_dot_dot_in_any_part_of_a_request_serves_no_file(served, audit_dir):
    token = served.token
    header = (audit_dir / "review.csv").read_bytes()[:40]
    expected = {
        "/../review.csv": 403, "/%2e%2e/review.csv": 403, "/api/../review.csv": 403,
        f"/..%2f..%2freview.csv?token={token}": 404, f"/api/items/..?token={token}": 404,
        f"/api/items/../../review.csv?token={token}": 404, f"/review.csv?token={token}": 404,
        f"/static/../../../etc/passwd?token={token}": 404, f"//etc/passwd?token={token}": 404,
        f"/?token={token}/../review.csv": 403, f"/?token=../{token}": 403,
        f"/api/items?token={token}&index=../x": 200,  # a parameter no route reads: ignored
    }
    for path, status in expected.items():
        answer, _, body = exchange(served.port, request("GET", path))
        assert answer == status and header not in body and b"root:" not in body, path
        assert status == 200 or empty_or_json(body), path
    status, _, body = exchange(served.port, request("GET", "/api/items", headers={"X-Token": f"../{token}"}))
    assert (status, body) == (403, b"")


def test_an_incomplete_or_slow_request_is_dropped_at_the_read_deadline(quick):
    # a request line without its blank line, then nothing: closed, not held open
    assert exchange(quick.port, b"GET / HTTP/1.1\r\nHost: x\r\n")[0] is None
    # a slowloris: one header byte every 0.1 s; the server closes within the deadline (0.5 s)
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(f"GET /?token={quick.token} HTTP/1.1\r\n".encode())
        closed = False
        for _ in range(100):  # 10 s at most
            try:
                sock.sendall(b"X")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
        assert closed
    # an idle connection is closed after idle_seconds
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        assert sock.recv(1) == b""


def test_an_edited_or_deleted_review_csv_is_a_clear_error_on_the_page_and_the_terminal(served, audit_dir):
    path = audit_dir / "review.csv"
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    path.write_text("".join([lines[0], with_cell(lines[1], lines[0], "decision", "maybe"), *lines[2:]]))
    status, body = post(served.base, served.token, 3, "wrong")
    line = (f"{path}, column 'decision', row 1: decision 'maybe' is not one of correct, wrong, "
            "unsure (or empty)")
    assert (status, body) == (409, {"error": line})
    assert served.reported == [f"trackverify review: error: {line}"]
    path.unlink()
    status, body = post(served.base, served.token, 3, "wrong")
    gone = f"{path}: not found (write it with `trackverify audit sample AUDIT_DIR --n N`)"
    assert (status, body) == (409, {"error": gone})
    status, _, body = exchange(served.port, request("GET", f"/api/items?token={served.token}"))
    assert (status, json.loads(body)) == (409, {"error": gone})
    path.write_text("".join([lines[0], lines[2], lines[1], *lines[3:]]))  # another sample order
    status, body = post(served.base, served.token, 3, "wrong")
    assert (status, body["error"]) == (409, f"{path}, row 1: changed since the review page started: this "
                                            "row holds another observation (restart `trackverify review` "
                                            "to review the file as it is now)")
    assert len(served.reported) == 3  # each problem once on the terminal
    path.write_text(original)
    assert post(served.base, served.token, 3, "wrong")[0] == 200
    assert read_sheet(path).decisions[3] == "wrong"


def test_a_busy_port_is_one_line(audit_dir):
    write_review_csv(audit_dir, 20)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("review", audit_dir, "--port", port)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            f"trackverify: error: port {port} of 127.0.0.1 is in use by another program: choose "
            "another --port, or leave --port out for a free one"]
        # the folder's last port taken: another one, said once on the terminal
        lock = audit_dir / LOCK_NAME
        lock.write_text(json.dumps({"pid": 1, "port": port, "token": "a" * 32}))
        served = Served(audit_dir)
        try:
            assert served.port != port and served.token == "a" * 32
            assert len(served.reported) == 1 and f"port {port} is taken" in served.reported[0]
        finally:
            served.close()


def test_idle_sockets_past_the_open_file_limit_do_not_lock_a_person_out(audit_dir, launcher):
    """A server limited to 128 open files, 300 idle sockets: every one connects (the listen
    queue holds them), a person's request is still answered, and their abrupt end prints
    nothing on the terminal."""
    write_review_csv(audit_dir, 20)
    server = launcher.start(audit_dir, port=0, nofile=128, connections=32,
                            **{**QUICK, "crowded_idle_seconds": 0.5})
    idle = []
    try:
        for _ in range(300):
            idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        status, _, body = exchange(server.port, request("GET", f"/api/items?token={server.token}"), timeout=30)
        assert status == 200 and len(json.loads(body)["items"]) == 20
    finally:
        for sock in idle:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
            sock.close()
    for _ in range(30):  # clients that leave before their answer
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(request("GET", f"/api/items?token={server.token}"))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
    assert exchange(server.port, request("GET", f"/?token={server.token}"))[0] == 200
    server.kill(signal.SIGINT)
    assert server.stderr.read_text() == ""
    assert os.path.getsize(server.stdout) == len(server.url) + 1


def test_the_guide_states_the_limits_the_server_applies():
    from trackverify.review.app import Limits

    limits, guide = Limits(), (ROOT / "docs" / "guide" / "review.md").read_text()
    stated = [f"at most {limits.body_bytes:,} bytes", f"nested at most {limits.json_depth} deep",
              f"at most {limits.header_bytes // 1024} KiB", f"within {limits.read_seconds:g} s of",
              f"closed after {limits.idle_seconds:g} s, after {limits.crowded_idle_seconds:g} s",
              f"all {limits.connections} connections", f"listen queue of {limits.backlog:,}",
              f"{limits.threads} requests are"]
    flat = " ".join(guide.split())
    assert [s for s in stated if s not in flat] == []


def test_a_route_reads_its_parameters_within_bounds():
    """What a new route (an image of item i, frame f) gets from :class:`Request`."""
    import io

    from trackverify.review.app import Limits, Refused, Request

    def query(text: str, body: bytes = b"", length: str | None = None) -> Request:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/x", "QUERY_STRING": text,
                   "wsgi.input": io.BytesIO(body)}
        if length is not None:
            environ["CONTENT_LENGTH"] = length
        return Request(environ, Limits(body_bytes=10))

    request = query("item=3&frame=-2&view=xy&item=9")
    assert (request.int_param("item", 0, 19), request.int_param("frame", -5, 5), request.param("view")) == (3, -2, "xy")
    for text, name in (("item=20", "item"), ("item=../1", "item"), ("item=1e3", "item"), ("item=", "item"),
                       ("item=%C2%B2", "item"), ("", "item"), ("item=" + "9" * 400, "item")):
        with pytest.raises(Refused) as refused:
            query(text).int_param(name, 0, 19)
        assert refused.value.status == 400, text
    assert query("", b'{"a": 1}', "8").json() == {"a": 1}
    for body, length, status in ((b"{}", "\u00b2", 400), (b"{}", "-1", 400), (b"x" * 11, "11", 413),
                                 (b"[[1]]", "5", 400), (b"[" * 9 + b"]" * 9, "18", 413)):
        with pytest.raises(Refused) as refused:
            query("", body, length).json()
        assert refused.value.status == status, (body, length)
