"""The human check of an audit and the error rate it gives (docs/guide/error-rate.md,
docs/guide/review.md).

:mod:`design` draws the stratified sample (``trackverify audit sample``: ``review.csv``,
``sample.json``); :mod:`estimate` reads the decisions and gives the stratified estimate with
its intervals (``trackverify audit estimate``), :mod:`simulation` its coverage by simulation;
the local review page: :mod:`sheet` reads, checks and updates ``review.csv``, :mod:`items`
gathers what the page draws for each sampled observation, :mod:`app` is the page's web
application (a WSGI route table: the page of :mod:`page`, the items, the decisions) and
:mod:`server` serves it with waitress on 127.0.0.1 within :class:`app.Limits`; :mod:`folder`
makes the server the folder's only one and keeps its token and port for a restart (the
command: :mod:`trackverify.cli.review`).
"""
