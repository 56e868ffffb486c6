"""Walking a recorded game through the engine for the exporters: each event with the state before it.

The mjai and tenhou.net/6 writers (and the live mjai stream) need the same
facts an event leaves implicit: the draw the engine infers, the tile won on,
the pon an added kan extends, the hands at the end. :func:`walk` plays the
record and hands each event over with a :class:`Before`; the engine's hand
results come from the replay's report where it has them. It also holds the
tile order both formats write melds and shown hands in (:func:`tenhou_order`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from tablesvc.engine.engine import Engine, Rejected, implied_draw
from tablesvc.engine.events import AbortiveDraw, AddedKan, Event, ExhaustiveDraw, GameStart, Ron, Tsumo
from tablesvc.engine.results import HandResult, Output
from tablesvc.engine.state import GameState, MeldState, Phase, Step
from tablesvc.formats.record import RecordedGame, RecordError, ReplayReport
from tablesvc.tiles import Tile

__all__ = ["Before", "HandResults", "WalkStep", "capture", "split_win_deltas", "tenhou_order", "walk"]


def tenhou_order(t: Tile) -> tuple[int, bool]:
    """Sort key: kind order with a red five before the plain ones (Tenhou's id order, which mjai servers keep
    too); a Tile's own order puts the red five after."""
    return (t.kind, not t.red)


@dataclass(slots=True)
class Before:
    """What an exporter needs to know of the state just before an event."""

    phase: Phase
    round: int
    honba: int
    sticks: int
    dealer: int
    scores: tuple[int, int, int, int]
    implied_draw: int | None = None
    """The seat whose draw the engine infers before this event (the record did not see it)."""
    drawn: Tile | None = None
    """The tile the event's seat has drawn, where seen."""
    riichi: tuple[bool, ...] = (False, False, False, False)
    hands: tuple[tuple[Tile, ...] | None, ...] = (None, None, None, None)
    counts: tuple[int, ...] = (13, 13, 13, 13)
    claimed: Tile | None = None
    """For a Ron: the tile won on (the last discard, or the tile of an added kan)."""
    pon: MeldState | None = None
    """For an AddedKan: the pon it extends."""


@dataclass
class WalkStep:
    index: int
    event: Event
    before: Before
    outputs: list[Output]


def capture(state: GameState, event: Event) -> Before:
    h = state.hand
    if h is None:
        return Before(phase=state.phase, round=state.round, honba=state.honba, sticks=state.sticks,
                      dealer=state.dealer, scores=_four(state.scores))
    seat = getattr(event, "seat", None)
    implied = implied_draw(state, event)
    s0, s1, s2, s3 = h.seats
    b = Before(state.phase, h.round, h.honba, h.sticks, h.dealer, _four(state.scores), implied,
               h.seats[seat].drawn if seat is not None and 0 <= seat <= 3 and implied is None else None,
               (s0.riichi, s1.riichi, s2.riichi, s3.riichi))
    if isinstance(event, Ron | ExhaustiveDraw | AbortiveDraw | Tsumo):
        b.hands = tuple(tuple(s.hand) if s.hand is not None else None for s in h.seats)
        b.counts = tuple(s.count for s in h.seats)
    if isinstance(event, Ron):
        if h.step is Step.CHANKAN and h.kakan is not None:
            b.claimed = h.kakan[1]
        elif h.last_discard is not None:
            b.claimed = h.last_discard[1]
    if isinstance(event, AddedKan) and seat is not None and 0 <= seat <= 3:
        pon = next((m for m in h.seats[seat].melds if m.kind == "pon" and m.tiles[0].kind == event.tile.kind), None)
        if pon is not None:
            b.pon = MeldState(pon.kind, list(pon.tiles), pon.called, pon.from_seat)
    return b


def walk(record: RecordedGame, report: ReplayReport | None) -> Iterator[WalkStep]:
    """The record's events with the state before each and the engine's outputs, under the report's rules."""
    rules = report.state.rules if report is not None and report.state is not None else None
    engine = Engine()
    for index, event in enumerate(record.events):
        if rules is not None and isinstance(event, GameStart) and event.rules != rules:
            event = replace(event, rules=rules)
        before = capture(engine.state, event)
        try:
            outputs = engine.apply(event)
        except Rejected as exc:
            raise RecordError(f"{record.source}: cannot export: event {index} ({event.type}) refused: {exc}") from None
        yield WalkStep(index, event, before, outputs)


def split_win_deltas(result: HandResult, from_seat: int | None) -> list[tuple[int, int, int, int]]:
    """One delta row per winner, in the engine's order (turn order from the discarder).

    The engine settles a multiple ron as one. As Tenhou writes it, each
    winner's row has what that winner gained, paid by the discarder, except
    the riichi sticks, which the first winner takes from the table. The last
    row is the rest, so the rows always add up to the hand's deltas (a pao
    share of a winner other than the last shows in the last row).
    """
    if len(result.wins) <= 1 or from_seat is None:
        return [result.deltas]
    rows = []
    rest = list(result.deltas)
    sticks = 1000 * (result.sticks + len(result.deposits))
    for n, w in enumerate(result.wins[:-1]):
        row = [0, 0, 0, 0]
        gain = result.deltas[w.seat]
        row[w.seat] += gain
        row[from_seat] -= gain - (sticks if n == 0 else 0)
        rows.append(_four(row))
        rest = [a - b for a, b in zip(rest, row, strict=True)]
    rows.append(_four(rest))
    return rows


def _four(v: Sequence[int]) -> tuple[int, int, int, int]:
    return (v[0], v[1], v[2], v[3])


class HandResults:
    """The engine's hand results in order: the report's where it has them, else the walk's."""

    def __init__(self, report: ReplayReport | None) -> None:
        self.report = report
        self.count = 0

    def next(self, outputs: list[Output]) -> HandResult | None:
        own = next((o for o in outputs if isinstance(o, HandResult)), None)
        if own is None:
            return None
        result = own
        if self.report is not None and self.count < len(self.report.hands):
            result = self.report.hands[self.count]
        self.count += 1
        return result
