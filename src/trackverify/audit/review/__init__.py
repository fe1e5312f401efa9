"""An audit's error rate from a small human review (docs/guide/error-rate.md).

``design.py`` draws the stratified sample (``trackverify audit sample``) and writes
``review.csv`` / ``sample.json``; ``estimate.py`` reads the decisions and gives the stratified
estimate with its intervals (``trackverify audit estimate``).
"""
