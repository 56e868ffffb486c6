"""Results the records cannot keep are refused, acknowledged and named, and never hold up the ones behind them.

Each bad result is a real one (the feed of tests/club_games.py) with one field
spoilt as an attacker or a broken service would: a number past the
database's integer range, ``Infinity``, ``NaN``, JSON nested 5,000 deep, a
place of 1.5, deltas as text, a hand number of -5, a game id of a megabyte or
of 65 characters, a name with a lone surrogate. They go through a real
Mosquitto to a collector writing into SQLite and into a real PostgreSQL; the
good results sent after them are stored, each bad one is logged naming its
table and its field, and a collector started again on the same session gets
none of them a second time. Bad rows already in a database (written by a
collector without these checks, or by hand) leave ``records standings``,
``records export`` and ``/api/standings`` working with what can be read.
"""

from __future__ import annotations

import copy
import json
import logging
import urllib.request

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from sqlalchemy import insert, select, update

from tablesvc.cli import main
from tablesvc.records.checks import MAX_PAYLOAD, Refused, check_result, parse
from tablesvc.records.collector import Collector
from tablesvc.records.records_db import GameInfo, RecordsStore, RefusedByDatabase
from tablesvc.records.schema import game_players, games, hands
from tests import web_support
from tests.club_games import game_one, game_two
from tests.feed_schemas import validate
from tests.test_records_collector import Results, figures, wait_for
from tests.test_records_store import G1, G2, NIGHT, club_night, db_url, feed  # noqa: F401 (db_url: a fixture)

broker = web_support.broker

HAND, FINAL = feed(game_two(), G2)  # Eve's riichi tsumo, then the ranking (Eve 1st +38000)


def _set(path: str, value):
    """A change to a payload: ``path`` like ``ranking.0.place``."""
    def change(p: dict) -> None:
        *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
        node = p
        for key in parents:
            node = node[key]
        node[last] = value
    return change


