"""TrackMate CSV and 3DeeCellTracker files written exactly as the tools write them, and the
corpus cases that break them (``convert FILE --to parquet``: exit 2, file / column / row).

Sources of the layouts (read this session, cited in the readers' docstrings):

* TrackMate 7: ``TablePanel.exportToCsv`` (trackmate-sc/TrackMate @ 0f89cc9a), the spot
  columns of ``TrackTableView.createSpotTable`` (@ 02f44df3: ``ID``, ``TRACK_ID`` first, then
  the spot features in ``Spot.FEATURES`` order, names / short names / dimensions from
  ``Spot.java``), units from ``Dimension.units`` (QUALITY ``quality``, POSITION and LENGTH the
  space unit, TIME the time unit, NONE empty); ints as ``Integer.toString``, doubles as
  ``Double.toString``; ``\\n`` line ends; the edge table's ``LABEL`` is ``"ID0 → ID1"``.
* TrackMate 6: ``ExportStatsToIJAction`` (@ 160c5134) saved by ImageJ ``ResultsTable.saveAs``
  (imagej/ImageJ @ 4efcff32): ``Label,ID,TRACK_ID,<features>``, decimals ``d2s(v, 3)`` (whole
  values without decimals), ``println`` line ends (CRLF on Windows, as written here).
* 3DeeCellTracker: ``Tracker.save_coordinates`` (CellTracker/tracker.py @ 55a572c0):
  ``np.savetxt(..., delimiter=',', header="cell,t,x(row),y(column),z(interpolated)",
  comments="")`` of columns ``(t, cell, x, y, z)``.
* The Python trackers' DataFrames (src/trackverify/io/formats/dataframe.py cites each
  source): trackpy ``y, x, mass, size, ecc, signal, raw_mass, ep, frame, particle`` written by
  ``DataFrame.to_csv`` (index first, unnamed); laptrack's ``track_df`` (the input columns +
  ``tree_id, track_id``, ids from 0) and ``split_df`` (``parent_track_id, child_track_id``);
  ultrack's ``to_tracks_layer`` ``track_id, t, y, x, id, parent_track_id, parent_id`` (-1 =
  none) written with ``index=False``; btrack's ``export_CSV`` (space-separated float32
  values under ``ID t x y z parent root state generation dummy``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.corpus.make_corpus import Case, generator

V7_FEATURES = ("QUALITY", "POSITION_X", "POSITION_Y", "POSITION_Z", "POSITION_T", "FRAME",
               "RADIUS", "VISIBILITY")
V7_HEADER = (
    "LABEL,ID,TRACK_ID," + ",".join(V7_FEATURES) + "\n"
    "Label,Spot ID,Track ID,Quality,X,Y,Z,T,Frame,Radius,Visibility\n"
    "Label,Spot ID,Track ID,Quality,X,Y,Z,T,Frame,R,Visibility\n"
    ",,,(quality),({unit}),({unit}),({unit}),(sec),,({unit}),\n")
EDGE_HEADER = (
    "LABEL,TRACK_ID,SPOT_SOURCE_ID,SPOT_TARGET_ID,LINK_COST\n"
    "Label,Track ID,Source spot ID,Target spot ID,Edge cost\n"
    "Label,Track ID,Source ID,Target ID,Cost\n"
    ",,,,(cost)\n")

#: (ID, TRACK_ID or None, FRAME, x, y): two tracks of three frames, written out of order (as
#: TrackMate's unsorted track sets may be), and one spot in no track (the all-spots table).
SPOTS = ((3, 1, 0, 50.0, 20.0), (0, 0, 0, 10.0, 20.0), (1, 0, 1, 11.0, 20.0),
         (4, 1, 1, 51.0, 20.5), (2, 0, 2, 12.0, 20.0), (5, 1, 2, 52.0, 21.0),
         (6, None, 1, 30.0, 30.0))


def v7_row(spot_id: int, track, frame: int, x: float, y: float, z: float = 0.0) -> str:
    return (f"ID{spot_id},{spot_id},{'' if track is None else track},{12.5!r},{x!r},{y!r},{z!r},"
            f"{float(frame)!r},{frame},{2.5!r},1\n")


def v7_spots(spots=SPOTS, unit: str = "micron") -> str:
    return V7_HEADER.format(unit=unit) + "".join(v7_row(*s) for s in spots)


def v7_edges(edges) -> str:
    """``edges``: (TRACK_ID, source ID, target ID)."""
    return EDGE_HEADER + "".join(f"ID{s} → ID{t},{track},{s},{t},{1.0!r}\n" for track, s, t in edges)


def _column(values) -> list[str]:
    """ImageJ's ``d2s``: 3 decimals for a whole column once one of its first 25 values is not
    whole (``decimalPlaces[column] = precision``), else no decimals."""
    fractional = any(v != round(v) for v in values[:25])
    return [f"{v:.3f}" if fractional else f"{v:.0f}" for v in values]


def v6_spots(spots=SPOTS) -> str:
    """ImageJ's CSV of "Spots in tracks statistics" (no spot outside a track: v6 left them out)."""
    kept = [s for s in spots if s[1] is not None]
    xs, ys = _column([s[3] for s in kept]), _column([s[4] for s in kept])
    lines = ["Label,ID,TRACK_ID," + ",".join(V7_FEATURES)]
    for (spot_id, track, frame, _, _), x, y in zip(kept, xs, ys):
        lines.append(f"ID{spot_id},{spot_id},{track},12.500,{x},{y},0,{frame},{frame},2.500,1")
    return "\r\n".join(lines) + "\r\n"


