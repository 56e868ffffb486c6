"""A score stick tray reader on a real pseudo-terminal, and players who pay in sticks.

:class:`StickTray` is the device of kind ``sticks`` of the open serial
protocol (``docs/serial-protocol.md``): it holds each seat's tray total and
the riichi sticks on the table, and reports them in a ``TRAYS`` event once
they have held still for ``settle`` seconds (a tray that changes again
within that time is not reported in between), after every ``HELLO``, with
the identity, sequence numbers, acknowledgements and repeats of every device
(it is a :class:`~hardware_sims.devices.PtyDevice`). Faults on demand besides
those: :meth:`StickTray.flutter` (readings that never settle).

:class:`StickPlayers` follows a game event by event (the table simulator's
``after_event``) with an engine of its own and moves the sticks as players
do: starting points into the trays, a riichi stick onto the table when the
riichi stands, each hand's result paid. With a :class:`Mispayment` one hand
is paid wrong, and the error stays in the trays, as at a real table.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drivers.observations import DeviceKind
from drivers.protocol import MAX_RIICHI, MAX_TRAY, encode
from hardware_sims.devices import PtyDevice, _Pending
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Event
from tablesvc.engine.results import HandResult
from tablesvc.engine.state import GameState

__all__ = ["Mispayment", "StickPlayers", "StickTray", "table_sticks"]


def table_sticks(state: GameState) -> int:
    """The riichi sticks on the table: carried over and deposited this hand."""
    return state.sticks if state.hand is None else state.hand.sticks


class StickTray(PtyDevice):
    """A stick tray reader (kind ``sticks``) on a real pseudo-terminal; see the module docstring."""

    def __init__(self, device_id: str, link_path: Any, *, trays: Sequence[int] = (0, 0, 0, 0), riichi: int = 0,
                 settle: float = 1.0, seed: int = 0, **options: Any) -> None:
        super().__init__(device_id, DeviceKind.STICKS, link_path, **options)
        self.settle = settle
        self._trays = self._checked(trays, riichi)
        self._riichi = riichi
        self._changed_at: float | None = None  # the trays changed then and have not been reported since
        self._last: tuple[tuple[int, ...], int] | None = None  # the reading last queued
        self._last_seq: int | None = None
        self._flutter_until = 0.0
        self._flutter_next = 0.0
        self._rng = random.Random(seed)
        #: TRAYS events queued (each reading once, whatever its repeats)
        self.readings = 0

    @staticmethod
    def _checked(trays: Sequence[int], riichi: int) -> tuple[int, int, int, int]:
        if len(trays) != 4 or not all(0 <= t <= MAX_TRAY and t % 100 == 0 for t in trays):
            raise ValueError(f"four trays of whole hundreds 0..{MAX_TRAY}, not {list(trays)}")
        if not 0 <= riichi <= MAX_RIICHI:
            raise ValueError(f"riichi sticks 0..{MAX_RIICHI}, not {riichi}")
        return trays[0], trays[1], trays[2], trays[3]

    # -- what the players do ---------------------------------------------------------------------

    @property
    def trays(self) -> tuple[int, int, int, int]:
        with self._lock:
            return self._trays

    @property
    def riichi(self) -> int:
        with self._lock:
            return self._riichi

    def set_trays(self, trays: Sequence[int], riichi: int | None = None) -> None:
        """The trays now hold ``trays`` (and ``riichi`` sticks lie on the table): reported once they settle."""
        with self._lock:
            riichi = self._riichi if riichi is None else riichi
            checked = self._checked(trays, riichi)
            if (checked, riichi) != (self._trays, self._riichi):
                self._trays, self._riichi = checked, riichi
                self._changed_at = self._clock()

    def wait_reported(self, timeout: float = 10.0) -> bool:
        """Wait until the trays as they are now were reported and the host answered (or it was given up)."""
        def done() -> bool:
            seq = self._last_seq
            return (self._changed_at is None and self._last == (self._trays, self._riichi) and seq is not None
                    and (seq in self.acked or seq in self.naked or seq in self.given_up))

        return self.wait_for(done, timeout)

    # -- faults ----------------------------------------------------------------------------------

    def flutter(self, seconds: float) -> None:
        """For ``seconds`` from now, send a different reading every tenth of the settling time (0.1 s at the
        protocol's second), never settled (a loose contact)."""
        with self._lock:
            self._flutter_until = self._clock() + seconds

    # -- internals (with the lock held) ------------------------------------------------------------

    def _queue_reading(self, trays: tuple[int, int, int, int], riichi: int) -> None:
        seq = self._next_seq()
        self._queue.append(_Pending(seq, encode(self.device_id, seq, "TRAYS", *trays, riichi)))
        self._last, self._last_seq = (trays, riichi), seq
        self.readings += 1

    def _hello(self) -> None:
        super()._hello()
        # after every HELLO the reader says what the trays hold: a host that just opened the port learns it
        if self._changed_at is None and not any(p.line.split(b",")[2:3] == [b"TRAYS"] for p in self._queue):
            self._queue_reading(self._trays, self._riichi)

    def _pump(self, now: float) -> None:
        if self._flutter_until and now >= self._flutter_until:  # the contact holds again: it settles from now
            self._flutter_until = 0.0
            self._changed_at = now
        if now < self._flutter_until:
            if now >= self._flutter_next and not self._queue:
                self._flutter_next = now + self.settle / 10
                jitter = list(self._trays)
                seat = self._rng.randrange(4)
                jitter[seat] = max(0, jitter[seat] + self._rng.choice((-1, 1)) * 100 * self._rng.randint(1, 50))
                self._queue_reading((jitter[0], jitter[1], jitter[2], jitter[3]), self._riichi)
        elif self._changed_at is not None and now - self._changed_at >= self.settle:
            self._changed_at = None
            if self._last != (self._trays, self._riichi):
                self._queue_reading(self._trays, self._riichi)
            self._lock.notify_all()
        super()._pump(now)


@dataclass(frozen=True)
class Mispayment:
    """Hand ``hand`` (1 = the game's first) is paid wrong: the one who pays most keeps ``points`` back from the
    one who receives most."""

    hand: int
    points: int = 1000


class StickPlayers:
    """Players who move the sticks of a :class:`StickTray` as the game goes (see the module docstring).

    Call it with each event the table shows (``TableSimulator(after_event=players)``); it waits until the
    tray reported the sticks as they lie before the table goes on, as players finish paying before the next
    hand. ``mispaid`` says what went wrong, once it has: (hand, payer seat, payee seat, points).
    """

    def __init__(self, tray: StickTray, *, mispay: Mispayment | None = None, timeout: float = 10.0) -> None:
        self.tray = tray
        self.mispay = mispay
        self.timeout = timeout
        self.engine = Engine()
        self.offset = [0, 0, 0, 0]  # what the trays hold more than the game says
        self.mispaid: tuple[int, int, int, int] | None = None
        self.unreported = 0  # sticks moved that the tray never got acknowledged

    def __call__(self, event: Event) -> None:
        outputs = self.engine.apply(event)
        for output in outputs:
            hand = output.hand_number + 1 if isinstance(output, HandResult) else None  # hand_number counts from 0
            if hand is not None and self.mispay is not None and hand == self.mispay.hand:
                payer = min(range(4), key=lambda s: output.deltas[s])
                payee = max(range(4), key=lambda s: output.deltas[s])
                if payer != payee:
                    self.offset[payer] += self.mispay.points
                    self.offset[payee] -= self.mispay.points
                    self.mispaid = (hand, payer, payee, self.mispay.points)
        state = self.engine.state
        trays = [max(0, score + extra) for score, extra in zip(state.scores, self.offset, strict=True)]
        before = (self.tray.trays, self.tray.riichi)
        self.tray.set_trays(trays, table_sticks(state))
        if (self.tray.trays, self.tray.riichi) != before and not self.tray.wait_reported(self.timeout):
            self.unreported += 1
