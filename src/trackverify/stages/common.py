"""What every stage evaluator shares: experiment discovery, the result record, structural
checks of the trajectory (trx) format, global-frame layout and trajectory alignment.

The generic scoring pieces (tolerance ratios, capping, pass rules, verdicts) live in
:mod:`trackverify.scoring`; Hungarian assignment in :mod:`trackverify.assignment`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trackverify.assignment import assign
from trackverify.errors import ConfigError, InputError
from trackverify.io.safe_pickle import load_restricted
from trackverify.scoring import capped_mean, verdict
from trackverify.values import is_real

EXPERIMENT_GLOB = "exp_*"
TRX_PER_TARGET = ("x", "y", "theta", "a", "b")
TRX_MM = ("x_mm", "y_mm", "theta_mm", "a_mm", "b_mm")
TRX_SCALARS = ("firstframe", "endframe", "nframes")
#: Bounds checked before anything is laid out by frame: 10^8 frames is 19 days at 60 fps
#: (the stage benchmark has 30,000), 10^4 trajectories per experiment, and 10^7 cells of
#: one (trajectories x frames) layout (80 MB of float64; the benchmark needs 3 x 10^5).
MAX_FRAMES = 10 ** 8
MAX_TARGETS = 10 ** 4
MAX_LAYOUT_CELLS = 10 ** 7


@dataclass
class StageResult:
    """One evaluation: written as ``stage.json`` (``problems`` lists structural failures)."""

    stage: str
    score: float | None
    verdict: str
    criteria: dict[str, Any]
    per_experiment: dict[str, Any]
    config: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def natural_key(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def check_confined(folder: Path, role: str = "submission") -> None:
    """Refuse a file or folder under ``folder`` that is a link leading outside it.

    Every path a stage reads is built as ``folder / exp / name``; a link would let it read
    (and score) a file that is not part of the submission.
    """
    root = Path(folder).resolve()
    for parent, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = Path(parent) / name
            if path.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError) as exc:  # a loop of links
                    raise InputError(f"a link that cannot be followed ({exc})",
                                     source=str(path)) from None
                if target != root and root not in target.parents:
                    raise InputError(f"a link that leads outside the {role} folder (to "
                                     f"{target}); every file must be inside it",
                                     source=str(path))


def confined(folder: Path, *parts: str, what: str, error: type = ConfigError) -> Path:
    """``folder / parts`` when, resolved (links followed), it stays inside ``folder``; else
    ``error`` naming ``what``. A setting or a label naming a file (``predictions_file``,
    a walking label's ``sampleDirs``) may not read one outside the folder it belongs to."""
    root = Path(folder).resolve()
    path = Path(folder).joinpath(*parts)
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise error(f"{what}: {path} cannot be resolved ({exc})") from None
    if target != root and root in target.parents:
        return path
    raise error(f"{what} names {'/'.join(parts)!r}, which leads outside the folder {folder} "
                f"(to {target}); it must name a file inside it")


def list_setting(config: Any, name: str, low: float, high: float) -> list[str]:
    """The items of the comma-separated numeric setting ``name`` (as written, blanks between
    commas skipped): at least one, each a finite number within ``[low, high]``; else a
    ConfigError. An empty list would leave the check nothing to compare (``alphas=,``
    made every line "correct")."""
    raw = str(getattr(config, name))
    items = [item.strip() for item in raw.split(",") if item.strip()]
    if not items:
        raise ConfigError(f"setting '{name}' = {raw!r} lists no value; expected one or more "
                          "comma-separated numbers")
    for item in items:
        try:
            value = float(item)
        except ValueError:
            value = None
        if value is None or not is_real(value, low, high):
            raise ConfigError(f"setting '{name}': {item!r} is not a number within "
                              f"[{low:g}, {high:g}]")
    return items


def check_complete(sub: dict[str, Any], against: dict[str, Any], source: str,
                   against_source: str, min_share: float) -> None:
    """Refuse a trajectory submission that cannot be the whole experiment.

    Every trajectory must end by the last frame of ``against`` (the trajectories it is
    scored against), and the submission must hold at least ``min_share`` of their
    fly-frames (sum of ``nframes``; the stages' ``min_fly_frames_share`` setting). Raises :class:`InputError` (exit 2): such a
    submission is refused, not scored.
    """
    if not 0.0 <= min_share <= 1.0:
        raise ConfigError(f"min_fly_frames_share must be in [0, 1], not {min_share!r}")
    last = int(against["endframe"].max()) if against["ntargets"] else -1
    late = np.flatnonzero(sub["endframe"] > last)
    if late.size:
        raise InputError(f"target {late[0]} ends at frame {sub['endframe'][late[0]]}, after the "
                         f"last frame {last} of {against_source}", source=source)
    _check_layout(sub["ntargets"], last + 1, source)  # laid out over the frames of ``against``
    have, need = int(sub["nframes"].sum()), int(against["nframes"].sum())
    if need and have < min_share * need:
        raise InputError(f"incomplete submission: {have} of {need} fly-frames of "
                         f"{against_source} ({have / need:.0%}; {sub['ntargets']} trajectories "
                         f"for {against['ntargets']}); at least {min_share:.0%} are needed "
                         "(min_fly_frames_share), "
                         "so it is refused, not scored", source=source)


def experiments(folder: Path, role: str) -> list[str]:
    """Names of the ``exp_*`` sub-folders of ``folder`` (natural order); none is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{role} folder not found", source=str(folder))
    names = sorted((p.name for p in folder.glob(EXPERIMENT_GLOB) if p.is_dir()), key=natural_key)
    if not names:
        raise InputError(f"no {EXPERIMENT_GLOB} experiment folders in the {role} folder",
                         source=str(folder))
    return names


def apply_overrides(config: Any, overrides: dict[str, Any] | None) -> Any:
    """A copy of the frozen stage ``config`` with ``overrides`` (strings are converted)."""
    if not overrides:
        return config
    fields = {f.name: f for f in dataclasses.fields(config)}
    values = {}
    for key, raw in overrides.items():
        if key not in fields:
            raise ConfigError(f"--set {key}: unknown setting '{key}' for this stage; known: "
                              f"{sorted(fields)}")
        current = getattr(config, key)
        try:
            if isinstance(raw, str):
                if isinstance(current, bool):
                    if raw.lower() not in ("true", "false", "1", "0"):
                        raise ValueError(raw)
                    raw = raw.lower() in ("true", "1")
                elif isinstance(current, (int, float)) or current is None:
                    raw = float(raw) if current is None or isinstance(current, float) \
                        else int(raw)
                    if raw != raw:  # NaN: every comparison with it is false (no check left)
                        raise ValueError("not a number")
            values[key] = raw
        except ValueError as exc:
            raise ConfigError(f"--set {key}: cannot use {raw!r} ({exc})") from exc
        _check_int64(key, values[key])
    return dataclasses.replace(config, **values)


def _check_int64(key: str, value: Any) -> None:
    """An integer setting within int64 (a stage's arrays hold it), else a ConfigError."""
    from trackverify.values import INT64_MAX, INT64_MIN, is_integer

    if is_integer(value) and not is_integer(value, INT64_MIN, INT64_MAX):
        raise ConfigError(f"--set {key}: cannot use {value!r} (not a 64-bit integer)")


def config_record(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)


# ---------------------------------------------------------------- trajectory (trx) format


def as_array(value: Any, source: str, what: str) -> np.ndarray:
    """``np.asarray(value)`` of an unpickled object; an InputError naming ``what`` when numpy
    cannot make one array of it (ragged lists, a list that holds itself, over 64 axes)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError, RecursionError) as exc:
        raise InputError(f"{what} is not an array ({type(exc).__name__}: {exc})",
                         source=source) from exc


def _as_1d(value: Any, source: str, what: str) -> np.ndarray:
    arr = as_array(value, source, what)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise InputError(f"{what} must be a numeric array", source=source)
    if arr.ndim != 1 and arr.size == max(arr.shape, default=1):
        arr = arr.reshape(-1)  # (n, 1) and 0-d arrays count as 1-D
    return arr


def check_trx(trx: Any, source: str, *, fields: tuple[str, ...] = TRX_PER_TARGET,
              allow_nan: bool = True, need_dt: bool = True) -> dict[str, Any]:
    """Check the trx layout (EVALUATORS.md A1 / A2) and return a normalised view.

    Keys, ``ntargets``, per-target list lengths, ``len(field[i]) = nframes[i]``,
    ``len(dt[i]) = nframes[i] - 1``, ``endframe - firstframe + 1 = nframes`` and (unless
    ``allow_nan``) the absence of NaNs. Raises :class:`InputError` naming the key and
    target on the first violation. The returned dict holds float64 copies (inputs untouched).
    """
    if not isinstance(trx, dict):
        raise InputError(f"expected a dict, found {type(trx).__name__}", source=source)
    needed = (*fields, *TRX_SCALARS, "ntargets") + (("dt",) if need_dt else ())
    missing = [k for k in needed if k not in trx]
    if missing:
        raise InputError(f"missing key(s) {missing}", source=source)
    try:
        raw = np.asarray(trx["ntargets"]).reshape(-1)[0]
        count = float(raw)
    except (TypeError, ValueError, IndexError) as exc:
        raise InputError("ntargets is not an integer", source=source) from exc
    if not (np.isfinite(count) and count == round(count) and 0 <= count <= MAX_TARGETS):
        raise InputError(f"ntargets must be an integer in 0..{MAX_TARGETS}, found {raw!r}",
                         source=source)
    ntargets = int(count)
    out: dict[str, Any] = {"ntargets": ntargets}
    for key in TRX_SCALARS:
        arr = _as_1d(trx[key], source, key)
        if arr.shape != (ntargets,):
            raise InputError(f"{key} has shape {arr.shape}, expected ({ntargets},)", source=source)
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise InputError(f"{key} must hold integers", source=source)
        bad = (arr < 0) | (arr >= MAX_FRAMES) if key != "nframes" else np.zeros(0, bool)
        if bad.any():
            target = int(np.flatnonzero(bad)[0])
            raise InputError(f"{key} must be >= 0 (0-based frame indices) and frames are at most "
                             f"{MAX_FRAMES - 1}; target {target} has {arr[target]:.0f}",
                             source=source)
        out[key] = arr.astype(np.int64)
    _check_layout(ntargets, int(out["endframe"].max()) + 1 if ntargets else 0, source)
    bad = np.flatnonzero(out["endframe"] - out["firstframe"] + 1 != out["nframes"])
    if bad.size:
        raise InputError(f"endframe - firstframe + 1 != nframes for target {bad[0]}",
                         source=source)
    lengths = {k: out["nframes"] for k in fields}
    if need_dt:
        lengths["dt"] = out["nframes"] - 1
    if "pxpermm" in fields:
        lengths["pxpermm"] = np.ones(ntargets, dtype=np.int64)
    for key, expected in lengths.items():
        value = trx[key]
        if not isinstance(value, (list, tuple)) or len(value) != ntargets:
            got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
            raise InputError(f"'{key}' must be a list of ntargets={ntargets} arrays, found {got}",
                             source=source)
        arrays = []
        for i, item in enumerate(value):
            arr = _as_1d(item, source, f"{key}[{i}]")
            if arr.ndim != 1 or arr.size != expected[i]:
                raise InputError(f"len({key}[{i}]) = {arr.size}, expected {expected[i]}",
                                 source=source)
            arr = arr.astype(np.float64)
            if not allow_nan and np.isnan(arr).any():
                raise InputError(f"{key}[{i}] contains NaN (frame index "
                                 f"{int(np.flatnonzero(np.isnan(arr))[0])})", source=source)
            arrays.append(arr)
        out[key] = arrays
    return out


def _check_layout(ntargets: int, frames: int, source: str) -> None:
    """Refuse a (trajectories x frames) layout larger than ``MAX_LAYOUT_CELLS``."""
    if ntargets * frames > MAX_LAYOUT_CELLS:
        raise InputError(f"{ntargets} trajectories over frames 0..{frames - 1} would need "
                         f"{ntargets * frames:.3g} cells by frame, more than the "
                         f"{MAX_LAYOUT_CELLS:.0e} trackverify lays out", source=source)


def load_trx(path: Path, **kwargs) -> dict[str, Any]:
    """Load (restricted unpickler) and check a trx pickle."""
    return check_trx(load_restricted(path), str(path), **kwargs)


def dense(trx: dict[str, Any], key: str, nframes_total: int) -> np.ndarray:
    """``(ntargets, nframes_total)`` array of ``key`` by global frame, NaN where absent."""
    out = np.full((trx["ntargets"], nframes_total), np.nan)
    if trx["ntargets"] == 0:
        return out
    ff, n = trx["firstframe"], trx["nframes"]
    rows = np.repeat(np.arange(trx["ntargets"]), n)
    starts = np.cumsum(n) - n
    cols = np.arange(n.sum()) - np.repeat(starts, n) + np.repeat(ff, n)
    keep = (cols >= 0) & (cols < nframes_total)
    values = np.concatenate(trx[key]) if n.sum() else np.zeros(0)
    out[rows[keep], cols[keep]] = values[keep]
    return out


def total_frames(*trxs: dict[str, Any]) -> int:
    ends = [int(t["endframe"].max()) + 1 for t in trxs if t["ntargets"] > 0]
    return max(ends) if ends else 0


def align_trajectories(sub: dict[str, Any], ref: dict[str, Any]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hungarian one-to-one matching of submitted to reference trajectories.

    ``C(i, j)`` = mean over the frames both trajectories cover of the pixel distance
    ``||(x, y)_i - (x, y)_j||``; pairs without overlap are forbidden (never matched).
    Returns ``(sub_index, ref_index, cost)`` of the kept pairs (EVALUATORS.md A2).
    """
    t = total_frames(sub, ref)
    sx, sy = dense(sub, "x", t), dense(sub, "y", t)
    rx, ry = dense(ref, "x", t), dense(ref, "y", t)
    cost = np.full((sub["ntargets"], ref["ntargets"]), np.inf)
    for i in range(sub["ntargets"]):  # one vectorised row of the cost matrix per trajectory
        d = np.hypot(sx[i] - rx, sy[i] - ry)
        n = np.sum(np.isfinite(d), axis=1)
        with np.errstate(invalid="ignore"):
            cost[i] = np.where(n > 0, np.nansum(d, axis=1) / np.maximum(n, 1), np.inf)
    rows, cols = assign(cost)
    return rows, cols, cost[rows, cols]


def wrapped(delta: np.ndarray) -> np.ndarray:
    """Wrapped angle difference ``atan2(sin d, cos d)`` in (-pi, pi]."""
    return np.arctan2(np.sin(delta), np.cos(delta))


def ratio_entry(r: float, tau: float | None, err: float | None, **extra: Any) -> dict[str, Any]:
    return {"ratio": float(r), "tolerance": tau, "error": err, **extra}


def summarise_ratios(names: list[str], ratios: dict[str, np.ndarray | None], *, cap: float,
                     nearly_all: float, partial_rule: str = "score",
                     structural_failure: bool = False,
                     unit_pass: dict[str, bool] | None = None
                     ) -> tuple[float | None, str, dict[str, Any], dict[str, bool]]:
    """Score and verdict of a (criteria x experiments) grid of tolerance ratios.

    ``ratios[e]`` holds one uncapped ratio per criterion, or None when experiment ``e`` is
    invalid (``v(e) = 0``). ``score = (1/|C|) sum_c E_e[v(e) min(cap, r_c(e))]``. An
    experiment passes when every ``r_c(e) >= 1``. ``partial_rule``: ``"score"`` (the
    aggregate score is >= 1) or ``"criteria"`` (every criterion's experiment average of
    the capped ratio is >= 1). ``unit_pass`` replaces "every r >= 1" by a stage's own pass
    rule (e.g. :func:`trackverify.scoring.pass_relative`) for the listed experiments. Returns ``(score, verdict, per-criterion summary,
    per-experiment pass)``.
    """
    exps = list(ratios)
    grid = np.zeros((len(names), len(exps)))
    valid = np.zeros(len(exps), dtype=bool)
    for j, e in enumerate(exps):
        if ratios[e] is not None:
            grid[:, j] = ratios[e]
            valid[j] = True
    per_criterion = capped_mean(grid, cap, valid[None, :], axis=1) if exps else \
        np.full(len(names), np.nan)
    score = float(per_criterion.mean()) if exps and names else None
    passed = valid & np.all(grid >= 1.0, axis=0)
    if unit_pass:
        passed = valid & np.array([unit_pass.get(e, ok) for e, ok in zip(exps, passed)],
                                  dtype=bool)
    partial_ok = bool(np.all(per_criterion >= 1.0)) if partial_rule == "criteria" else None
    result = verdict(passed, score, nearly_all=nearly_all, partial_ok=partial_ok,
                     structural_failure=structural_failure)
    summary = {n: {"mean_capped_ratio": per_criterion[c],
                   "experiments_within_tolerance": int(np.sum(valid & (grid[c] >= 1.0))),
                   "experiments": len(exps)} for c, n in enumerate(names)}
    return score, result, summary, dict(zip(exps, passed.tolist()))
