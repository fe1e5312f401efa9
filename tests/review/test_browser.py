"""The review page in headless Debian Chromium: decisions by keyboard in one tab while the
server is killed and restarted (nothing lost, the tab goes on), and the page saying why a
decision was not saved (no server, another token, review.csv edited) without moving on; on
a rendered volume, the crop the page shows is centred on the blob under the observation
(its pixels read back from the page), the track is stepped and the contrast changed by
keys, and nothing of the audit's judgement is on the blind page."""

from __future__ import annotations

import base64
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import missing_reference, run_cli
from tests.review.conftest import with_cell, write_review_csv
from trackverify.review.folder import LOCK_NAME
from trackverify.review.sheet import read_sheet

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[2]


def screenshot(browser, name: str) -> None:
    """The page as a PNG: into docs/img/ when TRACKVERIFY_DOCS_SCREENSHOTS is set (how the
    guide's pictures are refreshed), else nowhere: a test run leaves the checkout as it was."""
    if os.environ.get("TRACKVERIFY_DOCS_SCREENSHOTS"):
        browser.get_screenshot_as_file(str(ROOT / "docs" / "img" / name))
NAMES = {"c": "correct", "w": "wrong", "u": "unsure"}


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing_reference("selenium (pip install trackverify[test])")
    if not (CHROMIUM.exists() and DRIVER.exists()):
        missing_reference("Debian chromium / chromium-driver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=options)
    yield driver
    driver.quit()


class Page:
    """The page in the browser: keys, and waits on what it shows."""

    def __init__(self, driver, url: str):
        from selenium.webdriver.common.by import By
        from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        # an element the page redraws between finding it and reading it is looked up again
        self.driver, self.by = driver, By
        self.wait = WebDriverWait(driver, 60, ignored_exceptions=(NoSuchElementException,
                                                                   StaleElementReferenceException))
        driver.get(url)

    def text(self, element: str) -> str:
        return self.driver.find_element(self.by.ID, element).text

    def press(self, keys: str) -> None:
        body = self.driver.find_element(self.by.TAG_NAME, "body")
        for key in keys:
            body.send_keys(key)

    def shows(self, element: str, start: str) -> None:
        self.wait.until(lambda d: self.text(element).startswith(start))


#: Labels that overlap one another, and marks cut by their view's edge, in every view drawn.
LAYOUT = """const out=[];for(const svg of document.querySelectorAll("svg")){
 const w=svg.width.baseVal.value,h=svg.height.baseVal.value;
 const boxes=[...svg.querySelectorAll("text")].map(t=>t.getBBox());
 for(let i=0;i<boxes.length;i++)for(let j=i+1;j<boxes.length;j++){const a=boxes[i],b=boxes[j];
  if(a.x<b.x+b.width&&b.x<a.x+a.width&&a.y<b.y+b.height&&b.y<a.y+a.height)out.push("labels overlap")}
 for(const c of svg.querySelectorAll("circle")){const x=c.cx.baseVal.value,y=c.cy.baseVal.value,r=c.r.baseVal.value;
  if(x-r<0||y-r<0||x+r>w||y+r>h)out.push("mark cut at the edge")}}
return [out,document.querySelectorAll("svg text").length]"""


#: The page's label placement on 12 points crowded within 9 px: labels placed, overlapping.
CROWD = """const pts=[...Array(12).keys()].map(i=>({x:120+3*(i%4),y:120+3*Math.floor(i/4),r:4,text:"1"+i,cls:"lab"}));
 const svg=document.createElementNS("http://www.w3.org/2000/svg","svg");svg.setAttribute("width",W);svg.setAttribute("height",W);
 svg.innerHTML=place(pts,pts.map(p=>({x:p.x,y:p.y,r:p.r})));document.body.appendChild(svg);
 const b=[...svg.querySelectorAll("text")].map(t=>t.getBBox());let n=0;
 for(let i=0;i<b.length;i++)for(let j=i+1;j<b.length;j++)if(b[i].x<b[j].x+b[j].width&&b[j].x<b[i].x+b[i].width&&b[i].y<b[j].y+b[j].height&&b[j].y<b[i].y+b[i].height)n++;
 svg.remove();return [b.length,n]"""


def _start(folder: Path, *options: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, "-m", "trackverify", "review", str(folder), *options],
                              stdout=subprocess.PIPE, text=True, env=env)
    line = server.stdout.readline()
    assert line.startswith("review page: http://127.0.0.1:"), line
    return server, line.split()[2]


