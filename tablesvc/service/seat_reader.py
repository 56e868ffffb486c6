"""A seat camera's frames to the seat's private hand, on a thread of its own.

Like the table camera's reader, it keeps only the newest frame (a slow frame means the next one read is
a newer one). Each frame is read (``vision.seat.SeatReader``) and folded with what the engine knows of
the seat at that moment (``knowledge``: a callable giving the current
:class:`~vision.seat.consensus.SeatKnowledge`, from :func:`tablesvc.service.seat_hands.knowledge_of` on the
service's state) by the seat's :class:`~vision.seat.consensus.HandConsensus`; each changed reading goes
to ``deliver`` (a :class:`~tablesvc.service.seat_hands.PrivateHands`' ``update``): private, never the public
state. When only the engine's knowledge changes (a discard, a call), :meth:`SeatCameraReader.knowledge_changed`
folds it at once, before the camera shows it. :meth:`SeatCameraReader.resume` takes up the reading kept
before a restart (the journal's), when it is of the hand in play.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from vision.seat.consensus import HandConsensus, HandReading, SeatKnowledge

__all__ = ["SeatCameraReader"]

log = logging.getLogger(__name__)


class SeatCameraReader:
    def __init__(self, seat: int, reader: object, knowledge: Callable[[], SeatKnowledge],
                 deliver: Callable[[HandReading], object], agree: int = 3) -> None:
        self.seat = seat
        self.reader = reader
        self.knowledge = knowledge
        self.deliver = deliver
        self.consensus = HandConsensus(seat, agree=agree)
        self._cond = threading.Condition()
        self._latest: object | None = None
        self._know_changed = False
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"seat-camera-{'ESWN'[seat]}", daemon=True)
        self.frames = 0
        self.errors = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def frame(self, camera_frame: object) -> None:
        """The driver's callback (an object with ``image``): keep only the newest frame."""
        with self._cond:
            self._latest = camera_frame
            self._cond.notify_all()

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
        with self._cond:
            self._know_changed = True
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stop or self._latest is not None or self._know_changed)
                if self._stop:
                    return
                current, self._latest, self._know_changed = self._latest, None, False
            try:
                seen = self.reader.read(current.image) if current is not None else None  # type: ignore[attr-defined]
                reading = self.consensus.feed(seen, self.knowledge())
                if current is not None:
                    self.frames += 1
            except Exception:  # a bad frame must not stop the camera
                self.errors += 1
                log.exception("seat camera %s: cannot read a frame", "ESWN"[self.seat])
                continue
            self.deliver(reading)
