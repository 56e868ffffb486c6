"""The service's side of the stick trays: engine and reader in, the comparison out on the ``sticks`` topic.

The comparison itself is :mod:`tablesvc.sticks` (pure). This adapter, run on
the service's worker thread, tells it what the game says after each journal
entry (a game start, a riichi, a hand's result, a ruling), hands it every
settled tray reading and the reader's link health, ticks its grace timer,
and publishes each new verdict, retained, so a page opened later sees an
alert that still stands. It never changes the game: the referee does, with
``set_scores`` (the trays' totals, one click on the console) or by asking the
players to fix their trays (the ``sticks`` command, ``dismiss``/``recheck``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from drivers.observations import DeviceHealth, TraysRead
from tablesvc.engine.results import HandResult, Output, RiichiAccepted, round_name
from tablesvc.engine.state import GameState, Phase
from tablesvc.mqtt.payloads import iso_time
from tablesvc.mqtt.topics import SCHEMA_VERSION
from tablesvc.sticks import Expected, Reconciler, SticksStatus, Verdict

__all__ = ["ACTIONS", "StickWatch", "sticks_payload"]

log = logging.getLogger(__name__)

#: What the referee's ``sticks`` command may ask.
ACTIONS = ("dismiss", "recheck")
#: Link states that are no loss: starting, or the service stopping.
_CALM = frozenset({"not started", "connecting", "opened, waiting for the device", "stopped"})


def _table_sticks(state: GameState) -> int:
    return state.sticks if state.hand is None else state.hand.sticks


def sticks_payload(verdict: Verdict, link: str, ts: float) -> dict[str, Any]:
    """A verdict as the ``sticks`` topic carries it (docs/mqtt.md)."""
    reading, expected = verdict.reading, verdict.expected
    return {
        "schema": SCHEMA_VERSION,
        "ts": iso_time(ts),
        "link": link,
        "status": verdict.status.value,
        "text": verdict.text,
        "check": verdict.check,
        "trays": list(reading.trays) if reading is not None else None,
        "riichi": reading.riichi if reading is not None else None,
        "game": {"scores": list(expected.scores), "sticks": expected.sticks} if expected is not None else None,
        "differences": [{"seat": d.seat, "name": d.name, "tray": d.tray, "game": d.game,
                         "difference": d.difference} for d in verdict.differences],
        "fault": verdict.fault,
    }


class StickWatch:
    """One table's stick tray reader (the ``[[serial]]`` link ``link``), compared with its game."""

    def __init__(self, link: str, publish: Callable[[dict[str, Any]], None], *,
                 reconciler: Reconciler | None = None, wall_clock: Callable[[], float] = time.time,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link = link
        self.reconciler = reconciler or Reconciler()
        self._publish = publish
        self._wall = wall_clock
        self._clock = clock
        self._check = "the game's start"
        self._logged: tuple[SticksStatus, str] | None = None

    @property
    def verdict(self) -> Verdict:
        return self.reconciler.verdict

    def trays(self) -> tuple[tuple[int, int, int, int], int] | None:
        """The latest settled reading (trays, riichi sticks on the table), for a game started from the sticks;
        None while there is none, or while the reader cannot be trusted."""
        reading = self.reconciler.reading
        if reading is None or self.verdict.status is SticksStatus.FAULT:
            return None
        return reading.trays, reading.riichi

    # ------------------------------------------------------------------ inputs (worker thread)

    def after(self, kind: str, outputs: list[Output], state: GameState) -> None:
        """A journal entry of ``kind`` was applied; ``state`` is the game after it."""
        now = self._clock()
        for output in outputs:
            if isinstance(output, HandResult):
                self._check = f"the payments of hand {output.hand_number + 1} ({round_name(output.round)})"
            elif isinstance(output, RiichiAccepted):
                self._check = f"{state.players[output.seat]}'s riichi"
        if kind == "start_game":
            self._check = "the game's start"
        elif kind == "set_scores":
            self._check = "the referee's scores"
        elif kind in ("undo", "amend"):
            self._check = "the referee's correction"
        self._emit(self.reconciler.expect(self._expected(state), now))
        if kind == "hand_start":  # the last hand's payments are over
            self._emit(self.reconciler.payments_over(now))

    def resume(self, state: GameState) -> None:
        """The service starts with this game (from its journal): compare the trays with it from now on, without
        publishing yet (the broker is not connected; the resync after the connection publishes :meth:`payload`)."""
        self._check = "the service's start"
        self.reconciler.expect(self._expected(state), self._clock())

    def _expected(self, state: GameState) -> Expected | None:
        if state.phase is Phase.NOT_STARTED:
            return None
        pending = state.hand.riichi_pending if state.hand is not None else None
        if pending is not None:
            self._check = f"{state.players[pending]}'s riichi"
        return Expected((state.scores[0], state.scores[1], state.scores[2], state.scores[3]), _table_sticks(state),
                        self._check, state.players, pending)

    def reading(self, reading: TraysRead) -> None:
        self._emit(self.reconciler.read(reading.trays, reading.riichi, self._clock()))

    def health(self, health: DeviceHealth) -> None:
        if health.name != self.link:
            return
        now = self._clock()
        if health.connected:
            self._emit(self.reconciler.found(now))
        elif health.state not in _CALM:
            self._emit(self.reconciler.lost(f"the stick tray reader is lost ({health.state})", now))

    def tick(self) -> None:
        self._emit(self.reconciler.tick(self._clock()))

    def command(self, action: str) -> dict[str, Any]:
        """The referee's ruling on a difference: ``dismiss`` (the sticks are wrong: the players fix their trays,
        and the next reading is compared) or ``recheck`` (compare the latest reading again)."""
        now = self._clock()
        if action == "dismiss":
            self._emit(self.reconciler.dismiss(now))
        else:
            self._emit(self.reconciler.recheck(now))
        return {"sticks": self.verdict.status.value, "text": self.verdict.text}

    def payload(self) -> dict[str, Any]:
        return sticks_payload(self.verdict, self.link, self._wall())

    def _emit(self, verdict: Verdict | None) -> None:
        if verdict is None:
            return
        if (verdict.status, verdict.text) != self._logged:
            self._logged = (verdict.status, verdict.text)
            level = logging.WARNING if verdict.status in (SticksStatus.MISMATCH, SticksStatus.FAULT) else logging.INFO
            log.log(level, "sticks (%s): %s: %s", self.link, verdict.status.value, verdict.text)
        self._publish(sticks_payload(verdict, self.link, self._wall()))
