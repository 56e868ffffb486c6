"""The records collector end to end: two tables' services play a club night (tests/club_games.py) through a
real Mosquitto, two collectors (one into SQLite, one into a real PostgreSQL) are killed mid-game and restarted,
a game is corrected after its end, every result is delivered again; both databases then hold each game once,
and the standings are the hand-worked figures."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from hardware_sims.pytest_plugin import eventually
from tablesvc.cli import main
from tablesvc.config import parse_config
from tablesvc.engine.events import Event, GameStart, Ron, RonClaim, to_dict
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.records.records_db import RecordsStore
from tablesvc.records.standings import club_standings
from tablesvc.service import TableService
from tests.club_games import PINFU_TANYAO, game_one, game_three, game_two
from tests.scenario import ts

ROOT = Path(__file__).resolve().parent.parent

# tests/club_games.py, game one corrected so that Dan (not Cat) won on Bob's discard:
# (games, places 1st-4th, total with uma, hands, wins, deal-ins, riichi sticks, points won)
EXPECTED = {
    "Ann": (3, (0, 2, 1, 0), 0 - 2000 - 21000, 4, 0, 0, 0, 0),
    "Bob": (3, (1, 0, 0, 2), -32000 - 34000 + 21000, 4, 0, 2, 0, 0),
    "Cat": (3, (1, 2, 0, 0), 0 - 2000 + 21000, 4, 1, 0, 0, 2000),
    "Dan": (2, (1, 0, 1, 0), 32000 - 21000, 3, 1, 0, 0, 2000),
    "Eve": (1, (1, 0, 0, 0), 38000, 1, 1, 0, 1, 8000),
}


class CollectorProcess:
    """``tablesvc records`` in a process of its own, which the test can kill."""

    def __init__(self, broker: str, db: str, client_id: str, workdir: Path) -> None:
        self.args = [sys.executable, "-m", "tablesvc", "--log-level", "INFO", "records", "--broker", broker,
                     "--db", db, "--client-id", client_id]
        self.log = workdir / f"{client_id}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        mark = "subscribed to 2 topic filter(s)"  # the broker acknowledged its subscriptions
        connects = self.log.read_text().count(mark)

        def subscribed() -> bool:
            assert self.proc.poll() is None, self.log.read_text()
            return self.log.read_text().count(mark) > connects

        eventually(subscribed, 30, what="the collector subscribed")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: no goodbye, no last acknowledgement
        self.proc.wait(10)

    def terminate(self) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(15)


class Results:
    """Every ``results`` message of the site, kept to be sent again."""

    def __init__(self, port: int) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        ready = threading.Event()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_connect = lambda c, u, f, r, p: c.subscribe("tablesvc/club/+/results", qos=1)
        self.client.on_subscribe = lambda *_: ready.set()  # the broker's SUBACK: what is published now arrives
        self.client.on_message = lambda c, u, m: self._keep(m.topic, m.payload)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert ready.wait(10)

    def _keep(self, topic: str, payload: bytes) -> None:
        with self.lock:
            self.messages.append((topic, payload))

    def replay_all(self) -> int:
        with self.lock:
            messages = list(self.messages)
        for topic, payload in messages:
            self.client.publish(topic, payload, qos=1).wait_for_publish(5)
        return len(messages)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def start_service(broker: str, table: str, data_dir: Path) -> TableService:
    svc = TableService(parse_config(f'[table]\nsite = "club"\nid = "{table}"\ndata_dir = "{data_dir}"\n'
                                    f'[mqtt]\nurl = "{broker}"\n'))
    svc.start()
    assert svc.link.wait_ready(15)
    return svc


def command(svc: TableService, payload: dict) -> None:
    before = svc.journal.last_seq if payload["command"] != "start_game" else -1
    svc.inbox.put(("cmd", IncomingMessage(svc.topics.cmd, json.dumps(payload).encode())))
    assert svc.wait_idle(30)
    assert svc.journal.last_seq != before, f"refused: {payload}"


def play(svc: TableService, events: list[Event]) -> None:
    for event in events:
        if isinstance(event, GameStart):
            command(svc, {"command": "start_game", "players": list(event.players), "rules": event.rules})
        else:
            command(svc, {"command": "event", "event": to_dict(event)})


def figures(store: RecordsStore) -> dict:
    return {p.name: (p.games, p.places, p.total, p.hands, p.wins, p.deal_ins, p.riichi, p.win_points)
            for p in club_standings(store).players}


def wait_for(predicate, timeout: float = 30.0) -> bool:
    """``eventually``: true once ``predicate()`` holds; fails the test if it does not within ``timeout``."""
    return bool(eventually(predicate, timeout, interval=0.05))


def test_a_club_night_is_kept_once_through_kills_restarts_corrections_and_redeliveries(
        mosquitto, tmp_path, request):
    dbs = {"sqlite": str(tmp_path / "records.sqlite3")}
    try:
        dbs["postgresql"] = request.getfixturevalue("postgres_url")
        absent = None
    except pytest.skip.Exception as exc:  # SQLite is checked all the same; the test then says what it left out
        absent = str(exc)
    collectors = {k: CollectorProcess(mosquitto.url, url, f"records-{k}", tmp_path) for k, url in dbs.items()}
    for c in collectors.values():
        c.start()
    stores = {k: RecordsStore(url) for k, url in dbs.items()}
    seen = Results(mosquitto.port)
    t1 = start_service(mosquitto.url, "t1", tmp_path / "data")
    t2 = start_service(mosquitto.url, "t2", tmp_path / "data")
    try:
        play(t1, game_one())
        play(t2, game_two())
        # the referee corrects game one after its end: Dan, not Cat, won on Bob's riichi discard
        ron = next(e for e in t1.journal.entries() if e.kind == "ron")
        command(t1, {"command": "amend", "seq": ron.seq,
                     "event": to_dict(Ron(1, (RonClaim(3, ts(PINFU_TANYAO)),)))})
        first, rest = game_three()
        play(t1, first)  # a new game on t1: game one's journal is archived
        for store in stores.values():  # every collector has game three's first hand ...
            assert wait_for(lambda s=store: any(len(g.hands) == 1 for g in s.games(finished_only=False)
                                                if not g.finished))
        for c in collectors.values():  # ... when it dies mid-game
            c.kill()
        play(t1, rest)  # game three's second hand and its end, while no collector runs
        for c in collectors.values():
            c.start()
        for name, store in stores.items():
            assert wait_for(lambda s=store: figures(s) == EXPECTED), (name, figures(store))
        # every result delivered once more (as a broker redelivers): nothing is added twice
        assert seen.replay_all() >= 7
        seen.client.publish("tablesvc/club/t9/results", b"{oops", qos=1).wait_for_publish(5)  # logged, not stored
        for c in collectors.values():
            assert wait_for(lambda c=c: "a results message from club/t9 is refused (not JSON" in c.log.read_text())
        for name, store in stores.items():
            games = store.games(finished_only=False)
            assert [(g.table, len(g.hands), g.finished) for g in games] == [
                ("t1", 1, True), ("t2", 1, True), ("t1", 2, True)], name
            assert figures(store) == EXPECTED, name
            assert [s.name for s in games[1].seats] == ["Bob", "Eve", "Ann", "Cat"]
            assert games[0].rules == "ema2012" and games[0].game < games[1].game < games[2].game
        # the tables' own journals imported on top (a backfill): the same ids, so nothing new
        for name, url in dbs.items():
            assert main(["records", "import", "--data-dir", str(tmp_path / "data"), "--site", "club",
                         "--db", url]) == 0
            assert len(stores[name].games(finished_only=False)) == 3 and figures(stores[name]) == EXPECTED, name
        for c in collectors.values():
            assert c.terminate() == 0
            log = c.log.read_text()
            assert "stopped (" in log and "1 refused" in log
            assert "a results message from club/t9 is refused (not JSON" in log
    finally:
        seen.close()
        t1.stop()
        t2.stop()
        for store in stores.values():
            store.close()
        for c in collectors.values():
            if c.proc is not None and c.proc.poll() is None:
                c.proc.kill()
    if absent:
        pytest.skip(f"SQLite checked; PostgreSQL not: {absent}")


def test_a_result_the_database_refused_is_retried_and_never_acknowledged_before_it_is_stored(
        mosquitto, tmp_path, mocker, caplog):
    """The database fails (a fault injected at the store's one write boundary): the collector retries; stopped
    while it still fails, it leaves the message unacknowledged, and the next start stores it."""
    from tablesvc.records.collector import Collector
    from tablesvc.records.records_db import RecordsError
    from tests.test_records_store import feed

    store = RecordsStore(str(tmp_path / "records.sqlite3"))
    payloads = feed(game_two(), "2026-11-20T19:05:00.000+00:00")
    publisher = Results(mosquitto.port)  # a plain client; what it hears is not used here
    real_write = RecordsStore._write
    failing = mocker.patch.object(RecordsStore, "_write", autospec=True,
                                  side_effect=RecordsError("cannot write to the records database: disk I/O error"))
    caplog.set_level("ERROR", logger="tablesvc.records.collector")

    def collector() -> Collector:
        c = Collector(store, mosquitto.url, client_id="records-faults")
        c.start()
        assert c.link.subscribed.wait(15)
        return c

    first = collector()
    publisher.client.publish("tablesvc/club/t2/results", json.dumps(payloads[0]), qos=1).wait_for_publish(5)
    assert wait_for(lambda: failing.call_count >= 2, 10)  # retried
    assert "kept unacknowledged at the broker" in caplog.text
    # still failing when asked to stop: the handler gives up on the message and returns while the connection is
    # still up (a stop normally disconnects first; this is the worst order), and must not acknowledge it
    first._stopping.set()
    calls = failing.call_count
    # the handler has returned once the next message is handled (one at a time, in order): one refused, never
    # written, so the count of writes tried tells whether the first was tried again
    publisher.client.publish("tablesvc/club/t9/results", b"not a result", qos=1).wait_for_publish(5)
    assert wait_for(lambda: first.rejected == 1, 15)
    assert failing.call_count == calls  # no more retries: the handler has returned
    first.stop()
    assert store.games(finished_only=False) == []
    failing.side_effect = lambda self, work: real_write(self, work)  # the database is back
    second = collector()
    publisher.client.publish("tablesvc/club/t2/results", json.dumps(payloads[1]), qos=1).wait_for_publish(5)
    try:
        assert wait_for(lambda: [(g.finished, len(g.hands)) for g in store.games(finished_only=False)]
                        == [(True, 1)], 15)
        assert figures(store)["Eve"] == (1, (1, 0, 0, 0), 38000, 1, 1, 0, 1, 8000)
        # the count follows the write, so it is read once it has caught up: both results written, none twice
        assert wait_for(lambda: second.written >= 2, 15)
        assert second.written == 2
    finally:
        second.stop()
        publisher.close()
        store.close()


def test_results_of_an_older_service_without_game_ids_are_kept_once_with_names_from_the_state(tmp_path):
    """A service that names no game and no hand number: the table's open game, hands matched by ``seq``,
    names from the retained ``state``. The link is not started: messages are handed to the collector."""
    from tablesvc.records.collector import Collector
    from tests.test_records_store import feed

    store = RecordsStore(str(tmp_path / "records.sqlite3"))
    collector = Collector(store, "mqtt://127.0.0.1:1", client_id="records-old")
    payloads = feed(game_two(), "unused")
    for p in payloads:
        del p["game"]
        p.pop("number", None)
    state = {"seats": [{"seat": i, "name": n} for i, n in enumerate(["Bob", "Eve", "Ann", "Cat"])]}
    messages = [("tablesvc/club/t2/state", state), *(("tablesvc/club/t2/results", p) for p in payloads)]
    for topic, payload in [*messages, *messages[1:]]:  # every result twice
        collector.handle(IncomingMessage(topic, json.dumps(payload).encode()))
    (game,) = store.games()
    assert game.game.startswith("seen-") and len(game.hands) == 1
    assert [s.name for s in game.seats] == ["Bob", "Eve", "Ann", "Cat"]
    assert figures(store)["Eve"] == (1, (1, 0, 0, 0), 38000, 1, 1, 0, 1, 8000)
    collector.handle(IncomingMessage("tablesvc/club/t2/results", b'{"type": "hand_result"}'))
    assert collector.rejected == 1 and len(store.games()[0].hands) == 1
    store.close()
