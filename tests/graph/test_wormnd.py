"""WormND's protocol on hand-computed cases."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest

from trackverify.metrics.graph import wormnd
from trackverify.metrics.graph.matching import match_points
from trackverify.metrics.graph.wormnd import evaluate_wormnd, match_hungarian_then_cut


def two_tracks(z_scale_units: float = 0.0):
    """Reference A at x = 0 and B at x = 3.2; predictions P at 2.8 and Q at 6.3; two frames."""
    ref = pd.DataFrame({"recording": "w", "frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
                        "x_um": [0.0, 3.2, 0.0, 3.2], "y_um": 0.0, "z_um": 0.0})
    pred = pd.DataFrame({"recording": "w", "frame": [0, 0, 1, 1], "pred_id": [1, 2, 1, 2],
                         "x_um": [2.8, 6.3, 2.8, 6.3], "y_um": 0.0,
                         "z_um": z_scale_units})
    return ref, pred


def test_hungarian_on_all_pairs_then_the_cut():
    """Total distance A-P + B-Q = 2.8 + 3.1 < A-Q + B-P = 6.3 + 0.4: the assignment takes
    A-P and B-Q; at 3 um B-Q (3.1) is cut. The threshold-aware matching would take B-P."""
    ref, pred = two_tracks()
    xyz_g = ref[["x_um", "y_um", "z_um"]].to_numpy()
    xyz_p = pred[["x_um", "y_um", "z_um"]].to_numpy()
    mg, mp = match_hungarian_then_cut(ref["frame"], xyz_g, pred["frame"], xyz_p, 3.0)
    assert mg.tolist() == [0, 2] and mp.tolist() == [0, 2]  # A-P in both frames
    mg6, mp6 = match_hungarian_then_cut(ref["frame"], xyz_g, pred["frame"], xyz_p, 6.0)
    assert mg6.tolist() == [0, 1, 2, 3] and mp6.tolist() == [0, 1, 2, 3]
    mg_tr, mp_tr = match_points(ref["frame"], xyz_g, pred["frame"], xyz_p, 3.0)
    assert mp_tr.tolist() == [0, 2] and mg_tr.tolist() == [1, 3]  # B-P instead


def test_scores_by_hand():
    """At 3 um: B's 2 nodes FN, Q's 2 nodes FP, B's edge missing: AOGM = 20 + 2 + 1.5 =
    23.5 of AOGM_0 = 40 + 3; DET = 1 - 22 / 40. At 6 um everything matches."""
    ref, pred = two_tracks()
    out = evaluate_wormnd(ref, pred)
    assert out["w"]["tra_3um"] == pytest.approx(1 - 23.5 / 43, abs=1e-12)
    assert out["w"]["det_3um"] == pytest.approx(0.45, abs=1e-12)
    assert out["w"]["tra_6um"] == 1 and out["w"]["det_6um"] == 1
    assert out["mean"] == {k: out["w"][k] for k in ("tra_3um", "det_3um", "tra_6um",
                                                    "det_6um")}


def test_anisotropic_scaling():
    """Q one z unit off; with 2.5 um per z unit it is sqrt(3.1^2 + 2.5^2) = 3.98 um from B:
    still within 6 um, and A-P / B-Q remain the cheapest assignment."""
    ref, pred = two_tracks(z_scale_units=1.0)
    out = evaluate_wormnd(ref, pred, scale=(1.0, 1.0, 2.5))
    # P is also 2.5 um off in z now: A-P = sqrt(2.8^2 + 2.5^2) = 3.75 > 3: nothing at 3 um.
    assert out["w"]["det_3um"] == 0 and out["w"]["det_6um"] == 1
    flat = evaluate_wormnd(ref, pred)  # 1 um per z unit: A-P = 2.97, kept at 3 um
    assert flat["w"]["det_3um"] == pytest.approx(0.45, abs=1e-12)


def test_mean_over_recordings_and_doctest():
    ref, pred = two_tracks()
    ref2 = ref.assign(recording="v", x_um=ref["x_um"] + 100)
    pred2 = pred.assign(recording="v", x_um=pred["x_um"] + 100 - 2.8)  # P on A, Q 0.3 off B
    out = evaluate_wormnd(pd.concat([ref, ref2]), pd.concat([pred, pred2]))
    assert out["v"]["det_3um"] == 1
    assert out["mean"]["det_3um"] == pytest.approx((0.45 + 1) / 2, abs=1e-12)
    assert doctest.testmod(wormnd).failed == 0
    assert np.isfinite(out["mean"]["tra_3um"])


def test_evaluate_protocol_wormnd(tmp_path, capsys):
    import json

    from trackverify.cli.app import main

    ref, pred = two_tracks()
    ref.to_csv(tmp_path / "ref.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "--reference", str(tmp_path / "ref.csv"), "--predictions",
              str(tmp_path / "pred.csv"), "--protocol", "wormnd", "--out", str(tmp_path / "o")])
    printed = capsys.readouterr().out
    assert info.value.code == 0, printed
    assert "WormND" in printed
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["wormnd"]["w"]["det_3um"] == pytest.approx(0.45, abs=1e-12)
    assert data["settings"]["protocols"] == ["wormnd"]


def test_public_api():
    import trackverify

    assert trackverify.evaluate_wormnd is evaluate_wormnd
    from trackverify.metrics.graph.ctc import evaluate_ctc
    assert trackverify.evaluate_ctc is evaluate_ctc


def test_the_docs_example_runs():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "metrics.md").read_text()
    code = text.split("## WormND")[1].split("```python\n")[1].split("```")[0]
    scope: dict = {}
    exec(compile(code, "docs/reference/metrics.md", "exec"), scope)  # noqa: S102 - the docs' own code
    assert scope["scores"]["det_3um"] == pytest.approx(0.45, abs=1e-12)
    assert scope["scores"]["det_6um"] == 1
