"""Likely label errors in reference tracks, from the reference alone.

A reference is not causal, so each labelled observation (track ``i``, frame ``t``) is predicted
from the frames around it, identity-free in the sense that only the labels themselves are read:

1. **Prediction from one frame.** For a nearby frame ``s`` (the ``window`` nearest present
   frames before and after ``t``), the ``neighbours`` tracks nearest ``i`` in ``s`` that are
   labelled in both ``s`` and ``t`` give a local affine motion (ridge-regularised, Huber-
   reweighted: :func:`predict_from`); ``i``'s prediction ``p_i(s)`` is where it carries
   ``x_i(s)``. Tracks unlabelled in ``t`` are predicted too (their place in ``t``).
2. **Residual.** ``e_s = |x_i(t) - p_i(s)|``. A side's residual is the largest ``e_s`` of its
   frames; the row's residual ``r`` is the smaller side's (so one wrong label in ``t +- 1``, which
   spoils one side, does not flag ``t``). With one side only (a track's first or last frames,
   the anchor frame), ``r`` is that side's smallest ``e_s`` (every following frame must
   contradict the label).
3. **Strength.** ``z = (r - median r) / (1.4826 MAD r)`` over the recording's rows, the recording's
   own residual distribution.
4. **Rule** (fixed on the development half, docs/guide/reference-check.md): a row is questioned when
   ``z >= z_min`` (default 3.5, the modified z-score outlier cut of Iglewicz and Hoaglin) and the detection nearest ``i``'s prediction ``p_i`` (the median of
   its ``p_i(s)``) is another one, at most ``ratio`` (default 0.5) times as far from ``p_i`` as the
   labelled one: the label is far from where the frames around put it and something else sits there.
   A ``displaced`` label (below) names no neuron's place it came from, so it needs a second,
   motion-free reading too (:func:`pair_reading`): in at least ``pair_support`` (default 3/4) of
   the ``window`` frames around where the track is labelled (at least two), a detection lies
   nearer where the labelled detection's neuron would be if the label belonged on the
   alternative detection than where the alternative's neuron would be if the label were right;
   or, without that reading, ``z >= displaced_factor * z_min`` (default 7).
5. **Kind.** The labelled detection is ``q``'s place when it is nearer ``p_q`` than ``p_i`` and
   within half the recording's median neighbour spacing of ``p_q``. ``one_sided``: ``q`` carries
   no label in ``t``; ``crossed``: ``q``'s label sits at ``i``'s place (both rows questioned, one
   finding); ``duplicate``: ``q`` is labelled elsewhere too (one neuron's place carries two
   labels' worth of detections); ``displaced``: the label sits on no tracked neuron's place (an
   unlabelled detection). A finding in the recording's first frame is ``anchor``: its pattern is
   kept in ``pattern``. Questioned rows of one track in consecutive frames with the same kind and
   partner form one finding.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

COORDS = ["x_um", "y_um", "z_um"]
KINDS = ("one_sided", "duplicate", "crossed", "displaced", "anchor")


@dataclass(frozen=True)
class CheckSettings:
    """The rule's settings (docs/guide/reference-check.md); the defaults are the stated rule."""

    window: int = 2
    neighbours: int = 6
    z_min: float = 3.5
    ratio: float = 0.5
    displaced_factor: float = 2.0
    pair_support: float = 0.75

    def as_dict(self) -> dict:
        return {"window": self.window, "neighbours": self.neighbours, "z_min": self.z_min,
                "ratio": self.ratio, "displaced_factor": self.displaced_factor,
                "pair_support": self.pair_support}


def _cube(obs: pd.DataFrame, frames: np.ndarray, tracks: np.ndarray, values: np.ndarray) -> np.ndarray:
    cube = np.full((len(frames), len(tracks), values.shape[1]), np.nan)
    cube[np.searchsorted(frames, obs["frame"].to_numpy()),
         np.searchsorted(tracks, obs["track"].to_numpy())] = values
    return cube


