"""The benchmark's HTML report (``trackverify run``): the answer first, then each protocol's
numbers and plots, built from :mod:`trackverify.report` (deterministic bytes for the same
results: fixed SVG ids, no dates)."""

from __future__ import annotations

import html

from trackverify.benchmark.certify.summary import read_first
from trackverify.benchmark.protocols.anatomical_verification import ALL
from trackverify.report.html import (ASSOCIATION, GLOSSARY, TIMELINE_WORDS, TRACKING, cell, page,
                                     table)
from trackverify.report.numbers import fmt
from trackverify.report.plots import figure_svg, legend, pyplot
from trackverify.report.timeline import reference_timelines_html


COLUMNS = (
    ("n_rows", "rows", "d"), ("n_labelled", "labelled", "d"), ("n_errors", "errors", "d"),
    ("n_abstained", "abstained", "d"), ("prevalence", "prevalence", "sig"),
    ("auroc", "AUROC", "sig"), ("auprc", "AUPRC", "sig"),
    ("certified_coverage", "certified coverage", "sig"),
    ("selective_risk", "selective risk", "sig"),
    ("false_certification_rate", "false certification", "sig"),
    ("correct_certified_coverage", "correct certified coverage", "sig"),
    ("correct_coverage_at_fcr", "correct coverage at FCR &le; 1%", "sig"),
)
#: Distinct markers and dashes per condition, so curves that coincide stay visible.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
DASHES = ("-", "--", "-.", ":")


