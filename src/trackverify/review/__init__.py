"""``trackverify review AUDIT_DIR``: a local page where a person checks the observations
sampled from an audit (review.csv), one at a time; each decision is saved before the page
moves on (docs/guide/review.md).

:mod:`sheet` reads, checks and updates review.csv; :mod:`items` gathers what the page draws
for each sampled observation from the audit's outputs; :mod:`app` is the web application (a
WSGI route table: the page of :mod:`page`, the items, the decisions) and :mod:`server`
serves it with waitress on 127.0.0.1 within :class:`app.Limits`; :mod:`folder` makes the
server the folder's only one and keeps its token and port for a restart; :mod:`cli` is the
command.
"""
