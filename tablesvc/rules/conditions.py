"""All-last conditions: in the game's last hand, what each player needs for each place they can still reach.

Streamers show "Bob: 1st with a mangan tsumo or 3900 from Ann" in the last
hand; today they work it out by hand. Here it is worked out from the rule
set and the project's own payment tables: for each player and each better
place, the cheapest hand that gets them there by tsumo (dealer and
non-dealer shares, counters, riichi sticks on the table collected) and by
ron from each opponent, and whether tenpai at an exhaustive draw would do.
Every outcome is played through :func:`~tablesvc.rules.payments.settle_tsumo`,
:func:`~tablesvc.rules.payments.settle_ron` or
:func:`~tablesvc.rules.payments.settle_exhaustive_draw`, then
:func:`~tablesvc.rules.game_end.game_ends` (a dealer who wins or is tenpai
keeps the deal and the game goes on, unless the rule set stops a dealer on
top), then :func:`~tablesvc.rules.payments.final_standings` (ties shared or
broken by seat order, as the rule set says).

A place is *reached* outright: a tie that shares it (EMA) does not count, so
"1st" means first alone. Only the player's own win is considered (nobody
else's), a riichi stick the player might still put down is not, and a hand
is one of the values a real hand can have: 1-4 han at 30-110 fu, 20 fu only
for a closed tsumo of two han or more (pinfu), 25 fu only for seven pairs
(two han, three with tsumo), then the limits. Pure: no I/O, no clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tablesvc.rules.game_end import game_ends, may_be_last_hand
from tablesvc.rules.payments import (
    RonWin,
    Settlement,
    final_standings,
    ron_points,
    settle_exhaustive_draw,
    settle_ron,
    settle_tsumo,
    tsumo_points,
)
from tablesvc.rules.ruleset import RuleSet
from tablesvc.rules.scoring import HandValue, Limit, base_points

__all__ = ["Price", "RonNeed", "SeatConditions", "Target", "TsumoNeed", "all_last_conditions", "describe",
           "target_line"]

_ORDINAL = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th"}
_LIMIT_HAN = {Limit.MANGAN: 5, Limit.HANEMAN: 6, Limit.BAIMAN: 8, Limit.SANBAIMAN: 11, Limit.YAKUMAN: 13}


@dataclass(frozen=True)
class Price:
    """A hand's value: han and fu (fu 0 for a limit hand), its limit, its base points."""

    han: int
    fu: int
    limit: Limit
    base: int

    @property
    def label(self) -> str:
        """'3 han 30 fu', 'mangan', 'yakuman'."""
        return self.limit.value if self.limit is not Limit.NONE else f"{self.han} han {self.fu} fu"


@dataclass(frozen=True)
class TsumoNeed:
    """The cheapest tsumo that suffices. ``from_non_dealer`` / ``from_dealer``: each one's share of the
    hand (counters aside); a dealer's tsumo has ``from_dealer`` 0."""

    price: Price
    from_non_dealer: int
    from_dealer: int

    @property
    def points(self) -> str:
        """'1000/2000' (non-dealers/dealer pay), '2000 all' (a dealer's tsumo), or the limit's name."""
        if self.price.limit is not Limit.NONE:
            return self.price.limit.value
        if self.from_dealer == 0:
            return f"{self.from_non_dealer} all"
        return f"{self.from_non_dealer}/{self.from_dealer}"

    @property
    def text(self) -> str:
        if self.price.limit is not Limit.NONE:
            return f"a {self.price.limit.value} tsumo"
        return f"{self.points} tsumo"


@dataclass(frozen=True)
class RonNeed:
    """The cheapest ron from ``from_seat`` that suffices; ``points``: what that player pays for the hand
    (counters aside)."""

    from_seat: int
    price: Price
    points: int

    @property
    def value(self) -> str:
        """'3900', or 'a mangan'."""
        return f"a {self.price.limit.value}" if self.price.limit is not Limit.NONE else str(self.points)


