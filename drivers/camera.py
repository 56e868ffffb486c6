"""The camera driver: OpenCV ``VideoCapture`` supervised in its own thread, latest frame only.

Sources, as OpenCV takes them: a device index (``0``, or ``"0"`` from a
config file), a device path (``/dev/video0``), a video file, or a stream URL
(``rtsp://``, ``http://``, ``https://`` ...). One thread decodes frames as
fast as the source gives them; a second thread hands the *latest* frame to
``on_frame``. A slow consumer (tile recognition on a small computer) thus
sees the newest image and never a backlog: frames decoded while it was busy
are counted as ``dropped`` and thrown away, instead of piling up in memory or
in the stream's socket buffer until the overlay lags by seconds.

A watchdog in the capture loop (Frigate's idea) closes and reopens the
source with exponential backoff when it cannot be opened, when ``read``
fails ``max_read_failures`` times in a row, or when a live source repeats
the very same image for ``frozen_after`` seconds (a hung encoder or stream
keeps "delivering" its last frame). Health goes to ``on_health`` on change
and every ``health_interval`` seconds. A file is read at its own frame rate
(``pace_fps`` overrides that) and ends at its end, or starts again with
``loop=True`` (for demos).

Nothing escapes the threads: OpenCV errors become health states, a callback
that raises is logged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from drivers.observations import CameraHealth
from drivers.supervision import Backoff, DriverThreads, HealthReporter, RateMeter, call_guarded

__all__ = ["CameraDriver", "CameraFrame", "redact"]

log = logging.getLogger(__name__)

_CLOSED = object()


@dataclass(frozen=True, eq=False)
class CameraFrame:
    """One decoded image (BGR, ``height x width x 3``, uint8).

    ``seq`` counts frames decoded since the driver started, so a gap between
    two delivered frames is the number dropped for a slow consumer.
    ``timestamp`` is the monotonic time at which decoding returned.
    """

    camera: str
    seq: int
    timestamp: float
    image: np.ndarray


def redact(source: str) -> str:
    """The source with any URL password hidden, for health and logs (RTSP URLs often carry one)."""
    return re.sub(r"(://[^/:@]*:)[^/@]*@", r"\1***@", source)


class _Latest:
    """A one-slot mailbox: ``put`` replaces what the consumer has not taken yet."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._item: CameraFrame | None = None
        self._closed = False

    def put(self, item: CameraFrame) -> bool:
        """Store ``item``; True if it replaced (dropped) an untaken one."""
        with self._cond:
            replaced = self._item is not None
            self._item = item
            self._cond.notify()
            return replaced

    def take(self, timeout: float) -> CameraFrame | object | None:
        """The latest item, None on timeout, or ``_CLOSED`` once closed and empty."""
        with self._cond:
            self._cond.wait_for(lambda: self._item is not None or self._closed, timeout)
            item, self._item = self._item, None
            if item is None and self._closed:
                return _CLOSED
            return item

    def close(self, discard: bool = False) -> None:
        """No more items; the consumer gets what is left (unless ``discard``) and then ``_CLOSED``."""
        with self._cond:
            self._closed = True
            if discard:
                self._item = None
            self._cond.notify_all()


