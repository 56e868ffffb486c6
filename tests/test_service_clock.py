"""The tournament clock in the service, over a real Mosquitto: the timer records time-up at the deadline,
a restart resumes the clock from the journal, and the game ends on time as the rule says.

The service's wall clock is given (``wall_clock``) and moved forward by the test, as a clock on the wall
moves: a 75-minute round is over in a moment, and nothing here waits for real minutes.
"""

from __future__ import annotations

import time
import uuid

from drivers.observations import Button, ButtonPressed
from tablesvc.config import parse_config
from tablesvc.engine.events import DoraRevealed, ExhaustiveDraw, to_dict
from tablesvc.mqtt.payloads import iso_time
from tablesvc.service import TableService
from tests.scenario import Table, t
from tests.test_service_mqtt import Subscriber, config_text, send_command


class Wall:
    """The hall's clock: real time, moved forward by the test."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def _service(mosquitto, data_dir, wall: Wall) -> TableService:
    svc = TableService(parse_config(config_text(mosquitto.url, data_dir)), wall_clock=wall)
    svc.start()
    assert svc.link.wait_ready(15)
    return svc


def _command(sub: Subscriber, command: dict) -> dict:
    transaction = str(uuid.uuid4())
    send_command(sub, {**command, "transaction": transaction})
    assert sub.wait_for(lambda: any(r["transaction"] == transaction for r in sub.of("cmd/reply")))
    return next(r for r in sub.of("cmd/reply") if r["transaction"] == transaction)


def _events(sub: Subscriber, events: list[dict]) -> None:
    """The referee enters ``events`` one after another (in order: one connection); each is accepted."""
    transactions = [str(uuid.uuid4()) for _ in events]
    for event, transaction in zip(events, transactions, strict=True):
        send_command(sub, {"command": "event", "event": event, "transaction": transaction})
    assert sub.wait_for(lambda: len({r["transaction"] for r in sub.of("cmd/reply")} & set(transactions)) == len(events))
    replies = {r["transaction"]: r for r in sub.of("cmd/reply")}
    assert all(replies[x]["status"] == "ok" for x in transactions), [replies[x] for x in transactions]


def _time_ups(sub: Subscriber) -> list[dict]:
    return [e for e in sub.of("events") if e["kind"] == "time_up"]


def _a_drawn_hand(round_: str = "E1") -> list[dict]:
    """A hand of ``round_`` played to an exhaustive draw, nobody tenpai: its events as the referee's ``event``
    command sends them (the hand start and the first dora are left out: they come first)."""
    tb = Table(round=round_)
    tb.start_hand()
    start = len(tb.events)
    tb.exhaust()
    tb.send(ExhaustiveDraw((False,) * 4))
    return [to_dict(e) for e in tb.events[start:]]


def test_time_up_is_recorded_at_the_deadline_after_a_restart_and_the_hand_in_play_ends_the_game(mosquitto,
                                                                                                  tmp_path):
    wall = Wall()
    data = tmp_path / "data"
    svc = _service(mosquitto, data, wall)
    sub = Subscriber(mosquitto.port)
    try:
        started = wall()
        reply = _command(sub, {"command": "start_game", "players": ["Ann", "Bo", "Cy", "Di"],
                               "clock": {"minutes": 75, "rule": "finish_hand"}})
        assert reply["status"] == "ok", reply
        assert sub.wait_for(lambda: (sub.of("state")[-1]["clock"] or {}).get("deadline") is not None)
        clock = sub.of("state")[-1]["clock"]
        assert iso_time(started + 4500) <= clock["deadline"] <= iso_time(wall() + 4500)
        assert clock["rule"] == "finish_hand" and clock["time_up"] is False
        assert 4490 < clock["remaining_s"] <= 4500
        _events(sub, [{"type": "hand_start"}, to_dict(DoraRevealed(t("W")))])
        svc.stop()

        wall.offset += 75 * 60 + 1  # the round's time ran out while the table's service was down
        svc = _service(mosquitto, data, wall)
        assert sub.wait_for(lambda: len(_time_ups(sub)) == 1)
        up = _time_ups(sub)[0]
        assert up["source"] == "clock" and up["event"]["reason"] == "the guaranteed time is over"
        assert sub.wait_for(lambda: sub.of("state")[-1]["seq"] == up["seq"])
        state = sub.of("state")[-1]
        assert state["phase"] == "playing" and state["clock"]["time_up"] is True
        assert state["clock"]["hands_left"] == 1 and state["clock"]["remaining_s"] == 0

        _events(sub, _a_drawn_hand())  # the hand in play is finished: under finish_hand the game ends
        assert sub.wait_for(lambda: any(r["type"] == "game_result" for r in sub.of("results")))
        final = next(r for r in sub.of("results") if r["type"] == "game_result")
        assert final["ended"] == "time" and len([r for r in sub.of("results") if r["type"] == "hand_result"]) == 1
        assert sub.wait_for(lambda: sub.of("state")[-1]["phase"] == "game_over")
        assert sub.of("state")[-1]["final"]["ended"] == "time"

        refused = _command(sub, {"command": "clock", "action": "extend", "minutes": 5})
        assert refused["status"] == "error" and "the game is over (ended on time)" in refused["error"]
        assert len(_time_ups(sub)) == 1
        assert [e.kind for e in svc.journal.entries()].count("time_up") == 1  # the timer asked once, not again
    finally:
        svc.stop()
        sub.close()


def test_an_extension_moves_the_deadline_the_timer_watches_and_an_added_hand_is_played(mosquitto, tmp_path):
    wall = Wall()
    svc = _service(mosquitto, tmp_path / "data", wall)
    sub = Subscriber(mosquitto.port)
    try:
        assert _command(sub, {"command": "start_game", "clock": {"minutes": 60}})["status"] == "ok"
        assert _command(sub, {"command": "clock", "action": "extend", "minutes": 5,
                              "reason": "a ruling stopped play"})["status"] == "ok"
        assert _command(sub, {"command": "clock", "action": "add_hand"})["status"] == "ok"
        wall.offset += 60 * 60 + 1  # past the first deadline, not the extended one
        assert svc.clock_timer.check() is False
        assert not _time_ups(sub)
        wall.offset += 5 * 60
        assert sub.wait_for(lambda: len(_time_ups(sub)) == 1)
        assert sub.wait_for(lambda: sub.of("state")[-1]["clock"]["time_up"])
        clock = sub.of("state")[-1]["clock"]
        assert clock["extended"] == 5 and clock["added"] == 1
        assert clock["hands_left"] == 2  # between hands under EMA: one more, and the one added
        # a seat panel's undo takes back a move at the table, never the clock's time-up
        svc.observe(ButtonPressed(device="PNL", seq=1, timestamp=time.monotonic(), seat=0, button=Button.UNDO))
        assert sub.wait_for(lambda: any("cannot undo the clock's time-up" in e["error"] for e in sub.of("errors")))
        assert [e.kind for e in svc.journal.entries()][-1] == "time_up"
        for round_ in ("E1", "E2"):
            _events(sub, [{"type": "hand_start"}, to_dict(DoraRevealed(t("W"))), *_a_drawn_hand(round_)])
        assert sub.wait_for(lambda: any(r["type"] == "game_result" for r in sub.of("results")))
        assert next(r for r in sub.of("results") if r["type"] == "game_result")["ended"] == "time"
    finally:
        svc.stop()
        sub.close()


def test_the_timer_leaves_a_game_without_a_clock_alone(mosquitto, tmp_path):
    wall = Wall()
    svc = _service(mosquitto, tmp_path / "data", wall)
    sub = Subscriber(mosquitto.port)
    try:
        assert _command(sub, {"command": "start_game"})["status"] == "ok"
        wall.offset += 24 * 3600
        assert svc.clock_timer.check() is False
        assert sub.of("state")[-1]["clock"] is None
    finally:
        svc.stop()
        sub.close()
