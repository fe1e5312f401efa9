"""Format validation (EVALUATORS B2): each error and warning triggered alone by one variant."""

import copy
import pickle

import numpy as np
import pytest

from trackverify.conversion.format import (ERROR_CODES, WARNING_CODES, load_converted, load_valid,
                                           validate_format)
from trackverify.conversion.synthetic import (SyntheticSpec, make_dataset, malformed_variants,
                                              warning_variants)
from trackverify.errors import InputError

SPEC = SyntheticSpec(n_sessions=3, n_trials=4, n_neurons=6, n_bins=5)
VALID = make_dataset(SPEC)
VARIANTS = malformed_variants(VALID)
WARNINGS = warning_variants(VALID)


def test_valid_dataset_has_no_issue():
    report = validate_format(VALID)
    assert report.errors == [] and report.warnings == []


def test_one_variant_per_error_code():
    assert set(VARIANTS) == set(ERROR_CODES)
    assert set(WARNINGS) == set(WARNING_CODES)


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_each_error_triggered_exactly(code):
    report = validate_format(VARIANTS[code])
    assert report.error_codes() == {code}
    assert not report.ok
    assert report.warning_codes() == set()


@pytest.mark.parametrize("code", sorted(WARNING_CODES))
def test_each_warning_triggered_exactly(code):
    report = validate_format(WARNINGS[code])
    assert report.errors == []
    assert report.warning_codes() == {code}


def test_variants_do_not_modify_the_original():
    before = pickle.dumps(VALID)
    malformed_variants(VALID)
    warning_variants(VALID)
    assert pickle.dumps(VALID) == before


def test_binary_spike_data_is_valid():
    # The intended variability rule: 0/1 spike data vary; only a constant dataset fails.
    data = dict(VALID)
    data["neural"] = [[(x > 1).astype(np.float64) for x in session] for session in VALID["neural"]]
    assert validate_format(data).ok


def test_all_zero_dataset_fails_variability():
    data = dict(VALID)
    data["neural"] = [[np.zeros_like(x) for x in session] for session in VALID["neural"]]
    report = validate_format(data)
    assert report.error_codes() == {"no_variability"}
    assert report.warning_codes() == {"all_zero_trial"}


def test_per_trial_inputs_and_outputs_are_valid():
    data = dict(VALID)
    data["input"] = [[u[:, 0] for u in session] for session in VALID["input"]]
    data["output"] = [[y[:, 0] for y in session] for session in VALID["output"]]
    assert validate_format(data).ok


def test_messages_name_session_and_trial():
    report = validate_format(VARIANTS["time_mismatch"])
    assert "session 0, trial 0" in report.errors[0].message


def test_summary_is_counted_per_code():
    summary = validate_format(VARIANTS["non_finite"]).summary()
    assert summary["n_errors"] == 1
    assert summary["errors"]["non_finite"]["count"] == 1


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_load_refuses_arbitrary_objects(tmp_path):
    path = tmp_path / "converted_data.pkl"
    path.write_bytes(pickle.dumps({"neural": Evil()}))
    with pytest.raises(InputError, match="refused"):
        load_converted(path)


def test_load_round_trip(tmp_path):
    path = tmp_path / "converted_data.pkl"
    path.write_bytes(pickle.dumps(VALID))
    assert validate_format(load_converted(path)).ok


def test_summary_counts_every_issue_and_keeps_the_first_five_messages():
    """An empty dict misses all 11 required keys: 11 errors of one code, the first 5
    messages in key order. A dataset of zeros: 3 sessions x 4 trials all-zero warnings."""
    summary = validate_format({}).summary()
    assert summary["n_errors"] == 11 and summary["n_warnings"] == 0
    assert summary["errors"] == {"missing_key": {"count": 11, "messages": [
        f"required key '{key}' is missing"
        for key in ("neural", "input", "output", "subjects", "subject_idx")]}}
    assert summary["warnings"] == {}
    data = dict(VALID)
    data["neural"] = [[np.zeros_like(x) for x in session] for session in VALID["neural"]]
    summary = validate_format(data).summary()
    assert summary["n_warnings"] == 12
    assert summary["warnings"]["all_zero_trial"] == {"count": 12, "messages": [
        f"session 0, trial {t}: neural is all zeros" for t in range(4)]
        + ["session 1, trial 0: neural is all zeros"]}


