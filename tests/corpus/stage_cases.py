"""Corpus cases of the fly stage evaluators (``trackverify stage``, docs/reference/stages.md).

One small valid synthetic experiment (``exp_1``: two flies, 40 frames) gives the reference
and ground truth, shared by every case, and a perfect submission of each stage. Each case
breaks one file. A broken *submission* is a documented verdict, not a refusal: exit 1,
verdict ``fail``, the reason naming the file in ``stage.json`` (written whole). A broken
*reference* or *ground truth* is refused: exit 2, the file named on stderr.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tests.corpus.make_corpus import PICKLE_BREAKS, Case, RunsCommand, generator
from trackverify.stages import synthetic as S

EXP = "exp_1"
# The file each stage reads from the submission (stats: <line>.csv directly in the folder).
STAGE_FILE = {
    "body-tracking": f"{EXP}/trx.pkl", "registration": f"{EXP}/registered_trx.pkl",
    "keypoints": f"{EXP}/keypoint_preds.npz", "features": f"{EXP}/perframe/velmag.pkl",
    "walking": f"{EXP}/walk_preds.pkl", "gait": f"{EXP}/swing_stance.npy",
    "stats": "line_1.csv",
}


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _csv(rows: list[tuple[str, str]], header: str = "metric,value") -> bytes:
    return (header + "\n" + "".join(f"{m},{v}\n" for m, v in rows)).encode()


def _world() -> dict[str, dict[str, Any]]:
    """``{role: {relative path: object or bytes}}`` of a valid experiment for every stage."""
    t = S.fly_experiment(7, n_flies=2, n_frames=40)
    kp = S.keypoint_annotations(0, n=6)
    files: dict[str, dict[str, Any]] = {}
    for role in ("gt", "ref", "sub"):
        f: dict[str, Any] = {
            f"{EXP}/trx.pkl": S.file_trx(t, mm=False),
            f"{EXP}/registered_trx.pkl": S.file_trx(t),
            f"{EXP}/walk_preds.pkl": S.walking_predictions(t),
            f"{EXP}/swing_stance.npy": _npy(S.swing_stance(t, 0)),
            f"{EXP}/keypoints_gt.npz": _npz(keypoints=kp),
            f"{EXP}/keypoint_preds.npz": _npz(pred=kp[..., :2] + (0.5 if role == "ref" else 0.0)),
            "line_1.csv": _csv(S.stats_rows(0.02, 0.3)),
        }
        f.update({f"{EXP}/perframe/{name}.pkl": arrays
                  for name, arrays in S.perframe_features(t).items()})
        files[role] = f
    files["gt"]["labels.pkl"] = S.walking_labels([t], [EXP], seed=0)
    return files


def _write_files(folder: Path, files: dict[str, Any]) -> None:
    for rel, value in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(value if isinstance(value, bytes) else
                         pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _trx_edit(**changes: Callable[[dict], Any]) -> Callable[[Any], Any]:
    """A mutation of a trx dict: each key's new value from the (copied) dict; None drops it."""
    def mutate(trx: dict) -> dict:
        out = dict(trx)
        for key, make in changes.items():
            value = make(out)
            if value is None:
                out.pop(key)
            else:
                out[key] = value
        return out
    return mutate


def _first(key: str, change: Callable[[np.ndarray], Any]) -> Callable[[dict], list]:
    """``key``'s per-target list with target 0's array replaced by ``change(array)``."""
    return lambda trx: [change(np.asarray(trx[key][0]))] + list(trx[key][1:])


# Structural mutations of a trx pickle: (name, mutation of the dict, fragment of the reason).
TRX_BREAKS: list[tuple[str, Callable[[dict], Any], str]] = [
    ("not_a_dict", lambda trx: list(trx.items()), "expected a dict"),
    ("missing_x", _trx_edit(x=lambda t: None), "missing key(s) ['x']"),
    ("missing_nframes", _trx_edit(nframes=lambda t: None), "missing key(s) ['nframes']"),
    ("ntargets_text", _trx_edit(ntargets=lambda t: "two"), "ntargets is not an integer"),
    ("x_too_short", _trx_edit(x=_first("x", lambda a: a[:-1])), "len(x[0]) = 39, expected 40"),
    ("dt_nframes_long", _trx_edit(dt=_first("dt", lambda a: np.r_[a, a[-1]])),
     "len(dt[0]) = 40, expected 39"),
    ("theta_one_target", _trx_edit(theta=lambda t: t["theta"][:1]),
     "'theta' must be a list of ntargets=2 arrays, found 1"),
    ("y_as_text", _trx_edit(y=_first("y", lambda a: a.astype(str))), "y[0] must be a numeric"),
    ("endframe_off", _trx_edit(endframe=lambda t: t["endframe"] + 1),
     "endframe - firstframe + 1 != nframes for target 0"),
    ("fractional_firstframe", _trx_edit(firstframe=lambda t: t["firstframe"] + 0.5),
     "firstframe must hold integers"),
]


