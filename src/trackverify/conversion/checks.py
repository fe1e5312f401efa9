"""The verifier of a converted dataset: every check of EVALUATORS B1-B7 in one report.

:func:`run_checks` returns ``{checks: {name: {passed, required, summary, details}}, passed,
warnings, mode}``. ``passed`` of a check is True/False, or None when it could not be
decided (skipped after a fatal format error, or unavailable without an optional extra);
the verdict ``passed`` is True only when every required check passed, False when one
failed, and None when none failed but one could not be decided.

Supervised mode (a reference conversion is given) runs required_files (B1), format (B2),
summary_statistics (B3), input_matching and output_matching (B4), output_classes (B5) and
decoder (B6). Unsupervised mode (B7) runs required_files, format and the raw decoder, and
records per-variable class counts and input ranges (``variables``), none of which has a
threshold.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.conversion import summary as sm
from trackverify.conversion.decoder import DecoderConfig, DecoderResult, run_decoder
from trackverify.conversion.embeddings import EmbeddingsUnavailable
from trackverify.conversion.format import load_converted, load_valid, validate_format
from trackverify.conversion.matching import match_variables
from trackverify.errors import InputError
from trackverify.report.numbers import fmt as fmt_number

REQUIRED_FILES = ("convert_data.py", "sample_data.pkl", "converted_data.pkl",
                  "CONVERSION_NOTES.md", "README.md")
EXPECTED_LOGS = ("conversion_sample_out.txt", "verification_sample_out.txt",
                 "train_decoder_sample_out.txt", "conversion_full_out.txt",
                 "verification_full_out.txt", "train_decoder_full_out.txt")
DECODER_FRACTION = 0.95
DATA_FILE = "converted_data.pkl"


def find_file(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it exists, else the first match in a subfolder (sorted paths,
    ``__pycache__`` skipped), else None."""
    top = folder / name
    if top.is_file():
        return top
    for path in sorted(folder.rglob(name)):
        if path.is_file() and "__pycache__" not in path.relative_to(folder).parts:
            return path
    return None


def _file_state(folder: Path, name: str) -> dict[str, Any]:
    path = find_file(folder, name)
    size = path.stat().st_size if path is not None else None
    return {"path": str(path.relative_to(folder)) if path else None, "present": path is not None,
            "non_empty": bool(size)}


def _check(passed: bool | None, summary: str, details: dict[str, Any] | None = None,
           required: bool = True) -> dict[str, Any]:
    return {"passed": passed, "required": required, "summary": summary, "details": details or {}}


def check_required_files(folder: Path) -> dict[str, Any]:
    """B1: the 5 required files exist (top level or a subfolder) and are non-empty; the 6
    expected logs are recorded only."""
    files = {name: _file_state(folder, name) for name in REQUIRED_FILES}
    logs = {name: _file_state(folder, name) for name in EXPECTED_LOGS}
    bad = [name for name, state in files.items() if not state["non_empty"]]
    summary = "all 5 present and non-empty" if not bad else "missing or empty: " + ", ".join(bad)
    return _check(not bad, summary, {"files": files, "expected_logs": logs})


def _load_and_validate(path: Path | None) -> tuple[Any, dict[str, Any]]:
    if path is None:
        return None, {"present": False}
    try:
        data = load_converted(path)
    except InputError as exc:
        return None, {"present": True, "loadable": False, "error": exc.problem}
    report = validate_format(data)
    return (data if report.ok else None), {"present": True, "loadable": True, **report.summary()}


def check_format(folder: Path) -> tuple[dict[str, Any], Any, list[str]]:
    """B2 on converted_data.pkl and (when present) sample_data.pkl.

    Returns the check, the loaded full dataset (None unless valid) and warning lines."""
    details, warnings, data = {}, [], None
    ok = True
    for name in (DATA_FILE, "sample_data.pkl"):
        loaded, info = _load_and_validate(find_file(folder, name))
        details[name] = info
        if name == DATA_FILE:
            data = loaded
            ok &= loaded is not None
        elif info["present"]:
            ok &= info["loadable"] and info["n_errors"] == 0
        for code, entry in info.get("warnings", {}).items():
            warnings.append(f"{name}: {entry['count']} x {code} (e.g. {entry['messages'][0]})")
    full = details[DATA_FILE]
    if not full["present"]:
        summary = f"{DATA_FILE} missing"
    elif not full["loadable"]:
        summary = f"{DATA_FILE} not loadable: {full['error']}"
    elif ok:
        summary = "valid"
    else:
        n_err = sum(d.get("n_errors", 0) for d in details.values())
        parts = [f"{n_err} error(s): " + ", ".join(
            sorted({c for d in details.values() for c in d.get("errors", {})}))] if n_err else []
        sample = details["sample_data.pkl"]
        if sample["present"] and not sample["loadable"]:
            parts.append(f"sample_data.pkl not loadable: {sample['error']}")
        summary = "; ".join(parts)
    return _check(bool(ok), summary, details), data, warnings


