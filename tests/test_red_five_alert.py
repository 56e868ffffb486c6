"""A red five at a table playing a rule set without them, over a real Mosquitto: the engine takes the tile, the
game's first red five goes on ``errors`` (one alert a game, not one a tile), the dashboard's feed shows it as an
alert, and the table's alerts leave the dashboard when its next game starts. A rule set with red fives raises
nothing."""

from __future__ import annotations

import json
import uuid

from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.web.feed_store import Store
from tests.test_service_mqtt import BASE, Subscriber, config_text, send_command


def _command(sub: Subscriber, command: dict) -> dict:
    transaction = str(uuid.uuid4())
    send_command(sub, {**command, "transaction": transaction})
    assert sub.wait_for(lambda: any(r["transaction"] == transaction for r in sub.of("cmd/reply"))), command
    reply = next(r for r in sub.of("cmd/reply") if r["transaction"] == transaction)
    assert reply["status"] == "ok", reply
    return reply


def _event(sub: Subscriber, event: dict) -> None:
    _command(sub, {"command": "event", "event": event})


def _red_five_errors(sub: Subscriber) -> list[dict]:
    return [e for e in sub.of("errors") if (e.get("detail") or {}).get("reason") == "red_five"]


def _feed(store: Store, sub: Subscriber, since: int = 0) -> int:
    """The messages the broker delivered from ``since`` on, in order, into a dashboard's feed store; how many
    were delivered in all."""
    with sub.lock:
        messages = list(sub.messages)
    for topic, payload, _ in messages[since:]:
        if payload is not None:
            store.feed(topic, json.dumps(payload).encode())
    return len(messages)


def _game(sub: Subscriber, rules: str) -> None:
    _command(sub, {"command": "start_game", "players": ["Ann", "Bo", "Cy", "Di"], "rules": rules})
    _event(sub, {"type": "hand_start"})
    _event(sub, {"type": "dora", "tile": "W"})


def test_a_red_five_under_ema2016_is_one_alert_a_game_and_the_next_game_clears_the_dashboard(mosquitto, tmp_path):
    svc = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    svc.start()
    assert svc.link.wait_ready(15)
    sub = Subscriber(mosquitto.port)
    try:
        _game(sub, "ema2016")
        _event(sub, {"type": "discard", "seat": 0, "tile": "5mr"})  # taken: the engine refuses nothing here
        _event(sub, {"type": "discard", "seat": 1, "tile": "5pr"})  # the second red five: no second alert
        _event(sub, {"type": "discard", "seat": 2, "tile": "3s"})
        assert sub.wait_for(lambda: len(_red_five_errors(sub)) >= 1)
        errors = _red_five_errors(sub)
        assert len(errors) == 1, errors
        assert errors[0]["detail"]["tile"] == "5mr" and errors[0]["detail"]["rules"] == "ema2016"
        assert "5m" in errors[0]["error"] and "export" in errors[0]["error"]
        events = sub.of("events")
        assert [e["kind"] for e in events][-3:] == ["discard"] * 3  # all three taken

        store = Store(BASE.split("/")[0])
        fed = _feed(store, sub)
        row = store.summary("club", "t1")
        assert [a["kind"] for a in row["alerts"]] == ["refused"], row["alerts"]
        assert "red five (5mr)" in row["alerts"][0]["text"] and "ema2016" in row["alerts"][0]["text"]

        # the next game starts: the last game's alert leaves the dashboard; a red five alerts again, once
        _command(sub, {"command": "end_game", "reason": "time"})
        _game(sub, "ema2016")
        assert sub.wait_for(lambda: any(e["seq"] == 1 for e in sub.of("events")[-3:]))
        _feed(store, sub, fed)
        assert store.summary("club", "t1")["alerts"] == []
        _event(sub, {"type": "discard", "seat": 0, "tile": "5sr"})
        assert sub.wait_for(lambda: len(_red_five_errors(sub)) == 2)
        assert _red_five_errors(sub)[1]["detail"]["tile"] == "5sr"
    finally:
        sub.close()
        svc.stop()


def test_a_red_five_under_a_rule_set_with_red_fives_raises_nothing(mosquitto, tmp_path):
    svc = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    svc.start()
    assert svc.link.wait_ready(15)
    sub = Subscriber(mosquitto.port)
    try:
        _game(sub, "tenhou")
        _event(sub, {"type": "discard", "seat": 0, "tile": "5mr"})
        _command(sub, {"command": "end_game", "reason": "time"})  # the worker has handled the discard before this
        assert sub.of("errors") == []
    finally:
        sub.close()
        svc.stop()


def test_a_restart_does_not_warn_again_of_the_game_it_warned_of(mosquitto, tmp_path):
    """The journal is the truth: the game's red five was warned of before the restart, so the service that
    takes the game up again stays quiet on the next one; the game after it is warned of once, as ever."""
    config = parse_config(config_text(mosquitto.url, tmp_path / "data"))
    svc = TableService(config)
    svc.start()
    assert svc.link.wait_ready(15)
    sub = Subscriber(mosquitto.port)
    try:
        _game(sub, "ema2016")
        _event(sub, {"type": "discard", "seat": 0, "tile": "5mr"})
        assert sub.wait_for(lambda: len(_red_five_errors(sub)) == 1)
        svc.stop()

        svc = TableService(config)  # the same table's journal, the game in play
        svc.start()
        assert svc.link.wait_ready(15)
        _event(sub, {"type": "discard", "seat": 1, "tile": "5pr"})  # the same game: no second alert
        _command(sub, {"command": "end_game", "reason": "time"})
        _game(sub, "ema2016")
        _event(sub, {"type": "discard", "seat": 0, "tile": "5sr"})  # the next game: warned of, once
        assert sub.wait_for(lambda: len(_red_five_errors(sub)) >= 2)
        assert [e["detail"]["tile"] for e in _red_five_errors(sub)] == ["5mr", "5sr"]
    finally:
        sub.close()
        svc.stop()
