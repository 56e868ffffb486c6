"""Each seat's hand read for a broadcast: shanten, waits and the tiles left of each, furiten, ukeire, deal-in.

Pure: a :class:`~tablesvc.engine.state.GameState` and the concealed tiles of
every seat in, a :class:`SeatAnalysis` per seat out. The hands come from the
state where the engine knows them (a recorded game, hand cameras) or from any
full-information source beside it (the simulator).

What is counted, for a seat:

* ``shanten``: the least of standard, seven pairs and thirteen orphans. A seat
  holding a drawn tile is read without it (what it waited on, the drawn tile
  apart); a seat that called and must discard is read with all its tiles,
  and has no waits or ukeire until it discards.
* ``waits``: every kind that completes the hand, except a kind the seat holds
  all four of (hand and melds). For each, ``wall``: copies in no hand, pond,
  meld or dora indicator; ``unseen``: 4 less what the seat itself sees (its
  hand, every pond and meld, the indicators). ``karaten``: ready with no copy
  of any wait left in the wall.
* ``furiten``: a wait in its own pond, or one let pass (since riichi, or since
  its last draw), the discard that may still be claimed aside.
* ``ukeire``: kinds that lower the shanten, each with its ``unseen`` count.
* ``deal_in``: for the seat to act only, each tile of its hand that another
  seat could ron, with that seat and the ron's points (counters and sticks
  aside), under the game's rules (:func:`tablesvc.rules.scoring.score_hand`).

Incremental: :class:`Analyst` keeps each seat's hand shape (shanten, waits,
ukeire kinds) and recomputes it only when that seat's tiles change; the
counts of tiles left are cheap and follow every event. Shanten comes from
:mod:`tablesvc.analysis.tables` (the ``mahjong`` package's is too slow for
ukeire's 34 questions); waits from the package's agari check (0.5 us); deal-in
points from the project's scoring, remembered per winner, tile and situation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tablesvc.analysis.tables import TERMINALS_HONOURS, fast_shanten, improving_kinds
from tablesvc.engine.state import GameState, HandState, Step
from tablesvc.rules.hand import Hand, InvalidHandError, Meld, MeldKind, WinConditions, Wind
from tablesvc.rules.payments import ron_points
from tablesvc.rules.ruleset import RuleSet, get_ruleset
from tablesvc.rules.scoring import score_hand
from tablesvc.rules.shape import waits_counts
from tablesvc.tiles import Tile

__all__ = ["Analyst", "DealIn", "SeatAnalysis", "Shape", "WaitCount", "hand_shape", "table_counts"]


@dataclass(frozen=True)
class WaitCount:
    wall: int
    unseen: int


@dataclass(frozen=True)
class DealIn:
    seat: int
    points: int


@dataclass(frozen=True)
class Shape:
    """What a seat's tiles alone say: shanten, winning kinds, improving kinds."""

    shanten: int
    waits: tuple[int, ...]
    ukeire: tuple[int, ...]


@dataclass
class SeatAnalysis:
    seat: int
    shanten: int
    waits: dict[int, WaitCount] = field(default_factory=dict)
    karaten: bool = False
    furiten: bool = False
    ukeire: dict[int, int] = field(default_factory=dict)
    deal_in: dict[Tile, list[DealIn]] = field(default_factory=dict)


def hand_shape(counts: list[int], held: Sequence[int] | None = None) -> Shape:
    """Shape of concealed counts. 3n+1 tiles: waits (when ready) and ukeire; 3n+2: shanten only.
    ``held``: copies of each kind the seat holds in all (hand and melds), for the four-of-a-kind rule."""
    n = sum(counts)
    sh = fast_shanten(counts)
    if n % 3 != 1:
        return Shape(sh, (), ())
    held = held if held is not None else counts
    if sh == 0:
        found = tuple(k for k in sorted(waits_counts(counts)) if held[k] < 4)
        return Shape(0, found, found)
    improving = improving_kinds(counts, sh, [k for k in _candidates(counts) if held[k] < 4])
    return Shape(sh, (), tuple(improving))


