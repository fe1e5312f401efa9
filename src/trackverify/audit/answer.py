"""The audit report's first screen and the words it shares with the terminal: the answer in
one sentence, the error rate or the command that gives it, where to start; what each verdict
means with how often it was right on the real tracker; every row accounted for; the
threshold in words.

The counts are ``audit.json``'s (:func:`trackverify.audit.result.row_counts`): every row is
without an id, before the anchor frame, in the anchor frame, a later track's first
observation, or judged (certified, flagged or abstained), the same kinds as ``audit.parquet``'s
``reason`` on a row with no verdict, named by :data:`~trackverify.audit.result.ROW_KINDS`.
"""

from __future__ import annotations

import html

import pandas as pd

from trackverify.audit.result import ROW_KINDS, VERDICTS, not_judged
from trackverify.report.html import table
from trackverify.report.numbers import fmt

#: Where the measured numbers below come from.
EVIDENCE = "docs/evidence/audit.md"
#: How often each kind of judged observation was wrong on the shipped real tracker output
#: (``examples/real-tracker``: fDNC's CPD baseline on a freely moving worm, 39,220 judged
#: observations, first frame as the anchor, no detections table), against its hand-made
#: reference: ``(wrong, observations)``, from ``python benchmarks/audit_events.py
#: --verdicts`` (docs/evidence/audit.md, "What each verdict means").
MEASURED = {"certified": (698, 33282), "flagged": (2961, 5938),
            "flagged_on_other": (2702, 2998), "flagged_elsewhere": (259, 2940)}
#: The same output scored by ``trackverify evaluate`` against the reference: its correct
#: observation rate over the 47,907 reference observations (8,617 without an id), and the
#: audit's wrong judged observations (same command).
EVALUATE_CORRECT, AUDIT_WRONG = 0.74753, (3659, 39220)
#: Events listed under "Start here".
START_EVENTS = 5


def share(part: int, whole: int) -> str:
    """``part / whole`` as a percentage with one decimal (``undefined`` for no whole)."""
    return "undefined" if not whole else f"{100 * part / whole:.1f} %"


def answer_sentence(counts: dict) -> str:
    """The answer in one sentence (HTML): how many judged observations look wrong, of how
    many judged, and what was not judged."""
    judged, flagged = counts["audited"], counts["flagged"]
    rest = "; ".join(f"{n:,} {words}" for words, n in not_judged(counts))
    rest = f" Not judged: {rest}." if rest else ""
    if not judged:
        return (f"<p class='sentence'><b>Nothing was judged</b> of {counts['rows']:,} "
                f"rows.{rest}</p>")
    abstained = (f" The verifier could not decide on {counts['abstained']:,} of them "
                 "(abstained)." if counts["abstained"] else "")
    return (f"<p class='sentence'><b>{flagged:,} of the {judged:,} judged observations "
            f"({share(flagged, judged)}) look wrong</b>: each is farther from where the "
            "registration puts its track's neuron than the threshold allows (flagged)."
            f"{abstained}{rest}</p>")


def no_error_rate() -> str:
    """What the first screen says before a review: what a flag is worth, and the commands
    that start the review whose estimate replaces this paragraph (``DIR``: this report's
    folder; the report names no path, so it is the same wherever it is written)."""
    flagged, certified = (wrong / n for wrong, n in (MEASURED["flagged"], MEASURED["certified"]))
    return (f"<p class='rate'><b>How many are really wrong?</b> A flag is evidence, not proof: "
            f"on the real tracker of <code>{EVIDENCE}</code>, {100 * flagged:.1f} % of the "
            f"flagged observations and {100 * certified:.1f} % of the certified ones were "
            "wrong. This recording's own error rate, with a 95 % interval, comes from checking "
            "a sample by eye: run <code>trackverify audit sample DIR --n 200</code> on this "
            "report's folder <code>DIR</code>, mark the rows it draws, then <code>trackverify "
            "audit estimate DIR</code> writes the rate here.</p>")


