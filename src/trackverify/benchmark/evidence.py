"""Evidence, side by side: ``fixed_distance`` vs ``registered_distance`` (docs/reference/verifiers.md).

``trackverify evidence --out DIR`` writes ``evidence.json`` and a self-contained
``evidence.html`` with two tables:

1. **The development specimen** (one animal, 189 neurons; ``freely_moving`` with its detection
   table, docs/reference/specimen.md) at each motion level: over the six
   original corruption conditions pooled (controls excluded) and over ``nearby_swap`` alone,
   AUROC (finite scores), AUROC with abstained rows ranked most suspicious (AUROC*), AUPRC
   and the largest correct certified coverage at false certification <= 1 %; plus AUROC* of
   the three harder conditions. ``registered_distance`` runs with its defaults (ambiguity
   ``k`` = ``DEFAULT_AMBIGUITY_K``, chosen on the specimen; docs/reference/verifiers.md).
2. **Real point-set pairs** (``--pairs DIR``: one folder per example holding ``pts_gt.npy``
   and ``pts_tar.npy``, arrays (n, 2|3) of the same shape, row = identity, NaN row =
   missing; e.g. ``../shared/data/targettrack-point-pairs``): frame 0 = ``pts_gt``,
   frame 1 = ``pts_tar``. Errors are injected in frame 1: ``random`` pairs every neuron
   present in both frames with a random partner (a random perfect matching) and exchanges
   ids; ``nearby`` exchanges ids within mutual nearest-neighbour pairs (frame-1 distance).
   Population = the clean frame-1 rows (correct) + the swapped rows (errors). The
   registration settings, the z scale and the ambiguity ``k`` for one example are chosen on
   the *other* examples (leave-one-out, :func:`choose_candidate`: best median random-swap
   AUROC*, ties within ``TIE_TOLERANCE`` broken by the worst held-in example, then by the
   fewest departures from the declared defaults, then grid order), never on the one scored.
"""

from __future__ import annotations

import html
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from trackverify.benchmark.config import CONDITIONS, DEFAULT_CONDITIONS, build_config
from trackverify.benchmark.corrupt import (EVIDENCE_OPTIONS, scaled_window, share_window, usable_start,
                                 window_errors)
from trackverify.benchmark.dataset import load_dataset
from trackverify.errors import InputError, naming_input
from trackverify.io.bounded import NPY_LOAD_ERRORS, check_npy
from trackverify.report.numbers import fmt
from trackverify.benchmark.protocols.anatomical_verification import (
    SIX_CORRUPTIONS, error_array, score_conditions)
from trackverify.report.html import page, table
from trackverify.benchmark.run import over_draws
from trackverify.benchmark.selective import auroc_abstain_as_error, certification_metrics
from trackverify.synth.motion import MOTION_LEVELS
from trackverify.synth.specimen import animal_detections, animal_observations
from trackverify.tables import MAX_COORDINATE_UM
from trackverify.verifiers.fixed_distance import FixedDistance
from trackverify.verifiers.registered_distance import (
    DEFAULT_AMBIGUITY_K, DEFAULT_MERGE_K, DEFAULT_SCORE, DEFAULT_TRACK_WINDOW, RegisteredDistance,
    RegistrationSettings)

HARDER = CONDITIONS[len(DEFAULT_CONDITIONS):]  # the three opt-in corruptions
LEVELS = tuple(MOTION_LEVELS)


@dataclass(frozen=True)
class Choice:
    """One leave-one-out candidate: registration settings and the z scale of the pairs."""

    settings: RegistrationSettings
    z_scale: float = 1.0

    def describe(self) -> str:
        s = self.settings
        return (f"beta {s.beta:g}, lambda {s.lam:g}, {'affine' if s.affine else 'no affine'}, "
                f"w {s.outlier_weight:g}, start {s.first_frame_sigma:g} spacings, "
                f"z x{self.z_scale:g}")


