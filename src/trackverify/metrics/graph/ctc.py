"""The Cell Tracking Challenge's evaluation of CTC folders (track file + label images).

:func:`evaluate_ctc` reads a reference folder (``man_track.txt`` + ``man_track###.tif``,
or a ``*_GT`` folder holding ``TRA/`` and optionally ``SEG/``) and a result folder
(``res_track.txt`` + ``mask###.tif``) one frame at a time, validates both as the Challenge
validates results (:func:`trackverify.io.formats.ctc.validate_tracks`; the two folders must
hold the same frames, each pair of images of one shape) and matches them by the Challenge's
mask rule: a reference label is matched to the result label covering more than half of its
pixels in the same frame (:func:`trackverify.metrics.graph.matching.frame_overlaps`). Nodes are the
labels present in each image, edges the track links between consecutive frames and the
parent links of the track files (:mod:`trackverify.metrics.graph.tracks`).

Measures (Ulman et al. 2017, Matula et al. 2015; as py-ctcmetrics 1.3.3 computes them):

- AOGM and its components, DET, TRA, LNK (:func:`trackverify.metrics.graph.metrics.ctc_metrics`
  under ``definition``), CHOTA, and traccuracy's division metrics when the matching is
  one-to-one;
- ``BC(i)`` for ``i = 0..max_bc``: a result division (a track with two or more children in
  the track file) matches a reference division when their parents end at most ``i`` frames
  apart, both have the same number of children, the two parents are matched (the result
  parent uniquely) in the earlier end frame, and every reference daughter has a result
  daughter starting at most ``i`` frames apart and matched to it (uniquely) in the later of
  the two start frames. ``TP`` = matching pairs, ``FP = |div_res| - TP``,
  ``FN = |div_ref| - TP``; ``BC(i) = 2 P R / (P + R)`` with ``P = TP / max(TP + FP, 1)``,
  ``R = TP / max(TP + FN, 1)`` (0 when ``P + R = 0``); null without reference divisions;
  0 when the result has none;
- ``CCA``: tracks that start and end with a division; ``1 - max |F_ref - F_res|`` of the
  cumulative histograms of their lengths ``E - B``; null without such reference tracks, 0
  without such result tracks;
- ``CT = 2 T_rc / (T_r + T_c)``: ``T_rc`` reference tracks whose every node is matched
  (uniquely) to one and the same result track, which begins and ends in the same frames;
- ``TF``: each reference track's longest run of consecutive nodes matched (uniquely) to
  one result track, as a fraction of its length; taken per (result track, reference track)
  in ascending label order, a reference track keeps its best fraction, and a result track
  that covers one reference track whole is not credited to the reference tracks after it
  (the Challenge's order); the mean over reference tracks with a fraction > 0 (0 if none);
- ``SEG``: with reference segmentation images (``SEG/man_seg###.tif``, or planes
  ``SEG/man_seg_###_###.tif`` of 3-D frames), the Jaccard index of each reference segment
  and the result label covering more than half of it, averaged over all reference segments
  (0 for an unmatched one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.extras import require
from trackverify.metrics.graph import metrics
from trackverify.metrics.graph.evaluate import apply_sparse
from trackverify.metrics.graph.matching import frame_overlaps
from trackverify.metrics.graph.tracks import TrackGraph, build_track_graph
from trackverify.tables import lookup
from trackverify.io.formats.ctc import (IMAGE_NAME, read_label_image, read_track_table,
                                        track_file, validate_tracks)

SEG_NAME = re.compile(r"^man_seg_?(\d+)\.tiff?$", re.IGNORECASE)
SEG_SLICE = re.compile(r"^man_seg_(\d+)_(\d+)\.tiff?$", re.IGNORECASE)
"""3-D references may segment single planes: ``man_seg_T_Z.tif`` is plane ``Z`` of frame
``T``, compared with that plane of the result."""
MAX_BC = 3
"""BC(i) is reported for i = 0..3 (as py-ctcmetrics does by default)."""
MATCHING = "mask: a reference label is matched to the result label covering more than half " \
           "of its pixels in the same frame (the Cell Tracking Challenge rule)"


@dataclass(frozen=True)
class CtcFolder:
    """A CTC folder: its track file (``L B E P`` table), label images and, for a reference
    ``*_GT`` folder, its segmentation images (frame -> ``[(plane or None, path)]``)."""

    track_file: Path
    tracks: pd.DataFrame
    images: dict
    seg: dict


def _images(folder: Path, pattern: re.Pattern) -> dict:
    return dict(sorted((int(m.group(1)), p) for p in folder.iterdir()
                       if (m := pattern.match(p.name))))


def ctc_folder(path, reference: bool = False) -> CtcFolder:
    """The CTC folder at ``path`` (a track file, its folder, or a ``*_GT`` folder with
    ``TRA/`` and optionally ``SEG/``). A result may have no tracks (an empty track file and
    label images without labels: scored, every reference node missed); a ``reference``
    without tracks is refused."""
    path = Path(path)
    found = track_file(path)
    if found is None:
        raise InputError("no res_track.txt or man_track.txt here (nor in TRA/)", source=str(path))
    images = _images(found.parent, IMAGE_NAME)
    if not images:
        raise InputError("no label images (mask###.tif or man_track###.tif) beside the track "
                         "file", source=str(found))
    seg_dir = found.parent.parent / "SEG" if found.parent.name == "TRA" else None
    seg: dict = {}
    if seg_dir is not None and seg_dir.is_dir():
        seg = {t: [(None, path)] for t, path in _images(seg_dir, SEG_NAME).items()}
        for p in sorted(seg_dir.iterdir()):
            if m := SEG_SLICE.match(p.name):
                seg.setdefault(int(m.group(1)), []).append((int(m.group(2)), p))
    tracks = read_track_table(found)
    if reference and tracks.empty:
        raise InputError("the reference track file has no tracks (nothing to score against)",
                         source=str(found))
    return CtcFolder(found, tracks, images, seg)


@dataclass(frozen=True)
class CtcMatch:
    """Nodes (one per label per image, by frame then label) and the mask-rule matching
    ``(mg, mp)`` of reference node ``mg[k]`` to result node ``mp[k]``; ``seg_iou`` the
    Jaccard index of each matched segmentation pair, ``seg_total`` the reference segments."""

    gt_frame: np.ndarray
    gt_label: np.ndarray
    pred_frame: np.ndarray
    pred_label: np.ndarray
    mg: np.ndarray
    mp: np.ndarray
    seg_iou: np.ndarray
    seg_total: int


def _present(image: np.ndarray) -> np.ndarray:
    counts = np.bincount(image.ravel().astype(np.int64, copy=False)) if image.size else []
    present = np.flatnonzero(counts)
    return present[present > 0]


def match_folders(ref: CtcFolder, res: CtcFolder) -> CtcMatch:
    """Read both folders frame by frame, validate them, match by the mask rule."""
    tifffile = require("tifffile", "formats", "reading Cell Tracking Challenge label images")
    missing = sorted(set(ref.images) ^ set(res.images))
    if missing:
        t = missing[0]
        side, other = (res, ref) if t in ref.images else (ref, res)
        raise InputError(f"frame {t} has a label image in {other.track_file.parent} but none "
                         "here (both folders must hold the same frames)",
                         source=str(side.track_file.parent))
    frames, parts = sorted(ref.images), {k: [] for k in ("gf", "gl", "pf", "pl", "mf", "mg",
                                                         "mp")}
    for t in frames:
        g = read_label_image(tifffile, ref.images[t], ref.track_file.parent)
        p = read_label_image(tifffile, res.images[t], res.track_file.parent)
        if g.shape != p.shape:
            raise InputError(f"frame {t} is {p.shape} here but {g.shape} in the reference "
                             f"({ref.images[t].name})", source=str(res.images[t]))
        gl, pl, overlap, area, _ = frame_overlaps(g, p)
        win = 2 * overlap > area
        for key, values in (("gl", _present(g)), ("pl", _present(p)), ("mg", gl[win]),
                            ("mp", pl[win])):
            parts[key].append(values)
        parts["gf"].append(np.full(len(parts["gl"][-1]), t, dtype=np.int64))
        parts["pf"].append(np.full(len(parts["pl"][-1]), t, dtype=np.int64))
        parts["mf"].append(np.full(int(win.sum()), t, dtype=np.int64))
    cat = {k: np.concatenate(v).astype(np.int64) for k, v in parts.items()}
    validate_tracks(ref.tracks, cat["gf"], cat["gl"], ref.track_file, ref.images)
    validate_tracks(res.tracks, cat["pf"], cat["pl"], res.track_file, res.images)
    n = int(max(cat["gl"].max(initial=0), cat["pl"].max(initial=0))) + 1
    mg = lookup(cat["gf"] * n + cat["gl"], cat["mf"] * n + cat["mg"])
    mp = lookup(cat["pf"] * n + cat["pl"], cat["mf"] * n + cat["mp"])
    seg_iou, seg_total = _segmentation(tifffile, ref, res)
    return CtcMatch(cat["gf"], cat["gl"], cat["pf"], cat["pl"], mg, mp, seg_iou, seg_total)


def _segmentation(tifffile, ref: CtcFolder, res: CtcFolder) -> tuple[np.ndarray, int]:
    """Jaccard indices of the matched reference segments, and the number of segments."""
    ious, total = [], 0
    folder = ref.track_file.parent.parent / "SEG"
    for t, parts in sorted(ref.seg.items()):
        if t not in res.images:
            raise InputError(f"segmentation frame {t} has no result image",
                             source=str(parts[0][1]))
        p = read_label_image(tifffile, res.images[t], res.track_file.parent)
        g = np.stack([read_label_image(tifffile, path, folder) for _, path in parts])
        planes = [z for z, _ in parts]
        if planes[0] is None:  # one whole-frame image
            g = g[0]
        elif p.ndim != 3 or max(planes) >= p.shape[0]:
            raise InputError(f"plane {max(planes)} of frame {t} is segmented but the result "
                             f"image is {p.shape}", source=str(res.images[t]))
        else:
            p = p[planes]
        if g.shape != p.shape:
            raise InputError(f"frame {t} is {p.shape} here but {g.shape} in the segmentation",
                             source=str(res.images[t]))
        _, _, overlap, area, p_area = frame_overlaps(g, p)
        win = 2 * overlap > area
        ious.append(overlap[win] / (area[win] + p_area[win] - overlap[win]))
        total += len(_present(g))
    return (np.concatenate(ious) if ious else np.zeros(0)), total


def _graph(tracks: pd.DataFrame, frame: np.ndarray, label: np.ndarray, source: Path
           ) -> TrackGraph:
    parent = tracks.set_index("L")["P"].reindex(label).to_numpy()
    parent = pd.array(np.where(parent > 0, parent, 0), dtype="Int64")
    parent[np.asarray(parent == 0)] = pd.NA
    return build_track_graph(frame, label, parent, source=str(source), column="L")


def _divisions(tracks: pd.DataFrame):
    """Labels of tracks ending in a division (two or more children), their end frames, and
    each one's children and their start frames (in track-file order)."""
    L, B, E, P = (tracks[c].to_numpy(np.int64) for c in ("L", "B", "E", "P"))
    parents, counts = np.unique(P[P > 0], return_counts=True)
    div = parents[counts > 1]
    ends = E[lookup(L, div)]
    children = {int(d): (L[P == d], B[P == d]) for d in div}
    return div, ends, children


