"""A seeded sweep of small CTC reference / result folder pairs, generated from rules.

Each seed gives one case (:func:`make_case`): a valid reference (2-D or 3-D label images,
``man_track.txt``) and a result built from it by the edits a tester makes, then a track
file written from the result's masks (or left stale, or broken on purpose).

Reference rules: 3..8 frames; 1..4 root tracks starting at frame 0 or later; a track lives
1..(frames left) frames (single-frame tracks happen) in a grid slot free over its life; it
may end in a division into 2 or 3 daughters that begin exactly one frame after it ends
(up to three generations), or continue under a single child label, right after it or after
a one-frame gap. A cell is a box in its slot, sometimes stretched to the image
border; with 3 planes in 3-D it spans a random run of planes. Images are 16-bit unsigned,
32-bit signed or unsigned; labels are small (1..), or large (tens of thousands in 16-bit
images, up to 10^6 in 32-bit ones). Frames with no cell happen.

Result edits (0..3 per case, chosen from :data:`EDITS`): the reference relabelled, then
``delete_mask`` (one mask in one frame), ``swap_from`` (two labels exchanged from frame t
on), ``late_division`` / ``early_division`` (the division one frame later / earlier),
``merge`` (one label covers 2 or 3 cells in a frame: a non-split), ``split`` (a cell cut
into two labels), ``erase_parent`` (a track line's parent set to 0), ``miss_track``,
``extra_track``, ``relabel_from`` (a track continued under a new label, with or without a
parent link), ``shift`` (a mask moved a few pixels), ``fill_frame`` (a label takes every
background pixel of a frame: an image without background). Track file (:func:`rows_from`): derived
from the masks with every gap cut into a new label (most cases), derived without that repair
(gaps stay: invalid), or the reference's lines left unchanged (stale); then, in some cases,
one deliberate break (:data:`BREAKS`). :func:`edited_real` applies the same edits to a real
result (the HeLa one of the shared data) taken as the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tifffile

SLOT, GRID_ROWS, GRID_COLS, PLANES = 16, 3, 6, 3
HEIGHT, WIDTH = SLOT * GRID_ROWS, SLOT * GRID_COLS
EDITS = ("delete_mask", "swap_from", "late_division", "early_division", "merge", "split",
         "erase_parent", "miss_track", "extra_track", "relabel_from", "shift", "fill_frame")
"""The result edits; the last, ``fill_frame``, is drawn apart and rarely (3 %)."""
BREAKS = ("negative_parent", "parent_not_ended", "line_without_mask", "missing_line",
          "duplicate_line", "range_short", "range_long", "unknown_parent", "negative_label")


@dataclass
class Case:
    """One generated pair: label stacks ``(frames, [planes,] y, x)`` and ``L B E P`` rows."""

    seed: int
    gt: np.ndarray
    gt_rows: np.ndarray
    res: np.ndarray
    res_rows: np.ndarray
    edits: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"seed{self.seed}[{'+'.join(self.edits) or 'copy'}]"


def _labels(rng, n: int, large: bool, limit: int) -> np.ndarray:
    """``n`` distinct labels: from ``1..4n+10``, or ``4n+10`` values below ``limit``."""
    low, high = (limit - 4 * n - 10, limit) if large else (1, 4 * n + 11)
    return rng.choice(np.arange(max(low, 1), high), size=n, replace=False)


def _box(rng, slot: int, ndim: int) -> tuple:
    """A cell's box in grid slot ``slot``: ``(z0, z1, y0, y1, x0, x1)``."""
    r, c = divmod(slot, GRID_COLS)
    h, w = (int(v) for v in rng.integers(5, 13, 2))
    y0 = r * SLOT + int(rng.integers(0, SLOT - h + 1))
    x0 = c * SLOT + int(rng.integers(0, SLOT - w + 1))
    y1, x1 = y0 + h, x0 + w
    if rng.random() < 0.25:  # touch the image border where the slot meets it
        y0 = 0 if r == 0 else y0
        x0 = 0 if c == 0 else x0
        y1 = HEIGHT if r == GRID_ROWS - 1 else y1
        x1 = WIDTH if c == GRID_COLS - 1 else x1
    z0 = int(rng.integers(0, PLANES)) if ndim == 3 else 0
    z1 = int(rng.integers(z0 + 1, PLANES + 1)) if ndim == 3 else 1
    return z0, z1, y0, y1, x0, x1