#: The full leave-one-out grid for the real pairs (324 candidates; the voxels' anisotropy
#: is not stated upstream, so the z unit relative to x/y is a candidate setting too).
FULL_GRID = tuple(
    Choice(RegistrationSettings(beta=b, lam=lam, affine=affine, outlier_weight=w,
                                first_frame_sigma=s0), z)
    for b, lam, affine, w, s0, z in itertools.product(
        (0.5, 1.0, 2.0), (0.5, 2.0, 8.0), (True, False), (0.1, 0.3), (1.0, 3.0, 10.0),
        (1.0, 3.0, 6.0)))
#: The verifier's defaults alone (nothing chosen on the pairs).
DEFAULT_GRID = (Choice(RegistrationSettings()),)
#: Ambiguity k for the real pairs: this quantile of the other examples' clean d / sigma
#: (None = no uniqueness abstention), chosen leave-one-out with the settings.
QUANTILES = (None, 0.1, 0.25, 0.5)


def summary(error: np.ndarray, score: np.ndarray) -> dict:
    """AUROC, AUROC*, AUPRC, coverage at FCR <= 1 % and the abstained share of a population."""
    m = certification_metrics(error, score, threshold=np.inf)
    return {"auroc": m["auroc"], "auroc_abst": auroc_abstain_as_error(error, score),
            "auprc": m["auprc"], "cov_at_fcr1": m["correct_coverage_at_fcr"],
            "abstained": m["n_abstained"] / max(m["n_rows"], 1)}


def six_and_nearby(scored: pd.DataFrame) -> dict:
    """:func:`summary` of the six original corruptions pooled and of ``nearby_swap`` alone."""
    error, score = error_array(scored), scored["score"].to_numpy()
    condition = scored["condition"].astype(str).to_numpy()
    six, nearby = np.isin(condition, SIX_CORRUPTIONS), condition == "nearby_swap"
    return {"pooled": summary(error[six], score[six]), "nearby": summary(error[nearby], score[nearby])}


def repeated_draws(observations: pd.DataFrame, detections: pd.DataFrame | None, verifier,
                   draws: int, recording: str = "", **settings) -> dict:
    """The suite drawn ``draws`` times (seeds ``seed, seed + 1, ...``) with one verifier
    instance (its coordinate-only fit is reused): per draw :func:`six_and_nearby`, and the
    mean and minimum over draws of pooled AUROC*, pooled cov@1% and nearby AUROC*."""
    base = build_config(settings).seed
    per_draw = [six_and_nearby(score_conditions(
        observations, build_config({**settings, "seed": base + k}), verifier, recording,
        detections)[0]) for k in range(draws)]
    out: dict = {"draws": draws, "pooled": {}, "nearby": {}, "per_draw": per_draw}
    for population, metric in (("pooled", "auroc_abst"), ("pooled", "cov_at_fcr1"),
                               ("nearby", "auroc_abst")):
        spread = over_draws([d[population][metric] for d in per_draw])
        out[population][metric], out[population][metric + "_min"] = spread["mean"], spread["min"]
    return out


#: How :func:`evidence_window` chose a recording's window (recorded per row).
WINDOW_RULES = {"given": "--start / --recovery-end as given (SPEC's value for one not given)",
                "spec": "SPEC's 300 / 700",
                "spec, start moved": "SPEC's, start moved on (a frame gap at 300) to the next "
                                     "frame with 2 observed tracks",
                "scaled": "30 % / 70 % of the frame numbers (too short for SPEC's), start moved "
                          "on to the next frame with 2 observed tracks"}