def _style(index: int, condition: str, points: int) -> dict:
    """Line style of a condition; markers every ``points // 8`` points, offset per condition."""
    step = max(1, points // 8)
    every = (min(index * max(1, step // 7), max(points - 1, 0)), step)
    if condition == ALL:
        return {"lw": 2.0, "color": "black", "marker": "o", "markersize": 3, "markevery": every}
    return {"lw": 1.1, "ls": DASHES[index % len(DASHES)], "marker": MARKERS[index % len(MARKERS)],
            "markersize": 4, "markevery": every, "fillstyle": "none", "alpha": 0.9}


def operating_point(curve: dict, block: dict) -> tuple[float, float, float | None]:
    """(FPR, TPR, precision) of "flagged as error" (finite score > threshold) among labelled rows
    with a finite score: TPR = (errors - accepted errors) / errors, FPR = (correct - accepted
    correct) / correct, precision = flagged errors / flagged rows (None if none flagged)."""
    flagged_errors = curve["positives"] - block["n_accepted_errors"]
    flagged_correct = curve["negatives"] - block["n_accepted_correct"]
    flagged = flagged_errors + flagged_correct
    return (flagged_correct / curve["negatives"], flagged_errors / curve["positives"],
            flagged_errors / flagged if flagged else None)


def _threshold_note(fig, threshold: float | None) -> None:
    if threshold is not None:
        fig.text(0.5, -0.04, f"vertical bars: each condition's operating point at the threshold "
                 f"{fmt(threshold)} µm", ha="center", fontsize=8, color="0.3")


def _detection_plot(curves: dict, pooled: dict | None = None, threshold: float | None = None) -> str:
    plt = pyplot()
    fig, (roc, pr) = plt.subplots(1, 2, figsize=(9, 3.6))
    for index, (condition, curve) in enumerate(curves.items()):
        if curve is None:
            continue
        line, = roc.plot(curve["fpr"], curve["tpr"], label=condition,
                         **_style(index, condition, len(curve["fpr"])))
        pr.plot(curve["recall"], curve["precision"], label=condition,
                **_style(index, condition, len(curve["recall"])))
        if pooled is not None and condition in pooled and "positives" in curve:
            fpr, tpr, precision = operating_point(curve, pooled[condition])
            roc.plot([fpr], [tpr], marker="|", ms=12, mew=2, color=line.get_color())
            if precision is not None:
                pr.plot([tpr], [precision], marker="|", ms=12, mew=2, color=line.get_color())
    roc.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls="--")
    _threshold_note(fig, threshold)
    roc.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC (errors vs correct)")
    pr.set(xlabel="recall", ylabel="precision", title="Precision-recall", ylim=(0, 1.02))
    legend(roc, fontsize=7, frameon=False)  # a control-only run has no curve
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


def _risk_coverage_plot(pooled: dict, threshold: float | None = None,
                        target_fcr: float | None = None) -> str:
    plt = pyplot()
    fig, (risk, fcr) = plt.subplots(1, 2, figsize=(9, 3.6))
    for index, (condition, block) in enumerate(pooled.items()):
        curve = block["risk_coverage"]
        if not curve["coverage"]:
            continue
        style = _style(index, condition, len(curve["coverage"]))
        line, = risk.step(curve["coverage"], curve["selective_risk"], where="post", label=condition,
                          **style)
        fcr.step(curve["false_certification_rate"], curve["correct_coverage"], where="post",
                 label=condition, **style)
        point = {"marker": "|", "ms": 12, "mew": 2, "color": line.get_color()}
        if block["selective_risk"] is not None:
            risk.plot([block["certified_coverage"]], [block["selective_risk"]], **point)
        if block["false_certification_rate"] is not None:
            fcr.plot([block["false_certification_rate"]], [block["correct_certified_coverage"]], **point)
    _threshold_note(fig, threshold)
    risk.set(xlabel="certified coverage", ylabel="selective risk", title="Risk-coverage")
    fcr.set(xlabel="false-certification rate", ylabel="correct certified coverage",
            title="Coverage vs errors certified")
    fcr.axvline(0.01, color="0.6", lw=0.8, ls=":")
    if target_fcr is not None:
        fcr.axvline(target_fcr, color="#c0392b", lw=1.0, ls="--", label=f"target FCR {fmt(target_fcr)}")
    legend(risk, fontsize=7, frameon=False)
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


def _displacement_plot(name: str, block: dict) -> str:
    plt = pyplot()
    per_frame = block["per_frame_displacement_um"]
    fig, ax = plt.subplots(figsize=(9, 3.0))
    ax.fill_between(per_frame["frame"], 0, per_frame["max"], color="#d0d8e8", label="max", lw=0)
    ax.plot(per_frame["frame"], per_frame["q95"], color="#4a6fa5", lw=1, label="95th percentile")
    ax.plot(per_frame["frame"], per_frame["median"], color="#1b2f4f", lw=1.4, label="median")
    ax.axhline(block["threshold_um"], color="#c0392b", lw=1.2, ls="--",
               label=f"threshold {fmt(block['threshold_um'])} µm")
    ax.set(xlabel="frame", ylabel="displacement from anchor (µm)",
           title=f"{name}: clean displacement from the anchor frame")
    ax.legend(fontsize=7, frameon=False, ncol=4, loc="upper left")
    svg = figure_svg(fig)
    plt.close(fig)
    return svg


def _partition_sentence(results: dict, empty: list[str]) -> str:
    calibration = results.get("calibration")
    if calibration:
        return (f"The verifier threshold ({fmt(calibration['threshold'])} µm) was fitted on "
                f"{len(calibration['recordings'])} {'/'.join(calibration['fit_partitions'])} recording(s) "
                f"({_target_words(calibration['target'])}); test labels were never available to the fit.")
    if results["partitions"]["summary"].get("note"):
        return (f"Every usable recording is development data; the {', '.join(empty)} partitions are "
                "empty, so nothing was fitted and no held-out claim is made.")
    return "Nothing was fitted: the threshold is the declared demonstration value."


def _target_words(target: dict) -> str:
    words = target["kind"].removeprefix("target_").replace("_", " ")
    extra = f", {target['method']}" if target.get("method") else ""
    extra += f", delta {fmt(target['delta'])}" if target.get("delta") is not None else ""
    return f"target {words} &le; {fmt(target['level'])}{extra}"


PER_RECORDING = (("n_errors", "errors", "d"), ("prevalence", "prevalence", "sig"),
                 ("auroc", "AUROC", "sig"), ("certified_coverage", "certified coverage", "sig"),
                 ("selective_risk", "selective risk", "sig"),
                 ("false_certification_rate", "false certification", "sig"),
                 ("correct_certified_coverage", "correct certified coverage", "sig"))


def _per_recording_section(verification: dict, conditions: list[str]) -> str:
    """One table per condition, one row per recording (collapsed)."""
    names = [n for n in verification if n != "pooled"]
    parts = []
    for condition in conditions:
        rows = [[html.escape(str(n))] + [cell(verification[n][condition].get(k), f)
                                         for k, _, f in PER_RECORDING]
                for n in names if condition in verification[n]]
        parts.append(f"<details><summary>{html.escape(condition)} ({len(rows)} recording(s))</summary>"
                     + table(["recording"] + [label for _, label, _ in PER_RECORDING], rows)
                     + "</details>")
    return "".join(parts)


def _read_first_box(results: dict) -> str:
    certification = results["certification"]
    note = results["partitions"]["summary"].get("note")
    items = read_first(results["verifier"], certification, note,
                       [f"Input units: {w}" for w in results.get("input_warnings", [])]
                       + list(results["caveats"]))
    alerts = certification["alerts"]
    alert_html = ("<ul class='alerts'>" + "".join(f"<li>{html.escape(a)}</li>" for a in alerts)
                  + "</ul>") if alerts else ""
    kind = "caveats alert" if alerts else "caveats"
    return (f'<section class="{kind}"><h2>Read this first</h2>{alert_html}<ul>'
            + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul></section>")


def share(value) -> str:
    """A share as a percentage with one decimal (``0.1769`` -> ``17.7%``); None: ``null``."""
    return "null" if value is None else f"{value:.1%}"


def _tracks_sentence(tracking: dict) -> str:
    pooled = tracking.get("pooled")
    if not pooled:
        return ""
    rate, n = pooled["correct_observation_rate"], pooled["reference_observations"]
    where = (f"in every one of the {n:,} reference observations" if rate == 1
             else f"in {share(rate)} of the {n:,} reference observations")
    return (f"<p><b>The predicted identities</b> are right {where} (HOTA {fmt(pooled['hota'])}, "
            f"IDF1 {fmt(pooled['idf1'])}, {pooled['identity_switches']:,} identity switch(es); "
            "<i>tracking_gt</i> below).</p>")


def _verifier_words(name: str, evidence: str, primary: str) -> str:
    roles = [f"{evidence} evidence"]
    if name == "fixed_distance":
        roles.append("SPEC's declared pilot verifier")
    if name == primary:
        roles.append("the one the tables below grade")
    return f"<b>{html.escape(name)}</b> ({html.escape('; '.join(roles))})"


def verifier_rows(results: dict) -> list[tuple[str, str, dict]]:
    """``(name, evidence, numbers)`` of each verifier the run grades, as the report and the
    terminal state them: the comparison's six corruptions, or the run's verifier over all
    conditions (``numbers``: ``n_errors``, ``auroc``, ``auroc_abstain_as_error``,
    ``correct_coverage_at_fcr``)."""
    rows = [(name, block["evidence"], block["populations"]["six_corruptions"])
            for name, block in results.get("verifier_comparison", {}).items()]
    if rows:
        return rows
    pooled = results["anatomical_verification"]["pooled"][ALL]
    return [(results["verifier"]["name"], results["verifier"]["evidence"],
             dict(pooled, auroc_abstain_as_error=None))]


def ranking_words(numbers: dict) -> str:
    """``AUROC* x`` (abstentions ranked most suspicious) where the run has it, else ``AUROC x``."""
    star = numbers.get("auroc_abstain_as_error")
    return f"AUROC* {fmt(star)}" if star is not None else f"AUROC {fmt(numbers['auroc'])}"


def _verifiers_sentence(results: dict) -> str:
    """Which verifier catches the injected errors and how much each certifies, side by side
    (:func:`verifier_rows`)."""
    primary = results["verifier"]["name"]
    rows = verifier_rows(results)
    errors = rows[0][2]["n_errors"]
    parts = [f"{_verifier_words(name, evidence, primary)} ranks them with {ranking_words(block)} "
             "and, letting at most 1 % of them through, certifies correct rows making up "
             f"{share(block['correct_coverage_at_fcr'])} of all rows"
             for name, evidence, block in rows]
    return (f"<p><b>The verifiers</b>: on the {errors:,} errors injected into copies of the "
            f"predictions, " + "; ".join(parts) + ".</p>")


def _reference_sentence(checked: dict) -> str:
    if not checked:
        return ""
    pooled = checked["pooled"]["summary"]
    questioned, rows = pooled["rows_questioned"], pooled["rows"]
    if not questioned:
        return f"<p><b>The reference</b>: the check questions none of its {rows:,} rows.</p>"
    return (f"<p><b>The reference</b> has likely label errors: the check questions {questioned:,} of "
            f"its {rows:,} rows; every condition's numbers without them are in "
            "<i>The reference check</i> below.</p>")


def _answer_section(results: dict) -> str:
    """The page's first words: how good the predictions are, which verifier catches which
    errors and certifies how much, and what (if anything) is guaranteed."""
    return ('<section class="answer"><h2>The answer</h2>'
            + _tracks_sentence(results["tracking_gt"]) + _verifiers_sentence(results)
            + f"<p><b>Guarantee</b>: {html.escape(results['certification']['guarantee'])}</p>"
            + _reference_sentence(results.get("reference_check", {}))
            + '<p class="note">Every column name shows its meaning on hover; the '
            '<a href="#glossary">glossary</a> at the end lists them.</p></section>')


def _glossary_section() -> str:
    entries = "".join(f"<dt>{html.escape(term)}</dt><dd>{html.escape(meaning)}</dd>"
                      for term, meaning in GLOSSARY.items())
    return f'<h2 id="glossary">Glossary</h2><dl class="glossary">{entries}</dl>'


#: The verification numbers shown for both populations of the reference check.
CHECKED = (("n_errors", "errors", "d"), ("auroc_abstain_as_error", "AUROC*", "sig"),
           ("correct_coverage_at_fcr", "correct coverage at FCR &le; 1%", "sig"))


def _reference_check_section(checked: dict) -> str:
    """``run --check-reference``: per recording, what the check questions and every
    condition's numbers on all rows beside those on the rows it does not question."""
    if not checked:
        return ""
    header = ["condition"] + [f"{label}, {population}" for population in ("all rows", "unquestioned")
                              for _, label, _ in CHECKED]

    def numbers(block: dict) -> list[list[str]]:
        return [[html.escape(c)] + [cell(block[population][c].get(k), f)
                                    for population in ("all_rows", "unquestioned_rows")
                                    for k, _, f in CHECKED]
                for c in block["all_rows"]]

    pooled = checked["pooled"]
    s = pooled["summary"]
    dropped = table(["condition", "rows, all", "rows, unquestioned", "rows dropped", "errors, all",
                     "errors, unquestioned", "errors dropped"],
                    [[html.escape(c)] + [cell(v, "d") for v in (
                        pooled["all_rows"][c]["n_rows"], pooled["unquestioned_rows"][c]["n_rows"],
                        gone["rows"], pooled["all_rows"][c]["n_errors"],
                        pooled["unquestioned_rows"][c]["n_errors"], gone["errors"])]
                     for c, gone in pooled["dropped"].items()])
    parts = [f"<h3>All recordings, pooled</h3><p>The check questions {s['rows_questioned']:,} of "
             f"{s['rows']:,} reference rows ({s['findings']:,} findings) in {s['recordings']} "
             "recording(s). Each number is computed over the pooled rows, as the run's pooled "
             "metrics are, not averaged over recordings.</p>" + table(header, numbers(pooled))
             + dropped]
    for name, block in checked.items():
        if name != "pooled":
            parts.append(f"<h3>{html.escape(str(name))}</h3><p>{html.escape(block['note'])}</p>"
                         + table(header, numbers(block)))
    return ("<h2>The reference check: what the reference can support</h2><p>Rows whose reference "
            "label the check questions (docs/guide/reference-check.md) are left out of the second "
            "population; a number that moves between the two rests on labels that may be wrong.</p>"
            + "".join(parts))


def _comparison_section(comparison: dict) -> str:
    if not comparison:
        return ""
    header = ["verifier", "evidence", "population", "errors", "abstained (ambiguous / merged / no evidence)",
              "claims contradicted (scored)", "AUROC", "AUROC, abstained ranked most suspicious",
              "AUPRC", "correct coverage at FCR &le; 1%"]
    rows = []
    for name, block in comparison.items():
        for population, b in block["populations"].items():
            why = b["abstentions"]
            abstained = cell(b["n_abstained"], "d") + (
                f" ({cell(why['ambiguous'], 'd')} / {cell(why.get('merged'), 'd')} / "
                f"{cell(why['missing_evidence'], 'd')})" if why else "")
            contradicted = cell(why.get("contradicted"), "d") if why else ""
            rows.append([html.escape(name), html.escape(block["evidence"]), population.replace("_", " "),
                         cell(b["n_errors"], "d"), abstained, contradicted, cell(b["auroc"], "sig"),
                         cell(b["auroc_abstain_as_error"], "sig"), cell(b["auprc"], "sig"),
                         cell(b["correct_coverage_at_fcr"], "sig")])
    return f"""<h2>Evidence, side by side</h2>
<p>Every verifier scored the same corrupted conditions. The operating point that matters is the
largest share of correct observations certified while at most 1 % of the errors are certified
(prevalence is far below 1 %, so selective risk alone flatters every verifier); <i>six
corruptions</i> pools the corrupted conditions of the suite, controls excluded, and
<i>nearby swap</i> is the hardest of them alone. <i>Independent</i> evidence does not come
from the candidate tracks; <i>consistency</i> evidence only checks an assumption. A claim is
<i>contradicted</i> when the verifier's own evidence gives the row's detection to another
identity (registered_distance: its one-to-one assignment); such rows keep a (penalised) score,
they are not abstentions. A row is <i>merged</i> when its identity's registered anchor sits
within the registration's uncertainty of another's at that frame (registered_distance's
<code>merge_k</code>): the frame cannot tell the two apart, so the row abstains. The same comparison at every motion level and on real neuron point-set pairs: <code>trackverify evidence</code>.</p>
{table(header, rows)}"""


def render_report(results: dict, curves: dict, timelines: list | None = None,
                  inputs: list[str] | tuple[str, ...] = ()) -> str:
    """The whole report as one HTML string; ``timelines``: each recording's per-track
    timeline of the control condition (:func:`trackverify.benchmark.run.control_timeline`);
    ``inputs``: what the run read (the page's footer)."""
    verification = results["anatomical_verification"]
    pooled = verification["pooled"]
    verifier = results["verifier"]
    recordings = results["recordings"]
    condition_rows = [[html.escape(c)] + [cell(b[k], f) for k, _, f in COLUMNS]
                      for c, b in pooled.items()]
    header = ["condition"] + [label for _, label, _ in COLUMNS]
    association_rows = [[html.escape(c), cell(b["n_errors"], "d")]
                        + [cell(b["association"][k], f) for k, _, f in ASSOCIATION]
                        for c, b in pooled.items() if "association" in b]
    association_header = ["condition", "row-label errors"] + [label for _, label, _ in ASSOCIATION]
    consistency_html = []
    for name, block in list(results["anatomical_consistency"].items())[:12]:
        verdict = block["deformation_hypothesis"]
        share = block["share_exceeding_threshold"]
        statement = (f"<p class='verdict {verdict}'><b>{html.escape(name)}:</b> the small-deformation "
                     f"hypothesis is <b>{verdict}</b>: {cell(share, '.1%')} of clean observations "
                     f"exceed {fmt(block['threshold_um'])} µm (allowed: {block['falsification_share']:.0%}; "
                     f"the rule's declared threshold, never a fitted one). The verifier rejects "
                     f"{cell(block['verifier_rejected_share'], '.1%')} of clean observations at "
                     f"{fmt(block.get('verifier_threshold', block['threshold_um']))} µm.</p>")
        consistency_html.append(statement + _displacement_plot(name, block))
    tracking_rows = [[html.escape(str(name))] + [cell(block[k], f) for k, _, f in TRACKING]
                     for name, block in results["tracking_gt"].items()]
    members = results["partitions"]["members"]
    empty = [p for p, listed in members.items() if not listed]
    partition_rows = [[html.escape(p), str(len(listed)), ", ".join(map(html.escape, map(str, listed[:8])))
                       + (" ..." if len(listed) > 8 else "")] for p, listed in members.items()]
    certification = results["certification"]
    target = certification["target"] or {}
    target_fcr = target.get("level") if target.get("kind") == "target_false_certification_rate" else None
    fitted_threshold = verifier["threshold_um"] if certification["fitted"] else None
    rule = next(iter(results["anatomical_consistency"].values()))["rule"] if recordings else ""
    return page("trackverify report", inputs=inputs, body=f"""<h1>trackverify report</h1>
<p class="lead">Can these identities be trusted? {len(recordings)} recording(s), verifier
<b>{html.escape(verifier['name'])}</b> (evidence: <b>{html.escape(verifier['evidence'])}</b>),
acceptance threshold {fmt(verifier['threshold_um'])} µm ({'fitted' if certification['fitted'] else 'declared'}).
trackverify {html.escape(results['trackverify_version'])}.</p>
{_answer_section(results)}
{_read_first_box(results)}

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
<h3>Per recording</h3>
{_per_recording_section(verification, list(pooled))}
<h3>Error detection</h3>
<p>Each condition has its own marker and dash, so curves that coincide stay visible; the
vertical bar on each curve is its operating point at the threshold.</p>
{_detection_plot(curves, pooled, verifier['threshold_um'])}
<h3>Certification</h3>
<p>Abstained rows stay in the denominator and are never accepted; rows with equal scores enter
together. The dotted line marks a false-certification rate of 1 %{'; the dashed red line the calibration target' if target_fcr is not None else ''}; the bars mark the
threshold in use ({fmt(verifier['threshold_um'])} µm{', fitted' if fitted_threshold is not None else ''}).</p>
{_risk_coverage_plot(pooled, verifier['threshold_um'], target_fcr)}

{_comparison_section(results.get("verifier_comparison", {}))}
{_reference_check_section(results.get("reference_check", {}))}

<h2>anatomical_consistency: does the small-deformation hypothesis hold?</h2>
<p class="rule">{html.escape(rule)}</p>
{''.join(consistency_html)}

<h2>tracking_gt: the tracker's identities against the reference</h2>
<p>Diagnostics of the oracle association (one recording-wide maximum-overlap alignment; defined
by this benchmark, not HOTA or IDF1), with the canonical HOTA, MOTA and IDF1 (TrackEval's
definitions) beside them.</p>
{table(['recording'] + [label for _, label, _ in TRACKING], tracking_rows)}
<h3>Per-track timeline</h3>
{TIMELINE_WORDS.format(extra="<i>no anchor identity</i> (the track has no valid id in the anchor "
                       "frame, so its rows have no label) ")}
<p>The state is each control row's label against the track's anchor identity (what
<code>anatomical_verification</code> counts as an error), not tracking_gt's recording-wide
alignment.</p>
{reference_timelines_html(timelines or [])}

<h2>Partitions</h2>
<p>Evaluated partition: <b>{html.escape(results['partitions']['evaluated'])}</b>.
{_partition_sentence(results, empty)}</p>
{table(['partition', 'recordings', 'members'], partition_rows)}
{_glossary_section()}""")