def test_load_valid_returns_a_valid_dataset_and_names_the_first_error(tmp_path):
    path = tmp_path / "converted_data.pkl"
    path.write_bytes(pickle.dumps(VALID))
    assert pickle.dumps(load_valid(path)) == pickle.dumps(VALID)
    path.write_bytes(pickle.dumps({}))
    with pytest.raises(InputError) as info:
        load_valid(path, what="reference dataset")
    assert info.value.source == str(path)
    assert info.value.problem == ("not a valid reference dataset (11 format error(s); first "
                                  "missing_key: required key 'neural' is missing)")
    with pytest.raises(InputError) as info:
        load_valid(path)
    assert info.value.problem.startswith("not a valid converted dataset (11 format error(s)")


def test_every_session_and_trial_is_checked_after_a_bad_one():
    """One problem per place, each check going on to the next session, trial or variable:
    session 0's input is not a list; session 1's trial 0 neural is 1-D, trial 1's input 3-D
    and its output one bin too long (T = 6 for 5), trial 2's neural not an array, trial 3's
    neural holds a NaN; session 2 has 1 neural trial for 4 input and output trials."""
    data = copy.deepcopy(VALID)
    data["input"][0] = "not a list"
    data["neural"][1][0] = data["neural"][1][0][0]
    data["input"][1][1] = data["input"][1][1][None]
    data["output"][1][1] = np.zeros((2, 6), np.int64)
    data["neural"][1][2] = "x"
    data["neural"][1][3][0, 0] = np.nan
    data["neural"][2] = data["neural"][2][:1]
    report = validate_format(data)
    assert [(issue.code, issue.message) for issue in report.errors] == [
        ("session_not_list", "input[0] is a str, not a list"),
        ("neural_not_2d", "session 1, trial 0: neural has 1 dimensions, not 2"),
        ("io_bad_ndim", "session 1, trial 1: input has 3 dimensions, not 1 or 2"),
        ("time_mismatch", "session 1, trial 1: output has T = 6, neural has T = 5"),
        ("trial_not_array", "session 1, trial 2: neural is not a numeric ndarray"),
        ("non_finite", "session 1, trial 3: neural holds NaN or Inf"),
        ("trial_count_mismatch", "session 2: neural/input/output have 1/4/4 trials"),
        ("too_few_trials", "session 2 has 1 trial; at least 2 are needed")]
    assert report.warnings == []
    # no neural trial in session 2 (4 input and output trials): an empty session
    data = copy.deepcopy(VALID)
    data["neural"][2] = []
    report = validate_format(data)
    assert [issue.code for issue in report.errors] == ["trial_count_mismatch"]
    assert [(issue.code, issue.message) for issue in report.warnings] == [
        ("empty_session", "session 2 has 0 trials")]


@pytest.mark.parametrize("code, message", [
    ("not_dict", "the top level is a list, not a dict"),                  # list(items())
    ("not_list", "'subjects' is a tuple, not a list"),
    ("metadata_not_dict", "'metadata' is a str, not a dict"),
    ("name_not_text", "output_names[0] is not a string (int)"),
    ("output_code_too_large", "session 0, trial 0: output holds class code 65536 (codes are "
                              "0..65535)"),
    ("subject_idx_not_int",
     "subject_idx is not a 1-D integer ndarray (ndarray of float64, shape (3,))"),
    ("no_variability", "every neural value in the dataset equals 1"),     # ones everywhere
    ("no_trials", "the dataset holds no trial (0 session(s))"),
])
def test_error_messages_name_what_was_found(code, message):
    assert [issue.message for issue in validate_format(VARIANTS[code]).errors] == [message]


@pytest.mark.parametrize("value, found", [
    (None, "NoneType"), (-1, "int"), (np.int64(0), "int64"),
    (np.array([[0, 1, 0]]), "ndarray of int64, shape (1, 3)")])
