"""Referee commands: validated by schema, authorised by token, always answered, never half-applied."""

import json

import pytest

from tablesvc.commands import COMMAND_SCHEMA, Commands
from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import Chombo, GameStart, SetScores


class Recorder:
    def __init__(self):
        self.engine = Engine()
        self.calls = []

    def submit(self, event, source):
        self.engine.apply(event)
        self.calls.append(("submit", event, source))
        return len(self.calls)

    def undo(self, count, source):
        self.calls.append(("undo", count, source))
        return len(self.calls)

    def amend(self, seq, event, source):
        raise Rejected(f"there is no event {seq} in the game as it stands")


def commands(tokens=()):
    r = Recorder()
    return r, Commands(submit=r.submit, undo=r.undo, amend=r.amend, tokens=tokens, default_rules="ema2012")


def send(cmds, payload):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return cmds.handle(raw).payload


def test_start_game_echoes_the_transaction():
    r, c = commands()
    reply = send(c, {"command": "start_game", "players": ["A", "B", "C", "D"], "transaction": "t-42"})
    assert reply["status"] == "ok" and reply["transaction"] == "t-42" and reply["data"] == {"seq": 1}
    assert r.calls[0][1] == GameStart(players=("A", "B", "C", "D"), rules="ema2012")


def test_start_game_passes_house_rules_to_the_engine():
    r, c = commands()
    assert send(c, {"command": "start_game", "rules": "ema2016; kiriage=yes"})["status"] == "ok"
    assert r.calls[0][1].rules == "ema2016; kiriage=yes"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"{not json", "not JSON"),
        ([1, 2], "JSON object"),
        ({"transaction": 1}, "'command' is a required property"),
        ({"command": "explode"}, "is not one of"),
        ({"command": "chombo"}, "'seat' is a required property"),
        ({"command": "chombo", "seat": 7}, "at seat: 7 is greater than the maximum of 3"),
        ({"command": "set_scores", "scores": [1, 2, 3]}, "at scores"),
        ({"command": "undo", "count": 0}, "at count"),
        ({"command": "end_game", "extra": 1}, "Additional properties are not allowed"),
        ({"command": "event", "event": {"type": "teleport"}}, "unknown event type 'teleport'"),
        ({"command": "event", "event": {"type": "discard", "seat": 0, "tile": "9x"}}, "cannot read tiles"),
        # every number has the range a real game allows, and the refusal names the field and the range
        ({"command": "set_scores", "scores": [10**400, 0, 0, 0]},
         "at scores/0: a 401-digit number is out of range (allowed: a whole number from -1000000 to 1000000)"),
        ({"command": "set_scores", "scores": [30000.5, 30000, 30000, 30000]}, "at scores/0: 30000.5 is not a whole"),
        ({"command": "set_scores", "scores": [30000.0, 30000, 30000, 30000]}, "at scores/0: 30000.0 is not a whole"),
        (b'{"command": "set_scores", "scores": [NaN, 0, 0, 0]}', "not JSON: NaN is not a number JSON allows"),
        (b'{"command": "undo", "count": 1e400}', "at count: 1E+400 is not a whole number"),
        ({"command": "undo", "count": 101}, "at count: 101 is greater than the maximum of 100 (allowed: a whole "
         "number from 1 to 100)"),
        ({"command": "amend", "seq": 2**40, "event": {"type": "dora", "tile": "1m"}},
         "at seq: 1099511627776 is greater than the maximum of 2147483647"),
        ({"command": "end_game", "transaction": "t" * 129}, "at transaction: a text of 129 characters"),
        ({"command": "end_game", "reason": "r" * 501}, "at reason: a text of 501 characters is too long (at most 500)"),
        ({"command": "start_game", "players": ["A", "B", "C", "D" * 61]}, "at players/3: a text of 61 characters"),
        ({"command": "event", "event": {"type": "dice", "dice": [0, 7]}}, "dice.dice[0]: 0 is out of range: a whole "
         "number from 1 to 6"),
        ({"command": "event", "event": {"type": "ron", "from_seat": 1, "claims": [{"seat": 4}]}},
         "ron.claims[0].seat: 4 is out of range: a whole number from 0 to 3"),
        ({"command": "event", "event": {"type": "set_scores", "scores": [-(10**7), 0, 0, 0]}},
         "set_scores.scores[0]: -10000000 is out of range"),
        ({"command": "event", "event": {"type": "abortive_draw"}}, "abortive_draw: missing field(s) kind"),
        (b'{"command": "end_game", "reason": "' + b"x" * 70000 + b'"}', "a command of 70037 bytes; at most 65536"),
        (b"[" * 20000, "not JSON"),
    ],
)
def test_malformed_commands_are_answered_and_change_nothing(payload, message):
    r, c = commands()
    reply = send(c, payload)
    assert reply["status"] == "error" and message in reply["error"], reply["error"]
    assert len(reply["error"]) < 300  # never the absurd value echoed back
    assert r.calls == []


