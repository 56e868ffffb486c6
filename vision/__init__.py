"""Tile recognition: calibration, zones, detection, classification and temporal filtering of camera
frames, and the reading of a player's photo. Knows nothing of the engine.

One room per concern, each with a face (its ``__init__``) that says what to import from it:

- :mod:`vision.table`, the table camera: markers, calibration, the table's slots, the frame
  pipeline and the tracker, the observations it emits;
- :mod:`vision.photos`, a photo with no markers: its input, the finder, the reader, the layout;
- :mod:`vision.naming`, naming a tile: the tile set, the embedding and the LDA classifier, their
  enrollment and model files.

The names most callers need are shown here too (each is loaded on first use, so ``import vision``
costs nothing until a reader is asked for):

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
    from vision.naming.classifier import TileClassifier
    from vision.naming.embedding import EmbeddingClassifier
    from vision.naming.tile_set import TILES, GridLayout, read_tile_directory
    from vision.photos.finder import FoundTile, TileFinder
    from vision.photos.input import BadPhoto, decode_photo
    from vision.photos.reader import FinderMissing, PhotoReader, PhotoReading
    from vision.table.calibration import Calibration, CalibrationError, calibrate
    from vision.table.geometry import TableGeometry, load_geometry
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
    "FramePipeline": "table.pipeline",
    "ZoneReadings": "table.pipeline",
    "ZoneTracker": "table.tracking",
    "Calibration": "table.calibration",
    "CalibrationError": "table.calibration",
    "calibrate": "table.calibration",
    "TableGeometry": "table.geometry",
    "load_geometry": "table.geometry",
    "FinderMissing": "photos.reader",
    "PhotoReader": "photos.reader",
    "PhotoReading": "photos.reader",
    "BadPhoto": "photos.input",
    "decode_photo": "photos.input",
    "FoundTile": "photos.finder",
    "TileFinder": "photos.finder",
    "TileClassifier": "naming.classifier",
    "EmbeddingClassifier": "naming.embedding",
    "GridLayout": "naming.tile_set",
    "TILES": "naming.tile_set",
    "read_tile_directory": "naming.tile_set",
    "CameraObservation": "table.observations",
    "DoraIndicatorSeen": "table.observations",
    "HandRevealed": "table.observations",
    "KanAdded": "table.observations",
    "MeldSeen": "table.observations",
    "TileDiscarded": "table.observations",
    "UraIndicatorsSeen": "table.observations",
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
