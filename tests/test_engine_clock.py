"""The tournament clock in the engine: each end-of-time rule, extensions, added hands, refusals.

The engine keeps no time: the deadline is written in ``clock_start`` and time
runs out when ``time_up`` says so, so these games are played on time without
waiting for a clock.
"""

from __future__ import annotations

import json

import pytest

from tablesvc.engine.clock import Clock, ClockError, parse_deadline
from tablesvc.engine.events import (
    ClockAddHand,
    ClockExtend,
    ClockStart,
    EndGame,
    ExhaustiveDraw,
    TimeUp,
    from_dict,
    to_dict,
)
from tablesvc.engine.results import GameResult
from tablesvc.engine.state import Phase
from tablesvc.mqtt.payloads import result_payload, state_payload
from tablesvc.rules.game_end import TimeRule, hands_after_time
from tests.feed_schemas import validate
from tests.scenario import Table, assert_unchanged_after

NOTEN = (False, False, False, False)
DEADLINE = "2026-11-26T12:00:00.000Z"


def _table(rule: str = "ema", more_hands: int = 0) -> Table:
    tb = Table()
    tb.send(ClockStart(minutes=75, deadline=DEADLINE, rule=rule, more_hands=more_hands))
    return tb


def _finals(outputs: list) -> list[GameResult]:
    return [o for o in outputs if isinstance(o, GameResult)]


def _hands_until_over(tb: Table, limit: int = 12) -> int:
    """Play drawn hands (the deal moving on) until the game ends; how many were played."""
    for n in range(1, limit + 1):
        tb.draw_hand(NOTEN)
        if tb.state.phase is Phase.GAME_OVER:
            return n
    raise AssertionError("the game did not end")


def test_the_rule_counts_the_hand_in_play_and_the_hands_after_it():
    assert hands_after_time(TimeRule.EMA, hand_in_play=True) == 2
    assert hands_after_time(TimeRule.EMA, hand_in_play=False) == 1
    assert hands_after_time(TimeRule.FINISH_HAND, hand_in_play=True) == 1
    assert hands_after_time(TimeRule.FINISH_HAND, hand_in_play=False) == 0
    assert hands_after_time(TimeRule.MORE_HANDS, hand_in_play=True, more_hands=3) == 4
    with pytest.raises(ValueError, match="0 to"):
        hands_after_time(TimeRule.MORE_HANDS, hand_in_play=False, more_hands=99)


@pytest.mark.parametrize(("rule", "more", "played_after"), [("ema", 0, 2), ("finish_hand", 0, 1),
                                                            ("more_hands", 3, 4)])
def test_time_up_during_a_hand_finishes_it_then_plays_what_the_rule_says(rule, more, played_after):
    tb = _table(rule, more)
    tb.draw_hand(NOTEN)  # E1 drawn: E2 next
    tb.start_hand()
    tb.burn(5)
    assert tb.send(TimeUp()) == []  # in the middle of E2
    assert tb.state.clock is not None and tb.state.clock.hands_left == played_after
    tb.exhaust()
    out = tb.send(ExhaustiveDraw(NOTEN))
    played = 1
    while not _finals(out):
        out = []
        tb.start_hand()
        tb.exhaust()
        out = tb.send(ExhaustiveDraw(NOTEN))
        played += 1
    assert played == played_after
    final = _finals(out)[0]
    assert final.ended == "time" and tb.state.phase is Phase.GAME_OVER
    assert len(tb.state.results) == 1 + played_after  # the game ended long before South 4


def test_time_up_between_hands_under_finish_hand_ends_the_game_at_once():
    tb = _table("finish_hand")
    tb.draw_hand(NOTEN)
    out = tb.send(TimeUp())
    assert _finals(out)[0].ended == "time"
    assert tb.state.phase is Phase.GAME_OVER
    payload = result_payload(out[0], 9, tb.state.players)
    assert payload["ended"] == "time" and validate("results", payload) == []


