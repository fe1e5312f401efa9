"""The AnDi 2 CodaLab scoring program: tracks, experiments, FOVs, scores.txt.

Layout (INPUT_DIR): ``ref/track_{1,2}/exp_N/{traj_labs_fov_M.txt, vip_idx_fov_M.txt,
ensemble_labels.txt}`` and ``res/track_{1,2}/exp_N/{fov_M.txt, ensemble_labels.txt}``.
Track 1 is videos (only the VIP particles are scored), track 2 trajectories; task 1 is
single trajectory, task 2 ensemble.
"""

from __future__ import annotations

import glob
import html
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.andi import core
from trackverify.andi.ensemble import error_Ensemble_dataset
from trackverify.andi.single import Problem, Table, read_table_file, score_tables
from trackverify.errors import InputError
from trackverify.io.bounded import regular_file
from trackverify.io.atomic import write_text_atomic
from trackverify.report.numbers import fmt

SINGLE_COLUMNS = ["Exp", "num_trajs", "RMSE CP", "JSC CP", "alpha", "K", "state"]
SINGLE_NAMES = ["cp", "JI", "alpha", "D", "state"]


@dataclass
class Report:
    """Everything one scoring run found: scores (in file order), tables, problems."""

    scores: list[tuple[str, float]] = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def scores_text(self, rounded: bool = False) -> str:
        """``key: value`` lines: full precision (scores.txt, read by the leaderboard), or
        ``rounded`` for people (:func:`trackverify.report.numbers.fmt`)."""
        return "".join(f"{k}: {fmt(v) if rounded else v}\n" for k, v in self.scores)


def listdir_nohidden(path):
    """Entries of ``path`` not starting with '.' or '_'."""
    for f in os.listdir(path):
        if not f.startswith((".", "_")):
            yield f


def when_error_single(wrn_str):
    """Maximum errors of the single task ``(cp 10, JI 0, alpha 2, D 1e5, state 0)`` and a
    one-row frame of None."""
    warnings.warn(wrn_str)
    b = core._get_error_bounds()
    return (b[3], 0, b[0], b[1], b[2]), pd.DataFrame(
        data=np.array([None] * 7).reshape(1, 7), columns=SINGLE_COLUMNS)


