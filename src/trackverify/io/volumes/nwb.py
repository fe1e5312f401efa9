"""NWB acquisition series as volumes, through pynwb (extra ``nwb``).

Before pynwb opens the file, ``io/nwb.py check_links`` refuses external links (to a file
inside or outside the folder), dangling soft links and data kept in other files. The
series is ``nwbfile.acquisition[dataset]`` (or the only image series there): an
``ImageSeries`` or ``TwoPhotonSeries`` / ``OnePhotonSeries`` (data ``frame, x, y[, z]``, NWB's
order: x before y), an ndx-multichannel-volume ``MultiChannelVolumeSeries`` (``frame, x, y,
z[, channel]``) or ``MultiChannelVolume`` (``x, y, z, channel``: one frame). Voxel size and
origin come from the linked ``ImagingVolume`` / ``ImagingPlane`` (``grid_spacing``,
``origin_coords`` and their units: ``io/nwb.py volume_geometry``), channel names from the
``ImagingVolume``'s ``order_optical_channels``. A series whose frames are kept in external
files (``format = 'external'``, ``external_file``) is refused: open those files directly.
The data are read chunk by chunk as any HDF5 dataset (``volumes/hdf5.py``).
"""

from __future__ import annotations

from pathlib import Path

from trackverify.errors import InputError
from trackverify.io.volumes.found import Found
from trackverify.io.volumes.hdf5 import H5Array

#: Axes of each series type's data, by its number of dimensions (NWB's order: x before y).
SERIES_AXES = {"MultiChannelVolumeSeries": {4: "txyz", 5: "txyzc"},
               "MultiChannelVolume": {4: "xyzc"},
               "ImageSeries": {3: "txy", 4: "txyz"}}


def _kind(obj) -> str | None:
    names = [cls.__name__ for cls in type(obj).__mro__]
    for kind in SERIES_AXES:
        if kind in names:
            return kind
    return None


def _series(nwbfile, dataset: str | None, source: str):
    found = {name: obj for name, obj in nwbfile.acquisition.items() if _kind(obj) is not None}
    if dataset is not None:
        if dataset not in nwbfile.acquisition:
            raise InputError(f"no acquisition '{dataset}' (image series there: "
                             f"{', '.join(sorted(found)) or 'none'})", source=source)
        if dataset not in found:
            raise InputError(f"acquisition '{dataset}' is a "
                             f"{type(nwbfile.acquisition[dataset]).__name__}, not an image "
                             "series", source=source)
        return dataset, found[dataset]
    if len(found) != 1:
        raise InputError(f"holds {len(found)} image series in acquisition "
                         f"({', '.join(sorted(found)) or 'none'}): give its name (dataset=, "
                         "--dataset)", source=source)
    return next(iter(found.items()))


def _geometry(series, name: str, source: str) -> tuple[dict, dict, list | None]:
    from trackverify.io.nwb import volume_geometry

    volume = getattr(series, "imaging_volume", None) or getattr(series, "imaging_plane", None)
    if volume is None or getattr(volume, "grid_spacing", None) is None:
        return {}, {}, None
    n = len(volume.grid_spacing)
    origin, spacing = volume_geometry(volume, source, f"acquisition/{name}", n=min(max(n, 2), 3))
    axes = "xyz"[:len(spacing)]
    channels = None
    order = getattr(volume, "order_optical_channels", None)
    if order is not None and getattr(order, "channels", None) is not None:
        channels = [c.decode() if isinstance(c, bytes) else str(c) for c in order.channels[:]]
    return (dict(zip(axes, map(float, spacing))), dict(zip(axes, map(float, origin))),
            channels)


def open_nwb(path: Path, dataset: str | None, source: str):
    """``(array, found, close)`` of an acquisition image series (module docstring)."""
    from trackverify.io.nwb import check_links, pynwb_file

    check_links(path, source)
    context = pynwb_file(path, source)
    _, nwbfile = context.__enter__()
    try:
        name, series = _series(nwbfile, dataset, source)
        where = f"acquisition/{name}"
        if getattr(series, "external_file", None) is not None or \
                getattr(series, "format", None) == "external":
            files = list(series.external_file[:]) if series.external_file is not None else []
            raise InputError(f"'{where}' keeps its frames in external files {files[:3]!r}; "
                             "they are not followed: open the image files themselves",
                             source=source)
        data = series.data
        node = getattr(data, "dataset", data)
        if not hasattr(node, "id"):
            raise InputError(f"'{where}/data' is not a dataset in the file", source=source)
        array = H5Array(node, f"{where}/data", source)
        axes = SERIES_AXES[_kind(series)].get(len(array.shape))
        if axes is None:
            raise InputError(f"'{where}/data' is {len(array.shape)}-D; a {_kind(series)} "
                             f"holds {' or '.join(SERIES_AXES[_kind(series)].values())}",
                             source=source)
        voxel, origin, channels = _geometry(series, name, source)
        found = Found(axes=axes, voxel_um=voxel, origin_um=origin, channel_names=channels,
                      where=f"'{where}' and its imaging volume")
    except BaseException:
        context.__exit__(None, None, None)
        raise
    return array, found, lambda: context.__exit__(None, None, None)
