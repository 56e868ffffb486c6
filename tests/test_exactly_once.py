"""Referee commands run exactly once, against a real Mosquitto: a transaction seen before gets its first reply
again (across a restart too), and a retained command is refused, when sent and at every restart."""

from __future__ import annotations

import json

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.service.commands import Commands
from tablesvc.storage.journal import Journal
from tests.test_service_mqtt import BASE, Subscriber, config_text, send_command


def _service(mosquitto, tmp_path) -> TableService:
    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    service.start()
    assert service.link.wait_ready(15)
    return service


def _replies(sub: Subscriber, transaction) -> list[dict]:
    return [r for r in sub.of("cmd/reply") if r["transaction"] == transaction]


def _ask(sub: Subscriber, command: dict, count: int = 1) -> list[dict]:
    send_command(sub, command)
    assert sub.wait_for(lambda: len(_replies(sub, command["transaction"])) >= count)
    return _replies(sub, command["transaction"])


def _kinds(service: TableService) -> list[str]:
    return [e.kind for e in service.journal.entries()]


def test_a_transaction_sent_twice_runs_once_and_gets_its_first_reply_again(mosquitto, tmp_path):
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    try:
        _ask(sub, {"command": "start_game", "transaction": "go"})
        scores = {"command": "set_scores", "scores": [31000, 29000, 30000, 30000], "transaction": "s-1"}
        first, again = _ask(sub, scores), _ask(sub, scores, 2)
        assert first[0]["status"] == "ok" and again[1] == first[0]  # the very same reply
        assert _kinds(service) == ["start_game", "set_scores"]
        # undo sent twice takes back one event, not two
        undo = {"command": "undo", "transaction": 77}
        replies = _ask(sub, undo, 1) and _ask(sub, undo, 2)
        assert replies[0] == replies[1] and replies[0]["data"] == {"seq": 3}
        assert _kinds(service) == ["start_game", "set_scores", "undo"]
        assert service.table.state.scores[0] == 30000  # the set_scores was undone, the start kept
        # the same transaction with another command: refused, and nothing runs
        other = _ask(sub, {"command": "end_game", "transaction": "s-1"}, 3)[-1]
        assert other["status"] == "error" and "already used for another command" in other["error"]
        # an integer transaction and the same digits as text are two transactions
        assert _ask(sub, {"command": "undo", "transaction": "77"})[0]["status"] == "error"  # only start is left
        assert service.wait_idle(10) and _kinds(service) == ["start_game", "set_scores", "undo"]
    finally:
        sub.close()
        service.stop()
    # a restart does not forget: the journal remembers the transaction
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    try:
        assert _ask(sub, scores)[0] == first[0]
        assert service.wait_idle(10) and _kinds(service) == ["start_game", "set_scores", "undo"]
    finally:
        sub.close()
        service.stop()


def test_a_command_without_a_transaction_runs_each_time_it_arrives(mosquitto, tmp_path):
    """docs/mqtt.md, "Without a transaction, no deduplication": such a command is carried out each time it
    arrives, so a retry runs it again and a second undo takes back a second event; each is answered, the
    reply's transaction null."""
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    try:
        _ask(sub, {"command": "start_game", "transaction": "go"})
        start = list(service.table.state.scores)
        scores = {"command": "set_scores", "scores": [31000, 29000, 30000, 30000]}
        send_command(sub, scores)
        assert sub.wait_for(lambda: len(_replies(sub, None)) == 1)
        send_command(sub, scores)  # the same command again, as a retry after a lost reply would send it
        assert sub.wait_for(lambda: len(_replies(sub, None)) == 2)
        assert [(r["status"], r["command"], r["data"]) for r in _replies(sub, None)] == [
            ("ok", "set_scores", {"seq": 2}), ("ok", "set_scores", {"seq": 3})]
        assert _kinds(service) == ["start_game", "set_scores", "set_scores"]
        for count in (3, 4):  # an undo sent twice takes back two events
            send_command(sub, {"command": "undo"})
            assert sub.wait_for(lambda n=count: len(_replies(sub, None)) == n)
        assert [r["data"] for r in _replies(sub, None)[2:]] == [{"seq": 4}, {"seq": 5}]
        assert service.wait_idle(10) and _kinds(service) == ["start_game", "set_scores", "set_scores", "undo", "undo"]
        assert len(service.table.events) == 1 and list(service.table.state.scores) == start
    finally:
        sub.close()
        service.stop()


