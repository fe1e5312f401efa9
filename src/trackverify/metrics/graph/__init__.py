"""Track graphs and graph tracking metrics (Cell Tracking Challenge, divisions, CHOTA).

- :mod:`trackverify.metrics.graph.tracks`: the :class:`TrackGraph` over a table with a per-track
  ``parent_track`` column (the convention the format readers emit);
- :mod:`trackverify.metrics.graph.matching`: point matching in um (one-to-one, Hungarian, within a
  threshold) and the CTC mask-overlap rule;
- :mod:`trackverify.metrics.graph.metrics`: AOGM / DET / TRA / LNK, division metrics, CHOTA;
- :mod:`trackverify.metrics.graph.evaluate`: the families above per recording and pooled, as
  ``trackverify evaluate`` reports them.
"""