def test_subject_idx_not_one_axis_of_integers_is_that_error_alone(value, found):
    # found by the fuzz sweep: None or a number raised TypeError (len() in the session count)
    # and a (1, 3) array was a session count mismatch
    assert [(issue.code, issue.message) for issue in
            validate_format({**VALID, "subject_idx": value}).errors] == [
        ("subject_idx_not_int", f"subject_idx is not a 1-D integer ndarray ({found})")]


def test_every_issue_of_every_variant_carries_a_message():
    for report in map(validate_format, [*VARIANTS.values(), *WARNINGS.values()]):
        for issue in report.errors + report.warnings:
            assert isinstance(issue.message, str) and issue.message, issue.code


def test_float_outputs_and_sessions_without_trials():
    """Whole-number outputs stored as floats are valid class codes; a NaN output is
    non-finite only (not also "not whole"); three sessions, none with a trial, hold no
    trial (one empty-session warning each)."""
    data = copy.deepcopy(VALID)
    data["output"] = [[y.astype(np.float64) for y in session] for session in VALID["output"]]
    assert validate_format(data).ok
    data["output"][0][1][0, 0] = np.nan
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("non_finite", "session 0, trial 1: output holds NaN or Inf")]
    data = copy.deepcopy(VALID)
    for key in ("neural", "input", "output"):
        data[key] = [[], [], []]
    report = validate_format(data)
    assert [(issue.code, issue.message) for issue in report.errors] == [
        ("no_trials", "the dataset holds no trial (3 session(s))")]
    assert [issue.code for issue in report.warnings] == ["empty_session"] * 3


# The whole text of each variant's issues, written from the rule each message states and
# the synthetic dataset's shape: 3 sessions of 4 trials, 6/7/8 neurons, T = 5 bins, 2 input
# and 2 output variables, 2 subjects (subject_idx [0, 1, 0]), 2 brain regions.
WHOLE_ERRORS = {
    "missing_key": ["required key 'brain_regions' is missing"],
    "session_count_mismatch": ["len(subject_idx) = 2 but len(neural) = 3"],
    "subject_idx_out_of_range": ["subject_idx spans [0, 2] but there are 2 subjects"],
    "session_not_list": ["input[0] is a tuple, not a list"],
    "region_idx_not_int": ["brain_region_idx[0] is not an integer ndarray"],
    "region_idx_length": ["brain_region_idx[0] has shape (5,), session 0 has 6 neurons"],
    "trial_count_mismatch": ["session 0: neural/input/output have 4/4/3 trials"],
    "trial_not_array": ["session 0, trial 0: neural is not a numeric ndarray"],
    "neural_not_2d": ["session 0, trial 0: neural has 3 dimensions, not 2"],
    "io_bad_ndim": ["session 0, trial 0: input has 3 dimensions, not 1 or 2"],
    "time_mismatch": ["session 0, trial 0: input has T = 4, neural has T = 5"],
    "neuron_count_varies": ["session 0, trial 1: 5 neurons, but the session's first trial "
                            "has 6"],
    "non_finite": ["session 0, trial 0: neural holds NaN or Inf"],
    "output_not_integer": ["session 0, trial 0: output holds values that are not whole "
                           "numbers"],
    "output_negative": ["session 0, trial 0: output holds negative class codes"],
    "d_in_inconsistent": ["session 1, trial 0: input has 3 variables, earlier trials have 2"],
    "d_out_inconsistent": ["session 1, trial 0: output has 3 variables, earlier trials have 2"],
    "input_names_length": ["len(input_names) = 3 but the trials have 2 variables"],
    "output_names_length": ["len(output_names) = 1 but the trials have 2 variables"],
    "output_values_length": ["len(output_values) = 1 but the trials have 2 variables"],
    "too_few_trials": ["session 0 has 1 trial; at least 2 are needed"],
}
WHOLE_WARNINGS = {
    "empty_session": ["session 0 has 0 trials"],
    "neural_not_float": ["session 0, trial 0: neural dtype is int64"],
    "input_not_float": ["session 0, trial 0: input dtype is int64"],
    "all_zero_trial": ["session 0, trial 0: neural is all zeros"],
    "metadata_missing_field": ["metadata has no 'off_end'"],
}


