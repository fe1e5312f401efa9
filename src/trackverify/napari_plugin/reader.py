"""The npe2 reader: a folder holding ``audit.parquet`` and ``audit.json`` opens as the
layers of :func:`trackverify.napari_plugin.layers.audit_layers`; anything else is left to
other readers (``None``)."""

from __future__ import annotations

from trackverify.napari_plugin.layers import audit_layers, is_audit_folder


def get_reader(path):
    """napari's reader contribution: a function reading ``path`` when it is an audit folder
    (one path, or a list of one), else None."""
    if isinstance(path, list):
        if len(path) != 1:
            return None
        path = path[0]
    return read_audit_folder if is_audit_folder(path) else None


def read_audit_folder(path):
    """The layers of the audit folder ``path`` (or of the first of a list)."""
    return audit_layers(path[0] if isinstance(path, list) else path)
