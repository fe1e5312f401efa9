"""The public Python API: trackverify.audit / verify / evaluate_tracking / load_verifier."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import trackverify
from tests.conftest import input_in_folder, observation_table, verify_file


def test_public_names_resolve_to_their_functions():
    from trackverify.audit.core import audit
    from trackverify.metrics.tracking import evaluate_tracking
    from trackverify.benchmark.verification import verify
    from trackverify.verifiers import load_verifier

    assert trackverify.evaluate_tracking is evaluate_tracking
    assert trackverify.verify is verify
    assert trackverify.load_verifier is load_verifier
    # trackverify.audit names the function or, once imported, the (callable) subpackage.
    assert trackverify.audit is audit or trackverify.audit.audit is audit
    for name in trackverify.__all__:
        assert getattr(trackverify, name) is not None
    assert trackverify.load_verifier("registered_distance").evidence == "independent"


def test_verify_from_python_gives_the_command_line_numbers(tmp_path):
    table = observation_table(frames=12)
    done, cli_out = verify_file(table, tmp_path, "--start", 4, "--recovery-end", 8, out="cli")
    assert done.returncode == 0, done.stderr
    result = trackverify.verify(table, start=4, recovery_end=8)
    expected = json.loads((cli_out / "results.json").read_text())
    assert result.results == expected
    assert result.out is None
    assert len(result.rows) == result.metrics()["n_rows"]
    assert set(result.rows["condition"]) >= {"control"}
    assert "VerificationResult(verifier='fixed_distance'" in repr(result)


def test_verify_errors_name_the_dataframe_and_its_index_not_a_temporary_file():
    from trackverify.errors import InputError

    table = observation_table(frames=12)
    table.index = table.index + 100  # labels, not positions
    table.loc[103, "x_um"] = np.nan  # the fourth row
    with pytest.raises(InputError) as bad:
        trackverify.verify(table, start=4, recovery_end=8)
    assert str(bad.value) == ("the observations DataFrame, column 'x_um': index 103: "
                              "coordinate is NaN or infinite")
    with pytest.raises(InputError, match=r"^the observations DataFrame: recording .* too short"):
        trackverify.verify(observation_table(frames=12))  # start 300 > 12 frames


def test_verify_writes_to_out_when_asked(tmp_path):
    table = observation_table(frames=12)
    result = trackverify.verify(table, out=tmp_path / "o", start=4, recovery_end=8)
    assert result.out == tmp_path / "o"
    assert (tmp_path / "o" / "report.html").is_file()
    assert isinstance(result.rows, pd.DataFrame)


def test_verify_refuses_an_out_that_is_or_holds_an_input(tmp_path):
    # The command's --out policy applies to the library call: out may not be the observations
    # file (a regular file) nor contain it or the configuration file; nothing is written.
    import pytest

    from trackverify.errors import InputError

    path, before = input_in_folder(tmp_path, "obs.csv", observation_table(frames=12))
    data = path.parent
    config = tmp_path / "settings" / "run.toml"
    config.parent.mkdir()
    config.write_text("[run]\nstart = 4\nrecovery_end = 8\n")
    for out, relation in ((path, "is a regular file"), (data, "contains the input .*obs.csv"),
                          (config.parent, "contains the input .*run.toml")):
        with pytest.raises(InputError, match=relation):
            trackverify.verify(path, out=out, config_file=config)
    assert sorted(p.name for p in data.iterdir()) == ["obs.csv"] and path.read_bytes() == before
    assert sorted(p.name for p in config.parent.iterdir()) == ["run.toml"]
    # A folder beside the inputs is fine.
    assert trackverify.verify(path, out=tmp_path / "out", config_file=config).out == tmp_path / "out"


GRID = pd.DataFrame([(t, i, 8.0 * (i % 5) + 0.2 * t, 8.0 * (i // 5)) for t in range(6)
                     for i in range(25)], columns=["frame", "pred_id", "x_um", "y_um"])


@pytest.mark.parametrize("bad", ["5", True, None, 10**400, float("nan"), 0, -1.0, [5.0]])
def test_evaluate_tracking_refuses_a_zero_distance_that_is_not_a_positive_real(bad):
    reference = GRID.rename(columns={"pred_id": "track"})
    with pytest.raises(trackverify.ConfigError,
                       match=r"^zero_distance_um must be a positive number, got "):
        trackverify.evaluate_tracking(reference, GRID, zero_distance_um=bad)


@pytest.mark.parametrize("keyword, bad, message", [
    ("threshold_um", "5", "--threshold-um: the threshold must be a finite number >= 0, got '5'"),
    ("threshold_um", True, "--threshold-um: the threshold must be a finite number >= 0, got True"),
    ("threshold_um", 10**400, "--threshold-um: the threshold must be a finite number >= 0, got 1000"),
    ("threshold_um", -0.5, "--threshold-um: the threshold must be a finite number >= 0, got -0.5"),
    ("anchor_frame", "1", "--anchor-frame: anchor_frame must be an integer frame number, got '1'"),
    ("anchor_frame", 1.5, "--anchor-frame: anchor_frame must be an integer frame number, got 1.5"),
    ("anchor_frame", True, "--anchor-frame: anchor_frame must be an integer frame number, got True"),
])
def test_audit_refuses_keywords_that_are_not_numbers_of_their_kind(keyword, bad, message):
    with pytest.raises(trackverify.InputError) as info:
        trackverify.audit(GRID, **{keyword: bad})
    assert str(info.value).startswith(message)


def test_audit_and_evaluate_take_numpy_numbers():
    reference = GRID.rename(columns={"pred_id": "track"})
    assert trackverify.evaluate_tracking(reference, GRID, zero_distance_um=np.float32(5))[
        "pooled"]["idf1"] == 1.0  # predictions are the reference: every id right
    result = trackverify.audit(GRID, threshold_um=np.float32(3), anchor_frame=np.int64(0))
    assert result.summary["threshold"]["per_recording_um"] == {"recording": 3.0}
