"""Camera frames to camera observations, on a thread of their own.

The camera driver hands over only its latest frame; this reader runs each
through the frame pipeline (detection and classification in the calibrated
view) and the temporal filter, and passes what the filter settles to the
service like any device observation. A frame takes tens of milliseconds, so
it must not run on the service's worker thread, and a slow frame simply
means the next one read is a newer one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from vision.table.observations import CameraObservation

__all__ = ["CameraReader"]

log = logging.getLogger(__name__)


class CameraReader:
    def __init__(self, pipeline: object, tracker: object, deliver: Callable[[CameraObservation], None],
                 on_read: Callable[[object, object], None] | None = None) -> None:
        self.pipeline = pipeline
        self.on_read = on_read  # (image, readings) of every frame read: the service's snapshots
        self.tracker = tracker
        self.deliver = deliver
        self._cond = threading.Condition()
        self._latest: object | None = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="camera-reader", daemon=True)
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
        """The driver's callback: keep only the newest frame."""
        with self._cond:
            self._latest = camera_frame
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stop or self._latest is not None)
                if self._stop:
                    return
                current, self._latest = self._latest, None
            try:
                readings = self.pipeline.process(current.image)  # type: ignore[attr-defined]
                observations = self.tracker.update(readings, current.timestamp)  # type: ignore[attr-defined]
                self.frames += 1
                if self.on_read is not None:
                    self.on_read(current.image, readings)  # type: ignore[attr-defined]
            except Exception:  # a bad frame must not stop the camera
                self.errors += 1
                log.exception("cannot read a camera frame")
                continue
            for observation in observations:
                self.deliver(observation)