def test_ema_time_up_between_hands_plays_exactly_one_more():
    tb = _table("ema")
    tb.draw_hand(NOTEN)
    tb.send(TimeUp(reason="the hall's gong"))
    assert _hands_until_over(tb) == 1
    assert tb.state.final.ended == "time"


def test_extend_moves_the_deadline_and_reopens_time_that_was_up():
    tb = _table()
    start = parse_deadline(DEADLINE)
    tb.send(ClockExtend(minutes=5, reason="dispute at the table"))
    assert tb.state.clock.deadline == start + 300 and tb.state.clock.extended == 5
    assert not tb.state.clock.due(start + 299) and tb.state.clock.due(start + 300)
    tb.send(TimeUp())
    assert tb.state.clock.time_up and tb.state.clock.remaining(start) == 0
    tb.send(ClockExtend(minutes=3))  # the referee gives three more minutes after the gong
    assert not tb.state.clock.time_up and tb.state.clock.deadline == start + 480
    assert tb.state.clock.remaining(start + 420) == 60


def test_an_added_hand_is_played_after_time_whether_added_before_or_after_it():
    before = _table("finish_hand")
    before.send(ClockAddHand(reason="late start at this table"))
    before.send(TimeUp())  # between hands: finish_hand alone would end the game here
    assert before.state.phase is Phase.BETWEEN_HANDS
    assert _hands_until_over(before) == 1

    after = _table("ema")
    after.send(TimeUp())
    after.send(ClockAddHand())
    assert after.state.clock.hands_left == 2
    assert _hands_until_over(after) == 2 and after.state.final.ended == "time"


def test_a_chombo_hand_is_replayed_and_does_not_count():
    tb = _table("finish_hand")
    tb.start_hand()
    tb.send(TimeUp())
    from tablesvc.engine.events import Chombo

    tb.send(Chombo(seat=1, reason="wrong tsumo"))
    assert tb.state.phase is Phase.BETWEEN_HANDS and tb.state.clock.hands_left == 1
    assert _hands_until_over(tb) == 1


def test_the_last_hand_by_the_rules_ends_the_game_by_the_rules_even_on_time():
    tb = Table(round="S4")
    tb.send(ClockStart(minutes=75, deadline=DEADLINE, rule="more_hands", more_hands=3))
    tb.start_hand()
    tb.send(TimeUp())
    tb.exhaust()
    out = tb.send(ExhaustiveDraw(NOTEN))
    assert _finals(out)[0].ended == "rules"


def test_referee_time_up_without_a_clock_and_end_game_say_how_the_game_ended():
    tb = Table()
    tb.draw_hand(NOTEN)
    tb.send(TimeUp(rule="finish_hand"))
    assert tb.state.final.ended == "time" and tb.state.clock.deadline is None
    other = Table()
    assert other.send(EndGame(reason="hall closes"))[0].ended == "referee"
    natural = Table(round="S4")
    natural.draw_hand(NOTEN)
    assert natural.state.final.ended == "rules"


def test_clock_commands_for_a_finished_game_are_refused_with_the_reason():
    tb = _table("finish_hand")
    tb.draw_hand(NOTEN)
    tb.send(TimeUp())
    for event in (ClockExtend(minutes=5), ClockAddHand(), TimeUp(), ClockStart(minutes=5, deadline=DEADLINE)):
        assert_unchanged_after(tb.engine, event, "the game is over (ended on time)", "its clock cannot change")


