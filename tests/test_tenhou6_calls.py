"""tenhou.net/6 calls in every position the format writes them, in hands written by hand.

The format (as Tenhou's viewer and mjai-reviewer's convlog read it): a call
is a string of two-digit tile codes with one letter, whose place says where
the called tile came from. In ``take``: ``c`` chi (always from the left,
letter first), ``p`` pon and ``m`` open kan at 0 (from the left), 2 (across),
4 for a pon / 6 for a kan (from the right), the called tile right after the
letter. In ``discard``: ``k`` an added kan where the pon's ``p`` stood, the
added tile after it; ``a`` a concealed kan at 6; ``0`` after an open kan.

Two hands exercise them together, each a win after its calls that must
read as complete and score as worked out below; every string also
round-trips on its own.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tablesvc.engine.events import AddedKan, Call, ConcealedKan
from tablesvc.engine.state import MeldState, Phase
from tablesvc.formats.mjai import export_mjai, parse_mjai
from tablesvc.formats.record import RecordError
from tablesvc.formats.tenhou6 import (
    _call_text,
    _HandReader,
    _kakan_text,
    export_tenhou6,
    parse_tenhou6,
    tile_code,
)
from tablesvc.formats.walk import Before
from tablesvc.replay import replay

# ---------------------------------------------------------------- hand A: E1, seat 1 calls from all three seats
#
# Seat 1 (South) pons 2p from seat 3 (across: "22p2222"), declares a concealed kan of 8s between its calls
# ("383838a38"), chis 3m from seat 0 (left: "c131415"), adds the fourth 2p to its pon ("22k222222", the k
# where the p stood), and makes an open kan of seat 2's 7m (right: "171717m17", then the 0 in its discards).
# It waits on 6p alone and rons seat 3's 6p. Everyone else only draws and discards that tile (60).
# Dora indicators E, W, P, F (the first, then one per kan): no dora in the hand; no riichi, no ura.
# Value: tanyao 1 (open tanyao, Tenhou) + san kantsu 2 = 3 han.
# Fu: 20 (open ron) + concealed kan of simples 16 + open kan of simples 8 + 8 + single wait 2 = 54 -> 60.
# 3 han 60 fu: 60 x 2^5 = 1920 base, x 4 = 7680 -> 7700 from seat 3.
A0 = [11, 11, 12, 12, 16, 16, 18, 18, 21, 21, 23, 23, 24]
A1 = [22, 22, 38, 38, 38, 14, 15, 17, 17, 17, 26, 47, 42]
A2 = [31, 31, 32, 32, 34, 34, 35, 35, 36, 36, 37, 37, 39]
A3 = [24, 24, 25, 25, 27, 27, 28, 28, 42, 42, 44, 44, 47]
HAND_A = [
    [0, 0, 0], [25000] * 4, [41, 43, 45, 46], [],
    A0, [33, 12, 13, 33], [60, 60, 60, 60],
    A1, [44, "22p2222", 38, 39, "c131415", 22, 29, "171717m17", 19],
    [60, 47, "383838a38", 60, 42, "22k222222", 60, 0, 60],
    A2, [18, 21, 23, 27, 17, 28], [60] * 6,
    A3, [22, 31, 32, 34, 26], [60] * 5,
    ["和了", [0, 7700, 0, -7700], [1, 3, 1, "60符3飜7700点", "断幺九(1飜)", "三槓子(2飜)"]],
]

# ---------------------------------------------------------------- hand B: E2, seat 1 deals, seat 0 calls
#
# Seat 0 pons white from seat 1 (right: "4545p45"), pons 2m from seat 3 (left: "p121212"), chis 4s from
# seat 3 with the red 5s ("c343353"), makes an open kan of seat 2's 9p (across: "29m292929"), then adds
# to both pons ("4545k4545" and "k12121212": the k where each p stood) and draws its 7p pair: tsumo.
# Dora indicators E, S, 8m, 8s: dora S, W, 9m, 9s, none in the hand.
# Value: white 1 + san kantsu 2 + red five 1 = 4 han.
# Fu: 20 + tsumo 2 + open kan of white 16 + open kan of 2m 8 + open kan of 9p 16 + single wait 2 = 64 -> 70.
# 4 han 70 fu: 70 x 2^6 = 4480 base, over 2000: mangan. Non-dealer tsumo: the dealer (seat 1) 4000,
# seats 2 and 3 2000 each: +8000 -4000 -2000 -2000.
B0 = [45, 45, 12, 12, 29, 29, 29, 33, 53, 27, 19, 39, 47]
B1 = [11, 11, 11, 13, 13, 13, 14, 14, 14, 16, 16, 16, 42]
B2 = [21, 21, 21, 22, 22, 22, 23, 23, 23, 24, 24, 24, 43]
B3 = [31, 31, 31, 32, 32, 32, 35, 35, 35, 36, 36, 36, 44]
HAND_B = [
    [1, 0, 0], [25000, 32700, 25000, 17300], [41, 42, 18, 38], [],
    B0, ["4545p45", "p121212", "c343353", "29m292929", 17, 45, 26, 12, 28, 27],
    [19, 39, 47, 0, 60, "4545k4545", 60, "k12121212", 60],
    B1, [45, 17, 17, 26, 26, 28, 28], [60] * 7,
    B2, [37, 37, 29, 46, 46, 18], [60] * 6,
    B3, [12, 34, 15, 25, 41], [60] * 5,
    ["和了", [8000, -4000, -2000, -2000], [0, 0, 0, "満貫2000-4000点", "役牌 白(1飜)", "三槓子(2飜)", "赤ドラ(1飜)"]],
]

DOC = {"title": ["", ""], "name": ["A", "B", "C", "D"], "rule": {"disp": "般南喰赤", "aka": 1},
       "log": [HAND_A, HAND_B]}


def _text(doc=DOC) -> str:
    return json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize("hand", [HAND_A, HAND_B], ids=["A", "B"])
def test_hand_written_hands_use_a_real_tile_set(hand):
    """No fifth copy of a tile, one red five of a suit at most: the hands are possible."""
    count = Counter([*hand[2], *(t for s in range(4) for t in hand[4 + 3 * s])])
    count.update(t for s in range(4) for t in hand[5 + 3 * s] if isinstance(t, int))
    assert max(count.values()) <= 4 and all(count[red] <= 1 for red in (51, 52, 53))


def test_calls_of_every_kind_read_in_order_and_the_wins_score_as_worked_out():
    game = parse_tenhou6(_text(), "calls.json")
    calls = [(type(e).__name__, e.seat, getattr(e, "kind", None), getattr(e, "from_seat", None))
             for e in game.events if isinstance(e, Call | AddedKan | ConcealedKan)]
    assert calls == [
        ("Call", 1, "pon", 3), ("ConcealedKan", 1, None, None), ("Call", 1, "chi", 0), ("AddedKan", 1, None, None),
        ("Call", 1, "kan", 2),
        ("Call", 0, "pon", 1), ("Call", 0, "pon", 3), ("Call", 0, "chi", 3), ("Call", 0, "kan", 2),
        ("AddedKan", 0, None, None), ("AddedKan", 0, None, None),
    ]
    report = replay(game, strict=True)  # the recorded deltas of both hands agree
    a, b = report.hands
    (win,) = a.wins
    assert (win.seat, win.from_seat, win.han, win.fu, win.points) == (1, 3, 3, 60, 7700)
    assert dict(win.yaku) == {"Tanyao": 1, "San Kantsu": 2}
    assert a.deltas == (0, 7700, 0, -7700)
    (win,) = b.wins
    assert (win.seat, win.from_seat, win.han, win.fu, win.limit, win.points) == (0, None, 4, 70, "mangan", 8000)
    assert dict(win.yaku) == {"Yakuhai (haku)": 1, "San Kantsu": 2, "Aka Dora": 1}
    assert b.deltas == (8000, -4000, -2000, -2000)
    assert report.state.scores == [33000, 28700, 23000, 15300]


def test_calls_write_back_exactly_and_through_mjai():
    game = parse_tenhou6(_text(), "calls.json")
    report = replay(game, strict=True)
    text = export_tenhou6(game, report)
    assert json.loads(text)["log"] == DOC["log"]  # every call string where it was, the kan dora in order
    mjai = export_mjai(game, report)
    again = replay(parse_mjai(mjai, "calls.mjai"), strict=True)
    assert [h.deltas for h in again.hands] == [h.deltas for h in report.hands]


def test_a_call_that_answers_no_discard_is_refused_with_the_reason():
    doc = json.loads(_text())
    doc["log"][0][8][1] = "2222p22"  # the pon of 2p said to come from seat 2 (right), who never discarded it
    with pytest.raises(RecordError, match=r"log\[0\]: .* do not make a hand: seat 1 calls 2p from seat 2"):
        parse_tenhou6(_text(doc), "bad.json")


# ---------------------------------------------------------------- each string on its own

# (take string, kind, called tile code, source seat for caller seat 1)
TAKES = [
    ("c275226", "chi", 27, 0),  # the format's own example: chi 7p with the red 5p and 6p
    ("p474747", "pon", 47, 0), ("12p1212", "pon", 12, 3), ("3737p37", "pon", 37, 2),
    ("p522525", "pon", 52, 0),  # the red 5p called
    ("m39393939", "kan", 39, 0), ("26m262626", "kan", 26, 3), ("131313m13", "kan", 13, 2),
]


def _reader() -> _HandReader:
    return _HandReader("t", 0, None)


@pytest.mark.parametrize(("text", "kind", "called", "source"), TAKES, ids=[t[0] for t in TAKES])
def test_take_strings_read_and_write_back(text, kind, called, source):
    take = _reader().take(text, 1, "take")
    assert (take.kind, tile_code(take.tile), take.target) == (kind, called, source)
    call = Call(seat=1, kind=kind, tiles=take.tiles, called=take.tile, from_seat=take.target)
    assert _call_text(call) == text


# (discard string, the pon's source for seat 1: left 0, across 3, right 2)
KAKANS = [("k16161616", 0), ("41k414141", 3), ("4646k4646", 2)]


@pytest.mark.parametrize(("text", "source"), KAKANS, ids=[k[0] for k in KAKANS])
def test_added_kan_strings_read_and_write_back(text, source):
    out = _reader().out(text, "discard")
    assert out.kind == "kakan"
    tile = out.tile
    pon = MeldState("pon", [tile, tile, tile], called=tile, from_seat=source)
    before = Before(phase=Phase.PLAYING, round=0, honba=0, sticks=0, dealer=0, scores=(0, 0, 0, 0), pon=pon)
    assert _kakan_text(tile, before, 1) == text


def test_concealed_kan_string_reads_with_the_letter_at_6():
    out = _reader().out("424242a42", "discard")
    assert out.kind == "ankan" and len(out.tiles) == 4 and {t.mjai for t in out.tiles} == {"S"}


@pytest.mark.parametrize(("text", "message"), [
    ("p4747", "is not a chi, pon or open kan"), ("47p4747x", "is not a chi, pon or open kan"),
    ("4747m47", "is not a chi, pon or open kan"), ("c47", "is not a chi, pon or open kan"),
])
def test_broken_take_strings_are_refused_naming_them(text, message):
    with pytest.raises(RecordError, match=message):
        _reader().take(text, 1, "take 3 of seat 1")
