"""The table service's holes, against a real Mosquitto (the shipped ACL where it matters): replies go only under
the table's own cmd/reply, text that is no valid Unicode is refused and never stops the feed, a transaction is
remembered across the table's games, and refused commands are counted per sender beyond a burst."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import time

from hardware_sims.pytest_plugin import subscribe
from tablesvc.config import parse_config
from tablesvc.engine.events import DoraRevealed, GameStart, HandStart, to_dict
from tablesvc.service.table_service import COMMAND_BURST, TableService
from tablesvc.storage.journal import KEEP_TRANSACTIONS, Journal
from tablesvc.tiles import parse_tile
from tests.test_deploy_acl import PASSWORD, Account, deployed_broker  # noqa: F401  (a fixture)
from tests.test_service_mqtt import BASE, Subscriber, config_text, send_command

CLI = [sys.executable, "-m", "tablesvc"]


def _service(mosquitto, tmp_path) -> TableService:
    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    service.start()
    assert service.link.wait_ready(15)
    return service


def _replies(sub: Subscriber, transaction, kind: str = "cmd/reply") -> list[dict]:
    return [r for r in sub.of(kind) if r.get("transaction") == transaction]


def _ask(sub: Subscriber, command: dict, count: int = 1) -> dict:
    send_command(sub, command)
    assert sub.wait_for(lambda: len(_replies(sub, command["transaction"])) >= count)
    return _replies(sub, command["transaction"])[-1]


# ---------------------------------------------------------------- replies go under the table's cmd/reply


def test_a_response_topic_outside_cmd_reply_is_refused_and_nothing_is_overwritten(mosquitto, tmp_path):
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    subscribe(sub.client, "elsewhere/#")
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online")
        aimed = {"state": f"{BASE}/state", "status": f"{BASE}/status", "other": "elsewhere/x",
                 "deep": f"{BASE}/cmd/reply/a/b", "wild": f"{BASE}/cmd/reply/+"}
        for name, topic in aimed.items():
            send_command(sub, {"command": "start_game", "transaction": name}, response=topic,
                         correlation=name.encode())
        assert sub.wait_for(lambda: all(_replies(sub, name) for name in aimed))
        for name in aimed:
            (reply,) = _replies(sub, name)  # on plain cmd/reply, once
            assert reply["status"] == "error" and "is not this table's" in reply["error"], reply
            assert "not carried out" in reply["error"]
        assert service.wait_idle(10) and service.journal.last_seq == 0  # none of them started a game
        # the retained state and status were never overwritten by a reply (the Subscriber checks every payload
        # of state and status against its schema as it arrives), nor was anything sent elsewhere
        assert sub.of("status")[-1]["status"] == "online" and all("seq" in s for s in sub.of("state"))
        assert not [t for t, _, _ in sub.messages if t.startswith("elsewhere/")]
        assert sub.wait_for(lambda: len([e for e in sub.of("errors") if "is not this table's" in e["error"]]) == 5)
        # a response topic one level under cmd/reply is answered there, with the correlation data
        send_command(sub, {"command": "start_game", "transaction": "ok"}, response=f"{BASE}/cmd/reply/referee-1",
                     correlation=b"c-1")
        assert sub.wait_for(lambda: _replies(sub, "ok", "cmd/reply/referee-1"))
        reply = _replies(sub, "ok", "cmd/reply/referee-1")[0]
        assert reply["status"] == "ok" and not _replies(sub, "ok")
        assert service.wait_idle(10) and service.journal.last_seq == 1
    finally:
        sub.close()
        service.stop()


def test_a_response_topic_the_acl_forbids_does_not_get_the_service_disconnected(deployed_broker,  # noqa: F811
                                                                                 tmp_path):
    """Under the shipped ACL a reply on another table's topic is refused by the broker, which then closes the
    service's connection (its Last Will flaps the table offline); refused before it is read, it never goes."""
    port = deployed_broker.port
    base = "tablesvc/club-a/table-1"
    config = parse_config(f'[table]\nsite = "club-a"\nid = "table-1"\ndata_dir = "{tmp_path / "data"}"\n'
                          f'[mqtt]\nurl = "mqtt://club-a%2Ftable-1:{PASSWORD}@127.0.0.1:{port}"\n')
    viewer = Account(port, "viewer")
    viewer.subscribe(f"{base}/#")
    referee = Account(port, "referee-a")
    service = TableService(config)
    service.start()
    try:
        assert service.link.wait_ready(15)
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        for n, topic in enumerate(("tablesvc/club-a/table-2/state", "tablesvc/club-b/table-1/cmd/reply/x",
                                   "$SYS/broker/x")):
            props = Properties(PacketTypes.PUBLISH)
            props.ResponseTopic = topic
            referee.client.publish(f"{base}/cmd", json.dumps({"command": "undo", "transaction": n}), qos=1,
                                   properties=props)
        viewer.wait_for(lambda: f"{base}/errors" in viewer.received, what="the refusals' errors")
        assert service.wait_idle(10)
        # a disconnection by the broker for a refused reply would have come before the broker takes a later
        # message of the service on the same connection: a command answered on the referee's own topic
        referee.subscribe(f"{base}/cmd/reply/referee-a")
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = f"{base}/cmd/reply/referee-a"
        referee.client.publish(f"{base}/cmd", json.dumps({"command": "undo", "transaction": "after"}), qos=1,
                               properties=props)
        referee.wait_for(lambda: f"{base}/cmd/reply/referee-a" in referee.received, what="the reply after them")
        assert service.link.connected.is_set() and service.link.connects == 1
    finally:
        service.stop()
        viewer.close()
        referee.close()


