"""Format validation of a converted neural dataset (``converted_data.pkl``; EVALUATORS B2).

The structure is a dict of 11 keys: ``neural``, ``input`` and ``output`` are lists over
sessions of lists over trials of arrays (``neural`` (n_neurons, T); ``input`` (d_in, T) or
(d_in,); ``output`` (d_out, T) or (d_out,) of integer class codes), plus subjects, brain
regions, variable names, class-value names and a ``metadata`` dict.

:func:`validate_format` never raises on a malformed structure: it returns every problem it
finds as an :class:`Issue` with a stable ``code``, so a caller (and a test) can tell
exactly which rule was broken. Errors are fatal; warnings are reported only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.errors import InputError
from trackverify.io.safe_pickle import load_restricted

REQUIRED_KEYS = ("neural", "input", "output", "subjects", "subject_idx", "brain_regions",
                 "brain_region_idx", "input_names", "output_names", "output_values", "metadata")
METADATA_FIELDS = ("task_description", "time_bin_size", "temporal_alignment_event",
                   "off_start", "off_end")
#: Class codes run 0..C-1 and the decoder keeps one weight row per code up to the largest,
#: so a code at or above this is refused (a code of 1e8 would ask for gigabytes).
MAX_CLASS_CODE = 2 ** 16
#: The lists of names (EVALUATORS B2: ``list[str]``).
NAME_KEYS = ("subjects", "brain_regions", "input_names", "output_names")
PER_SESSION_KEYS = ("input", "output", "subject_idx", "brain_region_idx")

# Every error code, grouped by the EVALUATORS B2 rule it implements.
ERROR_CODES = {
    "not_dict": "1: the top level is not a dict",
    "missing_key": "1: one of the 11 required keys is missing",
    "not_list": "1: neural, input, output, brain_region_idx, subjects, brain_regions or a "
                "names list is not a list",
    "name_not_text": "1: an entry of subjects, brain_regions, input_names or output_names is "
                     "not a string",
    "session_count_mismatch": "2: input, output, subject_idx or brain_region_idx differs in "
                              "length from neural",
    "subject_idx_not_int": "3: subject_idx is not a 1-D integer array",
    "subject_idx_out_of_range": "3: a subject_idx value lies outside [0, n_subjects)",
    "session_not_list": "4: a session of neural, input or output is not a list",
    "region_idx_not_int": "4: brain_region_idx[s] is not an integer ndarray",
    "region_idx_out_of_range": "4: a brain_region_idx value lies outside [0, n_regions)",
    "region_idx_length": "4: len(brain_region_idx[s]) differs from the session's neuron count",
    "trial_count_mismatch": "4: neural, input and output of a session differ in trial count",
    "trial_not_array": "5: a trial entry is not a numpy ndarray",
    "neural_not_2d": "5: a neural trial is not 2-D",
    "io_bad_ndim": "5: an input or output trial is neither 1-D nor 2-D",
    "time_mismatch": "5: a 2-D input or output trial has a T different from the neural T",
    "neuron_count_varies": "5: the neuron count varies within a session",
    "non_finite": "5: a trial holds NaN or Inf",
    "output_not_integer": "5: an output trial holds values that are not whole numbers",
    "output_negative": "5: an output trial holds negative class codes (codes are 0..C-1)",
    "output_code_too_large": "5: an output trial holds a class code >= MAX_CLASS_CODE (the "
                             "decoder keeps one weight row per code 0..max)",
    "d_in_inconsistent": "6: d_in differs between trials",
    "d_out_inconsistent": "6: d_out differs between trials",
    "input_names_length": "6: len(input_names) != d_in",
    "output_names_length": "6: len(output_names) != d_out",
    "output_values_length": "6: len(output_values) != d_out",
    "no_variability": "7: every neural value in the dataset is the same (all 0 or all 1)",
    "metadata_not_dict": "OQ-B2.1: metadata is not a dict",
    "too_few_trials": "OQ-B2.2: a session has exactly 1 trial (a train/test split needs 2)",
    "no_trials": "the dataset holds no trial at all (no session, or only empty sessions)",
}
WARNING_CODES = {
    "empty_session": "a session has 0 trials",
    "neural_not_float": "a neural trial is not of a float dtype",
    "input_not_float": "an input trial is not of a float dtype",
    "all_zero_trial": "a neural trial is all zeros",
    "metadata_missing_field": "one of the 5 named metadata fields is missing",
}
MAX_MESSAGES_PER_CODE = 5


@dataclass(frozen=True)
class Issue:
    """One problem: a stable ``code`` (see ERROR_CODES / WARNING_CODES) and a message."""

    code: str
    message: str


@dataclass
class FormatReport:
    errors: list[Issue]
    warnings: list[Issue]

    @property
    def ok(self) -> bool:
        return not self.errors

    def error_codes(self) -> set[str]:
        return {issue.code for issue in self.errors}

    def warning_codes(self) -> set[str]:
        return {issue.code for issue in self.warnings}

    def summary(self) -> dict[str, Any]:
        """JSON-ready: counts per code and the first few messages of each code."""
        return {"errors": _summarise(self.errors), "warnings": _summarise(self.warnings),
                "n_errors": len(self.errors), "n_warnings": len(self.warnings)}


def _summarise(issues: list[Issue]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for issue in issues:
        entry = out.setdefault(issue.code, {"count": 0, "messages": []})
        entry["count"] += 1
        if len(entry["messages"]) < MAX_MESSAGES_PER_CODE:
            entry["messages"].append(issue.message)
    return out


def load_converted(path: str | os.PathLike) -> Any:
    """Load a converted-dataset pickle through the restricted unpickler (InputError if not)."""
    return load_restricted(Path(path))


def load_valid(path: str | os.PathLike, what: str = "converted dataset") -> dict[str, Any]:
    """Load a converted-dataset pickle that must be valid: InputError naming the first
    format error (and the count) otherwise."""
    data = load_converted(path)
    report = validate_format(data)
    if not report.ok:
        first = report.errors[0]
        raise InputError(f"not a valid {what} ({len(report.errors)} format error(s); first "
                         f"{first.code}: {first.message})", source=str(path))
    return data


# dtype kinds: signed and unsigned integers; those, bool, floats and complex. A timedelta64
# (which numpy counts as an integer) is neither: its NaT is not a number.
INT_KINDS = ("i", "u")
NUMERIC_KINDS = ("b", "i", "u", "f", "c")


def _is_int_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in INT_KINDS


def _is_numeric_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in NUMERIC_KINDS


class _Collector:
    def __init__(self) -> None:
        self.errors: list[Issue] = []
        self.warnings: list[Issue] = []

    def error(self, code: str, message: str) -> None:
        assert code in ERROR_CODES, code
        self.errors.append(Issue(code, message))

    def warn(self, code: str, message: str) -> None:
        assert code in WARNING_CODES, code
        self.warnings.append(Issue(code, message))


def validate_format(data: Any) -> FormatReport:
    """Check ``data`` against the converted-dataset structure (EVALUATORS B2).

    Returns every error and warning found (see ``ERROR_CODES`` and ``WARNING_CODES``).
    The variability rule (7) is the intended one: an error when every neural value in the
    whole dataset is the same number (all 0 or all 1), i.e. the data carry no signal.
    Binary spike data (a mix of 0 and 1) is valid.
    """
    c = _Collector()
    if not isinstance(data, dict):
        c.error("not_dict", f"the top level is a {type(data).__name__}, not a dict")
        return FormatReport(c.errors, c.warnings)
    missing = [key for key in REQUIRED_KEYS if key not in data]
    for key in missing:
        c.error("missing_key", f"required key '{key}' is missing")
    if missing:
        return FormatReport(c.errors, c.warnings)

    for key in ("neural", "input", "output", "brain_region_idx", "subjects", "brain_regions",
                "input_names", "output_names", "output_values"):
        if not isinstance(data[key], list):
            c.error("not_list", f"'{key}' is a {type(data[key]).__name__}, not a list")
    for key in NAME_KEYS:
        if isinstance(data[key], list):
            bad = next((i for i, name in enumerate(data[key]) if not isinstance(name, str)), None)
            if bad is not None:
                c.error("name_not_text", f"{key}[{bad}] is not a string "
                        f"({type(data[key][bad]).__name__})")
    if not isinstance(data["metadata"], dict):
        c.error("metadata_not_dict",
                f"'metadata' is a {type(data['metadata']).__name__}, not a dict")
    else:
        for field in METADATA_FIELDS:
            if field not in data["metadata"]:
                c.warn("metadata_missing_field", f"metadata has no '{field}'")
    if c.errors:
        return FormatReport(c.errors, c.warnings)

    neural, inputs, outputs = data["neural"], data["input"], data["output"]
    n_sessions = len(neural)
    subject_idx = data["subject_idx"]
    # subject_idx is the one per-session entry not checked to be a list: a length only when
    # it is a 1-D integer array (anything else is subject_idx_not_int below)
    subject_idx_ok = _is_int_array(subject_idx) and subject_idx.ndim == 1
    for key in PER_SESSION_KEYS:
        if (key != "subject_idx" or subject_idx_ok) and len(data[key]) != n_sessions:
            c.error("session_count_mismatch",
                    f"len({key}) = {len(data[key])} but len(neural) = {n_sessions}")

    n_subjects = len(data["subjects"])
    if not subject_idx_ok:
        c.error("subject_idx_not_int", "subject_idx is not a 1-D integer ndarray "
                f"({type(subject_idx).__name__}"
                + (f" of {subject_idx.dtype}, shape {subject_idx.shape}"
                   if isinstance(subject_idx, np.ndarray) else "") + ")")
    elif subject_idx.size and (subject_idx.min() < 0 or subject_idx.max() >= n_subjects):
        c.error("subject_idx_out_of_range",
                f"subject_idx spans [{subject_idx.min()}, {subject_idx.max()}] but there are "
                f"{n_subjects} subjects")

    n_regions = len(data["brain_regions"])
    d_in_seen: set[int] = set()
    d_out_seen: set[int] = set()
    dataset_min, dataset_max = np.inf, -np.inf
    n_sessions_checked = min(n_sessions, len(inputs), len(outputs), len(data["brain_region_idx"]))
    for s in range(n_sessions_checked):
        sessions = (neural[s], inputs[s], outputs[s])
        bad = [(name, value) for name, value in zip(("neural", "input", "output"), sessions)
               if not isinstance(value, list)]
        for name, value in bad:
            c.error("session_not_list", f"{name}[{s}] is a {type(value).__name__}, not a list")
        if bad:
            continue
        counts = [len(v) for v in sessions]
        if len(set(counts)) > 1:
            c.error("trial_count_mismatch", f"session {s}: neural/input/output have "
                    f"{counts[0]}/{counts[1]}/{counts[2]} trials")
        if counts[0] == 0:
            c.warn("empty_session", f"session {s} has 0 trials")
        elif counts[0] == 1:
            c.error("too_few_trials", f"session {s} has 1 trial; at least 2 are needed")

        n_neurons_session: int | None = None
        for t in range(min(counts)):
            x, u, y = neural[s][t], inputs[s][t], outputs[s][t]
            where = f"session {s}, trial {t}"
            not_arrays = [name for name, v in zip(("neural", "input", "output"), (x, u, y))
                          if not _is_numeric_array(v)]
            for name in not_arrays:
                c.error("trial_not_array", f"{where}: {name} is not a numeric ndarray")
            if not_arrays:
                continue
            if x.ndim != 2:
                c.error("neural_not_2d", f"{where}: neural has {x.ndim} dimensions, not 2")
                continue
            n_t, T = x.shape
            if n_neurons_session is None:
                n_neurons_session = n_t
            elif n_t != n_neurons_session:
                c.error("neuron_count_varies", f"{where}: {n_t} neurons, but the session's first "
                        f"trial has {n_neurons_session}")
            if not np.issubdtype(x.dtype, np.floating):
                c.warn("neural_not_float", f"{where}: neural dtype is {x.dtype}")
            for name, v, seen, code in (("input", u, d_in_seen, "d_in_inconsistent"),
                                        ("output", y, d_out_seen, "d_out_inconsistent")):
                if v.ndim not in (1, 2):
                    c.error("io_bad_ndim", f"{where}: {name} has {v.ndim} dimensions, not 1 or 2")
                    continue
                if v.ndim == 2 and v.shape[1] != T:
                    c.error("time_mismatch", f"{where}: {name} has T = {v.shape[1]}, neural has "
                            f"T = {T}")
                if seen and v.shape[0] not in seen:
                    c.error(code, f"{where}: {name} has {v.shape[0]} variables, earlier trials "
                            f"have {sorted(seen)[0]}")
                seen.add(v.shape[0])
            if u.ndim in (1, 2) and not np.issubdtype(u.dtype, np.floating):
                c.warn("input_not_float", f"{where}: input dtype is {u.dtype}")
            for name, v in (("neural", x), ("input", u), ("output", y)):
                if np.issubdtype(v.dtype, np.inexact) and not np.isfinite(v).all():
                    c.error("non_finite", f"{where}: {name} holds NaN or Inf")
            if x.size:
                finite = x[np.isfinite(x)] if np.issubdtype(x.dtype, np.inexact) else x
                if finite.size:
                    dataset_min = min(dataset_min, float(finite.min()))
                    dataset_max = max(dataset_max, float(finite.max()))
                if not np.any(x):
                    c.warn("all_zero_trial", f"{where}: neural is all zeros")
            if y.size and np.issubdtype(y.dtype, np.inexact) and np.isfinite(y).all() \
                    and not np.allclose(y, np.round(y)):
                c.error("output_not_integer", f"{where}: output holds values that are not whole "
                        "numbers")
            elif y.size and np.isfinite(y).all() and y.min() < 0:
                c.error("output_negative", f"{where}: output holds negative class codes")
            elif y.size and np.isfinite(y).all() and y.max() >= MAX_CLASS_CODE:
                c.error("output_code_too_large", f"{where}: output holds class code {y.max():g} "
                        f"(codes are 0..{MAX_CLASS_CODE - 1})")

        region_idx = data["brain_region_idx"][s]
        if not _is_int_array(region_idx):
            c.error("region_idx_not_int", f"brain_region_idx[{s}] is not an integer ndarray")
        else:
            if region_idx.size and (region_idx.min() < 0 or region_idx.max() >= n_regions):
                c.error("region_idx_out_of_range", f"brain_region_idx[{s}] spans "
                        f"[{region_idx.min()}, {region_idx.max()}] but there are {n_regions} "
                        "brain regions")
            if n_neurons_session is not None and region_idx.shape != (n_neurons_session,):
                c.error("region_idx_length", f"brain_region_idx[{s}] has shape "
                        f"{region_idx.shape}, session {s} has {n_neurons_session} neurons")

    for key, seen, code in (("input_names", d_in_seen, "input_names_length"),
                            ("output_names", d_out_seen, "output_names_length"),
                            ("output_values", d_out_seen, "output_values_length")):
        if len(seen) == 1 and len(data[key]) != next(iter(seen)):
            c.error(code, f"len({key}) = {len(data[key])} but the trials have "
                    f"{next(iter(seen))} variables")
    if n_sessions_checked == n_sessions and not any(
            isinstance(v, list) and v for v in neural):
        c.error("no_trials", f"the dataset holds no trial ({n_sessions} session(s))")
    elif dataset_min == dataset_max:
        c.error("no_variability", f"every neural value in the dataset equals {dataset_min:g}")
    return FormatReport(c.errors, c.warnings)
