"""``trackverify review AUDIT_DIR``: a local page where a person checks the observations
sampled from an audit (review.csv), one at a time; each decision is saved at once
(docs/guide/review.md).

:mod:`sheet` reads, checks and updates review.csv; :mod:`items` gathers what the page draws
for each sampled observation from the audit's outputs; :mod:`server` serves the page
(:mod:`page`) on 127.0.0.1 behind a one-time token; :mod:`cli` is the command.
"""
