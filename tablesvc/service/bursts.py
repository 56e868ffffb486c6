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

__all__ = ["OTHERS", "BurstLimiter", "Summary"]


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


#: The source that every source beyond ``max_sources`` is counted under.
OTHERS = "other senders"


class BurstLimiter:
    def __init__(self, *, burst: int = 5, window: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 max_sources: int | None = None) -> None:
        """``max_sources``: how many sources are counted apart in one window; refusals of any further source
        are counted together under :data:`OTHERS` (a sender that makes up a new name for each message cannot
        get a burst of its own for each)."""
        if burst < 1 or window <= 0:
            raise ValueError("a burst of at least 1 over a positive window")
        self.burst = burst
        self.window = window
        self.max_sources = max_sources
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self._ready: list[Summary] = []

    def _source(self, source: str) -> str:
        if (self.max_sources is not None and source not in self._windows
                and len(self._windows) >= self.max_sources):
            return OTHERS
        return source

    def would_admit(self, source: str) -> bool:
        """Whether :meth:`admit` would report the next refusal of ``source`` in full (nothing is counted)."""
        source = self._source(source)
        w = self._windows.get(source)
        return w is None or self._clock() - w.start >= self.window or w.reported < self.burst

    def admit(self, source: str, message: str) -> bool:
        """True: report this refusal in full. False: it is counted into the source's next summary."""
        source = self._source(source)
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
