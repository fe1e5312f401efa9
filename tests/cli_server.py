"""The command line in a fresh process per call, without paying the interpreter's start-up.

``run_cli`` (tests/conftest.py) runs ``python -m trackverify ARGS`` about a hundred times per
test run; each start imports numpy, pandas, pyarrow, scipy and matplotlib again (about 1.3 s of
CPU). This server imports them once, then serves each call from a *forked* child: a new process
with its own working folder, environment, standard streams (files the caller reads) and exit
code, exactly as a subprocess has, running ``trackverify/__main__.py`` as ``python -m`` does.
Nothing a child does reaches the server or the next call.

Protocol (one JSON object per line): the caller writes ``{"args", "cwd", "env", "stdout",
"stderr"}`` (the two output paths are files the child creates); the server answers
``{"code": exit code}``. End of input ends the server. The server itself starts no thread
before it forks (the imports start none that run).
"""

from __future__ import annotations

import json
import os
import sys


def _child(request: dict) -> None:
    """Become ``python -m trackverify ARGS`` with the request's folder, environment and
    streams; never returns."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        stdin = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((0, stdin), (1, request["stdout"]), (2, request["stderr"])):
            if isinstance(target, str):
                target = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False,
                          buffering=1)
        import runpy

        sys.argv = ["-m", *request["args"]]  # runpy sets argv[0] to __main__.py's path
        try:
            runpy.run_module("trackverify", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:  # as the interpreter does: the object printed, exit 1
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # as the interpreter does: the traceback, exit 1
            import traceback

            traceback.print_exc()
            code = 1
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code & 0xFF if code >= 0 else 1)


def serve() -> None:
    # The start-up every call shared: the heavy libraries and the command line itself.
    import matplotlib  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.spatial  # noqa: F401

    import trackverify.cli.app  # noqa: F401

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
