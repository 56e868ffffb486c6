"""The club's standings, as data: what ``tablesvc records standings`` prints and the dashboard will show.

:func:`standings` is pure (stored games in, figures out), so it is tested on
hand-worked games and reads the same from SQLite and PostgreSQL. Only
finished games count. Players are matched by name as typed at the table,
after the aliases (``tablesvc records merge``) have merged spellings.

Per player: games; how often 1st, 2nd, 3rd, 4th (tied players share a
place, as EMA ranks them); average place; total score (each game's result:
points minus the return points, plus oka and uma, minus penalties); and per
hand played: win rate, deal-in rate (hands lost by ron: a discard won on),
riichi rate (hands in which the player's riichi stick went down) and
average win (the hand's value as scored, counters and sticks aside).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # no SQLAlchemy needed to rank games or parse a date (the web server imports this)
    from tablesvc.records.records_db import RecordsStore, StoredGame

__all__ = ["GameLine", "PlayerStanding", "Standings", "club_standings", "game_lines", "parse_since", "standings"]


@dataclass(frozen=True)
class PlayerStanding:
    name: str
    games: int
    places: tuple[int, int, int, int]  # times 1st, 2nd, 3rd, 4th
    total: int
    hands: int
    wins: int
    deal_ins: int
    riichi: int
    win_points: int

    @property
    def average_place(self) -> float:
        return sum((i + 1) * n for i, n in enumerate(self.places)) / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.hands if self.hands else 0.0

    @property
    def deal_in_rate(self) -> float:
        return self.deal_ins / self.hands if self.hands else 0.0

    @property
    def riichi_rate(self) -> float:
        return self.riichi / self.hands if self.hands else 0.0

    @property
    def average_win(self) -> float:
        return self.win_points / self.wins if self.wins else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["places"] = list(self.places)
        for key in ("average_place", "win_rate", "deal_in_rate", "riichi_rate", "average_win"):
            data[key] = round(getattr(self, key), 4)
        return data


@dataclass(frozen=True)
class GameLine:
    """One game for the list under the standings: where, when, who, and how it ended."""

    site: str
    table: str
    game: str
    started: str
    rules: str
    players: tuple[tuple[str, int | None, int | None, int | None], ...]  # (name, place, points, result) by seat

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "table": self.table, "game": self.game, "started": self.started,
                "rules": self.rules, "players": [{"name": n, "place": p, "points": pts, "result": r}
                                                 for n, p, pts, r in self.players]}


@dataclass(frozen=True)
class Standings:
    players: list[PlayerStanding]
    games: list[GameLine]

    def to_dict(self) -> dict[str, Any]:
        return {"players": [p.to_dict() for p in self.players], "games": [g.to_dict() for g in self.games]}


class _Tally:
    def __init__(self) -> None:
        self.games = 0
        self.places = [0, 0, 0, 0]
        self.total = 0
        self.hands = self.wins = self.deal_ins = self.riichi = self.win_points = 0


def standings(games: list[StoredGame]) -> list[PlayerStanding]:
    """Every player of the finished games, best total first (then the better average place, then name)."""
    tally: dict[str, _Tally] = {}
    for game in games:
        if not game.finished:
            continue
        by_seat = {s.seat: s for s in game.seats}
        for s in game.seats:
            t = tally.setdefault(s.name, _Tally())
            t.games += 1
            if s.place is not None and 1 <= s.place <= 4:
                t.places[s.place - 1] += 1
            t.total += s.result or 0
        for hand in game.hands:
            wins = [w for w in _items(hand.get("wins")) if isinstance(w, dict) and _seat(w.get("seat")) in by_seat]
            winners = {w["seat"] for w in wins}
            losers = {w["from"] for w in wins if _seat(w.get("from")) is not None}
            deposits = {s for s in _items(hand.get("riichi_deposits")) if _seat(s) is not None}
            for seat, s in by_seat.items():
                t = tally[s.name]
                t.hands += 1
                t.wins += seat in winners
                t.deal_ins += seat in losers
                t.riichi += seat in deposits
            for w in wins:
                points = w.get("points")
                tally[by_seat[w["seat"]].name].win_points += points if _whole(points) else 0
    players = [PlayerStanding(name, t.games, (t.places[0], t.places[1], t.places[2], t.places[3]), t.total,
                              t.hands, t.wins, t.deal_ins, t.riichi, t.win_points) for name, t in tally.items()]
    return sorted(players, key=lambda p: (-p.total, p.average_place, p.name))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seat(value: Any) -> int | None:
    """A seat in a stored hand (0..3), else None: the standings count what they can read and skip the rest."""
    return value if _whole(value) and 0 <= value <= 3 else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def game_lines(games: list[StoredGame]) -> list[GameLine]:
    return [GameLine(g.site, g.table, g.game, g.started, g.rules,
                     tuple((s.name, s.place, s.points, s.result) for s in g.seats)) for g in games]


def club_standings(store: RecordsStore, *, since: str | None = None) -> Standings:
    """The standings and the games they come from (finished games started at or after ``since``)."""
    games = store.games(since=since)
    return Standings(standings(games), game_lines(games))


def parse_since(text: str) -> str:
    """A date or a time in ISO 8601 (UTC unless it says), as the games' start times are kept; ValueError if not."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is no date: write it as 2026-11-30 or 2026-11-30T19:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds")
