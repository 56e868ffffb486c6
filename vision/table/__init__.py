"""The table camera: markers and calibration, the table's slots, the frame pipeline and the tracker.

What a caller imports from here (each name is loaded on first use):

- the geometry of the table (:class:`TableGeometry`, :func:`load_geometry`) and the markers that
  calibrate a camera to it (:func:`calibrate`, :class:`Calibration`, :func:`detect_markers`,
  :func:`marker_sheet`);
- the tiles in the table's slots (:class:`TileDetector`, :class:`DetectedTile`);
- a frame's per-zone readings (:class:`FramePipeline`, :class:`ZoneReadings`) and the tracker that
  turns them into what the camera tells the service (:class:`ZoneTracker`, :class:`CameraObservation`
  and its kinds);
- the annotated picture of a frame (:func:`annotate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vision.faces import lazy_face

if TYPE_CHECKING:
    from vision.table.annotation import annotate
    from vision.table.calibration import Calibration, CalibrationError, calibrate, detect_markers, marker_sheet
    from vision.table.detection import DetectedTile, TileDetector
    from vision.table.geometry import TableGeometry, TileRect, load_geometry
    from vision.table.observations import (
        CameraObservation,
        DoraIndicatorSeen,
        HandRevealed,
        KanAdded,
        MeldSeen,
        TileDiscarded,
        UraIndicatorsSeen,
    )
    from vision.table.pipeline import FramePipeline, ZoneReadings
    from vision.table.tracking import ZoneTracker

_WHERE = {
    "annotate": "annotation",
    "Calibration": "calibration", "CalibrationError": "calibration", "calibrate": "calibration",
    "detect_markers": "calibration", "marker_sheet": "calibration",
    "DetectedTile": "detection", "TileDetector": "detection",
    "TableGeometry": "geometry", "TileRect": "geometry", "load_geometry": "geometry",
    "CameraObservation": "observations", "DoraIndicatorSeen": "observations", "HandRevealed": "observations",
    "KanAdded": "observations", "MeldSeen": "observations", "TileDiscarded": "observations",
    "UraIndicatorsSeen": "observations",
    "FramePipeline": "pipeline", "ZoneReadings": "pipeline",
    "ZoneTracker": "tracking",
}  # fmt: skip

__all__ = [
    "Calibration",
    "CalibrationError",
    "CameraObservation",
    "DetectedTile",
    "DoraIndicatorSeen",
    "FramePipeline",
    "HandRevealed",
    "KanAdded",
    "MeldSeen",
    "TableGeometry",
    "TileDetector",
    "TileDiscarded",
    "TileRect",
    "UraIndicatorsSeen",
    "ZoneReadings",
    "ZoneTracker",
    "annotate",
    "calibrate",
    "detect_markers",
    "load_geometry",
    "marker_sheet",
]

__getattr__, __dir__ = lazy_face(__name__, _WHERE, globals())
