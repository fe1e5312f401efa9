"""Review servers in processes of their own, each started in milliseconds.

A launcher process imports trackverify's review server once (pandas, pyarrow, waitress),
then forks one child per server: a process of its own (its own lock on the folder, its own
sockets), killed by its process id, exactly what ``trackverify review`` runs after its
imports. Protocol (one JSON object per line, each answered by one): ``{"start": {"folder",
"port", "limits", "settings", "nofile", "stdout", "stderr"}}`` -> ``{"pid"}``: the child writes the page's
address as the first line of its ``stdout`` file (or its error to ``stderr`` and exits 2);
``{"ended": pid}`` -> ``{"ended": bool}``; ``{"kill": pid, "signal": n}`` -> ``{}`` once the
child is gone. Only the launcher, the children's parent, signals and reaps them: a child's
process id cannot be taken by another process before the launcher has reaped it, so no
signal ever reaches a stranger. The launcher starts no thread before it forks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a child may take to print its address (loading the audit's items included).
START_SECONDS = 60


def _child(request: dict) -> None:
    """Become a review server as the request says; never returns."""
    code = 1
    try:
        for fd, name in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)
        if request.get("nofile"):
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (request["nofile"], request["nofile"]))
        from trackverify.errors import TrackverifyError
        from trackverify.review.app import Limits, Settings
        from trackverify.review.images import ImageSource
        from trackverify.review.server import make_server

        given = dict(request.get("settings") or {})
        if given.get("images") is not None:
            given["images"] = ImageSource(**given["images"])
        try:
            server = make_server(request["folder"], request.get("port"),
                                 Limits(**request.get("limits", {})), settings=Settings(**given))
        except TrackverifyError as exc:
            print(f"trackverify: error: {exc}", file=sys.stderr)
            code = 2
            return
        print(server.url)
        try:
            server.run()
        finally:
            server.close()
        code = 0
    except KeyboardInterrupt:
        code = 0
    finally:
        os._exit(code)


def serve() -> None:
    import trackverify.review.server  # noqa: F401 (the imports every child shares)

    ended: set[int] = set()

    def reap(pid: int, flags: int) -> bool:
        if pid not in ended and os.waitpid(pid, flags)[0] == pid:
            ended.add(pid)
        return pid in ended

    for line in sys.stdin:
        request = json.loads(line)
        if "start" in request:
            pid = os.fork()
            if pid == 0:
                _child(request["start"])
            answer = {"pid": pid}
        elif "ended" in request:
            answer = {"ended": reap(request["ended"], os.WNOHANG)}
        else:
            if not reap(request["kill"], os.WNOHANG):
                os.kill(request["kill"], request["signal"])
                reap(request["kill"], 0)
            answer = {}
        print(json.dumps(answer), flush=True)


@dataclass
class Server:
    """One review server process: its ``pid``, page ``url`` and output files."""

    launcher: "Launcher"
    pid: int
    url: str
    stdout: Path
    stderr: Path

    @property
    def port(self) -> int:
        return int(self.url.split(":")[2].split("/")[0])

    @property
    def token(self) -> str:
        return self.url.split("token=")[1]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (unless it has ended) and wait until the process is gone (its
        sockets and lock with it)."""
        self.launcher.ask({"kill": self.pid, "signal": int(sig)})


class Launcher:
    """The launcher process (see the module docstring); :meth:`start` forks a server."""

    def __init__(self, folder: Path):
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.folder, self.count, self.started = folder, 0, []
        folder.mkdir(parents=True, exist_ok=True)

    def start(self, audit_dir: Path, port: int | None = None, nofile: int | None = None,
              settings: dict | None = None, **limits) -> Server | str:
        """A running server of ``audit_dir`` (``settings``: :class:`Settings`' fields, the
        images as a dict of :class:`ImageSource`'s), or the one-line error it stopped with."""
        self.count += 1
        out, err = self.folder / f"{self.count}.out", self.folder / f"{self.count}.err"
        pid = self.ask({"start": {"folder": str(audit_dir), "port": port, "limits": limits,
                                  "settings": settings,
                                  "nofile": nofile, "stdout": str(out), "stderr": str(err)}})["pid"]
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            text = out.read_text() if out.exists() else ""
            if text.endswith("\n"):
                server = Server(self, pid, text.split()[0], out, err)
                self.started.append(server)
                return server
            if self.ask({"ended": pid})["ended"]:
                return err.read_text() if err.exists() else ""
            time.sleep(0.005)
        raise AssertionError(f"no address from server {pid}")

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        for server in self.started:
            server.kill()
        self.process.stdin.close()
        self.process.wait(timeout=30)


if __name__ == "__main__":
    serve()