def _deep(depth: int) -> bytes:
    text = json.dumps(HAND)
    return (text[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}").encode()


# (id, the payload as sent, the field or reason the refusal names, whether the feed's schema refuses it too)
BAD: list[tuple[str, bytes, str, bool]] = []


def _bad(name: str, base: dict, change, named: str, schema_refuses: bool = True) -> None:
    p = copy.deepcopy(base)
    change(p)
    BAD.append((name, json.dumps(p).encode(), named, schema_refuses))


_bad("points-2**70", FINAL, _set("ranking.0.points", 2**70), "ranking[0].points is 1180591620717411303424",
     schema_refuses=False)
_bad("deltas-2**70", HAND, _set("deltas.1", -(2**70)), "deltas[1] is -1180591620717411303424", schema_refuses=False)
_bad("infinity", HAND, _set("scores.0", float("inf")), "Infinity is no number JSON allows")
_bad("nan", FINAL, _set("ranking.2.uma", float("nan")), "NaN is no number JSON allows")
_bad("place-1.5", FINAL, _set("ranking.0.place", 1.5), "ranking[0].place must be a whole number, not 1.5")
_bad("place-5", FINAL, _set("ranking.3.place", 5), "ranking[3].place must be 1..4, not 5")
_bad("string-deltas", HAND, _set("deltas", ["8000", "-4000", "-2000", "-2000"]),
     "deltas[0] must be a whole number, not '8000'")
_bad("hand-number--5", HAND, _set("number", -5), "number must be 0..2147483647, not -5")
_bad("game-id-65", HAND, _set("game.id", "x" * 65), "game.id must be at most 64 characters, not 65",
     schema_refuses=False)
_bad("game-id-1MB", HAND, _set("game.id", "x" * MAX_PAYLOAD), "the message is 1,00", schema_refuses=False)
_bad("lone-surrogate", FINAL, _set("ranking.1.name", "\ud800ve"), "ranking[1].name is not valid Unicode",
     schema_refuses=False)
_bad("seat-twice", FINAL, _set("ranking.1.seat", 0), "ranking must rank each of the four seats once",
     schema_refuses=False)
_bad("places-all-1", FINAL, lambda p: [row.update(place=1) for row in p["ranking"]],
     "place is 1, but its points", schema_refuses=False)
_bad("nul-in-name", FINAL, _set("ranking.1.name", "E\x00ve"), "ranking[1].name holds a control character (U+0000)",
     schema_refuses=False)
_bad("nul-in-players", HAND, _set("game.players.2", "A\x00nn"), "game.players[2] holds a control character",
     schema_refuses=False)
BAD.append(("nested-5000", _deep(5000), "nested deeper than 12 levels", False))
BAD.append(("nested-13", _deep(12), "nested deeper than 12 levels", False))


@pytest.mark.parametrize(("payload", "named", "schema_refuses"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_each_bad_result_is_refused_naming_the_field(payload, named, schema_refuses):
    with pytest.raises(Refused, match=None) as caught:
        check_result(parse(payload))
    assert named in str(caught.value)
    if schema_refuses:  # where the feed's schema says so, it agrees: the check refuses nothing the schema allows
        assert validate("results", json.loads(payload)), "the schema allows what the check refuses"


def test_every_result_a_service_publishes_passes_the_checks():
    for events, game_id in ((game_one(), G1), (game_two(), G2)):
        for p in feed(events, game_id):
            assert validate("results", p) == []
            check_result(parse(json.dumps(p).encode()))
    replaced = {"schema": 1, "seq": 9, "type": "results_replaced", "results": [HAND], "final": FINAL,
                "game": HAND["game"]}
    check_result(parse(json.dumps(replaced).encode()))
    broken = dict(replaced, results=[HAND, dict(HAND, deltas=[1, 2, 3])])
    with pytest.raises(Refused, match=r"results\[1\]\.deltas must hold 4 items"):
        check_result(parse(json.dumps(broken).encode()))


def test_a_value_the_database_cannot_take_is_a_refusal_not_an_outage(db_url):  # noqa: F811
    """Past the checks (a caller of the store that has none): the database's own refusal is told apart from a
    database that is down, which the collector retries."""
    with RecordsStore(db_url) as store:
        info = GameInfo(G2, ("Bob", "Eve", "Ann", "Cat"), "ema2012")
        final = copy.deepcopy(FINAL)
        final["ranking"][0]["points"] = 2**70
        with pytest.raises(RefusedByDatabase):
            store.record_final("club", "t2", info, final)
        with pytest.raises(RefusedByDatabase):
            store.record_hand("club", "t2", GameInfo(G2, ("\ud800", "Eve", "Ann", "Cat"), "ema2012"), 0, HAND)
        assert store.games(finished_only=False) == []  # nothing half-written


LONG_TABLE = "t" * 150  # a topic level longer than the table column (VARCHAR(100)): PostgreSQL refuses it


def test_bad_results_through_a_real_broker_are_refused_acknowledged_and_never_hold_up_the_next(
        mosquitto, db_url, caplog):  # noqa: F811
    store = RecordsStore(db_url)
    postgres = store.engine.dialect.name == "postgresql"
    sender = Results(mosquitto.port)
    caplog.set_level(logging.INFO, logger="tablesvc.records")

    def collector() -> Collector:
        c = Collector(store, mosquitto.url, client_id="records-refusals")
        c.start()
        assert c.link.subscribed.wait(15)
        return c

    def send(table: str, payload: bytes) -> None:
        sender.client.publish(f"tablesvc/club/{table}/results", payload, qos=1).wait_for_publish(5)

    first = collector()
    second = None
    try:
        for name, payload, _named, _ in BAD:
            send(f"bad-{name}", payload)
        send(LONG_TABLE, json.dumps(HAND).encode())
        for p in feed(game_two(), G2):
            send("t2", json.dumps(p).encode())
        refused = len(BAD) + postgres
        stored = 2 + (not postgres)  # t2's hand and final, and on SQLite the long table's hand (PostgreSQL refuses it)
        assert wait_for(lambda: first.rejected == refused and first.written >= stored, 60), (first.rejected,
                                                                                            first.written)
        for name, _payload, named, _ in BAD:
            line = next((r.getMessage() for r in caplog.records if f"from club/bad-{name} is refused" in
                         r.getMessage()), "")
            assert named in line and "acknowledged, not stored" in line, (name, line[:300])
        if postgres:
            assert any(f"from club/{LONG_TABLE} is refused" in r.getMessage() and "value too long" in r.getMessage()
                       for r in caplog.records)
        assert figures(store)["Eve"] == NIGHT["Eve"]
        assert [(g.table, len(g.hands), g.finished) for g in store.games(finished_only=False)] == (
            [("t2", 1, True)] if postgres else [("t2", 1, True), (LONG_TABLE, 1, False)])
        first.stop()
        # the same session again: every refused message was acknowledged, so none comes back
        caplog.clear()
        second = collector()
        for p in feed(game_one(), G1):
            send("t1", json.dumps(p).encode())
        # a redelivery would have come first, at the connection, before these two
        assert wait_for(lambda: second.written == 2, 30)
        assert second.rejected == 0 and not [r for r in caplog.records if "is refused" in r.getMessage()]
        assert {g.table for g in store.games()} == {"t1", "t2"}
        assert main(["records", "standings", "--db", db_url]) == 0
    finally:
        if second is not None:
            second.stop()
        first.stop()
        sender.close()
        store.close()


def _spoil(store: RecordsStore) -> None:
    """Rows no collector with checks writes, straight into the tables: figures that are no numbers, a seat that
    is none, hands that are not the feed's JSON or name seats that are not there, a hand numbered -5."""
    sqlite = store.engine.dialect.name == "sqlite"
    with store.engine.begin() as conn:
        ids = [r[0] for r in conn.execute(select(games.c.id).order_by(games.c.started))]
        g1, g2, g3 = ids
        hand = json.loads(conn.execute(select(hands.c.payload).where(hands.c.game_id == g2)).scalar())
        spoilt = dict(hand, deltas=["8000", "x", None, 1.5], wins=[{"seat": "Eve", "points": "lots"}, 7, {"seat": 9}],
                      riichi_deposits=["1", 5])
        for number, payload in ((-5, json.dumps(spoilt)), (7, "{not json"), (8, "[1, 2]"), (9, json.dumps(HAND))):
            conn.execute(insert(hands).values(game_id=g2, number=number, hand="E1-0", kind="win", payload=payload))
        if sqlite:  # SQLite keeps what it is given, in any column
            conn.execute(update(game_players).where(game_players.c.game_id == g1, game_players.c.seat == 0)
                         .values(place=1.5, result="a lot"))
            conn.execute(update(game_players).where(game_players.c.game_id == g1, game_players.c.seat == 1)
                         .values(points="x", uma=2.5))
            conn.execute(update(games).where(games.c.id == g3).values(game="x" * 1_000_000))
        else:
            conn.execute(update(game_players).where(game_players.c.game_id == g1, game_players.c.seat == 0)
                         .values(place=None, result=None))
        conn.execute(insert(game_players).values(game_id=g3, seat=7, name="Zed", place=1, result=99))


def test_bad_rows_already_in_a_database_leave_the_standings_working(db_url, capsys):  # noqa: F811
    with RecordsStore(db_url) as store:
        club_night(store)
        _spoil(store)
        got = figures(store)
    # Eve's game: her hand counted twice more (the copy numbered 9, and the spoilt -5 whose wins name no seat
    # it can read count as a hand played without a win); the hands that are no JSON object are left out
    assert got["Eve"][:3] == NIGHT["Eve"][:3] and got["Eve"][3:] == (3, 2, 0, 2, 16000)
    assert "Zed" not in got  # a seat 7 is none
    assert main(["records", "standings", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert "Eve" in out and "Cat" in out
    assert main(["records", "standings", "--db", db_url, "--json"]) == 0
    assert {p["name"] for p in json.loads(capsys.readouterr().out)["players"]} == set(NIGHT)
    assert main(["records", "export", "--csv", "--db", db_url]) == 0


def test_the_standings_api_reads_a_database_with_bad_rows(broker, tmp_path):
    path = str(tmp_path / "records.sqlite3")
    with RecordsStore(path) as store:
        club_night(store)
        _spoil(store)
    server = web_support.start_web(broker.url, records_db=path)
    try:
        with urllib.request.urlopen(f"{server.url}/api/standings", timeout=10) as response:
            assert response.status == 200
            data = json.loads(response.read())
    finally:
        server.stop()
    assert {p["name"] for p in data["players"]} == set(NIGHT)
    ann = next(p for p in data["players"] if p["name"] == "Ann")
    assert ann["places"] == [0, 1, 1, 0] and ann["games"] == 3  # her place in game one is 1.5: not counted


def test_import_skips_a_game_it_cannot_keep_says_which_and_why_and_exits_1(tmp_path, capsys):
    """A journal kept before names were checked: a player typed with a lone surrogate. The import writes the
    other games, names the file and the field of the one it leaves out, and exits 1 at the end."""
    from dataclasses import replace

    from tablesvc.storage.journal import Journal
    from tablesvc.storage.table import Table

    data = tmp_path / "data"
    for n, events in enumerate((game_one(), game_two())):
        if n == 0:
            events = [replace(events[0], players=("A\ud800nn", *events[0].players[1:])), *events[1:]]
        journal = Journal.for_table(data, "t1")
        table = Table(journal)
        for i, event in enumerate(events):
            table.submit(event, source="referee", ts=1_700_000_000 + 10_000 * n + i)
        journal.archive()
    db = str(tmp_path / "records.sqlite3")
    assert main(["records", "import", "--data-dir", str(data), "--site", "club", "--db", db]) == 1
    out, err = capsys.readouterr()
    assert "t1-1.sqlite3 not imported: players[0] is not valid Unicode text" in err
    assert "1 finished game(s)" in out and "1 refused (above)" in out
    with RecordsStore(db) as store:
        assert [[s.name for s in g.seats] for g in store.games()] == [["Bob", "Eve", "Ann", "Cat"]]


def _results_named_by_the_state(collector: Collector, store: RecordsStore, names: list[str]) -> None:
    """A hand and a final that name no players, handed to ``collector``: the game is kept under ``names``, the
    ones the table's ``state`` gave."""
    from tablesvc.mqtt.link import IncomingMessage

    hand, final = copy.deepcopy(HAND), copy.deepcopy(FINAL)
    for p in (hand, final):
        del p["game"]["players"], p["players"]
    for row in final["ranking"]:
        del row["name"]
    for p in (hand, final):
        collector.handle(IncomingMessage("tablesvc/club/t2/results", json.dumps(p).encode()))
    (game,) = store.games()
    assert [s.name for s in game.seats] == names
    assert collector.rejected == 0 and collector.written == 2


def test_state_messages_that_cannot_be_read_are_passed_over_and_their_names_never_kept(tmp_path):
    """``state`` (QoS 0) gives the names of results that carry none: a broken one leaves the last good names.
    The link is not started: messages are handed to the collector."""
    from tablesvc.mqtt.link import IncomingMessage

    store = RecordsStore(str(tmp_path / "records.sqlite3"))
    collector = Collector(store, "mqtt://127.0.0.1:1", client_id="records-state")
    good = {"seats": [{"seat": i, "name": n} for i, n in enumerate(["Bob", "Eve", "Ann", "Cat"])]}
    broken = [
        json.dumps({"seats": [{"seat": i, "name": n} for i, n in enumerate(["B\ud800b", "E", "A", "C"])]}).encode(),
        json.dumps({"seats": "Bob Eve Ann Cat"}).encode(),
        json.dumps({"seats": [1, 2, 3, 4]}).encode(),
        b"[" * 5000 + b"]" * 5000,
        b'{"seats": [{"name": NaN}]}',
    ]
    for payload in [json.dumps(good).encode(), *broken]:
        collector.handle(IncomingMessage("tablesvc/club/t2/state", payload))
    _results_named_by_the_state(collector, store, ["Bob", "Eve", "Ann", "Cat"])
    store.close()


def test_the_state_of_a_table_on_the_clock_gives_its_names(tmp_path, caplog):
    """A tournament table's ``state`` carries its clock, whose remaining seconds are a fraction: the names are
    still taken, and nothing is logged (a table publishes its state at every change)."""
    from tablesvc.engine.clock import Clock
    from tablesvc.mqtt.link import IncomingMessage
    from tablesvc.mqtt.payloads import clock_payload

    store = RecordsStore(str(tmp_path / "records.sqlite3"))
    collector = Collector(store, "mqtt://127.0.0.1:1", client_id="records-clock")
    clock = clock_payload(Clock(deadline=1_800_000_000.0, minutes=75), 1_799_995_539.905)
    assert isinstance(clock["remaining_s"], float) and not clock["remaining_s"].is_integer()
    state = {"seats": [{"seat": i, "name": n} for i, n in enumerate(["Bob", "Eve", "Ann", "Cat"])], "clock": clock}
    with caplog.at_level(logging.WARNING, logger="tablesvc.records"):
        collector.handle(IncomingMessage("tablesvc/club/t2/state", json.dumps(state).encode()))
    assert not caplog.records
    _results_named_by_the_state(collector, store, ["Bob", "Eve", "Ann", "Cat"])
    store.close()


def test_merge_refuses_a_name_that_is_not_text_naming_it(tmp_path, capsys):
    """A command line in a terminal that is not UTF-8 hands Python lone surrogates (surrogateescape)."""
    db = str(tmp_path / "records.sqlite3")
    assert main(["records", "merge", "Ann\udcff", "Ann", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "the alias 'Ann" in err and "is not a name the records can keep" in err
    assert main(["records", "merge", "Anne", "A" * 201, "--db", db]) == 1
    assert main(["records", "merge", "Anne", "Ann", "--db", db]) == 0
    with RecordsStore(db) as store:
        assert store.aliases() == {"Anne": "Ann"}
