"""Synthetic converted datasets with known decodability, and malformed variants of them.

:func:`make_dataset` draws Poisson spike counts whose rates depend on two output variables:

* ``choice`` (per trial, 3 classes): each neuron has a random tuning to each choice;
* ``running`` (time-varying, 2 classes): a random bout of running in every trial; each
  neuron has a random tuning to running.

``signal`` scales the tuning (0 gives data with no information about the outputs). Inputs
are ``stimulus_contrast`` (trial-constant, repeated over time) and ``reward_delivered`` (a
binary event time series). :func:`shuffle_outputs` permutes the outputs across the trials
of each session, which keeps every summary statistic but destroys decodability.

:func:`malformed_variants` returns one variant per format error code
(``format.ERROR_CODES``), each breaking exactly that rule; :func:`warning_variants` does
the same for the warnings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.conversion.format import MAX_CLASS_CODE
from trackverify.io.atomic import write_bytes_atomic, write_text_atomic

INPUT_NAMES = ["stimulus_contrast", "reward_delivered"]
OUTPUT_NAMES = ["choice", "running"]
OUTPUT_VALUES = [["left", "right", "no_go"], ["still", "running"]]


@dataclass(frozen=True)
class SyntheticSpec:
    """Sizes of a synthetic dataset. ``n_neurons`` of session s is ``n_neurons + s % 3``."""

    n_sessions: int = 4
    n_trials: int = 30
    n_neurons: int = 30
    n_bins: int = 20
    n_subjects: int = 2
    signal: float = 2.0
    seed: int = 0


def make_dataset(spec: SyntheticSpec = SyntheticSpec()) -> dict[str, Any]:
    """A valid converted dataset (EVALUATORS "Target structure") drawn from ``spec``."""
    rng = np.random.default_rng(spec.seed)
    neural, inputs, outputs, region_idx = [], [], [], []
    T = spec.n_bins
    time = np.arange(T)
    for s in range(spec.n_sessions):
        n = spec.n_neurons + s % 3
        base = rng.uniform(0.5, 2.0, size=n)
        tune_choice = rng.normal(0.0, 1.0, size=(n, 3))
        tune_run = rng.normal(0.0, 1.0, size=n)
        choice = rng.integers(0, 3, size=spec.n_trials)
        start = rng.integers(0, T // 2, size=spec.n_trials)
        length = rng.integers(T // 4, T // 2 + 1, size=spec.n_trials)
        running = ((time[None, :] >= start[:, None])
                   & (time[None, :] < (start + length)[:, None])).astype(np.int64)  # (trials, T)
        log_rate = (np.log(base)[None, :, None]
                    + spec.signal * 0.6 * tune_choice[:, choice].T[:, :, None]
                    + spec.signal * 0.6 * tune_run[None, :, None] * running[:, None, :])
        counts = rng.poisson(np.exp(log_rate)).astype(np.float64)  # (trials, n, T)
        contrast = rng.choice([0.0, 0.25, 0.5, 1.0], size=spec.n_trials)
        reward = np.zeros((spec.n_trials, T))
        reward[np.arange(spec.n_trials), rng.integers(T // 2, T, size=spec.n_trials)] = 1.0
        neural.append([counts[t] for t in range(spec.n_trials)])
        inputs.append([np.stack([np.full(T, contrast[t]), reward[t]]) for t in range(spec.n_trials)])
        outputs.append([np.stack([np.full(T, choice[t], dtype=np.int64), running[t]])
                        for t in range(spec.n_trials)])
        region_idx.append(rng.integers(0, 2, size=n).astype(np.int64))
    return {
        "neural": neural,
        "input": inputs,
        "output": outputs,
        "subjects": [f"mouse{i + 1}" for i in range(spec.n_subjects)],
        "subject_idx": (np.arange(spec.n_sessions) % spec.n_subjects).astype(np.int64),
        "brain_regions": ["V1", "CA1"],
        "brain_region_idx": region_idx,
        "input_names": list(INPUT_NAMES),
        "output_names": list(OUTPUT_NAMES),
        "output_values": [list(v) for v in OUTPUT_VALUES],
        "metadata": {"task_description": "synthetic go/no-go task with running",
                     "time_bin_size": 50.0, "temporal_alignment_event": "stimulus_onset",
                     "off_start": -0.5, "off_end": 0.5},
    }


def copy_dataset(data: dict[str, Any]) -> dict[str, Any]:
    """A copy whose dict, session lists and trial lists are new (arrays are shared)."""
    out = dict(data)
    for key in ("neural", "input", "output"):
        out[key] = [list(session) for session in data[key]]
    for key in ("brain_region_idx", "subjects", "brain_regions", "input_names", "output_names",
                "output_values"):
        out[key] = list(data[key])
    out["metadata"] = dict(data["metadata"])
    return out


def shuffle_outputs(data: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    """Permute the output trials within each session (same statistics, no decodability)."""
    rng = np.random.default_rng(seed)
    out = copy_dataset(data)
    out["output"] = [[session[i] for i in rng.permutation(len(session))]
                     for session in data["output"]]
    return out


def _set_trial(key: str, s: int, t: int, value: Callable[[np.ndarray], Any]
               ) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        d[key][s][t] = value(d[key][s][t])
    return edit


def _set(key: str, value: Callable[[Any], Any]) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        d[key] = value(d[key])
    return edit


def _set_item(key: str, s: int, value: Callable[[Any], Any]) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        d[key][s] = value(d[key][s])
    return edit


def _poke(array: np.ndarray, value: float, dtype=None) -> np.ndarray:
    out = array.astype(dtype or array.dtype, copy=True)
    out.flat[0] = value
    return out


def _one_trial_session(d: dict) -> None:
    for key in ("neural", "input", "output"):
        d[key][0] = d[key][0][:1]


def _extra_row(array: np.ndarray) -> np.ndarray:
    return np.concatenate([array, array[:1]], axis=0)


_ERROR_EDITS: dict[str, Callable[[dict], None]] = {
    "missing_key": lambda d: d.pop("brain_regions"),
    "not_list": _set("subjects", tuple),
    "name_not_text": _set("output_names", lambda v: [1] + v[1:]),
    "session_count_mismatch": _set("subject_idx", lambda v: v[:-1]),
    "subject_idx_not_int": _set("subject_idx", lambda v: v.astype(np.float64)),
    "subject_idx_out_of_range": lambda d: d.update(
        subject_idx=_poke(d["subject_idx"], len(d["subjects"]))),
    "session_not_list": _set_item("input", 0, tuple),
    "region_idx_not_int": _set_item("brain_region_idx", 0, lambda v: v.astype(np.float64)),
    "region_idx_out_of_range": lambda d: d["brain_region_idx"].__setitem__(
        0, _poke(d["brain_region_idx"][0], len(d["brain_regions"]))),
    "region_idx_length": _set_item("brain_region_idx", 0, lambda v: v[:-1]),
    "trial_count_mismatch": _set_item("output", 0, lambda v: v[:-1]),
    "trial_not_array": _set_trial("neural", 0, 0, lambda v: v.tolist()),
    "neural_not_2d": _set_trial("neural", 0, 0, lambda v: v[None]),
    "io_bad_ndim": _set_trial("input", 0, 0, lambda v: v[None]),
    "time_mismatch": _set_trial("input", 0, 0, lambda v: v[:, :-1]),
    "neuron_count_varies": _set_trial("neural", 0, 1, lambda v: v[:-1]),
    "non_finite": _set_trial("neural", 0, 0, lambda v: _poke(v, np.nan, np.float64)),
    "output_not_integer": _set_trial("output", 0, 0, lambda v: v + 0.5),
    "output_negative": _set_trial("output", 0, 0, lambda v: _poke(v, -1)),
    "output_code_too_large": _set_trial("output", 0, 0, lambda v: _poke(v, MAX_CLASS_CODE)),
    "d_in_inconsistent": _set_trial("input", 1, 0, _extra_row),
    "d_out_inconsistent": _set_trial("output", 1, 0, _extra_row),
    "input_names_length": _set("input_names", lambda v: v + ["extra"]),
    "output_names_length": _set("output_names", lambda v: v[:-1]),
    "output_values_length": _set("output_values", lambda v: v[:-1]),
    "no_variability": lambda d: d.update(neural=[[np.ones_like(x) for x in session]
                                                 for session in d["neural"]]),
    "metadata_not_dict": _set("metadata", str),
    "too_few_trials": _one_trial_session,
    "no_trials": lambda d: d.update(neural=[], input=[], output=[], brain_region_idx=[],
                                    subject_idx=np.zeros(0, dtype=np.int64)),
}

_WARNING_EDITS: dict[str, Callable[[dict], None]] = {
    "empty_session": lambda d: [d[key].__setitem__(0, []) for key in ("neural", "input", "output")],
    "neural_not_float": _set_trial("neural", 0, 0, lambda v: v.astype(np.int64)),
    "input_not_float": _set_trial("input", 0, 0, lambda v: v.astype(np.int64)),
    "all_zero_trial": _set_trial("neural", 0, 0, np.zeros_like),
    "metadata_missing_field": lambda d: d["metadata"].pop("off_end"),
}


def malformed_variants(data: dict[str, Any]) -> dict[str, Any]:
    """One variant of ``data`` per format error code, each breaking only that rule.

    ``data`` must be valid, with at least 2 sessions of at least 3 trials, and is not
    modified.
    """
    variants: dict[str, Any] = {"not_dict": list(data.items())}
    for code, edit in _ERROR_EDITS.items():
        variant = copy_dataset(data)
        edit(variant)
        variants[code] = variant
    return variants


def warning_variants(data: dict[str, Any]) -> dict[str, Any]:
    """One variant of ``data`` per format warning code, each raising only that warning."""
    variants = {}
    for code, edit in _WARNING_EDITS.items():
        variant = copy_dataset(data)
        edit(variant)
        variants[code] = variant
    return variants


REQUIRED_TEXT = {
    "convert_data.py": "# conversion script of the synthetic dataset\n",
    "CONVERSION_NOTES.md": "# Conversion notes\n\nSynthetic dataset; nothing to convert.\n",
    "README.md": "# Synthetic converted dataset\n",
}


def write_submission(folder: str | os.PathLike, data: Any, sample_sessions: int = 2) -> Path:
    """Write a complete submission folder: the 5 required files for ``data``.

    ``sample_data.pkl`` holds the first ``sample_sessions`` sessions.
    """
    import pickle

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in REQUIRED_TEXT.items():
        write_text_atomic(folder / name, text)
    write_bytes_atomic(folder / "converted_data.pkl", pickle.dumps(data, protocol=4))
    sample = data
    if isinstance(data, dict) and all(isinstance(data.get(k), list) for k in
                                      ("neural", "input", "output", "brain_region_idx")):
        sample = dict(data)
        for key in ("neural", "input", "output", "brain_region_idx"):
            sample[key] = data[key][:sample_sessions]
        if isinstance(data.get("subject_idx"), np.ndarray):
            sample["subject_idx"] = data["subject_idx"][:sample_sessions]
    write_bytes_atomic(folder / "sample_data.pkl", pickle.dumps(sample, protocol=4))
    return folder
