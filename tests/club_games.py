"""Short scripted games of a club night, whose every figure is worked out by hand below.

Each game is a list of events built with the scenario script language
(``tests/scenario.py``); the referee ends each with ``end_game`` after a
hand or two, so the final ranking (EMA 2012: 30000 to start and to return,
uma +30000/+10000/-10000/-30000, tied places share their uma) is short
arithmetic. None of the figures is read back from the engine.
"""

from __future__ import annotations

import itertools

from tablesvc.engine.engine import Engine
from tablesvc.engine.events import EndGame, Event, GameStart, Ron, RonClaim
from tests.scenario import _FILLER, Table, ts

__all__ = ["ANN_BOB_CAT_DAN", "BOB_EVE_ANN_CAT", "Recorder", "game_one", "game_three", "game_two"]

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
