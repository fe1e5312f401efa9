"""Shared fixtures: small hand-made tables and a helper to run the CLI in-process."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from filelock import FileLock
from hypothesis import settings

from tests.schedule import order

# Property tests are reproducible: derandomised (examples drawn from a fixed seed), and a
# failing example is printed with the blob that replays it.
settings.register_profile("derandomized", derandomize=True, print_blob=True)
settings.load_profile("derandomized")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
#: Headless Chromium, to check that a report renders (tests skip without it).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The longest tests first, spread over the xdist workers (tests/schedule.py)."""
    items[:] = order(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def built_once(tmp_path_factory, name: str, build):
    """``build(folder)``'s value, built once per test run whatever the number of xdist
    workers: the first worker to ask builds it in a fresh ``folder`` under a file lock, the
    others (and later modules) read it back (pickled beside it). The folder and the value are
    shared: tests read them and write elsewhere (copy the folder first to change it)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, which holds every worker's own
    folder, value = root / f"once-{name}", root / f"once-{name}.pickle"
    with FileLock(root / f"once-{name}.lock"):
        if value.is_file():
            return pickle.loads(value.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)  # left by a build that failed
        folder.mkdir()
        built = build(folder)
        value.write_bytes(pickle.dumps(built))
    return built


def verify_file(table: pd.DataFrame, folder: Path, *options,
                out: str = "out") -> tuple[subprocess.CompletedProcess, Path]:
    """``trackverify verify`` with ``options`` on ``table`` (written to ``folder/obs.csv``);
    returns the finished process and the output folder ``folder/<out>``."""
    path = folder / "obs.csv"
    table.to_csv(path, index=False)
    return run_cli("verify", "--observations", path, *options, "--out", folder / out), folder / out


def verify_control(table: pd.DataFrame, folder: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """``trackverify verify --conditions control`` on ``table`` (:func:`verify_file`)."""
    return verify_file(table, folder, "--conditions", "control")


def chromium_command(profile: Path, *args: str) -> list[str]:
    """Headless Chromium, offline, with a fresh profile in ``profile``, then ``args``."""
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", *args]


def chromium_dom(report: Path, profile: Path) -> str:
    """The DOM headless Chromium builds from the HTML file ``report`` (offline, a fresh
    profile in ``profile``); fails on a non-zero exit or a console error."""
    result = subprocess.run(
        chromium_command(profile, "--enable-logging=stderr", "--v=0", "--dump-dom",
                         Path(report).resolve().as_uri()),
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "error" in line.lower()], console
    return result.stdout


#: Appended to a copy of a report: lists the tables wider than the page or than their own box.
_OVERFLOW_PROBE = """<script>
const wide = [];
const page = document.documentElement.clientWidth;
document.querySelectorAll('table').forEach((t, i) => {
  if (t.getBoundingClientRect().right > page + 0.5 || t.scrollWidth > t.clientWidth + 0.5) wide.push(i);
});
const out = document.createElement('pre');
out.id = 'overflow-probe';
out.textContent = 'tables=' + document.querySelectorAll('table').length + ' wide=' + wide.join(',')
  + ' page=' + document.documentElement.scrollWidth + '/' + page;
document.body.appendChild(out);
</script></body>"""


def chromium_layout(report: Path, width: int, folder: Path) -> dict:
    """How headless Chromium lays out the HTML file ``report`` in a window ``width`` px wide:
    ``tables`` (count), ``wide`` (indices of tables wider than the page or their own box),
    ``page`` / ``view`` (the page's scroll width and the window's width); a screenshot at that
    width is left in ``folder / f"{width}.png"``."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "probe.html"
    probe.write_text(Path(report).read_text(encoding="utf-8").replace("</body>", _OVERFLOW_PROBE),
                     encoding="utf-8")
    common = ("--hide-scrollbars", f"--window-size={width},1200")
    shot = subprocess.run(chromium_command(folder / "profile", *common, f"--screenshot={folder / f'{width}.png'}",
                                           Path(report).resolve().as_uri()),
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    dom = subprocess.run(chromium_command(folder / "profile", *common, "--dump-dom", probe.resolve().as_uri()),
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r"tables=(\d+) wide=([\d,]*) page=(\d+)/(\d+)", dom.stdout)
    assert found, dom.stdout[-2000:]
    return {"tables": int(found[1]), "wide": [int(i) for i in found[2].split(",") if i],
            "page": int(found[3]), "view": int(found[4])}


#: Appended to a copy of a report: the text a window shows without scrolling (every text
#: node whose lines all end above the window's bottom edge), in document order.
_FIRST_SCREEN_PROBE = """<script>
const limit = window.innerHeight;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const seen = [];
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.textContent.trim()) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  const lines = Array.from(range.getClientRects()).filter(r => r.height > 0);
  if (lines.length && lines.every(r => r.bottom <= limit)) seen.push(node.textContent);
}
const out = document.createElement('pre');
out.id = 'first-screen-probe';
out.textContent = seen.join(' ');
document.body.appendChild(out);
</script></body>"""


def chromium_first_screen(report: Path, folder: Path, width: int = 1280, height: int = 900) -> str:
    """The text headless Chromium shows of the HTML file ``report`` in a ``width`` x
    ``height`` px window before any scrolling, whitespace collapsed; a screenshot of that
    screen is left in ``folder / "first-screen.png"``."""
    import html as html_text

    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "first-screen.html"
    probe.write_text(Path(report).read_text(encoding="utf-8").replace("</body>", _FIRST_SCREEN_PROBE),
                     encoding="utf-8")
    common = ("--hide-scrollbars", f"--window-size={width},{height}")
    shot = subprocess.run(chromium_command(folder / "profile", *common,
                                           f"--screenshot={folder / 'first-screen.png'}",
                                           Path(report).resolve().as_uri()),
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    dom = subprocess.run(chromium_command(folder / "profile", *common, "--dump-dom",
                                          probe.resolve().as_uri()),
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="first-screen-probe">(.*?)</pre>', dom.stdout, flags=re.S)
    assert found, dom.stdout[-2000:]
    return " ".join(html_text.unescape(found[1]).split())


def missing_reference(what: str) -> None:
    """A parity test's reference environment is absent: skip on a developer's machine, fail
    under CI (``CI=true``), where ``make test`` builds every reference environment and a
    quiet skip would hide a parity check that no longer runs."""
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail(f"{what} is absent under CI: parity tests may not skip there", pytrace=False)
    pytest.skip(what)


def input_in_folder(tmp_path: Path, name: str, table: pd.DataFrame) -> tuple[Path, bytes]:
    """``table`` written as CSV to ``tmp_path / "data" / name`` (an input inside its own
    folder, for the --out overlap checks); returns the path and its bytes."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / name
    table.to_csv(path, index=False)
    return path, path.read_bytes()


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``trackverify ARGS`` in a process of its own (exit codes and stderr as a user sees
    them): a child forked from a pre-imported interpreter (tests/cli_server.py) where the
    platform can fork, else ``python -m trackverify`` in a subprocess
    (``TRACKVERIFY_TEST_FORK=0`` asks for the subprocess)."""
    argv = [sys.executable, "-m", "trackverify", *map(str, args)]
    server = _cli_server()
    if server is None:
        return subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    import io
    import json
    import locale
    import tempfile

    with tempfile.TemporaryDirectory(prefix="trackverify-cli-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        request = {"args": argv[3:], "cwd": str(Path(cwd or os.getcwd()).resolve()),
                   "env": dict(os.environ), "stdout": str(out), "stderr": str(err)}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
        assert reply, "the command-line server ended"
        code = json.loads(reply)["code"]
        # decoded as subprocess's text mode does: the locale's encoding, universal newlines
        read = [io.TextIOWrapper(io.BytesIO(p.read_bytes() if p.exists() else b""),
                                 encoding=locale.getpreferredencoding(False)).read()
                for p in (out, err)]
    return subprocess.CompletedProcess(argv, code, *read)


_SERVER: list = []


def _stop_server(server: subprocess.Popen) -> None:
    """End of input ends the server; wait for it, so nothing is left running."""
    server.stdin.close()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _cli_server():
    """This test process's command-line server (started at the first call), or None."""
    if not hasattr(os, "fork") or os.environ.get("TRACKVERIFY_TEST_FORK") == "0":
        return None
    if not _SERVER:
        import atexit

        server = subprocess.Popen([sys.executable, str(REPO / "tests" / "cli_server.py")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd=REPO)
        atexit.register(_stop_server, server)
        _SERVER.append(server)
    return _SERVER[0]


#: Corruption frames that fit the small cohort's 60-frame recordings.
SMALL = ("--start", "10", "--recovery-end", "30")


def make_cohort(root: Path, fractions: str) -> tuple[Path, Path]:
    """12 still animals (60 frames, 25 neurons) in ``root/data``, split by animal with seed 3
    into ``root/partitions.json`` by ``fractions``; returns (root, data folder)."""
    data = root / "data"
    assert run_cli("synth", "--animals", 12, "--frames", 60, "--neurons", 25, "--motion", "still",
                   "--out", data).returncode == 0
    split = run_cli("split", "--recordings", data / "recordings.csv", "--fractions", fractions,
                    "--seed", 3, "--out", root / "partitions.json")
    assert split.returncode == 0, split.stderr
    return root, data


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """The small cohort with 3 train, 3 calibration and 6 test animals, made once for the
    suite (read only)."""
    return built_once(tmp_path_factory, "cohort",
                      lambda root: make_cohort(root, "train=0.25,calibration=0.25,test=0.5"))


def spread_points(n: int, low, high, spacing: float, seed: int) -> np.ndarray:
    """``n`` random points in the box ``low..high``, no two closer than ``spacing``."""
    rng = np.random.default_rng(seed)
    points = []
    while len(points) < n:
        p = rng.uniform(low, high)
        if all(np.linalg.norm(p - q) >= spacing for q in points):
            points.append(p)
    return np.array(points)


def observation_table(tracks=("A", "B", "C", "D"), frames=10, spacing=10.0) -> pd.DataFrame:
    """Tracks on a line, ``spacing`` um apart, motionless; clean predictions p<track>."""
    rows = []
    for f in range(frames):
        for i, t in enumerate(tracks):
            rows.append({"recording": "r", "frame": f, "track": t, "detection": i,
                         "x_um": i * spacing, "y_um": 0.0, "z_um": 0.0,
                         "pred_id": f"p{t}", "pred_valid": True})
    return pd.DataFrame(rows)


def gapped_table(frames=10, missing=(3,), first=0) -> pd.DataFrame:
    """observation_table's four tracks on ``frames`` frames without ``missing``, numbered from
    ``first`` in the input."""
    table = observation_table(frames=frames)
    table = table[~table["frame"].isin(missing)].reset_index(drop=True)
    return table.assign(frame=table["frame"] + first)


@pytest.fixture
def obs() -> pd.DataFrame:
    return observation_table()
