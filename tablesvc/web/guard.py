"""Failed sign-ins slow down, then lock out: per client address and per referee account.

A password that may be tried at full speed falls to a list of common ones in
minutes. Each key (a client address, and the account named) has a count of
failures: the first three are free, each further one makes the next try wait
twice as long as the last (2 s, 4 s ... 64 s), and the tenth locks the key for
15 minutes, after which it starts again from nothing. A try while a key waits
is answered at once (HTTP 429 with ``Retry-After``) without checking the
password, so it costs the server nothing and the attacker no progress. With
this schedule one key gets ten tries in about 17 minutes: 1,000 guesses take
more than a day (:func:`time_for`; ``tests/test_web_guard.py`` measures it
through the server). A sign-in that succeeds forgets the key's failures.

The account's count stops a guesser who changes address; the address's count
stops one who changes account names. A lock-out is logged and handed to
``on_lockout`` (the dashboard shows it). Keys are forgotten an hour after their
last failure, and at most ``MAX_KEYS`` are kept (the least recent go first), so
a flood of made-up addresses cannot grow the server's memory.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FREE_FAILURES", "LOCK_AFTER", "LOCK_SECONDS", "MAX_DELAY", "Guard", "Verdict", "delay_after",
           "time_for"]

log = logging.getLogger(__name__)

FREE_FAILURES = 3
MAX_DELAY = 64.0
LOCK_AFTER = 10
LOCK_SECONDS = 15 * 60.0
FORGET_AFTER = 3600.0
MAX_KEYS = 10_000


def delay_after(failures: int) -> float:
    """Seconds a key waits after its ``failures``-th failure in a row (0 for the free ones; the lock at
    :data:`LOCK_AFTER`)."""
    if failures >= LOCK_AFTER:
        return LOCK_SECONDS
    if failures <= FREE_FAILURES:
        return 0.0
    return min(MAX_DELAY, 2.0 ** (failures - FREE_FAILURES))


def time_for(guesses: int) -> float:
    """The least time ``guesses`` wrong passwords take against one key, by the schedule alone."""
    total, failures = 0.0, 0
    for _ in range(guesses - 1):  # no wait is needed after the last one
        failures += 1
        total += delay_after(failures)
        if failures >= LOCK_AFTER:
            failures = 0
    return total


@dataclass
class _Key:
    failures: int = 0
    until: float = 0.0  # no try before this time
    last: float = 0.0
    locked: bool = False


@dataclass(frozen=True)
class Verdict:
    """Whether a sign-in may be checked now; if not, for how long it must wait and why."""

    allowed: bool
    retry_after: float = 0.0
    reason: str = ""


class Guard:
    """The failure counts of client addresses and accounts (the event loop's thread only: no lock)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 on_lockout: Callable[[str], None] | None = None) -> None:
        self.clock = clock
        self.on_lockout = on_lockout
        self._keys: OrderedDict[str, _Key] = OrderedDict()

    def check(self, address: str, account: str | None) -> Verdict:
        """May a sign-in from ``address`` to ``account`` (None: no such account) be checked now?"""
        now = self.clock()
        for key, what in ((f"address {address}", f"sign-ins from {address}"),
                          (f"account {account}", f"sign-ins as {account}") if account else (None, None)):
            if key is None:
                continue
            state = self._get(key, now)
            if state is not None and state.until > now:
                wait = state.until - now
                reason = (f"{what} are locked for {wait / 60:.0f} more minutes after {LOCK_AFTER} wrong passwords"
                          if state.locked else f"{what}: wait {wait:.0f} s after {state.failures} wrong passwords")
                return Verdict(False, wait, reason)
        return Verdict(True)

    def failed(self, address: str, account: str | None) -> None:
        """A wrong password (or an unknown name) from ``address``."""
        now = self.clock()
        self._fail(f"address {address}", now)
        if account:
            self._fail(f"account {account}", now)

    def succeeded(self, address: str, account: str) -> None:
        self._keys.pop(f"address {address}", None)
        self._keys.pop(f"account {account}", None)

    def _get(self, key: str, now: float) -> _Key | None:
        state = self._keys.get(key)
        if state is not None and state.until <= now and now - state.last > FORGET_AFTER:
            del self._keys[key]
            return None
        return state

    def _fail(self, key: str, now: float) -> None:
        state = self._get(key, now)
        if state is None:
            state = self._keys[key] = _Key()
            while len(self._keys) > MAX_KEYS:
                self._keys.popitem(last=False)
        self._keys.move_to_end(key)
        if state.locked and state.until <= now:  # a lock served: the count starts again
            state.failures, state.locked = 0, False
        state.failures += 1
        state.last = now
        state.until = now + delay_after(state.failures)
        if state.failures >= LOCK_AFTER:
            state.locked = True
            text = f"{key}: locked for {LOCK_SECONDS / 60:.0f} minutes after {state.failures} wrong passwords"
            log.warning("referee sign-in %s", text)
            if self.on_lockout is not None:
                self.on_lockout(text)
        elif state.failures > FREE_FAILURES:
            log.info("referee sign-in %s: %d wrong passwords, the next try waits %.0f s", key, state.failures,
                     state.until - now)
