"""The audit's events as a table docked in napari, a row's jump to its event, and
:func:`open_audit` for scripts (Qt: imported by napari, or by a script that has napari).

A row is one event of ``events.csv`` (every audit points layer in the viewer, its
recording's events in rank order). Choosing it (click or arrow keys) moves the time slider to
the event's first frame, selects the event's observations in that frame (audit.parquet's
``event`` column), moves the z slider to them and centres the view on them; the event's
evidence sentence is shown under the table.
"""

from __future__ import annotations

import numpy as np
from qtpy.QtWidgets import (QAbstractItemView, QLabel, QTableWidget, QTableWidgetItem,
                            QVBoxLayout, QWidget)

from trackverify.napari_plugin.layers import audit_layers, event_rows

#: events.csv columns the table shows, in order (a column the file lacks is left out).
TABLE_COLUMNS = ("rank", "kind", "recording", "ids", "lookalike_id", "first_frame",
                 "last_frame", "frames", "observations", "flagged", "on_lookalike")


def audit_points(viewer) -> list:
    """The viewer's points layers that came from an audit folder."""
    from napari.layers import Points

    return [layer for layer in viewer.layers
            if "trackverify" in layer.metadata and isinstance(layer, Points)]


def jump_to_event(viewer, layer, rank: int, frame: int | None = None) -> np.ndarray:
    """Show event ``rank`` of the audit points ``layer``: the time slider at its first frame
    (or ``frame``), its observations there selected, the view centred on them. Returns the
    selected points' indices (none when the event has no observation in that frame)."""
    events = {int(e["rank"]): e for e in layer.metadata["trackverify"]["events"]}
    event = events[int(rank)]
    frame = int(event["first_frame"]) if frame is None else int(frame)
    rows = event_rows(layer.features, layer.data[:, 0], int(rank), frame)
    viewer.dims.set_point(0, frame)
    viewer.layers.selection.active = layer
    layer.selected_data = set(rows.tolist())
    if len(rows):
        centre = layer.data[rows, 1:].mean(axis=0)
        for axis, value in enumerate(centre[:-2], start=1):  # z: the event's depth
            viewer.dims.set_point(axis, float(value))
        camera(viewer).center = tuple(float(v) for v in centre[-2:])
    return rows


def show_every_depth(viewer) -> None:
    """With a z axis (``frame, z, y, x``), a 2-D view shows every depth of the frame: the z
    slice as thick as the audit's whole z range (napari's thick slicing)."""
    deep = [layer for layer in audit_points(viewer) if layer.data.shape[1] == 4]
    if not deep or viewer.dims.ndim != 4:
        return
    z = np.concatenate([layer.data[:, 1] for layer in deep])
    span = float(np.ptp(z)) if len(z) else 0.0
    margins = list(viewer.dims.margin_left), list(viewer.dims.margin_right)
    for margin in margins:
        margin[1] = span
    viewer.dims.margin_left, viewer.dims.margin_right = tuple(margins[0]), tuple(margins[1])


def camera(viewer):
    """The viewer's camera: ``viewer.scene.camera`` (napari >= 0.9), else ``viewer.camera``."""
    scene = getattr(viewer, "scene", None)
    return scene.camera if scene is not None else viewer.camera


class EventsTable(QWidget):
    """The events of every audit in ``napari_viewer`` as a table (see the module doc)."""

    def __init__(self, napari_viewer):
        super().__init__()
        self.viewer = napari_viewer
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.evidence = QLabel()
        self.evidence.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.evidence)
        self.rows: list[tuple] = []  # (layer, event) per table row
        self.table.currentCellChanged.connect(lambda row, *_: self.jump(row))
        napari_viewer.layers.events.inserted.connect(self.refresh)
        napari_viewer.layers.events.removed.connect(self.refresh)
        self.refresh()

    def refresh(self, *_) -> None:
        """Rebuild the rows from the viewer's audit layers."""
        self.rows = [(layer, event) for layer in audit_points(self.viewer)
                     for event in sorted(layer.metadata["trackverify"]["events"],
                                         key=lambda e: int(e["rank"]))]
        columns = [c for c in TABLE_COLUMNS if any(c in e for _, e in self.rows)]
        self.table.blockSignals(True)
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setRowCount(len(self.rows))
        for i, (_, event) in enumerate(self.rows):
            for j, column in enumerate(columns):
                self.table.setItem(i, j, QTableWidgetItem(_text(event.get(column))))
        self.table.resizeColumnsToContents()
        self.table.blockSignals(False)
        self.evidence.setText("" if self.rows else "no events (no events.csv, or none found)")

    def jump(self, row: int) -> np.ndarray | None:
        """Jump to the event of table row ``row`` (:func:`jump_to_event`)."""
        if not 0 <= row < len(self.rows):
            return None
        layer, event = self.rows[row]
        self.evidence.setText(_text(event.get("evidence")))
        return jump_to_event(self.viewer, layer, int(event["rank"]))


def _text(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def open_audit(folder, viewer=None, image=None, image_scale=None):
    """Open the audit folder ``folder`` in ``viewer`` (a new napari viewer when None) with
    the events table docked; ``image`` / ``image_scale``: the lab's volume underneath
    (:func:`trackverify.napari_plugin.layers.image_layer`). Returns ``(viewer, table)``."""
    if viewer is None:
        import napari

        viewer = napari.Viewer()
    for data, options, kind in audit_layers(folder, image, image_scale):
        getattr(viewer, f"add_{kind}")(data, **options)
    show_every_depth(viewer)
    table = EventsTable(viewer)
    viewer.window.add_dock_widget(table, name="Audit events", area="right")
    return viewer, table
