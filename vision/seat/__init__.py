"""The seat camera: a webcam at each seat reads that player's standing hand.

What a caller imports from here (each name is loaded on first use):

- where the camera sees the row (:class:`SeatCalibration`), found from two marker cards stood at the row's
  ends (:func:`calibrate_seat`, the cards: :func:`seat_card`);
- a frame read (:class:`SeatReader` -> :class:`SeatFrame` of :class:`SeenTile`), with the club's set
  enrolled from the seat camera itself (:func:`enroll_from_rows`, each frame checked by the packaged sets for
  rows swapped, reversed or shifted: :func:`check_rows`, :class:`RowOrderError`) or a packaged reader;
- the annotated picture of a frame (:func:`annotate_seat`);
- many frames folded under what the engine knows (:class:`HandConsensus`, :class:`SeatKnowledge`) into
  the hand to publish (:class:`HandReading`): a tile not yet sure stays unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vision.faces import lazy_face

if TYPE_CHECKING:
    from vision.seat.annotation import annotate_seat
    from vision.seat.calibration import SeatCalibration, SeatCalibrationError, calibrate_seat, seat_card
    from vision.seat.consensus import HandConsensus, HandReading, SeatKnowledge
    from vision.seat.enrollment import RowOrderError, check_rows
    from vision.seat.reader import ENROLL_ROWS, SeatFrame, SeatReader, SeenTile, enroll_from_rows

_WHERE = {
    "annotate_seat": "annotation",
    "SeatCalibration": "calibration", "SeatCalibrationError": "calibration", "calibrate_seat": "calibration",
    "seat_card": "calibration", "ENROLL_ROWS": "reader",
    "HandConsensus": "consensus", "HandReading": "consensus", "SeatKnowledge": "consensus",
    "RowOrderError": "enrollment", "check_rows": "enrollment",
    "SeatFrame": "reader", "SeatReader": "reader", "SeenTile": "reader", "enroll_from_rows": "reader",
}  # fmt: skip

__all__ = [
    "ENROLL_ROWS",
    "HandConsensus",
    "HandReading",
    "RowOrderError",
    "SeatCalibration",
    "SeatCalibrationError",
    "SeatFrame",
    "SeatKnowledge",
    "SeatReader",
    "SeenTile",
    "annotate_seat",
    "calibrate_seat",
    "check_rows",
    "enroll_from_rows",
    "seat_card",
]

__getattr__, __dir__ = lazy_face(__name__, _WHERE, globals())
