"""The tournament in the records database: every action one transaction, refused whole or done whole.

A tournament lives beside the games the collector writes (the same database,
the same migrations), so the standings read the tables' own results. Every
method checks what it is given before it writes, and the writes of one
action share a transaction: a CSV with one bad row adds no player, a seating
with a player twice seats no one (the database's own unique constraint
stands behind the check), a round started twice changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from tablesvc.records.records_db import RecordsError, RecordsStore
from tablesvc.records.schema import (
    game_players,
    games,
    tournament_penalties,
    tournament_players,
    tournament_rounds,
    tournament_seats,
    tournament_tables,
    tournaments,
)
from tablesvc.text import InvalidText, require_plain_text
from tablesvc.tournament.model import (
    HallTable,
    Penalty,
    PenaltyKind,
    Player,
    PlayerStatus,
    Round,
    RoundStatus,
    Seating,
    SeatingMethod,
    TieBreak,
    Tournament,
    TournamentError,
)

__all__ = ["GameRow", "NewPlayer", "SeatRow", "TournamentStore"]

log = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class NewPlayer:
    """A player to add; ``row`` names where they came from (a CSV line) for the refusals."""

    name: str
    ema_id: str | None = None
    club: str | None = None
    country: str | None = None
    row: str = ""
    first_name: str | None = None  # as the registration gave them (the EMA report's columns)
    last_name: str | None = None


@dataclass(frozen=True)
class SeatRow:
    seat: int
    name: str  # as typed at the table
    points: int | None
    place: int | None
    uma: int | None
    oka: int | None
    penalty: int | None
    result: int | None


@dataclass(frozen=True)
class GameRow:
    """A game of one of the hall's tables, as the collector wrote it."""

    site: str
    table: str
    game: str
    started: str
    rules: str
    finished: bool
    leftover_sticks: int | None
    seats: tuple[SeatRow, ...]


def _plain(where: str, **fields: str | None) -> None:
    """Names, clubs, countries and EMA ids are one line of visible text (:func:`tablesvc.text.require_plain_text`)."""
    for field, value in fields.items():
        if value is not None:
            try:
                require_plain_text(str(value), f"the {field.replace('_', ' ')}")
            except InvalidText as exc:
                raise TournamentError(f"{where}: {exc}") from None


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


