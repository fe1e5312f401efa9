"""The review on the lab's volumes: the specimen rendered as a volume (each neuron a blob of
its own brightness and size, noise, anisotropic voxels), written by each reader's own writer
(tifffile, zarr, h5py, pynwb), its tracks audited and sampled with --images; the page's crops
read back from the PNGs the server sends, blind by default, every new route attacked."""

from __future__ import annotations

import io
import json
import re
import shutil
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import pytest

from tests.review.conftest import Served, empty_or_json, exchange, request
from trackverify.review.app import Settings
from trackverify.review.images import HALF_UM, ImageSource
from trackverify.review.sheet import read_sheet
from trackverify.synth.specimen import SpecimenConfig, animal_observations
from trackverify.synth.volume import VOXEL_UM, render_volume, write_volume

pytest.importorskip("tifffile")
pytest.importorskip("zarr")
pytest.importorskip("h5py")
Image = pytest.importorskip("PIL.Image")

SOURCES = {"tiff": "v.tif", "zarr": "v.zarr", "hdf5": "v.h5", "nwb": "v.nwb"}
#: Words of the audit's judgement that a blind page or answer must not hold (as words: the
#: page's script calls addEventListener).
JUDGEMENT = re.compile(r"\b(verdicts?|stratum|strata|scores?|expected\w*|lookalike\w*|look-alike|"
                       r"certified|flagged|abstained|registered|registration|events?|reason|"
                       r"threshold\w*|triage|relative_score|segment|identity)\b", re.I)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The volume (6 frames, 40 neurons) written in every format, and an audit of its tracks
    (the specimen's predicted ids, a tracker's output) sampled with the TIFF as images."""
    import trackverify
    from trackverify.review.design import draw_sample

    folder = tmp_path_factory.mktemp("rendered")
    obs = animal_observations(SpecimenConfig(frames=6, motion="moderate", neurons=40), 0)
    volume, positions = render_volume(obs, seed=3)
    sources = {}
    for kind, name in SOURCES.items():
        if kind == "nwb" and not _has("pynwb", "ndx_multichannel_volume"):
            continue
        write_volume(volume, folder / name, kind)
        sources[kind] = str(folder / name) + (":/volume" if kind == "hdf5" else "")
    tracker = positions.drop(columns="track")
    tracker.to_parquet(folder / "tracker.parquet")
    trackverify.audit(folder / "tracker.parquet", out=folder / "audit")
    draw_sample(folder / "audit", 40, seed=5, images=ImageSource(sources["tiff"]))
    return folder, positions, sources


def _has(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


def _audit_copy(rendered, tmp_path):
    out = tmp_path / "audit"
    shutil.copytree(rendered[0] / "audit", out)
    return out


def _get(served, path: str, token: str | None = None):
    headers = {"X-Token": served.token if token is None else token}
    try:
        with urllib.request.urlopen(urllib.request.Request(served.base + path, headers=headers)) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def _png(data: bytes) -> np.ndarray:
    """Grey levels of a PNG the server sent (NaN where transparent: outside the volume)."""
    image = np.asarray(Image.open(io.BytesIO(data)).convert("LA"), dtype=float)
    return np.where(image[..., 1] > 0, image[..., 0], np.nan)


def _isolated(positions: pd.DataFrame, frame: int, apart_um: float = 4.5) -> set:
    """Predicted ids of ``frame`` whose nearest other neuron is more than ``apart_um`` away in
    x-y among those within 8 um in z (the x-y view projects 3.75 um either side, and a blob
    reaches 3 z sigmas, up to 4.5 um, beyond its centre)."""
    rows = positions[positions["frame"] == frame]
    xyz = rows[["x_um", "y_um", "z_um"]].to_numpy()
    d = np.hypot(*(xyz[:, None, :2] - xyz[None, :, :2]).transpose(2, 0, 1))
    d[np.abs(xyz[:, None, 2] - xyz[None, :, 2]) > 8.0] = np.inf
    np.fill_diagonal(d, np.inf)
    return set(rows["pred_id"].to_numpy()[d.min(axis=1) > apart_um].tolist())


def test_review_csv_gives_the_row_the_file_coordinates_and_the_voxels(rendered):
    folder, positions, _ = rendered
    sheet = pd.read_csv(folder / "audit" / "review.csv")
    tracker = pd.read_parquet(folder / "tracker.parquet")
    assert len(sheet) == 40 and "stratum" not in sheet and "verdict" not in sheet
    file_rows = tracker.iloc[sheet["row"].to_numpy() - 1]  # the tracks' own row, 1-based
    assert (file_rows["frame"].to_numpy() == sheet["frame"].to_numpy()).all()
    assert (file_rows["pred_id"].to_numpy() == sheet["pred_id"].to_numpy()).all()
    for axis, step in zip("xyz", VOXEL_UM):  # micrometres here: the file's own units
        np.testing.assert_allclose(sheet[f"{axis}_file"], file_rows[f"{axis}_um"], rtol=1e-12)
        # voxel i's centre at i * voxel size (origin 0), to 0.01 of a voxel
        np.testing.assert_allclose(sheet[f"{axis}_voxel"], file_rows[f"{axis}_um"] / step, atol=0.0051)
    assert (sheet["t_index"] == sheet["frame"]).all()  # the volume's frames are 0, 1, ...
    design = json.loads((folder / "audit" / "sample.json").read_text())
    assert design["images"]["alignment"]["aligned"] is True
    assert design["images"]["volume"]["voxel_um"] == {"x": 0.3, "y": 0.3, "z": 1.5}


def test_file_coordinates_are_the_files_own_pixels_and_row(tmp_path):
    """A CSV in pixels (0.5 x 0.5 x 2 um), its rows shuffled: review.csv's row names the CSV's
    data row, and x_file, y_file, z_file are that row's pixel values."""
    import trackverify
    from trackverify.review.design import draw_sample

    obs = animal_observations(SpecimenConfig(frames=4, motion="moderate", neurons=30), 0)
    rng = np.random.default_rng(4)
    pixels = obs.drop(columns="track").iloc[rng.permutation(len(obs))].reset_index(drop=True)
    pixels = pixels.assign(x=pixels.pop("x_um") / 0.5, y=pixels.pop("y_um") / 0.5,
                           z=pixels.pop("z_um") / 2.0)
    pixels.to_csv(tmp_path / "tracks.csv", index=False)
    trackverify.audit(tmp_path / "tracks.csv", columns="x_um=x,y_um=y,z_um=z",
                      pixel_size="0.5,0.5,2", out=tmp_path / "audit")
    draw_sample(tmp_path / "audit", 20, seed=1)
    sheet = pd.read_csv(tmp_path / "audit" / "review.csv")
    lines = (tmp_path / "tracks.csv").read_text().splitlines()
    for row in sheet.itertuples():
        cells = dict(zip(lines[0].split(","), lines[row.row].split(",")))  # line = row + 1 - 1
        assert (int(cells["frame"]), int(cells["pred_id"])) == (row.frame, row.pred_id)
        assert (float(cells["x"]), float(cells["y"]), float(cells["z"])) == pytest.approx(
            (row.x_file, row.y_file, row.z_file), rel=1e-12)
        assert row.x_um == pytest.approx(0.5 * row.x_file) and row.z_um == pytest.approx(2 * row.z_file)


