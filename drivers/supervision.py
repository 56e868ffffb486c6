"""Small pieces shared by the drivers: their threads' lifecycle, backoff, rates, guarded callbacks, health reports.

Each driver owns a thread that opens its device, reads until something goes
wrong, closes, waits and tries again (Frigate's camera watchdog, pyserial's
ReaderThread). These helpers keep that loop short and the same in every
driver.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

__all__ = ["Backoff", "DriverThreads", "HealthReporter", "RateMeter", "call_guarded"]



class DriverThreads:
    """The lifecycle every driver shares: named daemon threads started once, a stop event their loops
    watch, a bounded join that logs a thread that would not stop, and ``with driver:``.

    A driver calls ``super().__init__(kind)`` and gives its threads in :meth:`_thread_targets`; the
    first one is the driver's main loop, which :attr:`running` watches. :meth:`_stopping` runs
    between setting the stop event and joining (wake a thread blocked elsewhere).
    """

    name: str

    def __init__(self, kind: str, logger: logging.Logger) -> None:
        self._kind = kind
        self._log = logger
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _thread_targets(self) -> list[tuple[str, Callable[[], None]]]:
        """(thread name, function) of each thread, the main loop first."""
        raise NotImplementedError

    def _stopping(self) -> None:
        """Called by :meth:`stop` after the stop event is set, before the threads are joined."""

    def start(self) -> None:
        """Start the driver's threads (once). Returns at once; the device may come later."""
        if self._threads:
            raise RuntimeError(f"{self._kind} {self.name} already started")
        self._threads = [threading.Thread(target=fn, name=name, daemon=True) for name, fn in self._thread_targets()]
        for thread in reversed(self._threads):  # helpers first: the main loop may hand them work at once
            thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop, release the device and wait for each thread (at most ``timeout`` seconds each)."""
        self._stop.set()
        self._stopping()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
                if thread.is_alive():
                    self._log.warning("%s %s: %s did not stop within %.1f s", self._kind, self.name, thread.name,
                                      timeout)  # fmt: skip

    @property
    def running(self) -> bool:
        """True while the main loop's thread is alive (a camera reading a file without ``loop`` ends)."""
        return bool(self._threads) and self._threads[0].is_alive()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class Backoff:
    """Exponential reconnect delay: ``low``, doubled after each failure up to ``high``.

    Reset after a connection that worked, so a device that blinks once is
    retried at once, while one that stays away is not hammered.
    """

    def __init__(self, low: float, high: float) -> None:
        if not 0 < low <= high:
            raise ValueError(f"backoff needs 0 < low <= high, got ({low}, {high})")
        self.low = low
        self.high = high
        self._next = low

    def next_delay(self) -> float:
        """The delay to wait now; the following one will be twice as long (up to ``high``)."""
        delay = self._next
        self._next = min(self._next * 2, self.high)
        return delay

    def reset(self) -> None:
        """The connection worked: the next failure waits ``low`` again."""
        self._next = self.low


class RateMeter:
    """Events per second over the last ``window`` seconds, from a running total.

    Samples are kept at most ten per window, so memory stays small whatever
    the rate (a device spewing garbage at full baud rate included).
    """

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self._samples: deque[tuple[float, int]] = deque()

    def add(self, now: float, total: int) -> None:
        """Record the running total at time ``now`` (monotonic seconds)."""
        samples = self._samples
        if samples and now - samples[-1][0] < self.window / 10:
            return  # too soon after the last sample to be worth keeping
        samples.append((now, total))
        # Keep one sample at or just before the start of the window, so the rate covers all of it.
        while len(samples) > 1 and samples[1][0] <= now - self.window:
            samples.popleft()

    def rate(self, now: float, total: int) -> float:
        """Events per second from the oldest sample in the window to ``total`` at ``now``."""
        self.add(now, total)
        oldest_time, oldest_total = self._samples[0]
        # At least one second: two lines a millisecond apart are not a rate of two thousand per second.
        elapsed = max(now - oldest_time, 1.0)
        return max(0.0, (total - oldest_total) / elapsed)

    def clear(self) -> None:
        """Forget the history (e.g. after a reconnect)."""
        self._samples.clear()


def call_guarded(logger: logging.Logger, what: str, callback: Callable[..., object], *values: object) -> object:
    """Call a user callback and return what it returns; log what it raises (and return None) instead of
    letting it kill the driver's thread."""
    try:
        return callback(*values)
    except Exception:
        logger.exception("%s callback raised; the driver goes on", what)
        return None


class HealthReporter:
    """A driver's connection state and its health reports, the same for every driver: a change of state is
    logged (INFO when connected or in one of the ``calm`` states, WARNING otherwise) and reported at once, and
    :meth:`report_if_due` reports again every ``interval`` seconds. ``snapshot()`` makes the report (the
    driver's ``health()``, which reads :attr:`connected` and :attr:`state` under the same ``lock``); it must
    carry a ``timestamp`` from the driver's clock."""

    def __init__(self, who: str, where: str, *, lock: threading.Lock, snapshot: Callable[[], Any],
                 on_health: Callable[[Any], object] | None, interval: float, clock: Callable[[], float],
                 logger: logging.Logger, calm: frozenset[str] = frozenset()) -> None:
        self.who = who
        self.where = where
        self.connected = False
        self.state = "not started"
        self._lock = lock
        self._snapshot = snapshot
        self._on_health = on_health
        self._interval = interval
        self._clock = clock
        self._log = logger
        self._calm = calm
        self._last_report = float("-inf")

    def set_state(self, connected: bool, state: str) -> None:
        with self._lock:
            changed = (connected, state) != (self.connected, self.state)
            self.connected, self.state = connected, state
        if changed:
            level = logging.INFO if connected or state in self._calm else logging.WARNING
            self._log.log(level, "%s (%s): %s", self.who, self.where, state)
            self.report()

    def report(self) -> None:
        snapshot = self._snapshot()
        self._last_report = snapshot.timestamp
        if self._on_health is not None:
            call_guarded(self._log, f"{self.who}: on_health", self._on_health, snapshot)

    def report_if_due(self) -> None:
        if self._clock() - self._last_report >= self._interval:
            self.report()
