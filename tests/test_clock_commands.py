"""The ``clock`` command and ``start_game``'s clock, carried out against a real table and journal.

The wall clock is given to :class:`Commands` (``now``), so a deadline is
checked to the second without waiting.
"""

from __future__ import annotations

import json

import pytest

from tablesvc.engine.clock import parse_deadline
from tablesvc.engine.events import ClockStart, HandStart, TimeUp
from tablesvc.service.commands import Commands
from tablesvc.storage.journal import Journal
from tablesvc.storage.table import Table

NOW = parse_deadline("2026-11-26T10:00:00.000Z")


@pytest.fixture
def table(tmp_path):
    with Journal(tmp_path / "t1.sqlite3") as journal:
        yield Table(journal)


def _commands(table: Table, now: float = NOW) -> Commands:
    return Commands(submit=lambda e, s: table.submit(e, source=s, ts=now).seq,
                    undo=lambda n, s: table.undo(n, source=s, ts=now).seq,
                    amend=lambda q, e, s: table.amend(q, e, source=s, ts=now).seq, now=lambda: now)


def send(cmds: Commands, payload: dict) -> dict:
    return cmds.handle(json.dumps(payload).encode()).payload


def test_start_game_with_a_clock_journals_the_deadline_from_the_minutes(table):
    c = _commands(table)
    reply = send(c, {"command": "start_game", "players": ["A", "B", "C", "D"],
                     "clock": {"minutes": 75, "rule": "more_hands", "more_hands": 2}, "transaction": "r1-t1"})
    assert reply["status"] == "ok" and reply["data"] == {"seq": 1, "clock_seq": 2}
    entry = table.journal.get(2)
    assert entry.kind == "clock_start"
    assert entry.body == {"type": "clock_start", "minutes": 75, "deadline": "2026-11-26T11:15:00.000Z",
                          "rule": "more_hands", "more_hands": 2}
    assert table.state.clock.deadline == NOW + 75 * 60


def test_a_hall_deadline_is_kept_to_the_second_and_written_in_utc(table):
    c = _commands(table)
    send(c, {"command": "start_game"})
    reply = send(c, {"command": "clock", "action": "start", "deadline": "2026-11-26T12:15:30+01:00"})
    assert reply["status"] == "ok", reply
    event = table.events[-1]
    assert isinstance(event, ClockStart)
    assert event.deadline == "2026-11-26T11:15:30.000Z" and event.minutes == 76  # whole minutes, rounded up


def test_extend_add_hand_and_time_up_are_journalled_with_their_reasons(table):
    c = _commands(table)
    send(c, {"command": "start_game", "clock": {"minutes": 60}})
    assert send(c, {"command": "clock", "action": "extend", "minutes": 4, "reason": "ruling at table 3"})[
        "status"] == "ok"
    assert send(c, {"command": "clock", "action": "add_hand", "reason": "late start", "by": "Ann"})["status"] == "ok"
    assert send(c, {"command": "clock", "action": "time_up", "reason": "the hall's gong"})["status"] == "ok"
    assert table.journal.get(4).source == "cmd:Ann"  # a referee named with `by` is journalled with the entry
    kinds = [(e.kind, e.body.get("reason")) for e in table.journal.entries()][2:]
    assert kinds == [("clock_extend", "ruling at table 3"), ("clock_add_hand", "late start"),
                     ("time_up", "the hall's gong")]
    clock = table.state.clock
    assert clock.deadline == NOW + 64 * 60 and clock.added == 1 and clock.hands_left == 2  # between hands: 1 + 1


@pytest.mark.parametrize(("payload", "message"), [
    ({"command": "clock", "action": "extend"}, "extend needs minutes"),
    ({"command": "clock", "action": "start"}, "minutes (the guaranteed time) or a deadline"),
    ({"command": "clock", "action": "add_hand", "minutes": 5}, "add_hand does not take minutes"),
    ({"command": "clock", "action": "pause"}, "is not one of"),
    ({"command": "clock", "action": "start", "minutes": 0}, "allowed: a whole number from 1 to 1440"),
    ({"command": "clock", "action": "start", "minutes": 75, "rule": "sudden_death"}, "is not one of"),
    ({"command": "clock", "action": "start", "deadline": "2026-11-26T09:59:00Z"}, "has passed"),
    ({"command": "clock", "action": "start", "deadline": "at noon"}, "not a time like"),
    ({"command": "clock", "action": "start", "minutes": 75, "rule": "more_hands"}, "1 to 8 hands"),
])
def test_bad_clock_commands_are_refused_naming_the_field_and_nothing_is_journalled(table, payload, message):
    c = _commands(table)
    send(c, {"command": "start_game"})
    reply = send(c, payload)
    assert reply["status"] == "error" and message in reply["error"], reply
    assert table.journal.last_seq == 1 and table.state.clock is None


def test_start_game_with_a_bad_clock_starts_no_game(table):
    c = _commands(table)
    reply = send(c, {"command": "start_game", "clock": {"minutes": 75, "more_hands": 3}})
    assert reply["status"] == "error" and "only with the rule more_hands" in reply["error"]
    assert table.journal.last_seq == 0


def test_a_clock_command_for_a_finished_game_is_refused_with_the_reason(table):
    c = _commands(table)
    send(c, {"command": "start_game", "clock": {"minutes": 60, "rule": "finish_hand"}})
    assert send(c, {"command": "clock", "action": "time_up"})["status"] == "ok"  # between hands: over at once
    assert table.state.final.ended == "time"
    for action in ({"action": "extend", "minutes": 5}, {"action": "add_hand"}, {"action": "time_up"},
                   {"action": "start", "minutes": 30}):
        reply = send(c, {"command": "clock", **action})
        assert reply["status"] == "error"
        assert reply["error"].startswith("the game is over (ended on time): its clock cannot change"), reply
    assert table.journal.last_seq == 3


def test_time_up_during_a_hand_leaves_it_to_be_finished(table):
    c = _commands(table)
    send(c, {"command": "start_game", "clock": {"minutes": 60, "rule": "finish_hand"}})
    table.submit(HandStart(), source="panel", ts=NOW)
    send(c, {"command": "clock", "action": "time_up"})
    assert isinstance(table.events[-1], TimeUp) and table.state.clock.hands_left == 1
    assert table.state.final is None