def branching_correctness(ref: pd.DataFrame, res: pd.DataFrame, match: CtcMatch,
                          max_i: int = MAX_BC) -> dict:
    """``BC(i)`` with its TP / FP / FN for ``i = 0..max_i`` (see the module doc). The
    candidate pairs (a result and a reference division whose parents end at most ``i``
    frames apart) are few; each is tested by binary searches in the matched pairs."""
    mf = match.gt_frame[match.mg]
    m_ref, m_res = match.gt_label[match.mg], match.pred_label[match.mp]
    n = int(max(m_ref.max(initial=0), m_res.max(initial=0),
                ref["L"].to_numpy().max(initial=0), res["L"].to_numpy().max(initial=0))) + 1
    order = np.argsort(mf * n + m_ref, kind="stable")  # sorted once, searched per question
    pair_keys, pair_res = (mf * n + m_ref)[order], m_res[order]
    res_keys, res_counts = np.unique(mf * n + m_res, return_counts=True)

    def found(keys, key) -> int:
        at = int(np.searchsorted(keys, key))
        return at if at < len(keys) and keys[at] == key else -1

    def partner(t, label_ref):  # result label matched to a reference label, -1 for none
        at = found(pair_keys, t * n + label_ref)
        return int(pair_res[at]) if at >= 0 else -1

    def unique(t, label_res):  # the result label is matched exactly once in frame t
        at = found(res_keys, t * n + label_res)
        return at >= 0 and res_counts[at] == 1

    div_r, end_r, kids_r = _divisions(ref)
    div_c, end_c, kids_c = _divisions(res)
    out = {"gt_divisions": int(len(div_r))}
    for i in range(max_i + 1):
        tp = 0
        if len(div_r) and len(div_c):
            for comp, tc in zip(div_c, end_c):
                for gt in div_r[np.abs(end_r - tc) <= i]:
                    tp += _division_matches(int(comp), int(tc), int(gt),
                                            int(end_r[div_r == gt][0]), kids_r[int(gt)],
                                            kids_c[int(comp)], i, partner, unique)
        fp, fn = len(div_c) - tp, len(div_r) - tp
        if not len(div_r):
            fp, fn = len(div_c), 0
        out[f"tp_div({i})"], out[f"fp_div({i})"], out[f"fn_div({i})"] = tp, fp, fn
        out[f"BC({i})"] = _f1(tp, fp, fn)
    return out