@pytest.mark.parametrize("kind", list(SOURCES))
def test_the_crop_is_centred_on_the_blob_under_the_observation(rendered, tmp_path, kind):
    """Through each reader: the observed x-y crop of every item whose neuron stands alone has
    its brightest pixel within one voxel of the centre (read back from the PNG), the x-z crop
    too; the anchor crop shares the observed crop's contrast."""
    folder, positions, sources = rendered
    if kind not in sources:
        pytest.skip("pynwb / ndx-multichannel-volume not installed")
    audit = _audit_copy(rendered, tmp_path)
    served = Served(audit, 0, Settings(images=ImageSource(sources[kind])))
    try:
        listing = json.loads(_get(served, "/api/items")[1])
        assert listing["images"]["aligned"] and "sit on bright places" in listing["images"]["alignment"]
        checked = 0
        for item in listing["items"]:
            if int(item["pred_id"]) not in _isolated(positions, item["frame"]):
                continue
            detail = json.loads(_get(served, f"/api/item?index={item['index']}")[1])
            step = detail["at"]
            place = detail["steps"][step]["place"]
            for view, (h, v) in (("xy", ("x", "y")), ("xz", ("x", "z"))):
                status, png, headers = _get(  # high=1000: the maximum, not a saturated plateau
                    served, f"/api/image?index={item['index']}&panel=observed&view={view}"
                            f"&step={step}&low=10&high=1000")
                assert status == 200 and headers["Content-Type"] == "image/png"
                h0, h1, v0, v1 = map(float, headers["X-Extent"].split(","))
                grey = _png(png)
                # the observation's voxel: column (x - h0) / width of a pixel
                col = (place[h] - h0) / (h1 - h0) * grey.shape[1]
                row = (place[v] - v0) / (v1 - v0) * grey.shape[0]
                assert abs(col - grey.shape[1] / 2) <= 0.5 and abs(row - grey.shape[0] / 2) <= 0.5
                assert (h1 - h0) == pytest.approx(2 * HALF_UM + VOXEL_UM[0], abs=VOXEL_UM[0])
                # the brightest pixel within 3 um of the centre (the neuron stands 4.5 um apart)
                r, c = np.mgrid[: grey.shape[0], : grey.shape[1]]
                um = np.hypot((r + 0.5 - row) * (v1 - v0) / grey.shape[0], (c + 0.5 - col) * (h1 - h0) / grey.shape[1])
                brightest = np.unravel_index(np.nanargmax(np.where(um <= 3.0, grey, -1)), grey.shape)
                assert abs(brightest[0] + 0.5 - row) <= 1.5 and abs(brightest[1] + 0.5 - col) <= 1.5, (view, item)
                # and it is a blob: far brighter than the crop's median
                assert grey[brightest] >= np.nanmedian(grey) + 40
            checked += 1
        assert checked >= 3
    finally:
        served.close()