def test_engine_refusal_is_the_reply():
    r, c = commands()
    assert r.engine.state.phase.value == "not_started"
    reply = send(c, {"command": "chombo", "seat": 1, "transaction": 5})
    assert reply["status"] == "error" and "during a hand" in reply["error"] and reply["transaction"] == 5
    assert send(c, {"command": "amend", "seq": 99, "event": {"type": "dora", "tile": "1m"}})["error"].startswith(
        "there is no event 99")


def test_tokens_when_configured():
    r, c = commands(tokens=("referee-secret",))
    assert "unauthorised" in send(c, {"command": "start_game"})["error"]
    assert "unauthorised" in send(c, {"command": "start_game", "token": "guess"})["error"]
    assert send(c, {"command": "start_game", "token": "referee-secret"})["status"] == "ok"
    assert len(r.calls) == 1


def test_referee_commands_reach_the_engine():
    r, c = commands()
    send(c, {"command": "start_game", "players": ["A", "B", "C", "D"]})
    assert send(c, {"command": "set_scores", "scores": [31000, 29000, 30000, 30000], "reason": "miscount"})[
        "status"] == "ok"
    assert r.calls[-1][1] == SetScores(scores=(31000, 29000, 30000, 30000), reason="miscount")
    assert send(c, {"command": "undo", "count": 2})["data"] == {"seq": 3}
    assert isinstance(Chombo(seat=0), Chombo)


def test_schema_lists_every_command():
    assert set(COMMAND_SCHEMA["properties"]["command"]["enum"]) == {
        "start_game", "undo", "amend", "event", "chombo", "dead_hand", "set_scores", "end_game", "clock", "sticks"}


def test_start_game_takes_the_situation_of_a_game_taken_up_midway():
    r, c = commands()
    reply = send(c, {"command": "start_game", "round": "S2", "honba": 2, "sticks": 1,
                     "scores": [31000, 28000, 35000, 25000], "dealer": 1})
    assert reply["status"] == "ok", reply
    assert r.calls[0][1] == GameStart(rules="ema2012", round="S2", honba=2, sticks=1,
                                      scores=(31000, 28000, 35000, 25000), dealer=1)
    st = r.engine.state
    assert (st.round, st.honba, st.sticks, st.dealer, st.scores) == (5, 2, 1, 1, [31000, 28000, 35000, 25000])


def test_start_game_situation_is_checked_by_schema_and_engine():
    _, c = commands()
    assert "round" in send(c, {"command": "start_game", "round": "S5"})["error"]
    assert "honba" in send(c, {"command": "start_game", "honba": -1})["error"]
    reply = send(c, {"command": "start_game", "round": "W1"})
    assert reply["status"] == "error" and "cannot start in W1" in reply["error"]


def test_configured_situation_applies_unless_the_command_gives_one():
    r = Recorder()
    c = Commands(submit=r.submit, undo=r.undo, amend=r.amend, default_start={"round": "E3", "honba": 1})
    assert send(c, {"command": "start_game"})["status"] == "ok"
    assert (r.calls[0][1].round, r.calls[0][1].honba) == ("E3", 1)
    r2 = Recorder()
    c2 = Commands(submit=r2.submit, undo=r2.undo, amend=r2.amend, default_start={"round": "E3", "honba": 1})
    assert send(c2, {"command": "start_game", "round": "S1"})["status"] == "ok"
    assert (r2.calls[0][1].round, r2.calls[0][1].honba) == ("S1", 0)  # the command's situation as a whole