def _division_matches(comp, t_comp, gt, t_gt, kids_gt, kids_comp, i, partner, unique) -> bool:
    if len(kids_gt[0]) != len(kids_comp[0]):
        return False
    t = min(t_gt, t_comp)
    if partner(t, gt) != comp or not unique(t, comp):
        return False
    found = set()
    for child, start in zip(*kids_gt):
        for other, other_start in zip(*kids_comp):
            if abs(int(start) - int(other_start)) > i:
                continue
            t_max = max(int(start), int(other_start))
            if unique(t_max, int(other)) and partner(t_max, int(child)) == int(other):
                found.add(int(other))
                break
    return len(found) == len(kids_gt[0])


def _f1(tp: int, fp: int, fn: int):
    if tp + fn == 0:
        return None
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return 2 * precision * recall / max(precision + recall, 1e-4)


def cell_cycle_accuracy(ref: pd.DataFrame, res: pd.DataFrame):
    """``CCA`` (see the module doc)."""
    def lengths(tracks):
        div = _divisions(tracks)[0]
        keep = np.isin(tracks["L"], div) & np.isin(tracks["P"], div)
        return (tracks["E"] - tracks["B"]).to_numpy(np.int64)[keep]

    a, b = lengths(ref), lengths(res)
    if not len(a):
        return None
    if not len(b):
        return 0.0
    size = int(max(a.max(), b.max())) + 1
    fa = np.cumsum(np.bincount(a, minlength=size) / len(a))
    fb = np.cumsum(np.bincount(b, minlength=size) / len(b))
    return float(1 - np.max(np.abs(fa - fb)))