@dataclass(frozen=True)
class Target:
    """What gets a player to ``place`` (outright) when the game ends on this hand. ``draw``: ``"tenpai"``
    (tenpai at an exhaustive draw is enough, whoever else is), ``"tenpai, one rival noten"`` (with the
    seat in ``draw_noten`` noten), ``"tenpai alone"``, ``"tenpai, as listed"`` (with exactly the seats in
    ``draw_tenpai`` tenpai too and those in ``draw_noten`` noten), or None."""

    place: int
    tsumo: TsumoNeed | None
    ron: tuple[RonNeed, ...]
    draw: str | None = None
    draw_noten: tuple[int, ...] = ()
    draw_tenpai: tuple[int, ...] = ()

    @property
    def reachable(self) -> bool:
        return self.tsumo is not None or bool(self.ron) or self.draw is not None


@dataclass(frozen=True)
class SeatConditions:
    """One player's conditions. ``place``: where they stand now (outright: a shared place counts as the
    lower one). ``dealer_keeps``: this is the dealer, and winning (even the cheapest hand) or being tenpai
    does not end the game. ``targets``: one per better place, best first."""

    seat: int
    place: int
    dealer: bool
    dealer_keeps: bool
    dead: bool
    targets: tuple[Target, ...]


def all_last_conditions(
    rules: RuleSet,
    round_index: int,
    scores: Sequence[int],
    dealer: int,
    *,
    honba: int = 0,
    sticks: int = 0,
    penalties: Sequence[int] = (0, 0, 0, 0),
    dead: Sequence[bool] = (False, False, False, False),
    first_dealer: int = 0,
) -> tuple[SeatConditions, ...] | None:
    """Every player's conditions in a hand of ``round_index`` with these ``scores`` (riichi sticks of this
    hand already paid), ``honba`` counters and ``sticks`` riichi sticks on the table (``first_dealer``, the seat
    that dealt East 1, breaks ties); None when this hand
    is not one that can end the game (before South 4)."""
    if not may_be_last_hand(round_index):
        return None
    return _conditions(rules, round_index, tuple(scores), dealer, honba, sticks, tuple(penalties), tuple(dead),
                       first_dealer)


@lru_cache(maxsize=64)  # the same position is asked for at every state of a hand; a few hands are kept
def _conditions(rules: RuleSet, round_index: int, scores: tuple[int, ...], dealer: int, honba: int, sticks: int,
                penalties: tuple[int, ...], dead: tuple[bool, ...], first_dealer: int) -> tuple[SeatConditions, ...]:
    game = _Game(rules, round_index, scores, dealer, honba, sticks, penalties, first_dealer)
    return tuple(game.seat(seat, dead) for seat in range(4))