def _paint(image: np.ndarray, box: tuple, label: int) -> None:
    z0, z1, y0, y1, x0, x1 = box
    if image.ndim == 3:
        image[z0:z1, y0:y1, x0:x1] = label
    else:
        image[y0:y1, x0:x1] = label


def reference(rng, n_frames: int, ndim: int, dtype, labels: np.ndarray):
    """A valid reference: label stack and ``{label: parent}`` (see the module doc)."""
    shape = (n_frames, PLANES, HEIGHT, WIDTH) if ndim == 3 else (n_frames, HEIGHT, WIDTH)
    stack = np.zeros(shape, dtype=dtype)
    busy = np.zeros((n_frames, GRID_ROWS * GRID_COLS), dtype=bool)
    parents, todo, fresh = {}, [], iter(labels.tolist())
    for k in range(int(rng.integers(1, 5))):
        todo.append((0 if k == 0 or rng.random() < 0.6 else int(rng.integers(1, n_frames)),
                     0, 0))
    while todo:
        start, parent, depth = todo.pop(0)
        end = start + int(rng.integers(0, n_frames - start))
        if not parents and rng.random() < 0.7:  # the first root: most often to the last frame
            end = n_frames - 1 - (int(rng.integers(1, 3)) if rng.random() < 0.5 else 0)
        free = np.flatnonzero(~busy[start:end + 1].any(axis=0))
        label = next(fresh, None)
        if not len(free) or label is None:
            continue
        slot = int(rng.choice(free))
        busy[start:end + 1, slot] = True
        box = _box(rng, slot, ndim)
        for t in range(start, end + 1):
            _paint(stack[t], box, label)
        parents[label] = parent
        if end < n_frames - 1 and depth < 3 and rng.random() < 0.45:
            k = 3 if rng.random() < 0.25 else 2
            todo += [(end + 1, label, depth + 1)] * k
        elif end < n_frames - 2 and rng.random() < 0.15:  # one child, after a gap or not
            todo.append((end + 1 + int(rng.integers(0, 2)), label, depth + 1))
    return stack, parents


def _spans(stack: np.ndarray) -> dict:
    """``{label: sorted frames holding it}``."""
    out: dict = {}
    for t, image in enumerate(stack):
        for label in np.unique(image):
            if label:
                out.setdefault(int(label), []).append(t)
    return out


def rows_from(stack: np.ndarray, parents: dict, rng, repair: bool = True) -> np.ndarray:
    """``L B E P`` lines of the labels in ``stack``; with ``repair`` a label with a gap is cut
    at each gap, the later runs getting new labels (linked to the run before or not), and
    the original label's children re-parented to its last run. A parent no longer present
    becomes 0."""
    spans = _spans(stack)
    top = max([*spans, *parents, 0]) + 1
    rows = []
    for label, frames in sorted(spans.items()):
        runs = np.split(np.asarray(frames), np.flatnonzero(np.diff(frames) > 1) + 1) \
            if repair else [np.asarray(frames)]
        previous = parents.get(label, 0)
        for k, run in enumerate(runs):
            new = label
            if k:
                new, top = top, top + 1
                for t in run:
                    stack[t][stack[t] == label] = new
                previous = previous if rng.random() < 0.5 else 0
            rows.append([new, int(run[0]), int(run[-1]), previous])
            previous = new
        if len(runs) > 1:
            for child, p in parents.items():
                if p == label:
                    parents[child] = previous
    rows = np.asarray(rows, dtype=np.int64).reshape(-1, 4)
    present = set(rows[:, 0].tolist())
    for row in rows:
        p = parents.get(int(row[0]), row[3]) if row[0] in spans else row[3]
        row[3] = p if p in present else 0
    return rows


# --- edits of a result ---------------------------------------------------------------------

def _present(stack: np.ndarray) -> list:
    return [(t, int(v)) for t, image in enumerate(stack) for v in np.unique(image) if v]


