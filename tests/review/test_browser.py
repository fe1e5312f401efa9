"""The review page in headless Debian Chromium: 10 decisions by keyboard, the server killed
(SIGKILL) and restarted, the page resumes at item 11, 10 more, review.csv holds all 20."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import missing_reference
from tests.review.test_review import audit_dir, write_review_csv  # noqa: F401 (fixture)

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[2]


def _start(folder: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, "-m", "trackverify", "review", str(folder)],
                              stdout=subprocess.PIPE, text=True, env=env)
    line = server.stdout.readline()
    assert line.startswith("review page: http://127.0.0.1:"), line
    return server, line.split()[2]


def test_keyboard_decisions_survive_a_killed_server(audit_dir):  # noqa: F811
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        missing_reference("selenium (pip install trackverify[test])")
    if not (CHROMIUM.exists() and DRIVER.exists()):
        missing_reference("Debian chromium / chromium-driver (apt-get install chromium chromium-driver)")
    path = write_review_csv(audit_dir, 20)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=options)
    keys = "cwu" * 7
    server, url = _start(audit_dir)
    try:
        driver.get(url)
        wait = WebDriverWait(driver, 30)
        progress = lambda text: lambda d: d.find_element(By.ID, "progress").text == text  # noqa: E731
        wait.until(progress("0 of 20 decided"))
        body = driver.find_element(By.TAG_NAME, "body")
        for key in keys[:10]:
            body.send_keys(key)
        wait.until(progress("10 of 20 decided"))
        server.send_signal(signal.SIGKILL)
        server.wait()
        server, url = _start(audit_dir)
        driver.get(url)
        wait.until(progress("10 of 20 decided"))
        assert driver.find_element(By.ID, "head").text.startswith("item 11 of 20")
        body = driver.find_element(By.TAG_NAME, "body")
        for key in keys[10:20]:
            body.send_keys(key)
        wait.until(progress("20 of 20 decided"))
        driver.get_screenshot_as_file(str(ROOT / "docs" / "img" / "review.png"))
    finally:
        driver.quit()
        server.send_signal(signal.SIGTERM)
        server.wait()
    names = {"c": "correct", "w": "wrong", "u": "unsure"}
    decided = [line.rsplit(",", 1)[1].strip() for line in path.read_text().splitlines()[1:]]
    assert decided == [names[k] for k in keys[:20]]
