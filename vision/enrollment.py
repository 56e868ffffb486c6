"""Enroll a club's tile set from its own camera: the 37 tiles laid out as hands on the table.

A classifier enrolled from artwork reads crops that went through a camera it
never saw; enrolled from the club's camera it learns the very pixels it will
read (its lens, light, white balance and tile set). The layout reuses the
slots the detector already knows, the revealed-hand rows in front of the
seats, so nothing has to be measured:

- in front of seat 0 (East): ``1m .. 9m`` then ``1p .. 9p`` (18 tiles, left to right);
- in front of seat 1 (South): ``1s .. 9s`` then ``E S W N P F C`` (16 tiles);
- in front of seat 2 (West): ``5mr 5pr 5sr`` (a set without red fives leaves this row out).

Each seat's row is read left to right *as that seat sees it*, like a hand laid
down at the end of a game. ``tablesvc vision enroll`` runs this on one frame
and saves the model for the service's ``[camera] model``.
"""

from __future__ import annotations

import numpy as np

from vision.calibration import Calibration
from vision.classifier import TileClassifier
from vision.detection import TileDetector
from vision.geometry import TableGeometry

__all__ = ["ENROLL_LAYOUT", "EnrollmentError", "crops_from_layout", "enroll_from_frame"]

_SUITED = {s: [f"{n}{s}" for n in range(1, 10)] for s in "mps"}

#: seat -> the tiles of its hand row, left to right as that seat sees them
ENROLL_LAYOUT: dict[int, tuple[str, ...]] = {
    0: (*_SUITED["m"], *_SUITED["p"]),
    1: (*_SUITED["s"], "E", "S", "W", "N", "P", "F", "C"),
    2: ("5mr", "5pr", "5sr"),
}


class EnrollmentError(ValueError):
    """The frame does not show the enrollment layout (a row missing, too short or face down)."""


def crops_from_layout(frame: np.ndarray, calibration: Calibration,
                      geometry: TableGeometry | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """Tile name -> upright crop, cut from ``frame`` as the detector cuts them for classification.

    Raises :class:`EnrollmentError` naming the row that does not match :data:`ENROLL_LAYOUT`
    (the red-five row may be absent: sets without red fives).
    """
    detector = TileDetector(calibration, geometry)
    tiles = detector.detect(frame)
    out: dict[str, np.ndarray] = {}
    for seat, names in ENROLL_LAYOUT.items():
        row = sorted((t for t in tiles if t.zone == "hand" and t.seat == seat), key=lambda t: t.index)
        if not row and seat == 2:
            continue  # no red fives in this set
        if len(row) != len(names):
            raise EnrollmentError(
                f"seat {seat}'s row shows {len(row)} tiles, the layout has {len(names)} "
                f"({' '.join(names)}): lay them edge to edge in the hand row in front of that seat"
            )
        hidden = [names[i] for i, t in enumerate(row) if not t.face_up or t.crop is None]
        if hidden:
            raise EnrollmentError(f"seat {seat}'s row: {' '.join(hidden)} face down or covered; turn them face up")
        for name, t in zip(names, row, strict=True):
            out[name] = t.crop  # type: ignore[assignment]
    return out


def enroll_from_frame(frame: np.ndarray, calibration: Calibration, geometry: TableGeometry | None = None,
                      classifier: TileClassifier | None = None) -> TileClassifier:  # fmt: skip
    """A classifier enrolled from one frame of the layout (a new one unless ``classifier`` is given)."""
    classifier = classifier or TileClassifier()
    classifier.enroll(crops_from_layout(frame, calibration, geometry))
    return classifier
