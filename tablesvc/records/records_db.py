"""The records database behind one interface: SQLite (a file, the default) or PostgreSQL (a URL).

Every write is an upsert on a natural key inside one transaction, so writing
the same result twice (a message the broker delivered again, a collector
restarted before it acknowledged, a ``results_replaced`` after an outage)
leaves the database as one write would: this is what makes the collector's
"exactly once" hold without remembering which messages it has seen.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, delete, event, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, InterfaceError, InternalError, OperationalError, SQLAlchemyError

from tablesvc.records.schema import RecordsError, SchemaError, aliases, game_players, games, hands, migrate
from tablesvc.text import is_valid_text, safe_text

__all__ = ["GameInfo", "RecordsError", "RecordsStore", "RefusedByDatabase", "StoredGame", "StoredSeat",
           "database_url"]

log = logging.getLogger(__name__)


class RefusedByDatabase(RecordsError):
    """The database refused to store this one result (a value out of its range, text it cannot encode): trying
    again cannot help, unlike a database that is down or busy (:class:`RecordsError`)."""


# failures of the connection or the server, not of what was written: worth trying again
_TRANSIENT = (OperationalError, InterfaceError, InternalError)


def database_url(text: str) -> str:
    """``--db``: a file path (SQLite), ``sqlite:///path``, or ``postgresql://user:pass@host/db``."""
    if "://" not in text:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    scheme, rest = text.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"  # psycopg 3, not SQLAlchemy's default psycopg2
    if scheme in ("sqlite", "postgresql+psycopg"):
        return text
    raise RecordsError(f"records database {text!r}: give a file path (SQLite) or a postgresql:// URL")


@dataclass(frozen=True)
class GameInfo:
    """Which game a result belongs to, as the feed names it."""

    id: str
    players: tuple[str, str, str, str]
    rules: str


@dataclass(frozen=True)
class StoredSeat:
    seat: int
    name: str  # merged through the aliases
    typed: str  # as typed at the table
    points: int | None
    place: int | None
    uma: int | None
    result: int | None
    penalty: int | None = None  # the table's own penalties (chombo, dead hands) taken off the result


@dataclass(frozen=True)
class StoredGame:
    site: str
    table: str
    game: str
    started: str
    rules: str
    finished: bool
    seats: tuple[StoredSeat, ...]
    hands: list[dict[str, Any]] = field(default_factory=list)  # hand results as the feed published them


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_UPSERTS: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], Any] = {}


def _upsert(conn: Connection, table: Any, values: dict[str, Any] | list[dict[str, Any]], keys: list[str],
            update_cols: list[str]) -> None:
    """INSERT ... ON CONFLICT (keys) DO UPDATE: the same statement on SQLite and PostgreSQL. Built once per
    dialect and shape (building ``excluded`` costs more than running the statement) and run with the values
    as parameters, several rows at once where given a list."""
    dialect = conn.dialect.name
    cache_key = (dialect, table.name, tuple(keys), tuple(update_cols))
    stmt = _UPSERTS.get(cache_key)
    if stmt is None:
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        stmt = insert(table)
        if update_cols:
            stmt = stmt.on_conflict_do_update(index_elements=keys, set_={c: stmt.excluded[c] for c in update_cols})
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=keys)
        _UPSERTS[cache_key] = stmt
    conn.execute(stmt, values)