class _Game:
    """The last hand's position, and every outcome of it played through the payment tables."""

    def __init__(self, rules: RuleSet, round_index: int, scores: tuple[int, ...], dealer: int, honba: int,
                 sticks: int, penalties: tuple[int, ...], first_dealer: int = 0) -> None:
        self.rules = rules
        self.first_dealer = first_dealer
        self.round = round_index
        self.scores = scores
        self.dealer = dealer
        self.honba = honba
        self.sticks = sticks
        self.penalties = penalties
        minimum = 2 if rules.two_han_minimum_honba is not None and honba >= rules.two_han_minimum_honba else 1
        self.tsumo_prices = _prices(rules, tsumo=True, min_han=minimum)
        self.ron_prices = _prices(rules, tsumo=False, min_han=minimum)

    def place(self, scores: Sequence[int], seat: int, *, leftover: int = 0) -> int:
        """The worst place ``seat`` covers in the final ranking (a tie shared under EMA covers several)."""
        standings = final_standings(scores, self.rules, leftover_sticks=leftover, penalties=self.penalties,
                                    first_dealer=self.first_dealer)
        mine = next(s.place for s in standings if s.seat == seat)
        return mine + sum(1 for s in standings if s.place == mine) - 1

    def ends(self, settlement: Settlement, dealer_continues: bool) -> tuple[int, ...] | None:
        """The scores after the hand when the game ends with it, else None."""
        after = tuple(s + d for s, d in zip(self.scores, settlement.deltas, strict=True))
        ends = game_ends(self.rules, self.round, after, self.dealer, dealer_continues, first_dealer=self.first_dealer)
        return after if ends else None

    def outcome(self, seat: int, price: Price, from_seat: int | None) -> int | None:
        """The place ``seat`` ends in after winning this hand (from ``from_seat``, or by tsumo); None when
        the game goes on."""
        value = HandValue(han=price.han, fu=price.fu, yaku=(), limit=price.limit, base_points=price.base)
        if from_seat is None:
            settlement = settle_tsumo(value, seat, self.dealer, honba=self.honba, sticks=self.sticks)
        else:
            settlement = settle_ron([RonWin(seat, value)], from_seat, self.dealer, self.rules, honba=self.honba,
                                    sticks=self.sticks)
        after = self.ends(settlement, seat == self.dealer)
        return self.place(after, seat) if after is not None else None

    def cheapest(self, seat: int, from_seat: int | None, places: Sequence[int]) -> dict[int, Price]:
        """For each place, the cheapest hand that reaches it (places no hand reaches are left out). Every
        value is tried in order: a bigger hand is not always as good (under Tenhou a small tsumo can leave a
        rival at 30000 and end the game, a bigger one take them under it and play on into West)."""
        found: dict[int, Price] = {}
        for price in self.tsumo_prices if from_seat is None else self.ron_prices:
            reached = self.outcome(seat, price, from_seat)
            if reached is None:
                continue
            for p in places:
                if reached <= p and p not in found:
                    found[p] = price
            if len(found) == len(places):
                break
        return found

    def draw(self, seat: int, place: int, dead: tuple[bool, ...]) -> tuple[str | None, tuple[int, ...],
                                                                       tuple[int, ...]]:
        """Whether tenpai at an exhaustive draw reaches ``place``: (kind, seats that must be noten, other seats
        that must be tenpai). A draw after which the dealer keeps the deal is left aside (the game goes on
        by the dealer's hand); one after which the game goes on otherwise (Tenhou, nobody at 30000) fails."""
        if dead[seat]:
            return None, (), ()
        outcomes: dict[tuple[bool, ...], bool] = {}
        others = [s for s in range(4) if s != seat]
        for flags in itertools.product((False, True), repeat=3):
            tenpai = [True] * 4
            for s, f in zip(others, flags, strict=True):
                tenpai[s] = f and not dead[s]
            after = self.ends(settle_exhaustive_draw(tenpai), tenpai[self.dealer])
            if after is None and tenpai[self.dealer]:
                continue
            outcomes[tuple(tenpai)] = after is not None and self.place(after, seat, leftover=self.sticks) <= place
        if not any(outcomes.values()):
            return None, (), ()
        if all(outcomes.values()):
            return "tenpai", (), ()
        for rival in others:
            relevant = [ok for tenpai, ok in outcomes.items() if not tenpai[rival]]
            if relevant and all(relevant):
                return "tenpai, one rival noten", (rival,), ()
        if outcomes.get(tuple(s == seat for s in range(4))):
            return "tenpai alone", tuple(others), ()
        fewest = min((t for t, ok in outcomes.items() if ok), key=sum)
        return ("tenpai, as listed", tuple(s for s in others if not fewest[s]),
                tuple(s for s in others if fewest[s]))

    def seat(self, seat: int, dead: tuple[bool, ...]) -> SeatConditions:
        now = self.place(self.scores, seat, leftover=self.sticks)
        is_dealer = seat == self.dealer
        keeps = is_dealer and self.outcome(seat, self.tsumo_prices[0], None) is None
        places = list(range(1, now))
        if dead[seat] or not places:
            return SeatConditions(seat, now, is_dealer, keeps, dead[seat], ())
        tsumo = self.cheapest(seat, None, places)
        rons = {other: self.cheapest(seat, other, places) for other in range(4) if other != seat}
        targets = []
        for p in places:
            need = None
            if p in tsumo:
                shares = tsumo_points(tsumo[p].base, seat, self.dealer)
                need = TsumoNeed(tsumo[p], min(shares.values()), 0 if is_dealer else max(shares.values()))
            ron = tuple(RonNeed(o, found[p], ron_points(found[p].base, is_dealer))
                        for o, found in rons.items() if p in found)
            targets.append(Target(p, need, ron, *self.draw(seat, p, dead)))
        return SeatConditions(seat, now, is_dealer, keeps, False, tuple(targets))


