"""The check's outputs: ``reference_issues.csv``, ``check.json`` and ``report.html`` (a small
picture per finding: the frame's detections around it, seen from above)."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.io.atomic import ensure_folder, write_json_atomic, write_text_atomic
from trackverify.reference_check.core import COORDS, ReferenceCheck, evidence_sentence

COLUMNS = ["rank", "kind", "pattern", "recording", "frames", "tracks", "partner", "detections",
           "strength", "residual_um", "label_to_prediction_um", "alternative_to_prediction_um",
           "label_to_partner_prediction_um", "pair_agree", "pair_read", "evidence"]
#: Pictures are drawn for the strongest findings only (the CSV holds every finding).
MAX_PICTURES = 60


def issues_table(check: ReferenceCheck) -> pd.DataFrame:
    """The findings as ``reference_issues.csv`` rows (lists joined by ';')."""
    f = check.findings
    out = pd.DataFrame({c: f[c] for c in COLUMNS if c in f.columns and c != "evidence"})
    for c in ("frames", "tracks", "detections"):
        out[c] = f[c].map(lambda v: ";".join(str(x) for x in v))
    out["partner"] = f["partner"].map(lambda v: "" if pd.isna(v) else str(int(v)))
    out["evidence"] = [evidence_sentence(row) for _, row in f.iterrows()]
    return out[COLUMNS]


def picture(finding: pd.Series, observations: pd.DataFrame, detections: pd.DataFrame | None) -> str:
    from trackverify.report.plots import figure_svg, pyplot

    plt = pyplot()
    frame = finding["frames"][0]
    here = observations[(observations["recording"] == finding["recording"])
                        & (observations["frame"] == frame)] if "recording" in observations \
        else observations[observations["frame"] == frame]
    points = here if detections is None else detections[
        (detections["frame"] == frame) & ((detections["recording"] == finding["recording"])
                                          if "recording" in detections else True)]
    track = finding["tracks"][0]
    centre = here.loc[here["track"] == track, COORDS[:2]].to_numpy(dtype=np.float64)[0]
    fig, ax = plt.subplots(figsize=(2.4, 2.4))
    xy = points[COORDS[:2]].to_numpy(dtype=np.float64)
    near = np.linalg.norm(xy - centre, axis=1) < 20
    ax.scatter(*xy[near].T, s=10, c="0.75", label="detections")
    lab = here[np.linalg.norm(here[COORDS[:2]].to_numpy(dtype=np.float64) - centre, axis=1) < 20]
    ax.scatter(lab["x_um"], lab["y_um"], s=12, c="tab:blue", label="labelled")
    for t, x, y in zip(lab["track"], lab["x_um"], lab["y_um"]):
        ax.annotate(str(t), (x, y), fontsize=6, color="tab:red" if t in finding["tracks"] else "0.3")
    if isinstance(finding["prediction"], list):
        label = here.loc[here["track"] == track, COORDS[:2]].to_numpy(dtype=np.float64)[0]
        px, py = finding["prediction"][:2]
        ax.scatter([px], [py], marker="x", s=30, c="tab:red", label=f"where {track} should be")
        ax.annotate("", (px, py), label, arrowprops={"arrowstyle": "->", "color": "tab:red", "lw": 0.8})
        ax.legend(fontsize=5, loc="lower left", frameon=False)
    ax.set_title(f"#{finding['rank']} frame {frame}: {finding['kind']}", fontsize=8)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=6)
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


def render_report(check: ReferenceCheck, observations: pd.DataFrame,
                  detections: pd.DataFrame | None, inputs: list[str] | tuple[str, ...] = ()) -> str:
    from trackverify.report.html import cell, page, table

    s = check.summary()
    issues = issues_table(check)
    lead = (f"<p>{s['findings']} likely label errors on {s['rows_questioned']} of {s['rows']} rows "
            f"({s['rows_kept']} rows kept). Kinds: "
            + ", ".join(f"{k} {v}" for k, v in s["findings_by_kind"].items()) + ".</p>"
            "<p>A label is questioned when it lies far from where its neighbours' motion in the "
            "frames around puts it (robust z-score of that distance at least "
            f"{check.settings.z_min}) and another detection sits at that place (at most "
            f"{check.settings.ratio} times as far); a label on no tracked neuron's place "
            "(displaced) needs as well a second, motion-free reading in the frames around "
            f"(at least {check.settings.pair_support:g} of them agree) or a z-score of at least "
            f"{check.settings.displaced_factor * check.settings.z_min:g}. "
            "See docs/guide/reference-check.md.</p>")
    rows = [[str(r["rank"]), html.escape(r["kind"]), html.escape(str(r["recording"])),
             html.escape(r["frames"]), html.escape(r["tracks"]),
             cell(None if pd.isna(r["strength"]) else float(r["strength"]), "sig"),
             html.escape(r["evidence"])] for _, r in issues.iterrows()]
    pictures = "".join(
        f"<figure style='display:inline-block'>{picture(f, observations, detections)}"
        f"<figcaption>#{f['rank']}</figcaption></figure>"
        for _, f in check.findings.head(MAX_PICTURES).iterrows())
    body = (f"<h1>Is the reference right?</h1>{lead}"
            + table(["rank", "kind", "recording", "frames", "tracks", "strength", "evidence"], rows)
            + f"<h2>The {min(MAX_PICTURES, len(issues))} strongest findings</h2>"
            "<p>Each picture: the frame's detections within 20 um (grey), labelled ones (blue), the "
            "questioned label's number in red, and the red cross where the frames around put "
            "it (in the finding's first frame, the one drawn).</p>" + pictures)
    return page("Reference check", body, inputs)


def write_outputs(check: ReferenceCheck, observations: pd.DataFrame,
                  detections: pd.DataFrame | None, out: str | Path,
                  inputs: dict | None = None) -> None:
    """``reference_issues.csv``, ``check.json`` and ``report.html`` in ``out`` (atomically);
    ``inputs``: how the tracks were read (:func:`trackverify.io.tracks.read_tracks`'s record)
    and the detections' path, kept in ``check.json`` with the trackverify version."""
    from trackverify import __version__

    out = ensure_folder(out)
    inputs = inputs or {}
    write_text_atomic(out / "reference_issues.csv", issues_table(check).to_csv(index=False))
    write_json_atomic(out / "check.json", {"summary": check.summary(),
                                           "findings": issues_table(check).to_dict("records"),
                                           "trackverify": __version__, "inputs": inputs})
    write_text_atomic(out / "report.html", render_report(
        check, observations, detections, [str(i.get("source", i) if isinstance(i, dict) else i)
                                          for i in inputs.values() if i is not None]))