def deecell_csv(coords: np.ndarray) -> str:
    """``coords``: (t, cell, 3) as ``history.r_tracked_coordinates``, written as the tracker does."""
    import io

    t, cell, pos = coords.shape
    table = np.column_stack((np.repeat(np.arange(1, t + 1), cell), np.tile(np.arange(1, cell + 1), t),
                             coords.reshape(t * cell, pos)))
    out = io.StringIO()
    np.savetxt(out, table, delimiter=",", header="cell,t,x(row),y(column),z(interpolated)", comments="")
    return out.getvalue()


def trackpy_csv() -> str:
    """Two particles over two frames (x is the column axis, as trackpy writes it)."""
    return (",y,x,mass,size,ecc,signal,raw_mass,ep,frame,particle\n"
            "0,20.0,10.0,150.5,1.8,0.05,12.0,900.0,0.1,0,0\n"
            "1,40.0,50.0,140.0,1.7,0.04,11.0,880.0,0.1,0,1\n"
            "2,20.5,11.0,151.0,1.8,0.05,12.1,905.0,0.1,1,0\n"
            "3,41.0,51.0,139.0,1.7,0.04,11.2,870.0,0.1,1,1\n")


#: laptrack: track 0 (frames 0-1) divides into tracks 1 and 2 at frame 2.
LAPTRACK_TRACKS = (",frame,position_x,position_y,tree_id,track_id\n"
                   "0,0,10.0,10.0,0,0\n1,1,11.0,10.0,0,0\n"
                   "2,2,8.0,10.0,0,1\n3,2,14.0,10.0,0,2\n")
LAPTRACK_SPLIT = "parent_track_id,child_track_id\n0,1\n0,2\n"
#: ultrack: the same division, tracks numbered from 1, roots' parent -1.
ULTRACK_TRACKS = ("track_id,t,y,x,id,parent_track_id,parent_id\n"
                  "1,0,10.0,20.0,1000001,-1,-1\n1,1,10.0,21.0,2000001,-1,1000001\n"
                  "2,2,8.0,22.0,3000001,1,2000001\n3,2,12.0,22.0,3000002,1,2000001\n")
#: btrack export_CSV: track 1 (its own parent: none) with a dummy at frame 2, daughters 2 and 3.
BTRACK_CSV = ("ID t x y z parent root state generation dummy\n"
              "1.0 0.0 10.0 20.0 0.0 1.0 1.0 5.0 0.0 0.0\n"
              "1.0 1.0 11.0 20.0 0.0 1.0 1.0 5.0 0.0 0.0\n"
              "1.0 2.0 11.5 20.0 0.0 1.0 1.0 5.0 0.0 1.0\n"
              "2.0 3.0 9.0 20.0 0.0 1.0 1.0 5.0 1.0 0.0\n"
              "3.0 3.0 14.0 20.0 0.0 1.0 1.0 5.0 1.0 0.0\n")
#: napari Tracks layer (``ID,t,y,x``): track 1 on frames 0-1, track 2 from frame 2 (a daughter
#: of 1 when a graph says so).
NAPARI_TRACKS = "ID,t,y,x\n1,0,2.0,3.0\n1,1,2.5,3.5\n2,2,8.0,9.0\n"
#: (name, graph.json beside NAPARI_TRACKS, fragments): ids that are not whole numbers below 2^53
BROKEN_NAPARI_GRAPHS = [
    ("napari_graph_fractional_parent", '{"2": [1.5]}', ["track '2'", "1.5"]),
    ("napari_graph_fractional_key", '{"2.5": [1]}', ["track '2.5'", "'2.5'"]),
    ("napari_graph_boolean_parent", '{"2": [true]}', ["track '2'", "True"]),
    ("napari_graph_parent_beyond_2_53", '{"2": [9007199254740993]}', ["9007199254740993"]),
]