def _max_single(problems, source, message):
    problems.append(Problem(source, None, message + "; the single-trajectory task of this "
                            "track gets the maximum errors (official rule)"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return when_error_single(message)


#: A reference FOV file: ``traj_labs_fov_<M>.txt``. The official program counts every file
#: whose name starts with ``traj_labs_``, so a stray ``traj_labs_fov_0.txt.bak`` added a FOV
#: the submission cannot have (the track's single task then took the maximum errors).
FOV_FILE = re.compile(r"traj_labs_fov_([0-9]+)\.txt")


def _run_single(exp_nums, track, submit_dir, truth_dir, corrected, problems):
    rows = []
    for exp in exp_nums:
        path_pred = Path(submit_dir) / f"track_{track}" / f"exp_{exp}"
        path_true = Path(truth_dir) / f"track_{track}" / f"exp_{exp}"
        fov_nums = sum(1 for f in os.listdir(path_true) if FOV_FILE.fullmatch(f))
        trues, preds, tg, pg, files = [], [], [], [], []
        for fov in range(fov_nums):
            pred_file = path_pred / f"fov_{fov}.txt"
            if not pred_file.is_file():
                return _max_single(problems, str(pred_file), "missing file")
            pred, probs = read_table_file(pred_file, corrected=corrected, strict=True)
            problems += probs
            true_file = path_true / f"traj_labs_fov_{fov}.txt"
            true, probs = read_table_file(true_file, strict=True)
            problems += [Problem(p.source, p.line, "reference: " + p.message, p.severity)
                         for p in probs]
            if track == 1:
                vip_file = path_true / f"vip_idx_fov_{fov}.txt"
                vip = read_vip_file(vip_file)
                pred_vip = pred.idx.astype(int)
                if len(vip) != len(pred_vip) or (np.sort(vip) != np.sort(pred_vip)).any():
                    return _max_single(problems, str(pred_file), "predicted VIP indices differ "
                                       f"from {vip_file.name}")
                true = true.take(np.flatnonzero(np.isin(true.idx, vip)))
            _report_ids(true, pred, pred_file, problems)
            files.append(str(pred_file))
            trues.append(true)
            preds.append(pred)
            tg.append(np.full(true.n, fov))
            pg.append(np.full(pred.n, fov))
        if not trues:
            continue
        true_all, pred_all = Table.concat(trues), Table.concat(preds)
        groups = np.concatenate(tg)
        try:
            res = score_tables(true_all, pred_all, true_group=groups,
                               pred_group=np.concatenate(pg), corrected=corrected)
        except Exception as exc:  # noqa: BLE001 - a submission must never crash scoring
            return _max_single(problems, str(path_pred), f"cannot score ({type(exc).__name__}: "
                               f"{exc})")
        for i in res.missing.tolist():
            problems.append(Problem(files[groups[i]], None, f"trajectory {true_all.idx[i]:g} "
                                    "has no valid prediction; scored with the maximum errors"))
        rows.append([exp, true_all.n, *res.as_tuple()])
    data = pd.DataFrame(data=rows, columns=SINGLE_COLUMNS)
    if data.empty:
        return _max_single(problems, str(Path(truth_dir) / f"track_{track}"),
                           "no reference trajectories")
    avg = [np.average(data[k], weights=data.num_trajs) for k in SINGLE_COLUMNS[2:]]
    return avg, data


def _report_ids(true: Table, pred: Table, pred_file: Path, problems):
    """Duplicated and unknown trajectory ids of one FOV, each by line."""
    idx_true = true.idx
    _, first = np.unique(pred.idx, return_index=True)
    dup = np.setdiff1d(np.arange(pred.n), first)
    for i in dup.tolist():
        problems.append(Problem(str(pred_file), int(pred.line[i]), f"trajectory "
                                f"{pred.idx[i]:g} predicted again; the first line is used",
                                "warning"))
    extra = np.flatnonzero(~np.isin(pred.idx, idx_true))
    for i in extra.tolist():
        problems.append(Problem(str(pred_file), int(pred.line[i]), f"trajectory "
                                f"{pred.idx[i]:g} is not in the reference; ignored", "warning"))


def run_single_task(exp_nums, track, submit_dir, truth_dir, *, corrected=False):
    """Single-trajectory metrics per experiment and their average weighted by the number
    of trajectories: ``([cp, JI, alpha, D, state], frame)``.

    FOVs of an experiment are pooled; trajectories are matched by (FOV, traj_idx) (the
    official id offsets, computed separately for truth and prediction, misalign every
    later FOV after one missing trajectory; on complete submissions both agree). A
    missing file, or wrong VIP indices in track 1, gives the maximum errors for the task.
    """
    return _run_single(exp_nums, track, str(submit_dir), str(truth_dir), corrected, [])


def _run_ensemble(exp_nums, track, submit_dir, truth_dir, corrected, problems):
    avg_alpha, avg_d = [], []
    for exp in exp_nums:
        paths = [Path(d) / f"track_{track}" / f"exp_{exp}" / "ensemble_labels.txt"
                 for d in (truth_dir, submit_dir)]
        regular_file(paths[0], what="reference file")  # never read a FIFO or a device
        try:
            with warnings.catch_warnings():  # an empty file is reported below, not warned about
                warnings.simplefilter("error", UserWarning)
                true = np.loadtxt(paths[0], skiprows=1, delimiter=";")
                pred = np.loadtxt(regular_file(paths[1]), skiprows=1, delimiter=";")
            a, d = error_Ensemble_dataset(true, pred, corrected=corrected)
            if not (np.isfinite(a) and np.isfinite(d)):
                raise ValueError("the distance is not finite")
        except Exception as exc:  # noqa: BLE001 - official rule: any failure scores max
            problems.append(Problem(str(paths[1]), None, f"cannot score the ensemble "
                                    f"prediction ({type(exc).__name__}: {exc}); the ensemble "
                                    "task of this track gets the maximum errors (official rule)"))
            b = core._get_error_bounds()
            return (b[4], b[5]), pd.DataFrame(data=np.array([None, None, None]).reshape(1, 3),
                                              columns=["Exp", "alpha", "K"])
        avg_alpha.append(a)
        avg_d.append(d)
    numbers = list(exp_nums) if corrected else list(range(len(avg_alpha)))
    data = pd.DataFrame({"Exp": np.asarray(numbers, dtype=int), "alpha": avg_alpha, "K": avg_d})
    return (np.mean(avg_alpha), np.mean(avg_d)), data


def run_ensemble_task(exp_nums, track, submit_dir, truth_dir, *, corrected=False):
    """Ensemble distances per experiment and their means: ``((alpha, D), frame)``.

    Any failure (missing or unreadable file) gives the maximum errors for the task.
    Official: the frame numbers experiments 0..n-1; ``corrected=True`` uses their numbers.
    """
    return _run_ensemble(exp_nums, track, str(submit_dir), str(truth_dir), corrected, [])


REFERENCE = "(the scoring program's reference, not the submission)"


def read_vip_file(path: Path) -> np.ndarray:
    """The VIP trajectory indices of a reference ``vip_idx_fov_M.txt`` (one integer a line).

    Raises :class:`InputError` naming the file and line: a broken reference is the
    scoring program's error, never the submission's.
    """
    try:
        with open(regular_file(path, what="reference file"), encoding="utf-8",
                  errors="replace") as handle:
            lines = handle.read().split("\n")
    except FileNotFoundError:
        raise InputError(f"file not found {REFERENCE}", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read the file {REFERENCE} ({exc})", source=str(path)) from None
    values = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError:
            value = np.nan
        if not (np.isfinite(value) and value == round(value) and value >= 0):
            raise InputError(f"line {number}: {text[:40]!r} is not an integer trajectory index "
                             f"{REFERENCE}", source=str(path))
        if int(value) in values:
            raise InputError(f"line {number}: trajectory index {int(value)} is listed twice "
                             f"{REFERENCE}", source=str(path))
        values.append(int(value))
    return np.asarray(values, dtype=int)


def check_reference(truth_dir: Path) -> None:
    """Refuse a reference the program cannot score against (:class:`InputError`, exit 2).

    Every ``exp_N`` folder must be named without leading zeros (the submission's folder is
    looked up as ``exp_N``), hold ``traj_labs_fov_0..M-1.txt`` without a gap and without a
    rejected line (a blank line is only a warning), a numeric
    ``ensemble_labels.txt`` and, in track 1, a ``vip_idx_fov_M.txt`` of integers per FOV.
    """
    for track in (1, 2):
        track_dir = Path(truth_dir) / f"track_{track}"
        if not track_dir.is_dir():
            continue
        for name in sorted(listdir_nohidden(track_dir)):
            folder = track_dir / name
            if not folder.is_dir() or not re.fullmatch(r"exp_[0-9]+", name):
                continue
            if not EXPERIMENT_FOLDER.fullmatch(name):
                raise InputError("an experiment folder must be named exp_<N> without leading "
                                 f"zeros (the submission's is looked up as exp_{int(name[4:])}) "
                                 f"{REFERENCE}", source=str(folder))
            _check_reference_experiment(folder, track)


def _check_reference_experiment(folder: Path, track: int) -> None:
    fovs = sorted(int(m.group(1)) for f in os.listdir(folder)
                  if (m := FOV_FILE.fullmatch(f)))
    for fov in range(len(fovs)):
        wanted = folder / f"traj_labs_fov_{fov}.txt"
        if not wanted.is_file():
            raise InputError(f"file not found {REFERENCE}; the folder holds FOVs {fovs}, "
                             f"read as 0..{len(fovs) - 1}", source=str(wanted))
        _, problems = read_table_file(wanted, strict=True)
        broken = [p for p in problems if p.severity == "error"]
        if broken:
            raise InputError(f"line {broken[0].line}: {broken[0].message} {REFERENCE}",
                             source=str(wanted))
        if track == 1:
            read_vip_file(folder / f"vip_idx_fov_{fov}.txt")
    ensemble = folder / "ensemble_labels.txt"
    if not ensemble.exists():
        raise InputError(f"file not found {REFERENCE}", source=str(ensemble))
    regular_file(ensemble, what="reference file")  # a FIFO or a device is never read
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            values = np.loadtxt(ensemble, skiprows=1, delimiter=";", ndmin=2)
    except (ValueError, UserWarning, OSError) as exc:
        raise InputError(f"not a numeric ';'-separated table after the header {REFERENCE} "
                         f"({' '.join(str(exc).split())[:120]})", source=str(ensemble)) from None
    if values.size == 0 or not np.isfinite(values).all():
        raise InputError(f"not a numeric ';'-separated table of finite values {REFERENCE}",
                         source=str(ensemble))


#: An experiment folder of the reference: ``exp_<N>``, N a non-negative integer written
#: without leading zeros (``check_reference`` refuses ``exp_01``).
EXPERIMENT_FOLDER = re.compile(r"exp_(0|[1-9][0-9]*)")


def _exp_numbers(track_dir: Path, problems):
    """The experiments of a reference track: its folders named exactly ``exp_<N>``, in the
    official program's (name) order. Any other entry (``exp_1_old``, ``exp_1.bak``, a file)
    is ignored with a warning; the official program counted each name's first number, so a
    stray ``exp_1_old`` scored experiment 1 twice."""
    nums = []
    for name in sorted(listdir_nohidden(track_dir)):
        found = EXPERIMENT_FOLDER.fullmatch(name)
        if not found or not (track_dir / name).is_dir():
            problems.append(Problem(str(track_dir / name), None, "not an experiment folder; "
                                    "ignored", "warning"))
            continue
        nums.append(int(found.group(1)))
    return nums


def score(input_dir, *, corrected=False) -> Report:
    """Score ``input_dir/res`` against ``input_dir/ref``; never raises on bad submissions."""
    submit_dir = Path(input_dir) / "res"
    truth_dir = Path(input_dir) / "ref"
    check_reference(truth_dir)
    rep = Report()
    b = core._get_error_bounds()
    ens_names = ["alpha", "D"] if corrected else ["D", "alpha"]
    for track in (1, 2):
        truth_track = truth_dir / f"track_{track}"
        if not truth_track.is_dir():
            if (submit_dir / f"track_{track}").exists():
                rep.problems.append(Problem(str(truth_track), None, "no reference for this "
                                            "track; it is not scored"))
            continue
        if not (submit_dir / f"track_{track}").exists():
            rep.problems.append(Problem(str(submit_dir / f"track_{track}"), None, "no "
                                        "submission for this track; both tasks get the "
                                        "maximum errors"))
            rep.scores += [(f"tr{track}.ta2.{n}", v) for n, v in zip(ens_names, b[4:6])]
            rep.scores += [(f"tr{track}.ta1.{n}", v)
                           for n, v in zip(SINGLE_NAMES, (b[3], 0, b[0], b[1], b[2]))]
            continue
        exp_nums = _exp_numbers(truth_track, rep.problems)
        (ea, ed), df_e = _run_ensemble(exp_nums, track, submit_dir, truth_dir, corrected,
                                       rep.problems)
        rep.scores += [(f"tr{track}.ta2.{n}", v) for n, v in zip(ens_names, (ea, ed))]
        avg, df_s = _run_single(exp_nums, track, submit_dir, truth_dir, corrected, rep.problems)
        rep.scores += [(f"tr{track}.ta1.{n}", v) for n, v in zip(SINGLE_NAMES, avg)]
        rep.tables[track] = {"single": df_s, "ensemble": df_e}
    return rep


def _html(rep: Report) -> str:
    parts = ["<h1>Submission detailed results </h1>"]
    names = {1: "videos", 2: "trajectories"}
    for track, t in rep.tables.items():
        parts.append(f"<h2> Track {track}: {names[track]} </h2>")
        parts.append("<h3> Ensemble Task </h3>")
        e = t["ensemble"].iloc[:, [0, 2, 1]].rename(columns={"alpha": "W1 (alpha)",
                                                             "K": "W1 (K)"})
        parts.append(e.to_html(index=False, float_format=fmt).replace("\n", ""))
        parts.append("<h3> Single Trajectory Task </h3>")
        s = t["single"].iloc[:, [0, 1, 2, 3, 5, 4, 6]].rename(columns={
            "alpha": "MAE (alpha)", "K": "MSLE (K)", "RMSE CP": "RMSE (CP)",
            "JSC CP": "JSC (CP)", "state": "F1 (diff. type)"})
        parts.append(s.to_html(index=False, float_format=fmt).replace("\n", ""))
    if rep.problems:
        parts.append("<h2> Problems found in the input </h2><ul>")
        parts += [f"<li>[{p.severity}] {html.escape(str(p))}</li>" for p in rep.problems]
        parts.append("</ul>")
    return "".join(parts) + "\n"


def _markdown(rep: Report, corrected: bool) -> str:
    lines = ["# AnDi 2 scores", "",
             f"Definitions: {'corrected' if corrected else 'official (andi-datasets 2.1.13)'}.",
             "", "| key | value |", "|---|---|"]
    lines += [f"| {k} | {fmt(v)} |" for k, v in rep.scores]
    errors = sum(p.severity == "error" for p in rep.problems)
    lines += ["", f"## Problems ({errors} errors, {len(rep.problems) - errors} warnings)", ""]
    lines += [f"- [{p.severity}] {p}" for p in rep.problems] or ["None."]
    return "\n".join(lines) + "\n"


def codalab_scoring(INPUT_DIR=None, OUTPUT_DIR=None, *, corrected=False) -> None:
    """Write ``OUTPUT_DIR/scores.txt``, ``OUTPUT_DIR/html/scores.html`` and
    ``OUTPUT_DIR/summary.md`` for the submission in ``INPUT_DIR/res``.

    ``scores.txt`` has ``tr{track}.ta{task}.{name}: value`` per line. Official: the
    ensemble alpha distance is written under ``D`` and the D distance under ``alpha``
    (the leaderboard's labels were swapped); ``corrected=True`` writes them under their
    own names. A missing track gets the maximum errors (upstream writes nothing).
    Returns None, as upstream; ``write_scores`` returns the :class:`Report`.
    """
    import sys
    if INPUT_DIR is None:
        INPUT_DIR = sys.argv[1]
    if OUTPUT_DIR is None:
        OUTPUT_DIR = sys.argv[2]
    write_scores(INPUT_DIR, OUTPUT_DIR, corrected=corrected)


def write_scores(INPUT_DIR, OUTPUT_DIR, *, corrected=False) -> Report:
    """Score and write the outputs of ``codalab_scoring``; returns the report."""
    rep = score(INPUT_DIR, corrected=corrected)
    out = Path(OUTPUT_DIR)
    write_text_atomic(out / "scores.txt", rep.scores_text())
    write_text_atomic(out / "html" / "scores.html", _html(rep))
    write_text_atomic(out / "summary.md", _markdown(rep, corrected))
    return rep


def transform_ref_to_res(base_path, track, num_fovs):
    """Turn a reference folder into a submission in place: ``traj_labs_fov_N.txt`` becomes
    ``fov_N.txt``; every other file except ``ensemble_labels.txt`` is deleted."""
    for exp_dir in os.listdir(os.path.join(base_path, track)):
        exp_path = os.path.join(base_path, track, exp_dir)
        for fov in range(num_fovs):
            old = os.path.join(exp_path, f"traj_labs_fov_{fov}.txt")
            if os.path.exists(old):
                os.rename(old, os.path.join(exp_path, f"fov_{fov}.txt"))
        for file in glob.glob(os.path.join(exp_path, "*")):
            if not (file.endswith("ensemble_labels.txt")
                    or os.path.basename(file).startswith("fov_")):
                os.remove(file)
