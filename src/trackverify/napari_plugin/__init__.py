"""A napari plugin (npe2; extra ``napari``) that opens an audit folder as layers.

``trackverify audit TRACKS --out DIR`` writes ``DIR``; in napari, File > Open Folder (or
``napari DIR``, or :func:`trackverify.napari_plugin.widget.open_audit` from Python) gives,
per recording: the observations as points coloured by verdict, the tracker's tracks as a
tracks layer, and (Plugins > trackverify > Audit events) the review list as a table whose
rows jump the viewer to an event's first frame with its observations selected. The lab's
volume goes underneath as an image layer (:func:`layers.audit_layers`' ``image``).

``layers`` builds the layer data from the files (no Qt); ``reader`` is the npe2 reader;
``widget`` holds the events table and the jump (Qt, imported by napari only). The manifest
is ``napari.yaml`` beside this file, registered by the ``napari.manifest`` entry point.
"""
