"""The self-contained, offline HTML report: inline CSS, plots as inline SVG, no scripts.

Deterministic bytes for the same results (fixed SVG ids, no dates), so a rerun gives the
same file.
"""

from __future__ import annotations

import html
import io
from importlib.resources import files

from trackverify.protocols.anatomical_verification import ALL

COLUMNS = (
    ("n_rows", "rows", "d"), ("n_labelled", "labelled", "d"), ("n_errors", "errors", "d"),
    ("n_abstained", "abstained", "d"), ("prevalence", "prevalence", ".4f"),
    ("auroc", "AUROC", ".3f"), ("auprc", "AUPRC", ".3f"),
    ("certified_coverage", "certified coverage", ".3f"),
    ("selective_risk", "selective risk", ".4f"),
    ("false_certification_rate", "false certification", ".3f"),
    ("correct_certified_coverage", "correct certified coverage", ".3f"),
    ("correct_coverage_at_fcr", "correct coverage at FCR &le; 1%", ".3f"),
)
ASSOCIATION = (("correct_observation_rate", "correct observation rate", ".4f"),
               ("identity_switches", "identity switches", "d"),
               ("fragmentations", "fragmentations", "d"))
TRACKING = (("reference_observations", "reference observations", "d"),
            *ASSOCIATION,
            ("extra_predicted_observations", "extra predictions", "d"),
            ("hota", "HOTA", ".4f"), ("mota", "MOTA", ".4f"), ("idf1", "IDF1", ".4f"))


def _fmt(value, spec: str) -> str:
    if value is None:
        return '<span class="null">null</span>'
    return format(value, spec)


def table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table of already formatted (and escaped) cells."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    return text[:start] + text[end + len("</metadata>"):] if start >= 0 else text


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "trackverify", "svg.fonttype": "none",
                         "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _detection_plot(curves: dict) -> str:
    plt = _pyplot()
    fig, (roc, pr) = plt.subplots(1, 2, figsize=(9, 3.6))
    for condition, curve in curves.items():
        if curve is None:
            continue
        roc.plot(curve["fpr"], curve["tpr"], label=condition, lw=1.2)
        pr.plot(curve["recall"], curve["precision"], label=condition, lw=1.2)
    roc.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls="--")
    roc.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC (errors vs correct)")
    pr.set(xlabel="recall", ylabel="precision", title="Precision-recall", ylim=(0, 1.02))
    roc.legend(fontsize=7, frameon=False)
    svg = _svg(fig)
    plt.close(fig)
    return svg


def _risk_coverage_plot(pooled: dict) -> str:
    plt = _pyplot()
    fig, (risk, fcr) = plt.subplots(1, 2, figsize=(9, 3.6))
    for condition, block in pooled.items():
        curve = block["risk_coverage"]
        if not curve["coverage"]:
            continue
        style = {"lw": 2.0, "color": "black"} if condition == ALL else {"lw": 1.0}
        risk.step(curve["coverage"], curve["selective_risk"], where="post", label=condition, **style)
        fcr.step(curve["false_certification_rate"], curve["correct_coverage"], where="post",
                 label=condition, **style)
    risk.set(xlabel="certified coverage", ylabel="selective risk", title="Risk-coverage")
    fcr.set(xlabel="false-certification rate", ylabel="correct certified coverage",
            title="Coverage vs errors certified")
    fcr.axvline(0.01, color="0.6", lw=0.8, ls=":")
    risk.legend(fontsize=7, frameon=False)
    svg = _svg(fig)
    plt.close(fig)
    return svg


def _displacement_plot(name: str, block: dict) -> str:
    plt = _pyplot()
    per_frame = block["per_frame_displacement_um"]
    fig, ax = plt.subplots(figsize=(9, 3.0))
    ax.fill_between(per_frame["frame"], 0, per_frame["max"], color="#d0d8e8", label="max", lw=0)
    ax.plot(per_frame["frame"], per_frame["q95"], color="#4a6fa5", lw=1, label="95th percentile")
    ax.plot(per_frame["frame"], per_frame["median"], color="#1b2f4f", lw=1.4, label="median")
    ax.axhline(block["threshold_um"], color="#c0392b", lw=1.2, ls="--",
               label=f"threshold {block['threshold_um']:g} um")
    ax.set(xlabel="frame", ylabel="displacement from anchor (um)",
           title=f"{name}: clean displacement from the anchor frame")
    ax.legend(fontsize=7, frameon=False, ncol=4, loc="upper left")
    svg = _svg(fig)
    plt.close(fig)
    return svg


def _partition_sentence(results: dict, empty: list[str]) -> str:
    calibration = results.get("calibration")
    if calibration:
        return (f"The verifier threshold ({calibration['threshold']:.4g} um) was fitted on "
                f"{', '.join(calibration['partitions'])} recordings to reach a selective risk of at most "
                f"{calibration['target_risk']:g}; test labels were never available to the fit.")
    if results["partitions"]["summary"].get("note"):
        return (f"Every usable recording is development data; the {', '.join(empty)} partitions are "
                "empty, so nothing was fitted and no held-out claim is made.")
    return "Nothing was fitted: the threshold is the declared demonstration value."


