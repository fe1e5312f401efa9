"""The review page in headless Debian Chromium: decisions by keyboard in one tab while the
server is killed and restarted (nothing lost, the tab goes on), and the page saying why a
decision was not saved (no server, another token, review.csv edited) without moving on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import missing_reference
from tests.review.conftest import with_cell, write_review_csv
from trackverify.review.folder import LOCK_NAME
from trackverify.review.sheet import read_sheet

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[2]
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
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver, self.by, self.wait = driver, By, WebDriverWait(driver, 30)
        driver.get(url)

    def text(self, element: str) -> str:
        return self.driver.find_element(self.by.ID, element).text

    def press(self, keys: str) -> None:
        body = self.driver.find_element(self.by.TAG_NAME, "body")
        for key in keys:
            body.send_keys(key)

    def shows(self, element: str, start: str) -> None:
        self.wait.until(lambda d: self.text(element).startswith(start))


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
    path = write_review_csv(audit_dir, 20)
    keys = "cwu" * 7
    server, url = _start(audit_dir)
    try:
        page = Page(browser, url)
        page.shows("progress", "0 of 20 decided")
        page.press(keys[:10])
        page.shows("progress", "10 of 20 decided")
        server.send_signal(signal.SIGKILL)
        server.wait()
        page.press(keys[10])  # no server: said, and the page stays on item 11
        page.shows("status", "not saved: item 11 is still undecided (the server does not answer")
        assert page.text("head").startswith("item 11 of 20") and page.text("progress") == "10 of 20 decided"
        server, again = _start(audit_dir)
        assert again == url  # same address and token: this tab goes on
        page.press(keys[10:20])
        page.shows("progress", "20 of 20 decided")
        assert page.text("status") == ""
        browser.get_screenshot_as_file(str(ROOT / "docs" / "img" / "review.png"))
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