def predict_from(P: np.ndarray, a: int, b: int, neighbours: int, ridge: float = 50.0,
                 huber_um: float = 2.0) -> np.ndarray:
    """Every track's predicted place in frame index ``a`` from frame index ``b`` (NaN where the
    track is absent in ``b`` or fewer than two neighbours are labelled in both frames).

    For track ``i`` and its ``neighbours`` nearest tracks ``j`` in ``b`` labelled in both frames:
    ``d_j = x_j(a) - x_j(b)`` is fitted as ``(x_j(b) - x_i(b)) B + c`` by least squares with a
    ridge penalty ``ridge * |B|^2`` on the linear part (a local affine motion that falls back to a
    translation when the neighbours do not determine it), reweighted twice with Huber weights
    ``min(1, huber_um / residual)`` so one wrong neighbour barely moves it; the prediction is
    ``x_i(b) + c``."""
    both = ~np.isnan(P[a, :, 0]) & ~np.isnan(P[b, :, 0])
    here = ~np.isnan(P[b, :, 0])
    out = np.full(P.shape[1:], np.nan)
    if both.sum() < 2 or not here.any():
        return out
    source, partners = np.flatnonzero(here), np.flatnonzero(both)
    distance = np.linalg.norm(P[b, source][:, None] - P[b, partners][None], axis=2)
    distance[source[:, None] == partners[None, :]] = np.inf
    m = min(neighbours, len(partners))
    nearest = np.argsort(distance, axis=1, kind="stable")[:, :m]
    usable = np.take_along_axis(distance, nearest, axis=1) < np.inf
    dims = P.shape[2]
    X = np.concatenate([P[b, partners][nearest] - P[b, source][:, None],
                        np.ones(nearest.shape + (1,))], axis=2)
    D = (P[a, partners] - P[b, partners])[nearest]
    penalty = ridge * np.diag(np.r_[np.ones(dims), 0.0]) + 1e-9 * np.eye(dims + 1)
    weight = usable.astype(np.float64)
    for _ in range(2):
        coef = np.linalg.solve(np.einsum("nmi,nm,nmj->nij", X, weight, X) + penalty,
                               np.einsum("nmi,nm,nmj->nij", X, weight, D))
        residual = np.linalg.norm(D - np.einsum("nmi,nij->nmj", X, coef), axis=2)
        weight = usable / np.maximum(1.0, residual / huber_um)
    enough = usable.sum(axis=1) >= 2
    out[source[enough]] = P[b, source[enough]] + coef[enough, dims]
    return out


def _offsets(n_frames: int, window: int) -> list[int]:
    return [o for k in range(1, window + 1) for o in (-k, k) if k < n_frames]


def _check_layout(P: np.ndarray, frames: np.ndarray, settings: CheckSettings,
                  obs: pd.DataFrame) -> None:
    """Refuse, before any prediction, a recording whose :func:`predict_from` would lay out
    more than :data:`~trackverify.io.bounded.MAX_LAYOUT_CELLS` distances: for each frame ``b``
    and frame ``a`` within the window, the tracks present in ``b`` x those present in both
    (x axes). One frame of 10^4 tracks beside another asked for 1.6 GB; 10^5, for 149 GiB."""
    from trackverify.io.bounded import check_pair_layout

    present = ~np.isnan(P[:, :, 0])
    here = present.sum(axis=1)
    worst = (0, 0, 0)  # cells, frame index b, tracks in both
    for o in _offsets(len(P), settings.window):
        a = np.arange(max(0, -o), min(len(P), len(P) - o))
        both = (present[a] & present[a + o]).sum(axis=1)
        cells = here[a + o] * both
        if len(cells) and int(cells.max()) > worst[0]:
            k = int(np.argmax(cells))
            worst = (int(cells[k]), int(a[k] + o), int(both[k]))
    if worst[0]:
        name = obs["recording"].iloc[0] if "recording" in obs.columns and len(obs) else None
        check_pair_layout(int(here[worst[1]]), P.shape[2], partners=worst[2],
                          where=f"frame {frames[worst[1]]}", recording=name,
                          what="the reference check (each track's nearest neighbours)")