def _comparison_section(comparison: dict) -> str:
    if not comparison:
        return ""
    header = ["verifier", "evidence", "population", "errors", "abstained (ambiguous / no evidence)",
              "AUROC", "AUROC, abstained ranked most suspicious", "AUPRC",
              "correct coverage at FCR &le; 1%"]
    rows = []
    for name, block in comparison.items():
        for population, b in block["populations"].items():
            why = b["abstentions"]
            abstained = _fmt(b["n_abstained"], "d") + (
                f" ({why['ambiguous']} / {why['missing_evidence']})" if why else "")
            rows.append([html.escape(name), html.escape(block["evidence"]), population.replace("_", " "),
                         _fmt(b["n_errors"], "d"), abstained, _fmt(b["auroc"], ".3f"),
                         _fmt(b["auroc_abstain_as_error"], ".3f"), _fmt(b["auprc"], ".3f"),
                         _fmt(b["correct_coverage_at_fcr"], ".3f")])
    return f"""<h2>Evidence, side by side</h2>
<p>Every verifier scored the same corrupted conditions. The operating point that matters is the
largest share of correct observations certified while at most 1 % of the errors are certified
(prevalence is far below 1 %, so selective risk alone flatters every verifier); <i>six
corruptions</i> pools the corrupted conditions of the suite, controls excluded, and
<i>nearby swap</i> is the hardest of them alone. <i>Independent</i> evidence does not come
from the candidate tracks; <i>consistency</i> evidence only checks an assumption. The same
comparison at every motion level and on real neuron point-set pairs: <code>trackverify evidence</code>.</p>
{table(header, rows)}"""


def page(title: str, body: str) -> str:
    """A whole self-contained page: the report's CSS inline, ``body`` inside ``<main>``."""
    css = files("trackverify.report").joinpath("report.css").read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{css}</style></head>
<body><main>
{body}
</main></body></html>
"""


def render_report(results: dict, curves: dict) -> str:
    """The whole report as one HTML string."""
    verification = results["anatomical_verification"]
    pooled = verification["pooled"]
    verifier = results["verifier"]
    recordings = results["recordings"]
    condition_rows = [[html.escape(c)] + [_fmt(b[k], f) for k, _, f in COLUMNS]
                      for c, b in pooled.items()]
    header = ["condition"] + [label for _, label, _ in COLUMNS]
    association_rows = [[html.escape(c), _fmt(b["n_errors"], "d")]
                        + [_fmt(b["association"][k], f) for k, _, f in ASSOCIATION]
                        for c, b in pooled.items() if "association" in b]
    association_header = ["condition", "row-label errors"] + [label for _, label, _ in ASSOCIATION]
    consistency_html = []
    for name, block in list(results["anatomical_consistency"].items())[:12]:
        verdict = block["deformation_hypothesis"]
        share = block["share_exceeding_threshold"]
        statement = (f"<p class='verdict {verdict}'><b>{html.escape(name)}:</b> the small-deformation "
                     f"hypothesis is <b>{verdict}</b>: {_fmt(share, '.1%')} of clean observations "
                     f"exceed {block['threshold_um']:g} um (allowed: {block['falsification_share']:.0%}). "
                     f"The verifier rejects {_fmt(block['verifier_rejected_share'], '.1%')} of clean "
                     f"observations.</p>")
        consistency_html.append(statement + _displacement_plot(name, block))
    tracking_rows = [[html.escape(str(name))] + [_fmt(block[k], f) for k, _, f in TRACKING]
                     for name, block in results["tracking_gt"].items()]
    members = results["partitions"]["members"]
    empty = [p for p, listed in members.items() if not listed]
    partition_rows = [[html.escape(p), str(len(listed)), ", ".join(map(html.escape, map(str, listed[:8])))
                       + (" ..." if len(listed) > 8 else "")] for p, listed in members.items()]
    caveats = "".join(f"<li>{html.escape(c)}</li>" for c in
                      [f"Input units: {w}" for w in results.get("input_warnings", [])]
                      + list(results["caveats"]))
    rule = next(iter(results["anatomical_consistency"].values()))["rule"] if recordings else ""
    return page("trackverify report", f"""<h1>trackverify report</h1>
<p class="lead">Can these identities be trusted? {len(recordings)} recording(s), verifier
<b>{html.escape(verifier['name'])}</b> (evidence: <b>{html.escape(verifier['evidence'])}</b>),
acceptance threshold {verifier['threshold_um']:g} um. trackverify {html.escape(results['trackverify_version'])}.</p>
<section class="caveats"><h2>Read this first</h2><ul>{caveats}</ul></section>

<h2>anatomical_verification: can the verifier catch injected errors?</h2>
<p>Each condition corrupts a copy of the clean predictions (coordinates never change). Rows are
labelled against the anchor identity; the verifier scores every row or abstains. Pooled over
recordings.</p>
{table(header, condition_rows)}
<h3>Row labels vs the global alignment</h3>
<p>The oracle diagnostics of each corrupted condition (tracking_gt's recording-wide alignment).
They can disagree with the row labels: a persistent swap longer than the clean part makes the
global alignment adopt the swapped naming, so it counts the clean part as wrong instead.</p>
{table(association_header, association_rows)}
<h3>Error detection</h3>{_detection_plot(curves)}
<h3>Certification</h3>
<p>Abstained rows stay in the denominator and are never accepted; rows with equal scores enter
together. The dotted line marks a false-certification rate of 1 %.</p>
{_risk_coverage_plot(pooled)}

{_comparison_section(results.get("verifier_comparison", {}))}

<h2>anatomical_consistency: does the small-deformation hypothesis hold?</h2>
<p class="rule">{html.escape(rule)}</p>
{''.join(consistency_html)}

<h2>tracking_gt: the tracker's identities against the reference</h2>
<p>Diagnostics of the oracle association (one recording-wide maximum-overlap alignment; defined
by this benchmark, not HOTA or IDF1), with the canonical HOTA, MOTA and IDF1 (TrackEval's
definitions) beside them.</p>
{table(['recording'] + [label for _, label, _ in TRACKING], tracking_rows)}

<h2>Partitions</h2>
<p>Evaluated partition: <b>{html.escape(results['partitions']['evaluated'])}</b>.
{_partition_sentence(results, empty)}</p>
{table(['partition', 'recordings', 'members'], partition_rows)}""")
