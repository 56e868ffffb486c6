"""The tournament's standings, from the tables' own results: pure (data in, figures out).

A round's game at a table is the game the collector wrote for that table
(site and table id) that started after the round did and seats the four
names the round sent, in their seats; a referee's correction rewrites that
game in the records, so it flows into the standings by itself. A game that
was replayed (started again) counts once: the last one started.

Per player: the total (each game's result, uma and the table's own
penalties in, less the referee's tournament penalties), games, how often
1st to 4th, the best game. Ties on the total are broken by the organiser's
rule (:class:`TieBreak`); under ``shared`` they stand. A substitute's games
are listed and count for the table, but a substitute is not ranked (EMA).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tablesvc.tournament.model import (
    HallTable,
    Penalty,
    PenaltyKind,
    Player,
    PlayerStatus,
    Round,
    RoundStatus,
    TieBreak,
    Tournament,
)
from tablesvc.tournament.tournament_db import GameRow

__all__ = ["PlayerStanding", "Standings", "TableGame", "match_games", "standings"]

CLOCK_SKEW = timedelta(minutes=5)  # a table's clock may be behind the organiser's laptop by this much


@dataclass(frozen=True)
class TableGame:
    """One table of one round: who sits where, and its game once the tables reported it."""

    round: int
    table: int
    site: str
    table_id: str
    players: tuple[int, int, int, int]
    names: tuple[str, str, str, str]
    game: GameRow | None

    @property
    def status(self) -> str:
        if self.game is None:
            return "waiting"
        return "finished" if self.game.finished else "in play"

    def to_dict(self) -> dict[str, Any]:
        seats = []
        for s, (number, name) in enumerate(zip(self.players, self.names, strict=True)):
            row = next((x for x in self.game.seats if x.seat == s), None) if self.game and self.game.finished else None
            seats.append({"player": number, "name": name, "points": row.points if row else None,
                          "place": row.place if row else None, "result": row.result if row else None})
        return {"round": self.round, "table": self.table, "site": self.site, "table_id": self.table_id,
                "status": self.status, "game": self.game.game if self.game else None, "seats": seats}


@dataclass(frozen=True)
class PlayerStanding:
    place: int | None  # None: a substitute (not ranked)
    player: Player
    total: int  # game results (uma and the tables' penalties in) less tournament penalties
    games_result: int
    penalties: int  # tournament penalty points taken off
    warnings: int
    games: int
    places: tuple[int, int, int, int]
    score: int  # the points the player ended their games with, less the starting points (before uma)
    best_game: int | None
    chombo: int = 0  # the tables' own penalties (chombo, dead hands) in the games, already in games_result

    @property
    def average_place(self) -> float:
        return sum((i + 1) * n for i, n in enumerate(self.places)) / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        p = self.player
        return {"place": self.place, "number": p.number, "name": p.name, "ema_id": p.ema_id, "club": p.club,
                "country": p.country, "status": p.status.value, "total": self.total,
                "games_result": self.games_result, "penalties": self.penalties, "warnings": self.warnings,
                "games": self.games, "places": list(self.places), "average_place": round(self.average_place, 3),
                "score": self.score, "best_game": self.best_game, "chombo": self.chombo}


@dataclass(frozen=True)
class Standings:
    tournament: Tournament
    players: list[PlayerStanding]
    tables: list[TableGame]  # every round's tables, round by round
    penalties: list[Penalty] = field(default_factory=list)
    finished_rounds: int = 0  # rounds closed by the organiser: fewer than the tournament's is a provisional result

    @property
    def provisional(self) -> bool:
        return self.finished_rounds < self.tournament.rounds

    def incomplete(self, row: PlayerStanding) -> bool:
        """A player who has played fewer games than the rounds finished (withdrew, or joined late): ranked by
        their total as the others, and marked wherever the ranking is shown."""
        return row.games < self.finished_rounds

    def to_dict(self) -> dict[str, Any]:
        t = self.tournament
        names = {s.player.number: s.player.name for s in self.players}
        return {
            "tournament": {"name": t.name, "rules": t.rules, "rounds": t.rounds, "tie_break": t.tie_break.value,
                           "time_rule": t.time_rule, "minutes": t.minutes},
            "provisional": self.provisional, "finished_rounds": self.finished_rounds,
            "players": [p.to_dict() | {"incomplete": self.incomplete(p)} for p in self.players],
            "tables": [g.to_dict() for g in self.tables],
            "penalties": [{"id": x.id, "round": x.round, "player": x.player, "name": names.get(x.player),
                           "points": x.points, "reason": x.reason, "hand": x.hand, "kind": x.kind.value, "at": x.at}
                          for x in self.penalties],
        }


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def match_games(rounds: Sequence[Round], hall: Sequence[HallTable], players: Sequence[Player],
                games: Sequence[GameRow]) -> list[TableGame]:
    """Every seated table of every round with its game, where the tables have reported one."""
    names = {p.number: p.name for p in players}
    by_number = {t.number: t for t in hall}
    out = []
    for r in rounds:
        since = _time(r.started_at)
        for i, four in enumerate(r.seating.tables, 1):
            t = by_number.get(i)
            if t is None:
                continue
            seated = tuple(names.get(p, f"player {p}") for p in four)
            found = None
            if r.status is not RoundStatus.SEATED and since is not None:
                for g in games:
                    if g.site != t.site or g.table != t.table_id:
                        continue
                    started = _time(g.started)
                    if started is None or started < since - CLOCK_SKEW:
                        continue
                    if tuple(s.name for s in sorted(g.seats, key=lambda s: s.seat)) != seated:
                        continue
                    if found is None or (g.finished, g.started) > (found.finished, found.started):
                        found = g
            out.append(TableGame(r.number, i, t.site, t.table_id, four,  # type: ignore[arg-type]
                                 seated, found))  # type: ignore[arg-type]
    return out


class _Tally:
    def __init__(self) -> None:
        self.result = self.penalty = self.warnings = self.games = self.score = self.chombo = 0
        self.places = [0, 0, 0, 0]
        self.best: int | None = None


def standings(t: Tournament, players: Sequence[Player], hall: Sequence[HallTable], rounds: Sequence[Round],
              games: Sequence[GameRow], penalties: Sequence[Penalty], *, start_points: int = 30000) -> Standings:
    tables = match_games(rounds, hall, players, games)
    tally = {p.number: _Tally() for p in players}
    for tg in tables:
        if tg.game is None or not tg.game.finished:
            continue
        for seat in tg.game.seats:
            x = tally.get(tg.players[seat.seat])
            if x is None:
                continue
            result = seat.result or 0
            x.result += result
            x.games += 1
            x.score += (seat.points or 0) - start_points
            x.chombo += seat.penalty or 0
            if seat.place and 1 <= seat.place <= 4:
                x.places[seat.place - 1] += 1
            x.best = result if x.best is None else max(x.best, result)
    for pen in penalties:
        x = tally.get(pen.player)
        if x is None:
            continue
        if pen.kind is PenaltyKind.WARNING:
            x.warnings += 1
        else:
            x.penalty += pen.points
    rows = [PlayerStanding(None, p, tally[p.number].result - tally[p.number].penalty, tally[p.number].result,
                           tally[p.number].penalty, tally[p.number].warnings, tally[p.number].games,
                           tuple(tally[p.number].places), tally[p.number].score,  # type: ignore[arg-type]
                           tally[p.number].best, tally[p.number].chombo) for p in players]
    ranked = [r for r in rows if r.player.status is not PlayerStatus.SUBSTITUTE]
    subs = [r for r in rows if r.player.status is PlayerStatus.SUBSTITUTE]

    def tie(r: PlayerStanding) -> tuple:
        if t.tie_break is TieBreak.PLACES:
            return (-r.places[0], -r.places[1], -r.places[2])
        if t.tie_break is TieBreak.AVERAGE_PLACE:
            return (r.average_place if r.games else 9.0,)
        if t.tie_break is TieBreak.BEST_GAME:
            return (-(r.best_game if r.best_game is not None else -10**9),)
        return ()

    ranked.sort(key=lambda r: (-r.total, *tie(r), r.player.number))
    placed: list[PlayerStanding] = []
    for i, r in enumerate(ranked):
        same = bool(placed) and (-placed[-1].total, *tie(placed[-1])) == (-r.total, *tie(r))
        place = placed[-1].place if same else i + 1
        placed.append(PlayerStanding(place, *(getattr(r, f) for f in (
            "player", "total", "games_result", "penalties", "warnings", "games", "places", "score", "best_game",
            "chombo"))))
    subs.sort(key=lambda r: (-r.total, r.player.number))
    return Standings(t, placed + subs, tables, list(penalties),
                     sum(1 for r in rounds if r.status is RoundStatus.FINISHED))
