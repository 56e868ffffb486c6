"""Every hand and its analysis on ``broadcast/hands``, held back by the organiser's delay, through restarts.

A table that knows every hand publishes them for a broadcast's scenes (only
the ``broadcast`` account may read them, ``deploy/acl``). The hands come
from the engine's state where it knows them (a record played with its deal
and draws) or from a full-information source beside the table (the
simulator, a recorded game played onto the feed, seat cameras), which gives
them through the one interface :class:`HandsSeen`: each seat's concealed
tiles and drawn tile, as the table holds them now. A source's hands and the
table's events travel apart and may cross: a state is published only when
every seat's hand agrees with the table (as many tiles as the engine counts,
none of the same kind beyond four with the ponds, melds and indicators).

The delay: a state of the table at ``ts`` is published at ``ts + delay_s``.
States waiting for their time are kept in a small SQLite file beside the
journal (``<data_dir>/<table>.broadcast.sqlite3``), so a service restarted
publishes what came due while it was down at once and the rest at its time,
never earlier. With no delay nothing waits and nothing is written.

Everything runs on the service's worker thread.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tablesvc.analysis.broadcast import hands_payload
from tablesvc.analysis.follow import HandsSeen
from tablesvc.analysis.seats import Analyst
from tablesvc.engine.state import GameState
from tablesvc.tiles import Tile

__all__ = ["Broadcast", "HandsSeen", "hands_agree"]

log = logging.getLogger(__name__)


def hands_agree(state: GameState, hands: Sequence[Sequence[Tile] | None]) -> bool:
    """Every seat's hand is known and agrees with the table: its tile count, and no fifth of a kind."""
    h = state.hand
    if h is None:
        return False
    counts = [0] * 34
    for seat, hand in enumerate(hands):
        s = h.seats[seat]
        if hand is None or len(hand) != s.count:
            return False
        for t in hand:
            counts[t.kind] += 1
        for p in s.pond:
            if not p.called:
                counts[p.tile.kind] += 1
        for m in s.melds:
            for t in m.tiles:
                counts[t.kind] += 1
    for t in h.dora:
        counts[t.kind] += 1
    return max(counts) <= 4


class Broadcast:
    """Builds ``broadcast/hands`` after every change and publishes it when its delay has passed.

    ``publish`` sends one payload and says whether it went out (False while the broker is away: a held-back
    state then waits on, for the next look).
    """

    def __init__(self, publish: Callable[[dict[str, Any]], bool], *, delay_s: float = 0.0,
                 store: Path | None = None, clock: Callable[[], float]) -> None:
        self.publish = publish
        self.delay_s = delay_s
        self.clock = clock
        self.analyst = Analyst()
        self.seen: HandsSeen | None = None
        self._last: str | None = None  # the last payload built, without its time: the same state is not sent again
        self._db: sqlite3.Connection | None = None
        self._waiting: list[tuple[float, int, dict[str, Any]]] = []  # (due, row id, payload), in order
        if delay_s > 0 and store is not None:
            self._db = sqlite3.connect(str(store), isolation_level=None, check_same_thread=False)
            self._db.execute("CREATE TABLE IF NOT EXISTS waiting (id INTEGER PRIMARY KEY, due REAL NOT NULL, "
                             "payload TEXT NOT NULL)")
            for row_id, due, text in self._db.execute("SELECT id, due, payload FROM waiting ORDER BY id"):
                self._waiting.append((due, row_id, json.loads(text)))
            if self._waiting:
                log.info("broadcast: %d states still held back from before the restart", len(self._waiting))

    def hands(self, seen: HandsSeen) -> None:
        self.seen = seen

    def changed(self, state: GameState, seq: int, ts: float) -> None:
        """The table (or a source's hands) changed: build the state and hold it for its delay."""
        h = state.hand
        if h is None:
            return
        known = [s.hand for s in h.seats]
        drawn: list[Tile | None] = [s.drawn for s in h.seats]
        if self.seen is not None:
            for seat in range(4):
                if known[seat] is None and self.seen.hands[seat] is not None:
                    known[seat] = list(self.seen.hands[seat])  # type: ignore[arg-type]
                    drawn[seat] = self.seen.drawn[seat]
        if not hands_agree(state, known):
            return
        analysis = self.analyst.analyse(state, known, drawn)
        payload = hands_payload(state, known, analysis, seq=seq, ts=ts, delay_s=self.delay_s, drawn=drawn)
        if payload is None:
            return
        same = json.dumps({k: v for k, v in payload.items() if k not in ("ts", "seq")}, sort_keys=True)
        if same == self._last:
            return
        self._last = same
        due = ts + self.delay_s
        if self.delay_s <= 0:
            self.publish(payload)
            return
        row_id = 0
        if self._db is not None:
            row_id = self._db.execute("INSERT INTO waiting (due, payload) VALUES (?, ?)",
                                      (due, json.dumps(payload))).lastrowid or 0
        self._waiting.append((due, row_id, payload))

    def due(self) -> int:
        """Publish every state whose time has come; how many."""
        now = self.clock()
        sent = 0
        while self._waiting and self._waiting[0][0] <= now:
            _, row_id, payload = self._waiting[0]
            if not self.publish(payload):
                break
            self._waiting.pop(0)
            if self._db is not None:
                self._db.execute("DELETE FROM waiting WHERE id = ?", (row_id,))
            sent += 1
        return sent

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def pending(self) -> list[float]:
        """When each held-back state is due (unix seconds), in order."""
        return [due for due, _, _ in self._waiting]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