def test_one_contrast_for_the_observed_and_anchor_crops(rendered, tmp_path):
    """The server's PNGs of an item equal the crops normalised by the percentiles of the two
    reference crops pooled, computed here from the volume read by numpy slicing."""
    from trackverify.io.volumes import contrast_limits, normalise, open_volume

    folder, _, sources = rendered
    audit = _audit_copy(rendered, tmp_path)
    served = Served(audit, 0, Settings(images=ImageSource(sources["zarr"])))
    try:
        detail = json.loads(_get(served, "/api/item?index=0")[1])
        with open_volume(sources["zarr"]) as volume:
            obs = volume.crop(detail["frame"], tuple(detail["steps"][detail["at"]]["place"].values()), HALF_UM, "xy")
            anchor = volume.crop(detail["anchor"]["frame"], tuple(detail["anchor"]["place"].values()), HALF_UM, "xy")
            for low, high in ((10, 995), (0, 900), (500, 1000)):
                limits = contrast_limits(obs.image, anchor.image, low=low / 10, high=high / 10)
                for panel, crop in (("observed", obs), ("anchor", anchor)):
                    status, png, _ = _get(served, f"/api/image?index=0&panel={panel}&view=xy"
                                                  f"&step={detail['at']}&low={low}&high={high}")
                    expected = np.round(normalise(crop.image, limits) * 255)
                    np.testing.assert_array_equal(_png(png), expected)
    finally:
        served.close()