# Cases the readers still fail (a traceback instead of the documented verdict): strict xfails,
# so that the fix turns them into failures until the entry is removed here.
KNOWN_BUGS: dict[str, str] = {}


def _stage_case(root: Path, world: dict[str, dict[str, Any]], stage: str, name: str,
                rel: str, broken: bytes, fragment: str, role: str = "sub") -> Case:
    """A case of ``stage`` whose ``role`` folder (sub, ref or gt) has ``rel`` replaced."""
    case = f"stage_{stage.replace('-', '_')}_{'' if role == 'sub' else role + '_'}{name}"
    folders = {r: root / "stage_world" / r for r in ("ref", "gt")}
    folders["sub"] = root / case / "sub"
    if role == "sub":
        folders["sub"].mkdir(parents=True, exist_ok=True)
        if broken is not None:  # None: the experiment folder is missing altogether
            _write_files(folders["sub"], {k: v for k, v in world["sub"].items()
                                          if k == STAGE_FILE[stage] or stage == "features"
                                          and k.startswith(f"{EXP}/perframe/")})
    else:
        folders["sub"] = root / "stage_world" / "sub"
        folders[role] = root / case / role
        _write_files(folders[role], world[role])
    path = folders[role] / rel
    if broken is not None:
        path.write_bytes(broken)
    out = root / case / "out"
    args = ["stage", stage, "--submission", str(folders["sub"]), "--reference",
            str(folders["ref"]), "--ground-truth", str(folders["gt"]), "--out", str(out)]
    if role == "sub":
        return Case(case, args, 1, [], out, out / "stage.json", [str(path), fragment, '"fail"'])
    return Case(case, args, 2, [str(path), fragment], out)