def _decided(path: Path) -> list[str]:
    return read_sheet(path).decisions


def test_keyboard_decisions_survive_a_killed_server_in_the_same_tab(audit_dir, browser):
    from selenium.webdriver.common.keys import Keys

    path = write_review_csv(audit_dir, 20)
    keys = "cwu" * 7
    server, url = _start(audit_dir)
    try:
        page = Page(browser, url)
        page.shows("progress", "0 of 20 decided")
        page.shows("images", "no images: the review is geometric only")
        for _ in range(5):  # the real recording's crowded head: no label piles on another
            page.wait.until(lambda d: d.find_elements(page.by.CSS_SELECTOR, "#anchor svg"))
            problems, labels = browser.execute_script(LAYOUT)
            assert problems == [] and labels > 10
            page.press(Keys.ARROW_RIGHT)
        page.press(Keys.ARROW_LEFT * 5)
        placed, overlapping = browser.execute_script(CROWD)
        assert placed >= 4 and overlapping == 0  # some labels left out rather than piled up
        page.press(keys[:10])
        page.shows("progress", "10 of 20 decided")
        server.send_signal(signal.SIGKILL)
        server.wait()
        # as if item 11 had not finished loading when the server died: the page must say the
        # decision was not saved, not bury it under a failed reload of the item
        browser.execute_script("details = {}")
        page.press(keys[10])  # no server: said, and the page stays on item 11
        page.shows("status", "not saved: item 11 is still undecided (the server does not answer")
        assert page.text("head").startswith("item 11 of 20") and page.text("progress") == "10 of 20 decided"
        server, again = _start(audit_dir)
        assert again == url  # same address and token: this tab goes on
        page.press(keys[10:20])
        page.shows("progress", "20 of 20 decided")
        assert page.text("status") == ""
        screenshot(browser, "review-positions.png")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    assert _decided(path) == [NAMES[k] for k in keys[:20]]


def test_a_refused_decision_is_said_and_the_page_stays(audit_dir, browser, launcher):
    path = write_review_csv(audit_dir, 20)
    server = launcher.start(audit_dir)
    page = Page(browser, server.url)
    page.shows("progress", "0 of 20 decided")
    page.press("cc")
    page.shows("progress", "2 of 20 decided")
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    path.write_text("".join([lines[0], with_cell(lines[1], lines[0], "decision", "maybe"), *lines[2:]]))
    page.press("w")  # review.csv edited into an invalid file: 409, the line shown
    page.shows("status", "not saved: item 3 is still undecided (the server answered 409: "
                         f"{path}, column 'decision', row 1: decision 'maybe' is not one of")
    page.press("u")  # a key pressed after a refusal is tried again
    page.shows("status", "not saved: item 3 is still undecided (the server answered 409")
    path.write_text(original)
    page.press("w")
    page.shows("progress", "3 of 20 decided")
    assert page.text("head").startswith("item 4 of 20") and page.text("status") == ""
    server.kill()
    (audit_dir / LOCK_NAME).unlink()  # the token is lost: the next server has another
    other = launcher.start(audit_dir, port=server.port)
    assert other.token != server.token
    page.press("u")
    page.shows("status", "not saved: item 4 is still undecided (the server refused this page's "
                         "token: open the address the terminal printed)")
    assert page.text("progress") == "3 of 20 decided"
    other.kill()
    assert _decided(path)[:4] == ["correct", "correct", "wrong", ""]


def _image(page: Page, view: str) -> tuple[np.ndarray, list[float], str]:
    """The observed panel's ``view`` crop as the page holds it: grey levels (NaN: outside the
    volume), its extent in micrometres, its data URL."""
    from PIL import Image

    element = page.driver.find_element(page.by.ID, f"i-observed-{view}")
    url = element.get_attribute("href")
    data = base64.b64decode(url.split(",", 1)[1])
    grey = np.asarray(Image.open(io.BytesIO(data)).convert("LA"), dtype=float)
    extent = [float(v) for v in element.get_attribute("data-extent").split(",")]
    return np.where(grey[..., 1] > 0, grey[..., 0], np.nan), extent, url


def _loaded(page: Page, view: str, before: str | None = None) -> None:
    def ready(driver):
        href = driver.find_element(page.by.ID, f"i-observed-{view}").get_attribute("href")
        return href is not None and href.startswith("data:image/png") and href != before
    page.wait.until(ready)