def test_blind_serves_nothing_of_the_audit_and_triage_serves_it(rendered, tmp_path):
    folder, _, sources = rendered
    audit = _audit_copy(rendered, tmp_path)
    for triage in (False, True):
        served = Served(audit, 0, Settings(images=ImageSource(sources["tiff"]), triage=triage))
        try:
            status, page, _ = _get(served, "/?token=" + served.token, token="")
            listing = _get(served, "/api/items")[1]
            details = [_get(served, f"/api/item?index={i}")[1] for i in range(40)]
            answer = urllib.request.urlopen(urllib.request.Request(
                served.base + "/api/decision", headers={"X-Token": served.token},
                data=json.dumps({"index": 0, "decision": "correct"}).encode())).read()
            texts = [page.decode(), listing.decode(), answer.decode(), *(d.decode() for d in details)]
            found = sorted({m.lower() for t in texts for m in JUDGEMENT.findall(t)})
            keys = set()
            for text in texts[1:]:
                _keys(json.loads(text), keys)
            if not triage:
                assert found == [] and not keys & {"verdict", "score", "stratum", "event", "expected",
                                                   "lookalike_id", "certified", "identity"}
            else:
                assert {"verdict", "expected", "stratum", "event", "certified", "triage"} <= set(found)
                assert all(json.loads(d)["verifier"]["expected"] is not None for d in details)
        finally:
            served.close()
    modes = read_sheet(audit / "review.csv").column("mode")
    assert modes[0] == "triage"  # the last decision was made in triage mode


def _keys(value, out: set) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)


def test_the_new_routes_refuse_without_the_token_and_any_hostile_parameter(rendered, tmp_path):
    folder, _, sources = rendered
    audit = _audit_copy(rendered, tmp_path)
    served = Served(audit, 0, Settings(images=ImageSource(sources["hdf5"])))
    secret = (folder / "tracker.parquet").read_bytes()[:16]
    ok = "index=0&panel=observed&view=xy&step=0&low=10&high=995"
    try:
        for path in (f"/api/image?{ok}", "/api/item?index=0"):
            for token in ("", "wrong", served.token[:-1], "../" + served.token):
                assert _get(served, path, token=token)[:2] == (403, b"")
            assert _get(served, f"{path}&token={served.token}", token="")[0] == 200
        n = 40
        hostile = {
            "index=../0": 400, "index=..%2f..%2fetc%2fpasswd": 400, f"index={n}": 400, "index=-1": 400,
            "index=" + "9" * 30: 400, "index=1e3": 400, "index=%00": 400, "index=0x1": 400,
            "panel=../../tracker.parquet": 400, "panel=%2e%2e": 400, "panel=": 400, "panel=observed/..": 400,
            "view=../v.tif": 400, "view=xy%00": 400, "step=..": 400, "step=99999999999999999999": 400,
            "step=-1": 400, "step=6": 400, "low=-1": 400, "low=995": 400, "high=1001": 400,
            "high=" + "1" * 400: 400, "low=abc": 400,
        }
        for change, expected in hostile.items():
            name = change.split("=")[0]
            query = "&".join(change if part.startswith(name + "=") else part for part in ok.split("&"))
            status, body, _ = _get(served, f"/api/image?{query}")
            assert status == expected and empty_or_json(body) and secret not in body, change
        for query in ("index=..", "index=" + "9" * 19, "index=40", ""):
            assert _get(served, f"/api/item?{query}")[0] == 400
        # a path with .. under the routes serves nothing
        for path in (f"/api/image/../../v.h5?{ok}", f"/api/image/..?{ok}", f"/api/../v.h5?{ok}"):
            status, _, body = exchange(served.port, request("GET", path, headers={"X-Token": served.token}))
            assert status == 404 and body == b""
    finally:
        served.close()
    served = Served(audit, 0, Settings())  # no images: no image route answers
    try:
        status, body, _ = _get(served, f"/api/image?{ok}")
        assert (status, json.loads(body)) == (404, {"error": "this review has no images (start it with --images SOURCE)"})
    finally:
        served.close()


def test_a_frame_the_volume_does_not_hold_is_a_clear_404(rendered, tmp_path):
    """A volume of the first 3 frames only: the items of later frames say so on the terminal
    and per image, and the review goes on with their points."""
    import tifffile

    folder, positions, sources = rendered
    audit = _audit_copy(rendered, tmp_path)
    with tifffile.TiffFile(sources["tiff"]) as tif:
        short = tif.asarray()[:3]
    write_volume(short, tmp_path / "short.tif", "tiff")
    served = Served(audit, 0, Settings(images=ImageSource(str(tmp_path / "short.tif"))))
    try:
        assert any("sampled frame(s) are not in the volume" in line for line in served.reported)
        items = json.loads(_get(served, "/api/items")[1])["items"]
        late = next(i for i in items if i["frame"] >= 3)
        detail = json.loads(_get(served, f"/api/item?index={late['index']}")[1])
        status, body, _ = _get(served, f"/api/image?index={late['index']}&panel=observed&view=xy"
                                       f"&step={detail['at']}&low=10&high=995")
        assert (status, json.loads(body)) == (404, {"error": f"frame {late['frame']} is not in the volume"})
        status, _, _ = _get(served, f"/api/image?index={late['index']}&panel=anchor&view=xy&low=10&high=995")
        assert status == 200  # its anchor frame 0 is there
    finally:
        served.close()