def complete_tracks(ref: pd.DataFrame, res: pd.DataFrame, match: CtcMatch) -> float:
    """``CT`` (see the module doc)."""
    assigned = _assigned(match)  # 0 = unmatched or shared
    labels, code = np.unique(match.gt_label, return_inverse=True)
    low = np.full(len(labels), np.iinfo(np.int64).max)
    high = np.zeros(len(labels), dtype=np.int64)
    np.minimum.at(low, code, assigned)
    np.maximum.at(high, code, assigned)
    whole = (low == high) & (low > 0)
    r = ref.set_index("L").loc[labels[whole]]
    c = res.set_index("L").reindex(low[whole])
    t_rc = int(np.count_nonzero((r["B"].to_numpy() == c["B"].to_numpy())
                                & (r["E"].to_numpy() == c["E"].to_numpy())))
    return 2 * t_rc / (len(ref) + len(res))


def _assigned(match: CtcMatch) -> np.ndarray:
    """Each reference node's result label when it is matched to a result node matched to it
    alone, else 0."""
    n_res = np.bincount(match.mp, minlength=len(match.pred_frame))
    assigned = np.zeros(len(match.gt_frame), dtype=np.int64)
    unique = n_res[match.mp] == 1
    assigned[match.mg[unique]] = match.pred_label[match.mp[unique]]
    return assigned


