"""CTC case folders written by the tests: one per error type, and a large seeded one.

Each case is a reference ``gt/TRA`` (``man_track.txt`` + ``man_track###.tif``) and a result
``res`` (``res_track.txt`` + ``mask###.tif``), the layout the Challenge's evaluation reads.
Cells are 8 x 8 squares in slots of a 16-pixel grid (slot ``s``: row ``s // 8``, column
``s % 8``); a *merged* square covers slots ``s`` and ``s + 1``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tifffile

SIDE, CELL, COLUMNS = 128, 8, 8


def _box(image: np.ndarray, slot: int, label: int, dx: int = 0, width: int = 1) -> None:
    y, x = (slot // COLUMNS) * 16 + 4, (slot % COLUMNS) * 16 + 4 + dx
    image[y:y + CELL, x:x + CELL + 16 * (width - 1)] = label


def render(cells: dict, n_frames: int) -> np.ndarray:
    """``cells[label] = [(frame, slot[, dx[, width]]), ...]`` as a label stack."""
    stack = np.zeros((n_frames, SIDE, SIDE), dtype=np.uint16)
    for label, where in cells.items():
        for frame, slot, *rest in where:
            _box(stack[frame], slot, label, *rest)
    return stack


def rows_of(cells: dict, parents: dict) -> np.ndarray:
    """``L B E P`` rows of the labels' first and last frames."""
    rows = [[label, min(f for f, *_ in w), max(f for f, *_ in w), parents.get(label, 0)]
            for label, w in sorted(cells.items())]
    return np.asarray(rows, dtype=np.int64).reshape(-1, 4)