# ---------------------------------------------------------------- text that is no valid Unicode


def _raw_command(sub: Subscriber, text: str) -> None:
    sub.client.publish(f"{BASE}/cmd", text.encode(), qos=1)


def test_a_lone_surrogate_in_a_command_is_refused_naming_the_field(mosquitto, tmp_path):
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    try:
        _raw_command(sub, '{"command": "start_game", "players": ["A", "\\ud800", "C", "D"], "transaction": "p"}')
        _raw_command(sub, '{"command": "start_game", "rules": "ema2016\\udfff", "transaction": "r"}')
        assert sub.wait_for(lambda: _replies(sub, "p") and _replies(sub, "r"))
        assert "invalid command at players/1: not valid Unicode text" in _replies(sub, "p")[0]["error"]
        assert "invalid command at rules: not valid Unicode text" in _replies(sub, "r")[0]["error"]
        assert service.wait_idle(10) and service.journal.last_seq == 0
        assert _ask(sub, {"command": "start_game", "transaction": "fine"})["status"] == "ok"  # the service goes on
    finally:
        sub.close()
        service.stop()


def _journal_with_a_bad_name(data_dir) -> None:
    """A journal that holds a player name with a lone surrogate (as one written before such names were refused)."""
    with Journal.for_table(data_dir, "t1", site="club") as journal:
        journal.append("start_game", to_dict(GameStart(players=("Ann", "B\ud800b", "Cy", "Di"))), source="referee",
                       ts=time.time())
        journal.append("hand_start", to_dict(HandStart()), source="TBL1", ts=time.time())


def test_a_journalled_bad_name_never_stops_the_feed_nor_the_games_commands(mosquitto, tmp_path):
    data = tmp_path / "data"
    _journal_with_a_bad_name(data)
    sub = Subscriber(mosquitto.port)
    service = _service(mosquitto, tmp_path)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 15)
        state = sub.of("state")[-1]
        assert state["seq"] == 2 and state["seats"][1]["name"] == "B\ufffdb"
        assert [e["seq"] for e in sub.of("events")] == [1, 2]  # resent at the connection, each of them
        assert _ask(sub, {"command": "end_game", "transaction": "end"})["status"] == "ok"
        assert sub.wait_for(lambda: sub.of("results"))  # the final, with the name replaced
        assert sub.of("results")[-1]["type"] == "game_result"
        assert sub.of("state")[-1]["seats"][1]["name"] == "B\ufffdb"
    finally:
        sub.close()
        service.stop()
    for args in (["list"], ["list", "--json"], ["show", "t1"], ["show", "t1", "--json"],
                 ["export", "t1", "--format", "json"], ["export", "t1", "--format", "csv"]):
        proc = subprocess.run([*CLI, "games", *args, "--data-dir", str(data)], capture_output=True, timeout=60)
        assert proc.returncode == 0, (args, proc.stderr.decode(errors="replace"))
        assert "B\ufffdb".encode() in proc.stdout or b"B\\ufffdb" in proc.stdout, (args, proc.stdout[:300])


# ---------------------------------------------------------------- exactly once across games


