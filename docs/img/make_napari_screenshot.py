"""Render docs/img/napari-audit.png: the real tracker's audit opened in napari, the first
event chosen in the events table. Needs a display with OpenGL; on a machine with none,
Debian's xvfb and Mesa (xvfb, libgl1-mesa-dri) give one:

    trackverify audit examples/real-tracker/tracker_cpd.parquet --out /tmp/a
    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python docs/img/make_napari_screenshot.py /tmp/a
"""

import sys
from pathlib import Path

import napari
from qtpy.QtWidgets import QApplication

from trackverify.napari_plugin.widget import open_audit

OUT = Path(__file__).resolve().parent / "napari-audit.png"


def main(folder: str) -> None:
    viewer = napari.Viewer(title="trackverify audit")
    viewer.window.resize(1500, 900)
    viewer, table = open_audit(folder, viewer)
    viewer.layers["observations"].size = 4
    table.table.setCurrentCell(0, 0)
    for _ in range(20):
        QApplication.processEvents()
    viewer.screenshot(str(OUT), canvas_only=False, flash=False)
    viewer.close()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
