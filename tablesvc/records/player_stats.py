"""Each player's statistics, as a stream's end-of-day slide and its player intro cards show them.

Pure: stored games in (:class:`~tablesvc.records.records_db.StoredGame`, the hand
results as the feed published them), figures out. Every figure is counted
from what a stored hand result says (``wins`` with ``seat``, ``from``,
``points``, ``han``, ``melds``; ``riichi_deposits``; ``dealer``; ``tenpai``;
``draw``; ``chombo``; ``opened``), so a club's database written before a
field existed is read too: a rate whose hands say nothing of it (``opened``,
the seats that called, in older results) is None, shown as a dash, never a
guessed 0.

"After riichi" counts the hands in which the player's riichi stick went down;
"after a call" the hands in which the player had called a tile into an open
meld (``opened``). Deal-in points are the value of the hand dealt into
(counters and sticks aside), like win points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tablesvc.records.records_db import StoredGame

__all__ = ["STATS", "PlayerStats", "Stat", "player_stats"]


@dataclass(frozen=True)
class Stat:
    """One line of the slide: its key in :meth:`PlayerStats.figures`, its label, and how it is written."""

    key: str
    label: str
    kind: str  # "count", "rate" (0..1, written as a percentage), "points", "place", "signed"


STATS: tuple[Stat, ...] = (
    Stat("games", "Games", "count"),
    Stat("hands", "Hands", "count"),
    Stat("average_place", "Average place", "place"),
    Stat("first_rate", "1st place", "rate"),
    Stat("fourth_rate", "4th place", "rate"),
    Stat("total", "Total", "signed"),
    Stat("win_rate", "Win rate", "rate"),
    Stat("tsumo_rate", "Wins by tsumo", "rate"),
    Stat("deal_in_rate", "Deal-in rate", "rate"),
    Stat("riichi_rate", "Riichi rate", "rate"),
    Stat("call_rate", "Call rate", "rate"),
    Stat("average_win", "Average win", "points"),
    Stat("average_deal_in", "Average deal-in", "points"),
    Stat("biggest_win", "Biggest win", "points"),
    Stat("average_han", "Average han", "place"),
    Stat("dealer_win_rate", "Win rate as dealer", "rate"),
    Stat("nondealer_win_rate", "Win rate not dealer", "rate"),
    Stat("dealer_deal_in_rate", "Deal-in rate as dealer", "rate"),
    Stat("nondealer_deal_in_rate", "Deal-in rate not dealer", "rate"),
    Stat("dealer_average_win", "Average win as dealer", "points"),
    Stat("nondealer_average_win", "Average win not dealer", "points"),
    Stat("riichi_win_rate", "Win rate after riichi", "rate"),
    Stat("riichi_deal_in_rate", "Deal-in rate after riichi", "rate"),
    Stat("riichi_average_win", "Average win after riichi", "points"),
    Stat("call_win_rate", "Win rate after a call", "rate"),
    Stat("call_deal_in_rate", "Deal-in rate after a call", "rate"),
    Stat("call_average_win", "Average win after a call", "points"),
    Stat("dama_rate", "Closed wins without riichi", "rate"),
    Stat("draw_tenpai_rate", "Tenpai at a draw", "rate"),
    Stat("chombo", "Chombo", "count"),
)
"""Every figure, in the slide's order (30 a player)."""


@dataclass
class _Split:
    """Hands, wins, deal-ins and their points over some of a player's hands (all, as dealer, after riichi ...)."""

    hands: int = 0
    wins: int = 0
    deal_ins: int = 0
    win_points: int = 0
    deal_in_points: int = 0

    def add(self, won: int | None, dealt: int | None) -> None:
        self.hands += 1
        if won is not None:
            self.wins += 1
            self.win_points += won
        if dealt is not None:
            self.deal_ins += 1
            self.deal_in_points += dealt

    def win_rate(self) -> float | None:
        return self.wins / self.hands if self.hands else None

    def deal_in_rate(self) -> float | None:
        return self.deal_ins / self.hands if self.hands else None

    def average_win(self) -> float | None:
        return self.win_points / self.wins if self.wins else None

    def average_deal_in(self) -> float | None:
        return self.deal_in_points / self.deal_ins if self.deal_ins else None


