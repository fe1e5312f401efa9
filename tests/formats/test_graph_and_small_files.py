"""Tracklets of a hand-drawn graph, and small hand-written CTC and TrackMate files whose
expected points are worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trackverify.errors import InputError
from trackverify.io.formats import read_points
from trackverify.io.formats.graph import tracklets


def test_division_then_merge():
    #   a0 - a1 <  b2 - b3  > m4        nodes 0..6, frames below
    #           \  c2 - c3 /
    frames = np.array([0, 1, 2, 2, 3, 3, 4])
    source = np.array([0, 1, 1, 2, 3, 4, 6])
    target = np.array([1, 2, 3, 4, 5, 6, 5])          # the last link is written backwards
    track, parent, merges = tracklets(frames, source, target, "<graph>")
    assert track.tolist() == [1, 1, 2, 3, 2, 3, 4]
    assert parent.tolist() == [pd.NA, pd.NA, 1, 1, 1, 1, 2]
    assert merges.tolist() == [None] * 6 + ["2;3"]


def test_no_links_and_same_frame_link():
    track, parent, merges = tracklets(np.array([0, 0, 1]), np.array([], int), np.array([], int), "g")
    assert track.tolist() == [1, 2, 3] and parent.isna().all() and merges is None
    with pytest.raises(InputError, match="same frame 0"):
        tracklets(np.array([0, 0]), np.array([0]), np.array([1]), "g")


def test_ctc_3d_labels_centroids_and_range_check(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    volume = np.zeros((2, 4, 5), dtype=np.uint16)      # z, y, x
    volume[0, 1, 1:3] = 7                               # pixels (x=1,y=1,z=0), (x=2,y=1,z=0)
    volume[1, 3, 4] = 7                                 # (x=4,y=3,z=1)
    later = np.zeros_like(volume)
    later[1, 0, 0] = 9
    tifffile.imwrite(tmp_path / "mask000.tif", volume)
    tifffile.imwrite(tmp_path / "mask001.tif", later)
    (tmp_path / "res_track.txt").write_text("7 0 0 0\n9 1 1 7\n")
    _, tracks = read_points(tmp_path)
    rows = tracks.table.set_index("track")
    assert rows.loc[7, ["x", "y", "z"]].tolist() == pytest.approx([7 / 3, 5 / 3, 1 / 3])
    assert rows.loc[9, ["x", "y", "z"]].tolist() == [0.0, 0.0, 1.0]
    assert rows.loc[9, "parent_track"] == 7 and rows["parent_track"].isna().sum() == 1
    (tmp_path / "res_track.txt").write_text("7 1 1 0\n9 1 1 0\n")
    with pytest.raises(InputError, match="outside its frames 1..1"):
        read_points(tmp_path)


SPOT = ('<Spot ID="{i}" FRAME="{f}" POSITION_X="{x}" POSITION_Y="0" POSITION_Z="0" '
        'name="s{i}"/>')


def test_trackmate_reads_only_filtered_tracks(tmp_path):
    spots = "".join(f'<SpotsInFrame frame="{f}">' + SPOT.format(i=10 + f, f=f, x=f) +
                    SPOT.format(i=20 + f, f=f, x="5,5") + SPOT.format(i=30 + f, f=f, x=9) +
                    "</SpotsInFrame>" for f in range(2))
    xml = (f'<?xml version="1.0" encoding="UTF-8"?>\r\n<TrackMate version="7"><Model spatialunits="nm" '
           f'timeunits="s"><AllSpots>{spots}</AllSpots><AllTracks>'
           '<Track TRACK_ID="4"><Edge SPOT_SOURCE_ID="10" SPOT_TARGET_ID="11"/></Track>'
           '<Track TRACK_ID="5"><Edge SPOT_SOURCE_ID="20" SPOT_TARGET_ID="21"/></Track>'
           '</AllTracks><FilteredTracks><TrackID TRACK_ID="5"/></FilteredTracks></Model>'
           '<Settings><ImageData nslices="1"/></Settings></TrackMate>\r\n')
    path = tmp_path / "t.xml"
    path.write_bytes(xml.encode())
    _, tracks = read_points(path)
    table = tracks.table
    assert table["node"].tolist() == [20, 21]           # track 4 filtered out, spot 30.. in no track
    assert table["x"].tolist() == [5.5, 5.5]            # comma decimal read as a decimal
    assert table["source_track"].tolist() == [5, 5] and "z" not in table.columns
    assert tracks.calibration.um_per_unit == (1e-3,)    # nm
