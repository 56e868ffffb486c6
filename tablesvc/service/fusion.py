"""From what the devices and the camera report to the events the engine understands.

The camera says what lies on the felt (a tile in a pond, a new meld, a dora
indicator, a hand laid down); the automatic table says dice, walls, hand
start; the seat panels say what players declare. A discard, a call or a kan
is read from the camera alone (a crosswise pond tile is a riichi
declaration, a crosswise meld tile says whom it was taken from). A win needs
the declaration *and* the hand: ``ron``/``tsumo`` buttons, the hands laid
down, then ``confirm`` settles it, so several rons on one discard become one
event however the messages interleave. At an exhaustive draw every seat
answers ``tenpai`` or ``noten`` (a riichi seat is tenpai by rule).

The fusion is pure bookkeeping: it reads the engine's state to interpret an
observation (whose discard a call takes) and returns events; it never
applies them itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from drivers.observations import Button, ButtonPressed, DiceRolled, HandStarted, Observation, WallReady
from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    ConcealedKan,
    Discard,
    DoraRevealed,
    Event,
    ExhaustiveDraw,
    HandStart,
    Ron,
    RonClaim,
    Tsumo,
)
from tablesvc.engine.events import DiceRolled as DiceEvent
from tablesvc.engine.state import GameState, Step
from tablesvc.tiles import Tile, parse_tile
from vision.table.observations import (
    CameraObservation,
    DoraIndicatorSeen,
    HandRevealed,
    KanAdded,
    MeldSeen,
    TileDiscarded,
    UraIndicatorsSeen,
)

__all__ = ["UNDO", "Action", "Fusion"]

log = logging.getLogger(__name__)

UNDO = "undo"


@dataclass(frozen=True)
class Action:
    """An event for the engine (or ``UNDO``), and the device or camera it came from."""

    event: Event | str
    source: str


class Fusion:
    """Keeps what has been declared in the current hand until it can become an event."""

    def __init__(self, state: Callable[[], GameState], would_accept: Callable[[Event], bool]) -> None:
        self._state = state
        self._would_accept = would_accept
        self._reset()

    def _reset(self) -> None:
        """Forget every declaration (a new hand, or the game moved on past them)."""
        self.rons: list[int] = []
        self.tsumo: int | None = None
        self.nine: int | None = None
        self.revealed: dict[int, HandRevealed] = {}
        self.ura: tuple[Tile, ...] = ()
        self.answers: dict[int, bool] = {}

    # ------------------------------------------------------------ entry

    def observe(self, obs: Observation | CameraObservation) -> list[Action]:
        """The events this observation completes (often none, sometimes several)."""
        if isinstance(obs, CameraObservation):
            return self._camera(obs)
        source = obs.device
        if isinstance(obs, DiceRolled):
            return [Action(DiceEvent(dice=(obs.d1, obs.d2)), source)]
        if isinstance(obs, HandStarted):
            self._reset()
            return [Action(HandStart(), source)]
        if isinstance(obs, WallReady):
            return []
        if isinstance(obs, ButtonPressed):
            return self._button(obs)
        return []  # hello, heartbeat, device errors: health, not game events

    # ------------------------------------------------------------ camera

    def _camera(self, obs: CameraObservation) -> list[Action]:
        src = obs.camera
        if isinstance(obs, DoraIndicatorSeen):
            hand = self._state().hand
            if hand is not None and obs.index < len(hand.dora):
                return []  # an indicator seen again (the camera re-read it): already counted
            return [Action(DoraRevealed(tile=parse_tile(obs.tile)), src)]
        if isinstance(obs, TileDiscarded | MeldSeen | KanAdded):
            self._reset()  # play went on: declarations not confirmed before it are withdrawn
        if isinstance(obs, TileDiscarded):
            hand = self._state().hand
            in_riichi = hand is not None and hand.seats[obs.seat].riichi
            # crosswise is a declaration unless the seat is already in riichi (its riichi tile was
            # claimed, so the next discard is turned instead: RULES 3.3.12)
            riichi = obs.sideways and not in_riichi
            return [Action(Discard(seat=obs.seat, tile=parse_tile(obs.tile), riichi=riichi), src)]
        if isinstance(obs, MeldSeen):
            return [Action(self._meld(obs), src)]
        if isinstance(obs, KanAdded):
            return [Action(AddedKan(seat=obs.seat, tile=parse_tile(obs.tile)), src)]
        if isinstance(obs, UraIndicatorsSeen):
            self.ura = tuple(parse_tile(t) for t in obs.tiles)
            return []
        if isinstance(obs, HandRevealed):
            self.revealed[obs.seat] = obs
            return []
        return []

    def _meld(self, obs: MeldSeen) -> Event:
        tiles = tuple(parse_tile(t) for t in obs.tiles)
        if obs.from_side is None:
            return ConcealedKan(seat=obs.seat, tiles=tiles)
        hand = self._state().hand
        offset = {"left": 3, "across": 2, "right": 1}.get(obs.from_side, 3)
        from_seat = (obs.seat + offset) % 4
        called = parse_tile(obs.called) if obs.called else tiles[0]
        if hand is not None and hand.last_discard is not None:
            from_seat, called = hand.last_discard  # the engine knows exactly which tile was taken
        kinds = {t.kind for t in tiles}
        kind = "kan" if len(tiles) == 4 else ("pon" if len(kinds) == 1 else "chi")
        return Call(seat=obs.seat, kind=kind, tiles=tiles, called=called, from_seat=from_seat)

    # ------------------------------------------------------------ buttons

    def _button(self, obs: ButtonPressed) -> list[Action]:
        src, seat, button = obs.device, obs.seat, obs.button
        if button is Button.RON and seat not in self.rons:
            self.rons.append(seat)
        elif button is Button.TSUMO:
            self.tsumo = seat
        elif button is Button.NINE_TERMINALS:
            self.nine = seat
        elif button in (Button.TENPAI, Button.NOTEN):
            hand = self._state().hand
            if hand is None or hand.step is not Step.CLAIMS or hand.wall > 0:
                log.info("%s from seat %d ignored: the hand is not at its exhaustive draw", button.value, seat)
                return []
            self.answers[seat] = button is Button.TENPAI
            return self._draw_if_answered(src)
        elif button is Button.CONFIRM:
            return self._confirm(src)
        elif button is Button.UNDO:
            if self.rons or self.tsumo is not None or self.nine is not None or self.answers or self.revealed:
                self._reset()  # the player takes back a declaration, not a move on the table
                return []
            return [Action(UNDO, src)]
        return []  # riichi, chi, pon, kan: the camera shows what was done

    def _hand_of(self, seat: int) -> tuple[Tile, ...] | None:
        shown = self.revealed.get(seat)
        return tuple(parse_tile(t) for t in shown.tiles) if shown else None

    def _confirm(self, src: str) -> list[Action]:
        state = self._state()
        hand = state.hand
        if hand is None:
            return []
        event: Event | None = None
        if self.tsumo is not None and hand.step is Step.DISCARD and hand.turn == self.tsumo:
            self.rons = []  # the seat holding a drawn tile declared tsumo: any ron press was a mistake
        if self.rons:
            from_seat = hand.kakan[0] if hand.step is Step.CHANKAN and hand.kakan else (
                hand.last_discard[0] if hand.last_discard else hand.turn)
            claims = tuple(RonClaim(seat=s, hand=self._hand_of(s))
                           for s in sorted(self.rons, key=lambda s: (s - from_seat) % 4))
            event = Ron(from_seat=from_seat, claims=claims, ura=self.ura)
        elif self.tsumo is not None:
            shown = self.revealed.get(self.tsumo)
            win = parse_tile(shown.win_tile) if shown and shown.win_tile else None
            event = Tsumo(seat=self.tsumo, hand=self._hand_of(self.tsumo), win_tile=win, ura=self.ura)
        elif self.nine is not None:
            event = AbortiveDraw(kind="nine_terminals", seat=self.nine)
        else:
            for kind in ("four_winds", "four_riichi", "four_kans"):
                candidate = AbortiveDraw(kind=kind)
                if self._would_accept(candidate):
                    event = candidate
                    break
        if event is None:
            log.info("confirm from %s with nothing to confirm", src)
            return []
        # declarations stay until the engine accepts the event (hand_ended), so a refused one can be
        # completed (a hand laid down late) and confirmed again
        return [Action(event, src)]

    def hand_ended(self) -> None:
        """The engine accepted the event that ended the hand."""
        self._reset()

    def _draw_if_answered(self, src: str) -> list[Action]:
        hand = self._state().hand
        if hand is None:
            return []
        tenpai = [self.answers.get(s, hand.seats[s].riichi or None) for s in range(4)]
        if any(t is None for t in tenpai):
            return []
        flags = (bool(tenpai[0]), bool(tenpai[1]), bool(tenpai[2]), bool(tenpai[3]))
        return [Action(ExhaustiveDraw(tenpai=flags), src)]