def _edit(kind: str, stack: np.ndarray, parents: dict, rng, new_label) -> bool:
    """Apply one edit in place; False when the result has nothing it applies to."""
    present = _present(stack)
    spans = _spans(stack)
    if not present and kind != "extra_track":
        return False
    if kind == "delete_mask":
        t, lab = present[int(rng.integers(len(present)))]
        stack[t][stack[t] == lab] = 0
    elif kind == "swap_from":
        frames = [t for t in range(len(stack)) if len(np.unique(stack[t])) > 2]
        if not frames:
            return False
        t = int(rng.choice(frames))
        a, b = rng.choice(np.unique(stack[t])[1:], 2, replace=False)
        for u in range(t, len(stack)):
            ia, ib = stack[u] == a, stack[u] == b
            stack[u][ia], stack[u][ib] = b, a
    elif kind in ("late_division", "early_division"):
        divs = [p for p in set(parents.values()) if p and p in spans
                and sum(1 for c, q in parents.items() if q == p and c in spans) >= 2]
        if not divs:
            return False
        p = int(rng.choice(sorted(divs)))
        kids = [c for c, q in sorted(parents.items()) if q == p and c in spans]
        d = spans[p][-1] + 1
        if kind == "late_division":
            if d >= len(stack):
                return False
            first = True
            for c in kids:
                if d in spans[c]:
                    stack[d][stack[d] == c] = p if first else 0
                    first = False
        else:
            if d - 1 <= spans[p][0] and len(spans[p]) < 2:
                return False
            t = d - 1
            stack[t][stack[t] == p] = kids[0]
            for c in kids[1:]:
                if d < len(stack):
                    where = (stack[d] == c) & (stack[t] == 0)
                    stack[t][where] = c
    elif kind == "merge":
        frames = [t for t in range(len(stack)) if len(np.unique(stack[t])) > 2]
        if not frames:
            return False
        t = int(rng.choice(frames))
        labs = np.unique(stack[t])[1:]
        chosen = rng.choice(labs, min(len(labs), int(rng.integers(2, 4))), replace=False)
        for other in chosen[1:]:
            stack[t][stack[t] == other] = chosen[0]
    elif kind == "split":
        t, lab = present[int(rng.integers(len(present)))]
        mask = stack[t] == lab
        cols = np.flatnonzero(mask.any(axis=tuple(range(mask.ndim - 1))))
        if len(cols) < 2:
            return False
        cut = int(cols[0] + rng.integers(1, len(cols)))
        part = mask.copy()
        part[..., :cut] = False
        stack[t][part] = new_label()
    elif kind == "erase_parent":
        linked = [c for c, p in parents.items() if p]
        if not linked:
            return False
        parents[int(rng.choice(sorted(linked)))] = 0
    elif kind == "miss_track":
        lab = int(rng.choice(sorted(spans)))
        stack[stack == lab] = 0
    elif kind == "extra_track":
        t0 = int(rng.integers(len(stack)))
        t1 = int(rng.integers(t0, len(stack)))
        lab = new_label()
        ndim = stack.ndim - 1
        for _ in range(10):
            box = _box(rng, int(rng.integers(GRID_ROWS * GRID_COLS)), ndim)
            probe = np.zeros(stack.shape[1:], dtype=bool)
            _paint(probe, box, 1)
            if not any((stack[t][probe] != 0).any() for t in range(t0, t1 + 1)):
                for t in range(t0, t1 + 1):
                    _paint(stack[t], box, lab)
                break
        else:
            return False
    elif kind == "relabel_from":
        long = [lab for lab, f in spans.items() if len(f) >= 2]
        if not long:
            return False
        lab = int(rng.choice(sorted(long)))
        t = int(rng.choice(spans[lab][1:]))
        new = new_label()
        for u in range(t, len(stack)):
            stack[u][stack[u] == lab] = new
        for c, p in list(parents.items()):
            if p == lab:
                parents[c] = new
        parents[new] = lab if rng.random() < 0.5 else 0
    elif kind == "fill_frame":  # one label takes every background pixel of a frame
        t, lab = present[int(rng.integers(len(present)))]
        stack[t][stack[t] == 0] = lab
    elif kind == "shift":
        t, lab = present[int(rng.integers(len(present)))]
        mask = stack[t] == lab
        moved = np.roll(mask, int(rng.integers(-6, 7)), axis=-1)
        stack[t][mask] = 0
        stack[t][moved & (stack[t] == 0)] = lab
    return True


