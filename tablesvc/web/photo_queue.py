"""The photos the web server reads: a bounded queue in front of a few worker threads.

Reading a phone's photo takes a decode of up to 40 megapixels and two networks (a few hundred ms of CPU and
up to ~150 MB of memory at its peak), so it never runs on the pages' event loop, and never for more phones
at once than the machine has cores for: :class:`PhotoQueue` runs at most ``workers`` reads at a time and
holds at most ``waiting`` more. A photo beyond that is answered at once, before its body is read, with
503 and how long to wait (``Retry-After``, from how long reads have been taking), so fifty phones posting
together get answers or a clean "busy" and the overlay, dashboard, console and tournament pages keep
answering. The networks themselves take one forward pass at a time (their own locks in
:mod:`vision.photos.finder` and :mod:`vision.naming.embedding`).
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["Busy", "PhotoQueue"]

T = TypeVar("T")


class Busy(Exception):
    """Every worker is reading and the queue is full; ``retry_after``: seconds until a place is likely free."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"busy reading other photos: try again in {retry_after} s")
        self.retry_after = retry_after


class PhotoQueue:
    """At most ``workers`` photos read at once on threads of their own, at most ``waiting`` more queued."""

    def __init__(self, workers: int | None = None, waiting: int = 8, first_guess_s: float = 1.0) -> None:
        self.workers = workers or max(1, min(2, os.cpu_count() or 1))
        self.capacity = self.workers + waiting
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="photo-read")
        self._lock = threading.Lock()
        self._held = 0
        self._seconds = first_guess_s  # how long one read takes, a running average

    @property
    def held(self) -> int:
        """Photos admitted and not answered yet (reading or waiting)."""
        with self._lock:
            return self._held

    def admit(self) -> None:
        """Take a place for one photo, or raise :class:`Busy` (ask before reading the photo's body)."""
        with self._lock:
            if self._held >= self.capacity:
                raise Busy(self._retry_after())
            self._held += 1

    def release(self) -> None:
        """Give back a place taken by :meth:`admit` that was not handed to :meth:`run` (a photo refused or
        cut off before it was read)."""
        with self._lock:
            self._held = max(0, self._held - 1)

    def _retry_after(self) -> int:
        return max(1, math.ceil(self._seconds * self._held / self.workers))

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a worker thread; its result. The caller holds a place from :meth:`admit` and hands it
        over: the place is given back when the work ends, not when its request goes (a phone that hangs up
        does not free a worker still reading its photo). The event loop only awaits it."""

        def timed() -> T:
            start = time.monotonic()
            try:
                return work()
            finally:
                took = time.monotonic() - start
                with self._lock:
                    self._seconds = 0.8 * self._seconds + 0.2 * took
                    self._held = max(0, self._held - 1)

        try:
            future = self._pool.submit(timed)
        except RuntimeError:  # the server is stopping
            self.release()
            raise Busy(1) from None
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

