"""Camera frames to camera observations, on a thread of their own.

The camera driver hands over its frames; this reader runs the newest
(:mod:`tablesvc.service.newest_frame`) through the frame pipeline (detection and classification in the calibrated
view) and the temporal filter, and passes what the filter settles to the
service like any device observation. A frame takes tens of milliseconds, so
it must not run on the service's worker thread, and a slow frame simply
means the next one read is a newer one.
"""

from __future__ import annotations

from collections.abc import Callable

from tablesvc.service.newest_frame import NewestFrameReader
from vision.table.observations import CameraObservation

__all__ = ["CameraReader"]


class CameraReader(NewestFrameReader):
    def __init__(self, pipeline: object, tracker: object, deliver: Callable[[CameraObservation], None],
                 on_read: Callable[[object, object], None] | None = None) -> None:
        super().__init__("camera-reader", "the table camera")
        self.pipeline = pipeline
        self.on_read = on_read  # (image, readings) of every frame read: the service's snapshots
        self.tracker = tracker
        self.deliver = deliver

    def _read(self, camera_frame: object | None) -> list[CameraObservation]:
        readings = self.pipeline.process(camera_frame.image)  # type: ignore[attr-defined]
        observations = self.tracker.update(readings, camera_frame.timestamp)  # type: ignore[attr-defined]
        self.frames += 1
        if self.on_read is not None:
            self.on_read(camera_frame.image, readings)  # type: ignore[attr-defined]
        return observations

    def _deliver(self, result: object) -> None:
        for observation in result:  # type: ignore[attr-defined]
            self.deliver(observation)