def _break(kind: str, rows: np.ndarray, n_frames: int, new_label) -> np.ndarray | None:
    """One deliberate break of a track file (None when it cannot apply)."""
    rows = rows.copy()
    if kind == "negative_parent":
        rows[0, 3] = -1
    elif kind == "parent_not_ended":
        later = [(i, j) for i in range(len(rows)) for j in range(len(rows))
                 if i != j and rows[j, 2] >= rows[i, 1]]
        if not later:
            return None
        i, j = later[0]
        rows[i, 3] = rows[j, 0]
    elif kind == "line_without_mask":
        rows = np.vstack([rows, [new_label(), 0, n_frames - 1, 0]])
    elif kind == "missing_line":
        rows = rows[1:]
    elif kind == "duplicate_line":
        rows = np.vstack([rows, rows[:1]])
    elif kind == "range_short":
        long = np.flatnonzero(rows[:, 2] > rows[:, 1])
        if not len(long):
            return None
        rows[long[0], 2] -= 1
    elif kind == "range_long":
        rows[0, 2] += 1  # may pass the last frame: a line beyond the images
    elif kind == "unknown_parent":
        rows[0, 3] = new_label()
    elif kind == "negative_label":  # the images are broken (make_case), not the lines
        return None
    return rows


def make_case(seed: int) -> Case:
    """The case of ``seed`` (see the module doc)."""
    rng = np.random.default_rng(seed)
    n_frames = int(rng.integers(3, 9))
    ndim = 3 if rng.random() < 0.3 else 2
    kind = rng.random()
    # 16-bit labels: one side small, so that reference max + 1 + result max < 2^16
    # (py-ctcmetrics adds them in the image's type: see test_ctc_parity's overflow case)
    limit, dtype = ((64536, np.uint16) if kind < 0.75 else
                    (10**6, np.int32) if kind < 0.87 else (10**6, np.uint32))
    large_gt = rng.random() < 0.25
    large_res = rng.random() < 0.3 and not (large_gt and dtype == np.uint16)
    gt, gt_parents = reference(rng, n_frames, ndim, dtype, _labels(rng, 40, large_gt, limit))
    if not gt.any():  # at least one cell
        _paint(gt[0], _box(rng, 0, ndim), 1)
        gt_parents = {1: 0}
    gt_rows = rows_from(gt, dict(gt_parents), rng)
    # The result: the reference relabelled, then the edits.
    old = np.asarray(sorted(gt_parents), dtype=np.int64)
    pool = _labels(rng, len(old) + 40, large_res, limit)
    relabel = dict(zip(old.tolist(), pool[:len(old)].tolist()))
    spare = iter(pool[len(old):].tolist())
    lut_keys = np.asarray([0, *relabel], dtype=np.int64)
    lut_vals = np.asarray([0, *relabel.values()], dtype=np.int64)
    res = lut_vals[np.searchsorted(lut_keys, gt.astype(np.int64))].astype(dtype)
    parents = {relabel[c]: relabel.get(p, 0) for c, p in gt_parents.items()}
    edits = []
    kinds = list(rng.choice(EDITS[:-1], int(rng.integers(0, 4))))
    kinds += ["fill_frame"] if rng.random() < 0.03 else []  # rare: py-ctcmetrics cannot
    for kind in kinds:
        if _edit(str(kind), res, parents, rng, lambda: next(spare)):
            edits.append(str(kind))
    mode = rng.random()
    if mode < 0.8:
        res_rows = rows_from(res, parents, rng)
    elif mode < 0.9:
        res_rows = rows_from(res, parents, rng, repair=False)
        edits.append("unrepaired")
    else:
        res_rows = np.asarray([[relabel[int(r[0])], r[1], r[2], relabel.get(int(r[3]), 0)]
                               for r in gt_rows], dtype=np.int64).reshape(-1, 4)
        edits.append("stale_lines")
    if len(res_rows) and rng.random() < 0.15:
        kind = str(rng.choice(BREAKS))
        if kind == "negative_label" and res.any():  # a signed image with a label < 0
            t = int(np.flatnonzero(res.reshape(n_frames, -1).any(axis=1))[0])
            res = res.astype(np.int32)
            lab = int(res[t][res[t] != 0][0])
            res[t][res[t] == lab] = -lab
            edits.append(kind)
        broken = _break(kind, res_rows, n_frames, lambda: next(spare))
        if broken is not None:
            res_rows = broken
            edits.append(kind)
    return Case(seed, gt, gt_rows, res, res_rows, edits)