def residuals(P: np.ndarray, settings: CheckSettings) -> tuple[np.ndarray, np.ndarray]:
    """``(r, prediction)``: each (frame, track)'s residual (NaN where undefined) and its
    predicted place (the median of its predictions from the frames around)."""
    F, N, _ = P.shape
    offsets = _offsets(F, settings.window)
    preds = np.full((len(offsets), F, N, P.shape[2]), np.nan)
    for k, o in enumerate(offsets):
        for a in range(max(0, -o), min(F, F - o)):
            preds[k, a] = predict_from(P, a, a + o, settings.neighbours)
    e = np.linalg.norm(P[None] - preds, axis=3)
    sign = np.array(offsets, dtype=np.int64)
    nothing = np.full((F, N), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sides = [e[sign < 0], e[sign > 0]]
        side_max = np.stack([np.nanmax(x, axis=0) if len(x) else nothing for x in sides])
        side_min = np.stack([np.nanmin(x, axis=0) if len(x) else nothing for x in sides])
        two = ~np.isnan(side_max).any(axis=0)
        r = np.where(two, np.nanmin(side_max, axis=0), np.nanmin(side_min, axis=0))
        prediction = np.nanmedian(preds, axis=0) if len(offsets) else np.full(P.shape, np.nan)
    return r, prediction


def robust_z(r: np.ndarray) -> np.ndarray:
    """``(r - median) / (1.4826 MAD)`` over the finite residuals (NaN stays NaN)."""
    finite = r[np.isfinite(r)]
    if not len(finite):
        return np.full_like(r, np.nan)
    centre = np.median(finite)
    scale = 1.4826 * np.median(np.abs(finite - centre))
    return (r - centre) / (scale if scale > 0 else np.finfo(float).eps)


def median_spacing(P: np.ndarray) -> float:
    """The median over frames and tracks of the nearest-neighbour distance."""
    spacing = []
    for frame in P:
        points = frame[~np.isnan(frame[:, 0])]
        if len(points) > 1:
            spacing.append(cKDTree(points).query(points, k=2)[0][:, 1])
    return float(np.median(np.concatenate(spacing))) if spacing else float("nan")


def pair_reading(P: np.ndarray, a: int, i: int, x: np.ndarray, y: np.ndarray,
                 points: dict, frames: np.ndarray, window: int) -> tuple[int, int]:
    """``(agree, read)``: a motion-free reading of the hypothesis that track ``i``'s label in
    frame index ``a``, on the detection at ``x``, belongs on the detection at ``y``.

    Close neurons keep their offset over a frame or two. So in each of the ``window`` nearest
    frames ``s`` before and after ``a`` where ``i`` is labelled (at ``x_i(s)``, and the frame has
    detections), if the label belongs on ``y``, the neuron at ``x`` sits near
    ``x_i(s) + (x - y)``; if the label is right, the neuron at ``y`` sits near
    ``x_i(s) + (y - x)``. The frame agrees with the hypothesis when a detection lies nearer the
    first place than the second. ``read`` counts the frames read."""
    agree = read = 0
    for o in _offsets(len(P), window):
        b = a + o
        if not 0 <= b < len(P) or np.isnan(P[b, i, 0]) or int(frames[b]) not in points:
            continue
        here = points[int(frames[b])]
        wrong = np.linalg.norm(here - (P[b, i] + (x - y)), axis=1).min()
        right = np.linalg.norm(here - (P[b, i] + (y - x)), axis=1).min()
        read += 1
        agree += bool(wrong < right)
    return agree, read


def _frame_points(detections: pd.DataFrame | None, obs: pd.DataFrame, coords: list[str]) -> dict:
    source = obs if detections is None else detections
    frames = source["frame"].to_numpy()
    points = source[coords].to_numpy(dtype=np.float64)
    order = np.argsort(frames, kind="stable")
    cuts = np.flatnonzero(np.diff(frames[order])) + 1
    return {int(frames[g[0]]): points[g] for g in np.split(order, cuts) if len(g)}


def check_recording(obs: pd.DataFrame, detections: pd.DataFrame | None = None,
                    settings: CheckSettings = CheckSettings()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rows, findings)`` for one recording's reference (``frame, track, x_um, y_um[, z_um]``
    and optionally ``detection``): per row its residual, strength and whether it is questioned,
    and the findings (module docstring)."""
    coords = [c for c in COORDS if c in obs.columns]
    twice = obs.duplicated(["frame", "track"], keep=False).to_numpy()
    if twice.any():  # one label on two detections in a frame: a duplicate by itself
        rows, findings = check_recording(obs[~twice], detections, settings)
        rows = rows.reindex(obs.index)
        rows.loc[twice, "questioned"] = True
        extra = [{"kind": "anchor" if t == obs["frame"].min() else "duplicate",
                  "pattern": "duplicate", "frames": [int(t)], "tracks": [k], "partner": pd.NA,
                  "detections": sorted(g["detection"].tolist()) if "detection" in g else [],
                  "rows": g.index.tolist(), "strength": np.nan, "residual_um": np.nan,
                  "label_to_prediction_um": np.nan, "alternative_to_prediction_um": np.nan,
                  "label_to_partner_prediction_um": np.nan, "pair_agree": pd.NA,
                  "pair_read": pd.NA, "prediction": None}
                 for (t, k), g in obs[twice].groupby(["frame", "track"], sort=True)]
        return rows, pd.concat([findings, pd.DataFrame(extra, columns=findings.columns)],
                               ignore_index=True)
    frames = np.unique(obs["frame"].to_numpy())
    tracks = np.unique(obs["track"].to_numpy())
    P = _cube(obs, frames, tracks, obs[coords].to_numpy(dtype=np.float64))
    _check_layout(P, frames, settings, obs)
    r, prediction = residuals(P, settings)
    z = robust_z(r)
    spacing = median_spacing(P)
    a_all = np.searchsorted(frames, obs["frame"].to_numpy())
    i_all = np.searchsorted(tracks, obs["track"].to_numpy())
    rows = pd.DataFrame({"residual_um": r[a_all, i_all], "strength": z[a_all, i_all]},
                        index=obs.index)
    rows["questioned"] = False
    candidates = np.flatnonzero(np.nan_to_num(z[a_all, i_all], nan=-np.inf) >= settings.z_min)
    points = _frame_points(detections, obs, coords)
    detection = obs["detection"].to_numpy() if "detection" in obs.columns else None
    hits = []
    for row in candidates:
        a, i = a_all[row], i_all[row]
        p, x = prediction[a, i], P[a, i]
        label_off = float(np.linalg.norm(x - p))
        frame_points = points.get(int(frames[a]))
        if frame_points is None or not np.isfinite(p).all():
            continue
        alternative, nearest = cKDTree(frame_points).query(p)
        alternative = float(alternative)
        if alternative > settings.ratio * label_off:
            continue
        to_place = np.linalg.norm(prediction[a] - x, axis=1)
        to_place[i] = np.inf
        q = int(np.nanargmin(np.nan_to_num(to_place, nan=np.inf)))
        partner_off = float(to_place[q])
        pattern, partner, agree, read = "displaced", None, None, None
        if partner_off < label_off and partner_off < spacing / 2:
            partner = q
            if np.isnan(P[a, q, 0]):
                pattern = "one_sided"
            elif np.linalg.norm(P[a, q] - p) < spacing / 2:
                pattern = "crossed"
            else:
                pattern = "duplicate"
        else:  # no neuron's place names where the label came from: a second reading
            agree, read = pair_reading(P, a, i, x, frame_points[nearest], points, frames,
                                       settings.window)
            supported = read >= 2 and agree >= settings.pair_support * read
            if not supported and z[a, i] < settings.displaced_factor * settings.z_min:
                continue
        hits.append({"row": obs.index[row], "a": int(a), "i": int(i), "pattern": pattern,
                     "partner": partner, "residual_um": float(r[a, i]), "strength": float(z[a, i]),
                     "label_to_prediction_um": label_off,
                     "alternative_to_prediction_um": alternative,
                     "label_to_partner_prediction_um": partner_off if partner is not None else None,
                     "pair_agree": agree, "pair_read": read,
                     "detection": None if detection is None else detection[row],
                     "prediction": [float(v) for v in p]})
    # a crossed pair questions both labels, even when only one side passed the cut
    row_of = pd.Series(obs.index, index=a_all * len(tracks) + i_all)
    for h in [h for h in hits if h["pattern"] == "crossed"]:
        h["partner_row"] = row_of[h["a"] * len(tracks) + h["partner"]]
    questioned = [h["row"] for h in hits] + [h["partner_row"] for h in hits if "partner_row" in h]
    rows.loc[questioned, "questioned"] = True
    return rows, _findings(hits, frames, tracks)


def _findings(hits: list[dict], frames: np.ndarray, tracks: np.ndarray) -> pd.DataFrame:
    """Consecutive questioned rows of one track (or one crossed pair) with one pattern and
    partner, as findings ranked by strength."""
    def key(h):
        if h["pattern"] == "crossed":
            return ("crossed", tuple(sorted((h["i"], h["partner"]))), -1)
        return (h["pattern"], (h["i"],), -1 if h["partner"] is None else h["partner"])

    runs: list[list[dict]] = []
    for h in sorted(hits, key=lambda h: (key(h), h["a"])):
        last = runs[-1][-1] if runs else None
        if last is not None and key(last) == key(h) and h["a"] - last["a"] <= 1:
            runs[-1].append(h)
        else:
            runs.append([h])
    found = []
    for group in runs:
        first = group[0]
        pattern = first["pattern"]
        kind = "anchor" if first["a"] == 0 else pattern
        names = sorted({int(tracks[h["i"]]) for h in group})
        partner = first["partner"]
        partner_name = None if partner is None else int(tracks[partner])
        involved = sorted(set(names) | ({partner_name} if pattern == "crossed" else set()))
        frame_list = sorted({int(frames[h["a"]]) for h in group})
        best = max(group, key=lambda h: h["strength"])
        found.append({
            "kind": kind, "pattern": pattern, "frames": frame_list, "tracks": involved,
            "partner": partner_name,
            "detections": sorted({h["detection"] for h in group if h["detection"] is not None}),
            "rows": sorted({r for h in group for r in (h["row"], h.get("partner_row", h["row"]))}),
            "strength": best["strength"], "residual_um": best["residual_um"],
            "label_to_prediction_um": best["label_to_prediction_um"],
            "alternative_to_prediction_um": best["alternative_to_prediction_um"],
            "label_to_partner_prediction_um": best["label_to_partner_prediction_um"],
            "pair_agree": best["pair_agree"], "pair_read": best["pair_read"],
            "prediction": first["prediction"]})
    columns = ["kind", "pattern", "frames", "tracks", "partner", "detections", "rows", "strength",
               "residual_um", "label_to_prediction_um", "alternative_to_prediction_um",
               "label_to_partner_prediction_um", "pair_agree", "pair_read", "prediction"]
    table = pd.DataFrame(found, columns=columns)
    for c in ("partner", "pair_agree", "pair_read"):
        table[c] = table[c].astype("Int64")
    order = np.lexsort((table["frames"].map(min).to_numpy() if len(table) else [],
                        -table["strength"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class ReferenceCheck:
    """The check of a reference: ``rows`` (aligned with the observations: ``residual_um``,
    ``strength``, ``questioned``), ``findings`` (ranked) and the settings used."""

    rows: pd.DataFrame
    findings: pd.DataFrame
    settings: CheckSettings

    @property
    def kept(self) -> np.ndarray:
        """The rows the check does not question (a boolean mask over the observations)."""
        return ~self.rows["questioned"].to_numpy(dtype=bool)

    def summary(self) -> dict:
        counts = self.findings["kind"].value_counts()
        n, questioned = len(self.rows), int(self.rows["questioned"].sum())
        return {"rule": self.settings.as_dict(), "rows": n, "rows_questioned": questioned,
                "rows_kept": n - questioned, "share_kept": (n - questioned) / n if n else None,
                "findings": len(self.findings),
                "findings_by_kind": {k: int(counts.get(k, 0)) for k in KINDS}}


def check_reference(observations: pd.DataFrame, detections: pd.DataFrame | None = None,
                    settings: CheckSettings = CheckSettings()) -> ReferenceCheck:
    """Check reference tracks for likely label errors, recording by recording.

    ``observations``: ``[recording,] frame, track, x_um, y_um[, z_um][, detection]``;
    ``detections`` (optional): every detection of each frame, labelled or not
    (``[recording,] frame, x_um, y_um[, z_um]``). The rule is the module docstring's.

    Example::

        >>> import pandas as pd
        >>> from trackverify.reference_check import check_reference
        >>> obs = pd.DataFrame({"frame": [0, 0, 1, 1], "track": [1, 2, 1, 2],
        ...                     "x_um": [0.0, 9.0, 0.5, 9.5], "y_um": [0.0, 0.0, 0.0, 0.0]})
        >>> check_reference(obs).summary()["rows_questioned"]
        0
    """
    obs = observations if "recording" in observations.columns else observations.assign(recording="")
    dets = detections
    if dets is not None and "recording" not in dets.columns:
        dets = dets.assign(recording="")
    all_rows, all_findings = [], []
    for name, group in obs.groupby("recording", sort=True):
        own = None if dets is None else dets[dets["recording"] == name]
        rows, findings = check_recording(group, own, settings)
        all_rows.append(rows)
        all_findings.append(findings.assign(recording=name))
    if not all_rows:  # no observation: nothing questioned, nothing found
        rows = pd.DataFrame({"residual_um": np.nan, "strength": np.nan, "questioned": False},
                            index=observations.index)
        empty = _findings([], np.array([]), np.array([]))
        return ReferenceCheck(rows, empty.assign(recording=[]).assign(rank=[]), settings)
    rows = pd.concat(all_rows).reindex(observations.index)
    findings = pd.concat(all_findings, ignore_index=True)
    order = np.argsort(-findings["strength"].to_numpy(), kind="stable")
    findings = findings.iloc[order].reset_index(drop=True)
    findings.insert(0, "rank", np.arange(1, len(findings) + 1))
    return ReferenceCheck(rows, findings, settings)


def evidence_sentence(finding: pd.Series) -> str:
    """The finding's evidence in one sentence."""
    frames = ", ".join(str(f) for f in finding["frames"])
    track = finding["tracks"][0] if finding["pattern"] != "crossed" else " and ".join(map(str, finding["tracks"]))
    head = (f"In frame(s) {frames}, label {track} sits {finding['label_to_prediction_um']:.1f} um from "
            f"where its neighbours' motion in the frames around puts it, and a detection lies "
            f"{finding['alternative_to_prediction_um']:.1f} um from that place")
    partner = finding["partner"]
    if not np.isfinite(finding["strength"]):
        return f"In frame {frames}, label {track} is on {len(finding['rows'])} rows (detections {finding['detections']})."
    pattern = finding["pattern"]
    if pattern in ("one_sided", "duplicate"):  # only these have a partner (a displaced label none)
        tail = (f"; the label is on neuron {partner}'s place "
                f"({finding['label_to_partner_prediction_um']:.1f} um), "
                + (f"and {partner} is unlabelled there" if pattern == "one_sided"
                   else "which is labelled elsewhere too"))
    else:
        tail = {"crossed": f"; labels {track} are exchanged",
                "displaced": "; the label is on no tracked neuron's place (an unlabelled detection)"}[pattern]
        if pattern == "displaced" and not pd.isna(finding.get("pair_read", pd.NA)):
            tail += (f"; in {finding['pair_agree']} of {finding['pair_read']} frames around, the "
                     f"neuron the label sits on is seen beside the labelled neuron (a second, "
                     f"motion-free reading)")
    anchor = " (the anchor frame: the following frames contradict it)" if finding["kind"] == "anchor" else ""
    return head + tail + anchor + "."