def evidence_window(frames: np.ndarray, start: int | None = None,
                    recovery_end: int | None = None) -> dict:
    """The corruption window of one recording (``frames``: its counted frame numbers, one per
    observation): ``start``, ``recovery_end`` and the :data:`WINDOW_RULES` key that chose them.

    Given values (either one) are used as given, the other at SPEC's default, as ``run`` does.
    Otherwise SPEC's window where the recording is long enough for it (more than
    ``recovery_end`` frame numbers), its ``start`` moved on to the next frame holding two
    observed tracks when it falls in a gap (:func:`~trackverify.benchmark.corrupt.usable_start`); else
    the window scaled to the recording (:func:`~trackverify.benchmark.corrupt.scaled_window`). Where
    neither fits, SPEC's window, which the suite then refuses with a hint.
    """
    spec = build_config({"start": start, "recovery_end": recovery_end})
    if (start, recovery_end) != (None, None):
        return {"start": spec.start, "recovery_end": spec.recovery_end, "rule": "given"}
    if int(frames.max()) + 1 > spec.recovery_end:
        moved = usable_start(frames, spec.start)
        if moved is not None and moved < spec.recovery_end:
            return {"start": moved, "recovery_end": spec.recovery_end,
                    "rule": "spec" if moved == spec.start else "spec, start moved"}
    scaled = scaled_window(frames)
    if scaled is not None:
        return {"start": scaled[0], "recovery_end": scaled[1], "rule": "scaled"}
    return {"start": spec.start, "recovery_end": spec.recovery_end, "rule": "spec"}


def recording_evidence(folder: Path, draws: int = 8, score: str = DEFAULT_SCORE,
                       track_window: int = DEFAULT_TRACK_WINDOW, start: int | None = None,
                       recovery_end: int | None = None,
                       merge_k: float = DEFAULT_MERGE_K) -> list[dict]:
    """Part 3: real recordings (a data folder, with its ``detections`` table when present),
    one row per (recording, verifier), over ``draws`` repeated draws of the suite in the
    window of :func:`evidence_window` (``start`` / ``recovery_end`` when given)."""
    rows = []
    for name, source in load_dataset(folder).sources():
        observations, detections = source.load(), source.load_detections()
        window = evidence_window(observations["frame"].to_numpy(), start, recovery_end)
        settings = {"start": window["start"], "recovery_end": window["recovery_end"]}
        for verifier in (FixedDistance(), RegisteredDistance(score=score, track_window=track_window,
                                                             merge_k=merge_k)):
            # e.g. a recording too short for a condition: named, in evidence's options
            with naming_input(folder), window_errors(source.first_frame, EVIDENCE_OPTIONS):
                draws_of = repeated_draws(observations, detections, verifier, draws, name,
                                          **settings)
            rows.append({"data": f"{Path(folder).name}/{name}", "verifier": verifier.name,
                         "window": {**window, "first_frame": source.first_frame}, **draws_of})
    return rows


def specimen_evidence(levels=LEVELS, frames: int = 1000, score: str = DEFAULT_SCORE,
                      track_window: int = DEFAULT_TRACK_WINDOW,
                      merge_k: float = DEFAULT_MERGE_K) -> list[dict]:
    """Part 1: one row per (motion level, verifier)."""
    k = DEFAULT_AMBIGUITY_K  # the verifier's default band (docs/reference/verifiers.md)
    rows = []
    for level in levels:
        start, recovery_end = share_window(frames)
        config = build_config({"specimen.motion": level, "specimen.frames": frames,
                               "start": start, "recovery_end": recovery_end,
                               "conditions": list(CONDITIONS)})
        table = animal_observations(config.specimen, 0)
        detections = animal_detections(config.specimen, 0)  # None: the observation rows
        for verifier in (FixedDistance(), RegisteredDistance(ambiguity_k=k, score=score,
                                                             track_window=track_window,
                                                             merge_k=merge_k)):
            scored, _, _ = score_conditions(table, config, verifier, "rec000", detections)
            error, score = error_array(scored), scored["score"].to_numpy()
            condition = scored["condition"].astype(str).to_numpy()
            row = {"data": level, "verifier": verifier.name, "ambiguity_k": None,
                   **six_and_nearby(scored),
                   "harder_auroc_abst": {name: auroc_abstain_as_error(
                       error[condition == name], score[condition == name]) for name in HARDER}}
            if isinstance(verifier, RegisteredDistance):
                row["ambiguity_k"] = k
                row["ambiguous_rows"] = sum(c.ambiguous for c in verifier.abstentions)
                row["missing_evidence_rows"] = sum(c.missing_evidence for c in verifier.abstentions)
                row["contradicted_rows"] = sum(c.contradicted for c in verifier.abstentions)
                row["merged_rows"] = sum(c.merged for c in verifier.abstentions)
            rows.append(row)
    return rows


