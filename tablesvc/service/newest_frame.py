"""A thread that reads a camera's newest frame only.

A camera driver calls :meth:`NewestFrameReader.frame` with each frame it grabs; a frame takes tens of
milliseconds or more to read, so it is read on a thread of its own, never on the driver's or the service's
worker thread, and only the newest frame waiting is read: a slow frame means the next one read is a newer
one, never a backlog. :class:`~tablesvc.service.camera_reader.CameraReader` (the table camera) and
:class:`~tablesvc.service.seat_reader.SeatCameraReader` (a seat camera) say what reading a frame is.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["NewestFrameReader"]

log = logging.getLogger(__name__)


class NewestFrameReader:
    """Keeps the newest frame and reads it on its own thread (``name``). A subclass implements
    :meth:`_read` (may raise: the frame is counted in :attr:`errors`, logged, and the thread goes on) and
    :meth:`_deliver` (its result, outside the error guard); :meth:`_wake` reads without a new frame."""

    def __init__(self, name: str, what: str) -> None:
        self.what = what  # how the log names the camera
        self._cond = threading.Condition()
        self._latest: object | None = None
        self._woken = False
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
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
        """The driver's callback (an object with ``image`` and ``timestamp``): keep only the newest frame."""
        with self._cond:
            self._latest = camera_frame
            self._cond.notify_all()

    def _wake(self) -> None:
        """Read once without waiting for a frame (:meth:`_read` is given None if none has come)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def _read(self, camera_frame: object | None) -> object:
        raise NotImplementedError

    def _deliver(self, result: object) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stop or self._latest is not None or self._woken)
                if self._stop:
                    return
                current, self._latest, self._woken = self._latest, None, False
            try:
                result = self._read(current)
            except Exception:  # a bad frame must not stop the camera
                self.errors += 1
                log.exception("%s: cannot read a frame", self.what)
                continue
            self._deliver(result)