def _candidates(counts: Sequence[int]) -> list[int]:
    """Kinds that could lower the shanten: next to a held suited tile, a held honour, or (seven pairs,
    thirteen orphans) any kind not held, any terminal or honour."""
    out = set()
    for k in range(27):
        if counts[k]:
            base = k - k % 9
            for j in range(max(base, k - 2), min(base + 8, k + 2) + 1):
                out.add(j)
    for k in range(27, 34):
        if counts[k]:
            out.add(k)
    if sum(counts) >= 13:
        out.update(TERMINALS_HONOURS)
        if sum(1 for x in counts if x) < 7:
            out.update(range(34))
    return sorted(out)


def table_counts(h: HandState, hands: Sequence[Sequence[Tile] | None]) -> tuple[list[int], list[int]]:
    """(tiles of each kind out of the wall, tiles of each kind every seat sees): hands, ponds, melds, indicators.
    The first counts every known hand; the second leaves every hand out (add a seat's own to get its view)."""
    public = [0] * 34
    for s in h.seats:
        for p in s.pond:
            if not p.called:
                public[p.tile.kind] += 1
        for m in s.melds:
            for t in m.tiles:
                public[t.kind] += 1
    for t in h.dora:
        public[t.kind] += 1
    out = list(public)
    for hand in hands:
        if hand is not None:
            for t in hand:
                out[t.kind] += 1
    return out, public