#: The fewest neurons present in both frames of a pair: the swaps exchange two.
MIN_SHARED_NEURONS = 2


def load_pair(folder: Path, z_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``pts_gt``, ``pts_tar`` of one example as float64 copies, z multiplied by ``z_scale``.

    Refused (:class:`InputError`): a file that is not a ``.npy`` array (an ``.npz`` archive,
    broken zip bytes), a shape other than ``(n, 2)`` / ``(n, 3)``, a dtype other than integers
    or floats (complex coordinates would lose their imaginary part), infinite coordinates, and
    fewer than ``MIN_SHARED_NEURONS`` neurons present (no NaN) in both frames.
    """
    arrays = []
    for name in ("pts_gt.npy", "pts_tar.npy"):
        path = folder / name
        try:
            array = np.load(check_npy(path), allow_pickle=False)
        except NPY_LOAD_ERRORS as exc:
            raise InputError(f"cannot read a numpy array ({' '.join(str(exc).split())})",
                             source=str(path)) from None
        if isinstance(array, np.lib.npyio.NpzFile):
            array.close()
            raise InputError("a .npz archive, not a .npy array (save it with np.save)",
                             source=str(path))
        if array.ndim != 2 or array.shape[1] not in (2, 3) or array.dtype.kind not in "iuf":
            raise InputError(f"expected a numeric (n, 2) or (n, 3) array of real numbers, got "
                             f"{array.dtype} {array.shape}", source=str(path))
        arrays.append(array.astype(np.float64))
    gt, tar = arrays
    if gt.shape != tar.shape:
        raise InputError(f"pts_gt {gt.shape} and pts_tar {tar.shape} differ in shape; row i "
                         "must be the same neuron in both", source=str(folder))
    if np.isinf(gt).any() or np.isinf(tar).any():
        raise InputError("infinite coordinates (use a NaN row for a missing neuron)", source=str(folder))
    if (np.abs(gt) > MAX_COORDINATE_UM).any() or (np.abs(tar) > MAX_COORDINATE_UM).any():
        raise InputError(f"coordinates beyond +-{MAX_COORDINATE_UM:g} um are implausibly large",
                         source=str(folder))
    shared = int((~np.isnan(gt).any(1) & ~np.isnan(tar).any(1)).sum())
    if shared < MIN_SHARED_NEURONS:
        raise InputError(f"needs at least {MIN_SHARED_NEURONS} neurons present in both frames "
                         f"(rows without NaN in pts_gt and pts_tar), found {shared}",
                         source=str(folder))
    if gt.shape[1] == 3:
        gt[:, 2] *= z_scale
        tar[:, 2] *= z_scale
    return gt, tar


def pair_conditions(gt: np.ndarray, tar: np.ndarray, seed: int = 0) -> dict[str, pd.DataFrame]:
    """clean / random / nearby two-frame tables of one example (identity = row index)."""
    present0 = np.flatnonzero(~np.isnan(gt).any(1))
    present1 = np.flatnonzero(~np.isnan(tar).any(1))
    both = np.intersect1d(present0, present1)
    columns = ["x_um", "y_um", "z_um"][:gt.shape[1]]

    def table(ids1: np.ndarray, error1: np.ndarray) -> pd.DataFrame:
        frame0 = pd.DataFrame({"frame": 0, "detection": present0, "pred_id": present0, "error": 0.0})
        frame0[columns] = gt[present0]
        frame1 = pd.DataFrame({"frame": 1, "detection": present1, "pred_id": ids1, "error": error1})
        frame1[columns] = tar[present1]
        out = pd.concat([frame0, frame1], ignore_index=True)
        out["recording"], out["pred_valid"] = "pair", True
        return out

    clean_error = np.where(np.isin(present1, present0), 0.0, np.nan)  # no anchor: unlabelled

    def swapped(partner: np.ndarray) -> pd.DataFrame:
        ids = present1.copy()
        moved = np.isin(present1, both)
        ids[moved] = partner[np.searchsorted(both, present1[moved])]
        return table(ids, np.where(ids != present1, 1.0, clean_error))

    order = np.random.Generator(np.random.PCG64(seed)).permutation(both)
    random_partner = both.copy()
    first, second = order[0::2], order[1::2]
    random_partner[np.searchsorted(both, first[:len(second)])] = second
    random_partner[np.searchsorted(both, second)] = first[:len(second)]
    distance = np.linalg.norm(tar[both][:, None] - tar[both][None], axis=-1)
    np.fill_diagonal(distance, np.inf)
    nearest = distance.argmin(1) if len(both) > 1 else np.zeros(len(both), dtype=int)
    mutual = nearest[nearest] == np.arange(len(both))
    nearby_partner = np.where(mutual, both[nearest], both)
    return {"clean": table(present1, clean_error), "random": swapped(random_partner),
            "nearby": swapped(nearby_partner)}


def _pair_scores(conditions: dict[str, pd.DataFrame], verifier) -> dict[str, tuple]:
    """condition -> (error, score, margin or None, factor or None) over frame-1 rows
    (``factor``: registered_distance's ``last_factor``, the relative score's ``c / s_p``)."""
    out = {}
    for name, rows_of in conditions.items():
        score = verifier.score(rows_of.drop(columns="error"))
        rows = rows_of["frame"].to_numpy() == 1
        margin = getattr(verifier, "last_margin", None)
        factor = getattr(verifier, "last_factor", None)
        out[name] = (rows_of["error"].to_numpy()[rows], score[rows],
                     None if margin is None else margin[rows],
                     None if factor is None else factor[rows])
    return out


def _population(scores: dict[str, tuple], kind: str, band: float = 0.0) -> tuple:
    """(error, score) of clean + ``kind`` rows, abstaining where ``|margin| < band``."""
    parts = [scores["clean"], scores[kind]]
    error = np.concatenate([p[0] for p in parts])
    score = np.concatenate([p[1] if p[2] is None else np.where(np.abs(p[2]) < band, np.nan, p[1])
                            for p in parts])
    return error, score


#: Held-in AUROC* values closer than this count as tied (:func:`choose_candidate`): on
#: pairs of 20-90 neurons a difference this small says nothing about the held-out example.
TIE_TOLERANCE = 0.005
#: The verifier's declared settings, against which :func:`departures` counts.
DEFAULT_CHOICE = Choice(RegistrationSettings())


def departures(choice: Choice, quantile: float | None) -> int:
    """How many of a candidate's choices differ from the declared defaults: ``beta``,
    ``lambda``, affine part, outlier weight ``w``, first-frame ``sigma`` (those of
    ``RegistrationSettings()``), z scale x1 and no uniqueness abstention (``quantile`` None)."""
    s, d = choice.settings, DEFAULT_CHOICE.settings
    return (sum(getattr(s, f) != getattr(d, f)
                for f in ("beta", "lam", "affine", "outlier_weight", "first_frame_sigma"))
            + (choice.z_scale != DEFAULT_CHOICE.z_scale) + (quantile is not None))


def choose_candidate(held_in: np.ndarray, departure: np.ndarray,
                     tolerance: float = TIE_TOLERANCE) -> int:
    """The leave-one-out choice among candidates, from their held-in results alone.

    ``held_in[c, j]`` = random-swap AUROC* of candidate ``c`` on held-in example ``j``
    (NaN = undefined); ``departure[c]`` = :func:`departures`. In turn, each step keeping
    the candidates of the previous one that pass it:

    1. median over the held-in examples ``>= max median - tolerance`` (the median is robust
       to one example the registration cannot handle);
    2. worst held-in example (minimum) ``>= max minimum - tolerance`` (among equally good
       medians, the setting that fails least where it fails);
    3. fewest ``departure`` from the declared defaults (which were chosen on other data);
    4. the first in grid order.

    A candidate with an undefined held-in value never passes step 1 or 2.
    """
    held_in = np.asarray(held_in, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        median, worst = np.median(held_in, axis=1), held_in.min(axis=1)
    if not np.isfinite(median).any():
        raise InputError("no candidate setting has a defined AUROC* on the held-in examples")
    keep = median >= np.nanmax(median) - tolerance
    keep &= worst >= np.nanmax(np.where(keep, worst, np.nan)) - tolerance
    departure = np.asarray(departure)
    keep &= departure == departure[keep].min()
    return int(np.flatnonzero(keep)[0])


def pair_evidence(folder: Path, grid=FULL_GRID, score: str = DEFAULT_SCORE,
                  track_window: int = DEFAULT_TRACK_WINDOW,
                  merge_k: float = DEFAULT_MERGE_K) -> list[dict]:
    """Part 2: one row per (example, verifier); settings chosen leave-one-out over ``grid``
    (:func:`choose_candidate`)."""
    return pair_rows(*pair_scores(folder, grid, score, track_window, merge_k), grid)


def pair_scores(folder: Path, grid=FULL_GRID, score: str = DEFAULT_SCORE,
                track_window: int = DEFAULT_TRACK_WINDOW,
                merge_k: float = DEFAULT_MERGE_K) -> tuple[dict, dict]:
    """Every example's conditions per z scale, and ``registered_distance``'s scores per
    (example, grid index): (scores, sigma of frame 1, clean ``d / sigma``)."""
    examples = sorted(p for p in Path(folder).iterdir() if p.is_dir())
    if len(examples) < 2:
        raise InputError("needs at least two example folders (settings are chosen on the "
                         "others)", source=str(folder))
    z_scales = sorted({c.z_scale for c in grid})
    by_scale = {z: {p.name: pair_conditions(*load_pair(p, z)) for p in examples} for z in z_scales}
    cache = {}
    for name in by_scale[z_scales[0]]:
        for index, choice in enumerate(grid):
            conds = by_scale[choice.z_scale][name]
            verifier = RegisteredDistance(ambiguity_k=0.0, settings=choice.settings, score=score,
                                          track_window=track_window, merge_k=merge_k)
            scores = _pair_scores(conds, verifier)
            _, registration = verifier.register(conds["clean"].drop(columns="error"))
            sigma = float(registration.sigma[1])
            error, clean, _, factor = scores["clean"]
            # the band's d / sigma is of the plain distance whatever the score: divide the
            # clean rows' factor (1 for the distance score) back out
            cache[name, index] = (scores, sigma, (clean / factor)[error == 0] / sigma)
    return by_scale, cache


def pair_rows(by_scale: dict, cache: dict, grid, choose=choose_candidate) -> list[dict]:
    """The rows of :func:`pair_evidence` from :func:`pair_scores` (``choose`` picks a
    candidate from ``(held_in, departures)``)."""
    z_scales = sorted(by_scale)
    names = list(by_scale[z_scales[0]])
    candidates = list(itertools.product(range(len(grid)), QUANTILES))
    departure = np.array([departures(grid[index], q) for index, q in candidates])

    def k_of(others, index, quantile):
        if quantile is None:
            return 0.0
        return float(np.quantile(np.concatenate([cache[o, index][2] for o in others]), quantile))

    rows = []
    for name in names:
        others = [o for o in names if o != name]
        held_in = np.array([[_defined(auroc_abstain_as_error(*_population(
            cache[o, index][0], "random", k_of(others, index, quantile) * cache[o, index][1])))
            for o in others] for index, quantile in candidates])
        best, quantile = candidates[choose(held_in, departure)]
        k = k_of(others, best, quantile)
        scores, sigma, _ = cache[name, best]
        fixed = _pair_scores(by_scale[1.0 if 1.0 in by_scale else z_scales[0]][name], FixedDistance())
        chosen = grid[best].describe() + (", no abstention" if quantile is None else
                                          f", k {fmt(k)} (clean d/sigma quantile {quantile})")
        for verifier, source, band, setting in (("fixed_distance", fixed, 0.0, ""),
                                                ("registered_distance", scores, k * sigma, chosen)):
            rows.append({"data": name, "verifier": verifier, "setting": setting,
                         **{kind: summary(*_population(source, kind, band))
                            for kind in ("random", "nearby")}})
    return rows


def _defined(value) -> float:
    return np.nan if value is None else float(value)


def _cell(value) -> str:
    return fmt(value, undefined="n/a")


SPECIMEN_COLUMNS = ("data", "verifier", "pooled.auroc", "pooled.auroc_abst", "pooled.auprc",
                    "pooled.cov_at_fcr1", "nearby.auroc", "nearby.auroc_abst", "nearby.auprc",
                    "nearby.cov_at_fcr1", *(f"harder_auroc_abst.{h}" for h in HARDER))
RECORDING_COLUMNS = ("data", "verifier", "window.start", "window.recovery_end", "draws",
                     "pooled.auroc_abst", "pooled.auroc_abst_min",
                     "pooled.cov_at_fcr1", "pooled.cov_at_fcr1_min", "nearby.auroc_abst",
                     "nearby.auroc_abst_min")
PAIR_COLUMNS = ("data", "verifier", "setting", "random.auroc", "random.auroc_abst",
                "random.auprc", "random.cov_at_fcr1", "nearby.auroc_abst", "nearby.auprc",
                "nearby.cov_at_fcr1")


def column_label(column: str) -> str:
    """Readable header of a dotted column: ``pooled.auroc_abst`` -> ``pooled AUROC*``."""
    group, _, metric = column.rpartition(".")
    if group == "harder_auroc_abst":
        return f"{metric.replace('_', ' ')} AUROC*"
    names = {"auroc": "AUROC", "auroc_abst": "AUROC*", "auprc": "AUPRC",
             "cov_at_fcr1": "cov@1%", "auroc_abst_min": "AUROC* min",
             "cov_at_fcr1_min": "cov@1% min"}
    return f"{group} {names.get(metric, metric)}".strip()


def table_rows(rows: list[dict], columns) -> list[list[str]]:
    """Formatted cells of ``rows`` for dotted ``columns`` (``pooled.auroc`` = row[pooled][auroc])."""
    def get(row, column):
        for part in column.split("."):
            row = row.get(part) if isinstance(row, dict) else None
        return row
    return [[_cell(get(row, c)) for c in columns] for row in rows]


def markdown(rows: list[dict], columns) -> str:
    lines = ["| " + " | ".join(map(column_label, columns)) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in table_rows(rows, columns)])


def render_evidence(evidence: dict) -> str:
    """The evidence report: one self-contained HTML page (no scripts, no remote resources)."""
    parts = ["<h1>Evidence, side by side: fixed_distance vs registered_distance</h1>"]
    if evidence["specimen"]:
        parts.append("<h2>Development specimen</h2><p>Six original corruption conditions pooled "
                     "(controls excluded) and <i>nearby swap</i> alone; AUROC* ranks abstained "
                     "rows most suspicious; cov@1% is the largest correct certified coverage "
                     "with false certification &le; 1 %.</p>"
                     + table([column_label(c) for c in SPECIMEN_COLUMNS],
                             table_rows(evidence["specimen"], SPECIMEN_COLUMNS)))
    if evidence["pairs"]:
        parts.append("<h2>Real point-set pairs</h2><p>Clean frame-1 rows + swapped rows; the "
                     "settings of each example chosen on the others (leave-one-out).</p>"
                     + table([column_label(c) for c in PAIR_COLUMNS],
                             [[html.escape(c) for c in r] for r in
                              table_rows(evidence["pairs"], PAIR_COLUMNS)]))
        parts += [f"<p>{html.escape(line)}</p>" for line in evidence["pair_summary"]]
    if evidence.get("recordings"):
        parts.append("<h2>Real recordings</h2><p>Every detection feeds the registration; the "
                     "suite drawn repeatedly (seeds seed, seed+1, ...): mean and minimum over "
                     "the draws.</p>"
                     + table([column_label(c) for c in RECORDING_COLUMNS],
                             [[html.escape(c) for c in r] for r in
                              table_rows(evidence["recordings"], RECORDING_COLUMNS)]))
    return page("trackverify evidence", "\n".join(parts))


def pair_summary(rows: list[dict]) -> list[str]:
    """One line per verifier: mean and min random-swap AUROC* and nearby AUROC*."""
    lines = []
    for verifier in dict.fromkeys(r["verifier"] for r in rows):
        random = [r["random"]["auroc_abst"] for r in rows if r["verifier"] == verifier]
        nearby = [r["nearby"]["auroc_abst"] for r in rows if r["verifier"] == verifier]
        lines.append(f"{verifier}: random-swap AUROC* mean {fmt(np.mean(random))}, min "
                     f"{fmt(np.min(random))}; nearby AUROC* mean {fmt(np.mean(nearby))}, min "
                     f"{fmt(np.min(nearby))}")
    return lines


def specimen_summary(rows: list[dict]) -> list[str]:
    """One line per (motion level, verifier) of :func:`specimen_evidence`: the six
    corruptions' AUROC* and cov@1% and nearby AUROC* (one draw each)."""
    return [f"specimen {r['data']} {r['verifier']}: six corruptions AUROC* "
            f"{fmt(r['pooled']['auroc_abst'])}, cov@1% {fmt(r['pooled']['cov_at_fcr1'])}; "
            f"nearby AUROC* {fmt(r['nearby']['auroc_abst'])}" for r in rows]


def recording_summary(rows: list[dict]) -> list[str]:
    """One line per (recording, verifier) of :func:`recording_evidence`: its draws and
    window, and mean and min over the draws of the six corruptions' AUROC* and cov@1% and of
    nearby AUROC*."""
    return [f"{r['data']} {r['verifier']} ({r['draws']} draw{'s' if r['draws'] > 1 else ''}, "
            f"window {r['window']['start']} / {r['window']['recovery_end']}, "
            f"{r['window']['rule']}): six corruptions AUROC* mean {fmt(r['pooled']['auroc_abst'])}, "
            f"min {fmt(r['pooled']['auroc_abst_min'])}; cov@1% mean "
            f"{fmt(r['pooled']['cov_at_fcr1'])}, min {fmt(r['pooled']['cov_at_fcr1_min'])}; "
            f"nearby AUROC* mean {fmt(r['nearby']['auroc_abst'])}, min "
            f"{fmt(r['nearby']['auroc_abst_min'])}" for r in rows]


def build_evidence(levels=LEVELS, frames: int = 1000, pairs: Path | None = None,
                   grid=FULL_GRID, recordings=(), draws: int = 8, score: str | None = None,
                   track_window: int | None = None, start: int | None = None,
                   recovery_end: int | None = None, merge_k: float | None = None) -> dict:
    """Every part (each may be skipped: no levels, no pairs folder, no recordings);
    ``score`` = registered_distance's score (None: its default, :data:`DEFAULT_SCORE`),
    ``track_window`` its track pooling window (None: its default,
    :data:`DEFAULT_TRACK_WINDOW`), ``merge_k`` its merged-anchor factor (None: its default,
    :data:`DEFAULT_MERGE_K`); ``start`` / ``recovery_end`` the recordings' corruption
    window (None: :func:`evidence_window`'s rule)."""
    kind = DEFAULT_SCORE if score is None else score
    h = DEFAULT_TRACK_WINDOW if track_window is None else track_window
    m = DEFAULT_MERGE_K if merge_k is None else merge_k
    with threadpool_limits(1):
        specimen = specimen_evidence(levels, frames, kind, h, m) if levels else []
        rows = pair_evidence(pairs, grid, kind, h, m) if pairs is not None else []
        real = [row for folder in recordings
                for row in recording_evidence(folder, draws, kind, h, start, recovery_end, m)]
    out = {"specimen": specimen, "pairs": rows, "pair_summary": pair_summary(rows) if rows else []}
    if real:  # only when asked: earlier evidence.json files keep their bytes
        out["recordings"] = real
    if score is not None:  # likewise
        out["registered_score"] = score
    if track_window is not None:  # likewise
        out["registered_track_window"] = track_window
    if merge_k is not None:  # likewise
        out["registered_merge_k"] = merge_k
    return out
