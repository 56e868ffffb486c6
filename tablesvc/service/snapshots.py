"""A low-rate annotated picture of what the camera sees, for the club's dashboard.

A club owner who sees a refused camera event on the dashboard wants to see
what the camera saw. :class:`Snapshots` keeps the camera's latest frame and
its reading; every ``interval`` seconds (a new frame permitting) and at once
when the engine refuses something the camera reported, it draws the reading
over the frame (:func:`vision.table.annotation.annotate`), encodes it as JPEG and
hands ``{"schema", "camera", "ts", "reason", "tiles", "unknown", "width",
"height", "jpeg": base64}`` to ``publish``, which the service puts on the
retained ``camera/<name>/snapshot`` topic. Drawing and encoding (~20 ms)
happen in the caller's thread, a few times a minute.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import cv2
import numpy as np

from tablesvc.mqtt.payloads import iso_time
from tablesvc.mqtt.topics import SCHEMA_VERSION
from vision.table.annotation import annotate
from vision.table.calibration import Calibration
from vision.table.geometry import TableGeometry

__all__ = ["Snapshots"]

log = logging.getLogger(__name__)


class Snapshots:
    """``frame(image, readings)`` from the camera's reader, ``refused(reason)`` from the service's worker."""

    def __init__(self, camera: str, calibration: Calibration, geometry: TableGeometry | None,
                 publish: Callable[[dict[str, Any]], None], *, interval: float = 5.0, size: int = 1024,
                 quality: int = 80, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        if interval <= 0:
            raise ValueError("the snapshot interval must be positive (seconds)")
        self.camera = camera
        self.calibration = calibration
        self.geometry = geometry or TableGeometry()
        self.publish = publish
        self.interval = interval
        self.size = size
        self.quality = quality
        self.clock = clock
        self.wall_clock = wall_clock
        self.published = 0
        self._lock = threading.Lock()
        self._latest: tuple[np.ndarray, Any] | None = None
        self._last: float | None = None

    def frame(self, image: np.ndarray, readings: Any) -> None:
        """A frame read (``readings`` a :class:`~vision.table.pipeline.ZoneReadings`); publishes when one is due."""
        with self._lock:
            self._latest = (image, readings)
            due = self._last is None or self.clock() - self._last >= self.interval
            if due:
                self._last = self.clock()
        if due:
            self._send(image, readings, None)

    def refused(self, reason: str) -> None:
        """The engine refused the camera's report: the latest frame, with the reason, at once."""
        with self._lock:
            latest = self._latest
            if latest is not None:
                self._last = self.clock()
        if latest is None:
            log.info("camera %s: no frame yet to show with the refusal", self.camera)
            return
        self._send(*latest, reason)

    def _send(self, image: np.ndarray, readings: Any, reason: str | None) -> None:
        try:
            payload = self.payload(image, readings, reason)
        except Exception:  # a snapshot is a picture for people: it must never stop the camera
            log.exception("camera %s: cannot draw a snapshot", self.camera)
            return
        self.publish(payload)
        self.published += 1

    def payload(self, image: np.ndarray, readings: Any, reason: str | None = None) -> dict[str, Any]:
        ts = self.wall_clock()
        stamp = datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        tiles = tuple(getattr(readings, "tiles", ()))
        picture = annotate(image, tiles, self.calibration, self.geometry, title=f"camera {self.camera}  {stamp}",
                           refused=reason, size=self.size)
        ok, jpeg = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError("OpenCV could not encode the snapshot as JPEG")
        face_up = [t for t in tiles if t.face_up and not t.occluded]
        return {"schema": SCHEMA_VERSION, "camera": self.camera, "ts": iso_time(ts), "reason": reason,
                "tiles": len(face_up), "unknown": sum(t.tile is None for t in face_up),
                "width": picture.shape[1], "height": picture.shape[0],
                "jpeg": base64.b64encode(jpeg.tobytes()).decode("ascii")}
