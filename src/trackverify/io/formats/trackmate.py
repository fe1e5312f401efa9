"""TrackMate XML (``<TrackMate>``: ``Model/AllSpots``, ``AllTracks``, ``FilteredTracks``).

Read: every spot (``ID``, ``FRAME``, ``POSITION_X/Y/Z``, ``name``) of the tracks listed in
``FilteredTracks`` (the tracks TrackMate shows and exports; spots in no such track are not
read), and every ``Edge`` of those tracks. Tracks are cut into tracklets at splits and
merges (:mod:`.graph`); TrackMate's ``TRACK_ID`` is kept as ``source_track``, the spot ``ID``
as ``node`` and its ``name`` as ``spot_name``. 2-D when every ``POSITION_Z`` is 0 and the
image has one slice.

Units: TrackMate positions are already in the model's ``spatialunits`` (``µm``, ``um``,
``micron``, ``nm``, ``mm``; ``pixel`` means uncalibrated: use ``--pixel-size``). The
``ImageData`` pixel sizes are recorded. Line endings (CRLF), non-ASCII units and the Log
text (which may use comma decimals) do not matter: the Log is not read, and a number with a
comma decimal in a spot attribute is read as a decimal.

Safety: parsed with defusedxml (no DTD, no entities, no external resources, no network),
streamed element by element, refused above :data:`MAX_BYTES`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from trackverify.errors import InputError
from trackverify.io.bounded import check_size
from trackverify.extras import require
from trackverify.io.formats.base import Tracks
from trackverify.io.formats.graph import node_frames, tracklets
from trackverify.io.formats.units import named_unit
from trackverify.values import INT64_MAX, INT64_MIN

MAX_BYTES = 2 * 1024**3


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as handle:
        head = handle.read(4096)
    return b"<TrackMate" in head


def _number(text: str | None, where: str, what: str) -> float:
    if text is None:
        raise InputError(f"a spot has no {what}", source=where)
    try:
        return float(text)
    except ValueError:
        try:
            return float(text.replace(",", "."))
        except ValueError:
            raise InputError(f"a spot's {what} is not a number: {text!r}", source=where) from None


class _GrowingReads:
    """A binary file whose ``read`` returns half of what was read so far (64 KiB .. 64 MiB).

    ``iterparse`` feeds the parser 16 KiB at a time, and expat 2.5 rescans a token that
    spans feeds from its start at every feed: a 10 MB attribute value cost 8 s (quadratic).
    Feeds that grow with the bytes read make that linear; the memory held stays bounded.
    """

    def __init__(self, handle):
        self._handle = handle
        self._read = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._handle.read(min(max(size, 1 << 16, self._read // 2), 1 << 26))
        self._read += len(chunk)
        return chunk


def read(path: Path) -> Tracks:
    where = str(path)
    check_size(path, MAX_BYTES, "XML file")
    etree = require("defusedxml.ElementTree", "formats", "reading TrackMate XML")
    defused = require("defusedxml", "formats", "reading TrackMate XML")
    spots: list[tuple] = []
    edges: list[tuple] = []
    edge_track: list[int] = []
    filtered: list[int] = []
    model: dict = {}
    image: dict = {}
    track_id = None
    root_seen = False
    handle = open(path, "rb")
    try:
        for event, element in etree.iterparse(_GrowingReads(handle), events=("start", "end"),
                                               forbid_dtd=True, forbid_entities=True,
                                               forbid_external=True):
            tag = element.tag
            if event == "start":
                if not root_seen:
                    if tag != "TrackMate":
                        raise InputError(f"not a TrackMate XML file (root <{tag}>)", source=where)
                    root_seen = True
                if tag == "Model":
                    model = dict(element.attrib)
                elif tag == "Track":
                    track_id = int(element.get("TRACK_ID"))
                continue
            a = element.attrib
            if tag == "Spot":
                spots.append((int(a["ID"]), _number(a.get("FRAME"), where, "FRAME"),
                              _number(a.get("POSITION_X"), where, "POSITION_X"),
                              _number(a.get("POSITION_Y"), where, "POSITION_Y"),
                              _number(a.get("POSITION_Z", "0"), where, "POSITION_Z"),
                              a.get("name")))
            elif tag == "Edge":
                edges.append((int(a["SPOT_SOURCE_ID"]), int(a["SPOT_TARGET_ID"])))
                edge_track.append(track_id)
            elif tag == "TrackID":
                filtered.append(int(a["TRACK_ID"]))
            elif tag == "ImageData":
                image = dict(a)
            if tag in ("Spot", "Edge", "TrackID"):
                element.clear()
    except defused.DefusedXmlException as exc:
        raise InputError(f"refused: the XML uses a DTD, entities or external references "
                         f"({type(exc).__name__})", source=where) from exc
    except etree.ParseError as exc:
        raise InputError(f"not well-formed XML ({exc})", source=where) from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"a Spot, Edge or Track lacks a valid attribute ({exc})",
                         source=where) from exc
    finally:
        handle.close()
    if not spots:
        raise InputError("the TrackMate file has no spots", source=where)
    spot = pd.DataFrame(spots, columns=["node", "frame", "x", "y", "z", "spot_name"])
    beyond = next((t for t in (*edge_track, *filtered) if not INT64_MIN <= t <= INT64_MAX), None)
    if beyond is not None:  # np.asarray raised OverflowError
        raise InputError(f"TRACK_ID {beyond} is beyond the 64-bit range", source=where,
                         column="TRACK_ID")
    link = pd.DataFrame(edges, columns=["source", "target"]).assign(
        source_track=np.asarray(edge_track, dtype=np.int64))
    keep = link["source_track"].isin(filtered).to_numpy()
    link = link[keep]
    index = pd.Index(spot["node"])
    if not index.is_unique:
        raise InputError("two spots share an ID", source=where, column="ID")
    src = index.get_indexer(link["source"])
    dst = index.get_indexer(link["target"])
    if (src < 0).any() or (dst < 0).any():
        raise InputError("an Edge names a spot that is not in AllSpots", source=where)
    in_track = np.zeros(len(spot), dtype=bool)
    in_track[src] = True
    in_track[dst] = True
    source_track = np.zeros(len(spot), dtype=np.int64)
    source_track[src] = link["source_track"].to_numpy()
    source_track[dst] = link["source_track"].to_numpy()
    frames = node_frames(spot["frame"].to_numpy(), where, "FRAME")
    track, parent, merges = tracklets(frames, src, dst, where)
    spot = spot.assign(frame=frames, track=track, parent_track=parent,
                       source_track=source_track)
    if merges is not None:
        spot["merge_parents"] = merges
    spot = spot[in_track]
    flat = (spot["z"] == 0).all() and image.get("nslices", "1") in ("1", None)
    if flat:
        spot = spot.drop(columns="z")
    spot = spot.sort_values(["frame", "track"], kind="stable").reset_index(drop=True)
    unit = model.get("spatialunits", "")
    calibration = named_unit(unit, f"TrackMate Model spatialunits='{unit}'", where, "spatialunits")
    details = {"trackmate_version": _root_version(path), "time_unit": model.get("timeunits"),
               "image_pixel_size": [image.get(k) for k in ("pixelwidth", "pixelheight", "voxeldepth")],
               "spots": int(len(spots)), "spots_read": int(len(spot)),
               "filtered_tracks": len(filtered), "links": int(len(link)),
               "tracklets": int(spot["track"].nunique())}
    return Tracks(spot, calibration, details)


def _root_version(path: Path) -> str | None:
    with open(path, "rb") as handle:
        head = handle.read(4096).decode("utf-8", "replace")
    start = head.find("<TrackMate")
    marker = 'version="'
    i = head.find(marker, start)
    return head[i + len(marker):head.find('"', i + len(marker))] if start >= 0 and i >= 0 else None