def test_a_retained_command_is_refused_when_sent_and_after_a_restart(mosquitto, tmp_path):
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    try:
        _ask(sub, {"command": "start_game", "transaction": "go"})
        retained = {"command": "set_scores", "scores": [40000, 20000, 30000, 30000], "transaction": "r-1"}
        sub.client.publish(f"{BASE}/cmd", json.dumps(retained), qos=1, retain=True)
        assert sub.wait_for(lambda: _replies(sub, "r-1"))
        reply = _replies(sub, "r-1")[0]
        assert reply["status"] == "error" and "retain flag" in reply["error"] and reply["command"] == "set_scores"
        assert service.wait_idle(10) and _kinds(service) == ["start_game"]
    finally:
        sub.close()
        service.stop()
    sub = Subscriber(mosquitto.port)
    service = _service(mosquitto, tmp_path)  # the broker delivers the retained command at the subscription
    try:
        assert sub.wait_for(lambda: _replies(sub, "r-1"), 10)
        assert _replies(sub, "r-1")[0]["status"] == "error"
        assert service.wait_idle(10) and _kinds(service) == ["start_game"]
        assert service.table.state.scores[0] == 30000
        # clearing it (an empty retained message) is not a command and gets no answer
        before = len(sub.of("cmd/reply"))
        sub.client.publish(f"{BASE}/cmd", b"", qos=1, retain=True)
        _ask(sub, {"command": "undo", "count": 1, "transaction": "after"})  # answered after the clearing
        assert len(sub.of("cmd/reply")) == before + 1
    finally:
        sub.close()
        service.stop()


def test_a_retained_command_is_refused_over_mqtt_3(mosquitto, tmp_path):
    """Without MQTT 5's retain-as-published, a retained command is still known at the subscription (a restart)."""
    path = tmp_path / "data"
    config = parse_config(config_text(mosquitto.url, path) + 'protocol = "3.1.1"\n')
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    client.publish(f"{BASE}/cmd", json.dumps({"command": "start_game", "transaction": "old"}), qos=1,
                   retain=True).wait_for_publish(5)
    sub = Subscriber(mosquitto.port)
    service = TableService(config)
    service.start()
    try:
        assert service.link.wait_connected(15) and service.link.protocol == "3.1.1"
        assert sub.wait_for(lambda: _replies(sub, "old"), 10)
        assert _replies(sub, "old")[0]["status"] == "error" and "retain flag" in _replies(sub, "old")[0]["error"]
        assert service.wait_idle(10) and service.journal.last_seq == 0  # never started by the retained command
    finally:
        sub.close()
        service.stop()
        client.publish(f"{BASE}/cmd", b"", qos=1, retain=True).wait_for_publish(5)
        client.loop_stop()
        client.disconnect()


def test_the_journal_answers_a_command_it_journalled_but_never_answered(tmp_path):
    """A crash between the entry and the reply: the entry carries the transaction, the repeat gets its seq."""
    from tablesvc.engine.events import GameStart, to_dict
    from tablesvc.service.commands import _digest

    command = {"command": "start_game", "transaction": "go"}
    with Journal(tmp_path / "t1.sqlite3") as journal:
        journal.append("start_game", to_dict(GameStart()), source="referee", ts=1.0,
                       command=('"go"', _digest(command)))
    calls = []
    with Journal(tmp_path / "t1.sqlite3") as journal:
        assert journal.recall('"go"') == (_digest(command), None, 1)
        commands = Commands(submit=lambda e, s: calls.append(e) or 9, undo=lambda n, s: 9, amend=lambda q, e, s: 9,
                            recall=journal.recall, remember=journal.remember)
        reply = commands.handle(json.dumps(command).encode()).payload
    assert calls == [] and reply["status"] == "ok" and reply["data"] == {"seq": 1} and reply["transaction"] == "go"