class CameraDriver(DriverThreads):
    """Reads one camera (or file, or stream) and keeps reading it through failures.

    ``frozen_after`` (seconds of identical images before the source counts
    as frozen) defaults to 10 s for live sources and off for files, whose
    content may well stand still; give a number to apply it to any source.
    ``pace_fps``: None paces files at their own rate and live sources not at
    all; 0 turns pacing off; a number paces any source at that rate.
    ``open_timeout`` and ``read_timeout`` bound a stream's network waits.
    ``capture_factory(source)`` builds the ``VideoCapture`` (tests inject
    faults there).
    """

    def __init__(
        self,
        name: str,
        source: int | str | os.PathLike[str],
        *,
        on_frame: Callable[[CameraFrame], object],
        on_health: Callable[[CameraHealth], object] | None = None,
        loop: bool = False,
        backoff: tuple[float, float] = (0.5, 10.0),
        max_read_failures: int = 5,
        frozen_after: float | None = None,
        pace_fps: float | None = None,
        health_interval: float = 5.0,
        open_timeout: float = 5.0,
        read_timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        capture_factory: Callable[[int | str], Any] | None = None,
    ) -> None:
        super().__init__("camera driver", log)
        if max_read_failures < 1 or health_interval <= 0:
            raise ValueError("max_read_failures must be >= 1 and health_interval positive")
        self.name = name
        self.source: int | str = _normalise(source)
        self.is_file = isinstance(self.source, str) and "://" not in self.source and not self.source.startswith("/dev/")
        self.loop = loop
        self.max_read_failures = max_read_failures
        self.frozen_after = frozen_after if frozen_after is not None else (None if self.is_file else 10.0)
        self.pace_fps = pace_fps
        self.health_interval = health_interval
        self.open_timeout = open_timeout
        self.read_timeout = read_timeout
        self._on_frame = on_frame
        self._backoff = Backoff(*backoff)
        self._clock = clock
        self._capture_factory = capture_factory or self._default_capture

        self._mailbox = _Latest()
        self._lock = threading.Lock()  # guards the health fields, read by health() from any thread
        self._frames = 0
        self._dropped = 0
        self._errors = 0
        self._reconnects = 0
        self._last_frame: float | None = None
        self._rate = RateMeter()
        self._reporter = HealthReporter(
            f"camera {self.name}", redact(str(self.source)), lock=self._lock, snapshot=self.health, on_health=on_health,
            interval=health_interval, clock=clock, logger=log, calm=frozenset({"stopped", "end of file"}))

    # -- lifecycle -------------------------------------------------------------------------------

    def _thread_targets(self) -> list[tuple[str, Callable[[], None]]]:
        return [(f"camera-{self.name}", self._capture), (f"camera-{self.name}-out", self._deliver)]

    def _stopping(self) -> None:
        self._mailbox.close(discard=True)  # wakes the delivery thread

    # -- health ----------------------------------------------------------------------------------

    def health(self) -> CameraHealth:
        """A snapshot of the driver's health, safe to call from any thread."""
        with self._lock:
            now = self._clock()
            return CameraHealth(
                name=self.name,
                source=redact(str(self.source)),
                connected=self._reporter.connected,
                state=self._reporter.state,
                fps=round(self._rate.rate(now, self._frames), 2),
                frames=self._frames,
                dropped=self._dropped,
                errors=self._errors,
                reconnects=self._reconnects,
                last_frame=self._last_frame,
                timestamp=now,
            )

    def _error(self) -> None:
        with self._lock:
            self._errors += 1

    # -- capture ---------------------------------------------------------------------------------

    def _default_capture(self, source: int | str) -> Any:
        if isinstance(source, str) and "://" in source:
            params = [
                cv2.CAP_PROP_OPEN_TIMEOUT_MSEC,
                int(self.open_timeout * 1000),
                cv2.CAP_PROP_READ_TIMEOUT_MSEC,
                int(self.read_timeout * 1000),
            ]
            return cv2.VideoCapture(source, cv2.CAP_ANY, params)
        return cv2.VideoCapture(source)

    def _open(self) -> Any | None:
        capture = None
        try:
            capture = self._capture_factory(self.source)
            if capture is not None and capture.isOpened():
                return capture
            problem = "source cannot be opened"
        except Exception as error:  # cv2.error and friends: report and retry
            problem = f"open raised {error}"
        if capture is not None:
            with contextlib.suppress(Exception):
                capture.release()
        self._error()
        self._reporter.set_state(False, f"open failed: {problem}")
        return None

    def _capture(self) -> None:
        try:
            self._supervise()
        except Exception:  # never out of the thread; the loop already catches per session
            log.exception("camera %s: supervisor failed", self.name)
            with contextlib.suppress(Exception):
                self._reporter.set_state(False, "stopped")
        finally:
            self._mailbox.close(discard=self._stop.is_set())

    def _supervise(self) -> None:
        opened_before = False
        self._reporter.set_state(False, "connecting")
        while not self._stop.is_set():
            outcome = "failed"
            try:
                capture = self._open()
                if capture is not None:
                    outcome = self._session(capture, reopened=opened_before)
                    opened_before = True
                    with contextlib.suppress(Exception):
                        capture.release()
            except Exception:  # a bug below must not end the supervision
                log.exception("camera %s: unexpected error; reconnecting", self.name)
                self._reporter.set_state(False, "internal error (see log)")
            if self._stop.is_set():
                break
            if outcome == "end":
                if not self.loop:
                    self._reporter.set_state(False, "end of file")
                    return
                opened_before = False  # starting a file again is not a reconnect
                continue
            if outcome == "worked":
                self._backoff.reset()
            self._wait(self._backoff.next_delay())
        self._reporter.set_state(False, "stopped")

    def _wait(self, delay: float) -> None:
        deadline = self._clock() + delay
        while not self._stop.is_set():
            left = deadline - self._clock()
            if left <= 0:
                return
            self._stop.wait(min(left, 0.1))
            self._reporter.report_if_due()

    def _pace_interval(self, capture: Any) -> float:
        fps = self.pace_fps
        if fps is None:
            if not self.is_file:
                return 0.0
            with contextlib.suppress(Exception):
                fps = float(capture.get(cv2.CAP_PROP_FPS))
            if not fps or not 0 < fps <= 240:
                fps = 30.0
        return 1.0 / fps if fps > 0 else 0.0

    def _session(self, capture: Any, *, reopened: bool) -> str:
        """Read an open source until it ends, fails, freezes or the driver stops.

        Returns "end" (a file's end), "worked" (failed after delivering
        frames), "failed" (no frame at all) or "stopped".
        """
        interval = self._pace_interval(capture)
        failures = 0
        got_frame = False
        signature: int | None = None
        same_since = 0.0
        next_due = self._clock()
        while not self._stop.is_set():
            try:
                ok, image = capture.read()
            except Exception as error:
                log.debug("camera %s: read raised %s", self.name, error)
                ok, image = False, None
            now = self._clock()
            if not ok or image is None or getattr(image, "size", 0) == 0:
                if self.is_file and got_frame:
                    return "end"
                self._error()
                failures += 1
                if failures >= self.max_read_failures:
                    self._reporter.set_state(False, f"read failed {failures} times")
                    return "worked" if got_frame else "failed"
                self._stop.wait(0.05)
                continue
            failures = 0
            if not got_frame:
                got_frame = True
                if reopened:
                    with self._lock:
                        self._reconnects += 1
                self._reporter.set_state(True, "streaming")
            if self.frozen_after is not None:
                current = hash(np.ascontiguousarray(image[::8, ::8]).tobytes())
                if current != signature:
                    signature, same_since = current, now
                elif now - same_since >= self.frozen_after:
                    self._error()
                    self._reporter.set_state(False, f"frozen: the same image for {now - same_since:.1f} s")
                    return "worked"
            with self._lock:
                seq = self._frames
                self._frames += 1
                self._last_frame = now
            if self._mailbox.put(CameraFrame(self.name, seq, now, image)):
                with self._lock:
                    self._dropped += 1
            self._reporter.report_if_due()
            if interval:
                next_due = max(next_due + interval, now - interval)  # never try to catch up a long delay
                delay = next_due - self._clock()
                if delay > 0:
                    self._stop.wait(delay)
        return "stopped"

    # -- delivery --------------------------------------------------------------------------------

    def _deliver(self) -> None:
        while True:
            item = self._mailbox.take(0.5)
            if item is _CLOSED:
                return
            if isinstance(item, CameraFrame):
                call_guarded(log, f"camera {self.name}: on_frame", self._on_frame, item)


def _normalise(source: int | str | os.PathLike[str]) -> int | str:
    """A device index stays an int (``"0"`` from a config file becomes 0); a path becomes text."""
    if isinstance(source, int):
        return source
    text = os.fspath(source)
    return int(text) if text.isdigit() else text
