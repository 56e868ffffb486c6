"""A seat camera's frames to the seat's private hand, on a thread of its own.

Like the table camera's reader, it reads only the newest frame (:mod:`tablesvc.service.newest_frame`:
a slow frame means the next one read is a newer one). Each frame is read (``vision.seat.SeatReader``) and
folded with what the engine knows of the seat at that moment (``knowledge``: a callable giving the current
:class:`~vision.seat.consensus.SeatKnowledge`, from :func:`tablesvc.service.seat_hands.knowledge_of` on the
service's state) by the seat's :class:`~vision.seat.consensus.HandConsensus`; each changed reading goes
to ``deliver`` (a :class:`~tablesvc.service.seat_hands.PrivateHands`' ``update``): private, never the public
state. When only the engine's knowledge changes (a discard, a call), :meth:`SeatCameraReader.knowledge_changed`
folds it at once, before the camera shows it. :meth:`SeatCameraReader.resume` takes up the reading kept
before a restart (the journal's), when it is of the hand in play.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tablesvc.service.newest_frame import NewestFrameReader
from vision.seat.consensus import HandConsensus, HandReading, SeatKnowledge

__all__ = ["SeatCameraReader"]

log = logging.getLogger(__name__)


class SeatCameraReader(NewestFrameReader):
    def __init__(self, seat: int, reader: object, knowledge: Callable[[], SeatKnowledge],
                 deliver: Callable[[HandReading], object], agree: int = 3) -> None:
        super().__init__(f"seat-camera-{'ESWN'[seat]}", f"seat camera {'ESWN'[seat]}")
        self.seat = seat
        self.reader = reader
        self.knowledge = knowledge
        self.deliver = deliver
        self.consensus = HandConsensus(seat, agree=agree)

    def resume(self, reading: HandReading) -> bool:
        """Before :meth:`start`: take up ``reading`` (the seat's last, kept in the journal before a restart) when
        it is a reading of the hand in play that holds as many tiles as the engine says; it is delivered at once."""
        if not self.consensus.resume(reading, self.knowledge()):
            log.info("seat camera %s: the kept reading is not of the hand in play; reading afresh", "ESWN"[self.seat])
            return False
        self.deliver(reading)
        return True

    def knowledge_changed(self) -> None:
        """The engine's state changed (a draw, a discard, a call): fold it without waiting for a frame."""
        self._wake()

    def _read(self, camera_frame: object | None) -> HandReading:
        seen = self.reader.read(camera_frame.image) if camera_frame is not None else None  # type: ignore[attr-defined]
        reading = self.consensus.feed(seen, self.knowledge())
        if camera_frame is not None:
            self.frames += 1
        return reading

    def _deliver(self, result: object) -> None:
        self.deliver(result)  # type: ignore[arg-type]
