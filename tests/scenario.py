"""A tiny script language for engine scenarios, so that a test reads like a table.

``Table`` wraps an :class:`Engine` and sends events; ``Table.play`` reads a
space separated script of moves, each ``SEAT:ACTION``:

* ``0:d5m``  seat 0 discards 5m (a draw not seen before it is inferred)
* ``1:r9p``  seat 1 discards 9p declaring riichi
* ``2:+3s``  seat 2 draws 3s, seen (``2:+`` a draw not seen)
* ``3:pon``  seat 3 pons the latest discard (``3:kan`` an open kan); own tiles
  are plain copies of the called tile unless written: ``3:pon0p5p``
* ``1:chi46m``  seat 1 chis the latest discard with its own 4m and 6m
* ``0:ankan9m`` / ``0:kakan5p``  concealed kan of four 9m / added kan

Tiles are written as :func:`tablesvc.tiles.parse_tiles` reads them (``5mr`` or
``0m`` for a red five, ``E``..``C`` or ``1z``..``7z`` for honours).
"""

from __future__ import annotations

import copy
import itertools
import re

import pytest

from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import (
    AddedKan,
    Call,
    ConcealedKan,
    Discard,
    DoraRevealed,
    Draw,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    Tsumo,
)
from tablesvc.engine.results import HandResult
from tablesvc.engine.state import GameState, HandState, Step
from tablesvc.tiles import Tile, parse_tile, parse_tiles

__all__ = ["Table", "assert_unchanged_after", "deal", "t", "ts"]

_MOVE = re.compile(r"^([0-3]):(d|r|\+|pon|kan|chi|ankan|kakan)(.*)$")

# Simples only: a burnt wall never makes nagashi mangan or four winds by accident,
# and 70 discards of 21 kinds never show a fifth copy of one.
_FILLER = [parse_tile(f"{n}{s}") for s in "mps" for n in range(2, 9)]


def t(text: str) -> Tile:
    return parse_tile(text)


def ts(text: str) -> tuple[Tile, ...]:
    return tuple(parse_tiles(text))


def deal(*hands: str) -> tuple[tuple[Tile, ...], ...]:
    assert len(hands) == 4
    return tuple(ts(h) for h in hands)


class Table:
    """An engine at a table: one game, events sent one by one, outputs kept."""

    def __init__(self, rules: str = "ema2012", **situation: object) -> None:
        """``situation``: GameStart's round, honba, sticks, scores, dealer, for a game taken up midway."""
        self.engine = Engine()
        self.outputs: list = []
        self.events: list[Event] = []  # every event accepted, in order (a record of the game)
        self.send(GameStart(rules=rules, **situation))  # type: ignore[arg-type]
        self._filler = itertools.cycle(_FILLER)

    # ---------------------------------------------------------------- state

    @property
    def state(self) -> GameState:
        return self.engine.state

    @property
    def hand(self) -> HandState:
        assert self.engine.state.hand is not None, "no hand is being played"
        return self.engine.state.hand

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(self.engine.state.scores)

    @property
    def last_result(self) -> HandResult:
        return self.engine.state.results[-1]

    # ---------------------------------------------------------------- events

    def send(self, *events: Event) -> list:
        out: list = []
        for event in events:
            out += self.engine.apply(event)
            self.events.append(event)
        self.outputs += out
        return out

    def start_hand(self, hands: tuple | None = None, dora: str = "W") -> None:
        """Deal (hands known or not) and turn the first dora indicator (default W: dora North)."""
        self.send(HandStart(hands=hands), DoraRevealed(t(dora)))

    def play(self, script: str) -> list:
        out: list = []
        for move in script.split():
            out += self.send(self.event(move))
        return out

    def event(self, move: str) -> Event:
        """The event one script move stands for (a call reads the latest discard)."""
        m = _MOVE.match(move)
        if not m:
            raise ValueError(f"cannot read move {move!r}")
        seat, action, rest = int(m[1]), m[2], m[3]
        if action in ("d", "r"):
            return Discard(seat, t(rest), riichi=action == "r")
        if action == "+":
            return Draw(seat, t(rest) if rest else None)
        if action == "ankan":
            return ConcealedKan(seat, (t(rest),) * 4)
        if action == "kakan":
            return AddedKan(seat, t(rest))
        last = self.hand.last_discard
        assert last is not None, f"{move}: nothing to call"
        from_seat, called = last
        own = ts(rest) if rest else (called.plain,) * (3 if action == "kan" else 2)
        return Call(seat, action, (*own, called), called, from_seat)

    def ron(self, seat: int, hand: str, *, ura: str = "") -> list:
        """``seat`` wins on the latest discard, showing ``hand`` (its concealed tiles and the winning tile)."""
        assert self.hand.last_discard is not None
        return self.send(Ron(self.hand.last_discard[0], (RonClaim(seat, ts(hand)),), ura=ts(ura)))

    def tsumo(self, seat: int, hand: str, win: str, *, ura: str = "") -> list:
        return self.send(Tsumo(seat, ts(hand), t(win), ura=ts(ura)))

    # ---------------------------------------------------------------- wall

    def next_actor(self) -> int:
        h = self.hand
        if h.step is Step.CLAIMS:
            assert h.last_discard is not None
            return (h.last_discard[0] + 1) % 4
        return h.turn

    def burn(self, n: int, avoid: str = "") -> None:
        """``n`` discards of simples in turn order (camera mode: the draws are inferred).

        Never a fifth copy of a kind on the table, nor any kind in ``avoid`` (a winner's waits:
        a wait discarded or let pass is furiten).
        """
        banned = {x.kind for x in ts(avoid)}
        for _ in range(n):
            for _ in range(len(_FILLER)):
                tile = next(self._filler)
                if tile.kind not in banned and self.hand.visible[tile.kind] < 4:
                    break
            else:
                raise AssertionError("no filler tile left to discard")
            self.send(Discard(self.next_actor(), tile))

    def exhaust(self, avoid: str = "") -> int:
        """Discard in turn until the last wall tile is drawn and discarded; how many discards that took."""
        n = 0
        while not (self.hand.wall == 0 and self.hand.step is Step.CLAIMS):
            self.burn(1, avoid)
            n += 1
        return n

    def draw_hand(self, tenpai: tuple[bool, bool, bool, bool], hands: tuple | None = None) -> HandResult:
        """A whole hand in camera mode to an exhaustive draw."""
        self.start_hand(hands)
        self.exhaust()
        self.send(ExhaustiveDraw(tenpai))
        return self.last_result


def assert_unchanged_after(engine: Engine, event: Event, *fragments: str) -> str:
    """``event`` is refused with a message holding every fragment, and the state is exactly as before.

    Checked twice: through :class:`Engine` (which owns and must restore its state) and
    through the pure ``apply`` on a deep copy (which must not touch its input).
    """
    before = copy.deepcopy(engine.state)
    before_repr = repr(engine.state)
    with pytest.raises(Rejected) as info:
        engine.apply(event)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert engine.state == before
    assert repr(engine.state) == before_repr
    pure_input = copy.deepcopy(before)
    with pytest.raises(Rejected):
        apply(pure_input, event)
    assert pure_input == before
    return message
