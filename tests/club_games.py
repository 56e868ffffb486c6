"""Short scripted games of a club night, whose every figure is worked out by hand below.

Each game is a list of events built with the scenario script language
(``tests/scenario.py``); the referee ends each with ``end_game`` after a
hand or two, so the final ranking (EMA 2012: 30000 to start and to return,
uma +30000/+10000/-10000/-30000, tied places share their uma) is short
arithmetic. None of the figures is read back from the engine.

Games one to three are the club night every records test stores; the
standings of the web server are checked on them too. :func:`sticks_game`
is kept apart (its own database in the tests): riichi sticks that go down
in drawn hands, one picked up by the next winner and one left on the table
at the end.
"""

from __future__ import annotations

import itertools

from tablesvc.engine.engine import Engine
from tablesvc.engine.events import EndGame, Event, ExhaustiveDraw, GameStart, Ron, RonClaim
from tests.scenario import _FILLER, Table, ts

__all__ = ["ANN_BOB_CAT_DAN", "BOB_EVE_ANN_CAT", "Recorder", "game_one", "game_three", "game_two",
           "sticks_game"]

# a closed tanyao-pinfu hand waiting on 4s/7s (see tests/test_engine_scenarios.py)
PINFU_TANYAO = "234m567m345p88p456s"
ANN_BOB_CAT_DAN = ("Ann", "Bob", "Cat", "Dan")
BOB_EVE_ANN_CAT = ("Bob", "Eve", "Ann", "Cat")


class Recorder(Table):
    """A scenario table with names at the table; ``events`` (the scenario table's record) is played again
    elsewhere."""

    def __init__(self, players: tuple[str, str, str, str], rules: str = "ema2012") -> None:
        self.engine = Engine()
        self.outputs: list = []
        self.events: list[Event] = []
        self._filler = itertools.cycle(_FILLER)
        self.send(GameStart(players=players, rules=rules))


def _ron_on_riichi_discard(tb: Recorder, winner: int) -> None:
    """Bob (seat 1) declares riichi with 4s; ``winner`` rons it: tanyao pinfu, 2 han 30 fu = 2000.
    The riichi is void (the discard was won on): no stick, no deposit."""
    tb.start_hand()
    tb.play("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r4s")
    tb.send(Ron(1, (RonClaim(winner, ts(PINFU_TANYAO)),)))


def game_one(winner: int = 2) -> list[Event]:
    """Ann Bob Cat Dan. Cat (or ``winner``) rons Bob's riichi discard for 2000, then the game is ended.

    Scores 30000 28000 32000 30000. Cat 1st: 2000 + 30000 = +32000; Ann and Dan tie 2nd and share
    (10000 - 10000) / 2 = 0: 0 each; Bob 4th: -2000 - 30000 = -32000. With ``winner=3`` Dan and Cat swap.
    """
    tb = Recorder(ANN_BOB_CAT_DAN)
    _ron_on_riichi_discard(tb, winner)
    tb.send(EndGame(reason="time"))
    return tb.events


def game_two() -> list[Event]:
    """Bob Eve Ann Cat. Eve (seat 1) riichi, ippatsu tsumo: mangan 8000 (dealer Bob pays 4000, Ann and Cat
    2000 each) plus her own stick back: deltas -4000 +9000 -2000 -2000; scores 26000 38000 28000 28000.

    Eve 1st: 8000 + 30000 = +38000; Ann and Cat tie 2nd, uma 0: -2000 each; Bob 4th: -4000 - 30000 = -34000.
    """
    tb = Recorder(BOB_EVE_ANN_CAT)
    tb.start_hand()
    tb.play("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r1p 2:dN 3:dW 0:dS")
    tb.tsumo(1, PINFU_TANYAO, "4s", ura="9m")
    tb.send(EndGame(reason="time"))
    return tb.events


def game_three() -> tuple[list[Event], list[Event]]:
    """Ann Bob Cat Dan again, in two parts (the collector is killed between them).

    Hand 1: Cat rons Bob's riichi discard, 2000 (dealer passes to Bob). Hand 2: exhaustive draw, only the
    dealer Bob tenpai: +3000, the others -1000. Scores 29000 31000 31000 29000. Bob and Cat tie 1st,
    uma (30000 + 10000) / 2 = 20000: +21000 each; Ann and Dan tie 3rd, (-10000 - 30000) / 2: -21000 each.
    """
    tb = Recorder(ANN_BOB_CAT_DAN)
    _ron_on_riichi_discard(tb, 2)
    first = list(tb.events)
    tb.draw_hand((False, True, False, False))
    tb.send(EndGame(reason="time"))
    return first, tb.events[len(first):]


def sticks_game() -> list[Event]:
    """Ann Bob Cat Dan, ema2012 (30000 each), three hands and the end: where riichi sticks go.

    Hand 1, E1-0, Ann deals, no stick on the table. Dan riichi: his stick goes down (30000 -> 29000, one
    stick on the table). Exhaustive draw, only Dan tenpai: each noten pays him 1000; deltas
    -1000 -1000 -1000 +3000, scores 29000 29000 29000 32000, the stick stays. Ann (dealer) noten: the deal
    passes to Bob; a counter is added.

    Hand 2, E2-1, Bob deals, one stick on the table. Cat rons Bob's 4s, tanyao pinfu 2 han 30 fu = 2000,
    + 300 for the counter, + 1000 for Dan's stick: deltas 0 -2300 +3300 0, scores 29000 26700 32300 32000,
    no stick left. A non-dealer won: the counters go, the deal passes to Cat.

    Hand 3, E3-0, Cat deals. Ann riichi: 29000 -> 28000, one stick on the table. Exhaustive draw, only Ann
    tenpai: deltas +3000 -1000 -1000 -1000, scores 31000 25700 31300 31000, the stick stays.

    The referee ends the game: the stick left goes to first place, Cat: 31300 + 1000 = 32300 (and the four
    scores add up to 120000 again). Cat 1st: 2300 + 30000 = +32300; Ann and Dan tie 2nd on 31000 and share
    (10000 - 10000) / 2 = 0: +1000 each; Bob 4th: -4300 - 30000 = -34300 (sum 0).

    Per player over 3 hands: Ann and Dan put a riichi stick down in one hand each (riichi rate 1/3), Bob and
    Cat none; Cat won one (2000 as scored, counter and stick aside), Bob dealt in once.
    """
    tb = Recorder(ANN_BOB_CAT_DAN)
    tb.start_hand()
    tb.play("0:d1m 1:d9p 2:d3m 3:r4m")
    tb.exhaust()
    tb.send(ExhaustiveDraw((False, False, False, True)))
    tb.start_hand()
    tb.play("1:d1m 2:d9p 3:d3m 0:d6m 1:d4s")
    tb.send(Ron(1, (RonClaim(2, ts(PINFU_TANYAO)),)))
    tb.start_hand()
    tb.play("2:d1m 3:d9p 0:r3m")
    tb.exhaust()
    tb.send(ExhaustiveDraw((True, False, False, False)))
    tb.send(EndGame(reason="time"))
    return tb.events