def edited_real(folder: Path, n_frames: int, seeds) -> list:
    """Cases from a real CTC result ``folder`` (its first ``n_frames`` frames as the
    reference, lines cut to them) and, per seed, 3 edits of :data:`EDITS` drawn from
    ``default_rng(seed)`` (``fill_frame`` aside), the lines written from the masks."""
    stack = np.stack([tifffile.imread(folder / f"mask{t:03d}.tif") for t in range(n_frames)])
    rows = np.loadtxt(folder / "res_track.txt", dtype=np.int64, ndmin=2)
    rows = rows[rows[:, 1] < n_frames]
    rows[:, 2] = np.minimum(rows[:, 2], n_frames - 1)
    rows[:, 3] = np.where(np.isin(rows[:, 3], rows[:, 0]), rows[:, 3], 0)
    parents = dict(zip(rows[:, 0].tolist(), rows[:, 3].tolist()))
    cases = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        res, par = stack.copy(), dict(parents)
        spare = iter(range(int(rows[:, 0].max()) + 1, 2**15))
        edits = [str(k) for k in rng.choice(EDITS[:-1], 3)
                 if _edit(str(k), res, par, rng, lambda: next(spare))]
        cases.append(Case(seed, stack, rows, res, rows_from(res, par, rng), edits))
    return cases


def parents_first(rows: np.ndarray) -> np.ndarray:
    """``rows`` with every parent's line before its children's (by generation, then label).
    py-ctcmetrics' CHOTA depends on the order of the lines (see test_ctc_parity); this
    order is the one where it follows the definition."""
    parent = dict(zip(rows[:, 0].tolist(), rows[:, 3].tolist()))

    def depth(label: int) -> int:
        n = 0
        while parent.get(label, 0) > 0 and n <= len(rows):
            label, n = parent[label], n + 1
        return n

    order = sorted(range(len(rows)), key=lambda i: (depth(int(rows[i, 0])), int(rows[i, 0])))
    return rows[order]


def write(case: Case, root: Path) -> tuple[tuple[Path, Path], tuple[Path, Path]]:
    """The case in the Challenge's layout, twice: ``(GT, RES)`` with the lines in the case's
    order (by label), and ``(GT_pf, RES_pf)``, the same images (hard links) with the lines
    in :func:`parents_first` order."""
    folders = {name: root / name for name in ("GT/TRA", "RES", "GT_pf/TRA", "RES_pf")}
    for folder in folders.values():
        folder.mkdir(parents=True)
    for t in range(len(case.gt)):
        for image, (a, b), name in ((case.gt, ("GT/TRA", "GT_pf/TRA"), "man_track"),
                                    (case.res, ("RES", "RES_pf"), "mask")):
            tifffile.imwrite(folders[a] / f"{name}{t:03d}.tif", image[t],
                             photometric="minisblack")
            (folders[b] / f"{name}{t:03d}.tif").hardlink_to(folders[a] / f"{name}{t:03d}.tif")
    for rows, (a, b), name in ((case.gt_rows, ("GT/TRA", "GT_pf/TRA"), "man_track.txt"),
                               (case.res_rows, ("RES", "RES_pf"), "res_track.txt")):
        np.savetxt(folders[a] / name, rows, fmt="%d")
        np.savetxt(folders[b] / name, parents_first(rows), fmt="%d")
    return (root / "GT", root / "RES"), (root / "GT_pf", root / "RES_pf")


# --- comparison -----------------------------------------------------------------------------

COUNTS = {"AOGM_NS": "ns_nodes", "AOGM_FN": "fn_nodes", "AOGM_FP": "fp_nodes",
          "AOGM_ED": "fp_edges", "AOGM_EA": "fn_edges", "AOGM_EC": "ws_edges",
          "AOGM": "aogm", "AOGM_0": "aogm_0", "TRA": "tra", "DET": "det", "LNK": "lnk",
          "CHOTA": "chota", "CT": "ct", "TF": "tf", "CCA": "cca",
          **{f"{k}({i})": f"{k}({i})" for k in ("BC", "tp_div", "fp_div", "fn_div")
             for i in range(4)}}