def check_anchor_layout(table: pd.DataFrame, id_column: str = "track",
                        anchor_frame: int | None = None,
                        settings: CheckSettings = CheckSettings()) -> None:
    """Refuse, before any work, a recording whose :func:`anchor_contradictions` would lay out
    more than :data:`~trackverify.io.bounded.MAX_LAYOUT_CELLS` distances, from the counts of
    rows per frame alone: over the frames ``a``, ``b`` of its anchor window, ``n_b x min(n_a,
    n_b)`` x axes, at least the layout :func:`predict_from` makes (the tracks present in ``b``
    x those present in both)."""
    from trackverify.io.bounded import check_pair_layout

    data = table if "recording" in table.columns else table.assign(recording="")
    if "pred_valid" in data.columns:
        data = data[data["pred_valid"].to_numpy(dtype=bool)]
    axes = sum(c in data.columns for c in COORDS)
    counts = data.groupby(["recording", "frame"], sort=True).size()
    for name, per_frame in counts.groupby(level=0, sort=True):
        frames = per_frame.index.get_level_values(1).to_numpy()
        first = frames[0] if anchor_frame is None else anchor_frame
        kept = frames >= first
        window = slice(0, settings.window + 1)
        frames, n = frames[kept][window], per_frame.to_numpy()[kept][window]
        if len(n) < 2:
            continue
        pairs = np.minimum(n[:, None], n[None, :])  # at most the tracks present in both
        np.fill_diagonal(pairs, 0)
        cells = n[:, None] * pairs.max(axis=1, keepdims=True)
        b = int(np.argmax(cells))
        check_pair_layout(int(n[b]), axes, partners=int(pairs[b].max()),
                          where=f"frame {frames[b]}", recording=name,
                          what="the reference check (each track's nearest neighbours)")