def load_reference(path: str | os.PathLike) -> dict[str, Any]:
    """A reference conversion: a converted-data pickle, or a folder holding one. It must
    pass format validation (InputError otherwise)."""
    path = Path(path)
    if path.is_dir():
        found = find_file(path, DATA_FILE)
        if found is None:
            raise InputError(f"no {DATA_FILE} in the reference folder", source=str(path))
        path = found
    return load_valid(path, "reference conversion")


def _variables(data: dict[str, Any]) -> dict[str, Any]:
    in_ranges = sm.variable_ranges(data["input"])
    out_ranges = sm.variable_ranges(data["output"])
    return {"input_ranges": dict(zip(data["input_names"], in_ranges)),
            "output_ranges": dict(zip(data["output_names"], out_ranges)),
            "output_class_counts": dict(zip(data["output_names"], sm.class_counts(out_ranges))),
            "output_class_fractions": dict(zip(data["output_names"],
                                               sm.class_fractions(data["output"])))}


def _matching(agent: dict, ref: dict, embed) -> tuple[dict, dict, dict | None]:
    """B4 checks for inputs and outputs and the output pairing (ref index -> agent index)."""
    checks = {}
    pairing = None
    for kind, key in (("input", "input"), ("output", "output")):
        names = f"{kind}_names"
        kwargs = {}
        if kind == "output":
            kwargs = {"ref_fractions": sm.class_fractions(ref[key]),
                      "agent_fractions": sm.class_fractions(agent[key])}
        try:
            result = match_variables(ref[names], agent[names], sm.variable_ranges(ref[key]),
                                     sm.variable_ranges(agent[key]), kind=kind, embed=embed,
                                     **kwargs)
        except EmbeddingsUnavailable as exc:
            checks[f"{kind}_matching"] = _check(None, f"unavailable: {exc}",
                                                {"available": False, "reason": str(exc)})
            continue
        mapping = result.pop("pairing")
        if kind == "output" and len(mapping) == len(ref[names]) == len(agent[names]):
            pairing = mapping
        cost = result["mean_cost"]
        summary = (f"mean cost {fmt_number(cost)} (< 1.0)" if cost is not None
                   else result.get("reason", "no variables"))
        if kind == "output" and not all(p["ranges_equal"] for p in result["pairs"]):
            summary += "; output ranges differ"
        checks[f"{kind}_matching"] = _check(result.pop("passed"), summary, result)
    return checks["input_matching"], checks["output_matching"], pairing


def _pairing_missing(check: dict, what: str) -> dict:
    if check["passed"] is None:
        return _check(None, f"unavailable: needs the output matching ({what})")
    return _check(False, f"no one-to-one output pairing ({what})")


def _output_classes(agent: dict, ref: dict, pairing: dict | None, matching: dict) -> dict:
    if pairing is None:
        return _pairing_missing(matching, "B4")
    a_counts = sm.class_counts(sm.variable_ranges(agent["output"]))
    r_counts = sm.class_counts(sm.variable_ranges(ref["output"]))
    rows = [{"reference": ref["output_names"][i], "agent": agent["output_names"][j],
             "reference_classes": r_counts[i], "agent_classes": a_counts[j],
             "passed": r_counts[i] == a_counts[j]} for i, j in sorted(pairing.items())]
    bad = [r["agent"] for r in rows if not r["passed"]]
    return _check(not bad, "equal for every output" if not bad else "differ: " + ", ".join(bad),
                  {"outputs": rows})