def _pickled(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _holds_itself() -> list:
    """A list whose one element is the list itself (pickle keeps the cycle)."""
    loop: list = []
    loop.append(loop)
    return loop


@generator
def stage_cases(root: Path) -> list[Case]:
    world = _world()
    for role in ("ref", "gt", "sub"):
        _write_files(root / "stage_world" / role, world[role])
    cases = []
    raw = {rel: _pickled(v) for rel, v in world["sub"].items() if not isinstance(v, bytes)}

    def add(stage, name, broken, fragment, rel=None, role="sub"):
        cases.append(_stage_case(root, world, stage, name, rel or STAGE_FILE[stage], broken,
                                 fragment, role))

    # Trajectory pickles: every structural rule, plus the pickle-level breaks.
    for stage in ("body-tracking", "registration"):
        trx = world["sub"][STAGE_FILE[stage]]
        for name, mutate, fragment in TRX_BREAKS:
            add(stage, name, _pickled(mutate(trx)), fragment)
    for name, mutate, fragment in PICKLE_BREAKS:
        add("body-tracking", name, mutate(raw[STAGE_FILE["body-tracking"]]), fragment)
    sentinel = root / "stage_body_tracking_runs_os_system" / "sub" / EXP / "EXECUTED"
    add("body-tracking", "runs_os_system", _pickled(RunsCommand(f"touch {sentinel}")),
        "refused to load posix.system")
    reg = world["sub"][STAGE_FILE["registration"]]
    add("registration", "nan_in_x_mm", _pickled(_trx_edit(x_mm=_first(
        "x_mm", lambda a: np.where(np.arange(a.size) == 5, np.nan, a)))(reg)),
        "x_mm[0] contains NaN (frame index 5)")
    add("registration", "pxpermm_two_values", _pickled(_trx_edit(pxpermm=_first(
        "pxpermm", lambda a: np.r_[a, a]))(reg)), "len(pxpermm[0]) = 2, expected 1")
    cases.append(_stage_case(root, world, "registration", "missing_experiment", STAGE_FILE[
        "registration"], None, "file not found"))
    # Per-frame features: a list of per-fly arrays of nframes - 1 values.
    feat = world["sub"][STAGE_FILE["features"]]
    for name, value, fragment in [
        ("not_a_list", {"fly0": feat[0]}, "expected a list of per-fly arrays, found dict"),
        ("one_fly", feat[:1], "1 arrays, expected ntargets = 2"),
        ("nframes_long", [np.r_[feat[0], 0.0], feat[1]],
         "fly 0: length 40, expected 39"),
        ("two_dimensional", [feat[0][:, None], feat[1]], "fly 0: expected a 1-D numeric array"),
        ("text_values", [feat[0].astype(str), feat[1]], "fly 0: expected a 1-D numeric array"),
        # found by the fuzz sweep: numpy's ValueError (over 64 axes) escaped as a defect
        ("holds_itself", [_holds_itself(), feat[1]], "fly 0 is not an array (ValueError: "),
    ]:
        add("features", name, _pickled(value), fragment)
    for name, mutate, fragment in PICKLE_BREAKS[:2]:
        add("features", name, mutate(raw[STAGE_FILE["features"]]), fragment)
    add("features", "runs_os_system", _pickled(RunsCommand("echo executed")),
        "refused to load posix.system")
    # Walking predictions: a list of per-fly 1-D arrays.
    walk = world["sub"][STAGE_FILE["walking"]]
    for name, value, fragment in [
        ("not_a_list", np.stack(walk), "found ndarray"),
        ("one_fly", walk[:1], "at least 2 per-fly arrays, found 1"),
        ("two_dimensional", [walk[0][:, None], walk[1]], "fly 0: expected a 1-D numeric array"),
        ("holds_itself", _holds_itself() * 2, "fly 0 is not an array (ValueError: "),
    ]:
        add("walking", name, _pickled(value), fragment)
    for name, mutate, fragment in PICKLE_BREAKS:
        add("walking", name, mutate(raw[STAGE_FILE["walking"]]), fragment)
    # Swing/stance arrays (.npy, read without pickles).
    gait = np.load(io.BytesIO(world["sub"][STAGE_FILE["gait"]]))
    for name, value, fragment in [
        ("wrong_legs", _npy(gait[..., :4]), "expected (n_flies, total_frames, 6)"),
        ("one_frame_short", _npy(gait[:, :-1]), "differs from the reference's"),
        ("float_dtype", _npy(gait.astype(np.float64)), "expected an integer array"),
        ("value_two", _npy(np.where(gait == 1, 2, gait).astype(np.int8)), "values outside"),
        ("object_array", _npy(np.array([[["a"] * 6] * gait.shape[1]] * 2, dtype=object)),
         "not a readable .npy array"),
        ("truncated", world["sub"][STAGE_FILE["gait"]][:100], "not a readable .npy array"),
        ("empty", b"", "not a readable .npy array"),
        ("npz_not_npy", _npz(swing_stance=gait), "expected a .npy array"),
        ("zip_bytes", b"PK\x03\x04 not a zip", "not a readable .npy array"),
    ]:
        add("gait", name, value, fragment)
    # Keypoint predictions (.npz, array pred (N, 21, 2)).
    pred = np.load(io.BytesIO(world["sub"][STAGE_FILE["keypoints"]]))["pred"]
    for name, value, fragment in [
        ("wrong_array_name", _npz(predictions=pred), "missing array 'pred'"),
        ("three_columns", _npz(pred=np.concatenate([pred, pred[..., :1]], -1)),
         "expected (N, 21, 2) numbers"),
        ("one_short", _npz(pred=pred[:-1]), "5 predictions for 6 annotations"),
        ("nan_prediction", _npz(pred=np.where(np.arange(21)[:, None] == 3, np.nan, pred)),
         "non-finite predictions"),
        ("not_npz", b"PK\x03\x04 not a zip", "not a readable .npz file"),
        ("empty", b"", "not a readable .npz file"),
    ]:
        add("keypoints", name, value, fragment)
    # Statistics CSV (metric,value; text, row-numbered messages).
    rows = S.stats_rows(0.02, 0.3)
    for name, value, fragment in [
        ("wrong_header", _csv(rows, "name,value"), "the header must be 'metric,value'"),
        ("text_p_value", _csv([rows[0], ("p_value_slow", "small")] + rows[2:]),
         "column 'value', row 2: 'small' is not a number"),
        ("sig_not_bool", _csv(rows[:4] + [("sig_slow_0.05", "yes")] + rows[5:]),
         "column 'value', row 5: 'yes' is not True/False"),
        ("three_fields", _csv(rows[:2] + [("u_statistic_fast", "600,1")] + rows[3:]),
         "row 3: expected 2 fields"),
        ("duplicate_metric", _csv(rows + [rows[0]]), "row 11: metric 'u_statistic_slow' appears"),
        ("missing_metric", _csv(rows[:-1]), "missing metric(s) ['sig_fast_0.001']"),
        ("latin1_bytes", _csv(rows).replace(b"u_statistic_slow", b"u_statistic_sl\xf6w"),
         "not a readable CSV file"),
        ("empty", b"", "the header must be 'metric,value'"),
    ]:
        add("stats", name, value, fragment)
    # A broken reference or ground truth is refused (exit 2).
    for stage, role, rel, name, value, fragment in [
        ("body-tracking", "gt", STAGE_FILE["body-tracking"], "truncated",
         raw[STAGE_FILE["body-tracking"]][:50], "pickle data was truncated"),
        ("body-tracking", "gt", STAGE_FILE["body-tracking"], "runs_os_system",
         _pickled(RunsCommand("echo executed")), "refused to load posix.system"),
        ("body-tracking", "ref", STAGE_FILE["body-tracking"], "missing_x",
         _pickled(TRX_BREAKS[1][1](world["ref"][STAGE_FILE["body-tracking"]])), "missing key"),
        ("registration", "ref", STAGE_FILE["registration"], "nan_in_y_mm", _pickled(_trx_edit(
            y_mm=_first("y_mm", lambda a: np.where(np.arange(a.size) == 2, np.nan, a)))(reg)),
         "y_mm[0] contains NaN (frame index 2)"),
        ("features", "ref", STAGE_FILE["features"], "class_instance",
         PICKLE_BREAKS[3][1](b""), "refused to load collections.Counter"),
        ("features", "gt", STAGE_FILE["registration"], "gold_not_a_dict",
         _pickled([1, 2, 3]), "expected a dict"),
        ("walking", "gt", "labels.pkl", "labels_not_a_dict", _pickled([1, 2]),
         "expected a dict with keys"),
        ("walking", "gt", "labels.pkl", "labels_length_mismatch", _pickled(
            {**world["gt"]["labels.pkl"], "t1s": [[np.r_[t1, t1[-1]] for t1 in sample]
                                                  for sample in world["gt"]["labels.pkl"]["t1s"]]}),
         "t0s/t1s/labels disagree"),
        ("gait", "ref", STAGE_FILE["gait"], "float_dtype", _npy(gait.astype(np.float32)),
         "expected an integer array"),
        ("keypoints", "gt", f"{EXP}/keypoints_gt.npz", "two_columns",
         _npz(keypoints=pred), "expected (N, 21, 3) numbers"),
        ("features", "ref", STAGE_FILE["features"], "holds_itself", _pickled(_holds_itself()),
         "fly 0 is not an array"),
        ("stats", "ref", "line_1.csv", "text_u", _csv([("u_statistic_slow", "many")] + rows[1:]),
         "column 'value', row 1"),
    ]:
        add(stage, name, value, fragment, rel, role)
    # Read as something else before: fly 0 of 1-based labels (picked the last fly), a visible
    # keypoint without coordinates (dropped as if hidden).
    labels = world["gt"]["labels.pkl"]
    kp = np.load(io.BytesIO(world["gt"][f"{EXP}/keypoints_gt.npz"]))["keypoints"]
    for stage, role, rel, name, value, fragment in [
        ("walking", "gt", "labels.pkl", "labels_fly_zero", _pickled(
            {**labels, "flies": [[0, *flies[1:]] for flies in labels["flies"]]}),
         "flies[0][0] = 0: fly numbers are whole numbers from 1"),
        ("walking", "gt", "labels.pkl", "labels_sample_outside", _pickled(
            {**labels, "sampleDirs": ["../ref/" + labels["sampleDirs"][0]]}),
         "sampleDirs[0] = '../ref/exp_1' is not the name of an experiment folder"),
        ("keypoints", "gt", f"{EXP}/keypoints_gt.npz", "visible_nan", _npz(
            keypoints=np.where((np.arange(len(kp))[:, None, None] == 2)
                               & (np.arange(3) == 0), np.nan, kp)),
         "row 3: keypoint 0 visible"),
    ]:
        add(stage, name, value, fragment, rel, role)
    # Settings that empty a check or name a file outside the folder they belong to (exit 2).
    world_dirs = {r: root / "stage_world" / r for r in ("sub", "ref", "gt")}
    for stage, name, setting, fragment in [
        ("stats", "alphas_empty", "alphas=,", "setting 'alphas' = ',' lists no value"),
        ("keypoints", "percentiles_empty", "percentiles=", "setting 'percentiles' = '' lists"),
        ("features", "wrapped_unknown", "wrapped_features=yew",
         "setting 'wrapped_features': 'yew' is not a standard feature"),
        ("walking", "predictions_outside", "predictions_file=../../ref/exp_1/walk_preds.pkl",
         "setting 'predictions_file' names"),
        ("walking", "labels_outside", "labels_file=../ref/exp_1/walk_preds.pkl",
         "setting 'labels_file' names"),
    ]:
        case = f"stage_setting_{name}"
        out = root / case / "out"
        cases.append(Case(case, ["stage", stage, "--submission", str(world_dirs["sub"]),
                                 "--reference", str(world_dirs["ref"]), "--ground-truth",
                                 str(world_dirs["gt"]), "--out", str(out), "--set", setting],
                          2, [fragment], out))
    for case in cases:
        case.known_bug = KNOWN_BUGS.get(case.name, "")
    return cases
