"""Cut a tracking graph (nodes with frames, directed links) into tracklets with parent links.

A link ``u -> v`` *continues* a tracklet when ``u`` has exactly one successor and ``v``
exactly one predecessor; every other link starts a new tracklet at ``v`` (a division gives
each daughter its own tracklet, a merge gives the merged object its own tracklet). The
tracklets are the connected components of the continuing links (one head each: the node
with no continuing incoming link). Track ids are ``1..K`` ordered by (first frame, head's
position in the input), so the numbering is deterministic. ``parent_track`` of a tracklet
is the tracklet of its head's predecessor; with several predecessors (a merge) it is the
smallest of their ids and ``merge_parents`` lists all of them (``"3;7"``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.formats.convert import parent_ids


def node_frames(values: np.ndarray, where: str, name: str) -> np.ndarray:
    """A graph's per-node frame numbers (``name``: the attribute or property holding them)
    as int64, each a whole number within ``0..MAX_FRAME``; checked before the cast, which
    turned a FRAME of 1e300 into a numpy warning and a negative frame. Else an InputError
    naming ``where``, ``name`` and the first bad node (1-based)."""
    from trackverify.tables import MAX_FRAME

    values = np.asarray(values, dtype=np.float64)
    bad = ~(np.isfinite(values) & (values == np.round(values)) & (values >= 0)
            & (values <= MAX_FRAME))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"node {row + 1} has frame {values[row]:.17g}, not a whole number in "
                         f"0..{MAX_FRAME}", source=where, column=name)
    return values.astype(np.int64)


def tracklets(frames: np.ndarray, source: np.ndarray, target: np.ndarray,
              where: str) -> tuple[np.ndarray, pd.Series, pd.Series | None]:
    """``(track per node, parent_track per node, merge_parents per node or None)``.

    ``frames`` is one integer frame per node; ``source`` / ``target`` are node indices of
    the links (oriented here from the earlier to the later frame). A link within one frame
    is an InputError naming ``where`` and the link's row (1-based).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    frames = np.asarray(frames, dtype=np.int64)
    n = len(frames)
    source = np.asarray(source, dtype=np.int64)
    target = np.asarray(target, dtype=np.int64)
    same = frames[source] == frames[target]
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise InputError(f"a link joins two points of the same frame {int(frames[source[row]])}",
                         source=where, row=row + 1)
    swap = frames[source] > frames[target]
    src = np.where(swap, target, source)
    dst = np.where(swap, source, target)
    if len(src):
        pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
        src, dst = pairs[:, 0], pairs[:, 1]
    out_degree = np.bincount(src, minlength=n)
    in_degree = np.bincount(dst, minlength=n)
    cont = (out_degree[src] == 1) & (in_degree[dst] == 1)
    graph = coo_matrix((np.ones(int(cont.sum()), dtype=np.int8), (src[cont], dst[cont])),
                       shape=(n, n))
    count, label = connected_components(graph, directed=False)
    has_continuing_in = np.zeros(n, dtype=bool)
    has_continuing_in[dst[cont]] = True
    heads = np.flatnonzero(~has_continuing_in)
    head_of = np.empty(count, dtype=np.int64)
    head_of[label[heads]] = heads
    first_frame = frames[head_of]
    order = np.lexsort((head_of, first_frame))
    track_id = np.empty(count, dtype=np.int64)
    track_id[order] = np.arange(1, count + 1)
    track = track_id[label]

    link = ~cont
    child = track[dst[link]]
    parent = track[src[link]]
    parent_of = np.zeros(count + 1, dtype=np.int64)  # 0 = none (ids start at 1)
    if len(child):
        by_child = np.lexsort((parent, child))
        child, parent = child[by_child], parent[by_child]
        first = np.r_[True, child[1:] != child[:-1]]
        parent_of[child[first]] = parent[first]
    parent_track = parent_ids(parent_of[track], parent_of[track] == 0)
    merges = None
    several = np.bincount(child, minlength=count + 1) > 1 if len(child) else np.zeros(count + 1, bool)
    if several.any():
        joined = pd.Series(parent.astype(str)).groupby(child).agg(";".join)
        text = np.full(count + 1, None, dtype=object)
        multi = joined.index.to_numpy()[several[joined.index.to_numpy()]]
        text[multi] = joined.loc[multi].to_numpy()
        merges = pd.Series(text[track], dtype=object)
    return track, pd.Series(parent_track), merges