def test_crops_kept_for_reuse_stay_within_their_bound(rendered, monkeypatch):
    """Many crops asked for: the bytes kept never pass KEPT_BYTES (here 64 KiB: a few crops)."""
    from trackverify.review import images as module

    folder, positions, sources = rendered
    monkeypatch.setattr(module, "KEPT_BYTES", 64 * 1024)
    audit = pd.read_parquet(folder / "audit" / "audit.parquet")
    shown = module.open_images(ImageSource(sources["zarr"]), audit.assign(recording=audit["recording"].astype(str)),
                               {"rec000": 0})
    try:
        for row in positions.iloc[:60].itertuples():
            crop = shown.crop(row.frame, (row.x_um, row.y_um, row.z_um), "xy")
            assert crop.image.shape == (81, 81)  # 2 * 40 + 1 voxels of 0.3 um: 12 um either side
            assert shown.kept_bytes <= 64 * 1024
    finally:
        shown.close()


def test_a_misaligned_volume_is_said_on_the_terminal_and_the_page(rendered, tmp_path):
    folder, _, sources = rendered
    audit = _audit_copy(rendered, tmp_path)
    served = Served(audit, 0, Settings(images=ImageSource(sources["hdf5"], voxel_um=(0.6, 0.6, 1.5))))
    try:
        images = json.loads(_get(served, "/api/items")[1])["images"]
        assert images["aligned"] is False and "do not sit on bright blobs" in images["alignment"]
        assert any("check voxel_um" in line for line in served.reported)
    finally:
        served.close()


def test_the_tracks_start_is_shown_when_the_audit_records_it(rendered, tmp_path):
    """An audit that writes start_frame / start_identity (a linking tracker's track that
    starts after the anchor frame): the item carries the start's frame, place and the points
    around it, its crop is served; its identity only in triage mode. Without the columns,
    start is null (above)."""
    folder, _, sources = rendered
    audit_dir = _audit_copy(rendered, tmp_path)
    audit = pd.read_parquet(audit_dir / "audit.parquet")
    first = read_sheet(audit_dir / "review.csv").rows[0]
    own = audit["pred_id"] == float(first["pred_id"])
    start = int(first["frame"]) - 1 if int(first["frame"]) > 1 else int(first["frame"])
    audit["start_frame"] = np.where(own, start, audit.groupby("pred_id")["frame"].transform("min"))
    audit["start_identity"] = np.where(own, 77.0, audit["pred_id"])
    audit.to_parquet(audit_dir / "audit.parquet")
    at_start = audit[own & (audit["frame"] == start)].iloc[0]
    for triage in (False, True):
        served = Served(audit_dir, 0, Settings(images=ImageSource(sources["tiff"]), triage=triage))
        try:
            detail = json.loads(_get(served, "/api/item?index=0")[1])
            assert detail["start"]["frame"] == start
            assert detail["start"]["place"] == pytest.approx({a: at_start[f"{a}_um"] for a in "xyz"}, abs=1e-4)
            assert ("identity" in detail["start"]) is triage
            if triage:
                assert detail["start"]["identity"] == "77"
            status, png, headers = _get(served, "/api/image?index=0&panel=start&view=xy&low=10&high=995")
            h0, h1, v0, v1 = map(float, headers["X-Extent"].split(","))
            assert status == 200 and (h0 + h1) / 2 == pytest.approx(at_start["x_um"], abs=VOXEL_UM[0] / 2 + 1e-9)
            assert (v0 + v1) / 2 == pytest.approx(at_start["y_um"], abs=VOXEL_UM[1] / 2 + 1e-9)
        finally:
            served.close()
