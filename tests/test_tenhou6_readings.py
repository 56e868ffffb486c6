"""Two identical discards, one called: which one a tenhou.net/6 log means, checked on every such hand of the
shared real games, whose mjlog says exactly which discard was called.

tenhou.net/6 keeps each seat's takes and discards in lists of their own, so a
reader puts the seats' moves back in turn order. Where a seat discarded the
same tile twice and another seat called one of them, the call could follow
either discard as far as the tiles go. The reader tries every turn order the
lists allow (tablesvc/formats/tenhou6.py) and, where more than one is left,
keeps the one the engine plays to the recorded deltas.

In the 118 shared games (mjlog, where the interleaving is written move by
move) a seat discarded a called tile twice 213 times. Each game is written as
tenhou.net/6 and read back: every such hand has one reading, the call right
after the discard the mjlog has. The other reading (the call, and the
caller's moves up to its discard, after the other identical discard) is
refused by the engine as impossible every time (a seat would draw out of
turn, or discard a tile it does not yet hold), while the right one replays to the recorded deltas exactly. In 36 of
them the caller did not move between the two discards, so both readings
write the very same per-seat lists: the tiles do not say which discard was
called, only the turn order does, and the reader keeps the mjlog's. A hand
that did have two readings keeps the one that scores as recorded and is
refused, naming the hand and the tile, where none does (checked with the
two readings of one of those 36 real hands).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import pytest

from tablesvc.engine.events import AddedKan, Call, ConcealedKan, Discard, Draw, Event, GameStart, HandStart
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import HandRecord, RecordError
from tablesvc.formats.tenhou6 import _choose, _HandReader, _Reading, _scored, export_tenhou6, parse_tenhou6
from tablesvc.replay import replay
from tests.conftest import mjlog_files

FILES = mjlog_files()
pytestmark = [pytest.mark.data, pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found")]

_MOVES = (Draw, Discard, Call, AddedKan, ConcealedKan)


@dataclass(frozen=True)
class Case:
    """A call whose tile its discarder discarded twice in the hand (``events``: the hand as the mjlog has it)."""

    game: str
    hand: int
    events: tuple[Event, ...]
    call: int  # index in events of the call
    called: int  # of the discard it took
    other: int  # of the identical discard it did not take


def _moves(events) -> list[tuple]:
    return [(type(e).__name__, e.seat, getattr(e, "tile", None) or getattr(e, "called", None)) for e in events
            if isinstance(e, _MOVES)]


@functools.cache
def _games():
    """(name, the mjlog's record, its tenhou.net/6 export) of every shared game."""
    out = []
    for path in FILES:
        record = parse_mjlog(path.read_text(encoding="utf-8"), path.name)
        out.append((path.name, record, export_tenhou6(record, replay(record))))
    return out


@functools.cache
def _cases() -> list[Case]:
    cases = []
    for name, record, _text in _games():
        starts = [i for i, e in enumerate(record.events) if isinstance(e, HandStart)] + [len(record.events)]
        for h in range(len(starts) - 1):
            hand = tuple(record.events[starts[h]:starts[h + 1]])
            for ic, call in enumerate(hand):
                if not isinstance(call, Call):
                    continue
                taken = max(i for i in range(ic) if isinstance(hand[i], Discard))
                assert (hand[taken].seat, hand[taken].tile) == (call.from_seat, call.called)
                for other in range(len(hand)):
                    e = hand[other]
                    if other != taken and isinstance(e, Discard) and (e.seat, e.tile) == (call.from_seat, call.called):
                        cases.append(Case(name, h, hand, ic, taken, other))
    return cases


def _wrong(case: Case) -> list[Event]:
    """The hand with the call (and the caller's moves up to its next discard) after the other identical discard."""
    ev = list(case.events)
    caller = ev[case.call].seat
    end = next(j for j in range(case.call + 1, len(ev)) if isinstance(ev[j], Discard) and ev[j].seat == caller)
    block = ev[case.call:end + 1]
    rest = ev[:case.call] + ev[end + 1:]
    at = next(i for i, e in enumerate(rest) if e is ev[case.other])
    return rest[:at + 1] + block + rest[at + 1:]


def _record(case: Case) -> tuple[GameStart, HandRecord]:
    record = next(r for n, r, _ in _games() if n == case.game)
    return next(e for e in record.events if isinstance(e, GameStart)), record.hands[case.hand]


def test_the_shared_games_hold_many_calls_of_a_tile_discarded_twice():
    cases = _cases()
    assert len(cases) >= 100, len(cases)
    assert len({(c.game, c.hand) for c in cases}) >= 50


def test_each_reads_back_from_tenhou6_with_one_reading_the_call_after_the_discard_the_mjlog_has():
    by_game = {}
    for case in _cases():
        by_game.setdefault(case.game, set()).add(case.hand)
    for name, record, text in _games():
        log = json.loads(text)["log"]
        for h in sorted(by_game.get(name, ())):
            _hand, readings = _HandReader(name, h, log[h]).read()
            assert len(readings) == 1, (name, h, len(readings))
            starts = [i for i, e in enumerate(record.events) if isinstance(e, HandStart)] + [len(record.events)]
            assert _moves(readings[0].events) == _moves(record.events[starts[h]:starts[h + 1]]), (name, h)


def _played(case: Case) -> tuple[list[Event], list[Event]]:
    """The hand up to its result as the mjlog has it, and the other reading of it."""
    record = next(r for n, r, _ in _games() if n == case.game)
    offset = [i for i, e in enumerate(record.events) if isinstance(e, HandStart)][case.hand]
    size = record.hands[case.hand].end_event - offset + 1
    return list(case.events[:size]), _wrong(case)[:size]


def _seat_lists(events) -> list[list[tuple]]:
    """What tenhou.net/6 keeps of a hand's moves: each seat's own, in its own order."""
    moves = _moves(events)
    return [[m for m in moves if m[1] == seat] for seat in range(4)]


def _same_lists(case: Case) -> bool:
    return _seat_lists(_wrong(case)) == _seat_lists(case.events)


def test_the_other_reading_is_refused_by_the_engine_and_the_right_one_replays_to_the_recorded_deltas():
    checked = same = 0
    for case in _cases():
        start, hand = _record(case)
        if hand.deltas is None:  # a hand the file stops in: nothing to score
            continue
        right, wrong = _played(case)
        assert _scored(start, hand, right) == hand.deltas, (case.game, case.hand)
        outcome = _scored(start, hand, wrong)
        assert isinstance(outcome, str) and outcome.startswith("refused: "), (case.game, case.hand, outcome)
        checked += 1
        same += _same_lists(case)
    assert checked >= 100
    # hands where both readings write the very same tenhou.net/6 lists (the caller did not move between the two
    # discards): the tiles do not say which discard was called, only the turn order does
    assert same >= 10


def test_where_the_lists_are_the_same_both_ways_the_reader_keeps_the_call_the_mjlog_has():
    cases = [c for c in _cases() if _same_lists(c)]
    assert len({(c.game, c.hand) for c in cases}) >= 10
    for case in cases:
        text = next(t for n, _, t in _games() if n == case.game)
        _hand, readings = _HandReader(case.game, case.hand, json.loads(text)["log"][case.hand]).read()
        assert len(readings) == 1
        assert _moves(readings[0].events) == _moves(case.events)  # the call right after the discard it took


def test_of_two_readings_the_one_that_scores_as_recorded_is_kept_and_none_is_refused_naming_hand_and_tile():
    case = next(c for c in _cases() if _record(c)[1].deltas is not None and _same_lists(c))
    name, _, text = next(g for g in _games() if g[0] == case.game)
    game = parse_tenhou6(text, name)
    hand = game.hands[case.hand]
    call = case.events[case.call]
    point = ((call.from_seat, call.called, call.seat),)
    events, other = _played(case)
    right, wrong = _Reading(events, None, point), _Reading(other, None, point)
    assert _choose(game, case.hand, hand, [wrong, right]) is right.events
    assert _choose(game, case.hand, hand, [right, wrong]) is right.events
    with pytest.raises(RecordError) as refused:
        _choose(game, case.hand, hand, [wrong])
    message = str(refused.value)
    assert f"log[{case.hand}] (" in message and f"seat {call.from_seat} discarded {call.called.mjai} twice" in message
    assert f"seat {call.seat} called one of them" in message and str(list(hand.deltas)) in message
