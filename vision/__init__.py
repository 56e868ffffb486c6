"""Tile recognition: calibration, zones, detection, classification and temporal filtering of camera
frames, and the reading of a player's photo. Knows nothing of the engine.

What a caller imports from here (each name is loaded on first use, so ``import vision`` costs nothing
until a reader is asked for):

- the camera's frame pipeline and tracker: :class:`FramePipeline`, :class:`ZoneReadings`,
  :class:`ZoneTracker`, with :func:`calibrate`, :class:`Calibration` and :class:`TableGeometry`;
- the photo reader: :class:`PhotoReader` (a photo -> :class:`PhotoReading`), its finder
  :class:`TileFinder` (:class:`FoundTile` boxes) and :func:`decode_photo` / :class:`BadPhoto`;
- the tile readers: :class:`TileClassifier` (LDA over hand-made features) and
  :class:`EmbeddingClassifier` (the learnt embedding), enrolled from the tile set
  (:data:`TILES`, :class:`GridLayout`);
- what the camera tells the service: :class:`CameraObservation` and its kinds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vision.calibration import Calibration, CalibrationError, calibrate
    from vision.classifier import TileClassifier
    from vision.embedding import EmbeddingClassifier
    from vision.finder import FoundTile, TileFinder
    from vision.geometry import TableGeometry, load_geometry
    from vision.observations import (
        CameraObservation,
        DoraIndicatorSeen,
        HandRevealed,
        KanAdded,
        MeldSeen,
        TileDiscarded,
        UraIndicatorsSeen,
    )
    from vision.photo_input import BadPhoto, decode_photo
    from vision.photo_reader import FinderMissing, PhotoReader, PhotoReading
    from vision.pipeline import FramePipeline, ZoneReadings
    from vision.tile_set import TILES, GridLayout, read_tile_directory
    from vision.tracking import ZoneTracker

__all__ = [
    "TILES",
    "BadPhoto",
    "Calibration",
    "CalibrationError",
    "CameraObservation",
    "DoraIndicatorSeen",
    "EmbeddingClassifier",
    "FinderMissing",
    "FoundTile",
    "FramePipeline",
    "GridLayout",
    "HandRevealed",
    "KanAdded",
    "MeldSeen",
    "PhotoReader",
    "PhotoReading",
    "TableGeometry",
    "TileClassifier",
    "TileDiscarded",
    "TileFinder",
    "UraIndicatorsSeen",
    "ZoneReadings",
    "ZoneTracker",
    "calibrate",
    "decode_photo",
    "load_geometry",
    "read_tile_directory",
]

#: the module each name lives in
_WHERE: dict[str, str] = {
    "FramePipeline": "pipeline",
    "ZoneReadings": "pipeline",
    "ZoneTracker": "tracking",
    "Calibration": "calibration",
    "CalibrationError": "calibration",
    "calibrate": "calibration",
    "TableGeometry": "geometry",
    "load_geometry": "geometry",
    "FinderMissing": "photo_reader",
    "PhotoReader": "photo_reader",
    "PhotoReading": "photo_reader",
    "BadPhoto": "photo_input",
    "decode_photo": "photo_input",
    "FoundTile": "finder",
    "TileFinder": "finder",
    "TileClassifier": "classifier",
    "EmbeddingClassifier": "embedding",
    "GridLayout": "tile_set",
    "TILES": "tile_set",
    "read_tile_directory": "tile_set",
    "CameraObservation": "observations",
    "DoraIndicatorSeen": "observations",
    "HandRevealed": "observations",
    "KanAdded": "observations",
    "MeldSeen": "observations",
    "TileDiscarded": "observations",
    "UraIndicatorsSeen": "observations",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