def test_bad_clock_events_are_refused_naming_what_is_wrong():
    tb = Table()
    assert_unchanged_after(tb.engine, ClockExtend(minutes=5), "no clock", "action start")
    assert_unchanged_after(tb.engine, ClockAddHand(), "no clock")
    assert_unchanged_after(tb.engine, ClockStart(minutes=75, deadline="noon"), "not a time like")
    assert_unchanged_after(tb.engine, ClockStart(minutes=75, deadline="2026-11-26T12:00:00"), "no time zone")
    assert_unchanged_after(tb.engine, ClockStart(minutes=75, deadline=DEADLINE, rule="sudden_death"),
                           "unknown time rule 'sudden_death'", "ema, finish_hand, more_hands")
    assert_unchanged_after(tb.engine, ClockStart(minutes=75, deadline=DEADLINE, rule="more_hands"),
                           "1 to 8 hands")
    assert_unchanged_after(tb.engine, ClockStart(minutes=75, deadline=DEADLINE, more_hands=2),
                           "only with the rule more_hands")
    assert_unchanged_after(tb.engine, TimeUp(rule="more_hands"), "needs its number of hands")
    tb.send(ClockStart(minutes=75, deadline=DEADLINE))
    assert_unchanged_after(tb.engine, ClockStart(minutes=60, deadline=DEADLINE), "already set")
    assert_unchanged_after(tb.engine, TimeUp(rule="finish_hand"), "plays by the rule ema, not finish_hand")
    tb.send(TimeUp())
    assert_unchanged_after(tb.engine, TimeUp(), "time is already up")
    fresh = Table.__new__(Table)
    from tablesvc.engine.engine import Engine

    fresh.engine = Engine()
    assert_unchanged_after(fresh.engine, ClockStart(minutes=75, deadline=DEADLINE), "send start_game")


def test_the_clock_survives_the_journal_codec_and_is_in_the_state_payload():
    events = [ClockStart(minutes=75, deadline=DEADLINE, rule="more_hands", more_hands=2), ClockExtend(minutes=5),
              ClockAddHand(reason="r"), TimeUp(reason="gong")]
    for event in events:
        assert from_dict(to_dict(event)) == event
    tb = Table()
    for event in events[:3]:
        tb.send(event)
    now = parse_deadline(DEADLINE) - 600
    payload = state_payload(tb.state, 4, ts=now)
    assert validate("state", payload) == []
    clock = payload["clock"]
    assert clock["deadline"] == "2026-11-26T12:05:00.000Z" and clock["remaining_s"] == 900
    assert (clock["rule"], clock["more_hands"], clock["added"], clock["extended"]) == ("more_hands", 2, 1, 5)
    assert clock["time_up"] is False and clock["hands_left"] is None
    tb.send(events[3])
    clock = state_payload(tb.state, 5, ts=now)["clock"]
    assert clock["time_up"] is True and clock["hands_left"] == 3 and clock["remaining_s"] == 0
    assert state_payload(Table().state, 1)["clock"] is None


def test_clock_values_are_checked():
    with pytest.raises(ClockError, match="1 to"):
        Clock.start(0, DEADLINE, "ema", 0)
    clock = Clock.start(75, DEADLINE, "ema", 0)
    with pytest.raises(ClockError, match="extension of 0"):
        clock.extend(0)
    for _ in range(8):
        clock = clock.add_hand()
    with pytest.raises(ClockError, match="already added"):
        clock.add_hand()


def test_a_game_on_time_exports_as_mjai_and_tenhou6_the_clock_events_passed_over():
    from dataclasses import replace

    from hardware_sims.generator import generate_game
    from tablesvc.formats.mjai import export_mjai
    from tablesvc.formats.record import RecordedGame
    from tablesvc.formats.tenhou6 import export_tenhou6
    from tablesvc.replay import replay

    plain = generate_game(5)
    events = list(plain.events)
    middle = next(i for i, e in enumerate(events) if e.type == "discard" and i > len(events) // 2)
    events[middle:middle] = [ClockExtend(minutes=5), ClockAddHand()]
    events[1:1] = [ClockStart(minutes=600, deadline=DEADLINE)]  # a long round: the game ends by its rules
    timed = replace(plain, events=events)
    for export in (export_mjai, export_tenhou6):
        assert export(timed, replay(timed)) == export(plain, replay(plain))

    tb = _table("finish_hand")  # time called between hands: the game ends there, and mjai says why
    tb.draw_hand(NOTEN)
    tb.send(TimeUp())
    record = RecordedGame(source="test", events=tb.events)
    lines = [json.loads(x) for x in export_mjai(record, replay(record)).splitlines()]
    assert lines[-1]["type"] == "end_game" and lines[-1]["reason"] == "time"
    assert [x["type"] for x in lines].count("end_game") == 1