@dataclass
class PlayerStats:
    """What one player did in the games counted."""

    name: str
    games: int = 0
    places: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    placed: int = 0  # games with a place (finished)
    total: int = 0
    all: _Split = field(default_factory=_Split)
    dealer: _Split = field(default_factory=_Split)
    nondealer: _Split = field(default_factory=_Split)
    riichi: _Split = field(default_factory=_Split)
    called: _Split = field(default_factory=_Split)
    call_known: int = 0  # hands whose result says who called
    tsumo_wins: int = 0
    closed_quiet_wins: int = 0  # won closed, without riichi (dama)
    han: int = 0
    biggest: int | None = None
    draws: int = 0  # exhaustive draws whose result says who was tenpai
    draws_tenpai: int = 0
    chombos: int = 0

    def figures(self) -> dict[str, float | int | None]:
        """Every figure of :data:`STATS` by key; None where nothing was counted for it."""

        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        return {
            "games": self.games,
            "hands": self.all.hands,
            "average_place": ratio(sum((i + 1) * n for i, n in enumerate(self.places)), self.placed),
            "first_rate": ratio(self.places[0], self.placed),
            "fourth_rate": ratio(self.places[3], self.placed),
            "total": self.total,
            "win_rate": self.all.win_rate(),
            "tsumo_rate": ratio(self.tsumo_wins, self.all.wins),
            "deal_in_rate": self.all.deal_in_rate(),
            "riichi_rate": ratio(self.riichi.hands, self.all.hands),
            "call_rate": ratio(self.called.hands, self.call_known),
            "average_win": self.all.average_win(),
            "average_deal_in": self.all.average_deal_in(),
            "biggest_win": self.biggest,
            "average_han": ratio(self.han, self.all.wins),
            "dealer_win_rate": self.dealer.win_rate(),
            "nondealer_win_rate": self.nondealer.win_rate(),
            "dealer_deal_in_rate": self.dealer.deal_in_rate(),
            "nondealer_deal_in_rate": self.nondealer.deal_in_rate(),
            "dealer_average_win": self.dealer.average_win(),
            "nondealer_average_win": self.nondealer.average_win(),
            "riichi_win_rate": self.riichi.win_rate(),
            "riichi_deal_in_rate": self.riichi.deal_in_rate(),
            "riichi_average_win": self.riichi.average_win(),
            "call_win_rate": self.called.win_rate() if self.call_known else None,
            "call_deal_in_rate": self.called.deal_in_rate() if self.call_known else None,
            "call_average_win": self.called.average_win(),
            "dama_rate": ratio(self.closed_quiet_wins, self.all.wins),
            "draw_tenpai_rate": ratio(self.draws_tenpai, self.draws),
            "chombo": self.chombos,
        }

    def to_dict(self) -> dict[str, Any]:
        figures = self.figures()
        return {"name": self.name, "stats": {k: round(v, 4) if isinstance(v, float) else v
                                             for k, v in figures.items()}}


def player_stats(games: list[StoredGame], names: list[str] | None = None) -> dict[str, PlayerStats]:
    """Each player's figures over ``games`` (finished or not: a day's slide counts the game in play too; places
    and totals only from finished ones), by name; ``names``: only these players (each listed, even with no
    game)."""
    wanted = set(names) if names is not None else None
    out: dict[str, PlayerStats] = {n: PlayerStats(n) for n in names or ()}
    for game in games:
        by_seat = {s.seat: s for s in game.seats if 0 <= s.seat <= 3}
        for s in by_seat.values():
            if wanted is not None and s.name not in wanted:
                continue
            p = out.setdefault(s.name, PlayerStats(s.name))
            p.games += 1
            if game.finished and s.place is not None and 1 <= s.place <= 4:
                p.places[s.place - 1] += 1
                p.placed += 1
                p.total += s.result or 0
        for hand in game.hands:
            _count_hand(hand, by_seat, out, wanted)
    return out


def _count_hand(hand: dict[str, Any], by_seat: dict[int, Any], out: dict[str, PlayerStats],
                wanted: set[str] | None) -> None:
    kind = hand.get("result")
    chombo = _seat(hand.get("chombo"))
    if kind == "chombo":
        if chombo in by_seat and (wanted is None or by_seat[chombo].name in wanted):
            out.setdefault(by_seat[chombo].name, PlayerStats(by_seat[chombo].name)).chombos += 1
        return  # a chombo hand is replayed: it counts as no hand played
    wins = [w for w in _items(hand.get("wins")) if isinstance(w, dict) and _seat(w.get("seat")) in by_seat]
    won = {w["seat"]: _whole(w.get("points")) for w in wins}
    dealt: dict[int, int] = {}
    for w in wins:
        source = _seat(w.get("from"))
        if source is not None and source != w["seat"]:
            dealt[source] = dealt.get(source, 0) + _whole(w.get("points"))
    deposits = {s for s in _items(hand.get("riichi_deposits")) if _seat(s) is not None}
    opened = hand.get("opened")
    opened = opened if isinstance(opened, list) and len(opened) == 4 else None
    dealer = _seat(hand.get("dealer"))
    tenpai = hand.get("tenpai")
    exhaustive = kind == "exhaustive_draw" and isinstance(tenpai, list) and len(tenpai) == 4
    for seat, s in by_seat.items():
        if wanted is not None and s.name not in wanted:
            continue
        p = out.setdefault(s.name, PlayerStats(s.name))
        w, d = won.get(seat), dealt.get(seat)
        p.all.add(w, d)
        (p.dealer if seat == dealer else p.nondealer).add(w, d)
        if seat in deposits:
            p.riichi.add(w, d)
        if opened is not None:
            p.call_known += 1
            if opened[seat] is True:
                p.called.add(w, d)
        if exhaustive:
            p.draws += 1
            p.draws_tenpai += tenpai[seat] is True
    for w in wins:
        s = by_seat[w["seat"]]
        if wanted is not None and s.name not in wanted:
            continue
        p = out[s.name]
        points = _whole(w.get("points"))
        p.biggest = points if p.biggest is None else max(p.biggest, points)
        p.han += _whole(w.get("han"))
        if _seat(w.get("from")) is None:
            p.tsumo_wins += 1
        open_meld = any(isinstance(m, dict) and m.get("kind") != "ankan" for m in _items(w.get("melds")))
        if not open_meld and w["seat"] not in deposits:
            p.closed_quiet_wins += 1


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _seat(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3 else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