class TournamentStore:
    """The tournaments of one records database. ``records`` is opened (and migrated) by the caller."""

    def __init__(self, records: RecordsStore) -> None:
        self.records = records
        self.engine = records.engine
        self._local = threading.local()  # the connection of a :meth:`reading` block, per thread

    # ------------------------------------------------------------ plumbing

    def _write(self, work: Any) -> Any:
        try:
            with self.engine.begin() as conn:
                return work(conn)
        except TournamentError:
            raise
        except IntegrityError as exc:
            raise TournamentError(f"refused by the database, nothing changed: {_reason(exc)}") from None
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot write to the records database {self.records.name}: {_reason(exc)}") from None

    def _read(self, work: Any) -> Any:
        try:
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                return work(conn)
            with self.engine.connect() as conn:
                return work(conn)
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot read the records database {self.records.name}: {_reason(exc)}") from None

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The reads of this thread inside the block share one connection: a page's read of the whole
        tournament (the tournament, players, tables, rounds, games, penalties), done several times a second
        while pages listen, takes one connection from the pool and ends one transaction, not one per read."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        try:
            conn = self.engine.connect()
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot read the records database {self.records.name}: {_reason(exc)}") from None
        self._local.conn = conn
        try:
            yield
        finally:
            self._local.conn = None
            with contextlib.suppress(SQLAlchemyError):  # a connection already lost: its read has said so
                conn.close()

    # ------------------------------------------------------------ the tournament

    def create(self, t: Tournament) -> int:
        if not t.name.strip():
            raise TournamentError("a tournament needs a name")
        if not 1 <= t.rounds <= 100:
            raise TournamentError("a tournament has 1 to 100 rounds")
        _check_minutes(t.minutes)
        from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset

        try:
            get_ruleset(t.rules)
        except (UnknownRuleSetError, ValueError) as exc:
            raise TournamentError(f"rules {t.rules!r}: {exc}") from None

        def write(conn: Connection) -> int:
            if conn.execute(select(tournaments.c.id).where(tournaments.c.name == t.name)).first():
                raise TournamentError(f"there is already a tournament {t.name!r} in this database")
            return int(conn.execute(insert(tournaments).values(
                name=t.name, rules=t.rules, rounds=t.rounds, tie_break=t.tie_break.value,
                separate_clubs=t.separate_clubs, top_table=t.top_table, time_rule=t.time_rule, minutes=t.minutes,
                created_at=_now())).inserted_primary_key[0])

        return self._write(write)

    def find(self, name: str | None = None) -> tuple[int, Tournament]:
        """The tournament called ``name``, or the one made last."""

        def read(conn: Connection) -> Any:
            q = select(tournaments)
            q = q.where(tournaments.c.name == name) if name else q.order_by(tournaments.c.id.desc()).limit(1)
            return conn.execute(q).mappings().first()

        row = self._read(read)
        if row is None:
            raise TournamentError(f"no tournament {name!r} in this database" if name else
                                  "no tournament in this database yet: tablesvc tournament create NAME")
        return _tournament(row)

    def find_by_id(self, conn: Connection, tid: int) -> tuple[int, Tournament]:
        row = conn.execute(select(tournaments).where(tournaments.c.id == tid)).mappings().first()
        if row is None:
            raise TournamentError(f"no tournament {tid}")
        return _tournament(row)

    def tournament(self, tid: int) -> Tournament:
        return self._read(lambda conn: self.find_by_id(conn, tid))[1]

    def set_clock(self, tid: int, minutes: int | None, time_rule: str | None) -> None:
        """The round time and the rule at the end of time, recorded with the tournament's rules."""
        _check_minutes(minutes)
        self._write(lambda conn: conn.execute(update(tournaments).where(tournaments.c.id == tid).values(
            minutes=minutes, time_rule=time_rule)))

    # ------------------------------------------------------------ players

    def players(self, tid: int) -> list[Player]:
        def read(conn: Connection) -> list[Player]:
            rows = conn.execute(select(tournament_players).where(tournament_players.c.tournament_id == tid)
                                .order_by(tournament_players.c.number)).mappings().all()
            return [Player(r["number"], r["name"], r["ema_id"], r["club"], r["country"], PlayerStatus(r["status"]),
                           r["replaces"], r["first_name"], r["last_name"]) for r in rows]

        return self._read(read)

    def player(self, tid: int, who: str | int) -> Player:
        """A player by number, name or EMA id."""
        return _find_player(self.players(tid), who)

    def add_players(self, tid: int, new: Sequence[NewPlayer], *, status: PlayerStatus = PlayerStatus.ACTIVE,
                    replaces: int | None = None) -> list[Player]:
        """All of them or none: a duplicate name or EMA id (among them or with a player already in) is refused
        naming the row."""

        def write(conn: Connection) -> list[Player]:
            known = self._players(conn, tid)
            names = {p.name.casefold(): f"player {p.number}" for p in known}
            emas = {p.ema_id: f"player {p.number} ({p.name})" for p in known if p.ema_id}
            number = max((p.number for p in known), default=0)
            added = []
            for n in new:
                where = n.row or f"player {n.name!r}"
                _plain(where, name=n.name, club=n.club, country=n.country, ema_id=n.ema_id)
                name = _clean(n.name)
                if not name:
                    raise TournamentError(f"{where}: no name")
                if len(name) > 60:
                    raise TournamentError(f"{where}: the name {name[:20]!r}... is longer than a table shows (60)")
                ema = _clean(n.ema_id)
                if name.casefold() in names:
                    raise TournamentError(f"{where}: the name {name!r} is already {names[name.casefold()]}: two "
                                          "players with one name cannot be told apart at the tables")
                if ema and ema in emas:
                    raise TournamentError(f"{where}: EMA id {ema} is already {emas[ema]}")
                number += 1
                player = Player(number, name, ema, _clean(n.club), _clean(n.country), status, replaces,
                                _clean(n.first_name), _clean(n.last_name))
                names[name.casefold()] = f"{n.row or 'player'} ({name})"
                if ema:
                    emas[ema] = f"{n.row or 'player'} ({name})"
                added.append(player)
            if added:
                conn.execute(insert(tournament_players), [
                    {"tournament_id": tid, "number": p.number, "name": p.name, "ema_id": p.ema_id, "club": p.club,
                     "country": p.country, "status": p.status.value, "replaces": p.replaces,
                     "first_name": p.first_name, "last_name": p.last_name} for p in added])
            return added

        return self._write(write)

    def _players(self, conn: Connection, tid: int) -> list[Player]:
        rows = conn.execute(select(tournament_players).where(tournament_players.c.tournament_id == tid)).mappings()
        return [Player(r["number"], r["name"], r["ema_id"], r["club"], r["country"], PlayerStatus(r["status"]),
                       r["replaces"], r["first_name"], r["last_name"]) for r in rows]

    def rename(self, tid: int, who: str | int, name: str) -> Player:
        _plain(f"the new name of {who}", name=name)
        name = name.strip()

        def write(conn: Connection) -> Player:
            known = self._players(conn, tid)
            player = _find_player(known, who)
            if not name:
                raise TournamentError("a player needs a name")
            clash = next((p for p in known if p.name.casefold() == name.casefold() and p.number != player.number),
                         None)
            if clash:
                raise TournamentError(f"the name {name!r} is already player {clash.number}")
            if self._in_started_round(conn, tid, player.number):
                raise TournamentError(f"{player.name} is playing in a started round: the table has the old name; "
                                      "rename between rounds")
            conn.execute(update(tournament_players).where(tournament_players.c.tournament_id == tid,
                                                          tournament_players.c.number == player.number)
                         .values(name=name))
            return replace(player, name=name)

        return self._write(write)

    def _in_started_round(self, conn: Connection, tid: int, number: int) -> bool:
        started = conn.execute(select(tournament_rounds.c.number).where(
            tournament_rounds.c.tournament_id == tid, tournament_rounds.c.status == RoundStatus.STARTED.value)).all()
        if not started:
            return False
        return conn.execute(select(tournament_seats.c.player).where(
            tournament_seats.c.tournament_id == tid, tournament_seats.c.player == number,
            tournament_seats.c.round.in_([r[0] for r in started]))).first() is not None

    def withdraw(self, tid: int, who: str | int) -> tuple[Player, list[int]]:
        """The player plays no more; their games stay. The rounds seated and not started keep their seating
        (its quality with it): the seat waits for a substitute (:meth:`substitute`), and those rounds are
        listed. A round is not started while a withdrawn player is seated in it."""

        def write(conn: Connection) -> tuple[Player, list[int]]:
            player = _find_player(self._players(conn, tid), who)
            if player.status is PlayerStatus.WITHDRAWN:
                raise TournamentError(f"{player.name} has already withdrawn")
            if self._in_started_round(conn, tid, player.number):
                raise TournamentError(f"{player.name} is playing in a started round: withdraw them when it is "
                                      f"finished, or seat a substitute now (tablesvc tournament substitute "
                                      f"{player.number} NAME)")
            conn.execute(update(tournament_players).where(tournament_players.c.tournament_id == tid,
                                                          tournament_players.c.number == player.number)
                         .values(status=PlayerStatus.WITHDRAWN.value))
            return replace(player, status=PlayerStatus.WITHDRAWN), self._seated_future(conn, tid, player.number)

        return self._write(write)

    def _seated_future(self, conn: Connection, tid: int, number: int) -> list[int]:
        """The rounds seated and not started that seat this player."""
        return sorted(r[0] for r in conn.execute(select(tournament_seats.c.round).join(
            tournament_rounds, (tournament_rounds.c.tournament_id == tournament_seats.c.tournament_id)
            & (tournament_rounds.c.number == tournament_seats.c.round)).where(
            tournament_seats.c.tournament_id == tid, tournament_seats.c.player == number,
            tournament_rounds.c.status == RoundStatus.SEATED.value)))

    def substitute(self, tid: int, who: str | int, new: NewPlayer) -> tuple[Player, Player]:
        """``new`` takes ``who``'s seat from the next round on (in every round seated and not started, so their
        quality is kept); ``who`` withdraws, or has withdrawn already and their seat waited. A substitute plays
        and is reported, and is not ranked (EMA)."""

        def swap(conn: Connection) -> tuple[Player, Player]:
            known = self._players(conn, tid)
            out = _find_player(known, who)
            taken = next((p for p in known if p.replaces == out.number), None)
            if taken is not None:
                raise TournamentError(f"{out.name}'s seat is taken by {taken.name} (player {taken.number}) already")
            if out.status is PlayerStatus.SUBSTITUTE and out.replaces is None:
                raise TournamentError(f"{out.name} is a substitute")
            if self._in_started_round(conn, tid, out.number):
                raise TournamentError(f"{out.name} is playing in a started round: substitute between rounds")
            sub = self._add_in(conn, tid, known, new, PlayerStatus.SUBSTITUTE, out.number)
            conn.execute(update(tournament_players).where(tournament_players.c.tournament_id == tid,
                                                          tournament_players.c.number == out.number)
                         .values(status=PlayerStatus.WITHDRAWN.value))
            future = [r[0] for r in conn.execute(select(tournament_rounds.c.number).where(
                tournament_rounds.c.tournament_id == tid, tournament_rounds.c.status == RoundStatus.SEATED.value))]
            if future:
                conn.execute(update(tournament_seats).where(
                    tournament_seats.c.tournament_id == tid, tournament_seats.c.player == out.number,
                    tournament_seats.c.round.in_(future)).values(player=sub.number))
            return replace(out, status=PlayerStatus.WITHDRAWN), sub

        return self._write(swap)

    def _add_in(self, conn: Connection, tid: int, known: list[Player], n: NewPlayer, status: PlayerStatus,
                replaces: int | None) -> Player:
        name, ema = _clean(n.name), _clean(n.ema_id)
        if not name:
            raise TournamentError("the substitute needs a name")
        for p in known:
            if p.name.casefold() == name.casefold():
                raise TournamentError(f"the name {name!r} is already player {p.number}")
            if ema and p.ema_id == ema:
                raise TournamentError(f"EMA id {ema} is already player {p.number} ({p.name})")
        number = max((p.number for p in known), default=0) + 1
        conn.execute(insert(tournament_players).values(
            tournament_id=tid, number=number, name=name, ema_id=ema, club=_clean(n.club), country=_clean(n.country),
            status=status.value, replaces=replaces, first_name=_clean(n.first_name), last_name=_clean(n.last_name)))
        return Player(number, name, ema, _clean(n.club), _clean(n.country), status, replaces, _clean(n.first_name),
                      _clean(n.last_name))

    def set_name_parts(self, tid: int, who: str | int, first: str, last: str) -> Player:
        """The first and last name the EMA report gives (a name imported in one column is split at its last
        space until this corrects it); the name sent to the tables is not changed."""
        first, last = first.strip(), last.strip()
        if not first and not last:
            raise TournamentError("give a first name, a last name or both")

        def write(conn: Connection) -> Player:
            player = _find_player(self._players(conn, tid), who)
            conn.execute(update(tournament_players).where(tournament_players.c.tournament_id == tid,
                                                          tournament_players.c.number == player.number)
                         .values(first_name=first or None, last_name=last or None))
            return replace(player, first_name=first or None, last_name=last or None)

        return self._write(write)

    # ------------------------------------------------------------ the hall's tables

    def tables(self, tid: int) -> list[HallTable]:
        def read(conn: Connection) -> list[HallTable]:
            rows = conn.execute(select(tournament_tables).where(tournament_tables.c.tournament_id == tid)
                                .order_by(tournament_tables.c.number)).mappings().all()
            return [HallTable(r["number"], r["site"], r["table_id"]) for r in rows]

        return self._read(read)

    def set_tables(self, tid: int, tables: Sequence[tuple[str, str]]) -> list[HallTable]:
        """The hall's tables in order (table 1 first: the streamed one). Refused once a round has started."""
        from tablesvc.mqtt.topics import TopicTree

        seen: dict[tuple[str, str], int] = {}
        for i, (site, table) in enumerate(tables, 1):
            try:
                TopicTree("tablesvc", site, table)
            except ValueError as exc:
                raise TournamentError(f"table {i} ({site}/{table}): {exc}") from None
            if (site, table) in seen:
                raise TournamentError(f"table {i} ({site}/{table}) is table {seen[(site, table)]} already")
            seen[(site, table)] = i

        def write(conn: Connection) -> list[HallTable]:
            if conn.execute(select(tournament_rounds.c.number).where(
                    tournament_rounds.c.tournament_id == tid,
                    tournament_rounds.c.status != RoundStatus.SEATED.value)).first():
                raise TournamentError("a round has started: the hall's tables are fixed now")
            conn.execute(delete(tournament_tables).where(tournament_tables.c.tournament_id == tid))
            if tables:
                conn.execute(insert(tournament_tables), [{"tournament_id": tid, "number": i, "site": s, "table_id": t}
                                                         for i, (s, t) in enumerate(tables, 1)])
            return [HallTable(i, s, t) for i, (s, t) in enumerate(tables, 1)]

        return self._write(write)

    # ------------------------------------------------------------ rounds

    def rounds(self, tid: int) -> list[Round]:
        def read(conn: Connection) -> list[Round]:
            return self._rounds(conn, tid)

        return self._read(read)

    def _rounds(self, conn: Connection, tid: int) -> list[Round]:
        rows = conn.execute(select(tournament_rounds).where(tournament_rounds.c.tournament_id == tid)
                            .order_by(tournament_rounds.c.number)).mappings().all()
        seats: dict[int, dict[int, list[int]]] = {}
        for s in conn.execute(select(tournament_seats).where(tournament_seats.c.tournament_id == tid)
                              .order_by(tournament_seats.c.round, tournament_seats.c.table_number,
                                        tournament_seats.c.seat)).mappings():
            seats.setdefault(s["round"], {}).setdefault(s["table_number"], []).append(s["player"])
        out = []
        for r in rows:
            by_table = seats.get(r["number"], {})
            tables = tuple(tuple(by_table[t]) for t in sorted(by_table))
            out.append(Round(r["number"], RoundStatus(r["status"]), Seating(tables),  # type: ignore[arg-type]
                             SeatingMethod(r["method"]), r["started_at"],
                             tuple(json.loads(r["started_tables"] or "[]")),
                             tuple(json.loads(r["offline_tables"] or "[]")), r["deadline"]))
        return out

    def round(self, tid: int, number: int) -> Round:
        for r in self.rounds(tid):
            if r.number == number:
                return r
        raise TournamentError(f"round {number} is not seated yet")

    def save_seating(self, tid: int, number: int, seating: Seating, method: SeatingMethod) -> Round:
        return self.save_seatings(tid, {number: seating}, method)[0]

    def save_seatings(self, tid: int, plan: dict[int, Seating], method: SeatingMethod) -> list[Round]:
        """Seat these rounds (again, while they have not started), all or none. Refused naming the player: one
        seated twice, a player unknown or withdrawn; naming the table: more tables than the hall has."""

        def write(conn: Connection) -> list[Round]:
            return [self._save(conn, tid, number, seating, method) for number, seating in sorted(plan.items())]

        return self._write(write)

    def _save(self, conn: Connection, tid: int, number: int, seating: Seating, method: SeatingMethod) -> Round:
        _id, t = self.find_by_id(conn, tid)
        if not 1 <= number <= t.rounds:
            raise TournamentError(f"round {number}: the tournament has rounds 1 to {t.rounds}")
        existing = {r.number: r for r in self._rounds(conn, tid)}
        if number in existing and existing[number].status is not RoundStatus.SEATED:
            raise TournamentError(f"round {number} has {existing[number].status.value}: its seating is kept as "
                                  "it was played")
        players = {p.number: p for p in self._players(conn, tid)}
        hall = conn.execute(select(func.count()).select_from(tournament_tables).where(
            tournament_tables.c.tournament_id == tid)).scalar_one()
        if len(seating.tables) > hall:
            raise TournamentError(f"round {number} needs {len(seating.tables)} tables and the hall has {hall}: "
                                  "add tables with tablesvc tournament tables")
        where: dict[int, int] = {}
        for i, four in enumerate(seating.tables, 1):
            if len(four) != 4:
                raise TournamentError(f"round {number}, table {i}: {len(four)} players, not 4")
            for p in four:
                if p not in players:
                    raise TournamentError(f"round {number}, table {i}: no player {p}")
                if p in where:
                    raise TournamentError(f"round {number}: {players[p].name} (player {p}) is seated twice, at "
                                          f"table {where[p]} and table {i}")
                if players[p].status is PlayerStatus.WITHDRAWN:
                    raise TournamentError(f"round {number}, table {i}: {players[p].name} has withdrawn")
                where[p] = i
        conn.execute(delete(tournament_seats).where(tournament_seats.c.tournament_id == tid,
                                                    tournament_seats.c.round == number))
        conn.execute(delete(tournament_rounds).where(tournament_rounds.c.tournament_id == tid,
                                                     tournament_rounds.c.number == number))
        conn.execute(insert(tournament_rounds).values(tournament_id=tid, number=number,
                                                      status=RoundStatus.SEATED.value, method=method.value,
                                                      started_tables="[]", offline_tables="[]"))
        conn.execute(insert(tournament_seats), [
            {"tournament_id": tid, "round": number, "table_number": i, "seat": s, "player": p}
            for i, four in enumerate(seating.tables, 1) for s, p in enumerate(four)])
        return Round(number, RoundStatus.SEATED, seating, method)

    def begin_start(self, tid: int, number: int, *, retry: bool = False) -> tuple[Round, list[int]]:
        """The round about to be started and the tables to send ``start_game`` to: all, or with ``retry`` only
        those that did not start. A round already started (or finished) is refused unless ``retry``."""
        r = self.round(tid, number)
        if r.status is RoundStatus.FINISHED:
            raise TournamentError(f"round {number} is finished: it cannot be started again")
        if r.status is RoundStatus.STARTED and not retry:
            raise TournamentError(
                f"round {number} was started at {r.started_at} (tables started: "
                f"{', '.join(map(str, r.started_tables)) or 'none'}): a round is started once; to send start_game "
                "again to the tables that did not start, use --retry")
        if retry and r.status is not RoundStatus.STARTED:
            raise TournamentError(f"round {number} has not been started: start it without --retry")
        earlier = [x for x in self.rounds(tid) if x.number < number and x.status is RoundStatus.STARTED]
        if earlier and not retry:
            raise TournamentError(f"round {earlier[0].number} is still in play: finish it first "
                                  f"(tablesvc tournament finish-round {earlier[0].number})")
        pending = [i for i in range(1, len(r.seating.tables) + 1) if i not in r.started_tables]
        if retry and not pending:
            raise TournamentError(f"every table of round {number} has started")
        return r, pending

    def mark_started(self, tid: int, number: int, started: Sequence[int], offline: Sequence[int],
                     started_at: str, deadline: str | None = None) -> Round:
        """Record who started; the round's start time and deadline are the first ones recorded (a retry keeps
        them)."""

        def write(conn: Connection) -> Round:
            row = conn.execute(select(tournament_rounds).where(tournament_rounds.c.tournament_id == tid,
                                                               tournament_rounds.c.number == number)
                               .with_for_update()).mappings().first()
            if row is None:
                raise TournamentError(f"round {number} is not seated")
            before = set(json.loads(row["started_tables"] or "[]"))
            ok = sorted(before | set(started))
            conn.execute(update(tournament_rounds).where(tournament_rounds.c.tournament_id == tid,
                                                         tournament_rounds.c.number == number).values(
                status=RoundStatus.STARTED.value, started_at=row["started_at"] or started_at,
                deadline=row["deadline"] or deadline,
                started_tables=json.dumps(ok), offline_tables=json.dumps(sorted(set(offline) - set(ok)))))
            return next(r for r in self._rounds(conn, tid) if r.number == number)

        return self._write(write)

    def finish_round(self, tid: int, number: int) -> Round:
        def write(conn: Connection) -> Round:
            r = next((x for x in self._rounds(conn, tid) if x.number == number), None)
            if r is None:
                raise TournamentError(f"round {number} is not seated")
            if r.status is not RoundStatus.STARTED:
                raise TournamentError(f"round {number} is {r.status.value}, not in play: only a started round "
                                      "is finished")
            conn.execute(update(tournament_rounds).where(tournament_rounds.c.tournament_id == tid,
                                                         tournament_rounds.c.number == number)
                         .values(status=RoundStatus.FINISHED.value))
            return replace(r, status=RoundStatus.FINISHED)

        return self._write(write)

    # ------------------------------------------------------------ penalties

    def penalties(self, tid: int) -> list[Penalty]:
        def read(conn: Connection) -> list[Penalty]:
            rows = conn.execute(select(tournament_penalties).where(tournament_penalties.c.tournament_id == tid)
                                .order_by(tournament_penalties.c.id)).mappings().all()
            return [Penalty(r["id"], r["round"], r["player"], r["points"], r["reason"], r["hand"],
                            PenaltyKind(r["kind"]), r["at"]) for r in rows]

        return self._read(read)

    def add_penalty(self, tid: int, who: str | int, *, points: int, reason: str, kind: PenaltyKind,
                    round_number: int | None = None, table: int | None = None, hand: str | None = None) -> Penalty:
        """A penalty (points off the total) or a warning, in a round in play (the last started one unless
        given), for a player seated in it, at ``table`` when the referee names one."""
        reason = reason.strip()
        if not reason:
            raise TournamentError("a penalty needs a reason")
        if kind is PenaltyKind.PENALTY and points <= 0:
            raise TournamentError("a penalty takes points off: give a positive number of points")
        if kind is PenaltyKind.WARNING:
            points = 0
        if points > 1_000_000:
            raise TournamentError("a penalty of more than 1000000 points")

        def write(conn: Connection) -> Penalty:
            player = _find_player(self._players(conn, tid), who)
            rounds = self._rounds(conn, tid)
            if round_number is None:
                playing = [r for r in rounds if r.status is RoundStatus.STARTED]
                if not playing:
                    raise TournamentError("no round is in play: name the round (a finished round takes no penalty)")
                r = playing[-1]
            else:
                r = next((x for x in rounds if x.number == round_number), None)
                if r is None:
                    raise TournamentError(f"round {round_number} is not seated")
            if r.status is not RoundStatus.STARTED:
                raise TournamentError(f"round {r.number} is {r.status.value}: a penalty is given in a round in play")
            at = r.seating.table_of(player.number)
            if at is None:
                raise TournamentError(f"{player.name} is not at a table of round {r.number}")
            if table is not None and at != table:
                raise TournamentError(f"{player.name} is not at table {table} in round {r.number}: they play at "
                                      f"table {at}")
            now = _now()
            pk = conn.execute(insert(tournament_penalties).values(
                tournament_id=tid, round=r.number, player=player.number, points=points, reason=reason[:500],
                hand=_clean(hand), kind=kind.value, at=now)).inserted_primary_key[0]
            return Penalty(int(pk), r.number, player.number, points, reason[:500], _clean(hand), kind, now)

        return self._write(write)

    # ------------------------------------------------------------ the games of the hall

    def hall_games(self, tid: int, *, hall: list[HallTable] | None = None,
                   rounds: list[Round] | None = None) -> list[GameRow]:
        """Every game the collector wrote for the hall's tables (the standings pick the tournament's). ``hall``
        and ``rounds``: the tournament's, where the caller has them already."""
        hall = self.tables(tid) if hall is None else hall
        starts = [r.started_at for r in (self.rounds(tid) if rounds is None else rounds) if r.started_at]
        if not hall or not starts:
            return []
        # only games begun since the first round (a club's years of games at these tables stay unread)
        since = (datetime.fromisoformat(min(starts)) - timedelta(minutes=10)).astimezone(UTC).isoformat(
            timespec="seconds")

        def read(conn: Connection) -> list[GameRow]:
            keys = {(t.site, t.table_id) for t in hall}
            rows = [r for r in conn.execute(select(games).where(games.c.table_id.in_({k[1] for k in keys}),
                                                                games.c.started >= since))
                    .mappings().all() if (r["site"], r["table_id"]) in keys]
            ids = [r["id"] for r in rows]
            seats: dict[int, list[SeatRow]] = {i: [] for i in ids}
            if ids:
                for s in conn.execute(select(game_players).where(game_players.c.game_id.in_(ids))
                                      .order_by(game_players.c.game_id, game_players.c.seat)).mappings():
                    seats[s["game_id"]].append(SeatRow(s["seat"], s["name"], s["points"], s["place"], s["uma"],
                                                       s["oka"], s["penalty"], s["result"]))
            return [GameRow(r["site"], r["table_id"], r["game"], r["started"], r["rules"], bool(r["finished"]),
                            r["leftover_sticks"], tuple(seats[r["id"]])) for r in rows]

        return self._read(read)


def _tournament(row: Any) -> tuple[int, Tournament]:
    return int(row["id"]), Tournament(
        name=row["name"], rules=row["rules"], rounds=row["rounds"], tie_break=TieBreak(row["tie_break"]),
        separate_clubs=bool(row["separate_clubs"]), top_table=bool(row["top_table"]),
        time_rule=row["time_rule"], minutes=row["minutes"])


def _check_minutes(minutes: int | None) -> None:
    if minutes is not None and not 1 <= minutes <= 600:
        raise TournamentError(f"a round of {minutes} minutes: give 1 to 600")


def _find_player(players: Sequence[Player], who: str | int) -> Player:
    text = str(who).strip()
    if text.isdigit():
        for p in players:
            if p.number == int(text):
                return p
    for p in players:
        if p.ema_id and p.ema_id == text:
            return p
    for p in players:
        if p.name.casefold() == text.casefold():
            return p
    raise TournamentError(f"no player {text!r} in the tournament (give a number, a name or an EMA id)")


def _reason(exc: SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).strip().splitlines()[0]
