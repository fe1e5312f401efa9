"""The human check of an audit and the error rate it gives (docs/guide/error-rate.md,
docs/guide/review.md).

:mod:`design` draws the stratified sample (``trackverify audit sample``: ``review.csv``,
``sample.json``); :mod:`estimate` reads the decisions and gives the stratified estimate with
its intervals (``trackverify audit estimate``), :mod:`simulation` its coverage by simulation;
the local review page: :mod:`sheet` reads, checks and updates ``review.csv``, :mod:`items`
gathers what the page draws for each sampled observation, :mod:`server` serves the page
(:mod:`page`) on 127.0.0.1 behind a token (the command: :mod:`trackverify.cli.review`).
"""