class RecordsStore:
    """One records database; thread-safe (a connection per transaction from SQLAlchemy's pool)."""

    def __init__(self, url: str) -> None:
        self.url = database_url(url)
        try:
            parsed = make_url(self.url)
        except ArgumentError as exc:
            raise RecordsError(f"records database {url!r}: {exc}") from None
        self.name = parsed.render_as_string(hide_password=True)
        if parsed.drivername.startswith("sqlite") and parsed.database:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.engine = create_engine(self.url, pool_pre_ping=True)
            if self.engine.dialect.name == "sqlite":
                event.listen(self.engine, "connect", _sqlite_pragmas)
            migrate(self.engine)
        except SchemaError as exc:
            self.engine.dispose()
            named = str(exc).replace("the records database", f"the records database {self.name}", 1)
            raise SchemaError(named) from None
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot open the records database {self.name}: {_reason(exc)}") from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> RecordsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ writing (the collector)

    def _game(self, conn: Connection, site: str, table: str, info: GameInfo) -> int:
        now = _now()
        _upsert(conn, games, {"site": site, "table_id": table, "game": info.id, "started": _started(info.id),
                              "rules": info.rules, "finished": False, "recorded_at": now, "updated_at": now},
                ["site", "table_id", "game"], ["rules", "updated_at"])
        pk = conn.execute(select(games.c.id).where(games.c.site == site, games.c.table_id == table,
                                                   games.c.game == info.id)).scalar_one()
        _upsert(conn, game_players, [{"game_id": pk, "seat": seat, "name": name} for seat, name in
                                     enumerate(info.players)], ["game_id", "seat"], ["name"])
        return pk

    def _hand(self, conn: Connection, pk: int, number: int, payload: dict[str, Any]) -> None:
        _upsert(conn, hands, {"game_id": pk, "number": number, "hand": str(payload.get("hand", "?")),
                              "kind": str(payload.get("result", "?")), "seq": payload.get("seq"),
                              "payload": json.dumps(payload, ensure_ascii=False, separators=(",", ":"))},
                ["game_id", "number"], ["hand", "kind", "seq", "payload"])

    def _final(self, conn: Connection, pk: int, info: GameInfo, final: dict[str, Any] | None) -> None:
        if final is None:  # the end was taken back (an undo of end_game): the game is open again
            conn.execute(update(games).where(games.c.id == pk).values(finished=False, leftover_sticks=None,
                                                                      final_seq=None))
            conn.execute(update(game_players).where(game_players.c.game_id == pk).values(
                points=None, place=None, uma=None, oka=None, penalty=None, result=None))
            return
        conn.execute(update(games).where(games.c.id == pk).values(
            finished=True, leftover_sticks=final.get("leftover_sticks"), final_seq=final.get("seq"),
            updated_at=_now()))
        for row in final["ranking"]:
            seat = int(row["seat"])
            _upsert(conn, game_players, {
                "game_id": pk, "seat": seat, "name": row.get("name") or info.players[seat],
                "points": row["points"], "place": row["place"], "uma": row["uma"], "oka": row.get("oka", 0),
                "penalty": row.get("penalty", 0), "result": row["result"],
            }, ["game_id", "seat"], ["name", "points", "place", "uma", "oka", "penalty", "result"])

    def record_hand(self, site: str, table: str, info: GameInfo, number: int, payload: dict[str, Any]) -> None:
        """One hand result (``number`` from 0 in its game); again, it changes nothing."""
        self._write(lambda conn: self._hand(conn, self._game(conn, site, table, info), number, payload))

    def record_final(self, site: str, table: str, info: GameInfo, payload: dict[str, Any]) -> None:
        """The final ranking: the game is over."""
        self._write(lambda conn: self._final(conn, self._game(conn, site, table, info), info, payload))

    def replace_results(self, site: str, table: str, info: GameInfo, results: list[tuple[int, dict[str, Any]]],
                        final: dict[str, Any] | None) -> None:
        """A game corrected (or resent after an outage): its hands and final become exactly these."""

        def write(conn: Connection) -> None:
            pk = self._game(conn, site, table, info)
            for number, payload in results:
                self._hand(conn, pk, number, payload)
            conn.execute(delete(hands).where(hands.c.game_id == pk,
                                             hands.c.number.not_in([n for n, _ in results] or [-1])))
            self._final(conn, pk, info, final)

        self._write(write)

    def next_hand_number(self, site: str, table: str, game: str, seq: int | None) -> int:
        """For a result from a service too old to number its hands: the hand with this ``seq``, else the next."""
        return self._read(lambda conn: self._next_hand_number(conn, site, table, game, seq))

    def _read(self, work: Any) -> Any:
        try:
            with self.engine.connect() as conn:
                return work(conn)
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot read the records database {self.name}: {_reason(exc)}") from None

    @staticmethod
    def _next_hand_number(conn: Connection, site: str, table: str, game: str, seq: int | None) -> int:
        pk = conn.execute(select(games.c.id).where(games.c.site == site, games.c.table_id == table,
                                                   games.c.game == game)).scalar()
        if pk is None:
            return 0
        if seq is not None:
            same = conn.execute(select(hands.c.number).where(hands.c.game_id == pk, hands.c.seq == seq)).scalar()
            if same is not None:
                return int(same)
        count = conn.execute(select(hands.c.number).where(hands.c.game_id == pk)).all()
        return len(count)

    def current_game(self, site: str, table: str, kind: str, seq: int | None) -> str | None:
        """For a result from a service that names no game: the game it belongs to, if it is one already kept.

        The table's latest game while it is open; once it is over, only for a result it already holds (the
        same ``seq``: a message delivered again). A new game's journal starts again from seq 1, so any other
        result starts a new game."""
        return self._read(lambda conn: self._current_game(conn, site, table, kind, seq))

    @staticmethod
    def _current_game(conn: Connection, site: str, table: str, kind: str, seq: int | None) -> str | None:
        latest = conn.execute(select(games.c.id, games.c.game, games.c.finished, games.c.final_seq).where(
            games.c.site == site, games.c.table_id == table
        ).order_by(games.c.started.desc(), games.c.game.desc()).limit(1)).first()
        if latest is None:
            return None
        if not latest.finished:
            return str(latest.game)
        if seq is None:
            return None
        if kind == "game_result":
            return str(latest.game) if latest.final_seq == seq else None
        same = conn.execute(select(hands.c.number).where(hands.c.game_id == latest.id, hands.c.seq == seq))
        return str(latest.game) if same.first() is not None else None

    def _write(self, work: Any) -> None:
        try:
            with self.engine.begin() as conn:
                work(conn)
        except _TRANSIENT as exc:
            raise RecordsError(f"cannot write to the records database {self.name}: {_reason(exc)}") from None
        except SQLAlchemyError as exc:  # the statement, not the database: a value it cannot take
            raise RefusedByDatabase(f"the records database {self.name} refused it: {_reason(exc)}") from None
        except (OverflowError, UnicodeError, ValueError, TypeError) as exc:  # the driver could not send it
            raise RefusedByDatabase(f"the records database {self.name} cannot take it: {exc}") from None

    # ------------------------------------------------------------ aliases

    def aliases(self) -> dict[str, str]:
        with self.engine.connect() as conn:
            return {str(a): str(n) for a, n in conn.execute(select(aliases.c.alias, aliases.c.name)).all()}

    def merge(self, alias: str, name: str) -> str:
        """Count every game played as ``alias`` for ``name`` (two spellings of one person); returns the name
        kept (``name``, or the name it is itself merged into)."""
        alias, name = alias.strip(), name.strip()
        if not alias or not name:
            raise RecordsError("merge needs two names")
        for what, text in (("the alias", alias), ("the name", name)):
            if not is_valid_text(text) or len(text) > 200:
                raise RecordsError(f"{what} {safe_text(text)!r:.80} is not a name the records can keep: valid "
                                   "Unicode text of at most 200 characters")
        known = self.aliases()
        target = known.get(name, name)
        if target == alias:
            raise RecordsError(f"{name!r} is already counted as {alias!r}: merge {name!r} into {alias!r} instead")
        if alias == name:
            raise RecordsError("a name cannot be merged into itself")

        def write(conn: Connection) -> None:
            _upsert(conn, aliases, {"alias": alias, "name": target}, ["alias"], ["name"])
            conn.execute(update(aliases).where(aliases.c.name == alias).values(name=target))

        self._write(write)
        return target

    def unmerge(self, alias: str) -> bool:
        """Count ``alias`` as a person of its own again; False when it was no alias."""
        with self.engine.begin() as conn:
            return conn.execute(delete(aliases).where(aliases.c.alias == alias)).rowcount > 0

    # ------------------------------------------------------------ reading

    def games(self, *, since: str | None = None, finished_only: bool = True) -> list[StoredGame]:
        """Games in time order, their names merged through the aliases; ``since`` an ISO date or time (UTC)."""
        merged = self.aliases()
        try:
            with self.engine.connect() as conn:
                q = select(games).order_by(games.c.started, games.c.game, games.c.site, games.c.table_id)
                if since:
                    q = q.where(games.c.started >= since)
                if finished_only:
                    q = q.where(games.c.finished.is_(True))
                rows = conn.execute(q).mappings().all()
                ids = [r["id"] for r in rows]
                seats: dict[int, list[StoredSeat]] = {i: [] for i in ids}
                played: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
                if ids:
                    for s in conn.execute(select(game_players).where(game_players.c.game_id.in_(ids))
                                          .order_by(game_players.c.game_id, game_players.c.seat)).mappings():
                        seat = _stored_seat(s, merged)
                        if seat is not None:
                            seats[s["game_id"]].append(seat)
                    for h in conn.execute(select(hands.c.game_id, hands.c.number, hands.c.payload)
                                          .where(hands.c.game_id.in_(ids)).order_by(hands.c.game_id, hands.c.number)):
                        payload = _stored_hand(h[2])
                        if payload is None:
                            log.warning("records: hand %s of game %s is no hand result as the feed writes it; "
                                        "the standings leave it out", h[1], h[0])
                        else:
                            played[h[0]].append(payload)
        except SQLAlchemyError as exc:
            raise RecordsError(f"cannot read the records database {self.name}: {_reason(exc)}") from None
        return [StoredGame(r["site"], r["table_id"], r["game"], r["started"], r["rules"], bool(r["finished"]),
                           tuple(seats[r["id"]]), played[r["id"]]) for r in rows]


