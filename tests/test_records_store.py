"""The records database on SQLite and on a real PostgreSQL: writes are idempotent, corrections replace, the
standings are the hand-worked figures of tests/club_games.py, and the schema migrates once, an old database
to what a fresh one is, and never down."""

from __future__ import annotations

import csv
import io
import itertools
import json

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from sqlalchemy import Column, MetaData, Text, create_engine, inspect, text

from tablesvc.cli import main
from tablesvc.engine.engine import Engine
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.mqtt.payloads import result_payload
from tablesvc.records import schema
from tablesvc.records.export import games_csv
from tablesvc.records.records_db import GameInfo, RecordsError, RecordsStore, database_url
from tablesvc.records.schema import SCHEMA_VERSION, SchemaError, games, records_schema
from tablesvc.records.standings import club_standings
from tests.club_games import ANN_BOB_CAT_DAN, game_one, game_three, game_two, sticks_game


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "records.sqlite3")
    return request.getfixturevalue("postgres_url")


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db(request, tmp_path):
    """Makes as many fresh, empty databases of one backend as a test needs; each call gives one's URL."""
    server = request.getfixturevalue("postgres_server") if request.param == "postgresql" else None
    made = itertools.count()
    return lambda: server.new_database() if server else str(tmp_path / f"records-{next(made)}.sqlite3")


def feed(events, game_id: str):
    """The results a service publishes for these events: (kind, payload) with the game named."""
    engine = Engine()
    out = []
    for seq, event in enumerate(events, start=1):
        for o in engine.apply(event):
            if isinstance(o, HandResult | GameResult):
                p = result_payload(o, seq, engine.state.players)
                p["game"] = {"id": game_id, "players": list(engine.state.players), "rules": engine.state.rules}
                if isinstance(o, HandResult):
                    p["number"] = o.hand_number
                out.append(p)
    return out


def store_all(store: RecordsStore, site: str, table: str, payloads) -> None:
    for p in payloads:
        info = GameInfo(p["game"]["id"], tuple(p["game"]["players"]), p["game"]["rules"])
        if p["type"] == "hand_result":
            store.record_hand(site, table, info, p["number"], p)
        else:
            store.record_final(site, table, info, p)


G1, G2, G3 = "2026-11-20T19:00:00.000+00:00", "2026-11-20T19:05:00.000+00:00", "2026-11-20T20:30:00.000+00:00"


def club_night(store: RecordsStore) -> None:
    store_all(store, "club", "t1", feed(game_one(), G1))
    store_all(store, "club", "t2", feed(game_two(), G2))
    first, rest = game_three()
    store_all(store, "club", "t1", feed(first + rest, G3))


def figures(store: RecordsStore, since: str | None = None) -> dict:
    return {p.name: (p.games, p.places, p.total, p.hands, p.wins, p.deal_ins, p.riichi, p.win_points)
            for p in club_standings(store, since=since).players}


# hand-worked in tests/club_games.py: (games, places 1st-4th, total with uma, hands, wins, deal-ins, riichi, win points)
NIGHT = {
    "Ann": (3, (0, 2, 1, 0), 0 - 2000 - 21000, 4, 0, 0, 0, 0),
    "Bob": (3, (1, 0, 0, 2), -32000 - 34000 + 21000, 4, 0, 2, 0, 0),
    "Cat": (3, (2, 1, 0, 0), 32000 - 2000 + 21000, 4, 2, 0, 0, 4000),
    "Dan": (2, (0, 1, 1, 0), 0 - 21000, 3, 0, 0, 0, 0),
    "Eve": (1, (1, 0, 0, 0), 38000, 1, 1, 0, 1, 8000),
}


def test_a_club_night_gives_the_hand_worked_standings(db_url):
    with RecordsStore(db_url) as store:
        club_night(store)
        assert figures(store) == NIGHT
        table = club_standings(store)
        assert [p.name for p in table.players] == ["Cat", "Eve", "Dan", "Ann", "Bob"]
        cat = next(p for p in table.players if p.name == "Cat")
        assert (cat.average_place, cat.win_rate, cat.deal_in_rate, cat.average_win) == (4 / 3, 0.5, 0.0, 2000)
        bob = next(p for p in table.players if p.name == "Bob")
        assert (bob.average_place, bob.deal_in_rate, bob.riichi_rate) == (3.0, 0.5, 0.0)
        assert [(g.table, g.started) for g in table.games] == [
            ("t1", "2026-11-20T19:00:00+00:00"), ("t2", "2026-11-20T19:05:00+00:00"),
            ("t1", "2026-11-20T20:30:00+00:00")]
        assert set(figures(store, since="2026-11-20T20:00")) == {"Ann", "Bob", "Cat", "Dan"}