def error_rate_sentence(estimate: dict) -> str:
    """The first screen's sentence on a review's estimate (``estimate.json``)."""
    whole, certified = estimate["all"], estimate["certified"]

    def rate(block: dict) -> str:
        point = ("no estimate yet" if block["estimate"] is None
                 else f"{100 * block['estimate']:.1f} % wrong")
        low, high = block["low"], block["high"]
        interval = ("" if low is None or high is None
                    else f", 95 % interval {100 * low:.1f} to {100 * high:.1f} %")
        return point + interval

    text = (f"<p class='rate'><b>Error rate from your review: {rate(whole)}</b> of the "
            f"{whole['N']:,} judged observations, from {estimate['n_decided']} of "
            f"{estimate['n_rows']} sampled observations decided")
    if certified is not None:
        text += f"; of the certified ones, {rate(certified)}"
    return text + ". <a href='#error-rate'>The review in detail</a>.</p>"


def start_here(events: pd.DataFrame) -> str:
    """The top :data:`START_EVENTS` events, each its sentence and a link to its picture."""
    if not len(events):
        return ("<h2>Start here</h2><p>No events: nothing flagged beyond scattered single "
                "observations.</p>")
    items = "".join(
        f"<li value='{e['rank']}'><a href='#event-{e['rank']}'>{html.escape(str(e['kind']))}</a> "
        f"({html.escape(str(e['recording']))}): {html.escape(str(e['evidence']))}; open frame "
        f"{e['pictured_frame']}</li>" for e in events.head(START_EVENTS).to_dict("records"))
    more = (f" The other {len(events) - START_EVENTS:,} are in <code>events.csv</code>, in the "
            "same order." if len(events) > START_EVENTS else "")
    return (f"<h2>Start here</h2><p>The events to check first, each one mistake checked once, "
            "ranked by the wrong observations a look is expected to settle; each has a picture "
            f"<a href='#events'>below</a>.{more}</p><ol class='start'>{items}</ol>")


def verdict_table(observations: pd.DataFrame, counts: dict) -> str:
    """What each verdict means, how many of this audit's judged observations have it, and
    how often it was wrong on the real tracker (:data:`MEASURED`)."""
    from trackverify.audit.events import on_another_place
    from trackverify.audit.result import audited

    judged = observations[audited(observations)]
    on = int(on_another_place(judged).sum())
    reasons = ", ".join(f"{html.escape(str(k)).replace('_', ' ')} {v:,}"
                        for k, v in counts["abstained_by_reason"].items())

    def measured(kind: str) -> str:
        wrong, n = MEASURED[kind]
        return f"{100 * wrong / n:.1f} % wrong, {wrong:,} of {n:,}"

    def here(n: int) -> str:
        return f"{n:,}, {share(n, counts['audited'])}"

    rows = [
        ["certified", "within the threshold of where the registration puts its track's neuron: "
         "it looks right", here(counts["certified"]), measured("certified")],
        ["flagged, on another identity's place", "beyond the threshold and nearer another "
         "identity's place than its own: it looks like that identity", here(on),
         measured("flagged_on_other")],
        ["flagged, elsewhere", "beyond the threshold, on no other identity's place: a drift, "
         "a neighbour the anchor frame did not name, or the registration's error; most were "
         "right", here(counts["flagged"] - on), measured("flagged_elsewhere")],
        ["abstained", "the verifier could not decide" + (f": {reasons}" if reasons else ""),
         here(counts["abstained"]), "none on the real tracker"],
    ]
    return ("<h2>What the verdicts mean</h2><p>Each judged observation answers one question: "
            "<b>is it on the neuron its track started on?</b> The last column says how often "
            "each verdict was wrong on the shipped real tracker output, checked against its "
            f"hand-made reference (<code>{EVIDENCE}</code>); a tracker of your own may differ, "
            "and only a review of your recording measures it.</p>"
            + table(["verdict", "what it means", "here", "wrong on the real tracker"], rows)
            .replace("<table>", "<table class='words'>", 1))