def _decoder_comparison(agent: DecoderResult, ref: DecoderResult, pairing: dict | None,
                        matching: dict) -> dict:
    if pairing is None:
        out = _pairing_missing(matching, "B4")
        out["details"] = {"agent": agent.to_dict(), "reference": ref.to_dict()}
        return out
    rows = []
    for i, j in sorted(pairing.items()):
        a, r = agent.balanced_accuracy[j], ref.balanced_accuracy[i]
        ratio = a / r if (a is not None and r) else None
        passed = a is not None and r is not None and a >= DECODER_FRACTION * r
        rows.append({"reference": ref.output_names[i], "agent": agent.output_names[j],
                     "agent_ba": a, "reference_ba": r, "ratio": ratio,
                     "band": sm.ratio_band(ratio), "passed": passed})
    bad = [r["agent"] for r in rows if not r["passed"]]
    text = ", ".join(f"{r['agent']} {fmt_number(r['agent_ba'])}/{fmt_number(r['reference_ba'])}"
                     if r["agent_ba"] is not None and r["reference_ba"] is not None
                     else f"{r['agent']} undefined" for r in rows)
    return _check(not bad, f"BA agent/reference: {text}",
                  {"outputs": rows, "threshold": DECODER_FRACTION, "agent": agent.to_dict(),
                   "reference": ref.to_dict()})


def run_checks(submission: str | os.PathLike, reference: str | os.PathLike | None = None,
               config: DecoderConfig = DecoderConfig(),
               embed: Callable[[list[str]], np.ndarray] | None = None) -> dict[str, Any]:
    """Verify a submission folder, against a reference conversion when one is given."""
    folder = Path(submission)
    if not folder.is_dir():
        raise InputError("not a folder" if folder.exists() else "folder not found",
                         source=str(folder))
    ref = load_reference(reference) if reference is not None else None
    checks: dict[str, dict] = {"required_files": check_required_files(folder)}
    fmt, agent, warnings = check_format(folder)
    checks["format"] = fmt
    missing_logs = [n for n, s in checks["required_files"]["details"]["expected_logs"].items()
                    if not s["non_empty"]]
    if missing_logs:
        warnings.append("expected logs missing or empty: " + ", ".join(missing_logs))
    later = (["summary_statistics", "input_matching", "output_matching", "output_classes",
              "decoder"] if ref is not None else ["variables", "decoder"])
    if agent is None:
        for name in later:
            checks[name] = _check(None, "skipped: converted_data.pkl failed format validation",
                                  required=ref is not None)
    elif ref is None:
        checks["variables"] = _check(None, "recorded (no threshold)", _variables(agent),
                                     required=False)
        result = run_decoder(agent, config)
        text = ", ".join(f"{n} {fmt_number(cn, undefined='undefined')}"
                         for n, cn in zip(result.output_names, result.chance_normalised))
        checks["decoder"] = _check(None, f"chance-normalised BA (no threshold): {text}",
                                   result.to_dict(),
                                   required=False)
    else:
        checks["summary_statistics"] = _statistics_check(agent, ref)
        checks["input_matching"], checks["output_matching"], pairing = _matching(agent, ref, embed)
        checks["output_classes"] = _output_classes(agent, ref, pairing, checks["output_matching"])
        checks["decoder"] = _decoder_comparison(run_decoder(agent, config),
                                                run_decoder(ref, config), pairing,
                                                checks["output_matching"])
    for name, check in checks.items():
        if check["required"] and check["passed"] is None and not check["summary"].startswith(
                "skipped"):
            warnings.append(f"{name}: {check['summary']}")
    return {"checks": checks, "passed": verdict(checks), "warnings": warnings,
            "mode": "supervised" if ref is not None else "unsupervised"}


def verdict(checks: dict[str, dict]) -> bool | None:
    """The report's verdict from its checks, counting only the required ones: False when
    one failed, else None when one could not be decided (``passed`` None), else True
    (also when no check is required)."""
    required = [c["passed"] for c in checks.values() if c["required"]]
    return False if False in required else (None if None in required else True)


def _statistics_check(agent: dict, ref: dict) -> dict:
    result = sm.compare_statistics(sm.summary_statistics(agent), sm.summary_statistics(ref))
    bad = [name for name, row in result["statistics"].items() if not row["passed"]]
    return _check(result["passed"], "all within tolerance" if not bad
                  else "out of tolerance: " + ", ".join(bad), result["statistics"])
