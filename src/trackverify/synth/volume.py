"""A microscope volume rendered from the development specimen, and writers of it in the
formats ``io.volumes`` reads (tifffile, zarr, h5py, pynwb).

Each neuron (reference track) is a 3-D Gaussian blob of its own brightness (uniform in
[``BRIGHTNESS``]) and size (x-y sigma uniform in [``SIGMA_UM``], z sigma ``Z_STRETCH`` times
it, as a point-spread function elongates along z), on a background of ``BACKGROUND`` counts
with Gaussian noise of sd ``NOISE``, in voxels of ``voxel_um`` (anisotropic by default:
0.3 x 0.3 x 1.5 um). Positions are shifted so that every one lies at least ``margin_um``
inside the volume; voxel ``i``'s centre is at ``i * voxel_um`` (origin 0), the convention of
``io.volumes``. Everything is drawn from ``PCG64(seed)``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError

VOXEL_UM = (0.3, 0.3, 1.5)
BRIGHTNESS = (600.0, 2000.0)
SIGMA_UM = (0.6, 1.0)
Z_STRETCH = 1.5
BACKGROUND, NOISE = 100.0, 20.0
MAX_RENDER_VOXELS = 200_000_000
FORMATS = ("tiff", "zarr", "hdf5", "nwb")
SUFFIX = {"tiff": ".tif", "zarr": ".zarr", "hdf5": ".h5", "nwb": ".nwb"}
FOLDER_FORMATS = ("zarr",)  # written as a folder
MAX_VOLUME_FRAMES = 20
"""``synth --volume`` renders at most 20 frames (a demonstration: about 3 MB a frame)."""


def render_volume(observations: pd.DataFrame, voxel_um=VOXEL_UM, *, margin_um: float = 4.0,
                  seed: int = 0) -> tuple[np.ndarray, pd.DataFrame]:
    """``(volume, positions)``: a ``(t, z, y, x)`` uint16 volume of the observations' frames
    0..max (one recording) and the observations with ``x_um, y_um, z_um`` shifted into it."""
    if observations["recording"].nunique() != 1:
        raise InputError("a volume is rendered from one recording")
    step = np.asarray(voxel_um, dtype=np.float64)
    xyz = observations[["x_um", "y_um", "z_um"]].to_numpy(np.float64)
    shifted = xyz - xyz.min(axis=0) + margin_um
    size = np.ceil((shifted.max(axis=0) + margin_um) / step).astype(int) + 1
    frames = int(observations["frame"].max()) + 1
    if frames * int(np.prod(size)) > MAX_RENDER_VOXELS:
        raise InputError(f"a volume of {frames} x {tuple(size[::-1])} voxels is larger than "
                         f"the {MAX_RENDER_VOXELS:.0e} rendered; render fewer frames")
    rng = np.random.Generator(np.random.PCG64(seed))
    tracks, neuron = np.unique(observations["track"].to_numpy(), return_inverse=True)
    brightness = rng.uniform(*BRIGHTNESS, len(tracks))
    sigma_xy = rng.uniform(*SIGMA_UM, len(tracks))
    sigma = np.column_stack([sigma_xy, sigma_xy, sigma_xy * Z_STRETCH])
    volume = np.zeros((frames, size[2], size[1], size[0]), dtype=np.float32)
    frame = observations["frame"].to_numpy()
    for row in range(len(shifted)):  # one small window per blob
        _add_blob(volume[frame[row]], shifted[row], sigma[neuron[row]],
                  brightness[neuron[row]], step)
    volume += BACKGROUND + rng.normal(0.0, NOISE, volume.shape).astype(np.float32)
    volume = np.clip(np.round(volume), 0, 65535).astype(np.uint16)
    positions = observations.copy()
    positions[["x_um", "y_um", "z_um"]] = shifted
    return volume, positions


def _add_blob(frame: np.ndarray, centre: np.ndarray, sigma: np.ndarray, peak: float,
              step: np.ndarray) -> None:
    """Add ``peak * exp(-|d / sigma|^2 / 2)`` within 4 sigma of ``centre`` (x, y, z um)."""
    lo = np.maximum(np.floor((centre - 4 * sigma) / step).astype(int), 0)
    hi = np.minimum(np.ceil((centre + 4 * sigma) / step).astype(int) + 1,
                    [frame.shape[2], frame.shape[1], frame.shape[0]])
    axes = [np.exp(-0.5 * ((np.arange(lo[a], hi[a]) * step[a] - centre[a]) / sigma[a]) ** 2)
            for a in range(3)]
    frame[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]] += peak * (
        axes[2][:, None, None] * axes[1][None, :, None] * axes[0][None, None, :])


def write_tiff(volume: np.ndarray, path: str | Path, voxel_um=VOXEL_UM) -> Path:
    """An ImageJ hyperstack (axes TZYX, x / y resolution and z spacing in um) via tifffile."""
    import tifffile

    x, y, z = voxel_um
    tifffile.imwrite(path, volume, imagej=True, resolution=(1 / x, 1 / y),
                     metadata={"axes": "TZYX", "spacing": z, "unit": "um"})
    return Path(path)


def write_zarr(volume: np.ndarray, path: str | Path, voxel_um=VOXEL_UM,
               chunks=(1, 8, 64, 64), zarr_format: int = 2) -> Path:
    """An OME-Zarr image (NGFF 0.4 attributes on a zarr format 2 group, or 0.5 on format 3)
    of one resolution level ``0``, axes t, z, y, x, scale in micrometres, via zarr."""
    import zarr

    x, y, z = voxel_um
    group = zarr.open_group(str(path), mode="w", zarr_format=zarr_format)
    array = group.create_array("0", shape=volume.shape, chunks=chunks, dtype=volume.dtype)
    array[...] = volume
    axes = [{"name": "t", "type": "time"}] + [
        {"name": n, "type": "space", "unit": "micrometer"} for n in "zyx"]
    image = {"version": "0.4" if zarr_format == 2 else "0.5", "axes": axes, "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale",
                                                     "scale": [1.0, z, y, x]}]}]}
    if zarr_format == 2:
        group.attrs["multiscales"] = [image]
    else:
        group.attrs["ome"] = {"version": "0.5", "multiscales": [image]}
    return Path(path)


def write_hdf5(volume: np.ndarray, path: str | Path, name: str = "volume", voxel_um=VOXEL_UM,
               chunks=(1, 8, 64, 64)) -> Path:
    """Dataset ``name`` (gzip chunks, shuffle) with dimension labels t, z, y, x and
    ``element_size_um`` (z, y, x; Fiji's and ilastik's attribute), via h5py."""
    import h5py

    x, y, z = voxel_um
    with h5py.File(path, "w") as handle:
        data = handle.create_dataset(name, data=volume, chunks=tuple(
            min(c, n) for c, n in zip(chunks, volume.shape)), compression="gzip", shuffle=True)
        for axis, label in enumerate("tzyx"):
            data.dims[axis].label = label
        data.attrs["element_size_um"] = [z, y, x]
    return Path(path)


def write_nwb(volume: np.ndarray, path: str | Path, voxel_um=VOXEL_UM,
              name: str = "CalciumImageSeries") -> Path:
    """An NWB file whose acquisition ``name`` is an ndx-multichannel-volume
    ``MultiChannelVolumeSeries`` (data ``t, x, y, z``, NWB's order) linked to an
    ``ImagingVolume`` of ``grid_spacing`` x, y, z in micrometres, via pynwb."""
    from datetime import datetime, timezone

    from ndx_multichannel_volume import MultiChannelVolumeSeries
    from pynwb import NWBHDF5IO, NWBFile

    from trackverify.io.nwb import imaging_volume

    warnings.filterwarnings("ignore", message=".*optical_channel", module="hdmf")
    nwb = NWBFile(session_description="synthetic volume", identifier="synthetic",
                  session_start_time=datetime(1970, 1, 1, tzinfo=timezone.utc))
    device = nwb.create_device(name="Microscope", description="synthetic")
    imaging = imaging_volume(device, voxel_um, (0.0, 0.0, 0.0), "nuclear", "nuclear marker",
                             "synthetic", "voxel 0", wavelengths=(561.0, 600.0))
    nwb.add_imaging_plane(imaging)
    data = np.ascontiguousarray(volume.transpose(0, 3, 2, 1))  # t, z, y, x -> t, x, y, z
    nwb.add_acquisition(MultiChannelVolumeSeries(
        name=name, imaging_volume=imaging, data=data, unit="counts", rate=1.0,
        description="synthetic", dimension=list(data.shape[1:]), device=device))
    with warnings.catch_warnings():  # the temporary name of an atomic write ends in .tmp
        warnings.filterwarnings("ignore", message="The file path provided.*does not end in")
        with NWBHDF5IO(str(path), "w") as io:
            io.write(nwb)
    return Path(path)


def write_volume(volume: np.ndarray, path: str | Path, kind: str, voxel_um=VOXEL_UM) -> Path:
    """``volume`` written as ``kind`` (one of :data:`FORMATS`)."""
    writers = {"tiff": write_tiff, "zarr": write_zarr, "hdf5": write_hdf5, "nwb": write_nwb}
    if kind not in writers:
        raise InputError(f"unknown volume format '{kind}' (one of {', '.join(FORMATS)})")
    return writers[kind](volume, path, voxel_um=voxel_um)


def write_specimen_volume(config, out: str | Path, kind: str) -> tuple[Path, Path]:
    """The first animal of ``config`` rendered (seed ``config.seed``) and written as ``kind``
    to ``out/volume<suffix>``, with its positions in the volume's micrometres as
    ``out/volume_tracks.parquet``; returns both paths."""
    from trackverify.io.atomic import write_atomic
    from trackverify.io.tabular import write_table
    from trackverify.synth.specimen import animal_observations

    if config.frames > MAX_VOLUME_FRAMES:
        raise InputError(f"a volume is rendered for at most {MAX_VOLUME_FRAMES} frames, not "
                         f"{config.frames}: give --frames {MAX_VOLUME_FRAMES} or fewer")
    out = Path(out)
    volume, positions = render_volume(animal_observations(config, 0), seed=config.seed)
    path = write_atomic(out / f"volume{SUFFIX[kind]}",
                        lambda partial: write_volume(volume, partial, kind),
                        folder=kind in FOLDER_FORMATS)  # renamed into place once whole
    return path, write_table(positions, out / "volume_tracks.parquet")
