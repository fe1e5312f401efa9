"""Input text in a report's figures is shown as text, never parsed as TeX.

A recording name is the user's text; matplotlib would read ``$...$`` in a title as
mathtext, and a name such as ``r$\\frac{$`` stopped the report with a parse error (the
audit and evaluate outputs then lacked report.html). Expected: exit 0 and the name, its
markup escaped, in the report as written.
"""

from __future__ import annotations

import html

import pytest

from tests.corpus.make_corpus import clean_observations
from trackverify.cli.app import main

NAME = "r$\\frac{$_^<b>&"


def _main(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code


@pytest.fixture
def observations():
    return clean_observations(frames=30).assign(recording=NAME)


def test_audit_report_with_tex_in_the_recording_name(tmp_path, observations):
    tracks = tmp_path / "tracks.parquet"
    observations.drop(columns=["track"]).to_parquet(tracks, index=False)
    assert _main(["audit", str(tracks), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert f"{html.escape(NAME, quote=False)}: identity timeline" in report
    assert "<b>&" not in report


def test_evaluate_report_with_tex_in_the_recording_name(tmp_path, observations):
    ref, pred = tmp_path / "ref.parquet", tmp_path / "pred.parquet"
    observations.drop(columns=["pred_id", "pred_valid"]).to_parquet(ref, index=False)
    observations.drop(columns=["track"]).to_parquet(pred, index=False)
    out = tmp_path / "out"
    assert _main(["evaluate", "--reference", str(ref), "--predictions", str(pred),
                  "--out", str(out)]) == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert f"{html.escape(NAME, quote=False)}: per-track timeline" in report
    assert "<b>&" not in report


def test_a_recording_named_in_a_script_the_font_lacks_warns_nothing(tmp_path):
    """The figures' font (DejaVu Sans) has no CJK glyphs; the SVG holds the text as text, so
    matplotlib's 'Glyph ... missing from font' warning (one per character, on stderr) is noise."""
    import warnings

    name = "記録1"
    tracks = tmp_path / "tracks.parquet"
    clean_observations(frames=30).assign(recording=name).drop(columns=["track"]).to_parquet(
        tracks, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _main(["audit", str(tracks), "--out", str(tmp_path / "out")]) == 0
    assert [str(w.message) for w in caught if "Glyph" in str(w.message)] == []
    assert f"{name}: identity timeline" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