def track_fractions(ref: pd.DataFrame, match: CtcMatch) -> float:
    """``TF`` (see the module doc)."""
    assigned = _assigned(match)
    order = np.lexsort((match.gt_frame, match.gt_label))
    lab, val = match.gt_label[order], assigned[order]
    new_run = np.r_[True, (lab[1:] != lab[:-1]) | (val[1:] != val[:-1])]
    run = np.cumsum(new_run) - 1
    run_len = np.bincount(run)
    starts = np.flatnonzero(new_run)
    keep = val[starts] > 0
    length = (ref.set_index("L")["E"] - ref.set_index("L")["B"] + 1).reindex(
        lab[starts][keep]).to_numpy(np.float64)
    pairs = pd.DataFrame({"res": val[starts][keep], "ref": lab[starts][keep],
                          "f": run_len[keep] / length})
    best = pairs.groupby(["res", "ref"], sort=True)["f"].max()
    tfs = dict.fromkeys(ref["L"].to_numpy(np.int64).tolist(), 0.0)
    skip_res = None  # the Challenge's order: result tracks ascending, then reference tracks
    for (res_label, ref_label), f in best.items():  # one entry per (result, reference) pair
        if res_label == skip_res or tfs[ref_label] == 1:
            continue
        tfs[ref_label] = max(tfs[ref_label], f)
        if f == 1:  # a result track that covers a reference track whole stops there
            skip_res = res_label
    found = [v for v in tfs.values() if v > 0]
    return float(np.mean(found)) if found else 0.0


def evaluate_ctc(reference, predictions, definition: str = "ctc", frame_buffer: int = 1,
                 recording: str = "ctc", max_bc: int = MAX_BC,
                 sparse_reference: bool = False) -> dict:
    """The Challenge's evaluation of a result folder against a reference folder.

    Returns the families of :func:`trackverify.metrics.graph.evaluate.evaluate_graph` (``status``,
    ``ctc``, ``divisions``, ``chota``; per ``recording`` and ``pooled``) plus
    ``challenge`` (BC(i), CT, TF, CCA, SEG), ``matching``, ``definition`` and
    ``sparse_reference``. With ``sparse_reference`` unmatched result labels weigh 0 (the
    Challenge's ``penalize_extra_detections = 0``) and the measures not valid on a sparse
    reference are null (:data:`trackverify.metrics.graph.evaluate.SPARSE_VALIDITY`).

    Example::

        >>> from trackverify.metrics.graph.ctc import evaluate_ctc  # doctest: +SKIP
        >>> evaluate_ctc("01_GT", "01_RES")["ctc"]["ctc"]["tra"]  # doctest: +SKIP
        0.98...
    """
    metrics.check_definition(definition)
    ref, res = ctc_folder(reference, reference=True), ctc_folder(predictions)
    match = match_folders(ref, res)
    g = _graph(ref.tracks, match.gt_frame, match.gt_label, ref.track_file)
    p = _graph(res.tracks, match.pred_frame, match.pred_label, res.track_file)
    ctc = metrics.ctc_metrics(g, p, match.mg, match.mp, definition, not sparse_reference)
    one_to_one = metrics.is_one_to_one(match.mg, match.mp)
    divisions = metrics.division_metrics(g, p, match.mg, match.mp, frame_buffer) \
        if one_to_one else None
    challenge = {**branching_correctness(ref.tracks, res.tracks, match, max_bc),
                 "ct": complete_tracks(ref.tracks, res.tracks, match),
                 "tf": track_fractions(ref.tracks, match),
                 "cca": cell_cycle_accuracy(ref.tracks, res.tracks),
                 "seg": float(match.seg_iou.sum() / match.seg_total) if match.seg_total
                 else None}
    reason = None if one_to_one else "a result label covers several reference labels " \
        "(non-split): traccuracy's division metrics need a one-to-one matching"
    per = {"ctc": ctc, "divisions": divisions, "chota": metrics.chota(g, p, match.mg,
                                                                      match.mp)["chota"],
           "challenge": challenge}
    out = {"status": {"lineage_links": True, "reason": reason},
           "definition": definition, "matching": MATCHING,
           **{family: {recording: value, "pooled": value} for family, value in per.items()}}
    if sparse_reference:
        return apply_sparse(out)
    return {**out, "sparse_reference": {"on": False}}