@pytest.mark.parametrize("code", sorted(WHOLE_ERRORS))
def test_each_error_message_in_full(code):
    assert [issue.message for issue in validate_format(VARIANTS[code]).errors] == \
        WHOLE_ERRORS[code]


@pytest.mark.parametrize("code", sorted(WHOLE_WARNINGS))
def test_each_warning_message_in_full(code):
    assert [issue.message for issue in validate_format(WARNINGS[code]).warnings] == \
        WHOLE_WARNINGS[code]


def test_range_messages_give_both_ends_of_a_hand_built_index():
    """brain_region_idx[1] = [-1, 0, 1, 1, 0, 0, 1] (7 neurons, 2 regions) spans [-1, 1];
    [0, 0, 0, 0, 0, 0, 2] spans [0, 2]; subject_idx [1, 0, 1] is in range, [-1, 0, 1] not."""
    data = copy.deepcopy(VALID)
    data["brain_region_idx"][1] = np.array([-1, 0, 1, 1, 0, 0, 1])
    data["brain_region_idx"][2] = np.array([0, 0, 0, 0, 0, 0, 0, 2])
    data["subject_idx"] = np.array([-1, 0, 1])
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("subject_idx_out_of_range", "subject_idx spans [-1, 1] but there are 2 subjects"),
        ("region_idx_out_of_range", "brain_region_idx[1] spans [-1, 1] but there are 2 "
                                    "brain regions"),
        ("region_idx_out_of_range", "brain_region_idx[2] spans [0, 2] but there are 2 "
                                    "brain regions")]
    data["subject_idx"] = np.array([1, 0, 1])
    data["brain_region_idx"][1] = np.array([1, 0, 1, 1, 0, 0, 1])
    data["brain_region_idx"][2] = np.array([1, 1, 1, 1, 1, 1, 1, 1])
    assert validate_format(data).ok



def test_float_variants_raise_no_dtype_warning_and_other_dtypes_do():
    """float32 and float16 trials are of a float dtype (no warning); int32, uint8 and bool
    neural trials, and int32 and bool input trials, are not."""
    data = copy.deepcopy(VALID)
    data["neural"][0][0] = data["neural"][0][0].astype(np.float32)
    data["neural"][0][1] = data["neural"][0][1].astype(np.float16)
    data["input"][0][0] = data["input"][0][0].astype(np.float32)
    data["input"][0][1] = data["input"][0][1].astype(np.float16)
    report = validate_format(data)
    assert report.errors == [] and report.warnings == []
    data["neural"][1][0] = data["neural"][1][0].astype(np.int32)
    data["neural"][1][1] = data["neural"][1][1].astype(np.uint8)
    data["neural"][1][2] = data["neural"][1][2] > 1
    data["input"][2][0] = data["input"][2][0].astype(np.int32)
    data["input"][2][1] = data["input"][2][1] > 0
    report = validate_format(data)
    assert report.errors == []
    assert [(issue.code, issue.message) for issue in report.warnings] == [
        ("neural_not_float", "session 1, trial 0: neural dtype is int32"),
        ("neural_not_float", "session 1, trial 1: neural dtype is uint8"),
        ("neural_not_float", "session 1, trial 2: neural dtype is bool"),
        ("input_not_float", "session 2, trial 0: input dtype is int32"),
        ("input_not_float", "session 2, trial 1: input dtype is bool")]


