"""The seat cameras' hands as the runtime keeps them: private, per seat, from what the engine knows.

Two parts:

- :func:`knowledge_of`: what the engine's state tells a seat camera's decoding
  (:class:`vision.seat.SeatKnowledge`): how many concealed tiles the seat holds, every tile visible on
  the table, the red fives out, and the tiles that left the seat's hand (discards, called melds);
- :class:`PrivateHands`: the latest :class:`vision.seat.HandReading` of each seat. It never reaches the
  public state, the dashboard or the overlay: a reader subscribes with :meth:`PrivateHands.subscribe`
  and gets each seat's reading as it changes. :meth:`PrivateHands.seen` gives them as the broadcast's
  full-information interface takes them (:class:`tablesvc.analysis.follow.HandsSeen`: a seat whose hand
  is not wholly sure is None), and :meth:`PrivateHands.forward_to` hands every change to a table
  service's ``hands`` (the private ``broadcast/hands`` topic).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tablesvc.analysis.follow import HandsSeen
from tablesvc.tiles import Tile, parse_tile
from vision.seat.consensus import HandReading, SeatKnowledge

__all__ = ["PrivateHands", "knowledge_of"]


def knowledge_of(state: Any, seat: int, hand_id: str = "") -> SeatKnowledge:
    """The :class:`SeatKnowledge` of ``seat`` from an engine's :class:`~tablesvc.engine.state.GameState`."""
    hand = state.hand
    if hand is None:
        return SeatKnowledge(holds=0, hand_id=hand_id)
    s = hand.seats[seat]
    gone: list[str] = [p.tile.mjai for p in s.pond]
    for m in s.melds:
        own = list(m.tiles)
        if m.called is not None and m.called in own:
            own.remove(m.called)
        gone += [t.mjai for t in own]
    # what lies face up on the table: every pond (a called tile once, in its meld), every meld, the dora
    # indicators; not the engine's own count of known tiles, which holds the hands it was told
    out = [p.tile for other in hand.seats for p in other.pond if not p.called]
    out += [t for other in hand.seats for m in other.melds for t in m.tiles]
    out += list(hand.dora)
    counts = [0] * 34
    for t in out:
        counts[t.kind] += 1
    red = frozenset(t.mjai[1] for t in out if t.red)
    visible = tuple(counts)
    return SeatKnowledge(holds=s.count, visible=visible, red_out=red, gone=tuple(gone), hand_id=hand_id)


class PrivateHands:
    """The latest hand reading of each seat (thread-safe); subscribers are called on every change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hands: dict[int, HandReading] = {}
        self._subscribers: list[Callable[[HandReading], None]] = []

    def update(self, reading: HandReading) -> bool:
        """Keep ``reading`` as its seat's; True (and subscribers told) when it differs from the last."""
        with self._lock:
            last = self._hands.get(reading.seat)
            if last is not None and last.as_dict() == reading.as_dict() and last.hand_id == reading.hand_id:
                return False
            self._hands[reading.seat] = reading
            subscribers = list(self._subscribers)
        for call in subscribers:
            call(reading)
        return True

    def subscribe(self, call: Callable[[HandReading], None]) -> None:
        with self._lock:
            self._subscribers.append(call)

    def hands(self) -> dict[int, HandReading]:
        with self._lock:
            return dict(self._hands)

    def seen(self) -> HandsSeen:
        """Every seat's hand as the broadcast takes it: the concealed tiles with the drawn one, and the drawn
        tile; None for a seat with no reading or one with a tile not yet sure (never a guess)."""
        hands: list[tuple[Tile, ...] | None] = []
        drawn: list[Tile | None] = []
        current = self.hands()
        for seat in range(4):
            r = current.get(seat)
            if r is None or not r.complete:
                hands.append(None)
                drawn.append(None)
                continue
            d = parse_tile(r.drawn) if r.drawn else None
            hands.append(tuple(parse_tile(t) for t in r.tiles) + ((d,) if d is not None else ()))
            drawn.append(d)
        return HandsSeen(tuple(hands), tuple(drawn))

    def forward_to(self, hands: Callable[[HandsSeen], None]) -> None:
        """On every change, give :meth:`seen` to ``hands`` (a :class:`~tablesvc.service.TableService`'s
        ``hands``: the broadcast publishes a state once every seat's hand is sure and agrees with the table)."""
        self.subscribe(lambda _reading: hands(self.seen()))