class Analyst:
    """Reads every seat after each event, keeping what has not changed (one per table)."""

    def __init__(self, rules: str | RuleSet = "ema2012") -> None:
        self.rules = get_ruleset(rules) if isinstance(rules, str) else rules
        self._shapes: list[tuple[tuple, Shape] | None] = [None] * 4
        self._values: dict[tuple, int | None] = {}
        self.recomputed = 0  # seats whose shape was computed afresh (the rest came from the last event)

    def analyse(self, state: GameState, hands: Sequence[Sequence[Tile] | None] | None = None,
                drawn: Sequence[Tile | None] | None = None, *, only: Sequence[int] | None = None,
                waits_only: bool = False) -> list[SeatAnalysis | None]:
        """Every seat's analysis (None where its hand is unknown, and outside a hand). ``hands`` and
        ``drawn`` (each seat's drawn tile) default to what the state knows; ``only``: these seats alone
        (the others None, and no deal-in); ``waits_only``: the waits and their counts, no shanten beyond
        ready or not, no ukeire, no deal-in (what a replay's wins and draws need)."""
        h = state.hand
        if h is None:
            return [None] * 4
        if self.rules.name != state.rules:
            self.rules = get_ruleset(state.rules)
        if hands is None:
            hands = [s.hand for s in h.seats]
        if drawn is None:
            drawn = [s.drawn for s in h.seats]
        out_of_wall, public = table_counts(h, hands)
        result: list[SeatAnalysis | None] = []
        for seat in range(4):
            hand = hands[seat]
            if hand is None or (only is not None and seat not in only):
                result.append(None)
                continue
            result.append(self._seat(h, seat, hand, drawn[seat], out_of_wall, public, waits_only))
        if h.step is Step.DISCARD and only is None and not waits_only:
            actor = result[h.turn]
            hand = hands[h.turn]
            if actor is not None and hand is not None:
                actor.deal_in = self._deal_in(h, h.turn, hand, result, hands)
        return result

    def _seat(self, h: HandState, seat: int, hand: Sequence[Tile], drawn: Tile | None, out_of_wall: list[int],
              public: list[int], waits_only: bool = False) -> SeatAnalysis:
        s = h.seats[seat]
        tiles = list(hand)
        if drawn is not None and len(tiles) % 3 == 2 and drawn in tiles:
            tiles.remove(drawn)
        counts = [0] * 34
        for t in tiles:
            counts[t.kind] += 1
        melds = tuple(sorted(m.tiles[0].kind for m in s.melds if len(m.tiles) == 4))
        key = (tuple(counts), melds)
        cached = self._shapes[seat]
        if cached is not None and cached[0] == key:
            shape = cached[1]
        elif waits_only:
            held = list(counts)
            for k in melds:
                held[k] += 4
            found = tuple(k for k in sorted(waits_counts(counts)) if held[k] < 4) if sum(counts) % 3 == 1 else ()
            shape = Shape(0 if found else 1, found, found)  # 1: not ready (how far is not asked)
        else:
            held = list(counts)
            for k in melds:
                held[k] += 4
            shape = hand_shape(counts, held)
            self._shapes[seat] = (key, shape)
            self.recomputed += 1
        own = [0] * 34
        for t in hand:
            own[t.kind] += 1
        a = SeatAnalysis(seat=seat, shanten=shape.shanten)
        for k in shape.ukeire:
            a.ukeire[k] = 4 - public[k] - own[k]
        if shape.waits:
            for k in shape.waits:
                a.waits[k] = WaitCount(wall=4 - out_of_wall[k], unseen=4 - public[k] - own[k])
            a.karaten = all(w.wall == 0 for w in a.waits.values())
            a.furiten = _furiten(h, seat, shape.waits)
        return a

    def _deal_in(self, h: HandState, actor: int, hand: Sequence[Tile],
                 seats: list[SeatAnalysis | None], hands: Sequence[Sequence[Tile] | None]) -> dict[Tile, list[DealIn]]:
        out: dict[Tile, list[DealIn]] = {}
        for tile in sorted(set(hand), key=lambda t: (t.kind, t.red)):
            for step in (1, 2, 3):
                other = (actor + step) % 4
                a = seats[other]
                if a is None or tile.kind not in a.waits or a.furiten or h.seats[other].dead:
                    continue
                points = self._ron_points(h, other, hands[other], tile)  # type: ignore[arg-type]
                if points:
                    out.setdefault(tile, []).append(DealIn(other, points))
        return out

    def _ron_points(self, h: HandState, seat: int, hand: Sequence[Tile], tile: Tile) -> int | None:
        s = h.seats[seat]
        houtei = h.wall == 0
        key = (seat, tuple(sorted(hand, key=lambda t: (t.kind, t.red))),
               tuple((m.kind, tuple(m.tiles)) for m in s.melds), tile, s.riichi, s.double_riichi, s.ippatsu,
               tuple(h.dora), houtei, h.round, h.dealer)
        if key in self._values:
            return self._values[key]
        cond = WinConditions(tsumo=False, seat=Wind((seat - h.dealer) % 4), round=Wind((h.round // 4) % 4),
                             riichi=s.riichi, double_riichi=s.double_riichi, ippatsu=s.ippatsu,
                             dora=tuple(h.dora), houtei=houtei)
        melds = tuple(Meld(MeldKind(m.kind), tuple(m.tiles), m.called) for m in s.melds)
        try:
            value = score_hand(Hand((*hand, tile), tile, melds), cond, self.rules)
            points: int | None = ron_points(value.base_points, seat == h.dealer)
        except (InvalidHandError, ValueError):  # no yaku, or a hand the rules refuse: no ron
            points = None
        if len(self._values) > 4096:
            self._values.clear()
        self._values[key] = points
        return points


def _furiten(h: HandState, seat: int, waits: Sequence[int]) -> bool:
    s = h.seats[seat]
    kinds = set(waits)
    if any(p.tile.kind in kinds for p in s.pond):
        return True
    missed = s.riichi_passed if s.riichi else s.passed
    live = (h.last_discard if h.step is Step.CLAIMS else h.kakan if h.step is Step.CHANKAN else None)
    if missed and live is not None and live[0] != seat:
        missed = missed[:-1]  # the tile that may still be claimed is no miss yet
    return any(t.kind in kinds for t in missed)