def _prices(rules: RuleSet, *, tsumo: bool, min_han: int) -> tuple[Price, ...]:
    """Every value a winning hand can have, cheapest first, one per base (the lowest fu naming it)."""
    combos = []
    for han in range(min_han, 5):
        for fu in (20, 25, *range(30, 120, 10)):
            if fu == 20 and (not tsumo or han < 2):  # pinfu tsumo: closed, two han at least
                continue
            if fu == 25 and han < (3 if tsumo else 2):  # seven pairs: two han, three with menzen tsumo
                continue
            combos.append((han, fu))
    combos += [(5, 0), (6, 0), (8, 0), (11, 0)]
    prices: dict[int, Price] = {}
    for han, fu in sorted(combos, key=lambda c: (c[1] == 0, c[1], c[0])):
        base, limit, _ = base_points(han, fu, rules)
        if limit is Limit.NONE:
            prices.setdefault(base, Price(han, fu, limit, base))
        else:  # a limit is named by its own han (4 han 40 fu is a mangan: 5 han)
            prices.setdefault(base, Price(_LIMIT_HAN[limit], 0, limit, base))
    prices.setdefault(8000, Price(13, 0, Limit.YAKUMAN, 8000))  # a yakuman, whatever kazoe is worth
    return tuple(sorted(prices.values(), key=lambda p: p.base))


def describe(conditions: Sequence[SeatConditions], players: Sequence[str]) -> list[list[str]]:
    """Short lines per seat, as an overlay shows them: '1st with a mangan tsumo or 3900 from Ann'."""
    out = []
    for c in conditions:
        lines = []
        if c.dead:
            lines.append("dead hand: cannot win")
        elif c.dealer_keeps:
            bigger = any(t.reachable for t in c.targets)
            lines.append(f"a {'smaller ' if bigger else ''}win or tenpai keeps the deal")
        previous = None
        for target in c.targets:
            if c.dealer_keeps and not target.reachable:
                continue  # the dealer plays on instead: not out of reach
            need = (target.tsumo, target.ron, target.draw, target.draw_noten, target.draw_tenpai)
            if need != previous:  # a hand that reaches a better place reaches this one: said once
                lines.append(target_line(target, players))
            previous = need
        out.append(lines)
    return out


def target_line(target: Target, players: Sequence[str]) -> str:
    """One target as a line: '2nd with 700/1300 tsumo, 2300 from Ann or tenpai alone at a draw'."""
    place = _ORDINAL[target.place]
    if not target.reachable:
        return f"{place}: out of reach"
    parts = [target.tsumo.text] if target.tsumo is not None else []
    by_value: dict[str, list[str]] = {}
    for need in target.ron:
        by_value.setdefault(need.value, []).append(players[need.from_seat])
    parts += [f"{value} from {' or '.join(names)}" for value, names in by_value.items()]
    if target.draw is not None:
        if target.draw == "tenpai":
            draw = "tenpai at a draw"
        elif target.draw == "tenpai alone":
            draw = "tenpai alone at a draw"
        elif target.draw == "tenpai, as listed":
            both = ([f"{' and '.join(players[s] for s in target.draw_tenpai)} tenpai"] if target.draw_tenpai
                    else []) + ([f"{' and '.join(players[s] for s in target.draw_noten)} noten"]
                                if target.draw_noten else [])
            draw = f"tenpai at a draw with {' and '.join(both)}"
        else:
            draw = f"tenpai at a draw with {' and '.join(players[s] for s in target.draw_noten)} noten"
        parts.append(draw)
    if len(parts) == 1:
        return f"{place} with {parts[0]}"
    return f"{place} with {', '.join(parts[:-1])} or {parts[-1]}"