def _whole(value: Any, low: int | None = None, high: int | None = None) -> int | None:
    """A whole number read back, or None: SQLite keeps what it was given (1.5, text) in an integer column."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value


def _stored_seat(row: Any, merged: dict[str, str]) -> StoredSeat | None:
    """A seat of a stored game as the standings can count it; figures that are no whole numbers read as
    missing (logged), a seat that is none of the four is left out."""
    seat = _whole(row["seat"], 0, 3)
    name = row["name"] if isinstance(row["name"], str) else str(row["name"])
    figures = {"points": _whole(row["points"]), "place": _whole(row["place"], 1, 4), "uma": _whole(row["uma"]),
               "result": _whole(row["result"]), "penalty": _whole(row["penalty"])}
    bad = [k for k, v in figures.items() if v is None and row[k] is not None]
    if seat is None or bad:
        log.warning("records: game %s seat %r holds %s that the standings cannot count; read as missing",
                    row["game_id"], row["seat"], ", ".join(f"{k} {row[k]!r:.40}" for k in bad) or "no seat")
    if seat is None:
        return None
    return StoredSeat(seat, merged.get(name, name), name, figures["points"], figures["place"], figures["uma"],
                      figures["result"], figures["penalty"])


def _stored_hand(text: Any) -> dict[str, Any] | None:
    try:
        payload = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def _started(game_id: str) -> str:
    """The feed's game id is its start time; an id that is no time (a collector's own) is kept as is."""
    try:
        return datetime.fromisoformat(game_id).astimezone(UTC).isoformat(timespec="seconds")
    except ValueError:
        return game_id


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.close()


def _reason(exc: SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).strip().splitlines()[0]