def test_integer_and_bool_arrays_are_checked_as_such():
    """A float64 subject_idx or brain_region_idx is not an integer array, an int32 one is;
    a string or object trial is not numeric; bool and int outputs are whole class codes;
    an int output's negative code and a float32 output's half code are found."""
    data = copy.deepcopy(VALID)
    data["subject_idx"] = VALID["subject_idx"].astype(np.int32)
    data["brain_region_idx"][0] = VALID["brain_region_idx"][0].astype(np.uint8)
    data["output"][0][0] = VALID["output"][0][0] > 0
    data["output"][0][1] = VALID["output"][0][1].astype(np.int8)
    assert validate_format(data).ok
    data["neural"][1][0] = np.full((7, 5), "a")
    data["input"][1][1] = np.empty((2, 5), dtype=object)
    data["output"][1][2] = np.array(["0", "1"])
    data["output"][2][0] = np.full((2, 5), -1, dtype=np.int8)
    data["output"][2][1] = np.full((2, 5), 0.5, dtype=np.float32)
    data["brain_region_idx"][2] = VALID["brain_region_idx"][2].astype(np.float32)
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("trial_not_array", "session 1, trial 0: neural is not a numeric ndarray"),
        ("trial_not_array", "session 1, trial 1: input is not a numeric ndarray"),
        ("trial_not_array", "session 1, trial 2: output is not a numeric ndarray"),
        ("output_negative", "session 2, trial 0: output holds negative class codes"),
        ("output_not_integer", "session 2, trial 1: output holds values that are not whole "
                               "numbers"),
        ("region_idx_not_int", "brain_region_idx[2] is not an integer ndarray")]


def test_a_trial_of_bad_ndim_gets_no_dtype_warning():
    """An int input of 3 dimensions (or 0) is reported for its dimensions only: the
    input-dtype warning is for 1-D and 2-D inputs; a 1-D int input is warned about."""
    data = copy.deepcopy(VALID)
    data["input"][0][0] = np.zeros((2, 5, 1), dtype=np.int64)
    data["input"][0][1] = np.array(3, dtype=np.int64)
    data["input"][0][2] = np.zeros(2, dtype=np.int64)
    report = validate_format(data)
    assert [(issue.code, issue.message) for issue in report.errors] == [
        ("io_bad_ndim", "session 0, trial 0: input has 3 dimensions, not 1 or 2"),
        ("io_bad_ndim", "session 0, trial 1: input has 0 dimensions, not 1 or 2")]
    assert [(issue.code, issue.message) for issue in report.warnings] == [
        ("input_not_float", "session 0, trial 2: input dtype is int64")]


@pytest.mark.parametrize("key", ["input", "output", "brain_region_idx"])
def test_a_shorter_per_session_list_checks_only_the_sessions_it_has(key):
    """With only 2 entries in one per-session list, sessions 0 and 1 are checked (a bad
    trial in session 1 is found) and session 2 is not (its bad trial is not reached); the
    count mismatch is the one other error."""
    data = copy.deepcopy(VALID)
    data[key] = data[key][:2]
    data["neural"][1][3] = data["neural"][1][3][None]
    data["neural"][2][0] = data["neural"][2][0][None]
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("session_count_mismatch", f"len({key}) = 2 but len(neural) = 3"),
        ("neural_not_2d", "session 1, trial 3: neural has 3 dimensions, not 2")]


def test_no_trial_is_reported_only_when_every_session_was_checked():
    """Two empty neural sessions but one input session: only the count mismatch (session
    1 is not checked, so the dataset is not called empty); with two input sessions the
    dataset holds no trial."""
    data = copy.deepcopy(VALID)
    data.update(neural=[[], []], input=[[]], output=[[], []],
                brain_region_idx=VALID["brain_region_idx"][:2],
                subject_idx=VALID["subject_idx"][:2])
    report = validate_format(data)
    assert [(issue.code, issue.message) for issue in report.errors] == [
        ("session_count_mismatch", "len(input) = 1 but len(neural) = 2")]
    data["input"] = [[], []]
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("no_trials", "the dataset holds no trial (2 session(s))")]