def test_the_page_on_a_rendered_volume_blind_by_keyboard_killed_and_resumed(browser, tmp_path):
    import pandas as pd
    from selenium.webdriver.common.keys import Keys

    from tests.review.test_images import JUDGEMENT, _isolated

    demo = tmp_path / "demo"
    assert run_cli("synth", "--frames", 6, "--neurons", 40, "--volume", "tiff", "--out", demo).returncode == 0
    tracks = pd.read_parquet(demo / "volume_tracks.parquet")
    tracks.drop(columns="track").to_parquet(demo / "tracker.parquet")
    assert run_cli("audit", demo / "tracker.parquet", "--out", demo / "audit").returncode == 0
    assert run_cli("audit", "sample", demo / "audit", "--n", 30, "--images", demo / "volume.tif").returncode == 0
    sheet = pd.read_csv(demo / "audit" / "review.csv")
    alone = next(i for i, row in enumerate(sheet.itertuples())
                 if row.pred_id in _isolated(tracks, row.frame) and 0 < i < len(sheet) - 2)
    server, url = _start(demo / "audit", "--images", str(demo / "volume.tif"), "--target", "0.4")
    try:
        page = Page(browser, url)
        page.shows("progress", "0 of 30 decided")
        page.shows("images", "images: volume.tif (recording rec000). The positions of frame 0 sit on bright")
        assert page.text("interval").startswith("error rate of all audited observations: 95 % anytime-valid")
        text = page.driver.find_element(page.by.TAG_NAME, "body").text + page.driver.page_source
        assert JUDGEMENT.findall(text) == []  # blind: nothing of the audit's judgement
        page.press(Keys.ARROW_RIGHT * alone)
        page.shows("head", f"item {alone + 1} of 30")
        row = sheet.iloc[alone]
        _loaded(page, "xy")
        _, _, before = _image(page, "xy")
        page.press("--")  # the bright limit at the maximum: the blob's peak, not a plateau
        _loaded(page, "xy", before)
        for view, (h, v) in (("xy", ("x_um", "y_um")), ("xz", ("x_um", "z_um"))):
            _loaded(page, view)
            grey, (h0, h1, v0, v1), _ = _image(page, view)
            col = (row[h] - h0) / (h1 - h0) * grey.shape[1]
            line = (row[v] - v0) / (v1 - v0) * grey.shape[0]
            assert abs(col - grey.shape[1] / 2) <= 0.5 and abs(line - grey.shape[0] / 2) <= 0.5
            r, c = np.mgrid[: grey.shape[0], : grey.shape[1]]
            um = np.hypot((r + 0.5 - line) * (v1 - v0) / grey.shape[0], (c + 0.5 - col) * (h1 - h0) / grey.shape[1])
            peak = np.unravel_index(np.nanargmax(np.where(um <= 3.0, grey, -1)), grey.shape)
            assert abs(peak[0] + 0.5 - line) <= 1.5 and abs(peak[1] + 0.5 - col) <= 1.5, view
            assert grey[peak] >= np.nanmedian(grey) + 40
        _, _, before = _image(page, "xy")
        page.press("0")  # the default contrast again
        _loaded(page, "xy", before)
        title = page.text("obstitle")
        page.press(".")  # the next frame of the track, centred on its row there
        page.wait.until(lambda d: page.text("obstitle") != title)
        assert "(t+1)" in page.text("obstitle") or "(t-" in title
        page.press(",")
        page.shows("obstitle", title)
        page.press("c")
        page.shows("progress", "1 of 30 decided")
        page.press("b")
        page.shows("decision", "correct")
        page.press("x")  # cleared
        page.shows("progress", "0 of 30 decided")
        assert page.text("decision") == "none"
        page.press("w")
        page.shows("progress", "1 of 30 decided")
        screenshot(browser, "review.png")
        server.send_signal(signal.SIGKILL)
        server.wait()
        page.press("u")
        page.shows("status", f"not saved: item {alone + 2} is still undecided (the server does not answer")
        server, again = _start(demo / "audit", "--images", str(demo / "volume.tif"), "--target", "0.4")
        assert again == url
        page.press("u")
        page.shows("progress", "2 of 30 decided")
        assert page.text("status") == ""
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    decided = read_sheet(demo / "audit" / "review.csv")
    assert decided.decisions[alone:alone + 2] == ["wrong", "unsure"] and decided.decisions.count("") == 28
    assert decided.column("shown")[alone] == "images" and decided.column("mode")[alone] == "blind"
    assert float(decided.column("seconds")[alone]) > 0
