"""The records database: its tables, and the numbered migrations that build them on SQLite or PostgreSQL.

SQLAlchemy Core describes each table once; the same description makes the
SQLite file of a club and the PostgreSQL database of a league, so there is
one schema and one code path. ``records_schema`` holds one row per
migration applied; :func:`migrate` applies the missing ones in order, each
in its own transaction (PostgreSQL's DDL is transactional, so a migration
that fails leaves the previous version intact). A later version of the
schema adds a step to ``MIGRATIONS``; the ones already shipped never change.

The tables below are the live schema, the newest, which the queries use.
A step never builds from them: each carries its own definitions as they
were when it shipped (``_V1``), so a fresh database goes through every step
as an old one does, and both end the same (tests/test_records_store.py
compares them). A step that created the live tables would give a fresh
database tomorrow's columns at version 1, and the step that adds them
would then fail.

Natural keys make the collector's writes idempotent: a game is
``(site, table_id, game)`` (``game`` is the id the feed gives it, the time
its journal began), a hand ``(game, number)``, a seat ``(game, seat)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import SQLAlchemyError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "RecordsError", "SchemaError", "aliases", "game_players", "games",
           "hands", "metadata", "migrate", "records_schema", "tournament_penalties", "tournament_players",
           "tournament_rounds", "tournament_seats", "tournament_tables", "tournaments"]


class RecordsError(RuntimeError):
    """The records database cannot be opened, read or written; the message names it and says why."""


class SchemaError(RecordsError):
    """The database was written by a newer tablesvc; the message says so."""


metadata = MetaData()

records_schema = Table(  # the migrations' own bookkeeping, made before the first step: it never changes
    "records_schema", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", String(40), nullable=False),
)

games = Table(
    "games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("site", String(100), nullable=False),
    Column("table_id", String(100), nullable=False),
    Column("game", String(64), nullable=False),
    Column("started", String(40), nullable=False),  # ISO 8601 UTC
    Column("rules", Text, nullable=False),
    Column("finished", Boolean, nullable=False, default=False),
    Column("leftover_sticks", Integer, nullable=True),
    Column("final_seq", Integer, nullable=True),  # the journal seq of the final ranking as last published
    Column("recorded_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("site", "table_id", "game", name="games_natural_key"),
)

game_players = Table(
    "game_players", metadata,
    Column("game_id", Integer, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    Column("seat", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False),  # as typed at the table; aliases merge spellings when reading
    Column("points", Integer, nullable=True),  # final score; NULL until the game is over
    Column("place", Integer, nullable=True),
    Column("uma", Integer, nullable=True),
    Column("oka", Integer, nullable=True),
    Column("penalty", Integer, nullable=True),
    Column("result", Integer, nullable=True),  # points - return points + oka + uma - penalty
)

hands = Table(
    "hands", metadata,
    Column("game_id", Integer, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),  # from 0, chombo replays included
    Column("hand", String(16), nullable=False),  # E1-0
    Column("kind", String(32), nullable=False),  # win, exhaustive_draw, abortive_draw, chombo
    Column("seq", Integer, nullable=True),
    Column("payload", Text, nullable=False),  # the hand result as the feed published it (JSON)
)

aliases = Table(
    "aliases", metadata,
    Column("alias", String(200), primary_key=True),
    Column("name", String(200), nullable=False),
)

tournaments = Table(
    "tournaments", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("rules", Text, nullable=False),  # the rule set each table's start_game carries
    Column("rounds", Integer, nullable=False),
    Column("tie_break", String(32), nullable=False),
    Column("separate_clubs", Boolean, nullable=False, default=False),
    Column("top_table", Boolean, nullable=False, default=False),
    Column("time_rule", String(64), nullable=True),  # the clock's rule at the end of time, as announced
    Column("minutes", Integer, nullable=True),
    Column("created_at", String(40), nullable=False),
)

tournament_players = Table(
    "tournament_players", metadata,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("ema_id", String(32), nullable=True),
    Column("club", String(200), nullable=True),
    Column("country", String(64), nullable=True),
    Column("status", String(16), nullable=False),  # active, withdrawn, substitute
    Column("replaces", Integer, nullable=True),
    UniqueConstraint("tournament_id", "name", name="tournament_players_name"),
    UniqueConstraint("tournament_id", "ema_id", name="tournament_players_ema_id"),
    Column("first_name", String(200), nullable=True),  # as imported: the EMA report's columns
    Column("last_name", String(200), nullable=True),
)

tournament_tables = Table(
    "tournament_tables", metadata,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("site", String(100), nullable=False),
    Column("table_id", String(100), nullable=False),
    UniqueConstraint("tournament_id", "site", "table_id", name="tournament_tables_table"),
)

tournament_rounds = Table(
    "tournament_rounds", metadata,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("status", String(16), nullable=False),  # seated, started, finished
    Column("method", String(16), nullable=False),
    Column("started_at", String(40), nullable=True),
    Column("started_tables", Text, nullable=False, default="[]"),  # JSON: table numbers that answered ok
    Column("offline_tables", Text, nullable=False, default="[]"),  # JSON: those that did not
    Column("deadline", String(40), nullable=True),  # the round's one end of time (ISO 8601 UTC), for every table
)

tournament_seats = Table(
    "tournament_seats", metadata,
    Column("tournament_id", Integer, primary_key=True),
    Column("round", Integer, primary_key=True, autoincrement=False),
    Column("table_number", Integer, primary_key=True, autoincrement=False),
    Column("seat", Integer, primary_key=True, autoincrement=False),  # 0 East .. 3 North
    Column("player", Integer, nullable=False),
    UniqueConstraint("tournament_id", "round", "player", name="tournament_seats_once"),  # no one seated twice
)

tournament_penalties = Table(
    "tournament_penalties", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("player", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("hand", String(16), nullable=True),
    Column("kind", String(16), nullable=False),  # penalty, warning
    Column("at", String(40), nullable=False),
)


# ---------------------------------------------------------------- migrations: frozen as each step shipped

_V1 = MetaData()
Table(
    "games", _V1,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("site", String(100), nullable=False),
    Column("table_id", String(100), nullable=False),
    Column("game", String(64), nullable=False),
    Column("started", String(40), nullable=False),
    Column("rules", Text, nullable=False),
    Column("finished", Boolean, nullable=False, default=False),
    Column("leftover_sticks", Integer, nullable=True),
    Column("final_seq", Integer, nullable=True),
    Column("recorded_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("site", "table_id", "game", name="games_natural_key"),
)
Table(
    "game_players", _V1,
    Column("game_id", Integer, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    Column("seat", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False),
    Column("points", Integer, nullable=True),
    Column("place", Integer, nullable=True),
    Column("uma", Integer, nullable=True),
    Column("oka", Integer, nullable=True),
    Column("penalty", Integer, nullable=True),
    Column("result", Integer, nullable=True),
)
Table(
    "hands", _V1,
    Column("game_id", Integer, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("hand", String(16), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("seq", Integer, nullable=True),
    Column("payload", Text, nullable=False),
)
Table(
    "aliases", _V1,
    Column("alias", String(200), primary_key=True),
    Column("name", String(200), nullable=False),
)


def _v1(conn: Connection) -> None:
    _V1.create_all(conn)


_V2 = MetaData()  # new tables only: no table of v1 is touched

Table(
    "tournaments", _V2,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("rules", Text, nullable=False),  # the rule set each table's start_game carries
    Column("rounds", Integer, nullable=False),
    Column("tie_break", String(32), nullable=False),
    Column("separate_clubs", Boolean, nullable=False, default=False),
    Column("top_table", Boolean, nullable=False, default=False),
    Column("time_rule", String(64), nullable=True),  # the clock's rule at the end of time, as announced
    Column("minutes", Integer, nullable=True),
    Column("created_at", String(40), nullable=False),
)

Table(
    "tournament_players", _V2,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("ema_id", String(32), nullable=True),
    Column("club", String(200), nullable=True),
    Column("country", String(64), nullable=True),
    Column("status", String(16), nullable=False),  # active, withdrawn, substitute
    Column("replaces", Integer, nullable=True),
    UniqueConstraint("tournament_id", "name", name="tournament_players_name"),
    UniqueConstraint("tournament_id", "ema_id", name="tournament_players_ema_id"),
)

Table(
    "tournament_tables", _V2,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("site", String(100), nullable=False),
    Column("table_id", String(100), nullable=False),
    UniqueConstraint("tournament_id", "site", "table_id", name="tournament_tables_table"),
)

Table(
    "tournament_rounds", _V2,
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("status", String(16), nullable=False),  # seated, started, finished
    Column("method", String(16), nullable=False),
    Column("started_at", String(40), nullable=True),
    Column("started_tables", Text, nullable=False, default="[]"),  # JSON: table numbers that answered ok
    Column("offline_tables", Text, nullable=False, default="[]"),  # JSON: those that did not
)

Table(
    "tournament_seats", _V2,
    Column("tournament_id", Integer, primary_key=True),
    Column("round", Integer, primary_key=True, autoincrement=False),
    Column("table_number", Integer, primary_key=True, autoincrement=False),
    Column("seat", Integer, primary_key=True, autoincrement=False),  # 0 East .. 3 North
    Column("player", Integer, nullable=False),
    UniqueConstraint("tournament_id", "round", "player", name="tournament_seats_once"),  # no one seated twice
)

Table(
    "tournament_penalties", _V2,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", Integer, ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("player", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("hand", String(16), nullable=True),
    Column("kind", String(16), nullable=False),  # penalty, warning
    Column("at", String(40), nullable=False),
)


def _v2(conn: Connection) -> None:
    _V2.create_all(conn)


def _v3(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE tournament_players ADD COLUMN first_name VARCHAR(200)"))
    conn.execute(text("ALTER TABLE tournament_players ADD COLUMN last_name VARCHAR(200)"))
    conn.execute(text("ALTER TABLE tournament_rounds ADD COLUMN deadline VARCHAR(40)"))


MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "games, their players and hands, player aliases", _v1),
    (2, "tournaments: players, the hall's tables, rounds and their seats, penalties", _v2),
    (3, "tournaments: players' first and last names as imported, a round's deadline", _v3),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


_LOCK = 0x7461626C  # PostgreSQL advisory lock key of the migrations ("tabl")


def migrate(engine: Engine) -> int:
    """Bring the database to :data:`SCHEMA_VERSION`; returns the version it was at before. On PostgreSQL an
    advisory lock makes a collector and a ``records`` command started together migrate one after the other."""
    if engine.dialect.name != "postgresql":
        # SQLite has no advisory lock: a process that lost the race to another one's migration finds the
        # tables made or the version taken, and tries again on what the other one finished
        for attempt in range(10):
            try:
                return _migrate(engine)
            except SQLAlchemyError:
                if attempt == 9:
                    raise
                time.sleep(0.1 * (attempt + 1))
    with engine.connect() as lock:
        lock.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _LOCK})
        try:
            return _migrate(engine)
        finally:
            lock.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _LOCK})
            lock.commit()


def _migrate(engine: Engine) -> int:
    with engine.begin() as conn:
        if not inspect(conn).has_table("records_schema"):
            records_schema.create(conn)
        done = {row[0] for row in conn.execute(select(records_schema.c.version))}
    before = max(done, default=0)
    if before > SCHEMA_VERSION:
        raise SchemaError(f"the records database is at schema version {before}, written by a newer tablesvc than this"
                          f" one (schema version {SCHEMA_VERSION}): upgrade tablesvc here"
                          " (pip install -U 'tablesvc[records]') to open it")
    for version, _what, step in MIGRATIONS:
        if version in done:
            continue
        with engine.begin() as conn:
            step(conn)
            conn.execute(records_schema.insert().values(
                version=version, applied_at=datetime.now(UTC).isoformat(timespec="seconds")))
    return before
