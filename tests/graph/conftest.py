"""Make this folder's helper module (graph_helpers) importable by its tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