"""py-ctcmetrics' names -> ours, every measure the sweep compares."""


def ours(gt: Path, res: Path) -> dict:
    """``evaluate_ctc(definition="ctc")`` flattened, ``{"refused": message}`` for an
    :class:`InputError`; any other exception propagates (a crash is a defect)."""
    from trackverify.errors import InputError
    from trackverify.metrics.graph.ctc import evaluate_ctc

    try:
        r = evaluate_ctc(gt, res)
    except InputError as exc:
        return {"refused": str(exc)}
    return {**r["ctc"]["pooled"], **r["challenge"]["pooled"], "chota": r["chota"]["pooled"]}


def refused(theirs: dict) -> bool:
    """py-ctcmetrics refuses a result by ``Valid = 0`` or by raising in its loader or
    validation (an assertion, or a reduction over an empty track file)."""
    return "error" in theirs or theirs.get("Valid") == 0


KNOWN = {
    "chota_empty_frame": "py-ctcmetrics' CHOTA raises on a reference frame without cells "
                         "(IndexError in track_confusion_matrix); the other measures compared",
    "lnk_no_links": "py-ctcmetrics' LNK divides by zero on a reference without links (ours: "
                    "null); the other measures compared",
    "image_without_background": "a result image without background pixels: py-ctcmetrics "
                                "drops its lowest label (its matching assumes label 0 is "
                                "present) and calls the result invalid; the Challenge reads "
                                "every label, as trackverify does",
    "empty_result": "a result with no tracks (an empty track file, masks without labels): "
                    "py-ctcmetrics' gate calls it invalid and raises; trackverify scores it, "
                    "equal to py-ctcmetrics' measure functions past the gate (CHOTA, which "
                    "raises there, left out)",
    "line_past_images": "a track line runs past the last image: py-ctcmetrics' validation "
                        "stops at the last image and accepts it; the Challenge's rule (every "
                        "track in every frame B..E) refuses it, as trackverify does",
}
"""py-ctcmetrics' departures the sweep meets, each decided in docs/reference/metrics.md."""


def compare_case(case: Case, mine: dict, theirs: dict, tol: float = 1e-9
                 ) -> tuple[list, list]:
    """``(disagreements, known departures)`` of :func:`ours` against py-ctcmetrics' output
    on ``case``: validity (both refuse or both accept), then every measure of
    :data:`COUNTS` (None = undefined on both sides) except one py-ctcmetrics could not
    compute for a reason of :data:`KNOWN` that the case shows."""
    past = int(case.res_rows[:, 2].max(initial=0)) >= len(case.res)
    if past and "refused" in mine and theirs.get("Valid") == 1:
        return [], ["line_past_images"]
    full = any(image.all() for image in case.res)
    if full and "refused" not in mine and theirs.get("Valid") == 0:
        return [], ["image_without_background"]
    empty = "gate" in theirs  # ctcmetrics_reference.past_the_gate
    if "refused" in mine or (refused(theirs) and not empty):
        if ("refused" in mine) == refused(theirs):
            return [], []
        return [f"validity: ours {mine.get('refused', 'accepts')!r}, py-ctcmetrics "
                f"{theirs.get('error', 'Valid=%s' % theirs.get('Valid'))!r}"], []
    known, skip = (["empty_result"], {"CHOTA"}) if empty else ([], set())
    empty_frame = not all(image.any() for image in case.gt)
    if "CHOTA_error" in theirs and empty_frame:
        known.append("chota_empty_frame")
        skip.add("CHOTA")
    if "LNK_error" in theirs and mine["gt_edges"] == 0:
        known.append("lnk_no_links")
        skip.add("LNK")
    out = [f"py-ctcmetrics raises: {theirs[k]}" for k in ("CHOTA_error", "LNK_error")
           if k in theirs and k[:-6] not in skip]
    for key, mine_key in COUNTS.items():
        if key in skip:
            continue
        a, b = mine[mine_key], theirs.get(key)
        if a is None or b is None:
            if not (a is None and b is None):
                out.append(f"{key}: {a} vs {b}")
        elif abs(a - b) > tol:
            out.append(f"{key}: {a} vs {b}")
    return out, known