def rows_table(counts: dict) -> str:
    """Every row of the input, of one kind each; the table the tests read back."""
    kinds = [[words, f"{counts.get(key, 0):,}"] for key, words in ROW_KINDS.values()]
    judged = [[f"judged: {v}", f"{counts[v]:,}"] for v in VERDICTS]
    rows = kinds + [["judged", f"{counts['audited']:,}"]] + judged + [["all rows",
                                                                        f"{counts['rows']:,}"]]
    body = table(["rows", "count"], rows).replace("<table>", "<table class='rows'>", 1)
    return ("<h2>Every row of the input</h2><p>Each row is of one kind, the same in "
            "<code>audit.json</code>, on the terminal and in <code>audit.parquet</code>, where "
            "a row that is not judged has no verdict and its reason says which kind it is.</p>"
            + body)


def evaluate_sentence(counts: dict) -> str:
    """One sentence on how ``trackverify evaluate`` counts where the audit counts otherwise."""
    wrong, judged = AUDIT_WRONG
    without = counts.get("no_prediction", 0)
    return (f"<p>With reference tracks, <code>trackverify evaluate</code> counts otherwise: it "
            f"scores every reference observation, so the {without:,} rows without an id here "
            "count as not correct there, and it names each track by the id matched to it over "
            "the whole recording, where the audit judges only rows with an id, each against "
            "the neuron its track started on; on the real tracker evaluate says "
            f"{100 * (1 - EVALUATE_CORRECT):.1f} % not correct where {100 * wrong / judged:.1f} %"
            f" of the judged observations are wrong, see <code>{EVIDENCE}</code>.</p>")


def threshold_words(summary: dict) -> str:
    """The threshold in words: what it is, where it came from, and what a certified
    observation is worth under it."""
    t = summary["threshold"]
    values = list(t["per_recording_um"].items())
    shown = ", ".join(f"{fmt(v)} µm in {html.escape(str(k))}" for k, v in values[:5])
    more = f" and {len(values) - 5:,} more recordings, each in audit.json" if len(values) > 5 \
        else ""
    if t["source"] == "calibration":
        guarantee = t.get("guarantee") or {}
        words = guarantee.get("statement") or "no guarantee is stated in the file"
        rests = (f" It rests on this assumption: {html.escape(str(guarantee['assumption']))}"
                 if guarantee.get("assumption") else "")
        return (f"<p class='verdict supported'>The threshold comes from the calibration file "
                f"<code>{html.escape(str(t['file']))}</code>: {shown}{more}. "
                f"{html.escape(str(words))}{rests}</p>")
    uncalibrated = ("It is <b>not calibrated</b>: the audit states no error guarantee for the "
                    "certified observations, and the number to quote is the error rate of a "
                    "reviewed sample.")
    if t["source"] == "user":
        return (f"<p class='verdict falsified'>The threshold is {shown}{more} for every "
                "identity, as given with <code>--threshold-um</code>: an observation farther "
                "than that from where the registration puts its neuron is flagged. "
                f"{uncalibrated}</p>")
    return (f"<p class='verdict falsified'>The threshold is half the distance from each "
            "identity to its nearest other identity in the anchor frame, a median of "
            f"{shown}{more}. An observation farther than that from where the registration puts "
            "its neuron is nearer the neighbour's side than its own, so it is flagged. This is "
            f"a geometric rule. {uncalibrated}</p>")


def first_screen(result, rate_start: str, rate_end: str) -> str:
    """The answer box: the sentence, the error rate between its markers (the command that
    gives it until a review's estimate replaces it), and where to start."""
    counts = result.summary["counts"]
    return (f"<section class='answer' id='answer'>{answer_sentence(counts)}"
            f"{rate_start}{no_error_rate()}{rate_end}</section>"
            f"{start_here(result.events)}")

