"""Small pieces shared by the drivers' supervisor loops: backoff, rates, guarded callbacks.

Each driver owns a thread that opens its device, reads until something goes
wrong, closes, waits and tries again (Frigate's camera watchdog, pyserial's
ReaderThread). These helpers keep that loop short and the same in every
driver.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import TypeVar

__all__ = ["Backoff", "RateMeter", "call_guarded"]

T = TypeVar("T")


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


def call_guarded(logger: logging.Logger, what: str, callback: Callable[[T], object], value: T) -> None:
    """Call a user callback; log what it raises instead of letting it kill the driver's thread."""
    try:
        callback(value)
    except Exception:
        logger.exception("%s callback raised; the driver goes on", what)