#: (name, file name, text, --format, fragments of the message after the file name)
BROKEN_DATAFRAMES = [
    ("trackpy_no_particle", "t.csv", trackpy_csv().replace("particle", "part"), "trackpy",
     ["column 'particle'", "missing"]),
    ("trackpy_text_particle", "t.csv", trackpy_csv().replace(",1,1\n", ",1,one\n"), "trackpy",
     ["column 'particle'", "row 4", "'one'"]),
    ("trackpy_nan_x", "t.csv", trackpy_csv().replace("20.5,11.0", "20.5,nan"), "trackpy",
     ["column 'x'", "row 3", "'nan'"]),
    ("laptrack_fractional_frame", "l.csv", LAPTRACK_TRACKS.replace("1,1,11.0", "1,1.5,11.0"),
     "laptrack", ["column 'frame'", "row 2", "whole"]),
    ("ultrack_no_x", "u.csv", ULTRACK_TRACKS.replace(",x,", ",xx,"), "ultrack", ["column 'x'"]),
    ("btrack_text_parent", "b.csv", BTRACK_CSV.replace("14.0 20.0 0.0 1.0", "14.0 20.0 0.0 one"),
     "btrack_csv", ["column 'parent'", "row 5"]),
    ("trackpy_short_row", "t.csv", trackpy_csv().replace("0.1,1,0\n", "0.1\n"), "trackpy",
     ["row 3", "9 cells", "11"]),
    ("btrack_long_row", "b.csv", BTRACK_CSV.replace("0.0 1.0\n", "0.0 1.0 7.0\n"), "btrack_csv",
     ["row 3", "11 cells", "10"]),
    ("ultrack_twice_in_frame", "u.csv", ULTRACK_TRACKS.replace("3,2,12.0", "2,2,12.0"), "ultrack",
     ["column 'track_id'", "row 4", "twice"]),
]

#: napari (name, text of tracks.csv, fragments): each was coerced (text to NaN, True to id 1,
#: two ids above 2^53 to one track) or refused later under the project's column name and a
#: sorted row
BROKEN_NAPARI = [
    ("napari_text_y", NAPARI_TRACKS.replace("2.5,3.5", "abc,3.5"),
     ["column 'y'", "row 2", "'abc'"]),
    ("napari_boolean_ids", "ID,t,y,x\nTrue,0,2.0,3.0\nFalse,1,2.5,3.5\n",
     ["column 'ID'", "row 1", "'True'"]),
    ("napari_boolean_x", "ID,t,y,x\n1,0,2.0,True\n1,1,2.5,False\n",
     ["column 'x'", "row 1", "'True'"]),
    ("napari_ids_beyond_2_53",
     "ID,t,y,x\n9007199254740993,0,2.0,3.0\n9007199254740992,1,2.5,3.5\n",
     ["column 'ID'", "row 1", "2^53"]),
    ("napari_nan_y", NAPARI_TRACKS.replace("8.0,9.0", "nan,9.0"),
     ["column 'y'", "row 3", "finite"]),
    ("napari_infinite_x", NAPARI_TRACKS.replace("8.0,9.0", "8.0,-inf"),
     ["column 'x'", "row 3", "finite"]),
    ("napari_fractional_id", NAPARI_TRACKS.replace("\n2,2", "\n1.5,2"),
     ["column 'ID'", "row 3", "whole"]),
]
BROKEN_DATAFRAMES += [(name, "tracks.csv", text, "napari", fragments)
                      for name, text, fragments in BROKEN_NAPARI]