def write_folder(folder: Path, stack: np.ndarray, rows: np.ndarray, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for t, image in enumerate(stack):
        tifffile.imwrite(folder / f"{name}{t:03d}.tif", image, compression="zlib",
                         photometric="minisblack")
    track_file = "man_track.txt" if name == "man_track" else "res_track.txt"
    np.savetxt(folder / track_file, rows, fmt="%d")
    return folder


def write_case(root: Path, gt: tuple, res: tuple, n_frames: int,
               res_rows: np.ndarray | None = None, seg_frames: tuple = ()) -> tuple[Path, Path]:
    """``gt`` and ``res`` as ``(cells, parents)``; ``res_rows`` overrides the result's track
    file (for invalid results); ``seg_frames``: reference segmentations (``SEG/man_seg###``,
    the reference labels of those frames). Returns ``(gt folder, result folder)``."""
    stack = render(gt[0], n_frames)
    write_folder(root / "gt" / "TRA", stack, rows_of(*gt), "man_track")
    if seg_frames:
        (root / "gt" / "SEG").mkdir(parents=True)
        for t in seg_frames:
            tifffile.imwrite(root / "gt" / "SEG" / f"man_seg{t:03d}.tif", stack[t])
    rows = rows_of(*res) if res_rows is None else res_rows
    write_folder(root / "res", render(res[0], n_frames), rows, "mask")
    return root / "gt", root / "res"


def span(slot: int, first: int, last: int, dx: int = 0) -> list:
    return [(t, slot, dx) for t in range(first, last + 1)]


# --- one case per error type: (gt, res, n_frames) --------------------------------------

def nonsplit_three():
    """Three reference cells; in frame 1 one result label covers all three (k = 3)."""
    gt = ({1: span(0, 0, 2), 2: span(1, 0, 2), 3: span(2, 0, 2)}, {})
    res = ({1: [(0, 0), (1, 0, 0, 3), (2, 0)], 2: [(0, 1)], 3: [(0, 2)], 4: [(2, 1)],
            5: [(2, 2)]}, {})
    return gt, res, 3


def relabel_without_gap():
    """One reference track; the result continues it under a new label with a parent link
    to the old one (a single child): a parent link where the reference has a track link."""
    gt = ({1: span(0, 0, 3)}, {})
    res = ({1: span(0, 0, 1), 2: span(0, 2, 3)}, {2: 1})
    return gt, res, 4


def missed_division_single_child():
    """A reference division; the result keeps the link to one daughter only."""
    gt = ({1: span(0, 0, 1), 2: span(0, 2, 3), 3: span(1, 2, 3)}, {2: 1, 3: 1})
    res = ({1: span(0, 0, 1), 2: span(0, 2, 3), 3: span(1, 2, 3)}, {2: 1})
    return gt, res, 4


def nodes_and_edges():
    """A missed cell (FN node, missing edges), an extra cell (FP node) and two tracks that
    swap cells (redundant and missing edges)."""
    gt = ({1: span(0, 0, 4), 2: span(8, 0, 4), 3: span(9, 0, 4)}, {})
    res = ({1: span(0, 0, 1), 4: span(0, 3, 4), 9: [(2, 20)],
            5: span(8, 0, 1) + span(9, 2, 4), 6: span(9, 0, 1) + span(8, 2, 4)}, {})
    return gt, res, 5


def late_division():
    """The result divides one frame after the reference: BC(0) = 0, BC(1) = 1."""
    gt = ({1: span(0, 0, 1), 2: span(0, 2, 4), 3: span(1, 2, 4)}, {2: 1, 3: 1})
    res = ({1: span(0, 0, 2), 2: span(0, 3, 4), 3: span(1, 3, 4)}, {2: 1, 3: 1})
    return gt, res, 5


def three_way_division():
    """A three-way division found exactly (BC = 1; traccuracy wants two daughters)."""
    gt = ({1: span(0, 0, 1), 2: span(0, 2, 3), 3: span(1, 2, 3), 4: span(2, 2, 3)},
          {2: 1, 3: 1, 4: 1})
    return gt, gt, 4


VALID = {"nonsplit_three": nonsplit_three, "relabel_without_gap": relabel_without_gap,
         "missed_division_single_child": missed_division_single_child,
         "nodes_and_edges": nodes_and_edges, "late_division": late_division,
         "three_way_division": three_way_division}


def invalid_cases(root: Path) -> dict:
    """Results the Challenge refuses: ``name: (gt, res, words the error names)``."""
    gt = ({1: span(0, 0, 3), 2: span(1, 0, 3)}, {})
    out = {}
    gap = ({1: [(0, 0), (1, 0), (3, 0)], 2: span(1, 0, 3)}, {})
    out["label_missing_in_range"] = (*write_case(
        root / "gap", gt, gap, 4, np.array([[1, 0, 3, 0], [2, 0, 3, 0]])),
        ("label 1", "frame 2", "mask002.tif"))
    no_mask = np.array([[1, 0, 3, 0], [2, 0, 3, 0], [7, 1, 2, 0]])
    out["track_line_without_mask"] = (*write_case(root / "nomask", gt, gt, 4, no_mask),
                                      ("label 7", "frame 1", "mask001.tif"))
    out["parent_ends_after_child_begins"] = (*write_case(
        root / "late", gt, ({1: span(0, 0, 1), 2: span(1, 0, 3), 3: span(0, 2, 3)}, {}), 4,
        np.array([[1, 0, 1, 0], [2, 0, 3, 0], [3, 1, 3, 1]])),
        ("label 3", "parent 1", "res_track.txt"))
    out["label_not_in_track_file"] = (*write_case(
        root / "unknown", gt, gt, 4, np.array([[1, 0, 3, 0]])),
        ("label 2", "frame 0", "mask000.tif"))
    out["label_twice_in_track_file"] = (*write_case(
        root / "twice", gt, gt, 4, np.array([[1, 0, 3, 0], [2, 0, 3, 0], [2, 0, 3, 0]])),
        ("label 2", "appears twice", "frame 0", "res_track.txt"))
    out["negative_parent"] = (*write_case(
        root / "negative", gt, gt, 4, np.array([[1, 0, 3, 0], [2, 0, 3, -1]])),
        ("label 2", "frames 0..3", "res_track.txt"))
    gt_dir, res_dir = write_case(root / "negative_label", gt, gt, 4)
    signed = render(gt[0], 4)[1].astype(np.int16)
    signed[signed == 1] = -1  # a signed image: label 1 written as -1 in frame 1
    tifffile.imwrite(res_dir / "mask001.tif", signed)
    out["negative_label"] = (gt_dir, res_dir, ("negative label values", "mask001.tif"))
    return out


# --- a large seeded case --------------------------------------------------------------

def large(seed: int, n_frames: int = 30):
    """32 slot pairs ``(2k, 2k + 1)`` over ``n_frames``: odd pairs divide (the root in slot
    ``2k`` until frame ``d - 1``, daughters in both slots from ``d``), even pairs hold two
    independent tracks. Each pair's result gets one seeded edit: none, a 2-pixel shift, an
    erased track, a cut parent link, a relabelled continuation with or without a parent
    link, an extra cell, a merge of the two slots in one frame (a non-split), a division one
    frame late, a swap of the two cells."""
    rng = np.random.default_rng(seed)
    gt_cells, gt_par, res_cells, res_par = {}, {}, {}, {}
    label = iter(range(1, 10_000))
    last = n_frames - 1
    for k in range(32):
        a, b = 2 * k, 2 * k + 1
        d = int(rng.integers(4, n_frames - 4))
        edit = ["none", "shift", "erase", "cut", "relabel_parent", "relabel", "extra",
                "merge", "late", "swap"][int(rng.integers(0, 10))]
        if k % 2:  # a division at d
            root, c1, c2 = next(label), next(label), next(label)
            gt_cells.update({root: span(a, 0, d - 1), c1: span(a, d, last), c2: span(b, d, last)})
            gt_par.update({c1: root, c2: root})
            cells = {root: span(a, 0, d - 1), c1: span(a, d, last), c2: span(b, d, last)}
            par = {c1: root, c2: root}
            if edit == "late":
                cells = {root: span(a, 0, d), c1: span(a, d + 1, last),
                         c2: span(b, d + 1, last)}
            elif edit == "cut":
                par = {c1: root}
            elif edit == "erase":
                del cells[c2]
                par = {c1: root}
            elif edit in ("relabel", "relabel_parent", "merge", "swap", "extra"):
                new = next(label)
                cells[c1], cells[new] = span(a, d, d + 1), span(a, d + 2, last)
                par[new] = c1 if edit == "relabel_parent" else 0
            elif edit == "shift":
                cells = {lab: [(t, s, 2) for t, s, _ in w] for lab, w in cells.items()}
        else:
            one, two = next(label), next(label)
            b0, b1 = sorted(int(v) for v in rng.integers(0, n_frames, 2))
            gt_cells.update({one: span(a, 0, last), two: span(b, b0, b1)})
            cells, par = {one: span(a, 0, last), two: span(b, b0, b1)}, {}
            if edit == "merge" and b1 - b0 >= 2:
                t = b0 + 1
                cells[one] = span(a, 0, t - 1) + [(t, a, 0, 2)] + span(a, t + 1, last)
                new = next(label)
                cells[two], cells[new] = span(b, b0, t - 1), span(b, t + 1, b1)
            elif edit == "swap" and b1 - b0 >= 2:
                t = b0 + 1
                new = next(label)
                cells[one] = span(a, 0, t - 1) + span(b, t, b1)
                cells[two] = span(b, b0, t - 1) + span(a, t, b1)
                if b1 < last:
                    cells[new] = span(a, b1 + 1, last)
            elif edit == "erase":
                del cells[two]
            elif edit == "extra" and b0 > 0:
                cells[next(label)] = [(0, b)]
            elif edit in ("relabel", "relabel_parent"):
                new = next(label)
                cells[one], cells[new] = span(a, 0, d - 1), span(a, d, last)
                if edit == "relabel_parent":
                    par[new] = one
            elif edit == "shift":
                cells = {lab: [(t, s, 2) for t, s, _ in w] for lab, w in cells.items()}
        res_cells.update(cells)
        res_par.update({c: p for c, p in par.items() if p})
    return (gt_cells, gt_par), (res_cells, res_par), n_frames


def planes_3d(root: Path) -> tuple[Path, Path]:
    """3-D frames (3 planes) of the nodes_and_edges case, the result shifted by 2 pixels in
    plane 1; the reference segments planes of two frames (``man_seg_T_Z.tif``)."""
    gt, res, n = nodes_and_edges()
    g2, r2 = render(gt[0], n), render(res[0], n)
    g3 = np.stack([g2, g2, g2], axis=1)
    r3 = np.stack([r2, np.roll(r2, 2, axis=2), r2], axis=1)
    write_folder(root / "gt" / "TRA", g3, rows_of(*gt), "man_track")
    write_folder(root / "res", r3, rows_of(*res), "mask")
    seg = root / "gt" / "SEG"
    seg.mkdir()
    for t, z in ((0, 1), (2, 0), (2, 1)):
        tifffile.imwrite(seg / f"man_seg_{t:03d}_{z:03d}.tif", g3[t, z])
    return root / "gt", root / "res"
