"""Render docs/img/audit-first-screen.png (the audit report's first screen: 1280 x 900 px)
and docs/img/audit-events.png (its first event, the sentence and the picture) in headless
Chromium (Debian package 'chromium'), from the audit of the shipped real tracker output:

    cd /tmp && trackverify audit $REPO/examples/real-tracker/tracker_cpd.parquet --out my-audit
    .venv/bin/python docs/img/make_audit_screenshots.py /tmp/my-audit/report.html
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The first event alone: the report's page with its sections hidden but the first figure.
FIRST_EVENT = """<style>main > :not(figure#event-1) { display: none; }
figure#event-1 { margin: 0; }</style></body>"""


def shoot(page: Path, out: Path, height: int) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={profile}",
                        f"--window-size=1280,{height}", f"--screenshot={out}",
                        page.resolve().as_uri()], check=True, capture_output=True)
    print(f"wrote {out}")


def main(report: str) -> None:
    report = Path(report)
    shoot(report, HERE / "audit-first-screen.png", 900)
    with tempfile.TemporaryDirectory() as folder:
        event = Path(folder) / "event.html"
        event.write_text(report.read_text(encoding="utf-8").replace("</body>", FIRST_EVENT),
                         encoding="utf-8")
        shoot(event, HERE / "audit-events.png", 520)


if __name__ == "__main__":
    main(sys.argv[1])