def anchor_contradictions(table: pd.DataFrame, detections: pd.DataFrame | None = None,
                          id_column: str = "track", anchor_frame: int | None = None,
                          settings: CheckSettings = CheckSettings()) -> pd.DataFrame:
    """The anchor frame's labels that the following frames contradict, per recording.

    ``table``: ``[recording,] frame, <id_column>, x_um, y_um[, z_um]`` (a reference, or a
    tracker's output whose anchor frame a person checked: ``id_column="pred_id"``). The check's
    rule on the anchor frame (each recording's first frame, or ``anchor_frame``) and the
    ``window`` frames after it (the anchor's residual is the smallest over those frames: every one
    must contradict it). Columns: ``recording, anchor_frame, id, pattern, partner, strength,
    label_to_prediction_um, contradicting_frames`` (the following frames that place the id
    elsewhere).
    """
    data = table if "recording" in table.columns else table.assign(recording="")
    if id_column != "track":
        data = data.drop(columns="track", errors="ignore").rename(columns={id_column: "track"})
    if "pred_valid" in data.columns:
        data = data[data["pred_valid"].to_numpy(dtype=bool)]
    out = []
    for name, group in data.groupby("recording", sort=True):
        frames = np.unique(group["frame"].to_numpy())
        first = frames[0] if anchor_frame is None else anchor_frame
        after = frames[frames >= first][:settings.window + 1]
        near = group[np.isin(group["frame"].to_numpy(), after)]
        own = None
        if detections is not None:
            dets = detections if "recording" in detections.columns else detections.assign(recording="")
            own = dets[(dets["recording"] == name) & np.isin(dets["frame"].to_numpy(), after)]
        _, findings = check_recording(near, own, settings)
        for f in findings[findings["kind"] == "anchor"].itertuples():
            track = f.tracks[0]
            later = near[(near["track"] == track) & (near["frame"] > first)]["frame"].tolist()
            out.append({"recording": name, "anchor_frame": int(first), "id": track,
                        "pattern": f.pattern, "partner": None if pd.isna(f.partner) else int(f.partner),
                        "strength": float(f.strength), "label_to_prediction_um": float(f.label_to_prediction_um),
                        "contradicting_frames": [int(v) for v in later]})
    columns = ["recording", "anchor_frame", "id", "pattern", "partner", "strength",
               "label_to_prediction_um", "contradicting_frames"]
    return pd.DataFrame(out, columns=columns)
