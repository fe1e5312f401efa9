"""Do the tracker's micrometres land on the image? The mapping checked on one frame.

Each detection's *brightness* is the mean over the 3 x 3 x 3 voxels around its voxel (clipped
at the volume's edge), compared with the same at random places drawn uniformly (seeded) in
the detections' bounding box. The statistic is

``separation = P(b_detection > b_random) + P(b_detection = b_random) / 2``

over all pairs (the Mann-Whitney AUC): 0.5 when the detections sit where the image is no
brighter than anywhere around them, near 1 when they sit on bright blobs. The mapping is
*aligned* when ``separation >= SEPARATION_MIN`` (0.75) and at least ``INSIDE_MIN`` (90 %) of
the detections fall inside the volume. When it is not, the same statistic under other
mappings names what is suspected: x and y swapped, a voxel size half or twice the one used
(x and y, or z), or an offset (the median displacement from each detection to the brightest
voxel within ``OFFSET_WINDOW_UM`` of it). Brightness is also reported normalised by the random
places' 1st and 99.5th percentiles (``contrast_limits``): its mean at the detections and at
the random places.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trackverify.errors import InputError
from trackverify.io.volumes.contrast import contrast_limits, normalise
from trackverify.io.volumes.volume import SPATIAL, Volume

SEPARATION_MIN = 0.75
INSIDE_MIN = 0.9
SUSPECT_GAIN = 0.1
"""An alternative mapping is named when it separates at least SEPARATION_MIN and by this
much more than the mapping used."""
MAX_POINTS = 200
OFFSET_WINDOW_UM = 4.0
SEED = 20261207


@dataclass(frozen=True)
class Alignment:
    """The verdict of :func:`check_alignment` with its numbers (None where undefined)."""

    aligned: bool
    frame: int
    detections: int
    inside_share: float
    separation: float | None
    mean_at_detections: float | None
    mean_at_random: float | None
    suspected: str | None
    alternatives: dict[str, float | None] = field(default_factory=dict)
    offset_um: tuple[float, float, float] | None = None
    sentence: str = ""

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _brightness(volume: Volume, frame: int, voxels: np.ndarray) -> np.ndarray:
    """Mean over the 3 x 3 x 3 voxels around each (x, y, z) voxel; NaN outside the volume."""
    nz, ny, nx = volume.frame_shape
    out = np.full(len(voxels), np.nan)
    centres = np.floor(voxels + 0.5).astype(np.int64)
    for i, (x, y, z) in enumerate(centres):
        if not (0 <= x < nx and 0 <= y < ny and 0 <= z < nz):
            continue
        box = volume.read(frame, range(max(z - 1, 0), min(z + 2, nz)),
                          range(max(y - 1, 0), min(y + 2, ny)), range(max(x - 1, 0), min(x + 2, nx)))
        out[i] = float(box.mean())
    return out


def _separation(at_points: np.ndarray, at_random: np.ndarray) -> float | None:
    """P(point > random) + P(tie) / 2 over the finite values (Mann-Whitney, by ranks)."""
    a, b = at_points[np.isfinite(at_points)], at_random[np.isfinite(at_random)]
    if not a.size or not b.size:
        return None
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([a, b]))
    return float((ranks[:a.size].sum() - a.size * (a.size + 1) / 2) / (a.size * b.size))


def _offset(volume: Volume, frame: int, voxels: np.ndarray) -> np.ndarray:
    """Median (x, y, z) um from each detection to the brightest voxel within the window."""
    nz, ny, nx = volume.frame_shape
    step = np.array([volume.voxel_um[a] for a in SPATIAL])
    half = np.ceil(OFFSET_WINDOW_UM / step).astype(int)
    if "z" not in volume.axes:
        half[2] = 0
    moves = []
    for x, y, z in np.floor(voxels + 0.5).astype(np.int64):
        if not (0 <= x < nx and 0 <= y < ny and 0 <= z < nz):
            continue
        lo = np.maximum([x, y, z] - half, 0)
        hi = np.minimum(np.array([x, y, z]) + half + 1, [nx, ny, nz])
        box = volume.read(frame, range(lo[2], hi[2]), range(lo[1], hi[1]), range(lo[0], hi[0]))
        bz, by, bx = np.unravel_index(int(np.argmax(box)), box.shape)
        moves.append((np.array([bx, by, bz]) + lo - [x, y, z]) * step)
    return np.median(np.array(moves), axis=0) if moves else np.zeros(3)


def check_alignment(volume: Volume, points, frame: int, *, seed: int = SEED) -> Alignment:
    """Check the tracker's micrometres against the image on ``frame`` (module docstring).

    ``points``: a table with ``frame``, ``x_um``, ``y_um`` (and ``z_um`` for a volume with a z
    axis): detections or tracks. Its frames must all be in the volume (else an InputError
    naming the volume's time axis)."""
    for column in ("frame", "x_um", "y_um", *(("z_um",) if "z" in volume.axes else ())):
        if column not in points.columns:
            raise InputError(f"the positions have no '{column}' column", column=column)
    volume.check_frames(points["frame"].to_numpy())
    volume.frame_index(frame)  # refuses a frame the volume does not hold
    rows = points[points["frame"].to_numpy() == frame]
    xyz = np.column_stack([rows["x_um"], rows["y_um"],
                           rows["z_um"] if "z_um" in rows else np.zeros(len(rows))])
    xyz = xyz[np.all(np.isfinite(xyz), axis=1)].astype(np.float64)
    if not len(xyz):
        raise InputError(f"no positions in frame {frame} to check the volume against",
                         source=volume.source)
    rng = np.random.Generator(np.random.PCG64(seed))
    if len(xyz) > MAX_POINTS:
        xyz = xyz[np.sort(rng.choice(len(xyz), MAX_POINTS, replace=False))]
    voxels = volume.to_voxels(xyz)
    size = np.array([volume.size(a) for a in SPATIAL])
    inside = np.all((voxels > -0.5) & (voxels < size - 0.5), axis=1)
    lo = np.clip(voxels.min(axis=0), 0, size - 1)
    hi = np.clip(voxels.max(axis=0), 0, size - 1)
    random = lo + rng.random((MAX_POINTS, 3)) * (hi - lo)
    at_random = _brightness(volume, frame, random)
    at_points = _brightness(volume, frame, voxels)
    separation = _separation(at_points, at_random)
    limits = contrast_limits(at_random)
    means = [float(np.nanmean(normalise(v, limits))) if np.isfinite(v).any() and limits
             else None for v in (at_points, at_random)]
    share = float(inside.mean())
    aligned = share >= INSIDE_MIN and separation is not None and separation >= SEPARATION_MIN
    alternatives, offset, suspected = {}, None, None
    if not aligned:
        alternatives, offset = _alternatives(volume, frame, xyz, at_random)
        suspected = _suspect(alternatives, separation)
    result = Alignment(aligned, int(frame), len(xyz), share, separation, *means, suspected,
                       alternatives, offset)
    return Alignment(**{**result.__dict__, "sentence": _sentence(result, volume)})


def _alternatives(volume: Volume, frame: int, xyz: np.ndarray, at_random: np.ndarray):
    """The separation under each other mapping, and the median offset to the brightest voxel."""
    voxels = volume.to_voxels(xyz)
    origin = np.array([volume.origin_um[a] for a in SPATIAL])
    step = np.array([volume.voxel_um[a] for a in SPATIAL])
    scaled = {"x and y swapped": voxels[:, [1, 0, 2]],
              "voxel size in x and y half the one used": voxels * [2, 2, 1],
              "voxel size in x and y twice the one used": voxels * [0.5, 0.5, 1]}
    if "z" in volume.axes:
        scaled["voxel size in z half the one used"] = voxels * [1, 1, 2]
        scaled["voxel size in z twice the one used"] = voxels * [1, 1, 0.5]
    out = {name: _separation(_brightness(volume, frame, v), at_random) for name, v in scaled.items()}
    offset = _offset(volume, frame, voxels)
    if np.linalg.norm(offset) > 0:
        moved = (xyz + offset - origin) / step
        out["offset"] = _separation(_brightness(volume, frame, moved), at_random)
    return out, tuple(float(v) for v in offset)


def _suspect(alternatives: dict, separation: float | None) -> str | None:
    base = separation if separation is not None else 0.5
    good = {k: v for k, v in alternatives.items()
            if v is not None and v >= SEPARATION_MIN and v >= base + SUSPECT_GAIN}
    return max(good, key=lambda k: (good[k], k)) if good else None


def _sentence(result: Alignment, volume: Volume) -> str:
    if result.aligned:
        return (f"The positions of frame {result.frame} sit on bright places of the image: "
                f"a detection is brighter than a random place around them in "
                f"{100 * result.separation:.0f} % of pairs.")
    parts = [f"The positions of frame {result.frame} do not sit on bright blobs of "
             f"{volume.source}:"]
    if result.inside_share < INSIDE_MIN:
        parts.append(f"{100 * (1 - result.inside_share):.0f} % of them fall outside the volume;")
    if result.separation is not None:
        parts.append(f"a detection is brighter than a random place around them in only "
                     f"{100 * result.separation:.0f} % of pairs (aligned: at least "
                     f"{100 * SEPARATION_MIN:.0f} %).")
    if result.suspected == "offset":
        dx, dy, dz = result.offset_um
        parts.append(f"An offset is suspected: the brightest voxel lies ({dx:.2g}, {dy:.2g}, "
                     f"{dz:.2g}) um from them (median), and moved by it they separate "
                     f"{100 * result.alternatives['offset']:.0f} %; check the origin.")
    elif result.suspected is not None:
        parts.append(f"With {result.suspected} they separate "
                     f"{100 * result.alternatives[result.suspected]:.0f} %: check "
                     f"{'the axes' if 'swapped' in result.suspected else 'voxel_um'}.")
    else:
        parts.append("No simple cause (swapped axes, voxel size, offset) explains it: check "
                     "the file, the channel and the frame numbering.")
    return " ".join(parts)