def test_names_in_the_messages_of_non_list_sessions_and_non_finite_inputs():
    """A subject_idx list is not an ndarray (its type named, no dtype); a neural or output
    session that is a tuple is named; a NaN or Inf in an input is reported as the input's,
    float32 and float16 trials included."""
    data = copy.deepcopy(VALID)
    data["subject_idx"] = [0, 1, 0]
    data["neural"][0] = tuple(data["neural"][0])
    data["output"][1] = tuple(data["output"][1])
    data["input"][2][0] = data["input"][2][0].copy()
    data["input"][2][0][1, 4] = np.inf
    data["input"][2][1] = data["input"][2][1].astype(np.float32)
    data["input"][2][1][0, 0] = np.nan
    data["neural"][2][2] = data["neural"][2][2].astype(np.float16)
    data["neural"][2][2][3, 1] = -np.inf
    data["output"][2][3] = data["output"][2][3].astype(np.float32)
    data["output"][2][3][1, 2] = np.nan
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("subject_idx_not_int", "subject_idx is not a 1-D integer ndarray (list)"),
        ("session_not_list", "neural[0] is a tuple, not a list"),
        ("session_not_list", "output[1] is a tuple, not a list"),
        ("non_finite", "session 2, trial 0: input holds NaN or Inf"),
        ("non_finite", "session 2, trial 1: input holds NaN or Inf"),
        ("non_finite", "session 2, trial 2: neural holds NaN or Inf"),
        ("non_finite", "session 2, trial 3: output holds NaN or Inf")]


def test_a_shorter_neural_list_checks_only_its_sessions():
    """neural has 2 sessions, the other per-session lists 3: 3 count mismatches and
    sessions 0 and 1 checked (session 1's bad trial found)."""
    data = copy.deepcopy(VALID)
    data["neural"] = data["neural"][:2]
    data["neural"][1][3] = data["neural"][1][3][None]
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("session_count_mismatch", f"len({key}) = 3 but len(neural) = 2")
        for key in ("input", "output", "subject_idx", "brain_region_idx")] + [
        ("neural_not_2d", "session 1, trial 3: neural has 3 dimensions, not 2")]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_variability_ignores_the_non_finite_values_of_a_trial(dtype):
    """Every neural value is 1 but trial (0, 0) = [NaN, 0, 0, ...]: its finite values (0)
    count, so the dataset varies (0 to 1) and only the NaN is an error; with the 0s
    replaced by 1s every finite value is 1."""
    data = copy.deepcopy(VALID)
    data["neural"] = [[np.ones_like(x, dtype=dtype) for x in session]
                      for session in VALID["neural"]]
    data["neural"][0][0] = np.zeros((6, 5), dtype=dtype)
    data["neural"][0][0][0, 0] = np.nan
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("non_finite", "session 0, trial 0: neural holds NaN or Inf")]
    data["neural"][0][0] = np.ones((6, 5), dtype=dtype)
    data["neural"][0][0][0, 0] = np.nan
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("non_finite", "session 0, trial 0: neural holds NaN or Inf"),
        ("no_variability", "every neural value in the dataset equals 1")]


def test_timedelta_arrays_are_neither_integer_nor_numeric():
    """numpy counts timedelta64 as an integer dtype, but its NaT is not a number: a
    timedelta subject_idx or brain_region_idx is not an integer array and a timedelta
    trial (with a NaT, which once made the check raise) is not a numeric array."""
    data = copy.deepcopy(VALID)
    data["subject_idx"] = VALID["subject_idx"].astype("m8[s]")
    data["brain_region_idx"][1] = VALID["brain_region_idx"][1].astype("m8[s]")
    for key in ("neural", "input", "output"):
        data[key][0][0] = data[key][0][0].astype("m8[s]")
        data[key][0][0].flat[0] = np.timedelta64("NaT")
    assert [(issue.code, issue.message) for issue in validate_format(data).errors] == [
        ("subject_idx_not_int", "subject_idx is not a 1-D integer ndarray (ndarray of "
                                "timedelta64[s], shape (3,))"),
        ("trial_not_array", "session 0, trial 0: neural is not a numeric ndarray"),
        ("trial_not_array", "session 0, trial 0: input is not a numeric ndarray"),
        ("trial_not_array", "session 0, trial 0: output is not a numeric ndarray"),
        ("region_idx_not_int", "brain_region_idx[1] is not an integer ndarray")]
    # a complex input is numeric (as before the dtype kinds), though not of a float dtype
    data = copy.deepcopy(VALID)
    data["input"][1][2] = VALID["input"][1][2].astype(np.complex128)
    report = validate_format(data)
    assert report.errors == []
    assert [(issue.code, issue.message) for issue in report.warnings] == [
        ("input_not_float", "session 1, trial 2: input dtype is complex128")]