#: (name, text of the spots file, fragments of the message after the file name)
BROKEN_SPOTS = [
    ("tm_csv_no_position_x", v7_spots().replace("POSITION_X", "POS_X", 1), ["missing column", "POSITION_X"]),
    ("tm_csv_text_in_x", v7_spots().replace("ID1,1,0,12.5,11.0", "ID1,1,0,12.5,abc"),
     ["column 'POSITION_X'", "row 3", "'abc'"]),
    ("tm_csv_fractional_frame", v7_spots().replace("1.0,1,2.5,1\nID4", "1.0,1.5,2.5,1\nID4"),
     ["column 'FRAME'", "row 3", "whole"]),
    ("tm_csv_duplicate_id", v7_spots().replace("ID4,4,", "ID4,0,"), ["column 'ID'", "row 4", "twice"]),
    ("tm_csv_no_units_row", v7_spots().replace(",,,(quality)", "X,,,(quality)"), ["units row"]),
    ("tm_csv_short_row", v7_spots().replace("2.5,1\nID4", "2.5\nID4"), ["row 3", "10 cells", "11"]),
    ("tm_csv_long_row", v7_spots().replace("2.5,1\nID4", "2.5,1,9\nID4"), ["row 3", "12 cells"]),
    ("tm_csv_header_only", V7_HEADER.format(unit="micron"), ["header and no rows"]),
    ("tm_csv_unknown_unit", v7_spots(unit="furlong"), ["column 'POSITION_X'", "furlong"]),
    ("tm_csv_division_without_edges", v7_spots(SPOTS + ((7, 0, 1, 9.0, 19.0),)),
     ["column 'TRACK_ID'", "two spots in frame 1", "edges"]),
    ("tm_csv_infinite_y", v7_spots().replace("51.0,20.5", "51.0,Infinity"), ["column 'POSITION_Y'", "row 4"]),
    ("tm_csv_v6_none_x", v6_spots().replace("ID1,1,0,12.500,11,", "ID1,1,0,12.500,None,"),
     ["column 'POSITION_X'", "row 3", "'None'"]),
]


@generator
def tracker_csv_cases(root: Path) -> list[Case]:
    cases = []
    base = root / "tracker_csv"
    base.mkdir(parents=True, exist_ok=True)

    def case(name: str, files: dict[str, str | bytes], named: str, fragments: list[str]) -> None:
        """Convert the first of ``files``; the message names the file ``named``."""
        folder = base / name
        folder.mkdir()
        for file_name, text in files.items():
            data = text.encode("utf-8") if isinstance(text, str) else text
            (folder / file_name).write_bytes(data)
        out = folder / "_out"
        cases.append(Case(name, ["convert", str(folder / next(iter(files))), "--to", "parquet",
                                 "--out", str(out)], 2, [named, *fragments], out))

    for name, text, fragments in BROKEN_SPOTS:
        case(name, {"run_spots.csv": text}, "run_spots.csv", fragments)
    case("tm_csv_empty", {"run_spots.csv": b""}, "run_spots.csv", ["empty"])
    case("tm_csv_edge_unknown_spot", {"run_spots.csv": v7_spots(),
                                      "run_edges.csv": v7_edges([(0, 0, 1), (0, 1, 9)])},
         "run_edges.csv", ["column 'SPOT_TARGET_ID'", "row 2", "spot 9"])
    case("tm_csv_edge_same_frame", {"run_spots.csv": v7_spots(),
                                    "run_edges.csv": v7_edges([(0, 0, 1), (0, 0, 3)])},
         "run_edges.csv", ["row 2", "same frame"])
    lines = deecell_csv(np.arange(2 * 3 * 3, dtype=float).reshape(2, 3, 3)).splitlines(keepends=True)
    third = lines[3].split(",")  # data row 3: volume 1, cell 3
    case("dct_nan_z", {"tracked_coordinates.csv": "".join(lines[:3] + [",".join(third[:4] + ["nan\n"])]
                                                            + lines[4:])},
         "tracked_coordinates.csv", ["column 'z(interpolated)'", "row 3"])
    case("dct_fractional_cell", {"tracked_coordinates.csv": "".join(
        lines[:3] + [",".join(third[:1] + ["2.5e+00"] + third[2:])] + lines[4:])},
         "tracked_coordinates.csv", ["column 't'", "row 3", "whole"])
    for name, file_name, text, fmt, fragments in BROKEN_DATAFRAMES:
        case(name, {file_name: text}, file_name, fragments)
        cases[-1].args += ["--format", fmt]
    for name, graph, fragments in BROKEN_NAPARI_GRAPHS:
        case(name, {"tracks.csv": NAPARI_TRACKS, "graph.json": graph}, "graph.json", fragments)
        cases[-1].args += ["--format", "napari", "--pixel-size", "1"]
    case("laptrack_split_unknown_track", {"l.csv": LAPTRACK_TRACKS,
                                          "l_split.csv": LAPTRACK_SPLIT.replace("0,2", "0,7")},
         "l_split.csv", ["column 'child_track_id'", "row 2", "track 7"])
    return cases