# tests/club_games.py sticks_game, worked out there: Ann and Dan each put a stick down in one of three hands
STICKS = {
    "Cat": (1, (1, 0, 0, 0), 32300, 3, 1, 0, 0, 2000),
    "Ann": (1, (0, 1, 0, 0), 1000, 3, 0, 0, 1, 0),
    "Dan": (1, (0, 1, 0, 0), 1000, 3, 0, 0, 1, 0),
    "Bob": (1, (0, 0, 0, 1), -34300, 3, 0, 1, 0, 0),
}


def test_riichi_sticks_down_in_drawn_hands_count_and_move_as_worked_out(db_url, capsys):
    with RecordsStore(db_url) as store:
        store_all(store, "club", "t3", feed(sticks_game(), G3))
        assert figures(store) == STICKS
        table = club_standings(store)
        assert [p.name for p in table.players] == ["Cat", "Ann", "Dan", "Bob"]
        assert {p.name: p.riichi_rate for p in table.players} == {"Cat": 0.0, "Ann": 1 / 3, "Dan": 1 / 3, "Bob": 0.0}
        (game,) = store.games()
        # each hand: (sticks on the table at its start, whose stick went down, deltas, scores after)
        assert [(h["sticks"], h["riichi_deposits"], h["deltas"], h["scores"]) for h in game.hands] == [
            (0, [3], [-1000, -1000, -1000, 3000], [29000, 29000, 29000, 32000]),  # Dan's stick stays down
            (1, [], [0, -2300, 3300, 0], [29000, 26700, 32300, 32000]),  # Cat picks it up with the win
            (0, [0], [3000, -1000, -1000, -1000], [31000, 25700, 31300, 31000]),  # Ann's stays to the end
        ]
        # the stick left at the end went to first place: Cat 31300 + 1000
        assert [(s.name, s.points, s.place, s.result) for s in game.seats] == [
            ("Ann", 31000, 2, 1000), ("Bob", 25700, 4, -34300), ("Cat", 32300, 1, 32300), ("Dan", 31000, 2, 1000)]
        with store.engine.connect() as conn:
            assert conn.execute(games.select().with_only_columns(games.c.leftover_sticks)).scalar_one() == 1
    assert main(["records", "standings", "--db", db_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["Ann", "1", "0", "1", "0", "0", "2.00", "+1000", "0.0%", "0.0%", "33.3%", "0"]


def test_every_result_twice_changes_nothing(db_url):
    with RecordsStore(db_url) as store:
        club_night(store)
        club_night(store)  # every message delivered again
        assert figures(store) == NIGHT
        assert len(store.games()) == 3
        assert [len(g.hands) for g in store.games()] == [1, 1, 2]


def test_a_correction_after_the_end_replaces_the_game(db_url):
    with RecordsStore(db_url) as store:
        club_night(store)
        # the referee amends game one after it ended: Dan, not Cat, won on Bob's discard
        corrected = feed(game_one(winner=3), G1)
        hands = [(p["number"], p) for p in corrected if p["type"] == "hand_result"]
        final = next(p for p in corrected if p["type"] == "game_result")
        info = GameInfo(G1, ANN_BOB_CAT_DAN, "ema2012")
        store.replace_results("club", "t1", info, hands, final)
        got = figures(store)
        assert got["Dan"] == (2, (1, 0, 1, 0), 32000 - 21000, 3, 1, 0, 0, 2000)
        assert got["Cat"] == (3, (1, 2, 0, 0), 0 - 2000 + 21000, 4, 1, 0, 0, 2000)
        assert len(store.games()) == 3
        # the end taken back (undo of end_game): the game is open again, out of the standings
        store.replace_results("club", "t1", info, hands, None)
        assert len(store.games()) == 2 and len(store.games(finished_only=False)) == 3
        assert "Dan" in figures(store) and figures(store)["Dan"][0] == 1


def test_merged_spellings_count_as_one_player(db_url, capsys):
    with RecordsStore(db_url) as store:
        club_night(store)
        assert store.merge("Eve", "Cat") == "Cat"
        merged = figures(store)
        assert "Eve" not in merged
        assert merged["Cat"][:3] == (4, (3, 1, 0, 0), 51000 + 38000)
        with pytest.raises(RecordsError, match="already counted"):
            store.merge("Cat", "Eve")
        assert store.unmerge("Eve")
        assert figures(store) == NIGHT
    # the same through the command line, by any backend's URL
    assert main(["records", "merge", "Eve", "Cat", "--db", db_url]) == 0
    assert main(["records", "standings", "--json", "--db", db_url]) == 0
    out = capsys.readouterr().out
    data = json.loads(out[out.index("{"):])
    assert [p["name"] for p in data["players"]][:1] == ["Cat"]
    assert data["players"][0]["total"] == 89000 and data["players"][0]["places"] == [3, 1, 0, 0]


def test_csv_export_has_one_row_per_player_per_game(db_url, capsys):
    with RecordsStore(db_url) as store:
        club_night(store)
        rows = list(csv.DictReader(io.StringIO(games_csv(store.games()))))
    assert len(rows) == 12
    assert [(r["table"], r["player"], r["place"], r["result"]) for r in rows[4:8]] == [
        ("t2", "Bob", "4", "-34000"), ("t2", "Eve", "1", "38000"), ("t2", "Ann", "2", "-2000"),
        ("t2", "Cat", "2", "-2000")]
    assert main(["records", "export", "--csv", "--db", db_url]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("started,site,table,game,rules,seat,player")


def test_the_schema_is_migrated_once(db_url):
    RecordsStore(db_url).close()
    with RecordsStore(db_url) as store, store.engine.connect() as conn:
        versions = [r[0] for r in conn.execute(records_schema.select())]
    assert versions == list(range(1, SCHEMA_VERSION + 1))


def test_database_urls():
    assert database_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert database_url("x.sqlite3").startswith("sqlite:////")
    with pytest.raises(RecordsError, match="postgresql://"):
        database_url("mysql://h/db")


def test_stores_opened_together_on_an_empty_database_migrate_once(db_url):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: RecordsStore(db_url), range(4)))
    for store in stores:
        store.close()
    with RecordsStore(db_url) as store, store.engine.connect() as conn:
        assert [r[0] for r in conn.execute(records_schema.select())] == list(range(1, SCHEMA_VERSION + 1))


def test_standings_text_names_every_column(db_url, capsys):
    with RecordsStore(db_url) as store:
        club_night(store)
    assert main(["records", "standings", "--db", db_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["player", "games", "1st", "2nd", "3rd", "4th", "avg", "place", "total", "win",
                                "deal-in", "riichi", "avg", "win"]
    # Cat: 3 games, 2 firsts and a second, average 1.33, +51000, won 2 of 4 hands for 2000 each
    assert lines[1].split() == ["Cat", "3", "2", "1", "0", "0", "1.33", "+51000", "50.0%", "0.0%", "0.0%", "2000"]
    assert "  2026-11-20T19:05:00+00:00  club/t2  1. Eve +38000, 2. Ann -2000, 2. Cat -2000, 4. Bob -34000" in lines
    assert main(["records", "standings", "--since", "2030-01-01", "--db", db_url]) == 0
    assert capsys.readouterr().out.strip() == "no finished games yet since 2030-01-01T00:00:00+00:00"
    assert main(["records", "standings", "--since", "2026-11-20T21:00+01:00", "--json", "--db", db_url]) == 0
    data = json.loads(capsys.readouterr().out)  # 20:00 UTC: game three only
    assert [g["started"] for g in data["games"]] == ["2026-11-20T20:30:00+00:00"]
    with pytest.raises(SystemExit) as exit_info:
        main(["records", "standings", "--since", "20/11/2026", "--db", db_url])
    assert exit_info.value.code == 2 and "is no date" in capsys.readouterr().err


# ---------------------------------------------------------------- migrations


def schema_of(url: str) -> dict:
    """The schema as the database server reports it, not as the code describes it: per table its columns
    (name, type, nullable, default), primary key, foreign keys, unique constraints and indexes."""
    engine = create_engine(database_url(url))
    try:
        insp = inspect(engine)
        return {name: {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default")) for c in insp.get_columns(name)],
            "primary key": insp.get_pk_constraint(name)["constrained_columns"],
            "foreign keys": sorted((fk["constrained_columns"], fk["referred_table"], fk["referred_columns"],
                                    sorted((fk.get("options") or {}).items())) for fk in insp.get_foreign_keys(name)),
            "unique": sorted((u["name"], u["column_names"]) for u in insp.get_unique_constraints(name)),
            "indexes": sorted((i["name"], i["column_names"], i["unique"]) for i in insp.get_indexes(name)),
        } for name in sorted(insp.get_table_names())}
    finally:
        engine.dispose()


def versions(url: str) -> list[int]:
    engine = create_engine(database_url(url))
    try:
        with engine.connect() as conn:
            return sorted(r[0] for r in conn.execute(records_schema.select()))
    finally:
        engine.dispose()


def test_the_migrations_build_the_live_tables(new_db):
    """A fresh database, made by the frozen steps, is what the live tables (those the queries use) describe."""
    migrated = new_db()
    RecordsStore(migrated).close()
    described = new_db()
    engine = create_engine(database_url(described))
    schema.metadata.create_all(engine)
    engine.dispose()
    assert set(schema_of(migrated)) == {"aliases", "game_players", "games", "hands", "records_schema", "tournaments",
                                        "tournament_players", "tournament_tables", "tournament_rounds",
                                        "tournament_seats", "tournament_penalties"}
    assert schema_of(migrated) == schema_of(described)


def a_later_tablesvc(monkeypatch) -> tuple[int, MetaData]:
    """This module as a later tablesvc will have it: the live ``games`` with a column more, and a step after
    the last one that adds it (a test-only step: no real change of the schema is due yet)."""
    later = MetaData()
    for table in schema.metadata.sorted_tables:
        table.to_metadata(later)
    later.tables["games"].append_column(Column("venue", Text, nullable=True))
    version = schema.SCHEMA_VERSION + 1

    def add_venue(conn) -> None:
        conn.execute(text("ALTER TABLE games ADD COLUMN venue TEXT"))

    monkeypatch.setattr(schema, "metadata", later)
    for name in ("games", "game_players", "hands", "aliases", "records_schema"):
        monkeypatch.setattr(schema, name, later.tables[name])
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, (version, "games.venue", add_venue)))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", version)
    return version, later


def test_a_v1_database_upgrades_to_what_a_fresh_one_is(new_db, monkeypatch):
    """A database made at version 1 (the first step alone) and kept a club night, then opened by a later
    tablesvc, goes through every later step, keeps its games, and ends with the schema a fresh database gets;
    the fresh one, too, takes step 1 as it shipped (no column of the later live tables) and then the rest."""
    old = new_db()
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        m.setattr(schema, "SCHEMA_VERSION", 1)
        with RecordsStore(old) as store:
            club_night(store)
    assert versions(old) == [1]
    version, later = a_later_tablesvc(monkeypatch)
    with RecordsStore(old) as store:
        assert figures(store) == NIGHT
    fresh = new_db()
    RecordsStore(fresh).close()
    described = new_db()
    engine = create_engine(database_url(described))
    later.create_all(engine)
    engine.dispose()
    assert versions(old) == versions(fresh) == list(range(1, version + 1))
    assert schema_of(old) == schema_of(fresh) == schema_of(described)
    assert schema_of(fresh)["games"]["columns"][-1][0] == "venue"


def test_a_database_of_a_newer_tablesvc_is_refused(db_url, capsys):
    RecordsStore(db_url).close()
    engine = create_engine(database_url(db_url))
    with engine.begin() as conn:
        conn.execute(records_schema.insert().values(version=SCHEMA_VERSION + 1, applied_at="2031-01-01T00:00:00+00:00"))
    engine.dispose()
    with pytest.raises(SchemaError, match=rf"at schema version {SCHEMA_VERSION + 1}, written by a newer tablesvc than "
                                          rf"this one \(schema version {SCHEMA_VERSION}\): upgrade tablesvc"):
        RecordsStore(db_url)
    assert versions(db_url) == [*range(1, SCHEMA_VERSION + 1), SCHEMA_VERSION + 1]  # nothing applied, nothing undone
    # every records command says so in one line, naming the database, instead of a traceback
    assert main(["records", "standings", "--db", db_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tablesvc records: the records database ") and "upgrade tablesvc" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_the_csv_shows_each_players_chombo_and_the_penalty_taken_off_the_result(db_url):
    """A chombo under ema2016 (20,000 off the final result): the row says how many and what it cost."""
    from tablesvc.engine.events import Chombo, DoraRevealed, EndGame, GameStart, HandStart
    from tablesvc.tiles import Tile

    events = [GameStart(players=ANN_BOB_CAT_DAN, rules="ema2016"), HandStart(), DoraRevealed(Tile.of(27)),
              Chombo(2, "wrong ron"), EndGame("time")]
    with RecordsStore(db_url) as store:
        store_all(store, "club", "t1", feed(events, G1))
        rows = list(csv.DictReader(io.StringIO(games_csv(store.games()))))
    by_player = {r["player"]: r for r in rows}
    assert [(by_player[n]["chombo"], by_player[n]["penalty"]) for n in ANN_BOB_CAT_DAN] == [
        ("0", "0"), ("0", "0"), ("1", "20000"), ("0", "0")]
    cat = by_player[ANN_BOB_CAT_DAN[2]]
    # the result is the points less the return points, with uma, less the penalty
    others = [int(by_player[n]["result"]) for n in ANN_BOB_CAT_DAN if n != ANN_BOB_CAT_DAN[2]]
    assert int(cat["result"]) == -sum(others) - 20000
