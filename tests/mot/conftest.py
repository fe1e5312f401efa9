"""Make this folder's helper modules (mot_helpers, mot_scenes) importable by its tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
