"""The pieces of every self-contained, offline HTML report: the page (inline CSS), tables,
cells and the glossary of the numbers; plots as inline SVG, no scripts.

Deterministic bytes for the same results (fixed SVG ids, no dates), so a rerun gives the
same file.
"""

from __future__ import annotations

import html
from importlib.resources import files

from trackverify.report.numbers import fmt


ASSOCIATION = (("correct_observation_rate", "correct observation rate", "sig"),
               ("identity_switches", "identity switches", "d"),
               ("fragmentations", "fragmentations", "d"))
TRACKING = (("reference_observations", "reference observations", "d"),
            *ASSOCIATION,
            ("extra_predicted_observations", "extra predictions", "d"),
            ("hota", "HOTA", "sig"), ("mota", "MOTA", "sig"), ("idf1", "IDF1", "sig"))


def cell(value, spec: str) -> str:
    """A cell: counts (``d``) and shares (``.1%``) by ``spec``; ``sig``: the numbers helper."""
    if value is None:
        return '<span class="null">null</span>'
    return fmt(value) if spec == "sig" else format(value, spec)


#: What each number of the reports means: a header named here shows it on hover, and the
#: run report's glossary lists them (docs/reference/verification.md gives the exact definitions).
GLOSSARY = {
    "rows": "observations in the population (every condition holds a copy of each reference observation)",
    "labelled": "rows whose claim can be checked: the track has an identity in the anchor frame",
    "errors": "labelled rows whose predicted id is not the track's anchor-frame identity",
    "abstained": "rows the verifier gave no score: never certified, and counted in every denominator",
    "prevalence": "errors / labelled rows",
    "AUROC": "how well the score ranks errors above correct rows (finite scores only): the chance that "
             "a random error scores higher than a random correct row; 1 perfect, 0.5 chance",
    "AUROC*": "AUROC with abstained rows ranked as the most suspicious, so abstaining earns nothing",
    "AUROC, abstained ranked most suspicious": "AUROC*: AUROC with abstained rows ranked as the "
                                               "most suspicious, so abstaining earns nothing",
    "AUROC*, all rows": "AUROC* on every row",
    "AUROC*, unquestioned": "AUROC* on the rows whose reference label the check does not question",
    "AUPRC": "average precision of finding the errors by score (chance level = prevalence)",
    "certified coverage": "certified rows / all rows (certified: a finite score at most the threshold)",
    "selective risk": "certified errors / certified rows",
    "false certification": "false-certification rate (FCR): certified errors / all errors",
    "correct certified coverage": "certified correct rows / all rows",
    "correct coverage at FCR ≤ 1%": "the largest correct certified coverage over all thresholds that "
                                    "certify at most 1 % of the errors",
    "row-label errors": "rows whose predicted id differs from the track's anchor-frame identity",
    "correct observation rate": "observations whose predicted id is the one the recording-wide "
                                "alignment gives their track",
    "identity switches": "times a track's predicted id differs from its previous valid one",
    "fragmentations": "times a track's run of correct predictions is broken by an invalid prediction",
    "reference observations": "observations of the reference tracks",
    "extra predictions": "predicted observations that no reference observation matches",
    "HOTA": "Higher Order Tracking Accuracy (TrackEval): geometric mean of detection and association "
            "accuracy, averaged over localisation thresholds",
    "MOTA": "Multiple Object Tracking Accuracy (CLEAR MOT): 1 - (misses + false positives + id "
            "switches) / reference observations",
    "IDF1": "identity F1 (TrackEval): 2 IDTP / (2 IDTP + IDFP + IDFN) under the best one-to-one "
            "track-to-track identity assignment",
}


def _header(label: str) -> str:
    """A header cell's text, with its glossary line as hover text where it has one."""
    meaning = GLOSSARY.get(html.unescape(label))
    return f'<abbr title="{html.escape(meaning)}">{label}</abbr>' if meaning else label


def table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table of already formatted (and escaped) cells; a header the glossary names
    shows its meaning on hover."""
    head = "".join(f"<th>{_header(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, body: str, inputs: list[str] | tuple[str, ...] = ()) -> str:
    """A whole self-contained page: the report's CSS inline, ``body`` inside ``<main>``, and a
    footer naming the trackverify version that made it and the ``inputs`` it read."""
    from trackverify import __version__

    css = files("trackverify.report").joinpath("report.css").read_text(encoding="utf-8")
    read = "".join(f" <code>{html.escape(str(i))}</code>" for i in inputs)
    footer = (f'<footer class="made">Made by trackverify {html.escape(__version__)}'
              + (f" from{read}" if read else "") + ".</footer>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{css}</style></head>
<body><main>
{body}
{footer}
</main></body></html>
"""


TIMELINE_WORDS = """<p>Each reference track (row) over the frames: <i>correct</i>, <i>wrong
identity</i> (a valid predicted id that is not the right one), <i>no valid prediction</i>,
{extra}and, in the background, frames where the track is not observed. Black ticks mark the
identity switches (a track's predicted id differs from its previous valid one; the rows of
<code>events.csv</code>). Recordings longer than 1,500 frames are binned and a bin shows its
worst state, so a single wrong frame stays visible.</p>"""