def test_a_transaction_of_the_last_game_does_not_run_in_the_next(mosquitto, tmp_path):
    service = _service(mosquitto, tmp_path)
    sub = Subscriber(mosquitto.port)
    end = {"command": "end_game", "transaction": "end-1"}
    try:
        _ask(sub, {"command": "start_game", "transaction": "go-1"})
        first = _ask(sub, end)
        assert first["status"] == "ok" and service.table.state.final is not None
        assert _ask(sub, {"command": "start_game", "transaction": "go-2"})["status"] == "ok"
        again = _ask(sub, end, 2)  # the end of the first game, sent again (a retry after a lost reply)
        assert again == first
        assert service.wait_idle(10) and service.table.state.final is None  # the new game goes on
        assert [e.kind for e in service.journal.entries()] == ["start_game"]
        # the same transaction with another command is still refused
        other = _ask(sub, {"command": "set_scores", "scores": [1, 2, 3, 4], "transaction": "end-1"}, 3)
        assert other["status"] == "error" and "already used for another command" in other["error"]
    finally:
        sub.close()
        service.stop()
    service = _service(mosquitto, tmp_path)  # and across a restart
    sub = Subscriber(mosquitto.port)
    try:
        assert _ask(sub, end) == first
        assert service.wait_idle(10) and service.table.state.final is None
    finally:
        sub.close()
        service.stop()


def test_the_table_keeps_its_latest_transactions(tmp_path):
    with Journal(tmp_path / "a.sqlite3") as old:
        for n in range(12):
            old.remember(json.dumps(n), f"d{n}", {"status": "ok", "n": n})
        kept = old.transactions(limit=5)
    assert [k for k, _, _ in kept] == [json.dumps(n) for n in range(7, 12)]  # the latest, oldest first
    with Journal(tmp_path / "b.sqlite3") as new:
        new.carry_transactions(kept)
        assert new.recall("11") == ("d11", {"status": "ok", "n": 11}, None) and new.recall("6") is None
    assert KEEP_TRANSACTIONS == 100_000


# ---------------------------------------------------------------- refused commands are counted per sender


def test_two_thousand_refused_commands_make_a_bounded_report_that_counts_them_all(mosquitto, tmp_path, caplog):
    from bench.refusals import flood

    with caplog.at_level(logging.WARNING, logger="tablesvc.service"):
        figures = flood(mosquitto.url, mosquitto.port, tmp_path, commands=2000)
    print(figures.line())
    assert figures.replies == 2000  # every command is answered
    # reported in full: the first COMMAND_BURST of the window, then summaries that count the rest
    assert figures.counted == 2000, figures
    assert figures.log_lines <= 3 * COMMAND_BURST and figures.error_messages <= 3 * COMMAND_BURST, figures
    assert figures.journal_rows <= 3 * COMMAND_BURST, figures
    assert figures.summaries >= 1
    logged = [r.getMessage() for r in caplog.records if r.name == "tablesvc.service"]
    assert any("more refusals from referee-flood in the last" in m for m in logged), logged


def test_a_sender_that_makes_up_names_is_counted_with_the_others(tmp_path):
    from tablesvc.service.bursts import OTHERS, BurstLimiter

    now = [0.0]
    limiter = BurstLimiter(burst=2, window=10.0, clock=lambda: now[0], max_sources=3)
    admitted = sum(limiter.admit(f"name-{n}", "no") for n in range(1000))
    assert admitted == 3 + 2  # three names apart (one refusal each), then every other name shares one burst
    now[0] = 11.0
    summaries = {s.source: s.count for s in limiter.due()}
    assert summaries == {OTHERS: 1000 - 3 - 2}


def test_a_summary_of_refusals_is_journalled_as_valid_text(tmp_path):
    path = tmp_path / "t1.sqlite3"
    with Journal(path) as journal:
        journal.note_refusals("ann", 7, "bad \ud800 text", 5.0)
        assert journal.refusal_summaries() == [(5.0, "ann", 7, "bad \ufffd text")]
    probe = sqlite3.connect(path)
    assert probe.execute("SELECT count(*) FROM refusals").fetchone() == (1,)
    probe.close()


def test_the_resync_goes_online_whatever_one_journal_entry_holds(mosquitto, tmp_path, mocker):
    """An entry the feed cannot be written from (a fault injected where an event becomes its payload) is logged
    and skipped; the table still comes online, with every other entry resent in order."""
    import tablesvc.service.publisher as publisher

    data = tmp_path / "data"
    _journal_with_a_bad_name(data)
    with Journal.for_table(data, "t1", site="club") as journal:
        dora = DoraRevealed(tile=parse_tile("3p"))
        journal.append(dora.type, to_dict(dora), source="cam", ts=time.time())
    real = publisher.event_payload

    def payload(entry):
        if entry.seq == 2:
            raise ValueError("an entry the feed cannot carry")
        return real(entry)

    mocker.patch.object(publisher, "event_payload", side_effect=payload)
    sub = Subscriber(mosquitto.port)
    service = _service(mosquitto, tmp_path)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 15)
        assert [e["seq"] for e in sub.of("events")] == [1, 3]
        assert sub.of("state")[-1]["seq"] == 3
    finally:
        sub.close()
        service.stop()
