"""The service end to end against a real Mosquitto: complete, ordered, durable, and always answered."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hardware_sims.generator import generate_game
from hardware_sims.pytest_plugin import eventually
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.engine.events import to_dict
from tablesvc.service import TableService
from tablesvc.storage.journal import Journal
from tests.feed_schemas import validate

BASE = "tablesvc/club/t1"


def config_text(url: str, data_dir) -> str:
    return f'[table]\nsite = "club"\nid = "t1"\ndata_dir = "{data_dir}"\n[mqtt]\nurl = "{url}"\n'


def run_logged(url: str, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """``tablesvc run`` of table club/t1 (data in ``tmp_path/data``) on the broker ``url``; the process and the
    file its log goes to, for a test that reads what it says."""
    config = tmp_path / "table.toml"
    config.write_text(config_text(url, tmp_path / "data"))
    log = tmp_path / "run.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "tablesvc", "run", "--config", str(config)],
                                stdout=subprocess.DEVNULL, stderr=err)
    return proc, log


class _Messages(list):
    """The messages a :class:`Subscriber` received, counting the times a test cleared them."""

    clears = 0

    def clear(self) -> None:
        super().clear()
        self.clears += 1


class Subscriber:
    """A consumer: every message by topic, in arrival order.

    Every payload the service publishes is checked against its topic's JSON Schema (docs/schemas/) as it
    arrives; reading messages (``of``) or closing fails the test on the first that does not match.
    Commands (written by the test itself, sometimes wrong on purpose) are checked too and kept apart
    in ``bad_commands``; closing fails if there is one the test did not expect and clear."""

    def __init__(self, port: int, client_id: str = "", *, persistent: bool = False) -> None:
        self.messages = _Messages()  # (topic, JSON payload or None, retained)
        # the JSON payloads of each topic, of messages[:_indexed]: tests poll of() while they wait, and a game
        # brings thousands of messages (a test may clear ``messages``: the index is then made again)
        self._by_topic: dict[str, list[dict]] = {}
        self._indexed = self._clears = 0
        self.invalid: list[str] = []  # service payloads that do not match their schema
        self.bad_commands: list[str] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()  # and subscribed: the broker has acknowledged the subscription
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id=client_id,
                                  protocol=mqtt.MQTTv5)
        self.client.on_message = self._message
        self.client.on_connect = lambda c, u, f, r, p: c.subscribe(f"{BASE}/#", qos=1)
        self.client.on_subscribe = lambda *_: self.connected.set()
        self.client.reconnect_delay_set(0.2, 1)
        props = None
        if persistent:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
        self.client.connect("127.0.0.1", port, clean_start=not persistent, properties=props)
        self.client.loop_start()
        assert self.connected.wait(10), "no SUBACK from the broker"

    def _message(self, _c, _u, msg) -> None:
        try:
            payload = json.loads(msg.payload) if msg.payload else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            payload = None
        problems = check_payload(msg.topic, msg.payload, payload)
        with self.lock:
            self.messages.append((msg.topic, payload, msg.retain))
            if problems:  # one line per message that does not match
                (self.bad_commands if msg.topic == f"{BASE}/cmd" else self.invalid).append("; ".join(problems))

    def of(self, kind: str) -> list[dict]:
        with self.lock:
            assert not self.invalid, self.invalid
            if self.messages.clears != self._clears:
                self._by_topic, self._indexed, self._clears = {}, 0, self.messages.clears
            for topic, payload, _ in self.messages[self._indexed:]:
                if payload is not None:
                    self._by_topic.setdefault(topic, []).append(payload)
            self._indexed = len(self.messages)
            return list(self._by_topic.get(f"{BASE}/{kind}", ()))

    def wait_for(self, predicate, timeout: float = 20.0, what: str = "") -> bool:
        """``eventually``: true once ``predicate()`` holds; fails the test if it does not within ``timeout``."""
        return bool(eventually(predicate, timeout, what=what))

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
        assert not self.invalid, self.invalid
        assert not self.bad_commands, self.bad_commands


def check_payload(topic: str, raw: bytes, payload) -> list[str]:
    """A message of the table's tree against its topic's schema: what is wrong with it (nothing outside the
    tree, nothing for an empty message, which clears a retained topic)."""
    if not topic.startswith(f"{BASE}/") or not raw:
        return []
    kind = topic[len(BASE) + 1:]
    if payload is None:
        return [f"{kind}: not JSON: {raw[:80]!r}"]
    return validate(kind, payload)


def send_command(sub: Subscriber, command: dict, *, response: str | None = None, correlation: bytes | None = None):
    props = None
    if response is not None:
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = response
        if correlation is not None:
            props.CorrelationData = correlation
    sub.client.publish(f"{BASE}/cmd", json.dumps(command), qos=1, properties=props)


@pytest.fixture
def service(mosquitto, tmp_path):
    svc = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    svc.start()
    assert svc.link.wait_ready(15)
    yield svc
    svc.stop()


def play(svc: TableService, sub: Subscriber, record, *, stop_after: int | None = None) -> TableSimulator:
    def start(event):
        send_command(sub, {"command": "start_game", "players": list(event.players), "transaction": "go"})
        assert sub.wait_for(lambda: any(r["transaction"] == "go" for r in sub.of("cmd/reply")))

    events = record.events if stop_after is None else record.events[:stop_after]
    sim = TableSimulator(type(record)(source=record.source, events=events), DirectOutputs(svc.observe),
                         start_game=start)
    sim.run()
    assert svc.wait_idle(30)
    return sim


def test_a_whole_game_arrives_complete_and_in_order(service, mosquitto):
    sub = Subscriber(mosquitto.port)
    record = generate_game(13)  # a short whole game: 9 hands to South 4, 823 events
    play(service, sub, record)
    last = service.journal.last_seq
    assert sub.wait_for(lambda: len(sub.of("events")) >= last)
    # per journal entry the service publishes the event, then results and mjai, then the state: wait for
    # the last entry's state before reading what came with it
    assert sub.wait_for(lambda: sub.of("state") and sub.of("state")[-1]["seq"] == last)
    seqs = [e["seq"] for e in sub.of("events")]
    assert seqs == list(range(1, last + 1))  # gap-free, in order, none twice
    assert sub.of("events")[0]["event"]["type"] == "start_game"
    assert all(e["source"] and e["ts"] > "2020" for e in sub.of("events"))  # ISO 8601 UTC times (schema-checked)
    hands = [r for r in sub.of("results") if r["type"] == "hand_result"]
    assert [r["deltas"] for r in hands] == [list(h.deltas) for h in record.hands]
    final = [r for r in sub.of("results") if r["type"] == "game_result"]
    assert len(final) == 1 and [x["points"] for x in sorted(final[0]["ranking"], key=lambda x: x["seat"])] == list(
        record.final_scores)
    assert sum(x["result"] for x in final[0]["ranking"]) == 0
    state = sub.of("state")[-1]
    assert state["phase"] == "game_over" and state["seq"] == last
    # names beside seats; each result keeps the seq of the entry that ended its hand, in the state too
    names = list(record.players)
    assert all(r["players"] == names and all(w["name"] == names[w["seat"]] for w in r["wins"]) for r in hands)
    kinds = {e["seq"]: e["kind"] for e in sub.of("events")}
    assert {kinds[r["seq"]] for r in hands} <= {"ron", "tsumo", "exhaustive_draw", "abortive_draw", "chombo"}
    assert state["last_result"]["seq"] == hands[-1]["seq"] and state["final"]["seq"] == final[0]["seq"]
    assert [x["name"] for x in final[0]["ranking"]] == [names[x["seat"]] for x in final[0]["ranking"]]
    # the all-last conditions appear in the last hand (South 4) only
    states = sub.of("state")
    assert any(s["conditions"] for s in states)
    assert all(s["conditions"] is None for s in states if s["round"] < "S4" and s["round"][0] in "ES")
    mjai = sub.of("mjai")
    assert mjai[0]["type"] == "start_game" and mjai[-1]["type"] == "end_game"
    assert sum(1 for m in mjai if m["type"] == "start_kyoku") == len(record.hands)
    assert sum(1 for m in mjai if m["type"] == "dahai") == sum(1 for e in record.events if e.type == "discard")
    assert sub.wait_for(lambda: not service.journal.unpublished(), 10)  # every event acknowledged by the broker
    sub.close()


def test_late_subscriber_is_complete_at_once(service, mosquitto):
    first = Subscriber(mosquitto.port)
    record = generate_game(22)
    play(service, first, record, stop_after=120)  # mid-game
    first.close()
    late = Subscriber(mosquitto.port)
    assert late.wait_for(lambda: late.of("state") and late.of("status"), 5)
    retained = {t for t, _, r in late.messages if r}
    assert {f"{BASE}/state", f"{BASE}/status"} <= retained
    state = late.of("state")[-1]
    assert state["seq"] == service.journal.last_seq
    assert state["phase"] == "playing" and len(state["seats"]) == 4
    assert sum(len(s["discards"]) for s in state["seats"]) > 0
    assert all("hand" not in s for s in state["seats"])  # no concealed tile in the public state
    assert late.of("status")[-1]["status"] == "online"
    late.close()


def test_bad_commands_are_answered_with_reasons_and_change_nothing(service, mosquitto):
    sub = Subscriber(mosquitto.port)
    sub.client.publish(f"{BASE}/cmd", b"{oops", qos=1)
    send_command(sub, {"command": "explode", "transaction": 1})
    send_command(sub, {"command": "chombo", "seat": 9, "transaction": 2})
    send_command(sub, {"command": "end_game", "transaction": 3})
    send_command(sub, {"command": "start_game", "players": ["A", "B", "C", "D"], "transaction": 4},
                 response=f"{BASE}/cmd/reply/referee", correlation=b"corr-4")
    # the start_game's reply (on its response topic) comes after the journal took it
    assert sub.wait_for(lambda: len(sub.of("cmd/reply")) >= 4
                        and any(r["transaction"] == 4 for r in sub.of("cmd/reply/referee")))
    replies = {r["transaction"]: r for r in sub.of("cmd/reply")}
    assert replies[None]["status"] == "error" and "not JSON" in replies[None]["error"]
    assert "is not one of" in replies[1]["error"]
    assert "maximum of 3" in replies[2]["error"]
    # the three commands the schema refuses are those the service refused for their form
    assert len(sub.bad_commands) == 3 and "not JSON" in sub.bad_commands[0]
    sub.bad_commands.clear()
    assert replies[3]["status"] == "error" and "has not started" in replies[3]["error"]
    assert next(r for r in sub.of("cmd/reply/referee") if r["transaction"] == 4)["status"] == "ok"
    assert service.journal.last_seq == 1  # only the start_game went in
    # the MQTT 5 caller gets its reply on its response topic with its correlation data
    got = []
    sub.client.message_callback_add(f"{BASE}/cmd/reply/referee", lambda c, u, m: got.append(m))
    send_command(sub, {"command": "undo", "count": 5, "transaction": 5}, response=f"{BASE}/cmd/reply/referee",
                 correlation=b"corr-5")
    # the start_game reply (transaction 4) may also arrive here: take the undo's by its transaction
    def undo_reply():
        return next((m for m in got if json.loads(m.payload)["transaction"] == 5), None)

    assert sub.wait_for(lambda: undo_reply() is not None)
    reply = undo_reply()
    assert all(validate("cmd/reply", json.loads(m.payload)) == [] for m in got)  # the response topic too
    assert json.loads(reply.payload)["error"].startswith("only 0 event(s) can be undone")
    assert reply.properties.CorrelationData == b"corr-5"
    sub.close()


def test_broker_restart_mid_hand_loses_no_event(service, mosquitto):
    sub = Subscriber(mosquitto.port, "recorder", persistent=True)
    record = generate_game(23)
    split = 200
    play(service, sub, record, stop_after=split)
    sub.client.loop_stop()  # the recorder is away during the outage; its session waits in the broker
    mosquitto.stop()
    assert sub.wait_for(lambda: not service.link.connected.is_set(), 10)
    rest = type(record)(source="rest", events=record.events[split:])
    TableSimulator(rest, DirectOutputs(service.observe)).run()  # the table plays on meanwhile
    assert service.wait_idle(30)
    assert len(service.journal.unpublished()) > 0
    mosquitto.start()
    assert service.link.wait_connected(30)
    sub.client.loop_start()
    sub.client.reconnect()
    last = service.journal.last_seq
    with contextlib.suppress(AssertionError):  # the next line names what is missing
        sub.wait_for(lambda: {e["seq"] for e in sub.of("events")} >= set(range(1, last + 1)), 30)
    missing = sorted(set(range(1, last + 1)) - {e["seq"] for e in sub.of("events")})
    assert missing == [], f"{len(missing)} of {last} events never arrived: {missing[:5]}..{missing[-5:]}"
    assert service.table.state.final is not None
    assert sub.wait_for(lambda: not service.journal.unpublished(), 10)
    # the hands that ended during the outage: every result comes again, as after a correction
    want = [h.deltas for h in record.hands if h.deltas is not None]
    assert sub.wait_for(lambda: any(r["type"] == "results_replaced" for r in sub.of("results")), 10)
    replaced = [r for r in sub.of("results") if r["type"] == "results_replaced"][-1]
    assert [tuple(r["deltas"]) for r in replaced["results"]] == [tuple(d) for d in want]
    assert replaced["final"]["type"] == "game_result"
    sub.close()


_RUN = [sys.executable, "-m", "tablesvc", "--log-level", "INFO", "run", "--config"]


def test_last_will_marks_a_killed_service_offline(mosquitto, tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(config_text(mosquitto.url, tmp_path / "data"))
    sub = Subscriber(mosquitto.port)
    proc = subprocess.Popen([*_RUN, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert sub.wait_for(lambda: sub.of("status")[-1]["status"] == "offline", 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    later = Subscriber(mosquitto.port)
    assert later.wait_for(lambda: later.of("status"), 5) and later.of("status")[-1]["status"] == "offline"
    sub.close()
    later.close()


def test_killed_service_resumes_with_no_event_lost_or_applied_twice(mosquitto, tmp_path):
    """A referee's tool enters the game event by event; the service is SIGKILLed mid-hand and restarted."""
    path = tmp_path / "table.toml"
    data = tmp_path / "data"
    path.write_text(config_text(mosquitto.url, data))
    record = generate_game(13)  # a short whole game: 9 hands, 823 events
    events = [to_dict(e) for e in record.events]
    sub = Subscriber(mosquitto.port)

    def run_until(start: int, stop: int) -> subprocess.Popen:
        proc = subprocess.Popen([*_RUN, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30)
        for i in range(start, stop):
            send_command(sub, {"command": "event", "event": events[i], "transaction": i})
        # about 670 commands after the restart: half a minute and more on a busy machine
        assert sub.wait_for(lambda: any(r["transaction"] == stop - 1 for r in sub.of("cmd/reply")), 120,
                            what=f"the reply to command {stop - 1}")
        return proc

    kill_at = 150
    proc = run_until(0, kill_at)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    with Journal(data / "t1.sqlite3") as journal:
        journalled = journal.last_seq
    assert journalled == kill_at  # every acknowledged command is in the journal
    proc = run_until(journalled, len(events))
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)
    with Journal(data / "t1.sqlite3") as journal:
        bodies = [e.body for e in journal.entries()]
        assert journal.unpublished() == []
    assert bodies == events  # each event exactly once, in order
    replies = [r for r in sub.of("cmd/reply") if isinstance(r["transaction"], int)]
    assert all(r["status"] == "ok" for r in replies)
    final = [r for r in sub.of("results") if r["type"] == "game_result"]
    assert final and [x["points"] for x in sorted(final[-1]["ranking"], key=lambda x: x["seat"])] == list(
        record.final_scores)
    sub.close()


def test_a_second_game_archives_the_first(service, mosquitto, tmp_path):
    sub = Subscriber(mosquitto.port)
    for n, command in enumerate([{"command": "start_game"}, {"command": "end_game"},
                                 {"command": "start_game", "players": ["W", "X", "Y", "Z"]}]):
        send_command(sub, {**command, "transaction": n})
        assert sub.wait_for(lambda n=n: any(r["transaction"] == n for r in sub.of("cmd/reply")))
    replies = {r["transaction"]: r for r in sub.of("cmd/reply")}
    assert [replies[n]["status"] for n in range(3)] == ["ok", "ok", "ok"]
    assert (tmp_path / "data" / "t1-1.sqlite3").exists()
    assert service.table.state.players == ("W", "X", "Y", "Z") and service.journal.last_seq == 1
    assert sub.wait_for(lambda: sub.of("state")[-1]["seats"][0]["name"] == "W")
    sub.close()
