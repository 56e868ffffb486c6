"""The service's timer: it tells the worker when a game's guaranteed time has run out.

The engine keeps no time (its clock is a deadline in the journal), so
something outside it must notice the deadline passing: this thread looks
every :data:`INTERVAL` seconds whether the game's clock is due and then asks
the worker (through its queue, like every other input) to record ``time_up``.
The worker checks again before it does, so a clock extended in the
meantime, or a game that ended, is left alone. After a restart the clock
comes back from the journal, and a deadline that passed while the service
was down is called at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from tablesvc.engine.clock import Clock

__all__ = ["INTERVAL", "ClockTimer"]

log = logging.getLogger(__name__)

INTERVAL = 0.05
"""Seconds between looks: time-up is published within this (and the worker's turn) of the deadline."""
REMIND_S = 1.0
"""A time-up asked for and not yet recorded (the worker is busy) is asked for again after this long."""


class ClockTimer:
    """Calls ``fire()`` when ``clock()`` (the game's clock, read from any thread) is due at ``now()``."""

    def __init__(self, clock: Callable[[], Clock | None], now: Callable[[], float], fire: Callable[[], None],
                 interval: float = INTERVAL) -> None:
        self._clock = clock
        self._now = now
        self._fire = fire
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._asked: tuple[float | None, float] | None = None  # (the deadline asked for, when)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="table-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.check()
            except Exception:  # the timer must outlive anything a look does
                log.exception("the clock timer could not check the clock")

    def check(self) -> bool:
        """One look: True when it asked for time-up."""
        clock = self._clock()
        now = self._now()
        if clock is None or not clock.due(now):
            self._asked = None
            return False
        if self._asked is not None and self._asked[0] == clock.deadline and now - self._asked[1] < REMIND_S:
            return False  # asked already; the worker has not got to it yet
        self._asked = (clock.deadline, now)
        self._fire()
        return True
