"""Refusals reported in bursts: the first few of each source in full, the rest counted and summarised.

A device that goes wrong (a line that echoes, a stuck button, a panel
replaying its log) can make thousands of refused frames a second. Each one
logged and published on ``errors`` buried the one message that mattered
under megabytes of the same warning and flooded every consumer. So each
source gets ``burst`` full reports per ``window`` seconds; what comes after
is counted, and one summary per source and window says how many and the
last reason. Nothing goes unreported: the full reports and the summaries'
counts add up to every refusal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BurstLimiter", "Summary"]


@dataclass(frozen=True)
class Summary:
    """Refusals of one source that were counted, not reported one by one, in one window."""

    source: str
    count: int
    seconds: float
    last: str


@dataclass
class _Window:
    start: float
    reported: int = 0
    suppressed: int = 0
    last: str = ""


class BurstLimiter:
    def __init__(self, *, burst: int = 5, window: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or window <= 0:
            raise ValueError("a burst of at least 1 over a positive window")
        self.burst = burst
        self.window = window
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self._ready: list[Summary] = []

    def admit(self, source: str, message: str) -> bool:
        """True: report this refusal in full. False: it is counted into the source's next summary."""
        now = self._clock()
        w = self._windows.get(source)
        if w is None or now - w.start >= self.window:
            if w is not None:
                self._close(source, w, now)
            w = self._windows[source] = _Window(now)
        if w.reported < self.burst:
            w.reported += 1
            return True
        w.suppressed += 1
        w.last = message
        return False

    def due(self) -> list[Summary]:
        """The summaries of windows that have ended (each at most once); call it often (e.g. when idle)."""
        now = self._clock()
        for source, w in list(self._windows.items()):
            if now - w.start >= self.window:
                self._close(source, w, now)
                del self._windows[source]
        ready, self._ready = self._ready, []
        return ready

    def _close(self, source: str, w: _Window, now: float) -> None:
        if w.suppressed:
            self._ready.append(Summary(source, w.suppressed, round(now - w.start, 3), w.last))
