"""A recorded game's analysis: every state's, each winner's waits, each ready seat's at an exhaustive draw.

Used by ``tablesvc replay --json --analysis``. The record is played through
the engine (with its hands, so every seat is known) and :class:`Analyst`
reads the seats. A win's waits are the winner's just before the winning tile
came: before its draw for a tsumo, before the discard (or the added or
concealed kan) it was won on for a ron. They are read on the state the win
is declared in, which differs from that moment only by where the winning
tile is: for a tsumo it was still in the wall (one more in the wall and one
more unseen of its kind), for a ron it was still in the discarder's hand (one
more unseen by the winner). So the waits on wins cost one seat's analysis a
win, not one per event; every state's analysis (``lines``) is read only
when asked for. An exhaustive draw's ``tenpai`` holds the waits of every
seat ready when the last discard passed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tablesvc.analysis.broadcast import SEAT_LETTERS, seat_json
from tablesvc.analysis.seats import Analyst, SeatAnalysis, WaitCount
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Event, ExhaustiveDraw, GameStart, Ron, Tsumo
from tablesvc.engine.results import HandResult
from tablesvc.engine.state import GameState, Step
from tablesvc.formats.record import RecordedGame
from tablesvc.tiles import Tile

__all__ = ["AnalysedHand", "RecordAnalyst", "StateLine", "analyse_record", "waits_json"]

_KIND_NAMES = [Tile.of(k).mjai for k in range(34)]
Waits = dict[str, dict[str, int]]


def waits_json(a: SeatAnalysis | None) -> Waits:
    if a is None:
        return {}
    return {_KIND_NAMES[k]: {"wall": w.wall, "unseen": w.unseen} for k, w in sorted(a.waits.items())}


@dataclass
class AnalysedHand:
    """What the analysis adds to one hand's result: each winner's waits (seat -> waits), tenpai at a draw."""

    result: HandResult
    win_waits: dict[int, Waits] = field(default_factory=dict)
    tenpai: dict[int, Waits] | None = None


@dataclass
class StateLine:
    """One state's full analysis, after the record's event ``index``."""

    index: int
    event: str
    data: dict[str, Any]


class RecordAnalyst:
    """Watches a replay (:func:`tablesvc.replay.replay`'s ``watch``) and keeps what the analysis adds, in
    order: an :class:`AnalysedHand` at each hand's end and, with ``lines``, a :class:`StateLine` per state."""

    def __init__(self, *, lines: bool = False) -> None:
        self.lines = lines
        self.analyst = Analyst()
        self.items: list[StateLine | AnalysedHand] = []
        self._wins: dict[int, Waits] = {}
        self._tenpai: dict[int, Waits] | None = None

    def before(self, state: GameState, event: Event) -> None:
        self._wins, self._tenpai = {}, None
        if state.hand is None:
            return
        if isinstance(event, Tsumo | Ron):
            self._wins = _win_waits(self.analyst, state, event)
        elif isinstance(event, ExhaustiveDraw):
            ready = self.analyst.analyse(state, waits_only=True)
            self._tenpai = {seat: waits_json(a) for seat, a in enumerate(ready) if a is not None and a.waits}

    def after(self, state: GameState, index: int, event: Event, outputs: list) -> None:
        for out in outputs:
            if isinstance(out, HandResult):
                self.items.append(AnalysedHand(out, win_waits=self._wins, tenpai=self._tenpai))
        if self.lines and state.hand is not None:
            self.items.append(StateLine(index, event.type, state_json(state, self.analyst.analyse(state))))


def analyse_record(record: RecordedGame, *, rules: str | None = None, lines: bool = False
                   ) -> Iterator[StateLine | AnalysedHand]:
    """At each hand's end its :class:`AnalysedHand`; with ``lines`` also every state's :class:`StateLine`
    (the record played by an engine of its own; a refused event raises the engine's ``Rejected``)."""
    engine = Engine()
    watch = RecordAnalyst(lines=lines)
    for index, event in enumerate(record.events):
        if rules is not None and isinstance(event, GameStart):
            event = replace(event, rules=rules)
        watch.before(engine.state, event)
        watch.after(engine.state, index, event, engine.apply(event))
        yield from watch.items
        watch.items.clear()


def _win_waits(analyst: Analyst, state: GameState, event: Tsumo | Ron) -> dict[int, Waits]:
    h = state.hand
    assert h is not None
    if isinstance(event, Tsumo):
        seat = event.seat
        s = h.seats[seat]
        if s.hand is None:
            return {seat: {}}
        if len(s.hand) % 3 == 1:  # the draw was not seen: the winning tile is still in the wall
            return {seat: waits_json(analyst.analyse(state, only=(seat,), waits_only=True)[seat])}
        drawn = s.drawn if s.drawn is not None else event.win_tile
        if drawn is None:
            return {seat: {}}
        a = analyst.analyse(state, drawn=[drawn if i == seat else None for i in range(4)], only=(seat,),
                            waits_only=True)[seat]
        return {seat: waits_json(_moved(a, [drawn], wall=True))}
    if h.step is Step.CHANKAN and h.kakan is not None:
        moved = [h.kakan[1]]
    elif h.step is Step.CLAIMS and h.last_discard is not None:
        moved = [h.last_discard[1]]
    else:  # a concealed kan robbed (thirteen orphans): its four tiles were in the hand
        melds = h.seats[event.from_seat].melds
        moved = list(melds[-1].tiles) if melds else []
    seats = [c.seat for c in event.claims]
    analysis = analyst.analyse(state, only=seats, waits_only=True)
    return {seat: waits_json(_moved(analysis[seat], moved, wall=False)) for seat in seats}


def _moved(a: SeatAnalysis | None, tiles: list[Tile], *, wall: bool) -> SeatAnalysis | None:
    """The analysis as it stood before ``tiles`` came out of the wall (``wall``) or out of another hand."""
    if a is None:
        return None
    for t in tiles:
        w = a.waits.get(t.kind)
        if w is not None:
            a.waits[t.kind] = WaitCount(wall=w.wall + wall, unseen=w.unseen + 1)
    return a


def state_json(state: GameState, seats: list[SeatAnalysis | None]) -> dict[str, Any]:
    """One state's analysis: the seat to act, and every seat's fields as ``broadcast/hands`` writes them."""
    h = state.hand
    turn = SEAT_LETTERS[h.turn] if h is not None and h.step in (Step.DRAW, Step.DISCARD) else None
    return {"turn": turn, "wall": h.wall if h is not None else None,
            "seats": [{"seat": SEAT_LETTERS[i], **seat_json(a)} for i, a in enumerate(seats)]}
