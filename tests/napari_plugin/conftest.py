"""napari runs headless here: Qt's offscreen platform, set before anything imports Qt."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
